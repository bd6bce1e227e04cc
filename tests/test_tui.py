"""The Textual table, driven headless with Textual's pilot."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

from rulelang.play import Session
from rulelang.tui import TUI_HELP, HandOff, HelpScreen, TableApp

ROOT = Path(__file__).resolve().parent.parent
ACQUIRE = str(ROOT / "rules" / "acquire.rules")
POLA = str(ROOT / "rules" / "polanaftowe.rules")


def log_text(app: TableApp) -> str:
    return "\n".join(app.log_shown)


def board_text(app: TableApp) -> str:
    return str(app.query_one("#board", Static).render())


def options(app: TableApp) -> list[str]:
    ol = app.query_one("#actions", OptionList)
    return [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]


def test_tui_plays_typed_and_listed_actions_and_undoes(tmp_path):
    async def go():
        session = Session(ACQUIRE, ["human", "random", "random"], seed=7)
        app = TableApp(session, str(tmp_path / "save.json"))
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            assert options(app) == ["1. place(1B)", "2. place(7B)", "3. place(4D)",
                                    "4. place(5F)", "5. place(7F)", "6. place(7H)"]
            assert "P1 (random): place(4E), found(Luxor)" in log_text(app)
            await pilot.press("4", "d")  # the list filters as one types
            assert options(app) == ["3. place(4D)"]
            await pilot.press("enter")
            await pilot.pause()
            assert session.state.history[-1] == "place(4D)"
            assert options(app) == ["1. buy(Luxor)", "2. end_buy()"]
            await pilot.press("down", "up", "enter")  # pick from the list
            await pilot.pause()
            assert session.state.history[-1] == "buy(Luxor)"
            assert "P0 (you): place(4D)" in log_text(app)
            await pilot.press("ctrl+s")
            saved = json.loads((tmp_path / "save.json").read_text())
            assert saved["actions"] == session.state.history
            before = len(session.state.history)
            await pilot.press("ctrl+z")
            await pilot.pause()
            assert len(session.state.history) < before
            await pilot.press("ctrl+q")
    asyncio.run(go())


def test_tui_hot_seat_hands_off_before_showing_the_next_player():
    async def go():
        session = Session(POLA, ["human", "human", "random"], seed=5)
        app = TableApp(session)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            for key in "lobby 2500":
                await pilot.press("space" if key == " " else key)
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, HandOff)
            # behind the hand-off screen the table is blank: nothing of P0's turn
            assert board_text(app) == "" and log_text(app) == "" and options(app) == []
            await pilot.press("enter")
            await pilot.pause()
            assert not isinstance(app.screen, HandOff)
            assert "to move: P1 (you)" in str(app.query_one("#status", Static).render())
            assert "2500" not in log_text(app) + board_text(app)
            assert "P0: ?" in log_text(app)
            await pilot.press("ctrl+q")
    asyncio.run(go())


PODER = str(ROOT / "rules" / "poder.rules")


async def type_text(pilot, text: str) -> None:
    for key in text:
        await pilot.press("space" if key == " " else key)
    await pilot.pause()


def screen_text(app: TableApp) -> str:
    """The characters on the terminal screen, line by line."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def test_tui_enter_plays_the_one_filtered_or_the_highlighted_action():
    async def go():
        session = Session(PODER, ["human", "greedy", "random"], seed=4)
        app = TableApp(session)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            await type_text(pilot, "buy x01")  # not an action by itself: a filter
            assert len(options(app)) == 1 and "X01D" in options(app)[0]
            await pilot.press("enter")
            await pilot.pause()
            assert session.state.history[-1] == "buy(X01D)"
            assert "P0 (you): buy(X01D)" in log_text(app)
            await pilot.press("ctrl+z")
            await pilot.pause()
            assert "buy(X01D)" not in session.state.history
            await type_text(pilot, "buy(X10D)")  # the exact action, as line mode takes it
            assert len(options(app)) == 1 and "X10D" in options(app)[0]
            await pilot.press("enter")
            await pilot.pause()
            assert session.state.history[-1] == "buy(X10D)"
            await pilot.press("ctrl+z")
            await pilot.pause()
            await type_text(pilot, "tender")  # three entries: the arrow keys pick one
            assert len(options(app)) == 3
            await pilot.press("down", "down", "enter")
            await pilot.pause()
            assert "P0 (you): tender(X06B)" in log_text(app)
            await pilot.press("ctrl+q")
    asyncio.run(go())


def test_tui_writes_actions_with_the_parameter_labels():
    async def go():
        session = Session(PODER, ["human", "greedy", "random"], seed=4)
        app = TableApp(session)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            await type_text(pilot, "1")  # buy(X08A)
            await pilot.press("enter")
            await pilot.pause()
            assert options(app)[:2] == ["1. pay(UEP to sell=0, with a bond=true)",
                                        "2. pay(UEP to sell=1, with a bond=false)"]
            await type_text(pilot, "pay 1 false")  # the filter still takes the plain form
            assert options(app) == ["2. pay(UEP to sell=1, with a bond=false)"]
            await pilot.press("enter")
            await pilot.pause()
            assert "pay(1, false)" in session.state.history
            assert "P0 (you): pay(UEP to sell=1, with a bond=false)" in log_text(app)
            await pilot.press("ctrl+q")
    asyncio.run(go())


