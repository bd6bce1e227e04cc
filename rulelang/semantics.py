"""The meaning of every operator and builtin, once: type rule, reference implementation, emitted
code, and whether (and how) it can fault. The checker, the interpreter (through the constant
evaluator) and the code generator all read these tables; a test asserts that each entry is used
by all three.

Type rules get the checker as `chk` (its `call_args`, `expect`, `infer`, `error` and program);
reference implementations get the evaluator as `ev` and evaluated, none-checked arguments;
emitters get the code generator as `em` and the arguments' code. Values: the interpreter keeps
sets as frozensets and lists as tuples, generated engines keep sets as int bit masks and lists
as Python lists; both meanings are written side by side here.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass

from rulelang import ast, runtime
from rulelang import types as T


@dataclass(frozen=True)
class Builtin:
    name: str
    summary: str
    check: Callable  # (chk, call, scope, ctx) -> result type
    run: Callable  # (ev, call, args, where) -> value
    emit: Callable  # (em, call, args) -> Python expression
    # Whether a call cannot fault once its arguments are evaluated and not none:
    # (em, call) -> bool. None: it may always fault.
    safe: Callable | None = None
    faults: tuple[str, ...] = ()  # the run-time messages it may raise (from rulelang.runtime)
    # Whether its value is a function of its arguments' values alone, which are ints (not of the
    # players or the game): a listing may be kept per values of what else it reads (the
    # interpreter's Game.value_keys, the code generator's plan_listing_memo).
    arith: bool = False


@dataclass(frozen=True)
class BinaryOp:
    op: str
    kind: str  # "logic", "member", "equal", "order", "arith"
    check: Callable  # (chk, binop, scope, ctx, want) -> result type
    run: Callable | None  # (a, b, where) on values already evaluated (None: structural)
    emit: Callable | None  # (a_code, b_code, where_code, set_operands) -> Python expression
    flip: str | None = None  # the operator true exactly when this one is false
    faults: tuple[str, ...] = ()
    # The plain Python operator, for when the right operand is a literal that cannot fault
    fast: str | None = None
    # For an operator that cannot fault: `run` without its location, as the function of Python's
    # operator module it calls (run is made from it: _pure), so the interpreter's evaluation
    # calls no Python function of its own. None otherwise.
    pure: Callable | None = None


def _always(em, e) -> bool:
    return True


def _nonzero_literal_divisor(em, e) -> bool:
    b = e.args[1]
    return isinstance(b, ast.IntLit) and b.value != 0


def _kind(em, e, i: int = 0) -> str:
    return T.strip(em.t(e.args[i])).kind


# ---- type rules of builtins ---------------------------------------------------------------------
def _ints(n: int, result: T.Type = T.INT):
    def check(chk, e, scope, ctx):
        chk.call_args(e, [T.INT] * n, scope, ctx)
        return result
    return check


def _check_len(chk, e, scope, ctx):
    t = (chk.call_args(e, [T.ANY], scope, ctx) or [T.ANY])[0]
    if T.strip(t).kind not in ("set", "list", "any"):
        chk.error("E012", f"len() needs a set or list, not {t}", e.span)
    return T.INT


def _check_player_fn(result: T.Type):
    def check(chk, e, scope, ctx):
        chk.call_args(e, [T.PLAYER], scope, ctx)
        return result
    return check


def _check_to_list(chk, e, scope, ctx):
    got = chk.call_args(e, [T.ANY], scope, ctx)
    t = T.strip(got[0]) if got else T.ANY
    if t.kind not in ("set", "list", "any"):
        chk.error("E012", f"{e.name}() needs a set or list, not {t}", e.span)
        return T.ANY
    return T.list_of(t.elem) if t.kind != "any" else T.ANY


def _check_index_of(chk, e, scope, ctx):
    if len(e.args) != 2:
        chk.call_args(e, [T.ANY, T.ANY], scope, ctx)
        return T.INT
    t = T.strip(chk.infer(e.args[0], scope, ctx))
    if t.kind == "list":
        chk.expect(e.args[1], scope, ctx, t.elem)
    else:
        if t.kind != "any":
            chk.error("E012", f"index_of() needs a list, not {t}", e.args[0].span)
        chk.infer(e.args[1], scope, ctx)
    return T.INT


def _check_grid_fn(chk, e, scope, ctx):
    n = e.name
    got = chk.call_args(e, [T.ANY] * (1 if n == "neighbors" else 2), scope, ctx)
    ct = T.strip(got[0]) if got else T.ANY
    if ct.kind != "enum" or chk.p.enums[ct.name].grid is None:
        if ct.kind != "any":
            chk.error("E012", f"{n}() needs a grid cell, not {ct}", e.span)
        return T.ANY
    if n == "neighbors":
        return T.list_of(ct)
    if len(got) > 1 and not T.compatible(T.set_of(ct), got[1]):
        chk.error("E012", "connected() needs a set<" + str(ct) + "> as second argument",
                  e.args[1].span)
    return T.set_of(ct)


_GRAPH_ARITY = {"path_cost": (3, 4), "edge_cost": (3, 3), "graph_neighbors": (2, 2)}


def _check_graph_fn(chk, e, scope, ctx):
    n = e.name
    lo, hi = _GRAPH_ARITY[n]
    if not lo <= len(e.args) <= hi or not e.args:
        chk.error("E013", f"'{n}' takes {lo}{'' if lo == hi else f' or {hi}'} arguments, "
                  f"got {len(e.args)}", e.span)
        for a in e.args:
            chk.infer(a, scope, ctx)
        return T.ANY
    gt = chk.infer(e.args[0], scope, ctx)
    if gt.kind != "graph":
        if gt.kind != "any":
            chk.error("E012", f"{n}() needs a graph as first argument, not {gt}", e.args[0].span)
        for a in e.args[1:]:
            chk.infer(a, scope, ctx)
        return T.ANY
    node = gt.elem
    rest = e.args[1:]
    if n == "path_cost":
        src = chk.infer(rest[0], scope, ctx)
        if not (T.compatible(T.set_of(node), src) or T.compatible(T.list_of(node), src)):
            chk.error("E012", f"path_cost() needs a set or list of {node} to start from, "
                      f"not {src}", rest[0].span)
        chk.expect(rest[1], scope, ctx, node)
        if len(rest) > 2:
            chk.expect(rest[2], scope, ctx, T.set_of(node))
        return T.opt(T.INT)
    if n == "edge_cost":
        chk.expect(rest[0], scope, ctx, node)
        chk.expect(rest[1], scope, ctx, node)
        return T.opt(T.INT)
    chk.expect(rest[0], scope, ctx, node)
    return T.list_of(node)


# ---- reference implementations ------------------------------------------------------------------
def _ordered(v) -> tuple:
    """A set in member order, or a list, as a tuple."""
    return tuple(sorted(v)) if isinstance(v, frozenset) else tuple(v)


def _run_path_cost(ev, e, args, where):
    allowed = args[3] if len(args) > 3 else None
    return runtime.path_cost(ev.k.graphs[args[0]], _ordered(args[1]), args[2], allowed)


def _grid_of(ev, e) -> tuple:
    return ev.k.neighbors[T.strip(ev.p.types[e.args[0]]).name]


# ---- emitted code -------------------------------------------------------------------------------
def _emit_len(em, e, args):
    if _kind(em, e) == "set":
        mask = em.known_int(args[0])
        if mask is not None:  # a constant set (an enum or grid name): its size
            return str(mask.bit_count())
        return f"{args[0]}.bit_count()"
    return f"len({em.bare(args[0])})"


def _emit_to_list(em, e, args, reverse: bool = False):
    if _kind(em, e) == "set":
        items = em.members(em.t(e.args[0]), args[0])
        return f"list({items}[::-1])" if reverse else f"list({items})"
    return f"{args[0]}[::-1]" if reverse else f"list({em.bare(args[0])})"


def _grid_name(em, e) -> str:
    return em.name_of_enum(T.strip(em.t(e.args[0])).name)


def _graph(em, e, table: str, args) -> str:
    """The graph constant `table` of the call's first argument."""
    return em.graph_table(table, e.args[0], args[0])


