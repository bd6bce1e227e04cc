"""Command-line interface: check, simulate, play and replay .rules games."""

from __future__ import annotations

import json
import re
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from rulelang import exitcodes as X
from rulelang import sim
from rulelang.workbench.stats import rate_interval

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


def _open_session(make: Callable[[], Any]) -> Any:
    """make() (a play Session), or exit: a rules error with its code, a bad request (ValueError)
    as usage, an unreadable file (OSError) as a failure."""
    from rulelang.bots import BotError

    rules_errors, _ = _engine_errors()
    try:
        return make()
    except rules_errors as exc:
        _rules_fail(exc)
    except (BotError, sim.PolicyError) as exc:  # a bot seated first that failed to move
        _fail(_error_text(exc), X.FAILURE)
    except ValueError as exc:
        _fail(_error_text(exc), X.USAGE)
    except OSError as exc:
        _fail(_error_text(exc), X.FAILURE)


def _rules_fail(err: BaseException) -> NoReturn:
    """Print a rules-level error and exit with its code (exitcodes: usage, rules or fault)."""
    text, code = _rules_report(err)
    click.echo(text, err=True)
    sys.exit(code)


def _rules_report(err: BaseException) -> tuple[str, int]:
    """(the text, the exit code) of a rules-level error: a fault found while loading the file
    (a constant, a table value, a parameter) is reported as the checker's errors are, with
    their code (a -D value over the int limit: usage); a fault in a game is FAULT."""
    from rulelang.errors import RulesRuntimeError, load_fault_error

    err = load_fault_error(err) or err
    if isinstance(err, RulesRuntimeError):
        return _error_text(err), X.FAULT
    return _error_text(err), X.for_rules_error(err)


def _error_text(err: BaseException) -> str:
    from rulelang.errors import RulesRuntimeError, fault_text

    if isinstance(err, RulesRuntimeError):  # its location quoted, a caret, then its notes
        return fault_text(err)
    lines = [str(err) or type(err).__name__]
    # notes as a fault shows them: "in simulated game 3 (seed 7)", "in arm B (price=5)"
    lines.extend(f"  note: {note}" for note in getattr(err, "__notes__", ()))
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


def _parse_limits(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> dict[str, int]:
    """-L NAME=VALUE: a rulelang.Limits field (max_loop_steps, max_collection, max_int_digits)."""
    from rulelang.runtime import Limits

    known = sorted(Limits.__dataclass_fields__)
    out: dict[str, int] = {}
    for item in values:
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep or name not in known:
            raise click.BadParameter(f"expected NAME=N with NAME one of {', '.join(known)}, "
                                     f"got {item!r}", ctx=ctx, param=param)
        if not _NUMBER_RE.fullmatch(raw.strip()) or len(raw.strip()) > 12:
            raise click.BadParameter(f"{name}: expected a positive integer, got {raw!r}",
                                     ctx=ctx, param=param)
        out[name] = int(raw.strip())
    return out


def _with_limits(load: Callable[..., Any], limits: dict[str, int]) -> Callable[..., Any]:
    """The loader with -L limits applied (picklable for worker processes: a partial of a
    top-level function)."""
    if not limits:
        return load
    import functools

    return functools.partial(load, limits=limits)


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
    func = click.option(
        "-L",
        "--limit",
        "limits",
        multiple=True,
        metavar="NAME=N",
        callback=_parse_limits,
        help="Set a guard against runaway rules: max_loop_steps (default 100000: how often a "
             "`while` body may start without a decision), max_collection, max_int_digits "
             "(repeatable; docs/language.md, Limits).",
    )(func)
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
            text, code = _rules_report(err)
            click.echo(text, err=True)
            failed += 1
            worst = max(worst, code)
            continue
        except (OSError, ValueError) as err:
            text = err.strerror if isinstance(err, OSError) and err.strerror else err
            click.echo(f"error: cannot read {file}: {text}" if isinstance(err, OSError)
                       else f"error: {file}: {err}", err=True)
            failed += 1
            worst = max(worst, X.RULES)
            continue
        n = len(game.variants)
        click.echo(f"ok: {file} (game {game.name}, {n} variant{'' if n == 1 else 's'})")
    if failed:
        ctx.exit(worst)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--players", "-p", "players_opt", default=None,
              help="Number of players (all random, or the --bots kind), or one kind per seat: "
                   "random, greedy, mcts, mcts@ITERATIONS, mcts@SECONDSs, module:function or "
                   "a --bot name.")
@click.option("--bots", "bots_text", default=None,
              help="Seat kinds, as compare, sweep and tournament take them: one kind for every "
                   "seat (with -p N) or one per seat.")
