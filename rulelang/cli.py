"""Command-line interface: check, simulate, play and replay .rules games."""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.columns import Columns
from rich.console import Console
from rich.json import JSON
from rich.table import Table
from rich.text import Text

from rulelang import sim

# The back end used by simulate, play and replay when --backend is not given.
DEFAULT_BACKEND = "compiled"
BACKENDS = ("interpreter", "compiled")
PLAYER_KINDS = ("human", "random")

_INT_RE = re.compile(r"[+-]?\d+")


# ---------------------------------------------------------------------------- helpers


def _engine_errors() -> tuple[tuple[type[BaseException], ...], type[BaseException] | None]:
    """(errors that mean "bad rules or bad request", IllegalAction), tolerating a missing core."""
    try:
        from rulelang.errors import IllegalAction, RulesError, RulesRuntimeError
    except ImportError:
        return (), None
    return (RulesError, RulesRuntimeError), IllegalAction


def _get_loader(ctx: click.Context) -> Callable[..., Any]:
    # Tests pass a fake loader through the context object; users get the real one.
    obj = ctx.find_root().obj
    if isinstance(obj, dict) and obj.get("loader") is not None:
        return obj["loader"]
    from rulelang import load

    return load


def _error_text(err: BaseException) -> str:
    lines = [str(err) or type(err).__name__]
    lines.extend(getattr(err, "__notes__", ()))
    return "\n".join(lines)


def _fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def parse_value(raw: str) -> int | bool | str:
    """A -D value: an int if it looks like one, true/false as bool, anything else a string."""
    text = raw.strip()
    if _INT_RE.fullmatch(text):
        return int(text)
    if text.lower() == "true":
        return True
    if text.lower() == "false":
        return False
    return raw


def _parse_defines(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in values:
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise click.BadParameter(f"expected name=value, got {item!r}", ctx=ctx, param=param)
        params[name] = parse_value(raw)
    return params


def _parse_players(ctx: click.Context, param: click.Parameter, value: str) -> list[str]:
    from rulelang import bots

    kinds = [k.strip() for k in value.split(",")]
    kinds = [k.lower() if ":" not in k else k for k in kinds]
    bad = []
    for k in kinds:
        try:
            bots.parse_spec(k, allow_human=True)
        except bots.BotError:
            bad.append(k)
    if bad or not kinds:
        raise click.BadParameter(
            f"expected a comma-separated list of {'/'.join(PLAYER_KINDS)} (or greedy, mcts, "
            f"mcts@N, module:function), got {value!r}",
            ctx=ctx,
            param=param,
        )
    return kinds


def _common_game_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--backend",
        type=click.Choice(BACKENDS),
        default=DEFAULT_BACKEND,
        show_default=True,
        help="Engine back end.",
    )(func)
    func = click.option(
        "-D",
        "defines",
        multiple=True,
        metavar="NAME=VALUE",
        callback=_parse_defines,
        help="Override a rules parameter (repeatable).",
    )(func)
    func = click.option("--variant", default=None, help="Named variant declared in the file.")(func)
    return func


def _fmt_num(x: float, digits: int = 1) -> str:
    return f"{x:,.{digits}f}"


# ---------------------------------------------------------------------------- commands


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option("0.1.0", prog_name="rulelang")
def cli() -> None:
    """rulelang: declarative rules for economic board games."""


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--backend", type=click.Choice(BACKENDS), default="interpreter", show_default=True,
              help="'compiled' also generates each engine.")