def _path_args(em, e, args) -> tuple[str, str, str]:
    g = _graph(em, e, "GRAPH", args)
    # a set goes as its bit mask: no members to list, and a cheap key for the distance cache
    src = args[1] if _kind(em, e, 1) == "set" else f"tuple({em.bare(args[1])})"
    allowed = args[3] if len(args) > 3 else "None"  # a bit mask: part of the distance cache key
    return g, src, allowed


def _emit_path_cost(em, e, args):
    g, src, allowed = _path_args(em, e, args)
    return f"path_cost({g}, {src}, {args[2]}, {allowed})"


def emit_path_row(em, e, args) -> str:
    """The distances path_cost(G, S, t[, A]) reads, for every t (runtime.path_row): the code
    generator fetches them once where G, S and A do not change in a loop. args: the codes
    of G, S and A (None for a call without A)."""
    g, src, allowed = _path_args(em, e, [args[0], args[1], None, args[2]])
    return f"path_row({g}, {src}, {allowed})"


_DIV0 = ("division by zero",)

BUILTINS: dict[str, Builtin] = {b.name: b for b in (
    Builtin("len", "number of elements of a set or list", _check_len,
            lambda ev, e, a, w: len(a[0]), _emit_len, _always),
    Builtin("min", "the smaller of two ints", _ints(2),
            lambda ev, e, a, w: min(a), lambda em, e, a: f"min({a[0]}, {a[1]})", _always,
            arith=True),
    Builtin("max", "the larger of two ints", _ints(2),
            lambda ev, e, a, w: max(a), lambda em, e, a: f"max({a[0]}, {a[1]})", _always,
            arith=True),
    Builtin("abs", "absolute value", _ints(1),
            lambda ev, e, a, w: abs(a[0]), lambda em, e, a: f"abs({em.bare(a[0])})", _always,
            arith=True),
    Builtin("ceil_div", "a / b rounded up", _ints(2),
            lambda ev, e, a, w: runtime.ceil_div(a[0], a[1], w),
            lambda em, e, a: f"ceil_div({a[0]}, {a[1]}, {em.location(e)})",
            _nonzero_literal_divisor, _DIV0, arith=True),
    Builtin("round_up", "a rounded up to a multiple of m", _ints(2),
            lambda ev, e, a, w: runtime.round_up(a[0], a[1], w),
            lambda em, e, a: f"round_up({a[0]}, {a[1]}, {em.location(e)})",
            _nonzero_literal_divisor, _DIV0, arith=True),
    Builtin("round_down", "a rounded down to a multiple of m", _ints(2),
            lambda ev, e, a, w: runtime.round_down(a[0], a[1], w),
            lambda em, e, a: f"round_down({a[0]}, {a[1]}, {em.location(e)})",
            _nonzero_literal_divisor, _DIV0, arith=True),
    Builtin("seats_from", "every seat, starting at p and going round",
            _check_player_fn(T.list_of(T.PLAYER)),
            lambda ev, e, a, w: runtime.seats_from(a[0], ev.num_players(e)),
            lambda em, e, a: f"s._seats[{a[0]}]", _always),
    Builtin("next_seat", "the seat after p", _check_player_fn(T.PLAYER),
            lambda ev, e, a, w: (a[0] + 1) % ev.num_players(e),
            lambda em, e, a: f"(({a[0]}) + 1) % s.n", _always),
    Builtin("as_list", "a set in member order, or a copy of a list", _check_to_list,
            lambda ev, e, a, w: _ordered(a[0]), _emit_to_list, _always),
    Builtin("reversed", "a list backwards, or a set in reverse member order", _check_to_list,
            lambda ev, e, a, w: _ordered(a[0])[::-1],
            lambda em, e, a: _emit_to_list(em, e, a, reverse=True), _always),
    Builtin("index_of", "position of the first element of a list equal to x", _check_index_of,
            lambda ev, e, a, w: runtime.index_of(a[0], a[1], w),
            lambda em, e, a: f"index_of({a[0]}, {a[1]}, {em.location(e)})", None,
            ("index_of: the value is not in the list",)),
    Builtin("neighbors", "orthogonal neighbours of a grid cell, in cell order", _check_grid_fn,
            lambda ev, e, a, w: _grid_of(ev, e)[a[0]],
            lambda em, e, a: f"NEIGHBORS_{_grid_name(em, e)}[{a[0]}]", _always),
    Builtin("connected", "cells reachable from a cell through a set of cells", _check_grid_fn,
            lambda ev, e, a, w: runtime.connected(a[0], a[1], _grid_of(ev, e)),
            lambda em, e, a: f"connected_mask({a[0]}, {a[1]}, NEIGHBOR_MASKS_{_grid_name(em, e)})",
            _always),
    Builtin("path_cost", "cheapest connection cost in a weighted graph (none: unreachable)",
            _check_graph_fn, _run_path_cost, _emit_path_cost),
    Builtin("edge_cost", "cost of the edge between two nodes (none: no edge)", _check_graph_fn,
            lambda ev, e, a, w: dict(ev.k.graphs[a[0]][a[1]]).get(a[2]),
            lambda em, e, a: f"{_graph(em, e, 'EDGE_COSTS', a)}.get(({a[1]}, {a[2]}))"),
    Builtin("graph_neighbors", "nodes joined to a node by an edge, in node order",
            _check_graph_fn,
            lambda ev, e, a, w: tuple(v for v, _w in ev.k.graphs[a[0]][a[1]]),
            lambda em, e, a: f"{_graph(em, e, 'GRAPH_NEIGHBORS', a)}[{a[1]}]"),
)}


