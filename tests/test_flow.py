"""The control-flow constructs of docs/language.md (session 2026-12-01), with exact values on
both back ends: `choose ... else` (section 7.1), `phase ... depth N` (section 3) and standing
options (section 7.2)."""

from __future__ import annotations

import json
import os
from fractions import Fraction

import pytest
from click.testing import CliRunner

import rulelang
from rulelang import exitcodes as X
from rulelang.cli import cli
from tests.conftest import ROOT

FLOW = os.path.join(ROOT, "tests", "fixtures", "flow.rules")


def loop_message(n: int) -> str:
    return f"loop went round more than {n} times without a decision (limit max_loop_steps)"


# ---- choose ... else ----------------------------------------------------------------------------
def test_else_runs_without_a_pause_and_leaves_no_history(backend):
    s = rulelang.load(FLOW, backend=backend).new_game(2)
    # (take_loan(): the standing option, after the decision's own actions)
    assert s.legal_actions() == ["bid(5)", "bid(10)", "bid(15)", "bid(20)", "bid(25)", "hold()",
                                 "take_loan()"]
    s.apply("bid(25)")  # cash 5
    s.apply("hold()")
    # player 0 cannot seal (5 < 10): the else ran, and player 1 is asked at once (standing
    # options are not offered where the decision has no action of its own)
    assert s.current_player == 1
    assert s.legal_actions() == ["seal(1)", "seal(2)", "seal(3)", "take_loan()"]
    assert s.history == ["bid(25)", "hold()"]
    s.apply("seal(2)")
    s.apply("plant(4)")
    # round 2: player 0 has no bid (5 - 10 < 5) and cannot hold (5 <= 20): passes by the else
    assert s.current_player == 1 and s.get_var("auto_passes") == [1, 0]
    assert s.legal_actions() == ["bid(5)", "bid(10)", "bid(15)", "bid(20)", "hold()",
                                 "take_loan()"]
    s.apply("bid(20)")
    assert s.current_player == 1 and s.legal_actions() == ["seal(1)", "take_loan()"]
    s.apply("seal(1)")
    for a in ["plant(7)", "seal(1)", "plant(13)", "ack()", "plant(9)"]:
        s.apply(a)
    # round 3: both pass by the else (player 1: 10 - 15 < 5, 10 <= 20), player 0 seals nothing
    assert s.get_var("auto_passes") == [2, 1]
    assert s.history == ["bid(25)", "hold()", "seal(2)", "plant(4)", "bid(20)", "seal(1)",
                         "plant(7)", "seal(1)", "plant(13)", "ack()", "plant(9)"]
    # the else of a secret decision leaves no entry to hide
    assert s.history_for(0) == ["bid(25)", "hold()", "?", "plant(4)", "bid(20)", "?",
                                "plant(7)", "?", "plant(13)", "ack()", "plant(9)"]
    assert s.history_for(1) == s.history
    for a in ["demand(2)", "demand(3)", "burn(1)", "look()"]:
        s.apply(a)
    assert s.is_terminal()
    assert s.get_var("sealed") == [0, 1]
    assert s.get_var("plants") == [7 + 9, 4 + 13] and s.get_var("demands") == [2, 3]
    assert s.scores() == [5 + 25 + 0 + 2 + 16 + 2, 10 + 20 + 1 + 1 + 17 + 3]


ELSE_ONLY = """game Spin
players 2..2
state { n: int = 0 }
flow {
  while n < 1000 {
    choose players[0] {
      go() when n < 0 { }
    } else {
      n += 1
    }
  }
}
score p => n
"""


def test_a_flow_loop_through_else_counts_against_the_loop_limit(backend):
    """Every round takes the `else`, so no round pauses: the `while` is counted."""
    game = rulelang.load_text(ELSE_ONLY, "spin.rules", backend=backend,
                              limits={"max_loop_steps": 50})
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        game.new_game(2)
    assert (err.value.location, err.value.message) == ("spin.rules:5:3", loop_message(50))
    s = rulelang.load_text(ELSE_ONLY, "spin.rules", backend=backend).new_game(2)
    assert s.is_terminal() and s.scores() == [1000, 1000] and s.history == []