@click.pass_context
def check(ctx: click.Context, files: tuple[str, ...], backend: str) -> None:
    """Parse and check each FILE, in its base form and every declared variant."""
    load = _get_loader(ctx)
    rules_errors, _ = _engine_errors()
    failed = 0
    for file in files:
        try:
            game = load(file, variant=None, params={}, backend=backend)
            for variant in game.variants:
                load(file, variant=variant, params={}, backend=backend)
        except rules_errors as err:
            click.echo(_error_text(err), err=True)
            failed += 1
            continue
        except OSError as err:
            click.echo(f"error: cannot read {file}: {err.strerror or err}", err=True)
            failed += 1
            continue
        except ValueError as err:
            click.echo(f"error: {file}: {err}", err=True)
            failed += 1
            continue
        click.echo(f"ok: {file} (game {game.name}, {len(game.variants)} variants)")
    if failed:
        ctx.exit(1)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--players", "-p", "players_opt", required=True,
              help="Number of players (all random), or one kind per seat: random, greedy, "
                   "mcts, mcts@ITERATIONS, mcts@SECONDSs, module:function or a --bot name.")
@click.option("--games", "-n", type=int, default=100, show_default=True)
@click.option("--seed", "-s", type=int, default=0, show_default=True, help="Root seed.")
@_common_game_options
@click.option("--jobs", "-j", default="1", show_default=True,
              help="Worker processes, or 'auto' for every core.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Run the games on this Dask scheduler (needs the 'dask' extra).")
@click.option("--batch", type=click.IntRange(min=1), default=None,
              help="Games per task sent to a worker (results do not depend on it).")
@click.option("--bot", "bot_opts", multiple=True, metavar="[NAME=]MODULE:FUNCTION",
              help="Register a policy function as a seat kind (repeatable).")
@click.option(
    "--records",
    "records_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Write one JSON game record per game into this directory.",
)
@click.option("--digest-every", type=click.IntRange(min=1), default=sim.RECORD_DIGEST_EVERY,
              show_default=True, help="Records keep the state digest after every k-th action "
                                      "and the last one (1 = after every action).")
@click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False, allow_dash=True),
    default=None,
    help="Write the summary as JSON to this file ('-' for standard output).",
)
@click.option("--report", "report_out", type=click.Path(dir_okay=False), default=None,
              help="Write a self-contained HTML report with plots (needs the 'report' extra).")
@click.pass_context
def simulate(
    ctx: click.Context,
    file: str,
    players_opt: str,
    games: int,
    seed: int,
    variant: str | None,
    defines: dict[str, Any],
    backend: str,
    jobs: str,
    scheduler: str | None,
    batch: int | None,
    bot_opts: tuple[str, ...],
    records_dir: str | None,
    digest_every: int,
    json_out: str | None,
    report_out: str | None,
) -> None:
    """Play games of FILE and report throughput, game length, wins and scores."""
    from rulelang.workbench import cliutil

    load = _get_loader(ctx)
    rules_errors, _ = _engine_errors()
    players, seats = cliutil.parse_players(players_opt, cliutil.parse_bot_options(bot_opts))
    json_target = cliutil.Output(json_out, "the summary")
    report_target = cliutil.report_output(report_out)
    try:
        with cliutil.progress_bar("simulating", games) as on_progress:
            summary = sim.simulate(
                file,
                players,
                games,
                seed,
                variant=variant,
                params=defines,
                jobs=sim.resolve_jobs(jobs),
                backend=backend,
                records_dir=records_dir,
                progress=on_progress,
                loader=load,
                seats=seats,
                scheduler=scheduler,
                batch=batch,
                digest_every=digest_every,
            )
    except KeyboardInterrupt:
        cliutil.interrupted()
    except rules_errors as err:
        click.echo(_error_text(err), err=True)
        sys.exit(2)
    except (ValueError, OSError, sim.SimulationError) as err:
        _fail(_error_text(err))

    # With --json -, standard output carries the JSON alone; the tables go to stderr.
    Console(highlight=False, stderr=json_target.to_stdout).print(*render_summary(summary))
    for warning in summary.get("warnings", ()):
        click.echo(f"warning: {warning}", err=True)
    json_target.write_json(summary)
    if report_out is not None:
        from rulelang.workbench.report import simulate_report

        report_target.write(simulate_report(summary))