# ---- binary operators ---------------------------------------------------------------------------
def _check_logic(chk, e, scope, ctx, want):
    chk.expect(e.left, scope, ctx, T.BOOL)
    chk.expect(e.right, scope, ctx, T.BOOL)
    return T.BOOL


def _check_member(chk, e, scope, ctx, want):
    ct = T.strip(chk.infer(e.right, scope, ctx))
    if ct.kind in ("set", "list"):
        chk.expect(e.left, scope, ctx, ct.elem)
    else:
        if ct.kind != "any":
            chk.error("E012", f"'{e.op}' needs a set or list on the right, not {ct}",
                      e.right.span)
        chk.infer(e.left, scope, ctx)
    return T.BOOL


def _check_equal(chk, e, scope, ctx, want):
    a = chk.infer(e.left, scope, ctx)
    b = chk.infer(e.right, scope, ctx, a)
    if T.join(a, b) is None:
        chk.error("E012", f"cannot compare {a} with {b}", e.span)
    return T.BOOL


def _check_order(chk, e, scope, ctx, want):
    a = T.strip(chk.infer(e.left, scope, ctx))
    b = T.strip(chk.infer(e.right, scope, ctx))
    mixed = a != b and "any" not in (a.kind, b.kind)
    if mixed or a.kind not in ("int", "player", "enum", "any"):
        chk.error("E012", f"cannot order {a} and {b}", e.span)
    return T.BOOL