@click.option("--games", "-n", type=click.IntRange(min=1), default=100, show_default=True)
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
@click.option("--max-steps", type=click.IntRange(min=-1), default=sim.MAX_GAME_STEPS,
              show_default=True,
              help="A game not ended after this many steps (decisions and chance events) is "
                   "an error: rules or bots that loop for ever stop the run (-1: no limit).")
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
    players_opt: str | None,
    bots_text: str | None,
    games: int,
    seed: int,
    variant: str | None,
    defines: dict[str, Any],
    limits: dict[str, int],
    backend: str,
    jobs: str,
    scheduler: str | None,
    batch: int | None,
    bot_opts: tuple[str, ...],
    records_dir: str | None,
    digest_every: int,
    max_steps: int,
    json_out: str | None,
    report_out: str | None,
) -> None:
    """Play games of FILE and report throughput, game length, wins and scores."""
    from rulelang.bots import BotError as bot_error
    from rulelang.workbench import cliutil

    load = _with_limits(_get_loader(ctx), limits)
    rules_errors, _ = _engine_errors()
    players, seats = _simulate_seats(players_opt, bots_text, bot_opts)
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
                max_steps=max_steps,
            )
    except KeyboardInterrupt:
        cliutil.interrupted()
    except rules_errors as err:
        _rules_fail(err)
    except bot_error as err:  # a bot that failed in a game (a bad seat kind is a ValueError)
        _fail(_error_text(err), X.FAILURE)
    except ValueError as err:
        _fail(_error_text(err), X.USAGE)
    except (OSError, sim.SimulationError) as err:
        _fail(_error_text(err), X.FAILURE)

    # With --json -, standard output carries the JSON alone; the tables go to stderr.
    cliutil.print_tables(Console(highlight=False, stderr=json_target.to_stdout),
                         *render_summary(summary))
    for warning in summary.get("warnings", ()):
        click.echo(f"warning: {warning}", err=True)
    json_target.write_json(summary)
    if report_out is not None:
        from rulelang.workbench.report import simulate_report

        report_target.write(simulate_report(summary))


def _simulate_seats(players_opt: str | None, bots_text: str | None,
                    bot_opts: tuple[str, ...]) -> tuple[int, list[str] | None]:
    """simulate's seats: -p N or -p KIND,KIND,...; or --bots, as the workbench commands take
    it, with -p N."""
    from rulelang.workbench import cliutil

    if bots_text is None:
        if players_opt is None:
            raise click.UsageError("give --players N (or one kind per seat), and/or --bots")
        return cliutil.parse_players(players_opt, cliutil.parse_bot_options(bot_opts))
    count = None
    if players_opt is not None:
        if not players_opt.strip().isdigit():
            raise click.UsageError("give the seat kinds with --players or with --bots, not both")
        count = int(players_opt)
    return cliutil.seats_option(bots_text, count, bot_opts)


def render_summary(summary: dict[str, Any]) -> list[Any]:
    """Rich renderables for a simulate() summary."""
    from rulelang.workbench.compare import value_text

    timing = summary["timing"]
    params = ", ".join(f"{k}={value_text(v)}" for k, v in sorted(summary["params"].items()))
    params = params or "-"
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
    # ± is the standard deviation here (sweep's ± is a 95% interval): the labels say so
    overview.add_row(
        "game length (decisions): mean ± sd [min, max]",
        f"{_fmt_num(length['mean'])} ± {_fmt_num(length['stdev'])}  "
        f"[{length['min']:,}, {length['max']:,}]",
    )
    chance = summary["chance_events"]
    overview.add_row("chance events per game: mean ± sd",
                     f"{chance['mean']:.1f} ± {chance['stdev']:.1f}")

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
            rate_interval(low, high),
            _fmt_num(score["mean"]),
            _fmt_num(score["stdev"]),
            f"{score['min']:,}",
            f"{score['max']:,}",
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
    help="Comma-separated seats: human, random, greedy, mcts, mcts@ITERATIONS, mcts@SECONDSs "
         "or module:function, e.g. human,greedy,random.",
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
@click.option("--resume", "resume_from", type=click.Path(dir_okay=False), default=None,
              help="Continue the game of this record (its variant and params are used).")
