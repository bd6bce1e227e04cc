"""Full-screen terminal table (Textual, the `tui` extra): `rulelang play FILE --tui`.

The screen shows the view of the person to move (board, tables, own hand), the log naming each
seat, and the legal actions as a list filtered by what is typed. Typing a full action (or
`bid 250`) plays it; picking a summarised group ("bid 1..1000") puts its name in the entry so
only the amount remains to type. Forced moves are applied with a notice, undo works against
bots, ctrl+s saves a record to resume with `--resume`, and between two people a hand-off screen
hides everything until the next one is ready.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Group as RichGroup
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from rulelang.play import LIST_LIMIT, InputError, Session, group_actions, resolve, rich_view
from rulelang.viewmodel import seat_name


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
    #view { width: 3fr; }
    #side { width: 2fr; }
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

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        with Horizontal(id="main"):
            with VerticalScroll(id="view"):
                yield Static(id="board")
            with Vertical(id="side"):
                with VerticalScroll(id="log"):
                    yield Static(id="logtext")
                yield OptionList(id="actions")
        yield Input(placeholder="type an action, a number, or filter the list", id="entry")
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

    def blank(self) -> None:
        self.query_one("#board", Static).update("")
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
        self.query_one("#board", Static).update(RichGroup(*rich_view(s.view(p))))
        self.legal = s.state.legal_actions()
        entry = self.query_one("#entry", Input)
        entry.value = ""
        self.fill_actions("")
        entry.focus()

    def fill_actions(self, text: str) -> None:
        opts = self.query_one("#actions", OptionList)
        opts.clear_options()
        want = text.strip().lower()
        for g in group_actions(self.legal, self.session.labels, self.session.display):
            head = g.name + (f" ({', '.join(g.labels)})" if g.labels else "")
            if len(g.indexes) > LIST_LIMIT:
                if not want or g.name.startswith(want.split()[0]):
                    opts.add_option(Option(f"{head}: {len(g.indexes)} choices, type "
                                           f"'{g.name} ...'", id=f"group:{g.name}"))
                continue
            for k, args in zip(g.indexes, g.shown):
                label = f"{k + 1}. {g.name} {' '.join(args)}".rstrip()
                if not want or want in label.lower():
                    opts.add_option(Option(label, id=f"action:{k}"))

    def show_end(self) -> None:
        s = self.session
        humans = s.humans()
        self.query_one("#status", Static).update(Text("game over: ctrl+q to leave",
                                                      style="bold"))
        results = [Text(line) for line in s.result_lines()]
        if len(humans) == 1:
            p = humans[0]
            self.query_one("#board", Static).update(
                RichGroup(*rich_view(s.view(p)), Text(""), *results))
            self.write_log(s.log_lines(p, self.seen[p]))
        else:
            # hot seat (or bots only): nobody's own view stays on screen, only the result
            self.query_one("#board", Static).update(RichGroup(*results))
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
        if not self.legal:
            return
        text = event.value.strip()
        opts = self.query_one("#actions", OptionList)
        if not text and opts.highlighted is not None:
            self.choose(opts.get_option_at_index(opts.highlighted))
            return
        try:
            k = resolve(text, self.legal, self.session.aliases)
        except InputError as err:
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
        if self.session.can_undo():
            self.session.undo()
            p = self.session.state.current_player
            self.seen[p] = min(self.seen[p], len(self.session.log))
            self.showing = None
            self.turn()
            self.notify("undone")
        else:
            self.notify("undo works only against bots, after a move of yours",
                        severity="warning")

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