def _check_arith(chk, e, scope, ctx, want):
    # ints; '+' also joins lists and sets, '-' also removes from sets
    a = T.strip(chk.infer(e.left, scope, ctx, want))
    if a.kind in ("set", "list") and e.op in ("+", "-"):
        if a.kind == "list" and e.op == "-":
            chk.error("E012", "'-' is not defined on lists", e.span)
        chk.expect(e.right, scope, ctx, a)
        return a
    if not T.compatible(T.INT, a):
        chk.error("E012", f"'{e.op}' needs int operands, found {a}", e.left.span)
    chk.expect(e.right, scope, ctx, T.INT)
    return T.INT


def _run_plus(a, b, where):
    return a | b if isinstance(a, frozenset) else a + b


def _emit_plus(a, b, where, sets):
    return f"({a} | {b})" if sets else f"({a} + {b})"


def _emit_minus(a, b, where, sets):
    return f"({a} & ~{b})" if sets else f"({a} - {b})"


def _pure(f: Callable) -> Callable:
    """The reference implementation (a, b, where) of an operator that cannot fault: f(a, b)."""
    return lambda a, b, w: f(a, b)


def _order(op: str, pure: Callable, flip: str) -> BinaryOp:
    return BinaryOp(op, "order", _check_order, _pure(pure),
                    lambda a, b, w, sets: f"({a} {op} {b})", flip, pure=pure)


