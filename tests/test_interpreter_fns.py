"""The interpreter's expression functions (consts.ExprEvaluator.fn_<Node>): each node's meaning is
made once, with its names resolved to their slots then, and shared by every evaluation, state
and clone of a game. Names that are spelled alike but bound in different places (a def's
parameters and the flow's locals, nested comprehension variables, the locals of a re-entered
phase, a standing body's player) must still each read their own value; a table's found values
are kept, a lookup that faults faults again. Exact values on both back ends."""

from __future__ import annotations

import json

import pytest

import rulelang

SHADOW = """
game Shadow
players 2..2
param base: int = 3
const twice_base: int = base * 2
table bonus(k: int) -> int { 1 => 10, 2 => 20, 4.. => 40 }
state {
  log: list<int> = []
  n: int = 0
}
# `x` and `k` are also flow locals and comprehension variables below
def grow(x: int, k: int) -> int = x * 10 + k
def nested(x: int) -> int = sum(x * y for y in [z + x for z in 0..1] if y > 0)
def local_let(k: int) -> int {
  let x = k + 100
  return x + count(y > 0 for y in [k, -k])
}
phase again(x: int) depth 2 {
  choose players[0] {
    go(k: int in 1..2) when grow(x, k) > 0 {
      push grow(x, k) to log
      push sum(y for y in [k]) + sum(y * 100 for y in [x]) to log
    }
  }
  if x < 2 {
    run again(x + 1)
  }
  push x to log
}
standing p {
  peek(k: int in 1..2) when k > n {
    let x = k * 1000 + n
    push x to log
    n += 1
  }
}
flow {
  let x = 7
  let k = 5
  push grow(k, x) to log
  push nested(2) to log
  push local_let(x) to log
  push [y * 2 for y in [x, k]][1] to log
  push bonus(1) + bonus(2) + bonus(9) + twice_base to log
  run again(1)
  push x to log
  choose players[1] {
    look(j: int in 1..4) when j != 3 {
      push bonus(j) to log
    }
  }
}
score p => len(log)
"""


def shadow(backend):
    return rulelang.load_text(SHADOW, "shadow.rules", backend=backend)


def test_each_name_reads_its_own_binding(backend):
    s = shadow(backend).new_game(2)
    # grow(5, 7); nested(2): y in [2, 3] -> 2*2 + 2*3; local_let(7): 107 + 1 (only 7 > 0);
    # [14, 10][1]; 10 + 20 + 40 + 6
    assert s.get_var("log") == [57, 10, 108, 10, 76]
    assert s.legal_actions() == ["go(1)", "go(2)", "peek(1)", "peek(2)"]
    s.apply("go(2)")  # activation x=1: grow(1, 2); the two y are k and x
    assert s.get_var("log")[5:] == [12, 102]
    # the flow's x and the phase's x are both in scope: each is keyed by its slot (the JSON
    # once showed only the phase's, so two states differing in the flow's x had one digest)
    assert json.loads(s.to_json())["locals"] == {"again.x": 2, "k": 5, "x": 7, "x@1": 1}
    s.apply("peek(2)")  # the standing body's own x (2000 + n); the phase's x is kept
    assert s.get_var("log")[7:] == [2000]
    assert s.legal_actions() == ["go(1)", "go(2)", "peek(2)"]
    s.apply("go(1)")  # activation x=2, then back out: x=2, then x=1, then the flow's x=7
    assert s.get_var("log")[8:] == [21, 201, 2, 1, 7]
    assert s.legal_actions() == ["look(1)", "look(2)", "look(4)", "peek(2)"]
    s.apply("look(4)")
    assert s.get_var("log")[-1] == 40 and s.is_terminal()


def test_clones_and_games_share_the_functions_but_not_the_values(backend):
    game = shadow(backend)
    s = game.new_game(2)
    c = s.clone()
    s.apply("go(1)")
    c.apply("go(2)")
    assert s.get_var("log")[5:] == [11, 101] and c.get_var("log")[5:] == [12, 102]
    t = game.new_game(2)
    assert t.get_var("log") == [57, 10, 108, 10, 76] and t.legal_actions()[:2] == ["go(1)",
                                                                                   "go(2)"]


