"""Full-screen terminal table (Textual, the `tui` extra): `rulelang play FILE --tui`.

The screen shows the view of the person to move (board, tables, own hand), the log naming each
seat, and the legal actions as a list filtered by what is typed, written as line mode writes them
(`pay(UEP to sell=1, with a bond=false)`). The list's first action is highlighted when it
appears. Enter plays the highlighted action (with an empty entry, or once the arrow keys moved
the highlight), else the typed action (any form line mode takes, or `bid 250`), else the one
action the typed text leaves in the list; picking a summarised group ("bid 1..1000") puts its
name in the entry so only the amount remains to type. The actions are numbered as line mode
numbers them (play.menu_numbers: a summarised group's options have no number), and a typed
answer is read as line mode reads it: a number is only ever one the list shows, or an argument
people see as that number (never the one action a number leaves in the list). `?` shows the
help and `? NAME` lists every option of one action in the list, as in line mode, with its number
if it has one. The view gets the width its boards and tables need (the side panel shrinks
first; on a small terminal narrower cells and wrapped headers, then sideways scrolling: no word
of a table is cut). Forced moves are applied with a notice, undo works against bots, ctrl+s
saves a record to resume with `--resume`, and between two people a hand-off screen hides
everything until the next one is ready.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.console import Group as RichGroup
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from rulelang.play import (
    Group,
    InputError,
    Menu,
    Session,
    describe_group,
    listed,
    rich_view,
)
from rulelang.viewmodel import seat_name

SIDE_MIN = 28  # columns the log and the action list keep beside the view
SIDE_LEAST = 20  # ... at least, for a table's longest words (#side's min-width in CSS)
VIEW_SHARE = 0.6  # of the screen's width for the view, when its boards need no more
SCROLLBAR = 1  # the view's vertical scrollbar (#view in TableApp.CSS)

# What '?' shows in the full-screen table (docs/play.md, Full screen).
TUI_HELP = """\
Enter plays the highlighted action: the first one when the list appears; the up and down keys
move the highlight. Or type: the list keeps the actions that match, and Enter plays the typed
action, in any form line mode takes (its number in the list, 'place 5c', 'PLACE(5C)',
'bid 250', 'exempt_player P0', or just the argument '5c'), else the one action left in the
list. A number is only ever one the list shows, or an amount ('250'). A long group
('bid (millions)  1..1000') is one entry, its options without numbers: picking it puts its
name in the entry, and you type the amount.
  ?          this help
  ? NAME     list every option of one action (e.g. '? bid'); pick one, or type it
  ctrl+z     take back your last move (only against bots)
  ctrl+s     save the record; continue it with --resume
  ctrl+q     leave the game
