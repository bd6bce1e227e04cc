"""The workbench's commands (compare, tournament, sweep, describe), added to the `rulelang` CLI."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from rulelang import sim
from rulelang.workbench import cliutil
from rulelang.workbench.stats import rate_interval, sig


def _ctx_loader(ctx: click.Context) -> Callable[..., Any]:
    from rulelang.cli import _get_loader

    return _get_loader(ctx)


def _limits(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
            ) -> dict[str, int]:
    from rulelang.cli import _parse_limits

    return _parse_limits(ctx, param, values)


def _limited_loader(ctx: click.Context, limits: dict[str, int]) -> Callable[..., Any]:
    from rulelang.cli import _with_limits

    return _with_limits(_ctx_loader(ctx), limits)


def _defines(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
             ) -> dict[str, Any]:
    from rulelang.cli import _parse_defines

    return _parse_defines(ctx, param, values)


def _run_guarded(func: Callable[[], Any]) -> Any:
    """Run a workbench job, turning its errors into messages with the exit codes of
    rulelang/exitcodes.py (as `simulate` does), and Ctrl-C into INTERRUPTED."""
    from rulelang import exitcodes as X
    from rulelang.bots import BotError
    from rulelang.cli import _engine_errors, _error_text, _fail, _rules_fail

    rules_errors, _ = _engine_errors()
    try:
        return func()
    except KeyboardInterrupt:
        cliutil.interrupted()
    except rules_errors as err:
        _rules_fail(err)  # exit code: usage (-D, variant), rules (the file) or fault
    except BotError as err:  # a bot that failed in a game (a bad seat kind is a ValueError)
        _fail(_error_text(err), X.FAILURE)
    except ValueError as err:
        _fail(_error_text(err), X.USAGE)
    except (OSError, sim.SimulationError) as err:
        _fail(_error_text(err), X.FAILURE)


def _write_report(target: cliutil.Output, maker: str, result: dict[str, Any]) -> None:
    if target.path is None:
        return
    from rulelang.workbench import report

    target.write(getattr(report, maker)(result))


_BOT_HELP = cliutil.BOTS_HELP


# The same choices as rulelang.cli (not imported from there: cli imports this module).
BACKENDS = ("interpreter", "compiled")
DEFAULT_BACKEND = "compiled"


def _common(func: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--games", "-n", type=click.IntRange(min=2), default=100,
                     show_default=True),
        click.option("--seed", "-s", type=int, default=0, show_default=True, help="Root seed."),
        click.option("--backend", type=click.Choice(BACKENDS), default=DEFAULT_BACKEND,
                     show_default=True),
        click.option("--jobs", "-j", default="1", show_default=True,
                     help="Worker processes, or 'auto' for every core."),
        click.option("--scheduler", default=None, metavar="ADDRESS",
                     help="Run on this Dask scheduler (needs the 'dask' extra)."),
        click.option("--batch", type=click.IntRange(min=1), default=None,
                     help="Games per task sent to a worker."),
        click.option("--bot", "bot_opts", multiple=True, metavar="[NAME=]MODULE:FUNCTION",
                     help="Register a policy function as a seat kind (repeatable)."),
        click.option("--json", "json_out", type=click.Path(dir_okay=False, allow_dash=True),
                     default=None, help="Write the result as JSON ('-' for standard output)."),
        click.option("--report", "report_out", type=click.Path(dir_okay=False), default=None,
                     help="Write a self-contained HTML report with plots (needs the 'report' "
                          "extra)."),
        click.option("-L", "--limit", "limits", multiple=True, metavar="NAME=N",
                     callback=_limits,
                     help="A guard against runaway rules (max_loop_steps, max_collection, "
                          "max_int_digits), as for simulate (repeatable)."),
    ]
    for opt in reversed(options):
        func = opt(func)
    return func


# ---------------------------------------------------------------------------- compare


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--players", "-p", default=None,
              help="Number of players (all random, or the --bots kind), or one kind per seat "
                   "as --bots takes them.")
@click.option("--bots", "bots_text", default=None, help=_BOT_HELP)
@click.option("--variant", default=None, help="Variant of both arms.")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", callback=_defines,
              help="Parameter override for both arms (repeatable).")
@click.option("--a-variant", default=None, help="Variant of arm A (default: --variant).")
@click.option("--b-variant", default=None, help="Variant of arm B (default: --variant).")
@click.option("-A", "a_defines", multiple=True, metavar="NAME=VALUE", callback=_defines,
              help="Parameter override for arm A only (repeatable).")
@click.option("-B", "b_defines", multiple=True, metavar="NAME=VALUE", callback=_defines,
              help="Parameter override for arm B only (repeatable).")
@_common
@click.pass_context
def compare(ctx: click.Context, file: str, players: str | None, bots_text: str | None,
            variant: str | None, defines: dict[str, Any], a_variant: str | None,
            b_variant: str | None, a_defines: dict[str, Any], b_defines: dict[str, Any],
            games: int, seed: int, backend: str, jobs: str, scheduler: str | None,
            batch: int | None, bot_opts: tuple[str, ...], json_out: str | None,
            report_out: str | None, limits: dict[str, int]) -> None:
    """Compare two arms of FILE (variant and -A / -B values) on the same seeds.

    Reports paired differences (B - A) with 95% intervals and says which are significant.
    """
    from rulelang.workbench.compare import Arm, verdict_lines
    from rulelang.workbench.compare import compare as run_compare

    n, seats = cliutil.seats_option(*cliutil.split_players(players, bots_text), bot_opts)
    arm_a = Arm(a_variant or variant, {**defines, **a_defines})
    arm_b = Arm(b_variant or variant, {**defines, **b_defines})
    if arm_a == arm_b:
        raise click.UsageError("the two arms are the same: give -A/-B values or "
                               "--a-variant/--b-variant")
    json_target = cliutil.Output(json_out, "the comparison")
    report_target = cliutil.report_output(report_out)
    loader = _limited_loader(ctx, limits)

    def job() -> dict[str, Any]:
        with cliutil.progress_bar("comparing", 2 * games) as on_progress:
            return run_compare(file, n, games, seed, arm_a, arm_b, seats=seats,
                               jobs=sim.resolve_jobs(jobs), backend=backend, loader=loader,
                               progress=on_progress, scheduler=scheduler,
                               batch=batch)

    result = _run_guarded(job)
    console = Console(highlight=False, stderr=json_target.to_stdout)
    cliutil.print_tables(console, *render_compare(result))
    for line in verdict_lines(result):
        console.print(Text(line))
    for arm in ("a", "b"):
        for w in result["warnings"][arm]:
            click.echo(f"warning (arm {arm.upper()}): {w}", err=True)
    json_target.write_json(result)
    _write_report(report_target, "compare_report", result)


def render_compare(result: dict[str, Any]) -> list[Any]:
    from rulelang.workbench.compare import compare_cells

    head = Text()
    head.append(result["game"], style="bold")
    head.append(f"  {result['players']} players ({','.join(result['seats'])}), "
                f"{result['games']} paired games, seed {result['seed']}, "
                f"backend {result['backend']}\n"
                f"A: {result['arms']['a']['label']}\nB: {result['arms']['b']['label']}")
    table = Table(title="Paired differences (B - A), 95% intervals", title_justify="left")
    for col in ("measure", "A", "B", "B - A", "95% interval", "significant"):
        table.add_column(col, justify="left" if col == "measure" else "right")
    for r in result["rows"]:
        table.add_row(r["measure"], *compare_cells(r),
                      "yes" if r["difference"]["significant"] else "no")
    return [head, table]


# ---------------------------------------------------------------------------- tournament


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--bots", "bots_text", required=True,
              help="Bot kinds to rotate through the seats, e.g. mcts,greedy,random.")
@click.option("--players", "-p", type=click.IntRange(min=1), default=None,
              help="Players per game (default: the number of bot kinds).")
@click.option("--variant", default=None, help="Named variant declared in the file.")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", callback=_defines,
              help="Override a rules parameter (repeatable).")
@_common
@click.pass_context
def tournament(ctx: click.Context, file: str, bots_text: str, players: int | None,
               variant: str | None, defines: dict[str, Any], games: int, seed: int,
               backend: str, jobs: str, scheduler: str | None, batch: int | None,
               bot_opts: tuple[str, ...], json_out: str | None,
            report_out: str | None, limits: dict[str, int]) -> None:
    """Seat-rotated games between bots: win rates with intervals, pairwise results, Elo."""
    from rulelang.workbench.compare import tournament as run_tournament

    _count, kinds = cliutil.parse_players(bots_text, cliutil.parse_bot_options(bot_opts))
    kinds = kinds or []
    json_target = cliutil.Output(json_out, "the tournament")
    report_target = cliutil.report_output(report_out)
    loader = _limited_loader(ctx, limits)

    def job() -> dict[str, Any]:
        with cliutil.progress_bar("tournament", games) as on_progress:
            return run_tournament(file, players, games, seed, kinds, variant=variant,
                                  params=defines, jobs=sim.resolve_jobs(jobs), backend=backend,
                                  loader=loader, progress=on_progress, scheduler=scheduler,
                               batch=batch)

    result = _run_guarded(job)
    console = Console(highlight=False, stderr=json_target.to_stdout)
    cliutil.print_tables(console, *render_tournament(result))
    for w in result["warnings"]:
        click.echo(f"warning: {w}", err=True)
    json_target.write_json(result)
    _write_report(report_target, "tournament_report", result)


def render_tournament(result: dict[str, Any]) -> list[Any]:
    head = Text()
    head.append(result["game"], style="bold")
    head.append(f"  {result['players']} players, {result['games']} games (seats rotated), "
                f"seed {result['seed']}, fair share {100 * result['fair_share']:.1f}%")
    table = Table(title="Bots", title_justify="left")
    for col in ("bot", "seat-games", "win rate", "95% interval", "Elo"):
        table.add_column(col, justify="left" if col == "bot" else "right")
    for r in sorted(result["rows"], key=lambda r: -r["elo"]):
        lo, hi = r["win_ci95"]
        table.add_row(r["bot"], str(r["seat_games"]), f"{100 * r['win_rate']:.1f}%",
                      rate_interval(lo, hi), f"{r['elo']:+.0f}")
    pairs = Table(title="Head to head (score of A against B when both play)",
                  title_justify="left")
    for col in ("A", "B", "pairings", "A's score", "95% interval", "verdict"):
        pairs.add_column(col, justify="left" if col in ("A", "B", "verdict") else "right")
    for p in result["pairs"]:
        lo, hi = p["ci95"]
        verdict = f"{p['better']} is stronger" if p["better"] else "no significant difference"
        pairs.add_row(p["a"], p["b"], str(p["pairings"]), f"{p['a_score']:.3f}",
                      f"{lo:.3f} – {hi:.3f}", verdict)
    return [head, table, pairs]


# ---------------------------------------------------------------------------- sweep


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--param", "axes_text", multiple=True, required=True,
              metavar="NAME=LO..HI[:STEP] | NAME=V1,V2,...",
              help="The parameter to sweep; give two for a grid.")
@click.option("--players", "-p", default=None,
              help="Number of players (all random, or the --bots kind), or one kind per seat "
                   "as --bots takes them.")
@click.option("--bots", "bots_text", default=None, help=_BOT_HELP)
@click.option("--variant", default=None, help="Named variant declared in the file.")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", callback=_defines,
              help="Fixed parameter overrides (repeatable).")
@_common
@click.pass_context
def sweep(ctx: click.Context, file: str, axes_text: tuple[str, ...], players: str | None,
          bots_text: str | None, variant: str | None, defines: dict[str, Any], games: int,
          seed: int, backend: str, jobs: str, scheduler: str | None, batch: int | None,
          bot_opts: tuple[str, ...],
          json_out: str | None,
            report_out: str | None, limits: dict[str, int]) -> None:
    """Sweep a parameter over a range (or a grid of two) with the same seeds at every point."""
    from rulelang.workbench.sweep import parse_axis
    from rulelang.workbench.sweep import sweep as run_sweep

    n, seats = cliutil.seats_option(*cliutil.split_players(players, bots_text), bot_opts)
    try:
        axes = [parse_axis(a) for a in axes_text]
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--param") from None
    if len(axes) > 2:
        raise click.BadParameter("give one --param, or two for a grid", param_hint="--param")
    json_target = cliutil.Output(json_out, "the sweep")
    report_target = cliutil.report_output(report_out)
    loader = _limited_loader(ctx, limits)
    points = 1
    for _name, values in axes:
        points *= len(values)

    def job() -> dict[str, Any]:
        with cliutil.progress_bar("sweeping", points * games) as on_progress:
            return run_sweep(file, n, games, seed, axes, seats=seats, variant=variant,
                             params=defines, jobs=sim.resolve_jobs(jobs), backend=backend,
                             loader=loader, progress=on_progress, scheduler=scheduler,
                               batch=batch)

    result = _run_guarded(job)
    console = Console(highlight=False, stderr=json_target.to_stdout)
    cliutil.print_tables(console, *render_sweep(result))
    from rulelang.workbench.compare import value_text

    for row in result["points"]:
        where = ", ".join(f"{k}={value_text(v)}" for k, v in row["point"].items())
        for w in row["warnings"]:
            click.echo(f"warning ({where}): {w}", err=True)
    json_target.write_json(result)
    _write_report(report_target, "sweep_report", result)


def pm_cell(iv: dict[str, Any], pct: bool = False) -> str:
    """A sweep cell: the mean and the half-width of its 95% interval, or a rate in percent with
    its (Wilson, not symmetric) interval: "50.0% (9.5–90.5%)"."""
    lo, hi = iv["ci95"]
    if pct:
        return f"{100 * iv['mean']:.1f}% ({rate_interval(lo, hi)})"
    half = (hi - lo) / 2 if hi != float("inf") else float("inf")
    return f"{sig(iv['mean'], 4)} ± {sig(half, 2)}"


def sweep_columns(result: dict[str, Any]) -> list[str]:
    """The measures a sweep table shows, in order."""
    first = result["points"][0]["measures"]
    cols = ["wins seat 0", "length (decisions)"]
    cols += [c for c in ("rounds played", "winner's margin", "lead changes") if c in first]
    cols += [c for c in first if c.startswith("metric ")]
    return cols


def render_sweep(result: dict[str, Any]) -> list[Any]:
    from rulelang.workbench.compare import is_rate, value_text

    head = Text()
    head.append(result["game"], style="bold")
    head.append(f"  {result['players']} players ({','.join(result['seats'])}), "
                f"{result['games']} games per point (same seeds), seed {result['seed']}")
    names = [a["name"] for a in result["axes"]]
    table = Table(title="Means with 95% intervals", title_justify="left")
    for name in names:
        table.add_column(name, justify="right")
    cols = sweep_columns(result)
    for c in cols:
        table.add_column(c, justify="right")
    for row in result["points"]:
        cells = [value_text(row["point"][n]) for n in names]
        cells += [pm_cell(row["measures"][c], is_rate(c)) for c in cols]
        table.add_row(*cells)
    return [head, table]


COMMANDS = [compare, tournament, sweep]


# ---------------------------------------------------------------------------- describe


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--variant", default=None, help="Describe this variant's values.")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", callback=_defines,
              help="Describe with this parameter value (repeatable).")
@click.option("--html", "as_html", is_flag=True, help="Write HTML instead of Markdown.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
              show_default=True, help="Where to write the description.")
def describe(file: str, variant: str | None, defines: dict[str, Any], as_html: bool,
             output: str) -> None:
    """Describe FILE: parameters, variants, state, decisions, chance, end and scoring."""
    from rulelang import check_file
    from rulelang.workbench.describe import describe as render

    target = cliutil.Output(output, "the description")
    program = _run_guarded(lambda: check_file(file, variant=variant, params=defines))
    target.write(render(program, "html" if as_html else "markdown"))


COMMANDS.append(describe)