def test_without_else_no_legal_action_is_still_a_fault(backend):
    text = ELSE_ONLY.replace("} else {\n      n += 1\n    }", "}")
    game = rulelang.load_text(text, "spin.rules", backend=backend)
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        game.new_game(2)
    assert err.value.location == "spin.rules:6:5"
    assert "no legal action" in err.value.message


ELSE_PAUSES = """game ElseChain
players 2..2
state {
  n: int = 0
  log: list<int> = []
}
flow {
  for round in 1..3 {
    choose players[0] {
      odd() when round % 2 == 1 { push 1 to log }
    } else {
      chance coin(c: int in 0..1)
      push 10 + c to log
      if c == 1 {
        choose players[1] { ok() { push 100 to log } }
      }
    }
  }
}
score p => len(log)
"""


def test_an_else_block_may_pause(backend):
    s = rulelang.load_text(ELSE_PAUSES, "chain.rules", backend=backend).new_game(2)
    assert s.legal_actions() == ["odd()"]
    s.apply("odd()")
    assert s.current_player == rulelang.CHANCE
    assert json.loads(s.to_json())["locals"] == {"round": 2}
    s.apply("coin(1)")
    assert s.current_player == 1 and s.legal_actions() == ["ok()"]
    s.apply("ok()")
    s.apply("odd()")
    assert s.is_terminal()
    assert s.get_var("log") == [1, 11, 100, 1]
    assert s.history == ["odd()", "coin(1)", "ok()", "odd()"]


# ---- phase ... depth N ---------------------------------------------------------------------------
STEP3_IN_STEP1 = ["bid(25)", "hold()", "seal(2)", "plant(4)", "bid(20)", "seal(1)", "plant(7)",
                  "seal(1)", "plant(13)", "ack()"]


def test_a_reentered_phase_keeps_each_activations_locals(backend):
    """Round 3 draws the Step 3 card (13) in Step 1: start_step2 runs draw_plant again while the
    first draw_plant is still open; the inner one draws for player 0, the outer keeps its own
    `who` (1) and `got` (13)."""
    s = rulelang.load(FLOW, backend=backend).new_game(2)
    for a in STEP3_IN_STEP1:
        s.apply(a)
    j = json.loads(s.to_json())
    assert (j["phase"], s.current_player) == ("draw_plant", rulelang.CHANCE)
    # activation 1's locals are kept as name@1 while activation 2 runs
    assert j["locals"] == {"by": 1, "c": 13, "c@1": 13, "got": 13, "got@1": 13,
                           "who": 0, "who@1": 1}
    assert [a for a, _p in s.chance_outcomes()] == ["plant(13)", "plant(9)"]
    c = s.clone()
    assert c.digest() == s.digest()
    s.apply("plant(9)")
    assert s.phase is None and s.legal_actions() == []
    assert [a for a, _p in s.chance_outcomes()] == ["demand(1)", "demand(2)", "demand(3)"]
    assert s.get_var("plants") == [7 + 9, 4 + 13] and s.get_var("draws") == [4, 7, 9, 13]
    c.apply("plant(13)")  # the second 13: Step 2 already began, no further re-entry
    assert c.phase is None and c.get_var("plants") == [7 + 13, 4 + 13]
    assert c.get_var("draws") == [4, 7, 13, 13] and c.get_var("stage") == 2


def test_set_vars_at_a_pause_inside_a_reentered_phase(backend):
    s = rulelang.load(FLOW, backend=backend).new_game(2)
    for a in STEP3_IN_STEP1:
        s.apply(a)
    s.set_vars({"market": [2, 9, 2]})
    assert s.chance_outcomes() == [("plant(2)", Fraction(2, 3)), ("plant(9)", Fraction(1, 3))]
    s.apply("plant(2)")
    assert s.get_var("market") == [9, 2] and s.get_var("plants") == [7 + 2, 17]


