"""The interpreter's statements and lowered instructions as functions made once (exec_<Stmt>,
step_<Instr>), an option's candidates kept as its domain (_Singles), and the parts of `when`
tests that read no option parameter remembered for one decision (steady_parts). Exact values
and fault locations, on both back ends where they must agree."""

from __future__ import annotations

import json

import pytest

import rulelang
from rulelang.interpreter import engine
from rulelang.interpreter.reads import nodes

LOOPS = """
game Loops
players 2..2
state {
  log: list<int> = []
  n: int = 0
}
# break leaves only the innermost loop, in a def body and in a flow statement
def first_pairs(k: int) -> list<int> {
  let out: list<int> = []
  for i in 0..k {
    let j = 0
    while true {
      if j > i {
        break
      }
      out = out + [i * 10 + j]
      j += 1
    }
    if i == 2 {
      break
    }
  }
  return out
}
flow {
  for a in 0..3 {
    for b in 0..3 {
      if b > a {
        break
      }
      push a * 10 + b to log
    }
    if a == 2 {
      break
    }
  }
  for x in first_pairs(5) {
    push x to log
  }
  while n < 3 {
    choose players[0] {
      step(k: int in 1..2) {
        n += k
        for i in 0..2 {
          if i == k {
            break
          }
          push 100 + i to log
        }
      }
    }
  }
}
score p => n
"""


def test_break_leaves_only_its_own_loop(backend):
    s = rulelang.load_text(LOOPS, "loops.rules", backend=backend).new_game(2)
    assert s.get_var("log") == [0, 10, 11, 20, 21, 22, 0, 10, 11, 20, 21, 22]
    s.apply("step(2)")
    assert s.get_var("log")[12:] == [100, 101]
    s.apply("step(1)")
    assert s.get_var("log")[14:] == [100] and s.is_terminal()


FAULTS = """
game Faults
players 2..2
state {
  xs: list<int> = [1, 2]
  n: int = 0
}
def spin(k: int) -> int {
  let i = 0
  while i >= 0 {
    i += k
  }
  return i
}
flow {
  while n < 2 {
    choose players[0] {
      index(k: int in 1..2) {
        n += 1
        push k to xs
        xs[k + 5] = 0
      }
      loop() {
        n += 1
        n = spin(1)
      }
      grow(k: int in 1..2) {
        xs[0] = k
        n += k
      }
    }
  }
}
score p => n
"""


def test_a_fault_inside_a_statement_leaves_the_state_untouched(backend):
    game = rulelang.load_text(FAULTS, "faults.rules", backend=backend,
                              limits={"max_loop_steps": 50})
    s = game.new_game(2)
    before = (s.to_json(), s.legal_actions(), s.history_for(0))
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        s.apply("index(1)")
    assert (err.value.location, err.value.message) == (
        "faults.rules:21:9", "index 6 out of range (size 3)")
    assert (s.to_json(), s.legal_actions(), s.history_for(0)) == before
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        s.apply("loop()")
    assert (err.value.location, err.value.message) == (
        "faults.rules:10:3",
        "loop went round more than 50 times without a decision (limit max_loop_steps)")
    assert (s.to_json(), s.legal_actions(), s.history_for(0)) == before
    s.apply("grow(2)")
    assert s.get_var("xs") == [2, 2] and s.get_var("n") == 2 and s.is_terminal()


BIDS = """
game Bids
players 2..2
state {
  paid: int[player] = 0
  sides: list<player> = []
}
flow {
  for q in players {
    choose q {
      bid(amount: int in 1..1000) { paid[q] = amount }
      side(s: player) { push s to sides }
    }
  }
}
score p => paid[p]
"""


