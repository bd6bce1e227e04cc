"""Command-line interface: check, simulate, play and replay .rules games."""

from __future__ import annotations

import json
import random
import re
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.columns import Columns
from rich.console import Console
from rich.json import JSON
from rich.table import Table
from rich.text import Text

from rulelang import exitcodes as X
from rulelang import sim

# The back end used by simulate, play and replay when --backend is not given.
DEFAULT_BACKEND = "compiled"
BACKENDS = ("interpreter", "compiled")
PLAYER_KINDS = ("human", "random")

_INT_RE = re.compile(r"[+-]?[0-9]+")
_NUMBER_RE = re.compile(r"[0-9]+")


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


def _rules_fail(err: BaseException) -> NoReturn:
    """Print a rules-level error and exit with its code (exitcodes: usage, rules or fault)."""
    click.echo(_error_text(err), err=True)
    from rulelang.errors import RulesRuntimeError

    sys.exit(X.FAULT if isinstance(err, RulesRuntimeError) else X.for_rules_error(err))


def _error_text(err: BaseException) -> str:
    lines = [str(err) or type(err).__name__]
    lines.extend(getattr(err, "__notes__", ()))
    return "\n".join(lines)


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def parse_value(raw: str) -> int | bool | str:
    """A -D value: an int if it looks like one, true/false as bool, anything else a string."""
    text = raw.strip()
    if _INT_RE.fullmatch(text):
        try:
            return int(text)
        except ValueError:  # past Python's digit limit (4300 digits)
            raise ValueError(f"integer too long ({len(text)} characters)") from None
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
        try:
            params[name] = parse_value(raw)
        except ValueError as err:
            raise click.BadParameter(f"{name}: {err}", ctx=ctx, param=param) from None
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
    failed, worst = 0, X.OK
    for file in files:
        try:
            game = load(file, variant=None, params={}, backend=backend)
            for variant in game.variants:
                load(file, variant=variant, params={}, backend=backend)
        except rules_errors as err:
            click.echo(_error_text(err), err=True)
            failed += 1
            code = X.for_rules_error(err) if hasattr(err, "diagnostics") else X.FAULT
            worst = max(worst, code)
            continue
        except (OSError, ValueError) as err:
            text = err.strerror if isinstance(err, OSError) and err.strerror else err
            click.echo(f"error: cannot read {file}: {text}" if isinstance(err, OSError)
                       else f"error: {file}: {err}", err=True)
            failed += 1
            worst = max(worst, X.RULES)
            continue
        click.echo(f"ok: {file} (game {game.name}, {len(game.variants)} variants)")
    if failed:
        ctx.exit(worst)


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
        _rules_fail(err)
    except ValueError as err:
        _fail(_error_text(err), X.USAGE)
    except (OSError, sim.SimulationError) as err:
        _fail(_error_text(err), X.FAILURE)

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
        _rules_fail(err)
    except ValueError as err:
        _fail(_error_text(err), X.USAGE)
    except OSError as err:
        _fail(_error_text(err), X.FAILURE)

    console.print(Text(f"{game.name}: {len(kinds)} players ({', '.join(kinds)}), seed {seed}"))
    rng = random.Random(seed)
    from rulelang import bots

    seat_bots = {p: bots.make_bot(k, game, p, sim.bot_seed(seed, p))
                 for p, k in enumerate(kinds) if k not in ("human", "random")}
    digests: list[str] = []
    abandoned = interrupted = False
    fault: BaseException | None = None
    try:
        while not state.is_terminal():
            player = state.current_player
            # apply(), not the apply_index fast path: after a rules fault the state (and so
            # the record written below) is the one before the faulty action, on every back end.
            if player == sim.CHANCE:
                k = sim.pick_chance(rng, state)
                state.apply(state.chance_outcomes()[k][0])
            elif kinds[player] == "random":
                k = sim.pick_random_action(rng, state, game.end_actions)
                state.apply(state.legal_actions()[k])
                # The chosen action may be secret (a sealed bid), so only say that a move happened.
                console.print(Text(f"player {player} (random) moved", style="dim"))
            elif player in seat_bots:
                state.apply_index(seat_bots[player].choose(state))
                console.print(Text(f"player {player} ({kinds[player]}) moved", style="dim"))
            else:
                _human_turn(console, state, player, illegal_action)
            if record_out is not None:
                digests.append(state.digest())
    except (click.Abort, _Quit) as err:
        # click.prompt turns Ctrl-C and end of input alike into Abort; the context tells them
        # apart.
        interrupted = isinstance(err.__context__, KeyboardInterrupt)
        abandoned = True
        click.echo("\ninterrupted" if interrupted else "\ngame abandoned", err=True)
    except KeyboardInterrupt:
        abandoned = interrupted = True
        click.echo("\ninterrupted", err=True)
    except rules_errors as err:
        # The record of the game so far is still written below.
        click.echo(_error_text(err), err=True)
        fault = err

    if record_out is not None:
        rec = sim.make_record(
            game, state, seed, digests, file=file, variant=variant, params=defines
        )
        try:
            Path(record_out).write_text(json.dumps(rec) + "\n", encoding="utf-8")
        except OSError as err:
            _fail(f"cannot write {record_out}: {err.strerror or err}", X.FAILURE)
    if fault is not None:
        sys.exit(X.FAULT)
    if interrupted:
        sys.exit(X.INTERRUPTED)
    if abandoned:
        sys.exit(X.FAILURE)

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
        if _NUMBER_RE.fullmatch(answer):
            # ASCII digits only: str.isdigit() also takes '²' or '①', which int() refuses;
            # a number too long to be an action's is refused before int() is asked.
            k = int(answer) - 1 if len(answer) <= 9 else -1
            if 0 <= k < len(actions):
                state.apply(actions[k])
                return
            shown = answer if len(answer) <= 12 else answer[:12] + "..."
            click.echo(f"no action numbered {shown}", err=True)
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

    def bad(message: str) -> NoReturn:
        _fail(message, X.RECORD)

    try:
        rec = json.loads(Path(record).read_text(encoding="utf-8"))
    except OSError as err:
        bad(f"cannot read {record}: {err.strerror or err}")
    except UnicodeDecodeError as err:
        bad(f"{record} is not UTF-8 text: {err.reason} at byte {err.start}")
    except ValueError as err:
        bad(f"{record} is not valid JSON: {err}")
    except RecursionError:
        bad(f"{record} is not valid JSON: nested too deeply")
    problem = _record_problem(rec)
    if problem:
        bad(f"{record} is not a rulelang game record: {problem}")

    try:
        game = load(
            file, variant=rec.get("variant"), params=rec.get("params") or {}, backend=backend
        )
    except rules_errors as err:
        if X.for_rules_error(err) == X.USAGE:  # the record's variant or params do not fit
            bad(f"{record}: its variant or parameters do not fit {file}:\n{_error_text(err)}")
        _rules_fail(err)
    except (ValueError, OSError) as err:
        _fail(_error_text(err), X.RULES)
    try:
        state = game.new_game(num_players=rec["players"])
    except rules_errors as err:
        _rules_fail(err)
    except ValueError as err:
        bad(f"{record}: {err}")

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
    elif digests is not None and len(digests) != len(actions):
        bad(f"{record} has {len(digests)} digests for {len(actions)} actions "
            "(every action has one)")
    catch: tuple[type[BaseException], ...] = (illegal_action,) if illegal_action else ()
    for i, action in enumerate(actions):
        try:
            state.apply(action)
        except catch as err:
            bad(f"actions[{i}] {action!r} is not legal at that point: {err}")
        except rules_errors as err:
            bad(f"actions[{i}] {action!r}: {_error_text(err)}")
        if digests is not None and digests[i]:
            got = state.digest()
            if got != digests[i]:
                bad(f"digest mismatch at step {i} (after {action!r}): "
                    f"record has {digests[i]}, replay gives {got}")
    checked = len(actions) if digests is not None else 0
    if steps is not None and digests is not None:
        checked = len(digest_at)
    console.print(Text(f"replayed {len(actions)} actions; {checked} digests match"))
    if digests is None:
        click.echo("warning: the record has no digests; the states were not checked", err=True)

    claims = rec.get("scores") is not None or rec.get("winners") is not None
    if not state.is_terminal():
        if claims:
            bad(f"{record} ends before the game is over, yet gives final scores or winners "
                "(truncated?)")
        console.print(Text("the record ends before the game is over"))
        return
    scores = list(state.scores())
    winners = list(state.winners())
    console.print(Text(f"scores: {scores}"))
    console.print(Text(f"winners: {winners}"))
    if rec.get("scores") is not None and list(rec["scores"]) != scores:
        bad(f"final scores differ: record has {rec['scores']}, replay gives {scores}")
    if rec.get("winners") is not None and list(rec["winners"]) != winners:
        bad(f"winners differ: record has {rec['winners']}, replay gives {winners}")


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
        text = compile_program(program)
    except rules_errors as err:
        _rules_fail(err)
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as err:
        _fail(f"cannot write {output}: {err.strerror or err}", X.FAILURE)
    click.echo(f"wrote {output} ({len(text.splitlines())} lines; game {program.name}, "
               f"variant {variant or '-'})")