REENTER = """game Reenter
players 2..2
state { n: int = 0 }
phase again(k: int) depth 3 {
  choose players[0] {
    go() { n += k }
  }
  run again(k * 10)
}
flow {
  run again(1)
}
score p => n
"""


def test_a_run_past_the_depth_is_a_fault_there(backend):
    s = rulelang.load_text(REENTER, "reenter.rules", backend=backend).new_game(2)
    s.apply("go()")
    s.apply("go()")
    assert json.loads(s.to_json())["locals"] == {"k": 100, "k@1": 1, "k@2": 10}
    before = s.digest()
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        s.apply("go()")  # activation 3's body ends in a run that would open a fourth
    assert (err.value.location, err.value.message) == (
        "reenter.rules:8:3", "phase 'again' is already open 3 times (its depth)")
    assert s.digest() == before and s.get_var("n") == 11 and s.legal_actions() == ["go()"]


LOOP_REENTER = """game LoopReenter
players 1..2
enum E { A, B, C, D }
state { s: set<E> = {A, B, C, D}
        walked: list<E> = [] }
phase walk() depth 2 {
  for it in s {
    choose players[0] {
      stop() { walked = walked + [it] }
      deeper() { walked = walked + [it]
                 run walk() }
    }
  }
}
flow { run walk() }
score p => len(walked)
"""


def test_a_reentered_phase_keeps_each_activations_loop(backend):
    """A phase run again from inside its own `for` loop: the inner activation walks the set
    from the start with its own iteration state, and the outer loop then goes on from where
    it was (the compiled engine once gave both expansions one iteration slot, so the outer
    loop ended with the inner one)."""
    s = rulelang.load_text(LOOP_REENTER, "loops.rules", backend=backend).new_game(1)
    for a in ["stop()", "deeper()", "stop()", "stop()", "stop()"]:
        s.apply(a)
    j = json.loads(s.to_json())
    assert j["locals"] == {"it": "D", "it@1": "B"}
    assert [pos for _seq, pos in j["loops"]] == [2, 4]
    s.apply("stop()")  # the inner activation ends; the outer loop goes on at C
    j = json.loads(s.to_json())
    assert j["locals"] == {"it": "C"} and [pos for _seq, pos in j["loops"]] == [3]
    for _ in range(2):
        s.apply("stop()")
    assert s.is_terminal()
    assert s.get_var("walked") == ["A", "B", "A", "B", "C", "D", "C", "D"]


# ---- standing options ---------------------------------------------------------------------------
def test_standing_options_are_offered_after_the_decisions_own_and_ask_it_again(backend):
    s = rulelang.load(FLOW, backend=backend).new_game(3)
    s.apply("take_loan()")
    # the same decision again, its legal actions recomputed (cash 45: bids up to 40)
    assert s.current_player == 0 and s.get_var("cash") == [45, 30, 30]
    assert s.legal_actions() == ["bid(5)", "bid(10)", "bid(15)", "bid(20)", "bid(25)", "bid(30)",
                                 "bid(35)", "bid(40)", "hold()", "take_loan()", "repay(1)"]
    s.apply("take_loan()")
    # the `when` bounds it: two loans at most
    assert s.legal_actions()[-3:] == ["hold()", "repay(1)", "repay(2)"]
    s.apply("repay(2)")
    assert s.get_var("cash") == [20, 30, 30] and s.get_var("loans") == [0, 0, 0]
    assert s.legal_actions() == ["bid(5)", "bid(10)", "bid(15)", "take_loan()"]
    s.apply("bid(5)")
    assert s.current_player == 1 and s.get_var("bids") == [5, 0, 0]
    assert s.history == ["take_loan()", "take_loan()", "repay(2)", "bid(5)"]