def render_summary(summary: dict[str, Any]) -> list[Any]:
    """Rich renderables for a simulate() summary."""
    timing = summary["timing"]
    params = ", ".join(f"{k}={v!r}" for k, v in sorted(summary["params"].items())) or "-"
    head = Text()
    head.append(f"{summary['game']}", style="bold")
    head.append(
        f"  {summary['players']} players, {summary['games']} games, seed {summary['seed']}, "
        f"backend {summary['backend']}, variant {summary['variant'] or '-'}, params {params}"
    )
    if summary.get("seat_kinds"):
        head.append(f", seats {','.join(summary['seat_kinds'])}")

    overview = Table(title="Throughput and game length", title_justify="left")
    overview.add_column("measure")
    overview.add_column("value", justify="right")
    overview.add_row("games/s", _fmt_num(timing["games_per_sec"], 2))
    overview.add_row("decisions/s", _fmt_num(timing["decisions_per_sec"], 0))
    overview.add_row(
        "elapsed",
        f"{timing['elapsed_seconds']:.2f} s ({timing['jobs']} job{'s' * (timing['jobs'] != 1)})",
    )
    length = summary["length"]
    overview.add_row(
        "game length (decisions)",
        f"{length['mean']:.1f} ± {length['stdev']:.1f}  [{length['min']}, {length['max']}]",
    )
    chance = summary["chance_events"]
    overview.add_row("chance events per game", f"{chance['mean']:.1f} ± {chance['stdev']:.1f}")

    seats = Table(title="Per seat", title_justify="left")
    for name in ("seat", "wins", "win rate", "95% interval", "score mean", "stdev", "min", "max"):
        seats.add_column(name, justify="left" if name == "seat" else "right")
    for seat in summary["seats"]:
        low, high = seat["win_ci95"]
        score = seat["score"]
        seats.add_row(
            str(seat["seat"]),
            f"{seat['wins']:g}",
            f"{100 * seat['win_rate']:.1f}%",
            f"{100 * low:.1f}% – {100 * high:.1f}%",
            f"{score['mean']:.1f}",
            f"{score['stdev']:.1f}",
            str(score["min"]),
            str(score["max"]),
        )
    return [head, overview, seats]


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--players",
    "-p",
    "kinds",
    required=True,
    callback=_parse_players,
    help="Comma-separated seats, each human or random, e.g. human,random,random.",
)
@click.option("--seed", "-s", type=int, default=None, help="Seed for random players and chance.")
@_common_game_options
@click.option(
    "--record",
    "record_out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the game record (JSON) here when the game ends or is abandoned.",
)
@click.pass_context
def play(
    ctx: click.Context,
    file: str,
    kinds: list[str],
    seed: int | None,
    variant: str | None,
    defines: dict[str, Any],
    backend: str,
    record_out: str | None,
) -> None:
    """Play FILE in the terminal; humans see only their own observation."""
    load = _get_loader(ctx)
    rules_errors, illegal_action = _engine_errors()
    console = Console(highlight=False)
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    try:
        game = load(file, variant=variant, params=defines, backend=backend)
        state = game.new_game(num_players=len(kinds))
    except rules_errors as err:
        click.echo(_error_text(err), err=True)
        sys.exit(2)
    except (ValueError, OSError) as err:
        _fail(_error_text(err))

    console.print(Text(f"{game.name}: {len(kinds)} players ({', '.join(kinds)}), seed {seed}"))
    rng = random.Random(seed)
    from rulelang import bots

    seat_bots = {p: bots.make_bot(k, game, p, sim.bot_seed(seed, p))
                 for p, k in enumerate(kinds) if k not in ("human", "random")}
    digests: list[str] = []
    abandoned = False
    try:
        while not state.is_terminal():
            player = state.current_player
            if player == sim.CHANCE:
                state.apply_index(sim.pick_chance(rng, state))
            elif kinds[player] == "random":
                state.apply_index(sim.pick_random_action(rng, state, game.end_actions))
                # The chosen action may be secret (a sealed bid), so only say that a move happened.
                console.print(Text(f"player {player} (random) moved", style="dim"))
            elif player in seat_bots:
                state.apply_index(seat_bots[player].choose(state))
                console.print(Text(f"player {player} ({kinds[player]}) moved", style="dim"))
            else:
                _human_turn(console, state, player, illegal_action)
            if record_out is not None:
                digests.append(state.digest())
    except (click.Abort, _Quit):
        abandoned = True
        click.echo("\ngame abandoned", err=True)
    except rules_errors as err:
        click.echo(_error_text(err), err=True)
        sys.exit(2)

    if record_out is not None:
        rec = sim.make_record(
            game, state, seed, digests, file=file, variant=variant, params=defines
        )
        try:
            Path(record_out).write_text(json.dumps(rec) + "\n", encoding="utf-8")
        except OSError as err:
            _fail(f"cannot write {record_out}: {err.strerror or err}")
    if abandoned:
        sys.exit(1)

    console.rule("game over")
    scores = state.scores()
    winners = state.winners()
    for p, score in enumerate(scores):
        mark = "  winner" if p in winners else ""
        console.print(Text(f"player {p} ({kinds[p]}): {score}{mark}"))
    console.print(Text(f"winners: {', '.join(str(w) for w in winners) or 'none'}"))