MISSING_ROW = """
game Rows
players 2..2
table bonus(k: int) -> int { 1 => 10, 2 => 20 }
state { got: int = 0 }
flow {
  while got < 100 {
    choose players[0] {
      take(k: int in 1..3) { got += bonus(k) }
    }
  }
}
score p => got
"""


def test_a_table_lookup_that_faults_faults_again_and_a_found_value_is_kept(backend):
    s = rulelang.load_text(MISSING_ROW, "rows.rules", backend=backend).new_game(2)
    s.apply("take(2)")
    for _ in range(2):
        with pytest.raises(rulelang.RulesRuntimeError) as err:
            s.apply("take(3)")
        assert (err.value.location, err.value.message) == (
            "rows.rules:9:37", "table 'bonus' has no row for 3")
        assert s.get_var("got") == 20
    s.apply("take(2)")
    s.apply("take(1)")
    assert s.get_var("got") == 50


def test_constants_may_name_constants_declared_after_them():
    """A constant's function is made before a constant it names is worked out: it reads the
    value when it runs (and no constant is worked out twice or out of turn)."""
    text = ("game C\nplayers 2..2\nconst a: int = b + X.v\nconst b: int = 2\n"
            "enum E(v: int) { X(b + 3) }\n"
            "state { n: int = a }\nflow { finish }\nscore p => n\n")
    for backend in ("interpreter", "compiled"):
        s = rulelang.load_text(text, "c.rules", backend=backend).new_game(2)
        assert s.get_var("n") == 7


NONES = """
game Nones
players 2..2
param cap: int = 3
enum Color(weight: int) { Red(1), Blue(2) }
state {
  xs: list<int> = [5, 6]
  which: int = 0
  opt: int? = 1
  col: Color? = Red
  rounds: int = 0
}
def inc(a: int, b: int) -> int = a + b
def probe(k: int, i: int?, c: Color?) -> bool =
  if k == 0 then i <= cap
  else if k == 1 then xs[i] > 5
  else if k == 2 then inc(1, i) > 1
  else if k == 3 then cap + i > 0
  else if k == 4 then c.weight > 1
  else i == 1 and c == Blue
flow {
  while rounds < 1 {
    choose players[0] {
      go() when probe(which, opt, col) {
        rounds += 1
      }
      wait() {
      }
    }
  }
}
score p => 0
"""


def test_locals_and_known_values_read_in_place_fault_where_they_did(backend):
    """Operands that name a local are read in place, constants held: a none still faults at
    the operand's own location, and the values are those of the operands."""
    s = rulelang.load_text(NONES, "nones.rules", backend=backend).new_game(2)
    got = []
    for k in range(6):
        s.set_vars({"which": k, "opt": 1, "col": "Red"})
        row = [s.legal_actions()]
        s.set_vars({"opt": 0, "col": "Blue"})
        row.append(s.legal_actions())
        try:
            s.set_vars({"opt": None, "col": None})
            row.append(s.legal_actions())
        except rulelang.RulesRuntimeError as err:
            row.append((err.location, err.message))
        got.append(row)
    assert got == [
        [["go()", "wait()"], ["go()", "wait()"], ("nones.rules:15:18", "value is none")],
        [["go()", "wait()"], ["wait()"], ("nones.rules:16:26", "value is none")],
        [["go()", "wait()"], ["wait()"], ("nones.rules:17:30", "value is none")],
        [["go()", "wait()"], ["go()", "wait()"], ("nones.rules:18:29", "value is none")],
        [["wait()"], ["go()", "wait()"], ("nones.rules:19:23", "value is none")],
        [["wait()"], ["wait()"], ["wait()"]],
    ]