def test_a_standing_action_at_a_secret_decision_is_public(backend):
    s = rulelang.load(FLOW, backend=backend).new_game(2)
    s.apply("hold()")
    s.apply("hold()")
    assert s.legal_actions() == ["seal(1)", "seal(2)", "seal(3)", "take_loan()"]
    s.apply("take_loan()")
    s.apply("seal(3)")
    assert s.history_for(1) == ["hold()", "hold()", "take_loan()", "?"]
    assert s.history_for(0) == ["hold()", "hold()", "take_loan()", "seal(3)"]
    assert s.observation(1)["history"] == ["hold()", "hold()", "take_loan()", "?"]


def test_illegal_standing_actions_leave_the_state_untouched(backend):
    s = rulelang.load(FLOW, backend=backend).new_game(2)
    s.apply("take_loan()")
    s.apply("take_loan()")
    before = s.digest()
    for bad in ["take_loan()", "repay(3)", "repay()", "take_loan(1)"]:
        with pytest.raises(rulelang.IllegalAction):
            s.apply(bad)
        assert s.digest() == before
    with pytest.raises(rulelang.IllegalAction):
        s.apply_index(len(s.legal_actions()))
    assert s.digest() == before and s.history == ["take_loan()", "take_loan()"]


def test_state_json_and_set_vars_at_a_decision_with_standing_options(backend):
    s = rulelang.load(FLOW, backend=backend).new_game(2)
    s.apply("take_loan()")
    j = json.loads(s.to_json())
    assert j["vars"]["loans"] == [1, 0] and j["vars"]["cash"] == [45, 30]
    # still the first decision: the flow's locals as before the standing action
    assert (j["current_player"], j["locals"]) == (0, {"p": 0})
    assert j["pc"] == json.loads(rulelang.load(FLOW, backend=backend).new_game(2).to_json())["pc"]
    # the variables written back into a fresh game: the same state, the same choices
    t = rulelang.load(FLOW, backend=backend).new_game(2)
    t.set_vars(j["vars"])
    assert t.to_json() == s.to_json() and t.digest() == s.digest()
    assert t.legal_actions() == s.legal_actions()
    # loans at the cap, cash too low to repay: only the decision's own actions remain
    s.set_vars({"loans": [2, 0], "cash": [35, 30]})
    assert s.legal_actions() == ["bid(5)", "bid(10)", "bid(15)", "bid(20)", "bid(25)", "bid(30)",
                                 "hold()", "repay(1)"]
    c = s.clone()
    s.apply("repay(1)")
    assert s.get_var("cash") == [15, 30] and s.get_var("loans") == [1, 0]
    assert s.legal_actions() == ["bid(5)", "bid(10)", "take_loan()"]
    c.apply("hold()")
    assert c.current_player == 1 and c.get_var("loans") == [2, 0]


# ---- reveal of hidden draws ---------------------------------------------------------------------
TO_THE_DEMANDS = ["hold()", "hold()", "seal(1)", "seal(2)", "plant(4)", "hold()", "hold()",
                  "seal(1)", "seal(2)", "plant(7)", "hold()", "hold()", "seal(1)", "seal(2)",
                  "plant(9)"]


def test_reveal_makes_hidden_draws_and_secret_choices_public(backend):
    s = rulelang.load(FLOW, backend=backend).new_game(2)
    for a in TO_THE_DEMANDS:
        s.apply(a)
    for a in ["demand(3)", "demand(1)", "burn(2)"]:
        s.apply(a)
    n = len(TO_THE_DEMANDS)
    # before the reveal: each player sees his own tile, nobody the burnt one
    assert s.history_for(0)[n:] == ["demand(3)", "?", "?"]
    assert s.history_for(1)[n:] == ["?", "demand(1)", "?"]
    assert s.observation(1)["history"][2:4] == ["?", "seal(2)"]
    assert s.legal_actions() == ["look()", "take_loan()"]
    s.apply("look()")
    # `reveal demand, burn, seal`: every draw and sealed bid made so far is public
    for p in (0, 1):
        assert s.history_for(p) == s.history
        assert s.observation(p)["history"] == s.history
    assert s.history[n:] == ["demand(3)", "demand(1)", "burn(2)", "look()"]
    assert s.is_terminal() and s.get_var("demands") == [3, 1]


