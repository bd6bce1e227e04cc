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


def drive(app: TableApp, body, size: tuple[int, int] = (160, 50)) -> None:
    """Run the table headless at `size` (columns, rows): let it settle, `await body(app,
    pilot)`, quit."""
    async def go():
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await body(app, pilot)
            await pilot.press("ctrl+q")
    asyncio.run(go())


def test_tui_plays_typed_and_listed_actions_and_undoes(tmp_path):
    session = Session(ACQUIRE, ["human", "random", "random"], seed=7)

    async def body(app, pilot):
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
    drive(TableApp(session, str(tmp_path / "save.json")), body)


def test_tui_hot_seat_hands_off_before_showing_the_next_player():
    session = Session(POLA, ["human", "human", "random"], seed=5)

    async def body(app, pilot):
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
    drive(TableApp(session), body)


PODER = str(ROOT / "rules" / "poder.rules")


async def type_text(pilot, text: str) -> None:
    for key in text:
        await pilot.press("space" if key == " " else key)
    await pilot.pause()


def screen_text(app: TableApp) -> str:
    """The characters on the terminal screen, line by line."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def test_tui_enter_plays_the_one_filtered_or_the_highlighted_action():
    session = Session(PODER, ["human", "greedy", "random"], seed=4)

    async def body(app, pilot):
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
    drive(TableApp(session), body)


def test_tui_writes_actions_with_the_parameter_labels():
    session = Session(PODER, ["human", "greedy", "random"], seed=4)

    async def body(app, pilot):
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
    drive(TableApp(session), body)


def test_tui_shows_the_whole_board_at_80_columns():
    session = Session(ACQUIRE, ["human", "random", "random"], seed=3)

    async def body(app, pilot):
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
    drive(TableApp(session), body, size=(80, 24))


def highlighted(app: TableApp) -> str | None:
    ol = app.query_one("#actions", OptionList)
    return None if ol.highlighted is None else str(ol.get_option_at_index(ol.highlighted).prompt)


def notices(app: TableApp) -> list[str]:
    return [n.message for n in app._notifications]


def test_tui_highlights_the_first_action_and_enter_plays_it():
    session = Session(ACQUIRE, ["human", "random", "random"], seed=7)

    async def body(app, pilot):
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
    drive(TableApp(session), body)


def test_tui_question_mark_shows_the_help_and_lists_a_groups_options():
    session = Session(POLA, ["human", "human", "random"], seed=5)

    async def body(app, pilot):
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
        # '? NAME': every option of that action in the list; as in line mode, a summarised
        # group's options have no number
        await type_text(pilot, "? lobby")
        assert options(app) == listed
        await pilot.press("enter")
        await pilot.pause()
        assert options(app)[:2] == ["lobby(100)", "lobby(200)"]
        assert len(options(app)) == 30 and options(app)[-1] == "lobby(3000)"
        assert highlighted(app) == "lobby(100)"
        assert notices(app)[-1] == ("lobby: 30 options listed; Enter plays the highlighted "
                                    "one, or type it (lobby 100)")
        await type_text(pilot, "? nosuch")
        await pilot.press("enter")
        await pilot.pause()
        assert notices(app)[-1] == "no legal action named 'nosuch'"
        assert not any("is not legal now" in n for n in notices(app))
        for _ in "? nosuch":
            await pilot.press("backspace")
        # a bare number is not the one option whose words it is part of: line mode's refusal
        await type_text(pilot, "25")
        assert options(app) == ["lobby(2500)"]
        await pilot.press("enter")
        await pilot.pause()
        assert notices(app)[-1] == "'25' is not legal now: lobby takes 100..3000 step 100"
        assert len(session.state.history) == 3
        await type_text(pilot, "00")  # the amount, as the list shows it
        await pilot.press("enter")
        await pilot.pause()
        assert session.state.history[-1] == "lobby(2500)"
    drive(TableApp(session), body)


AUTOMOBILE = str(ROOT / "rules" / "automobile.rules")


@pytest.mark.parametrize("width", [120, 100])
def test_tui_view_tables_keep_every_word_whole_at_120_and_100_columns(width):
    session = Session(AUTOMOBILE, ["human", "greedy", "greedy"], seed=5,
                      params={"turns": 2})

    async def body(app, pilot):
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
    drive(TableApp(session), body, size=(width, 40))


POWERGRID = str(ROOT / "rules" / "powergrid.rules")


async def answer(pilot, text: str) -> None:
    """Type `text` in an empty entry and press Enter."""
    await type_text(pilot, text)
    await pilot.press("enter")
    await pilot.pause()


async def clear(pilot, app: TableApp) -> None:
    for _ in app.query_one("#entry").value:
        await pilot.press("backspace")
    await pilot.pause()


def test_tui_a_bare_number_is_never_an_option_the_list_does_not_number():
    # Pola Naftowe's lobby is one summarised entry, numbered nothing: `5` bid a sealed
    # lobby(500) nobody could see (the fifth legal action); now line mode's message
    session = Session(POLA, ["human", "human", "random"], seed=5)

    async def body(app, pilot):
        for number in ("5", "30"):
            await answer(pilot, number)
            assert notices(app)[-1] == (f"'{number}' is not legal now: lobby takes "
                                        "100..3000 step 100")
            await clear(pilot, app)
        assert len(session.state.history) == 3  # nothing played
        await answer(pilot, "500")  # the amount itself
        assert session.state.history[3] == "lobby(500)"
    drive(TableApp(session), body)


def test_tui_numbers_the_list_as_line_mode_does_and_a_number_plays_the_one_shown():
    # Power Grid, seed 1: P1 answers P0's bid of 34. The bids are one summarised entry, so
    # pass_bid is numbered 1 as in line mode (it was 17, and `1` played bid(35))
    session = Session(POWERGRID, ["random", "human", "random"], seed=1)

    async def body(app, pilot):
        assert options(app) == ["bid (amount)  35..50   (type e.g.: bid 35)",
                                "1. pass_bid()"]
        await answer(pilot, "6")
        assert notices(app)[-1] == "no action numbered 6 (only 1); bid takes 35..50"
        await clear(pilot, app)
        # '? bid' unfolds the bids, numbered nothing; pass_bid keeps its number
        await answer(pilot, "? bid")
        assert options(app)[:2] == ["bid(35)", "bid(36)"]
        assert options(app)[-1] == "1. pass_bid()" and len(options(app)) == 17
        assert session.state.history[-1] == "bid(34)"
        await answer(pilot, "1")
        history = session.state.history
        assert history[history.index("bid(34)") + 1] == "pass_bid()"
    drive(TableApp(session), body)


# Pola Naftowe, seed 11, two greedy bots: after P0's lobby of 1200 wins, P0 names the player
# exempt from the event
POLA_11 = dict(seed=11, params={"rounds": 2})


def test_tui_a_player_is_shown_and_typed_by_his_seat_name():
    session = Session(POLA, ["human", "greedy", "greedy"], **POLA_11)

    async def body(app, pilot):
        await answer(pilot, "lobby 1200")
        assert options(app) == ["1. exempt_player(P0)", "2. exempt_player(P1)",
                                "3. exempt_player(P2)", "4. exempt_nobody()"]
        await answer(pilot, "exempt_player P7")
        assert notices(app)[-1] == ("'exempt_player P7' is not legal now: exempt_player "
                                    "takes P0, P1, P2")
        await clear(pilot, app)
        await answer(pilot, "exempt_player P0")
        assert "exempt_player(0)" in session.state.history  # the engine's action string
        assert "P0 (you): exempt_player(P0)" in log_text(app)
    drive(TableApp(session), body)


@pytest.mark.parametrize("typed, action", [
    ("p2", "exempt_player(2)"), ("2", "exempt_player(1)"), ("4", "exempt_nobody()")])
def test_tui_a_seat_name_or_a_number_in_the_list_plays_that_action(typed, action):
    session = Session(POLA, ["human", "greedy", "greedy"], **POLA_11)

    async def body(app, pilot):
        await answer(pilot, "lobby 1200")
        at = len(session.state.history)
        await answer(pilot, typed)
        assert session.state.history[at] == action
    drive(TableApp(session), body)