@click.option("--tui", is_flag=True, help="Full-screen terminal table (needs the 'tui' extra).")
@click.pass_context
def play(
    ctx: click.Context,
    file: str,
    kinds: list[str],
    seed: int | None,
    variant: str | None,
    defines: dict[str, Any],
    limits: dict[str, int],
    backend: str,
    record_out: str | None,
    resume_from: str | None,
    tui: bool,
) -> None:
    """Play FILE at the terminal; each person sees only his own observation."""
    from rulelang.bots import BotError as bot_error
    from rulelang.play import MAX_INVALID, EndOfInput, Session, plain_game

    obj = ctx.find_root().obj
    test_loader = obj.get("loader") if isinstance(obj, dict) else None
    rules_errors, _ = _engine_errors()
    console = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    if resume_from is not None:
        rec = _read_record(resume_from)
        session = _open_session(lambda: Session.resume(
            file, rec, kinds, seed=seed, backend=backend, loader=test_loader, limits=limits))
    else:
        session = _open_session(lambda: Session(
            file, kinds, seed=seed, variant=variant, params=defines, backend=backend,
            loader=test_loader, limits=limits))

    def write_record() -> None:
        if record_out is None:
            return
        try:
            Path(record_out).write_text(json.dumps(session.record(file)) + "\n",
                                        encoding="utf-8")
        except OSError as exc:
            _fail(f"cannot write {record_out}: {exc.strerror or exc}", X.FAILURE)

    if tui:
        try:
            from rulelang.tui import run_tui
        except ImportError:
            _fail("--tui needs the Textual extra: pip install 'rulelang[tui]'", X.USAGE)
        finished = run_tui(session, record_out)
        write_record()
        if not finished:
            sys.exit(X.FAILURE)
        for line in session.result_lines():
            console.print(Text(line))
        return

    console.print(Text(f"{session.game.name}: {len(kinds)} players "
                       f"({', '.join(session.seat_label(p) for p in range(len(kinds)))}), "
                       f"seed {session.seed}; type ? for help"))

    def read(prompt: str) -> str | None:
        try:
            return input(prompt)
        except EOFError:
            return None

    def clear() -> None:
        if console.is_terminal:
            console.clear()
            console.file.write("\033[3J")  # the scrollback too
            console.file.flush()
        else:
            console.print("\n" * 3)

    try:
        # a person at a terminal may mistype as often as he likes; a pipe may loop for ever
        finished = plain_game(session, console, read, clear=clear, err_console=err,
                              max_invalid=None if sys.stdin.isatty() else MAX_INVALID,
                              record=record_out)
    except EndOfInput as exc:
        write_record()
        err.print(Text(f"\nerror: {exc}; game abandoned"))
        sys.exit(X.FAILURE)
    except KeyboardInterrupt:
        write_record()
        err.print(Text("\ninterrupted"))
        sys.exit(X.INTERRUPTED)
    except rules_errors as exc:
        # the record of the game so far (up to the faulty action) is still written
        write_record()
        click.echo(_error_text(exc), err=True)
        sys.exit(X.FAULT)
    except (bot_error, sim.PolicyError) as exc:  # a user policy that raised or answered badly
        write_record()
        _fail(_error_text(exc), X.FAILURE)
    write_record()
    if not finished:
        err.print(Text("game abandoned"))
        sys.exit(X.FAILURE)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--players", "-p", "kinds", required=True, callback=_parse_players,
              help="Comma-separated seats: human, random, greedy, mcts, mcts@ITERATIONS, "
                   "mcts@SECONDSs or module:function, e.g. human,human,greedy.")
@click.option("--seed", "-s", type=int, default=None, help="Seed for random players and chance.")
@_common_game_options
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=8000, show_default=True)
@click.option("--record", "record_out", type=click.Path(dir_okay=False), default=None,
              help="Write the game record (JSON) here when the game ends, when a player leaves "
                   "it, or when the server is stopped before either.")
def serve(file: str, kinds: list[str], seed: int | None, variant: str | None,
          defines: dict[str, Any], limits: dict[str, int], backend: str, host: str,
          port: int, record_out: str | None) -> None:
    """Serve FILE as a browser table: people join by link, bots play on the server."""
    from rulelang.play import Session
    from rulelang.workbench import cliutil

    try:
        from rulelang.web import serve as run_server
    except ImportError:
        _fail("serve needs the web extra: pip install 'rulelang[web]'", X.USAGE)
    cliutil.Output(record_out, "the record")  # a path that cannot be written fails now
    session = _open_session(lambda: Session(file, kinds, seed=seed, variant=variant,
                                            params=defines, backend=backend, limits=limits))
    run_server(session, host=host, port=port, record=record_out)


def _read_record(path: str) -> dict[str, Any]:
    try:
        rec = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        _fail(f"cannot read {path}: {err.strerror or err}", X.FAILURE)
    except (ValueError, RecursionError) as err:
        _fail(f"{path} is not valid JSON: {err}", X.RECORD)
    problem = _record_problem(rec)
    if problem:
        _fail(f"{path} is not a rulelang game record: {problem}", X.RECORD)
    return rec


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("record", type=click.Path(dir_okay=False))
@click.option("--backend", type=click.Choice(BACKENDS), default=DEFAULT_BACKEND, show_default=True)
@click.option("--step", is_flag=True,
              help="Show each action and the view after it (Enter for the next, q to stop).")