SECRETS = """game Secrets
players 2..2
state { tile: int[player] private = 0 }
flow {
  chance deal(d: int in 1..3) seen by players[0]
  chance deal2(d2: int in 1..3) seen by players[1]
  chance deal(e: int in 4..5) seen by players[1]
  choose players[0] { go() { } }
  reveal deal
  choose players[1] { go() { } }
}
score p => tile[p]
"""


def test_reveal_of_a_draw_covers_every_chance_of_that_name_and_nothing_else(backend):
    s = rulelang.load_text(SECRETS, "secrets.rules", backend=backend).new_game(2)
    for a in ["deal(2)", "deal2(3)", "deal(5)"]:
        s.apply(a)
    assert s.history_for(0) == ["deal(2)", "?", "?"]
    s.apply("go()")
    assert s.history_for(0) == ["deal(2)", "?", "deal(5)", "go()"]
    assert s.history_for(1) == ["deal(2)", "deal2(3)", "deal(5)", "go()"]


def test_reveal_of_a_public_chance_is_refused():
    text = SECRETS.replace("reveal deal", "reveal coin").replace(
        "  choose players[0]", "  chance coin(c: int in 1..2)\n  choose players[0]")
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.check_text(text, "secrets.rules")
    d = err.value.diagnostics[0]
    assert (d.code, d.span.line, d.span.col) == ("E038", 10, 3)
    assert d.message == "chance 'coin' is public (it has no 'seen by'): there is nothing to reveal"


# ---- the step budget: every loop without a decision is bounded ---------------------------------
BUSY = """game Busy
players 2..2
param spins: int = 10
state { n: int = 0  rounds: int = 0 }
standing p {
  fidget() when n < 3 {
    let i = 0
    while i < spins { i += 1 }
    n += 1
  }
}
flow {
  while rounds < 4 {
    rounds += 1
    choose players[0] {
      go() when rounds < 4 {
        let j = 0
        while j < spins { j += 1 }
      }
    } else {
      n += 10
    }
  }
}
score p => n
"""


def _busy(backend, limit, spins=10):
    text = BUSY.replace("state { n: int = 0  rounds: int = 0 }",
                        "state {\n  n: int = 0\n  rounds: int = 0\n}")
    return rulelang.load_text(text, "busy.rules", backend=backend, params={"spins": spins},
                              limits={"max_loop_steps": limit})


def test_a_loop_in_a_standing_body_is_bounded(backend):
    s = _busy(backend, 5).new_game(2)
    assert s.legal_actions() == ["go()", "fidget()"]
    before = s.digest()
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        s.apply("fidget()")
    assert (err.value.location, err.value.message) == ("busy.rules:11:5", loop_message(5))
    assert s.digest() == before and s.history == [] and s.legal_actions() == ["go()", "fidget()"]


def test_a_loop_in_an_option_body_is_bounded(backend):
    s = _busy(backend, 5).new_game(2)
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        s.apply("go()")
    assert (err.value.location, err.value.message) == ("busy.rules:21:9", loop_message(5))
    assert s.history == [] and s.get_var("rounds") == 1


def test_standing_actions_inside_a_counted_flow_loop(backend):
    """The flow `while` can pass a round without a pause (the else), so it is counted, but
    only since the last pause: standing actions and decisions each start the count afresh."""
    s = _busy(backend, 10).new_game(2)
    for _ in range(3):
        s.apply("fidget()")
        s.apply("go()")
    assert s.is_terminal() and s.get_var("rounds") == 4 and s.get_var("n") == 3 + 10
    assert s.history == ["fidget()", "go()"] * 3