Escape or Enter closes this help."""


def _is_number(text: str) -> bool:
    """A bare number (ASCII digits), which play.resolve reads only as a number on screen."""
    return re.fullmatch(r"[0-9]+", text.strip()) is not None


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


def table_columns(item: dict) -> list[tuple[int, int]]:
    """Each column of a view table (its header and cells): the width of its longest word, and
    of its longest cell on one line."""
    cols = []
    for i, head in enumerate(item["columns"]):
        texts = [head, *(row[i] for row in item["rows"] if i < len(row))]
        words = [w for t in texts for w in t.split()] or [""]
        cols.append((max(cell_len(w) for w in words), max(cell_len(t) for t in texts)))
    return cols


TIGHT_PADDING = (0, 1, 0, 0)  # a squeezed table's cells: one space less between two columns


def _table_span(widths: list[int], padding: tuple[int, ...]) -> int:
    """Columns a table of play.rich_view takes with columns `widths` characters wide: their
    padding (top, right, bottom, left), and one separator between two columns (no edge)."""
    return sum(w + padding[1] + padding[3] for w in widths) + len(widths) - 1


def table_width(model: dict) -> tuple[int, int]:
    """Columns the widest table of a view model takes: at least (squeezed: every word whole,
    headers and cells wrapped) and at most (every cell on one line)."""
    tables = [item for item in model["items"] if item["kind"] == "table"]
    if not tables:
        return 0, 0
    (columns,) = rich_view({**model, "items": tables})  # one Columns of the tables
    spans = [(_table_span([lo for lo, _ in cols], TIGHT_PADDING),
              _table_span([hi for _, hi in cols], t.padding))
             for t, cols in zip(columns.renderables, map(table_columns, tables))]
    return max(lo for lo, _ in spans), max(hi for _, hi in spans)


def fit_table(table: Table, item: dict, width: int) -> None:
    """Squeeze a table into `width` screen columns when its cells do not all fit on one line.
    Rich's own squeeze cuts the widest columns first (`Dur…`), row names included; here the
    columns get one space less between them, each keeps its longest word, and what is left
    goes to the row names, then to the columns that need the least of it to be whole.
    (Narrower than its longest words, the table is wider than `width`: the view scrolls
    sideways.)"""
    cols = table_columns(item)
    if _table_span([hi for _, hi in cols], table.padding) <= width:
        return
    table.padding = TIGHT_PADDING
    widths = [lo for lo, _ in cols]
    left = width - _table_span(widths, TIGHT_PADDING)
    for i in [0, *sorted(range(1, len(cols)), key=lambda i: cols[i][1] - cols[i][0])]:
        add = max(min(left, cols[i][1] - widths[i]), 0)
        widths[i] += add
        left -= add
    for column, w in zip(table.columns, widths):
        column.width = w


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


class HelpScreen(ModalScreen[None]):
    """What '?' shows: how to enter actions and the keys (TUI_HELP)."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Static { width: 100; max-width: 100%; height: auto; max-height: 100%;
                          padding: 1 2; border: heavy $accent; background: $surface; }
    """
    BINDINGS = [Binding("escape", "close", "Close"), Binding("enter", "close", show=False)]

    def compose(self) -> ComposeResult:
        yield Static(Text(TUI_HELP), id="help")

    def action_close(self) -> None:
        self.dismiss(None)


def _is_help(text: str) -> bool:
    """'?', 'help', '? NAME' or 'help NAME' (as line mode takes them)."""
    words = text.strip().lower().split(None, 1)
    return bool(words) and words[0] in ("?", "help")


class TableApp(App[bool]):
    """Returns True when the game ended, False when the people left it."""

    TITLE = "rulelang"
    CSS = """
    #main { height: 1fr; }
    #view { width: 3fr; overflow-x: auto; scrollbar-size-vertical: 1; }
    #side { width: 1fr; min-width: 20; }
    #log { height: 1fr; border: round $panel; }
    /* a stable gutter: an entry's lines are counted at the width it is drawn at (Textual
       counts them before a scrollbar appears, and would cut a long entry's last line) */
    #actions { height: 1fr; border: round $panel; scrollbar-gutter: stable;
               scrollbar-size-vertical: 1; }
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
        self.menu: Menu | None = None  # the pause's menu, as line mode's (Session.menu)
        self.legal: list[str] = []
        self.groups: list[Group] = []  # the legal actions grouped as line mode groups them
        self.numbers: dict[int, int] = {}  # legal index -> its number in the list
        self.log_shown: list[str] = []  # the log lines on screen (a Static reflows on resize)
        self.picked = False  # the player moved the list's highlight since the last keystroke
        self.unfolded: set[str] = set()  # long groups listed option by option ('? NAME')
        self.filtered = ""  # the text the action list was last filtered with
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
        """Give the view the width its widest board and table need, the rest of the screen, at
        least SIDE_MIN columns, for the log and the actions. When that is too little, a board
        gets narrower cells and a table wraps its headers and cells, never cutting a word: the
        log and the actions then give up columns, down to SIDE_LEAST, for the table's longest
        words. As a last resort a board or table wider than the view scrolls sideways."""
        width = width or self.size.width
        room = max(width - SIDE_MIN - SCROLLBAR, 1)
        tight = max(width - SIDE_LEAST - SCROLLBAR, 1)
        need, cell, least, most = 0, 3, 0, 0
        if self.model is not None:
            for cell in (3, 2, 1):
                need = board_width(self.model, cell)
                if need <= room:
                    break
            least, most = table_width(self.model)
        want = max(min(need, room), min(most, room), min(least, tight))
        view = self.query_one("#view", VerticalScroll)
        shown = max(min(max(int(width * VIEW_SHARE), want + SCROLLBAR),
                        max(width - SIDE_MIN, want + SCROLLBAR)), 1)
        view.styles.width = shown
        board = self.query_one("#board", Static)
        board.styles.min_width = max(need, least)
        parts = rich_view(self.model, cell) if self.model is not None else []
        blocks = [item for item in (self.model or {"items": []})["items"]
                  if item["kind"] != "show"]
        if blocks:  # parts[0] is one Columns of the boards and tables
            inner = max(shown - SCROLLBAR, need, least)  # the width the view draws in
            for block, item in zip(parts[0].renderables, blocks):
                if item["kind"] == "table":
                    fit_table(block, item, inner)
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
        # numbered as line mode numbers its menu: what a typed number means (Session.resolve)
        self.menu = s.menu()
        self.legal, self.groups, self.numbers = self.menu.legal, self.menu.groups, self.menu.numbers
        self.unfolded = set()
        entry = self.query_one("#entry", Input)
        entry.value = ""
        self.fill_actions("")
        entry.focus()

    def fill_actions(self, text: str) -> None:
        """List the legal actions the typed text matches: written as line mode writes them
        (Session.describe), matched on that, on the plain form (`pay 1 false`) and the number.
        The numbers are line mode's (self.numbers). A group too long to list is one entry,
        line mode's summary (play.describe_group), unless '? NAME' unfolded it: its options
        then have no number, as in line mode. Help ('? bid') filters nothing. The first entry
        is highlighted (what Enter plays), unless the text leaves several."""
        opts = self.query_one("#actions", OptionList)
        opts.clear_options()
        self.picked = False
        self.filtered = text
        want = "" if _is_help(text) else _words(text)
        for g in self.groups:
            if not listed(g) and g.name not in self.unfolded:
                if not want or g.name.startswith(want.split()[0]):
                    summary = "\n".join(line.strip() for line in describe_group(g))
                    opts.add_option(Option(summary, id=f"group:{g.name}"))
                continue
            for k in g.indexes:
                number = f"{self.numbers[k]}. " if k in self.numbers else ""
                label = number + self.session.describe(self.legal[k])
                keys = (_words(label), _words(number + self.legal[k]))
                if not want or any(want in key for key in keys):
                    opts.add_option(Option(label, id=f"action:{k}"))
        if opts.option_count and (not want or self.only_option() is not None):
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
        # (not again for the text the list shows: that would drop a highlight set with it)
        if self.legal and event.value != self.filtered:
            self.fill_actions(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter answers '?' and '? NAME'; else plays the highlighted entry (with an empty
        entry, or picked with the arrow keys); else the typed action, in any form line mode
        takes, read as line mode reads it (a number is one the list shows, or an argument
        shown as that number); else the one action the typed text, unless a bare number,
        leaves in the list."""
        if not self.legal:
            return
        text = event.value.strip()
        if _is_help(text):
            self.help(text)
            return
        opts = self.query_one("#actions", OptionList)
        if opts.highlighted is not None and (self.picked or not text):
            self.choose(opts.get_option_at_index(opts.highlighted))
            return
        try:
            k = self.session.resolve(text, self.menu)
        except InputError as err:
            # a bare number means what it means in line mode, never the one action whose
            # words it is part of ('5' is no lobby(500), '25' no lobby(2500))
            only = None if _is_number(text) else self.only_option()
            kind = (only.id or "").partition(":")[0] if only is not None else ""
            # a summarised group fills the entry with its name: only when that loses nothing
            if only is not None and (kind == "action" or len(_words(text).split()) == 1):
                self.choose(only)
            else:
                self.notify(str(err), severity="warning")
            return
        self.play(k)

    def help(self, text: str) -> None:
        """'?': the help (TUI_HELP) over the table. '? NAME': every option of that legal
        action in the list, with its number in line mode's menu if it has one (a summarised
        group's options have none), the first one highlighted."""
        words = text.split(None, 1)
        if len(words) == 1:
            self.query_one("#entry", Input).value = ""
            self.push_screen(HelpScreen())
            return
        want = words[1].strip().lower()
        groups = [g for g in self.groups if g.name.lower() == want]
        if not groups:
            self.notify(f"no legal action named {want!r}", severity="warning")
            return
        self.unfolded.update(g.name for g in groups)
        entry = self.query_one("#entry", Input)
        entry.value = ""  # lists every action again, these option by option
        self.fill_actions("")
        opts = self.query_one("#actions", OptionList)
        opts.highlighted = opts.get_option_index(f"action:{groups[0].indexes[0]}")
        self.picked = True
        count = sum(len(g.indexes) for g in groups)
        first = groups[0]
        typed = ("type its number" if first.indexes[0] in self.numbers
                 else f"type it ({first.name} {' '.join(first.args[0])})")
        self.notify(f"{first.name}: {count} option{'s' if count != 1 else ''} listed; "
                    f"Enter plays the highlighted one, or {typed}")

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