@click.option("--seat", type=int, default=None,
              help="With --step: what this seat saw (default: the full state).")
@click.option("--from", "from_step", type=int, default=0, show_default=True,
              help="With --step: the first step to show.")
@click.option("-L", "--limit", "limits", multiple=True, metavar="NAME=N", callback=_parse_limits,
              help="A guard against runaway rules, as for simulate (repeatable).")
@click.pass_context
def replay(ctx: click.Context, file: str, record: str, backend: str, step: bool,
           seat: int | None, from_step: int, limits: dict[str, int]) -> None:
    """Replay RECORD (JSON game record) against FILE, checking every state digest."""
    load = _with_limits(_get_loader(ctx), limits)
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
        text, code = _rules_report(err)
        if code == X.USAGE:  # the record's variant or params do not fit
            bad(f"{record}: its variant or parameters do not fit {file}:\n{text}")
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
    stepper = None
    if step:
        from rulelang.play import Stepper

        if seat is not None and not 0 <= seat < rec["players"]:
            _fail(f"--seat {seat}: the record has seats 0..{rec['players'] - 1}", X.USAGE)
        try:
            stepper = Stepper(file, rec, seat, console, from_step,
                              interactive=sys.stdin.isatty())
        except rules_errors as err:
            _rules_fail(err)
    for i, action in enumerate(actions):
        actor = state.current_player
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
        if stepper is not None:
            stepper.show(i, actor, state)
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
    try:
        scores = list(state.scores())
        winners = list(state.winners())
    except rules_errors as err:  # a record simulate --records kept of a game whose score faults
        _rules_fail(err)
    console.print(Text(f"scores: {scores}"))
    console.print(Text(f"winners: {winners}"))
    if rec.get("scores") is not None and list(rec["scores"]) != scores:
        bad(f"final scores differ: record has {rec['scores']}, replay gives {scores}")
    if rec.get("winners") is not None and list(rec["winners"]) != winners:
        bad(f"winners differ: record has {rec['winners']}, replay gives {winners}")


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--players", "-p", type=int, default=None,
              help="Player count for the observation layout (default: the file's minimum).")
@click.option("--variant", default=None, help="Named variant declared in the file.")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", callback=_parse_defines,
              help="Override a rules parameter (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the layouts as JSON.")
def spaces(file: str, players: int | None, variant: str | None, defines: dict[str, Any],
           as_json: bool) -> None:
    """Print FILE's fixed action and chance spaces and its observation vector layout."""
    from rulelang import check_file
    from rulelang.rl import NotNumbered, ObservationEncoder, action_space, chance_space

    rules_errors, _ = _engine_errors()
    try:
        program = check_file(file, variant=variant, params=defines)
        acts = action_space(program)
    except rules_errors as err:
        _rules_fail(err)
    except ValueError as err:
        _fail(_error_text(err), X.RULES)
    # chance outcomes drawn from a state variable have no fixed numbering: only OpenSpiel
    # needs one, so the rest of the layout is still printed
    try:
        chance, chance_error = chance_space(program), None
    except NotNumbered as err:
        chance, chance_error = None, str(err)
    n = players if players is not None else program.min_players
    if not program.min_players <= n <= program.max_players:
        _fail(f"{program.name} takes {program.min_players}-{program.max_players} players, "
              f"not {n}", X.USAGE)
    enc = ObservationEncoder(program, n)
    if as_json:
        click.echo(json.dumps({"actions": acts.describe(),
                               "chance": chance.describe() if chance else None,
                               "chance_error": chance_error,
                               "observation": enc.describe(), "players": n}, indent=1))
        return
    for title, space in (("actions", acts), ("chance outcomes", chance)):
        if space is None:
            click.echo(f"{title}: not numberable (OpenSpiel cannot take this file)")
            click.echo(f"  {chance_error}")
            continue
        click.echo(f"{title}: {len(space)}")
        for k in space.describe():
            sig = f"{k['action']}({', '.join(p['name'] for p in k['params'])})"
            last = k["offset"] + k["size"] - 1
            click.echo(f"  {sig:<30} {k['offset']:>6} .. {last:>6}  ({k['size']})")
    click.echo(f"observation ({n} players): {enc.size}")
    for f in enc.describe():
        click.echo(f"  {f['field']:<30} {f['offset']:>6}  {f['size']:>5}  {f['type']}")


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
