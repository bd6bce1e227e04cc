"""Full-screen terminal table (Textual, the `tui` extra): `rulelang play FILE --tui`.

The screen shows the view of the person to move (board, tables, own hand), the log naming each
seat, and the legal actions as a list filtered by what is typed, written as line mode writes them
(`pay(UEP to sell=1, with a bond=false)`). Enter plays the action picked with the arrow keys,
else the typed action (any form line mode takes, or `bid 250`), else the one action the typed
text leaves in the list; picking a summarised group ("bid 1..1000") puts its name in the entry
so only the amount remains to type. The view gets the width its boards need (on a small
terminal narrower cells, then sideways scrolling). Forced moves are applied with a notice, undo
works against bots, ctrl+s saves a record to resume with `--resume`, and between two people a
hand-off screen hides everything until the next one is ready.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.console import Group as RichGroup
from rich.measure import Measurement
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from rulelang.play import (
    LIST_LIMIT,
    InputError,
    Session,
    describe_group,
    group_actions,
    resolve,
    rich_view,
)
from rulelang.viewmodel import seat_name

SIDE_MIN = 28  # columns the log and the action list keep beside the view
VIEW_SHARE = 0.6  # of the screen's width for the view, when its boards need no more
SCROLLBAR = 1  # the view's vertical scrollbar (#view in TableApp.CSS)


def _words(text: str) -> str:
    """Lower-case words of an action or a filter: 'buy(X01D)', 'buy x01d' -> 'buy x01d'."""
    return " ".join(w for w in re.split(r"[\s(),=]+", text.lower()) if w)


def board_width(model: dict, cell: int) -> int:
    """Columns the widest board of a view model takes with cells `cell` characters wide."""
    boards = [item for item in model["items"] if item["kind"] == "board"]
    if not boards:
        return 0
    console = Console(width=10_000, color_system=None)
    (columns,) = rich_view({**model, "items": boards}, cell)  # one Columns of the boards
    return max(Measurement.get(console, console.options, block).maximum
               for block in columns.renderables)


class Entry(Input):
    """The action entry; the arrow keys move the highlight in the action list."""

    BINDINGS = [
        Binding("down", "pick('cursor_down')", show=False),
        Binding("up", "pick('cursor_up')", show=False),
        Binding("pagedown", "pick('page_down')", show=False),
        Binding("pageup", "pick('page_up')", show=False),
    ]

    def action_pick(self, move: str) -> None:
        app = self.app
        assert isinstance(app, TableApp)
        opts = app.query_one("#actions", OptionList)
        getattr(opts, f"action_{move}")()
        app.picked = opts.highlighted is not None


class HandOff(ModalScreen[None]):
    """Covers the whole table between two people in hot-seat play."""

    DEFAULT_CSS = """
    HandOff { align: center middle; background: $background; }
    HandOff > Static { width: 60; padding: 2 4; border: heavy $accent; text-align: center; }
    """
    BINDINGS = [Binding("enter", "ready", "Ready")]

    def __init__(self, seat: int) -> None:
        super().__init__()
        self.seat = seat

    def compose(self) -> ComposeResult:
        yield Static(f"Hand over to {seat_name(self.seat)}.\n\nNothing of the previous turn is "
                     f"shown.\n\n{seat_name(self.seat)}: press Enter when you are ready.",
                     id="handoff")

    def action_ready(self) -> None:
        self.dismiss(None)


class TableApp(App[bool]):
    """Returns True when the game ended, False when the people left it."""

    TITLE = "rulelang"
    CSS = """
    #main { height: 1fr; }
    #view { width: 3fr; overflow-x: auto; scrollbar-size-vertical: 1; }
    #side { width: 1fr; min-width: 20; }
    #log { height: 1fr; border: round $panel; }
    #actions { height: 1fr; border: round $panel; }
    #status { height: 1; background: $boost; }
    #entry { dock: bottom; }
    """
    BINDINGS = [
        Binding("ctrl+z", "undo", "Undo"),
        Binding("ctrl+s", "save", "Save"),
        Binding("ctrl+q", "leave", "Quit"),
    ]

    def __init__(self, session: Session, save_path: str = "rulelang-save.json") -> None:
        super().__init__()
        self.session = session
        self.save_path = save_path
        self.seen: dict[int, int] = {p: 0 for p in session.humans()}
        self.showing: int | None = None  # the seat whose screen is shown
        self.legal: list[str] = []
        self.log_shown: list[str] = []  # the log lines on screen (a Static reflows on resize)
        self.picked = False  # the player moved the list's highlight since the last keystroke
        # what the view shows: a seat's view model (or None) and lines below it
        self.model: dict | None = None
        self.below: list[Any] = []

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        with Horizontal(id="main"):
            with VerticalScroll(id="view"):
                yield Static(id="board")
            with Vertical(id="side"):
                with VerticalScroll(id="log"):
                    yield Static(id="logtext")
                yield OptionList(id="actions")
        yield Entry(placeholder="type an action, a number, or filter the list (↑↓ pick)",
                    id="entry")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#log", VerticalScroll).border_title = "log"
        self.query_one("#actions", OptionList).border_title = "your actions"
        self.session.advance()
        self.turn()

    # -- turns
    def turn(self) -> None:
        s = self.session
        if s.state.is_terminal():
            self.show_end()
            return
        p = s.state.current_player
        humans = s.humans()
        if len(humans) > 1 and self.showing is not None and self.showing != p:
            self.blank()
            self.push_screen(HandOff(p), lambda _r: self.show_turn(p))
        else:
            self.show_turn(p)

    def write_log(self, lines: list[str], clear: bool = False) -> None:
        if clear:
            self.log_shown = []
        self.log_shown.extend(lines)
        self.query_one("#logtext", Static).update(Text("\n".join(self.log_shown)))
        self.query_one("#log", VerticalScroll).scroll_end(animate=False)

    def show_view(self, model: dict | None, below: list[Any] | None = None) -> None:
        self.model, self.below = model, list(below or [])
        self.fit_view()

    def fit_view(self, width: int | None = None) -> None:
        """Give the view the width its widest board needs (the rest of the screen, at least
        SIDE_MIN columns, for the log and the actions), with narrower cells when the screen is
        too small, and as a last resort a board wider than the view, which scrolls sideways."""
        width = width or self.size.width
        room = max(width - SIDE_MIN - SCROLLBAR, 1)
        need, cell = 0, 3
        if self.model is not None:
            for cell in (3, 2, 1):
                need = board_width(self.model, cell)
                if need <= room:
                    break
        view = self.query_one("#view", VerticalScroll)
        view.styles.width = max(min(max(int(width * VIEW_SHARE), need + SCROLLBAR),
                                    width - SIDE_MIN), 1)
        board = self.query_one("#board", Static)
        board.styles.min_width = need
        parts = rich_view(self.model, cell) if self.model is not None else []
        if parts and self.below:
            parts.append(Text(""))
        board.update(RichGroup(*parts, *self.below) if parts or self.below else "")

    def on_resize(self, event: events.Resize) -> None:
        self.fit_view(event.size.width)

    def blank(self) -> None:
        self.show_view(None)
        self.write_log([], clear=True)
        self.query_one("#actions", OptionList).clear_options()
        self.query_one("#status", Static).update("")

    def show_turn(self, p: int) -> None:
        s = self.session
        if self.showing != p:
            self.write_log(s.log_lines(p), clear=True)
        else:
            self.write_log(s.log_lines(p, self.seen[p]))
        self.seen[p] = len(s.log)
        self.showing = p
        self.query_one("#status", Static).update(Text(s.status(p), style="bold"))
        self.show_view(s.view(p))
        self.legal = s.state.legal_actions()
        entry = self.query_one("#entry", Input)
        entry.value = ""
        self.fill_actions("")
        entry.focus()

    def fill_actions(self, text: str) -> None:
        """List the legal actions the typed text matches: written as line mode writes them
        (Session.describe), matched on that, on the plain form (`pay 1 false`) and the number.
        A group too long to list is one entry, line mode's summary (play.describe_group)."""
        opts = self.query_one("#actions", OptionList)
        opts.clear_options()
        self.picked = False
        want = _words(text)
        for g in group_actions(self.legal, self.session.labels, self.session.display):
            if len(g.indexes) > LIST_LIMIT:
                if not want or g.name.startswith(want.split()[0]):
                    summary = "\n".join(line.strip() for line in describe_group(g))
                    opts.add_option(Option(summary, id=f"group:{g.name}"))
                continue
            for k in g.indexes:
                label = f"{k + 1}. {self.session.describe(self.legal[k])}"
                keys = (_words(label), _words(f"{k + 1} {self.legal[k]}"))
                if not want or any(want in key for key in keys):
                    opts.add_option(Option(label, id=f"action:{k}"))
        if want and self.only_option() is not None:
            opts.highlighted = 0  # what Enter plays

    def only_option(self) -> Option | None:
        """The one entry the list shows, if only one."""
        opts = self.query_one("#actions", OptionList)
        return opts.get_option_at_index(0) if opts.option_count == 1 else None

    def show_end(self) -> None:
        s = self.session
        humans = s.humans()
        self.query_one("#status", Static).update(Text("game over: ctrl+q to leave",
                                                      style="bold"))
        results = [Text(line) for line in s.result_lines()]
        if len(humans) == 1:
            p = humans[0]
            self.show_view(s.view(p), results)
            self.write_log(s.log_lines(p, self.seen[p]))
        else:
            # hot seat (or bots only): nobody's own view stays on screen, only the result
            self.show_view(None, results)
            self.write_log([], clear=True)
        self.query_one("#actions", OptionList).clear_options()
        self.legal = []

    def play(self, k: int) -> None:
        p = self.session.state.current_player
        self.session.play(p, k)
        self.turn()

    # -- events
    def on_input_changed(self, event: Input.Changed) -> None:
        if self.legal:
            self.fill_actions(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter plays the entry picked with the arrow keys; else the typed action, in any form
        line mode takes; else the one action the typed text leaves in the list."""
        if not self.legal:
            return
        text = event.value.strip()
        opts = self.query_one("#actions", OptionList)
        if opts.highlighted is not None and (self.picked or not text):
            self.choose(opts.get_option_at_index(opts.highlighted))
            return
        try:
            k = resolve(text, self.legal, self.session.aliases)
        except InputError as err:
            only = self.only_option()
            kind = (only.id or "").partition(":")[0] if only is not None else ""
            # a summarised group fills the entry with its name: only when that loses nothing
            if only is not None and (kind == "action" or len(_words(text).split()) == 1):
                self.choose(only)
            else:
                self.notify(str(err), severity="warning")
            return
        self.play(k)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.choose(event.option)

    def choose(self, option: Option) -> None:
        kind, _, value = (option.id or "").partition(":")
        if kind == "action":
            self.play(int(value))
        elif kind == "group":
            entry = self.query_one("#entry", Input)
            entry.value = value + " "
            entry.focus()

    def action_undo(self) -> None:
        refusal = self.session.undo_refusal()
        if refusal is None:
            self.session.undo()
            p = self.session.state.current_player
            self.seen[p] = min(self.seen[p], len(self.session.log))
            self.showing = None
            self.turn()
            self.notify("undone")
        else:
            self.notify(refusal, severity="warning")

    def action_save(self) -> None:
        Path(self.save_path).write_text(json.dumps(self.session.record()) + "\n",
                                        encoding="utf-8")
        self.notify(f"saved to {self.save_path}; continue with --resume {self.save_path}")

    def action_leave(self) -> None:
        self.exit(self.session.state.is_terminal())


def run_tui(session: Session, save_path: str | None = None) -> bool:
    """Run the full-screen table; True when the game ended."""
    result = TableApp(session, save_path or "rulelang-save.json").run()
    return bool(result)
