"""The semantics table (rulelang/semantics.py) drives the checker, the interpreter and the code
generator: every entry is complete, exercised with exact values on both back ends, and a new
builtin needs nothing but its table entry."""

from __future__ import annotations

import os

import pytest

import rulelang
from rulelang import ast as rast
from rulelang import semantics
from rulelang import types as T
from rulelang.codegen.emitter import Emitter
from rulelang.interpreter.engine import _Evaluator
from tests.conftest import ROOT

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "builtins.rules")


def test_every_builtin_and_operator_gives_its_value(load_fixture_state):
    s = load_fixture_state
    # len 3 / 2, min 3, max 7, abs 4; then += len({Green, Blue})
    # ceil_div(7, 2) = 4, round_up(7, 5) = 10, round_down(7, 5) = 5
    # index_of([30, 10, 20], 20) = 2, index_of([20, 10, 30], 30) = 2
    assert s.get_var("out") == {"Red": 336, "Green": 4105, "Blue": 22}
    assert s.get_var("lst") == [
        20, 10, 30,  # reversed(xs)
        2,  # len(reversed(cs))
        8,  # path_cost A -> D: A-B 5, B-C 2, C-D 1 (A-C-D costs 10)
        2,  # edge_cost(B, C)
        3,  # graph_neighbors(C): A, B, D
        2,  # seats_from
        2,  # neighbors(1A) on a 3 x 2 grid: 2A, 1B
        7, 0, 7,  # the graph value g = Rails: edge A-B 7, C has no edge, B -> A costs 7
        3, -3, -4,  # 7 // 2, 0 - (7 // 2), (0 - 7) // 2 rounds towards minus infinity
        1, 2,  # 7 % 3, (0 - 7) % 3 takes the divisor's sign
        -3, 12]
    assert s.get_var("cells") == ["1A", "2A", "3A"]
    assert s.get_var("flags") == [True, True, False, True, True, False, True, True, True, True,
                                  False, True, True]
    assert s.get_var("order") == ["Red", "Blue", "Blue", "Red"]


@pytest.fixture
def load_fixture_state(backend):
    return rulelang.load(FIXTURE, backend=backend).new_game(2)


def _names_in(node, kind):
    if isinstance(node, kind):
        yield node
    if isinstance(node, tuple | list):
        for x in node:
            yield from _names_in(x, kind)
    elif hasattr(node, "__dataclass_fields__"):
        for f in node.__dataclass_fields__:
            yield from _names_in(getattr(node, f), kind)


def test_fixture_uses_every_table_entry():
    program = rulelang.check_file(FIXTURE)
    calls = {c.name for c in _names_in(program.module, rast.Call)}
    ops = {b.op for b in _names_in(program.module, rast.BinOp)}
    assert set(semantics.BUILTINS) <= calls
    assert set(semantics.BINARY_OPS) <= ops


def test_every_entry_is_complete():
    for b in semantics.BUILTINS.values():
        assert callable(b.check) and callable(b.run) and callable(b.emit), b.name
        assert b.summary, b.name
    for op in semantics.BINARY_OPS.values():
        assert callable(op.check), op.op
        if op.kind != "logic":
            assert callable(op.run) and callable(op.emit), op.op
        if op.flip is not None:
            assert semantics.BINARY_OPS[op.flip].flip == op.op


def test_fault_messages_are_the_runtime_ones():
    """A table's fault message is what the runtime raises, on both back ends."""
    from rulelang.runtime import RulesRuntimeError, ceil_div, floor_div, index_of, mod

    for fn, args, entry in ((floor_div, (1, 0), semantics.BINARY_OPS["//"]),
                            (mod, (1, 0), semantics.BINARY_OPS["%"]),
                            (ceil_div, (1, 0), semantics.BUILTINS["ceil_div"]),
                            (index_of, ((1, 2), 3), semantics.BUILTINS["index_of"])):
        with pytest.raises(RulesRuntimeError) as err:
            fn(*args, "here")
        assert err.value.message in entry.faults


def test_every_node_kind_has_a_checker_an_evaluator_and_an_emitter():
    from rulelang.check import Checker

    expr_kinds = set(rast.Expr.__args__)
    stmt_kinds = set(rast.Stmt.__args__) - {rast.Run, rast.Choose, rast.Chance, rast.Finish}
    with open(os.path.join(ROOT, "rulelang", "check.py"), encoding="utf-8") as f:
        check_src = f.read()
    for k in expr_kinds:
        assert hasattr(_Evaluator, f"fn_{k.__name__}"), k
        assert hasattr(Emitter, f"emit_{k.__name__}"), k
        assert f"ast.{k.__name__}" in check_src, k
    for k in stmt_kinds | {rast.Run, rast.Choose, rast.Chance, rast.Finish}:
        assert f"ast.{k.__name__}" in check_src, k
    for k in stmt_kinds:
        assert hasattr(_Evaluator, f"exec_{k.__name__}"), k
        assert hasattr(Emitter, f"emit_{k.__name__}"), k
    assert Checker is not None


RULES_WITH_TWICE = """
game Twice
players 2..2
state { n: int = 0 }
flow {
  n = twice(21) + twice(len([1, 2]))
  choose players[0] { done() { } }
}
score p => n
"""


def test_a_new_builtin_is_one_table_entry(monkeypatch):
    """Adding `twice(n)` to the table alone makes it checked, interpreted and compiled."""
    entry = semantics.Builtin(
        "twice", "n doubled",
        lambda chk, e, scope, ctx: (chk.call_args(e, [T.INT], scope, ctx), T.INT)[1],
        lambda ev, e, args, where: 2 * args[0],
        lambda em, e, args: f"(2 * {args[0]})",
        lambda em, e: True)
    monkeypatch.setitem(semantics.BUILTINS, "twice", entry)
    results = []
    for backend in ("interpreter", "compiled"):
        game = rulelang.load_text(RULES_WITH_TWICE, "twice.rules", backend=backend)
        results.append(game.new_game(2).get_var("n"))
    assert results == [46, 46]
    with pytest.raises(rulelang.RulesError, match="'twice' takes 1 argument, got 2"):
        rulelang.load_text(RULES_WITH_TWICE.replace("twice(21)", "twice(2, 1)"), "t.rules")


BAD_ROW = """
game BadRow
players 2..2
table t(n: int) -> int {
  0 => 1,
  1 => 1 // 0
}
state { n: int = 0 }
flow {
  n = t(0)
  choose players[0] { done() { } }
}
score p => n
"""


def test_a_faulting_table_row_fails_at_load_on_both_back_ends(backend):
    # Tables are evaluated when the file is loaded (docs/language.md), even rows never read.
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        rulelang.load_text(BAD_ROW, "bad.rules", backend=backend)
    assert (err.value.location, err.value.message) == ("bad.rules:6:8", "division by zero")