ARGS = """
game Args
players 2..2
state { got: list<int> = []  hole: int?[player] = none  on: bool = true }
def three(a: int, b: int?, c: int) -> int = a * 100 + (if b == none then 0 else b) * 10 + c
def four(p: player, a: int, b: int, c: int) -> int = if p == players[0] then a + b + c else 0
def pick(q: int, flag: bool) -> int = if flag then q else four(players[0], q, q, q)
flow {
  while len(got) < 6 {
    choose players[0] {
      fill(i: int in 1..2) { hole[players[1]] = i }
      flip() { on = not on }
      use(x: int in 1..2, y: int in 0..1) when three(y, x, y) > 10 {
        let h = hole[players[1]]
        let z = 3
        let me = players[0]
        push three(x, h, y) to got
        push pick(x, on) to got
        push four(me, x, h, z) to got
      }
    }
  }
}
score p => 0
"""


def test_calls_of_locals_only_read_them_at_once_and_fault_where_they_did(backend):
    """A call whose three or more arguments all name locals reads them at once: a none where
    its parameter allows none is passed, one where it does not faults at that argument, as
    the loop over the arguments does; an `if` on a local reads it in place."""
    game = rulelang.load_text(ARGS, "args.rules", backend=backend)
    s = game.new_game(2)
    assert s.legal_actions() == ["fill(1)", "fill(2)", "flip()", "use(1, 1)", "use(2, 0)",
                                 "use(2, 1)"]
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        s.apply("use(1, 1)")  # h is none: three() takes it, four() does not
    assert (err.value.location, err.value.message) == ("args.rules:19:26", "value is none")
    for action in ["fill(2)", "use(2, 1)", "flip()", "use(1, 1)"]:
        s.apply(action)
    assert s.get_var("got") == [221, 2, 7, 121, 3, 6]
    if backend == "interpreter":
        calls = [f for f in game.fns.values() if getattr(f, "__name__", "") == "call_locals"]
        assert len(calls) == 3  # three(...) in the test, three(...) and four(...) in the body


def test_pure_operator_forms_are_the_reference_implementations():
    """An operator's `pure` form (the function of Python's operator module the interpreter
    calls) gives what its reference implementation gives, on every kind of value it meets."""
    from rulelang.semantics import BINARY_OPS

    ints = [-3, 0, 1, 7]
    sets = [frozenset(), frozenset({1}), frozenset({1, 2})]
    lists = [(), (1,), (1, 2)]
    pures = {op.op: op for op in BINARY_OPS.values() if op.pure is not None}
    assert sorted(pures) == ["!=", "*", "-", "<", "<=", "==", ">", ">="]
    for name, op in pures.items():
        values = ints + ([False, True, None] if op.kind == "equal" else [])
        pairs = [(a, b) for a in values for b in values]
        if name in ("==", "!=", "-"):
            pairs += [(a, b) for a in sets for b in sets]
        if op.kind == "equal":
            pairs += [(a, b) for a in lists for b in lists]
        for a, b in pairs:
            assert op.pure(a, b) == op.run(a, b, "x:1:1"), (name, a, b)


@pytest.mark.parametrize("path", ["acquire", "automobile", "powergrid", "poder", "polanaftowe"])
def test_nodes_never_none_give_no_none(path, monkeypatch):
    """nn_fn leaves out the none check of a node that never_none says never gives none: every
    such node's value, over a whole game, is not none (and there are such nodes)."""
    import os
    import random

    from rulelang import consts

    seen = []
    made = consts.ExprEvaluator.fn

    def fn(self, e):
        f = made(self, e)
        if not consts.never_none(self.p, e):
            return f

        def checked(ev, env):
            v = f(ev, env)
            seen.append(type(e).__name__)
            assert v is not None, e
            return v
        return checked

    monkeypatch.setattr(consts.ExprEvaluator, "fn", fn)
    game = rulelang.load(os.path.join(os.path.dirname(__file__), "..", "rules", path + ".rules"),
                         backend="interpreter")
    rng = random.Random(5)
    s = game.new_game(game.min_players)
    for _ in range(300):
        if s.is_terminal():
            break
        s.apply_index(rng.randrange(s.num_choices()))
    assert {"BinOp", "Agg", "Comp"} <= set(seen)
