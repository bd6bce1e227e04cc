"""The Textual table, driven headless with Textual's pilot."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from textual.widgets import OptionList, Static

from rulelang.play import Session
from rulelang.tui import HandOff, TableApp

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
            await pilot.press("down", "enter")  # pick from the list
            await pilot.pause()
            assert "buy(Luxor)" in session.state.history
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