class _Quit(Exception):
    """The human asked to leave the game."""


def _human_turn(
    console: Console, state: Any, player: int, illegal_action: type[BaseException] | None
) -> None:
    console.rule(f"player {player}")
    console.print(JSON.from_data(state.observation(player)))
    actions = state.legal_actions()
    console.print(Columns([Text(f"{i}. {a}") for i, a in enumerate(actions, 1)], padding=(0, 3)))
    catch: tuple[type[BaseException], ...] = (illegal_action,) if illegal_action else ()
    while True:
        answer = click.prompt(
            f"player {player}: number (1-{len(actions)}) or action, q to quit", type=str
        ).strip()
        if answer.lower() in ("q", "quit"):
            raise _Quit
        if answer.isdigit():
            k = int(answer) - 1
            if 0 <= k < len(actions):
                state.apply_index(k)
                return
            click.echo(f"no action numbered {answer}", err=True)
            continue
        try:
            state.apply(answer)
            return
        except catch as err:
            click.echo(f"not legal now: {err}", err=True)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("record", type=click.Path(dir_okay=False))
@click.option("--backend", type=click.Choice(BACKENDS), default=DEFAULT_BACKEND, show_default=True)
@click.pass_context
def replay(ctx: click.Context, file: str, record: str, backend: str) -> None:
    """Replay RECORD (JSON game record) against FILE, checking every state digest."""
    load = _get_loader(ctx)
    rules_errors, illegal_action = _engine_errors()
    console = Console(highlight=False)
    try:
        rec = json.loads(Path(record).read_text(encoding="utf-8"))
    except OSError as err:
        _fail(f"cannot read {record}: {err.strerror or err}")
    except ValueError as err:
        _fail(f"{record} is not valid JSON: {err}")
    problem = _record_problem(rec)
    if problem:
        _fail(f"{record} is not a rulelang game record: {problem}")

    try:
        game = load(
            file, variant=rec.get("variant"), params=rec.get("params") or {}, backend=backend
        )
        state = game.new_game(num_players=rec["players"])
    except rules_errors as err:
        click.echo(_error_text(err), err=True)
        sys.exit(2)
    except (ValueError, OSError) as err:
        _fail(_error_text(err))

    if rec.get("rules_digest") != game.source_digest:
        click.echo(
            f"warning: {file} differs from the rules file the record was made with "
            f"(digest {str(rec.get('rules_digest'))[:12]}… vs {game.source_digest[:12]}…); "
            "a mismatch below may come from that",
            err=True,
        )
    actions: list[str] = rec["actions"]
    digests: list[str] | None = rec.get("digests")
    # Records with `digest_steps` keep the digest after those actions only (simulate's stride).
    steps: list[int] | None = rec.get("digest_steps")
    if steps is not None and digests is not None:
        digest_at = dict(zip(steps, digests))
        digests = [digest_at.get(i, "") for i in range(len(actions))]
    catch: tuple[type[BaseException], ...] = (illegal_action,) if illegal_action else ()
    for i, action in enumerate(actions):
        try:
            state.apply(action)
        except catch as err:
            _fail(f"actions[{i}] {action!r} is not legal at that point: {err}", code=1)
        except rules_errors as err:
            _fail(f"actions[{i}] {action!r}: {_error_text(err)}", code=1)
        if digests is not None and i < len(digests) and digests[i]:
            got = state.digest()
            if got != digests[i]:
                _fail(
                    f"digest mismatch at step {i} (after {action!r}): "
                    f"record has {digests[i]}, replay gives {got}",
                    code=1,
                )
    checked = min(len(actions), len(digests)) if digests is not None else 0
    if steps is not None and digests is not None:
        checked = len(digest_at)
    elif digests is not None and len(digests) != len(actions):
        click.echo(
            f"warning: record has {len(digests)} digests for {len(actions)} actions", err=True
        )
    console.print(Text(f"replayed {len(actions)} actions; {checked} digests match"))

    if not state.is_terminal():
        console.print(Text("the record ends before the game is over"))
        return
    scores = list(state.scores())
    winners = list(state.winners())
    console.print(Text(f"scores: {scores}"))
    console.print(Text(f"winners: {winners}"))
    if rec.get("scores") is not None and list(rec["scores"]) != scores:
        _fail(f"final scores differ: record has {rec['scores']}, replay gives {scores}", 1)
    if rec.get("winners") is not None and list(rec["winners"]) != winners:
        _fail(f"winners differ: record has {rec['winners']}, replay gives {winners}", 1)


