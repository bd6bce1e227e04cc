"""What a person types in line mode: only the numbers on screen are menu numbers, players by
their seat names, names without leading zeros, and messages that quote the answer as typed
(player audit 2: P1, P8, P11)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rulelang.cli import cli
from rulelang.play import InputError, Session, group_actions, menu_lines, menu_numbers, resolve

ROOT = Path(__file__).resolve().parent.parent
POLA = str(ROOT / "rules" / "polanaftowe.rules")
POWERGRID = str(ROOT / "rules" / "powergrid.rules")
# Pola Naftowe, seed 11, two greedy bots: P0 lobbies first (the menu has one summarised group,
# so no numbers at all); a bid of 1200 wins, and P0 then names the player exempt from the event
POLA_11 = ["play", POLA, "--players", "human,greedy,greedy", "--seed", "11", "-D", "rounds=2"]


def run(args: list[str], input: str, tmp_path: Path) -> tuple[object, list[str]]:
    """The result of `rulelang play ARGS --record FILE`, and the record's actions."""
    record = tmp_path / "game.json"
    res = CliRunner().invoke(cli, [*args, "--record", str(record)], input=input)
    return res, json.loads(record.read_text())["actions"]


# ---------------------------------------------------------------------------------- numbers


def test_a_bare_number_in_a_menu_without_numbers_is_never_a_hidden_option(tmp_path):
    # `5` used to play the fifth option nobody could see, a sealed lobby(500) that undo could
    # not take back; `30` lobby(3000)
    res, actions = run(POLA_11, "5\n30\n()\nlobby 1200\nq\n", tmp_path)
    assert "  lobby (amount)  100..3000 step 100   (type e.g.: lobby 100)\nP0> " in res.stdout
    assert res.stderr.splitlines() == [
        "'5' is not legal now: lobby takes 100..3000 step 100",
        "'30' is not legal now: lobby takes 100..3000 step 100",
        "'()' is not legal now; type ? for help",  # (it was an IndexError)
        "game abandoned"]
    assert actions[3] == "lobby(1200)"


def test_only_the_options_on_screen_are_numbered_from_1(tmp_path):
    # Power Grid, seed 1: P1 answers P0's bid of 34. The bids are summarised, so pass_bid is
    # 1 (it was 17, with nothing numbered 1-16), and `6` was bid(40), the sixth hidden option.
    args = ["play", POWERGRID, "--players", "random,human,random", "--seed", "1"]
    res, actions = run(args, "6\n? bid\n41\nq\n", tmp_path)
    assert ("  bid (amount)  35..50   (type e.g.: bid 35)\n"
            "  pass_bid      1)\n") in res.stdout
    assert res.stderr.splitlines()[0] == "no action numbered 6 (only 1); bid takes 35..50"
    # `? bid` lists them without numbers: a number typed is only ever one the menu shows
    assert "P1> bid(35)  bid(36)  bid(37)  bid(38)" in res.stdout
    assert "1: bid(35)" not in res.stdout
    assert actions[actions.index("bid(34)") + 1] == "bid(41)"


def test_a_bare_number_is_the_amount_of_the_one_summarised_group(tmp_path):
    # Power Grid, Central Europe, seed 3: P0 opens P04, and `6` is bid(6). It was refused:
    # "'6' could be action 6, bid(9), or bid(6)", action 6 being a number nobody could see.
    args = ["play", POWERGRID, "--variant", "central_europe", "--players",
            "human,random,random", "--seed", "3"]
    res, actions = run(args, "purple\npurple\nbrown\nyellow\nopen p4\n6\nq\n", tmp_path)
    # the answer as typed, not the member it was read as ('CePurple')
    assert res.stderr.splitlines()[0] == "'purple' is not legal now; type ? for help"
    assert "  bid (amount)  4..50   (type e.g.: bid 4)\nP0> " in res.stdout
    # `open p4` is the plant P04 (it was refused)
    i = actions.index("pick_area(CeYellow)")
    assert actions[i + 1:i + 3] == ["open(P04)", "bid(6)"]


LISTED = [f"bid({n})" for n in range(4, 9)] + ["pass_bid()"]
SUMMARISED = [f"bid({n})" for n in range(4, 51)] + ["pass_bid()"]


def numbered(legal: list[str]) -> list[int]:
    return menu_numbers(group_actions(legal, {"bid": ["amount"], "pass_bid": []}))


@pytest.mark.parametrize("legal, answer, message", [
    # both readings are on screen: `5) 8` and the listed bid of 5
    (LISTED, "5", "'5' could be bid(8) (number 5 in the menu) or bid(5): type the action's "
                  "name too"),
    (SUMMARISED, "60", "no action numbered 60 (only 1); bid takes 4..50"),
    (SUMMARISED[:-1], "3", "'3' is not legal now: bid takes 4..50"),
])
def test_a_number_is_read_only_as_the_menu_shows_it(legal, answer, message):
    with pytest.raises(InputError) as err:
        resolve(answer, legal, numbered=numbered(legal))
    assert str(err.value) == message


def test_summarised_options_have_no_number():
    assert numbered(SUMMARISED) == [47]
    assert menu_lines(SUMMARISED, {"bid": ["amount"], "pass_bid": []}) == [
        "  bid (amount)  4..50   (type e.g.: bid 4)",
        "  pass_bid      1)"]
    assert SUMMARISED[resolve("1", SUMMARISED, numbered=numbered(SUMMARISED))] == "pass_bid()"
    assert SUMMARISED[resolve("6", SUMMARISED, numbered=numbered(SUMMARISED))] == "bid(6)"


# ---------------------------------------------------------------------------------- players


def test_players_are_shown_and_typed_by_their_seat_names(tmp_path):
    res, actions = run(POLA_11, "lobby 1200\n? exempt_player\nexempt_player P7\n"
                                "exempt_player P0\nq\n", tmp_path)
    assert ("  exempt_player (player)  1) P0   2) P1   3) P2\n"
            "  exempt_nobody           4)\n") in res.stdout
    assert ("P0> 1: exempt_player(0) [P0]  2: exempt_player(1) [P1]  3: exempt_player(2) "
            "[P2]\n") in res.stdout
    assert res.stderr.splitlines()[0] == (
        "'exempt_player P7' is not legal now: exempt_player takes P0, P1, P2")
    assert "P0 (you): exempt_player(P0)" in res.stdout  # the log names the seat too
    assert "exempt_player(0)" in actions  # the action string stays the engine's


@pytest.mark.parametrize("answer, action", [
    ("exempt_player p0", "exempt_player(0)"), ("P2", "exempt_player(2)"),
    # menu number 2; no longer also read as player 2, which nobody sees as "2"
    ("2", "exempt_player(1)"),
])
def test_a_player_is_typed_by_his_seat_name(tmp_path, answer, action):
    res, actions = run(POLA_11, f"lobby 1200\n{answer}\nq\n", tmp_path)
    assert res.stderr.splitlines() == ["game abandoned"]
    assert actions[10] == action


# ---------------------------------------------------------------------------------- leaving


def test_leaving_says_where_the_record_is_written():
    from rich.console import Console

    from rulelang.play import plain_game

    out = io.StringIO()
    s = Session(POLA, ["human", "greedy", "greedy"], seed=11, params={"rounds": 2})
    assert plain_game(s, Console(file=out, width=100), lambda _prompt: "q",
                      record="pola.json") is False
    assert out.getvalue().splitlines()[-1] == (
        "the record of the game so far is written to pola.json")