def test_an_option_without_a_when_keeps_its_domain_as_its_candidates(backend):
    s = rulelang.load_text(BIDS, "bids.rules", backend=backend).new_game(2)
    acts = s.legal_actions()
    assert s.num_choices() == 1002 == len(acts)
    assert acts[:2] == ["bid(1)", "bid(2)"] and acts[999:] == ["bid(1000)", "side(0)", "side(1)"]
    s.apply("bid(537)")
    s.apply_index(1001)
    assert s.scores() == [537, 0] and s.get_var("sides") == [1]
    with pytest.raises(rulelang.IllegalAction):
        s.apply_index(0)


STEADY = """
game Steady
players 2..2
state {
  xs: list<int> = [3, 1]
  rounds: int = 0
  log: list<int> = []
}
def limit(i: int) -> int = xs[i] + rounds
flow {
  while rounds < 3 {
    let i = rounds % 2
    choose players[0] {
      # limit(i) and xs[1 - i] read no parameter: worked out once per decision
      take(k: int in 0..4, j: int in 0..1) when k + j <= limit(i) and xs[1 - i] > j {
        push k * 10 + j to log
        rounds += 1
        xs[i] = xs[i] + 1
      }
      # so does `xs[rounds] > 0`, which faults (the first time the test gets to it) once
      # rounds is 2
      far(k: int in 0..1) when k > 0 and xs[rounds] > 0 {
        rounds += 2
      }
    }
  }
}
score p => len(log)
"""


def steady_nodes(game):
    """(kind, line, col) of the nodes whose function is the interpreter's steady one."""
    return sorted((type(n).__name__, n.span.line, n.span.col)
                  for n in nodes(game.program.flow)
                  if getattr(game.fns.get(n), "__name__", "") == "steady")


@pytest.mark.parametrize("verify", [False, True])
def test_the_parts_of_a_when_test_that_read_no_parameter(backend, verify, monkeypatch):
    monkeypatch.setattr(engine, "VERIFY_MEMO", verify)
    game = rulelang.load_text(STEADY, "steady.rules", backend=backend)
    s = game.new_game(2)
    # round 0: i = 0, limit 3, xs[1] = 1 > j: j = 0 only, k + 0 <= 3
    assert s.legal_actions() == ["take(0, 0)", "take(1, 0)", "take(2, 0)", "take(3, 0)",
                                 "far(1)"]
    for _ in range(2):  # rounds 2: far's test faults at xs[2], and the apply is undone
        with pytest.raises(rulelang.RulesRuntimeError) as err:
            s.apply("far(1)")
        assert (err.value.location, err.value.message) == ("steady.rules:22:42",
                                                           "index 2 out of range (size 2)")
    s.apply("take(3, 0)")
    # round 1: i = 1, limit xs[1] + 1 = 2, xs[0] = 4 > j
    assert s.legal_actions() == ["take(0, 0)", "take(0, 1)", "take(1, 0)", "take(1, 1)",
                                 "take(2, 0)", "far(1)"]
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        s.apply("take(2, 0)")
    assert err.value.location == "steady.rules:22:42"
    s.apply("far(1)")
    assert s.is_terminal() and json.loads(s.to_json())["vars"]["log"] == [30]
    if backend == "interpreter":
        # limit(i) and xs[1 - i] in take's test, `xs[rounds] > 0` in far's, and the ranges
        # the parameters run over
        assert steady_nodes(game) == [("BinOp", 22, 42), ("Call", 15, 58), ("Index", 15, 71),
                                      ("Range", 15, 22), ("Range", 15, 38), ("Range", 22, 21)]


