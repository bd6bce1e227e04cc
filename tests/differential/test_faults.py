"""Run-time faults: same class, message and .rules location on both back ends; state kept."""

from __future__ import annotations

import os

import pytest

import rulelang

FAULTS = os.path.join(os.path.dirname(__file__), "..", "fixtures", "faults.rules")
NAME = "faults.rules"

EXPECTED = {
    "table_miss()": ("20:24", "table 'price' has no row for 7"),
    "none_index()": ("21:29", "a set cannot hold none"),
    "none_arith()": ("22:29", "value is none"),
    "div_zero()": ("23:22", "division by zero"),
    "mod_zero()": ("24:22", "modulo by zero"),
    "list_range()": ("25:24", "index 3 out of range (size 3)"),
    "list_negative()": ("26:27", "index -1 out of range (size 3)"),
    "empty_max()": ("27:23", "max() of an empty collection"),
    "remove_missing()": ("28:24", "removing a value that is not in the set"),
    "remove_list_missing()": ("29:29", "removing a value that is not in the list"),
    "none_return()": ("16:29", "value is none"),
    "none_let()": ("31:34", "value is none"),
    "bad_step()": ("32:26", "range step must be positive"),
    "ceil_zero()": ("33:23", "division by zero"),
    "failing()": ("34:17", "the rules say no"),
    "fine()": ("37:3", "no legal action at this decision"),
}


@pytest.mark.parametrize("entry", ["apply", "apply_index"])
@pytest.mark.parametrize("action", sorted(EXPECTED))
def test_fault_location_and_state(backend, action, entry):
    """Every apply entry point leaves the state as it was after a rules fault."""
    game = rulelang.load(FAULTS, backend=backend)
    s = game.new_game(2)
    before = s.digest()
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        if entry == "apply":
            s.apply(action)
        else:
            s.apply_index(list(EXPECTED).index(action))
    where, message = EXPECTED[action]
    assert err.value.location.endswith(f"{NAME}:{where}")
    assert err.value.message == message
    assert s.digest() == before
    assert s.legal_actions() == list(EXPECTED)


DEEP = """
game Deep
players 2..2
state {
  n: int = 0
  xs: list<int> = []
  movers: set<player> = {}
}
flow {
  while n < 50 {
    let who = players[n % 2]
    chance roll(d: int in 1..3) seen by who
    choose who secret {
      step() { n += d  push n to xs  add who to movers }
      boom() when n >= 6 { push 0 to xs  n = 100 // (n - n) }
    }
    reveal step
  }
}
score p => n
"""


@pytest.mark.parametrize("setup", [False, True])
def test_a_fault_deep_into_a_game_restores_every_entry_point(backend, setup):
    """The state after a fault equals the state before it, after many steps, secret choices,
    private draws and (optionally) a scenario set-up, through apply and apply_index."""
    game = rulelang.load_text(DEEP, "deep.rules", backend=backend)
    s = game.new_game(2)
    for i in range(8):
        s.apply_index(i % 3)  # roll
        if setup and i == 3:
            s.set_vars({"xs": [7, 7]})
        s.apply("step()")
    s.apply_index(1)
    for entry in ("apply", "apply_index"):
        before, hist, obs = s.to_json(), list(s.history), s.observation(0)
        with pytest.raises(rulelang.RulesRuntimeError) as err:
            s.apply("boom()") if entry == "apply" else s.apply_index(1)
        assert err.value.location == "deep.rules:15:46"  # 100 // (n - n)
        assert (s.to_json(), s.history, s.observation(0)) == (before, hist, obs)
    s.apply("step()")
    assert s.get_var("xs")[:2] == ([7, 7] if setup else [1, 3])


def test_illegal_actions_agree():
    states = [rulelang.load(FAULTS, backend=b).new_game(2) for b in ("interpreter", "compiled")]
    for bad in ("nope()", "fine", "fine( )", "", "table_miss(1)", "no_choice()"):
        for s in states:
            before = s.digest()
            with pytest.raises(rulelang.IllegalAction):
                s.apply(bad)
            assert s.digest() == before
    for s in states:
        with pytest.raises(rulelang.IllegalAction):
            s.apply_index(99)


FOLDED = """game Folded
players 2..2
param house: bool = false
state { n: int = 0 }
def first_share() -> bool = min(n for q in players if house) > 0
flow {
  choose players[0] {
    go() { }
    bonus() when n == 0 and first_share() and house { }
  }
}
standing extra {
  claim() when n == 0 and first_share() and house { }
}
score p => n
"""


@pytest.mark.parametrize("house", [False, True])
def test_a_when_ending_in_a_switched_off_param_still_runs_its_tests_first(backend, house):
    """`bonus() when n == 0 and first_share() and house` with house false: the option can
    never be legal, but `first_share()` runs before `house` is read, and it faults (the min of
    an empty collection) when listing the decision's actions, on both back ends. (The compiled
    engine once dropped the whole `when` as soon as it met the folded false, so it listed the
    actions without a fault.) With house true the min is taken over both players."""
    game = rulelang.load_text(FOLDED, "folded.rules", backend=backend, params={"house": house})
    if house:
        assert game.new_game(2).legal_actions() == ["go()"]
        return
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        game.new_game(2)
    assert err.value.location.endswith("folded.rules:5:29")
    assert err.value.message == "min() of an empty collection"


SET_VARS_RULES = """game SetVars
players 2..2
state {
  d: int = 1
  pts: int[player] = 0
}
flow {
  for p in players {
    choose p {
      pick(k: int in 0..2) when 10 // d > k { pts[p] += k }
    }
  }
}
score p => pts[p]
"""


def test_set_vars_is_all_or_nothing(backend, tmp_path):
    """set_vars works out the pending choices at once: new values that make them fault raise
    the fault there and leave the state as it was; an unknown name writes nothing."""
    path = tmp_path / "setvars.rules"
    path.write_text(SET_VARS_RULES, encoding="utf-8")
    s = rulelang.load(str(path), backend=backend).new_game(2)
    before = (s.to_json(), s.digest(), s.legal_actions())
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        s.set_vars({"pts": [5, 6], "d": 0})
    assert err.value.location == f"{path}:10:33"
    assert err.value.message == "division by zero"
    assert (s.to_json(), s.digest(), s.legal_actions()) == before
    with pytest.raises(KeyError):
        s.set_vars({"d": 5, "nosuch": 1})
    assert s.get_var("d") == 1
    s.set_vars({"d": 4, "pts": [5, 6]})  # 10 // 4 = 2: pick(2) is no longer legal
    assert s.legal_actions() == ["pick(0)", "pick(1)"]
    s.apply("pick(1)")
    mid = (s.to_json(), s.legal_actions())
    with pytest.raises(rulelang.RulesRuntimeError):
        s.set_vars({"d": 0})
    assert (s.to_json(), s.legal_actions()) == mid
    s.apply("pick(0)")
    assert s.is_terminal() and s.scores() == [6, 6]
