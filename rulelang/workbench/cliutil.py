"""Helpers the workbench commands share: seat lists, output files, progress bars, interrupts."""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from rulelang import exitcodes as X

# Exit status after Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = X.INTERRUPTED


def parse_players(value: str, bots: dict[str, str] | None = None,
                  allow_human: bool = False) -> tuple[int, list[str] | None]:
    """--players: a count (all random) or a comma-separated list of seat kinds.

    Returns (count, seat kinds or None). Names registered with --bot NAME=module:function are
    replaced by their policy. Raises click.BadParameter with the accepted forms.
    """
    from rulelang import bots as B

    text = value.strip()
    if text.isdigit():
        return int(text), None
    kinds = [k.strip() for k in text.split(",")]
    resolved = [(bots or {}).get(k, k) for k in kinds]
    try:
        specs = [B.parse_spec(k, allow_human=allow_human) for k in resolved]
    except B.BotError as err:
        raise click.BadParameter(str(err)) from None
    return len(specs), [s.label if s.kind != "human" else "human" for s in specs]


BOTS_HELP = ("Seat kinds: random, greedy, mcts, mcts@ITERATIONS, mcts@SECONDSs, "
             "module:function or a --bot name; one kind for every seat or one per seat.")


def split_players(players: str | None, bots_text: str | None) -> tuple[str | None, int | None]:
    """compare's and sweep's --players: a count, or the seat kinds (as simulate -p takes them,
    the same as --bots). Returns (the --bots text, the count) for seats_option."""
    if players is None:
        return bots_text, None
    text = players.strip()
    if text.isdigit():
        if int(text) < 1:
            raise click.UsageError(f"--players must be at least 1, not {text}")
        return bots_text, int(text)
    if bots_text is not None:
        raise click.UsageError("give the seat kinds with --players or with --bots, not both")
    return text, None


def seats_option(bots_text: str | None, players: int | None, bot_opts: tuple[str, ...]
                  ) -> tuple[int, list[str]]:
    """--bots KIND (every seat) or KIND,KIND,... (one per seat) with --players N."""
    registry = parse_bot_options(bot_opts)
    if bots_text is None:
        if players is None:
            raise click.UsageError("give --players N and/or --bots")
        return players, ["random"] * players
    count, kinds = parse_players(bots_text, registry)
    kinds = kinds or ["random"] * count
    if count == 1 and players is not None:
        return players, kinds * players
    if players is not None and players != count:
        raise click.UsageError(f"--bots names {count} seats but --players is {players}")
    if count == 1:
        raise click.UsageError("one bot kind given: say how many players with --players")
    return count, kinds


def parse_bot_options(values: tuple[str, ...]) -> dict[str, str]:
    """--bot [NAME=]module:function (repeatable): NAME (default: the function's name) becomes
    a seat kind usable in --players / --bots."""
    out: dict[str, str] = {}
    for item in values:
        name, sep, target = item.partition("=")
        if not sep:
            name, target = item.rsplit(":", 1)[-1], item
        name, target = name.strip(), target.strip()
        if ":" not in target or not name:
            raise click.BadParameter(f"expected [NAME=]module:function, got {item!r}")
        out[name] = target
    return out


def _cannot_write(message: str) -> NoReturn:
    """An output that cannot be written: the FAILURE exit code (rulelang/exitcodes.py)."""
    click.echo(f"error: {message}", err=True)
    sys.exit(X.FAILURE)


class Output:
    """A --json / --report target: '-' is standard output; a file is checked before any game
    is played, so an unwritable path fails at once rather than after the run."""

    def __init__(self, path: str | None, what: str) -> None:
        self.path = path
        self.what = what
        if path is None or path == "-":
            return
        p = Path(path)
        if p.is_dir():
            _cannot_write(f"cannot write {what} to {path}: it is a directory")
        existed = p.exists()
        try:
            with open(p, "a", encoding="utf-8"):
                pass
        except OSError as err:
            _cannot_write(f"cannot write {what} to {path}: {err.strerror or err}")
        if not existed:
            with contextlib.suppress(OSError):
                p.unlink()

    @property
    def to_stdout(self) -> bool:
        return self.path == "-"

    def write(self, text: str) -> None:
        if self.path is None:
            return
        if self.path == "-":
            sys.stdout.write(text)
            sys.stdout.flush()
            return
        try:
            Path(self.path).write_text(text, encoding="utf-8")
        except OSError as err:
            _cannot_write(f"cannot write {self.path}: {err.strerror or err}")

    def write_json(self, data: Any) -> None:
        self.write(json.dumps(data, indent=2) + "\n")


def report_output(path: str | None) -> Output:
    """An --report target, checked (writable, matplotlib installed) before any game is played."""
    target = Output(path, "the report")
    if path is not None:
        if path == "-":
            raise click.UsageError("--report needs a file name")
        from rulelang.workbench.report import require_matplotlib

        require_matplotlib()
    return target


@contextlib.contextmanager
def progress_bar(label: str, total: int) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr, shown only on a terminal; yields the progress callback."""
    err_console = Console(stderr=True)
    bar = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
        # No background refresh thread: worker processes must not be forked from a threaded
        # process, so the bar is redrawn from the progress callback instead.
        auto_refresh=False,
    )
    last = [0.0]
    with bar:
        task = bar.add_task(label, total=total)

        def update(done: int, all_: int) -> None:
            bar.update(task, completed=done, total=all_)
            now = time.monotonic()
            if now - last[0] >= 0.1 or done == all_:
                last[0] = now
                bar.refresh()

        yield update


# The widest a table is printed on a pipe or into a file (Rich's default there is 80 columns).
PIPE_WIDTH = 240


def print_tables(console: Console, *renderables: Any) -> None:
    """Print as console.print does; but on a pipe or into a file (no terminal, no COLUMNS set)
    each renderable gets the width it needs, up to PIPE_WIDTH, so that a table written to a log
    keeps one line per row where Rich would fold its cells at 80 columns."""
    import os

    isatty = getattr(console.file, "isatty", None)
    if (isatty is not None and isatty()) or os.environ.get("COLUMNS"):
        # (the file itself: FORCE_COLOR or TTY_COMPATIBLE make Rich treat a pipe as a
        # terminal of 80 columns)
        console.print(*renderables)
        return
    from rich.measure import Measurement

    wide = console.options.update_width(PIPE_WIDTH)
    narrow = console.width
    try:
        for r in renderables:
            console.width = max(narrow, min(Measurement.get(console, wide, r).maximum,
                                            PIPE_WIDTH))
            console.print(r)
    finally:
        console.width = narrow


def interrupted() -> None:
    """Say that the run was stopped, and exit with the interrupt status."""
    click.echo("\ninterrupted", err=True)
    sys.exit(EXIT_INTERRUPTED)