PREFIX = """
game Prefix
players 2..2
enum Spot { S0, S1, S2, S3 }
state {
  xs: int[Spot] = 1
  idx: list<Spot> = [S0, S1, S2]
  bs: list<Spot> = []
  cs: list<Spot>[Spot] = []
  ds: int[Spot] = 1
  rounds: int = 0
  log: list<int> = []
}
def ok(a: Spot) -> bool = 6 // xs[a] > 2
def spots(b: Spot) -> list<Spot> = if 6 // ds[b] > 0 then cs[b] else []
flow {
  while rounds < 3 {
    choose players[0] {
      # ok(a) reads only a: once per value of a (false: the b and c left under that a are
      # skipped); xs[a] >= b and b > 0 once per (a, b) (xs[a] >= b false: the c left)
      pick(a: Spot in idx, b: int in 0..2, c: bool)
          when ok(a) and xs[a] >= b and (c or b > 0) {
        push b * 10 + (if c then 1 else 0) to log
        rounds += 1
        xs[a] += 1
      }
      # xs[a] > 5 reads only a, but c's domain reads b: every (a, b) is still visited
      far(a: Spot in idx, b: Spot in bs, c: Spot in spots(b)) when xs[a] > 5 and c != a {
        rounds += 10
      }
    }
  }
}
score p => len(log)
"""


def fault_of(f) -> tuple[str, str] | None:
    """(location, message) of the fault f() raises, or None."""
    try:
        f()
    except rulelang.RulesRuntimeError as err:
        return err.location, err.message
    return None


def prefix_nodes(game):
    """(kind, line, col) of the nodes whose function is the interpreter's prefix one."""
    return sorted((type(n).__name__, n.span.line, n.span.col)
                  for n in nodes(game.program.flow)
                  if getattr(game.fns.get(n), "__name__", "") == "prefix")


@pytest.mark.parametrize("verify", [False, True])
def test_the_parts_of_a_when_test_that_read_a_prefix_of_the_parameters(backend, verify,
                                                                        monkeypatch):
    monkeypatch.setattr(engine, "VERIFY_MEMO", verify)
    game = rulelang.load_text(PREFIX, "prefix.rules", backend=backend)
    s = game.new_game(2)
    s.set_vars({"xs": {"S0": 2, "S1": 3, "S2": 1, "S3": 0}})
    # ok(S1) is false; xs[a] >= b bounds b
    assert s.legal_actions() == ["pick(S0, 0, true)", "pick(S0, 1, false)", "pick(S0, 1, true)",
                                 "pick(S0, 2, false)", "pick(S0, 2, true)", "pick(S2, 0, true)",
                                 "pick(S2, 1, false)", "pick(S2, 1, true)"]
    s.apply("pick(S0, 2, true)")  # xs[S0] = 3: ok(S0) is false too
    assert s.legal_actions() == ["pick(S2, 0, true)", "pick(S2, 1, false)", "pick(S2, 1, true)"]
    # ok(S3) faults, where the first candidate under a = S3 tests it: set_vars lists the
    # candidates at once, raises the fault and puts the old values back
    listed = s.legal_actions()
    fault = ("prefix.rules:14:27", "division by zero")
    assert fault_of(lambda: s.set_vars({"idx": ["S0", "S1", "S3", "S2"]})) == fault
    assert s.legal_actions() == listed
    # far: spots(b) faults at b = S1 (under a = S0, where xs[a] > 5 is false)
    fault = ("prefix.rules:15:39", "division by zero")
    assert fault_of(lambda: s.set_vars({
        "idx": ["S0", "S1", "S2"], "bs": ["S0", "S1"], "ds": {"S0": 1, "S1": 0, "S2": 1, "S3": 1},
        "cs": {"S0": ["S1"], "S1": ["S0", "S2"], "S2": [], "S3": []}})) == fault
    assert s.legal_actions() == listed
    s.set_vars({"idx": ["S0", "S1", "S2"], "bs": ["S0", "S1"],
                "cs": {"S0": ["S1"], "S1": ["S0", "S2"], "S2": [], "S3": []},
                "ds": {"S0": 1, "S1": 1, "S2": 1, "S3": 1},
                "xs": {"S0": 6, "S1": 2, "S2": 1, "S3": 0}})
    assert s.legal_actions() == ["pick(S1, 0, true)", "pick(S1, 1, false)", "pick(S1, 1, true)",
                                 "pick(S1, 2, false)", "pick(S1, 2, true)", "pick(S2, 0, true)",
                                 "pick(S2, 1, false)", "pick(S2, 1, true)", "far(S0, S0, S1)",
                                 "far(S0, S1, S2)"]
    s.apply("far(S0, S1, S2)")
    assert s.is_terminal() and s.get_var("log") == [21]
    if backend == "interpreter":
        # the operands ok(a) (a) and xs[a] >= b (a, b), b > 0 in the third (b), xs[a] > 5 (a);
        # not spots(b): c's domain, worked out once per b anyway
        assert prefix_nodes(game) == [("BinOp", 22, 26), ("BinOp", 22, 47), ("BinOp", 28, 68),
                                      ("Call", 22, 16)]