@cli.command(name="compile")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--variant", default=None, help="Named variant declared in the file.")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", callback=_parse_defines,
              help="Override a rules parameter (repeatable).")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Where to write the generated engine module.")
def compile_cmd(file: str, variant: str | None, defines: dict[str, Any], output: str) -> None:
    """Compile FILE into a standalone Python engine module (standard library only)."""
    from rulelang import check_file
    from rulelang.codegen import compile_program

    rules_errors, _ = _engine_errors()
    try:
        program = check_file(file, variant=variant, params=defines)
    except rules_errors as err:
        click.echo(_error_text(err), err=True)
        sys.exit(2)
    text = compile_program(program)
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as err:
        _fail(f"cannot write {output}: {err.strerror or err}")
    click.echo(f"wrote {output} ({len(text.splitlines())} lines; game {program.name}, "
               f"variant {variant or '-'})")


def _record_problem(rec: Any) -> str | None:
    """Why `rec` is not a usable game record, or None."""
    if not isinstance(rec, dict):
        return "top level is not an object"
    if rec.get("rulelang_record") != sim.RECORD_VERSION:
        return f"unsupported rulelang_record version {rec.get('rulelang_record')!r}"
    if not isinstance(rec.get("players"), int):
        return "missing or bad 'players'"
    actions = rec.get("actions")
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        return "'actions' must be a list of strings"
    digests = rec.get("digests")
    if digests is not None and (
        not isinstance(digests, list) or not all(isinstance(d, str) for d in digests)
    ):
        return "'digests' must be a list of strings"
    if rec.get("params") is not None and not isinstance(rec["params"], dict):
        return "'params' must be an object"
    steps = rec.get("digest_steps")
    if steps is not None:
        if (not isinstance(steps, list) or not all(type(i) is int and 0 <= i < len(actions)
                                                   for i in steps)
                or sorted(set(steps)) != steps or not isinstance(digests, list)
                or len(digests) != len(steps)):
            return "'digest_steps' must be increasing action indices, one per digest"
        if actions and steps[-1] != len(actions) - 1:
            return "'digest_steps' must end with the last action"
    return None


def _add_workbench_commands() -> None:
    from rulelang.workbench.commands import COMMANDS

    for command in COMMANDS:
        cli.add_command(command)


_add_workbench_commands()


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="rulelang")


if __name__ == "__main__":
    main()