def test_the_cli_sets_the_loop_limit():
    runner = CliRunner()
    path = os.path.join(ROOT, "tests", "fixtures", "flow.rules")
    res = runner.invoke(cli, ["simulate", "--help"])
    assert "-L, --limit NAME=N" in res.output and "max_loop_steps" in res.output
    for backend in ("interpreter", "compiled"):
        res = runner.invoke(cli, ["simulate", path, "-p", "2", "-n", "2", "--backend", backend,
                                  "-L", "max_loop_steps=1", "-D", "rounds=0"])
        assert res.exit_code == X.OK, res.output
    res = runner.invoke(cli, ["simulate", path, "-p", "2", "-n", "1", "-L", "max_loops=3"])
    assert res.exit_code == X.USAGE and "max_loop_steps" in res.output


def test_simulate_and_play_stop_at_the_limit_given_on_the_command_line(tmp_path):
    path = tmp_path / "busy.rules"
    path.write_text(BUSY.replace("state { n: int = 0  rounds: int = 0 }",
                                "state {\n  n: int = 0\n  rounds: int = 0\n}"),
                    encoding="utf-8")
    runner = CliRunner()
    for backend in ("interpreter", "compiled"):
        res = runner.invoke(cli, ["simulate", str(path), "-p", "2", "-n", "3", "--backend",
                                  backend, "-L", "max_loop_steps=9"])
        assert res.exit_code == X.FAULT, res.output
        assert loop_message(9) in res.output and "Traceback" not in res.output
        assert "busy.rules:11:5" in res.output or "busy.rules:21:9" in res.output
        # the defaults (100000) let the same games finish
        res = runner.invoke(cli, ["simulate", str(path), "-p", "2", "-n", "3", "--backend",
                                  backend])
        assert res.exit_code == X.OK, res.output
        res = runner.invoke(cli, ["play", str(path), "-p", "random,random", "-s", "1",
                                  "--backend", backend, "-L", "max_loop_steps=9"])
        assert res.exit_code == X.FAULT, res.output
        assert loop_message(9) in res.output and "Traceback" not in res.output


ENDER = """game Ender
players 2..2
state {
  n: int = 0
  ending: bool = false
}
standing p {
  @end call_end() when n >= 2 and not ending {
    ending = true
  }
}
flow {
  while not ending {
    choose players[0] {
      go() { n += 1 }
    }
  }
}
score p => n
"""


def test_an_end_declaration_as_a_standing_option(backend):
    """`@end` on a standing option: end_action_index finds it; the decision is asked again
    after it, so its own `when` must turn false (here `not ending`), or the simulators'
    policy of taking it at once would take it forever."""
    import random

    from rulelang import sim

    game = rulelang.load_text(ENDER, "ender.rules", backend=backend)
    s = game.new_game(2)
    s.apply("go()")
    assert s.legal_actions() == ["go()"] and s.end_action_index() == -1
    s.apply("go()")
    assert s.legal_actions() == ["go()", "call_end()"] and s.end_action_index() == 1
    s.apply("call_end()")
    assert s.legal_actions() == ["go()"] and s.end_action_index() == -1
    s.apply("go()")
    assert s.is_terminal() and s.scores() == [3, 3]
    t = game.new_game(2)
    assert sim.drive(t, random.Random(1), "random_end") == (4, 0)
    assert t.history == ["go()", "go()", "call_end()", "go()"]


def test_greedy_bots_take_standing_loans_only_up_to_the_cap(backend):
    """The heuristic (cash + plants) rewards a loan, so a greedy seat takes one whenever it
    can: the `when` (two loans at most) is what ends that, as docs/language.md 7.2 asks."""
    from rulelang import sim

    game = rulelang.load(FLOW, backend=backend)
    res = sim.play_game(game, 2, 5, ["greedy", "greedy"], record=True)
    actions = res.record["actions"]
    # each seat: two loans (+15 cash each), then hold (keeps the most cash)
    assert actions[:6] == ["take_loan()", "take_loan()", "hold()"] * 2
    assert actions.count("take_loan()") == 4 and res.decisions < 40