RETURNS = """
game Returns
players 2..2
state {
  log: list<int> = []
}
# a return from inside loops ends the def, a break only its loop
def find(k: int) -> int {
  for i in 0..9 {
    let j = 0
    while j < 5 {
      if i * j == k {
        return i * 10 + j
      }
      if j == 3 {
        break
      }
      j += 1
    }
  }
  return -1
}
def maybe(k: int) -> int? {
  for i in 0..3 {
    if i == k {
      return none
    }
  }
  return k
}
def must(k: int) -> int {
  for i in 0..3 {
    if i == k {
      let v: int? = maybe(k)
      return v
    }
  }
  return k
}
flow {
  push find(6) to log
  push find(4) to log
  push find(50) to log
  push must(7) to log
  choose players[0] {
    go(k: int in 2..5) {
      push must(k) to log
    }
  }
}
score p => len(log)
"""


def test_returns_and_breaks_inside_loops_of_a_def(backend):
    s = rulelang.load_text(RETURNS, "returns.rules", backend=backend).new_game(2)
    assert s.get_var("log") == [23, 22, -1, 7]
    with pytest.raises(rulelang.RulesRuntimeError) as err:  # must(2) returns maybe(2): none
        s.apply("go(2)")
    assert (err.value.location, err.value.message) == ("returns.rules:35:14", "value is none")
    assert s.get_var("log") == [23, 22, -1, 7] and s.legal_actions()[0] == "go(2)"
    s.apply("go(5)")
    assert s.is_terminal() and s.get_var("log") == [23, 22, -1, 7, 5]


LEAD = """
game Lead
players 2..2
state {
  xs: list<int> = [3, 0, 2]
  m: int = 0
  n: int = 0
}
flow {
  while n < 3 {
    choose players[0] {
      # xs[a] > 0 reads only a: once found true for an a, the rest of the test decides for
      # the b left, and still faults where it would (b + 1 = m)
      take(a: int in 0..2, b: int in 0..3) when xs[a] > 0 and b != a and 6 // (b + 1 - m) > 1 {
        n += 1
      }
      bump() { m += 2 }
    }
  }
}
score p => n
"""


@pytest.mark.parametrize("verify", [False, True])
def test_a_when_tests_leading_parts_found_true_are_not_tested_again(backend, verify,
                                                                     monkeypatch):
    monkeypatch.setattr(engine, "VERIFY_MEMO", verify)
    found = []
    known_true = engine._Evaluator._known_true

    def spy(self, lead):
        found.append(known_true(self, lead))
        return found[-1]

    monkeypatch.setattr(engine._Evaluator, "_known_true", spy)
    game = rulelang.load_text(LEAD, "lead.rules", backend=backend)
    s = game.new_game(2)
    assert s.legal_actions() == ["take(0, 1)", "take(0, 2)", "take(2, 0)", "take(2, 1)",
                                 "bump()"]
    if backend == "interpreter":
        # after b = 0 under a = 0 and a = 2 (xs[1] > 0 is false: a dead end, no b left)
        assert found == [True, True]
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        s.apply("bump()")  # m = 2: the test faults at (0, 1), in the part left to decide
    assert (err.value.location, err.value.message) == ("lead.rules:14:74", "division by zero")
    assert s.legal_actions()[0] == "take(0, 1)"