BINARY_OPS: dict[str, BinaryOp] = {b.op: b for b in (
    BinaryOp("and", "logic", _check_logic, None, None),
    BinaryOp("or", "logic", _check_logic, None, None),
    # On a bit-mask set, `sets` is the element's one-bit mask (1 << a), which comes first: the
    # element is evaluated (and none-checked) before the set, as in the interpreter.
    BinaryOp("in", "member", _check_member, lambda a, b, w: a in b,
             lambda a, b, w, sets: f"(({sets} & {b}) != 0)" if sets else f"({a} in {b})",
             "not in"),
    BinaryOp("not in", "member", _check_member, lambda a, b, w: a not in b,
             lambda a, b, w, sets: f"(({sets} & {b}) == 0)" if sets
             else f"({a} not in {b})", "in"),
    BinaryOp("==", "equal", _check_equal, _pure(operator.eq),
             lambda a, b, w, sets: f"({a} == {b})", "!=", pure=operator.eq),
    BinaryOp("!=", "equal", _check_equal, _pure(operator.ne),
             lambda a, b, w, sets: f"({a} != {b})", "==", pure=operator.ne),
    _order("<", operator.lt, ">="),
    _order("<=", operator.le, ">"),
    _order(">", operator.gt, "<="),
    _order(">=", operator.ge, "<"),
    # ints add, sets join (a list's `+` is runtime.concat, with its size limit)
    BinaryOp("+", "arith", _check_arith, _run_plus, _emit_plus),
    # ints subtract, sets remove
    BinaryOp("-", "arith", _check_arith, _pure(operator.sub), _emit_minus, pure=operator.sub),
    BinaryOp("*", "arith", _check_arith, _pure(operator.mul),
             lambda a, b, w, sets: f"({a} * {b})", pure=operator.mul),
    BinaryOp("//", "arith", _check_arith, runtime.floor_div,
             lambda a, b, w, sets: f"floor_div({a}, {b}, {w})", faults=_DIV0, fast="//"),
    BinaryOp("%", "arith", _check_arith, runtime.mod,
             lambda a, b, w, sets: f"mod({a}, {b}, {w})", faults=("modulo by zero",),
             fast="%"),
)}

# Aggregates over a collection: name -> (element type wanted, result type; None: the element's
# type made optional)
AGGREGATES: dict[str, tuple[T.Type, T.Type | None]] = {
    "sum": (T.INT, T.INT), "min": (T.INT, T.INT), "max": (T.INT, T.INT),
    "any": (T.BOOL, T.BOOL), "all": (T.BOOL, T.BOOL), "count": (T.BOOL, T.INT),
    "first": (T.ANY, None),
}