def test_tui_shows_the_whole_board_at_80_columns():
    async def go():
        session = Session(ACQUIRE, ["human", "random", "random"], seed=3)
        app = TableApp(session)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            lines = screen_text(app).splitlines()
            header = next(line for line in lines if " 1   2   3" in line)
            assert header.split("│")[0].split() == [str(c) for c in range(1, 13)]
            # every row of the board, A to I, is on the screen with its twelve cells
            rows = [re.split("[│╭╰]", line)[0].split() for line in lines
                    if line[:1] in "ABCDEFGHI" and line[1:3] == "  "]
            assert [r[0] for r in rows] == list("ABCDEFGHI")
            assert [len(r) for r in rows] == [13] * 9
            # and the log and the actions are still beside it
            assert "your actions" in screen_text(app) and "1. place(5B)" in screen_text(app)
            await pilot.press("ctrl+q")
    asyncio.run(go())


def highlighted(app: TableApp) -> str | None:
    ol = app.query_one("#actions", OptionList)
    return None if ol.highlighted is None else str(ol.get_option_at_index(ol.highlighted).prompt)


def notices(app: TableApp) -> list[str]:
    return [n.message for n in app._notifications]


def test_tui_highlights_the_first_action_and_enter_plays_it():
    async def go():
        session = Session(ACQUIRE, ["human", "random", "random"], seed=7)
        app = TableApp(session)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            # as the list appears, its first action is highlighted: what Enter plays
            assert highlighted(app) == "1. place(1B)"
            # typed text that leaves several is no pick; cleared, the first is again
            await type_text(pilot, "7")
            assert options(app) == ["2. place(7B)", "5. place(7F)", "6. place(7H)"]
            assert highlighted(app) is None
            await pilot.press("backspace")
            await pilot.pause()
            assert highlighted(app) == "1. place(1B)"
            await pilot.press("enter")  # an empty entry: Enter plays the highlighted action
            await pilot.pause()
            assert session.state.history[-1] == "place(1B)"
            assert "P0 (you): place(1B)" in log_text(app)
            assert highlighted(app) == options(app)[0]  # the next list too
            await pilot.press("ctrl+q")
    asyncio.run(go())


def test_tui_question_mark_shows_the_help_and_lists_a_groups_options():
    async def go():
        session = Session(POLA, ["human", "human", "random"], seed=5)
        app = TableApp(session)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            listed = options(app)
            assert listed == ["lobby (amount)  100..3000 step 100   (type e.g.: lobby 100)"]
            # '?' filters nothing, and Enter shows the help over the table
            await type_text(pilot, "?")
            assert options(app) == listed
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            assert str(app.screen.query_one("#help", Static).render()) == TUI_HELP
            assert "? NAME" in TUI_HELP
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, HelpScreen)
            assert app.query_one("#entry").value == "" and options(app) == listed
            assert len(session.state.history) == 3  # nothing played
            # '? NAME': every option of that action in the list, numbered as a number plays it
            await type_text(pilot, "? lobby")
            assert options(app) == listed
            await pilot.press("enter")
            await pilot.pause()
            assert options(app)[:2] == ["1. lobby(100)", "2. lobby(200)"]
            assert len(options(app)) == 30 and options(app)[-1] == "30. lobby(3000)"
            assert highlighted(app) == "1. lobby(100)"
            assert notices(app)[-1] == ("lobby: 30 options listed; Enter plays the highlighted "
                                        "one, or type its number")
            await type_text(pilot, "? nosuch")
            await pilot.press("enter")
            await pilot.pause()
            assert notices(app)[-1] == "no legal action named 'nosuch'"
            assert not any("is not legal now" in n for n in notices(app))
            for _ in "? nosuch":
                await pilot.press("backspace")
            await type_text(pilot, "25")  # a number from the list plays that option
            await pilot.press("enter")
            await pilot.pause()
            assert session.state.history[-1] == "lobby(2500)"
            await pilot.press("ctrl+q")
    asyncio.run(go())


AUTOMOBILE = str(ROOT / "rules" / "automobile.rules")


@pytest.mark.parametrize("width", [120, 100])
def test_tui_view_tables_keep_every_word_whole_at_120_and_100_columns(width):
    async def go():
        session = Session(AUTOMOBILE, ["human", "greedy", "greedy"], seed=5,
                          params={"turns": 2})
        app = TableApp(session)
        async with app.run_test(size=(width, 40)) as pilot:
            await pilot.pause()
            await pilot.press("enter")  # pick the first character: the models come out
            await pilot.pause()
            track = next(item for item in app.model["items"]
                         if item.get("title") == "Model track")
            names = [row[0] for row in track["rows"]]
            assert len(names) >= 3
            text = screen_text(app)
            assert "…" not in text, text
            view = [re.split("[│╭╰]", line)[0].split() for line in text.splitlines()]
            # each model's row starts with its whole name, as the actions name it
            firsts = [words[0] for words in view if words]
            assert all(name in firsts for name in names), (names, text)
            if width == 120:  # the whole table fits beside the log and the actions
                assert any(words[:2] == ["class", "cost"] and words[-6:] == [
                    "factories", "parts", "closed", "cars", "bonus", "reduced"]
                    for words in view), text
                side = app.query_one("#side").size.width  # the log and the actions
                assert side == 28, side
            await pilot.press("ctrl+q")
    asyncio.run(go())