def test_the_workbench_commands_take_the_limit_too(tmp_path):
    path = tmp_path / "busy.rules"
    path.write_text(BUSY.replace("state { n: int = 0  rounds: int = 0 }",
                                "state {\n  n: int = 0\n  rounds: int = 0\n}"),
                    encoding="utf-8")
    runner = CliRunner()
    for args in (["compare", str(path), "-p", "2", "-n", "2", "-B", "spins=3"],
                 ["sweep", str(path), "-p", "2", "-n", "2", "--param", "spins=3..4"],
                 ["tournament", str(path), "--bots", "random,greedy", "-n", "2"]):
        res = runner.invoke(cli, [*args, "-L", "max_loop_steps=2"])
        assert res.exit_code == X.FAULT, (args, res.output)
        assert loop_message(2) in res.output and "Traceback" not in res.output


OPTIONAL_LISTS = """game OptionalLists
players 2..2
enum Spot { S1, S2 }
state { cs: list<Spot>?[Spot] = none
        n: int = 0 }
flow {
  choose players[0] {
    fill() { cs[S1] = [S2] }
  }
  choose players[0] {
    grow() { cs[S1] = cs[S1] + [S1] }
  }
}
score p => n
"""


def test_a_state_array_of_lists_that_may_be_none_is_cloned(backend):
    """An array whose entries are lists or none (`list<Spot>?[Spot]`): new_game, clone and a
    write after the clone (the compiled engine once copied each entry as a list, and failed
    on none at new_game)."""
    s = rulelang.load_text(OPTIONAL_LISTS, "optional_lists.rules",
                           backend=backend).new_game(2)
    assert s.get_var("cs") == {"S1": None, "S2": None}
    s.apply("fill()")
    c = s.clone()
    assert c.digest() == s.digest()
    c.apply("grow()")
    assert c.get_var("cs") == {"S1": ["S2", "S1"], "S2": None}
    assert s.get_var("cs") == {"S1": ["S2"], "S2": None}


CALLER_LOCALS = """game CallerLocals
players 2..2
state { n: int = 0 }
phase inner() {
  let x = 5
  choose players[0] { go() { n += x } }
}
flow {
  let x = 1
  choose players[1] { raise() { x = 2 } keep() { } }
  run inner()
  n += x
}
score p => n
"""


def test_a_callers_local_of_the_same_name_is_in_the_json(backend):
    """At inner's pause the flow's x and inner's x are both in scope: each has its own key, so
    two states that differ only in the flow's x have different JSON and digests."""
    game = rulelang.load_text(CALLER_LOCALS, "caller.rules", backend=backend)
    states = []
    for first in ("raise()", "keep()"):
        s = game.new_game(2)
        s.apply(first)
        states.append(s)
    assert [json.loads(s.to_json())["locals"] for s in states] == [
        {"x": 2, "inner.x": 5}, {"x": 1, "inner.x": 5}]
    assert states[0].digest() != states[1].digest()
    for s in states:
        s.apply("go()")
    assert [s.scores() for s in states] == [[7, 7], [6, 6]]


def test_every_new_game_is_the_same_start(load_rules):
    """The compiled engine builds a game's start once per player count and hands out clones
    of it: a game played on (every list of the state written: hands, shares, board), a clone
    and set_vars leave the next new_game the start it was."""
    import random

    game = load_rules("acquire")
    first = game.new_game(4)
    start = first.digest()
    rng = random.Random(5)
    while not first.is_terminal():
        first.apply_index(rng.randrange(first.num_choices()))
    first.clone()
    second = game.new_game(4)
    assert second.digest() == start and second.history == []
    second.set_vars({"cash": [0, 0, 0, 0]})
    assert game.new_game(4).digest() == start
    assert game.new_game(3).digest() != start
    with pytest.raises(ValueError, match="2-6 players, not 4.0"):
        game.new_game(4.0)
