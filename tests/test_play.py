"""Playing at the terminal in line mode: input forms, end of input, forced moves, the log,
hot-seat secrecy, undo and resume."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rulelang.cli import cli
from rulelang.play import InputError, Session, menu_lines, resolve

ROOT = Path(__file__).resolve().parent.parent
ACQUIRE = str(ROOT / "rules" / "acquire.rules")
PODER = str(ROOT / "rules" / "poder.rules")
POLA = str(ROOT / "rules" / "polanaftowe.rules")

TINY = """\
game Tiny
players 2..2
state {
  n: int = 0
}
flow {
  for p in players {
    choose p {
      go(k: int in 1..2) {
        n += k
      }
    }
  }
  choose players[0] {
    only() {
      n += 10
    }
  }
}
score p => n
"""


def run(args: list[str], input: str) -> object:
    return CliRunner().invoke(cli, args, input=input)


# ---------------------------------------------------------------------------------- input


LEGAL = ["place(4D)", "place(12A)", "pass_place()", "dispose(2, 4)", "dispose(0, 4)",
         "buy(Luxor)"]


@pytest.mark.parametrize("answer, index", [
    ("1", 0), ("place(4D)", 0), ("place 4d", 0), ("PLACE(4D)", 0), ("Place 12A", 1),
    ("4d", 0), ("pass", 2), ("pass_place", 2), ("dispose 2 4", 3), ("dispose(0,4)", 4),
    ("buy luxor", 5), ("buy", 5), ("luxor", 5),
    # just the argument that varies: dispose's trade is 4 in both, so 0 is dispose(0, 4)
    ("0", 4),
])
def test_loose_answers_resolve_to_the_unique_action(answer, index):
    assert resolve(answer, LEGAL) == index


@pytest.mark.parametrize("answer, message", [
    ("7", "no action numbered 7 (1-6)"),
    ("place", "place needs its parameters (2 choices)"),
    ("place 5c", "'place 5c' is not legal now"),
    ("p", "'p' could be pass_place, place"),
    ("bogus", "'bogus' is not legal now"),
    ("", "empty answer"),
    ("²", "'²' is not legal now"),
    ("9" * 40, "no action numbered 999999999999... (1-6)"),
])
def test_answers_that_match_no_single_action_say_why(answer, message):
    with pytest.raises(InputError) as err:
        resolve(answer, LEGAL)
    assert message in str(err.value)


BIDS = [f"bid(P13, {n})" for n in range(3, 51)] + ["pass_bid()"]


@pytest.mark.parametrize("answer, message", [
    # numbered by their places (as the full-screen table numbers them), bid(P13, 32) is 30 and
    # pass_bid() 49; a bid of 30 or 49 is as likely meant
    ("30", "'30' could be bid(P13, 32) (number 30 in the menu) or bid(P13, 30): type the "
           "action's name too"),
    ("49", "'49' could be pass_bid() (number 49 in the menu) or bid(P13, 49): type the "
           "action's name too"),
    ("bid 51", "'bid 51' is not legal now: bid takes 3..50"),
    ("bid 2", "'bid 2' is not legal now: bid takes 3..50"),
])
def test_a_number_that_could_mean_two_actions_is_refused(answer, message):
    with pytest.raises(InputError) as err:
        resolve(answer, BIDS)
    assert str(err.value) == message
    assert BIDS[resolve("bid 30", BIDS)] == "bid(P13, 30)"


def test_an_amount_beyond_the_menu_numbers_is_the_amount():
    legal = ["bid(P13, 45)", "bid(P13, 46)", "pass_bid()"]
    assert resolve("46", legal) == 1


def test_too_few_arguments_name_the_actions_they_could_be():
    legal = ["dispose(0, 0)", "dispose(0, 2)", "dispose(1, 0)"]
    with pytest.raises(InputError) as err:
        resolve("dispose 0", legal)
    assert str(err.value) == ("'dispose 0' could be dispose(0, 0), dispose(0, 2): "
                              "give every parameter")


def test_menu_summarises_a_long_int_range_once():
    legal = [f"bid({n})" for n in range(1, 1001)] + ["no_bid()"]
    lines = menu_lines(legal, {"bid": ["millions"], "no_bid": []})
    assert lines == ["  bid (millions)  1..1000   (type e.g.: bid 1)",
                     "  no_bid          1)"]


def test_menu_names_parameters_and_numbers_short_groups():
    legal = ["pay(0, false)", "pay(1, false)", "pay(1, true)"]
    lines = menu_lines(legal, {"pay": ["UEP to sell", "with a bond"]})
    assert lines == ["  pay (UEP to sell, with a bond)  1) 0 false   2) 1 false   3) 1 true"]


# ---------------------------------------------------------------------------------- line mode


def test_end_of_input_ends_the_game_cleanly(tmp_path):
    record = tmp_path / "game.json"
    res = run(["play", ACQUIRE, "--players", "human,random,random", "--seed", "7",
               "--record", str(record)], input="")
    assert res.exit_code == 1
    assert "end of input while waiting for P0's move; game abandoned" in res.stderr
    rec = json.loads(record.read_text())
    assert rec["scores"] is None and len(rec["actions"]) == len(rec["digests"]) > 0


def test_a_person_at_a_terminal_may_mistype_as_often_as_he_likes():
    from rich.console import Console

    from rulelang.play import plain_game

    answers = iter(["0"] * 25 + ["q"])
    s = Session(ACQUIRE, ["human", "random", "random"], seed=7)
    console = Console(file=io.StringIO(), width=100)
    assert plain_game(s, console, lambda _prompt: next(answers), max_invalid=None) is False
    assert next(answers, None) is None  # all 25 were read, then q


def test_piped_invalid_answers_stop_after_ten():
    # `yes 0 | rulelang play ...` used to loop for ever
    res = run(["play", ACQUIRE, "--players", "human,random,random", "--seed", "7"],
              input="0\n" * 5000)
    assert res.exit_code == 1
    assert res.stderr.count("no action numbered 0") == 10
    assert "10 invalid answers in a row; game abandoned" in res.stderr


def test_screen_shows_board_tables_hand_bot_moves_and_menu():
    res = run(["play", ACQUIRE, "--players", "human,random,random", "--seed", "7"], input="q\n")
    assert res.exit_code == 1
    out = res.stdout
    # seed 7: P1 founds Luxor and buys three shares before P0's first turn
    assert "P1 (random): place(4E), found(Luxor), buy(Luxor), buy(Luxor), buy(Luxor)" in out
    assert "Your hand: 1B, 7B, 4D, 5F, 7F, 7H" in out
    assert "place (tile)  1) 1B   2) 7B   3) 4D   4) 5F   5) 7F   6) 7H" in out
    assert "E  .   .   .  Lux Lux" in out  # the board, Luxor on 4E and 5E
    assert '"chain_of"' not in out  # no raw observation dump
    assert len(out.splitlines()) < 50


def test_help_lists_commands_and_actions():
    res = run(["play", ACQUIRE, "--players", "human,random,random", "--seed", "7"],
              input="?\n? place\nq\n")
    assert "? NAME     every option of one action" in res.stdout
    assert "1: place(1B)  2: place(7B)  3: place(4D)" in res.stdout


def test_forced_moves_are_applied_with_a_notice(tmp_path):
    path = tmp_path / "tiny.rules"
    path.write_text(TINY)
    record = tmp_path / "tiny.json"
    res = run(["play", str(path), "--players", "human,random", "--seed", "1",
               "--record", str(record)], input="go 2\n")
    assert res.exit_code == 0, res.stderr
    assert "P0 (you): only()  (only legal move)" in res.stdout
    rec = json.loads(record.read_text())
    assert rec["actions"][0] == "go(2)" and rec["actions"][2] == "only()"
    assert rec["scores"] == [10 + 2 + int(rec["actions"][1][3]), ] * 2


def test_hot_seat_hides_the_previous_players_secret_move():
    # Pola Naftowe's lobbying bids are sealed: P1 must not see P0's 2500.
    res = run(["play", POLA, "--players", "human,human,random", "--seed", "5"],
              input="lobby 2500\n\nq\n")
    out = res.stdout
    before, handoff, after = out.partition("hand over to P1")
    assert handoff and "2500" not in after
    assert "P0: ?" in after
    assert "Your move, P1:" in after


def test_undo_against_bots_takes_back_the_whole_turn():
    s = Session(ACQUIRE, ["human", "random", "random"], seed=7)
    s.advance()
    before = s.state.digest()
    s.play(0, 0)
    assert s.state.digest() != before
    s.undo()
    assert s.state.digest() == before
    assert len(s.log) == len(s.digests)


def test_a_holder_disposing_in_a_merger_sees_which_chains_merge():
    # Acquire, seed 0, P0 always taking the first action: his first dispose is of Luxor's
    # shares, with Continental surviving (the prompt named neither).
    s = Session(ACQUIRE, ["human", "random", "random"], seed=0)
    s.advance()
    while not s.state.legal_actions()[0].startswith("dispose("):
        s.play(0, 0)
    shows = {i["label"]: i["text"] for i in s.view(0)["items"] if i["kind"] == "show"}
    assert shows["Merger: defunct chain"] == "Luxor"
    assert shows["Merger: surviving chain"] == "Continental"


def test_undo_replays_the_bots_answers_the_same_way():
    """The bots' own random numbers are restored with the state: the same move played again
    gets the same answers (they answered bid(30) with 35 and 36, then with 32 and 35 after an
    undo, so undoing could fish for a weaker reply)."""
    s = Session(str(ROOT / "rules" / "powergrid.rules"), ["human", "mcts@30", "mcts@30"],
                seed=0, backend="compiled")
    s.advance()
    k = s.state.legal_actions().index("bid(30)")
    s.play(0, k)
    answered = s.log_lines(None)[-3:]
    assert answered == ["P0: bid(30)", "P1 (mcts@30): bid(35)", "P2 (mcts@30): bid(36)"]
    digest = s.state.digest()
    assert s.undo_refusal() is None
    s.undo()
    s.play(0, k)
    assert s.log_lines(None)[-3:] == answered and s.state.digest() == digest


def test_undo_stops_at_a_secret_move_of_a_bot():
    # Pola Naftowe, seed 2: P0 bids 100, the bots' sealed bids follow and are revealed before
    # P0 moves again. Taking the bid back would let P0 bid again knowing theirs (1200, 2700).
    s = Session(POLA, ["human", "random", "random"], seed=2)
    s.advance()
    s.play(0, s.state.legal_actions().index("lobby(100)"))
    before = s.state.digest()
    assert s.undo_refusal() == "cannot undo: P1 (random) has made a secret move since yours"
    assert not s.can_undo() and s.state.digest() == before


def test_undo_stops_at_a_reveal_of_secret_moves_made_before():
    # The bots bid first; P2's bid is the last, and the reveal that follows it shows theirs.
    s = Session(POLA, ["random", "random", "human"], seed=2)
    s.advance()
    assert s.state.history_for(2)[-2:] == ["?", "?"]
    s.play(2, 0)
    assert s.undo_refusal() == "cannot undo: secret moves have been revealed since your move"


def test_undo_stops_at_a_chance_draw():
    # Acquire, seed 7: P0 places, buys nothing, and draws his next tile.
    s = Session(ACQUIRE, ["human", "random", "random"], seed=7)
    s.advance()
    s.play(0, 0)
    assert s.can_undo()  # the buy decision follows in the same turn: nothing drawn yet
    s.play(0, s.state.legal_actions().index("end_buy()"))
    assert s.undo_refusal() == "cannot undo: there has been a chance draw since your move"


def test_a_secret_move_shown_as_hidden_is_shown_again_when_revealed():
    # Poder, seed 4: P2's sealed tender bid is "?" on P0's screen, and its reveal is shown
    # on the next one (the log after it used to keep it "?"; only `log` showed it). (The bid
    # was 220 until the greedy bot's samples began by replaying the hidden deals: bots.py.)
    res = run(["play", PODER, "--players", "human,greedy,random", "--seed", "4"],
              input="1\n" * 3 + "bid 1\nq\n")
    hidden, _, after = res.stdout.partition("P2 (random): ?")
    assert "revealed: P2 (random): bid(966)" in after


def test_replay_step_shows_a_secret_move_when_it_is_revealed(tmp_path):
    record = tmp_path / "poder.json"
    run(["play", PODER, "--players", "human,greedy,random", "--seed", "4",
         "--record", str(record)], input="1\n" * 3 + "bid 1\nq\n")
    out = run(["replay", PODER, str(record), "--step", "--seat", "0"], input="").stdout
    hidden, _, after = out.partition("step 30: P2: ?")
    assert "revealed: step 30: P2: bid(966)" in after


def test_resume_continues_a_recorded_game(tmp_path):
    record = tmp_path / "game.json"
    run(["play", PODER, "--players", "human,random,random", "--seed", "3",
         "--record", str(record)], input="1\n")
    rec = json.loads(record.read_text())
    s = Session.resume(PODER, rec, ["human", "random", "random"], seed=4)
    assert s.state.history == rec["actions"]
    assert s.digests == rec["digests"]


def test_replay_steps_through_a_record_for_a_seat_or_the_full_state(tmp_path):
    record = tmp_path / "pola.json"
    res = run(["play", POLA, "--players", "random,random,random", "--seed", "3",
               "--record", str(record)], input="")
    assert res.exit_code == 0, res.stderr
    rec = json.loads(record.read_text())
    assert rec["actions"][3].startswith("lobby(")  # P0's sealed bid
    seat1 = run(["replay", POLA, str(record), "--step", "--seat", "1", "--from", "3"], input="")
    assert seat1.exit_code == 0, seat1.stderr
    assert "step 3: P0: ?" in seat1.stdout and "step 2:" not in seat1.stdout
    assert "Your sealed lobbying bid" in seat1.stdout
    full = run(["replay", POLA, str(record), "--step"], input="")
    assert f"step 3: P0: {rec['actions'][3]}" in full.stdout
    assert full.stdout.count("─ step ") == len(rec["actions"])
    assert f"replayed {len(rec['actions'])} actions" in full.stdout
    bad = run(["replay", POLA, str(record), "--step", "--seat", "7"], input="")
    assert bad.exit_code == 2 and "--seat 7" in bad.stderr


DISPLAY_RULES = """game Trip
players 2..2
enum City { Lodz "Łódź", Koln "Köln" }
state { at: City? = none }
flow {
  choose players[0] {
    go(c: City, n: int in 1..2) { at = c }
  }
}
score p => 0
view {
  show "At" => at,
  label go(c: "city", n: "times"),
}
"""


def test_replay_step_shows_actions_as_the_log_does(tmp_path):
    """`replay --step` names an action's members by their display names and its parameters by
    their labels, as the play log does; the record keeps the ASCII action strings."""
    rules = tmp_path / "trip.rules"
    rules.write_text(DISPLAY_RULES, encoding="utf-8")
    record = tmp_path / "trip.json"
    res = run(["play", str(rules), "--players", "random,random", "--seed", "1",
               "--record", str(record)], input="")
    assert res.exit_code == 0, res.stderr
    action = json.loads(record.read_text())["actions"][0]
    shown = {"go(Lodz, 1)": "go(city=Łódź, times=1)", "go(Lodz, 2)": "go(city=Łódź, times=2)",
             "go(Koln, 1)": "go(city=Köln, times=1)", "go(Koln, 2)": "go(city=Köln, times=2)"}
    full = run(["replay", str(rules), str(record), "--step"], input="")
    assert full.exit_code == 0, full.stderr
    assert f"step 0: P0: {shown[action]}" in full.stdout
    assert action not in full.stdout