@cli.group(name="cache")
def cache_group() -> None:
    """Inspect or empty the cache of compiled engines (docs/protocol.md)."""


@cache_group.command(name="info")
def cache_info_cmd() -> None:
    """Show the cache folder, its entries and their total size, and the size limit."""
    from rulelang import cache

    info = cache.cache_info()
    click.echo(f"folder: {info['folder'] or 'none (engines are compiled in memory)'}")
    click.echo(f"entries: {info['entries']}")
    click.echo(f"size: {info['bytes']} bytes")
    click.echo(f"limit: {info['max_bytes']} bytes (RULELANG_CACHE_MAX_BYTES)")


@cache_group.command(name="clear")
def cache_clear_cmd() -> None:
    """Delete every cached engine."""
    from rulelang import cache

    folder = cache.cache_dir()
    removed = cache.clear()
    where = f"from {folder}" if folder else "(no cache folder)"
    click.echo(f"removed {removed} entries {where}")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _record_problem(rec: Any) -> str | None:
    """Why `rec` is not a usable game record, or None (every field's type is checked)."""
    if not isinstance(rec, dict):
        return "top level is not an object"
    if rec.get("rulelang_record") != sim.RECORD_VERSION:
        shown = repr(rec.get("rulelang_record"))
        return f"unsupported rulelang_record version {shown[:40]}"
    if not _is_int(rec.get("players")):
        return "missing or bad 'players'"
    actions = rec.get("actions")
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        return "'actions' must be a list of strings"
    digests = rec.get("digests")
    if digests is not None and (
        not isinstance(digests, list) or not all(isinstance(d, str) for d in digests)
    ):
        return "'digests' must be a list of strings"
    steps = rec.get("digest_steps")
    if steps is not None:
        if (not isinstance(steps, list) or not all(type(i) is int and 0 <= i < len(actions)
                                                   for i in steps)
                or sorted(set(steps)) != steps or not isinstance(digests, list)
                or len(digests) != len(steps)):
            return "'digest_steps' must be increasing action indices, one per digest"
        if actions and steps[-1] != len(actions) - 1:
            return "'digest_steps' must end with the last action"
    params = rec.get("params")
    if params is not None and (not isinstance(params, dict) or not all(
            isinstance(v, bool | int | str) for v in params.values())):
        return "'params' must be an object of ints, bools and strings"
    for key in ("variant", "rules_digest", "file"):
        if rec.get(key) is not None and not isinstance(rec[key], str):
            return f"'{key}' must be a string or null"
    for key in ("scores", "winners"):
        value = rec.get(key)
        if value is not None and (not isinstance(value, list)
                                  or not all(_is_int(x) for x in value)):
            return f"'{key}' must be a list of integers or null"
    return None


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    click.echo(f"warning: {message}", err=True)


def _add_workbench_commands() -> None:
    from rulelang.workbench.commands import COMMANDS

    for command in COMMANDS:
        cli.add_command(command)


_add_workbench_commands()


def main() -> None:
    """Console-script entry point: click's usage errors are 2, Ctrl-C is 130 (exitcodes)."""
    warnings.showwarning = _show_warning  # e.g. a refused cache entry: one line, no source
    try:
        code = cli.main(prog_name="rulelang", standalone_mode=False)
    except click.exceptions.Abort:  # click turns KeyboardInterrupt into Abort
        click.echo("interrupted", err=True)
        sys.exit(X.INTERRUPTED)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(X.INTERRUPTED)
    except click.ClickException as err:
        err.show()
        sys.exit(err.exit_code)
    sys.exit(code if isinstance(code, int) else X.OK)


if __name__ == "__main__":
    main()
