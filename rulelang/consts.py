"""Constant evaluation, shared by both back ends: parameters, constants, enum fields, table rows,
grid neighbours and graph adjacency, worked out once at load by the reference evaluator of
expressions (which the interpreter extends with state, defs and statements).

Tables are evaluated at load on both back ends: a row that faults is a RulesRuntimeError when
the rules file is loaded, with the row's location.
"""

from __future__ import annotations

from rulelang import ast, runtime
from rulelang import types as T
from rulelang.errors import RulesRuntimeError, Span
from rulelang.program import Program
from rulelang.semantics import BINARY_OPS, BUILTINS


def loc(span: Span) -> str:
    return f"{span.file}:{span.line}:{span.col}"


class Constants:
    """The compile-time values of one checked program (one variant, one parameter set)."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.neighbors: dict[str, tuple] = {}
        for info in program.enums.values():
            if info.grid is not None:
                _c0, ncols, rows = info.grid
                self.neighbors[info.name] = runtime.grid_neighbors(ncols, len(rows))
        self.graphs = {name: graph_adjacency(program, g) for name, g in program.graphs.items()}
        # Parameters and constants may use each other in any order (the checker has ruled out
        # circles), so each is worked out when first needed.
        self.param_values: dict[str, object] = {}
        self.const_values: dict[str, object] = {}
        self.enum_fields: dict[str, list[tuple]] = {}
        for name in program.params:
            self.param(name)
        for name in program.consts:
            self.const(name)
        for name in program.enums:
            self.fields(name)
        self.table_rows = {name: self._table_rows(name) for name in program.tables}
        self.params = {n: format_value(program, self.param_values[n], program.param_types[n])
                       for n in program.params}

    def param(self, name: str):
        if name not in self.param_values:
            p = self.program
            self.param_values[name] = (p.param_values[name] if name in p.param_values
                                       else self.eval_const(p.param_exprs[name]))
        return self.param_values[name]

    def const(self, name: str):
        if name not in self.const_values:
            self.const_values[name] = self.eval_const(self.program.consts[name].value)
        return self.const_values[name]

    def fields(self, enum: str) -> list[tuple]:
        if enum not in self.enum_fields:
            self.enum_fields[enum] = [tuple(self.eval_const(a) for a in args)
                                      for args in self.program.enums[enum].member_args]
        return self.enum_fields[enum]

    def _table_rows(self, name: str) -> list:
        program = self.program
        t = program.tables[name]
        ktypes = [program.field_type(f) for f in t.params]
        return [(tuple(table_key(program, k, kt) for k, kt in zip(row.keys, ktypes)),
                 self.eval_const(row.value)) for row in t.rows]

    def eval_const(self, e):
        """Value of an expression that reads no state."""
        return ExprEvaluator(self).eval(e, {})


class ExprEvaluator:
    """eval_<Node> for every expression node: the reference meaning of expressions.

    Every place where `none` cannot stand is checked with nn/conv, at the span of the expression
    that produced it; generated engines check exactly the same places."""

    def __init__(self, constants: Constants) -> None:
        self.k = constants
        self.p = constants.program

    # -- hooks the interpreter fills in
    def var(self, name: str):
        raise RulesRuntimeError(f"state '{name}' is not available here", "<constants>")

    def num_players(self, e) -> int:
        raise RulesRuntimeError("the number of players is not known here", loc(e.span))

    def call_def(self, d: ast.DefDecl, args: list):
        raise RulesRuntimeError(f"def '{d.name}' cannot be called here", loc(d.span))

    # -- helpers
    def nn(self, e, env):
        v = self.eval(e, env)
        if v is None:
            runtime.fault_none(loc(e.span))
        return v

    def conv(self, e, env, want: T.Type):
        """e's value where a value of type `want` is expected (none only if want allows it)."""
        v = self.eval(e, env)
        if v is None and want.kind not in ("opt", "none", "any"):
            runtime.fault_none(loc(e.span))
        return v

    def truth(self, e, env) -> bool:
        return bool(self.eval(e, env))

    def iterate(self, e, env) -> tuple:
        v = self.nn(e, env)
        return tuple(sorted(v)) if isinstance(v, frozenset) else tuple(v)

    # -- expressions
    def eval(self, e, env: dict):
        return getattr(self, "eval_" + type(e).__name__)(e, env)

    def eval_IntLit(self, e, env):
        return e.value

    def eval_BoolLit(self, e, env):
        return e.value

    def eval_NoneLit(self, e, env):
        return None

    def eval_Name(self, e, env):
        ref = self.p.refs[e]
        kind = ref[0]
        if kind == "local":
            return env[ref[1]]
        if kind == "state":
            return self.var(ref[1])
        if kind == "param":
            return self.k.param(ref[1])
        if kind == "const":
            return self.k.const(ref[1])
        if kind == "member":
            return ref[2]
        if kind == "enum_all":
            return frozenset(range(len(self.p.enums[ref[1]].members)))
        if kind == "graph":
            return ref[1]
        if kind == "players":
            return tuple(range(self.num_players(e)))
        if kind == "num_players":
            return self.num_players(e)
        raise AssertionError(ref)

    def eval_CondExpr(self, e, env):
        return self.eval(e.then, env) if self.truth(e.cond, env) else self.eval(e.orelse, env)

    def eval_BinOp(self, e, env):
        op = BINARY_OPS[e.op]
        if op.kind == "logic":
            if e.op == "and":
                return self.truth(e.left, env) and self.truth(e.right, env)
            return self.truth(e.left, env) or self.truth(e.right, env)
        if op.kind == "member":
            is_set = T.strip(self.p.types[e.right]).kind == "set"
            a = self.nn(e.left, env) if is_set else self.eval(e.left, env)
            return op.run(a, self.nn(e.right, env), None)
        if op.kind == "equal":
            return op.run(self.eval(e.left, env), self.eval(e.right, env), None)
        a = self.nn(e.left, env)
        b = self.nn(e.right, env)
        return op.run(a, b, loc(e.span))

    def eval_Not(self, e, env):
        return not self.truth(e.operand, env)

    def eval_Neg(self, e, env):
        return -self.nn(e.operand, env)

    def eval_Range(self, e, env):
        lo, hi = self.nn(e.lo, env), self.nn(e.hi, env)
        step = self.nn(e.step, env) if e.step is not None else 1
        return tuple(runtime.int_range(lo, hi, step, loc(e.span)))

    def eval_Index(self, e, env):
        obj = self.nn(e.obj, env)
        ix = self.nn(e.index, env)
        return runtime.list_item(obj, ix, loc(e.span))

    def eval_Attr(self, e, env):
        ref = self.p.refs[e]
        if ref[0] == "member":
            return ref[2]
        v = self.nn(e.obj, env)
        if ref[0] == "cell":
            info = self.p.enums[T.strip(self.p.types[e.obj]).name]
            c0, ncols, _rows = info.grid
            return v % ncols + c0 if ref[1] == "col" else v // ncols
        return self.k.fields(ref[1])[v][ref[2]]

    def eval_Call(self, e, env):
        ref = self.p.refs[e]
        if ref[0] == "def":
            d = self.p.defs[ref[1]]
            args = [self.conv(a, env, self.p.slot_types[self.p.slots[f]])
                    for a, f in zip(e.args, d.params)]
            return self.call_def(d, args)
        args = [self.nn(a, env) for a in e.args]
        if ref[0] == "table":
            return self.lookup(ref[1], args, e.span)
        return BUILTINS[e.name].run(self, e, args, loc(e.span))

    def lookup(self, name: str, args: list, span: Span):
        for keys, value in self.k.table_rows[name]:
            if all(key_match(k, a) for k, a in zip(keys, args)):
                return value
        return runtime.fault_no_row(name, args, loc(span))

    def eval_Agg(self, e, env):
        slot = self.p.slots[e]
        f = e.func
        items = []
        for x in self.iterate(e.iter, env):
            inner = {**env, slot: x}
            if e.cond is not None and not self.truth(e.cond, inner):
                continue
            if f in ("count", "any", "all"):
                items.append(self.truth(e.elem, inner))
            elif f == "first":
                return self.eval(e.elem, inner)
            else:
                items.append(self.nn(e.elem, inner))
        if f == "count":
            return sum(1 for x in items if x)
        if f == "sum":
            return sum(items)
        if f == "any":
            return any(items)
        if f == "all":
            return all(items)
        if f == "first":
            return None
        return runtime.extreme(items, min if f == "min" else max, f, loc(e.span))

    def eval_Sort(self, e, env):
        slot = self.p.slots[e]
        items = self.iterate(e.iter, env)

        def key(x):
            inner = {**env, slot: x}
            out = []
            for k in e.keys:
                v = self.nn(k.key, inner)
                out.append(-v if k.descending else v)
            return tuple(out)

        return tuple(sorted(items, key=key))

    def eval_ListLit(self, e, env):
        return tuple(self.eval(x, env) for x in e.items)

    def eval_SetLit(self, e, env):
        items = [self.eval(x, env) for x in e.items]
        if None in items:
            runtime.fault_set_none(loc(e.span))
        return frozenset(items)

    def eval_Comp(self, e, env):
        slot = self.p.slots[e]
        out = []
        for x in self.iterate(e.iter, env):
            inner = {**env, slot: x}
            if e.cond is None or self.truth(e.cond, inner):
                out.append(self.eval(e.elem, inner))
        if e.kind == "set":
            if None in out:
                runtime.fault_set_none(loc(e.elem.span))
            return frozenset(out)
        return tuple(out)


def format_value(program: Program, v, t: T.Type):
    """JSON form of a value of type t (interpreter layout)."""
    if v is None:
        return None
    t = T.strip(t)
    k = t.kind
    if k == "enum":
        return program.enums[t.name].members[v]
    if k in ("int", "player", "bool", "any"):
        return v
    if k == "set":
        return [format_value(program, x, t.elem) for x in sorted(v)]
    if k == "list":
        return [format_value(program, x, t.elem) for x in v]
    if k == "array":
        if t.index.kind == "enum":
            names = program.enums[t.index.name].members
            return {names[i]: format_value(program, x, t.elem) for i, x in enumerate(v)}
        return [format_value(program, x, t.elem) for x in v]
    raise AssertionError(t)


def graph_adjacency(program: Program, g: ast.GraphDecl) -> tuple:
    """adj[i] = ((neighbour, cost), ...) in neighbour order, for an undirected graph."""
    members = program.enums[g.node_type].members
    adj: list[list] = [[] for _ in members]
    for e in g.edges:
        a, b = members.index(e.a), members.index(e.b)
        adj[a].append((b, e.cost))
        adj[b].append((a, e.cost))
    return tuple(tuple(sorted(x)) for x in adj)


def key_match(k: tuple, a) -> bool:
    kind, lo, hi = k
    if kind == "any":
        return True
    if a is None:
        return False
    if kind == "range":
        return lo <= a <= hi
    if kind == "from":
        return a >= lo
    return a == lo  # "int", and "name" resolved to its member index


def table_key(program: Program, k: ast.KeyPat, key_type: T.Type) -> tuple:
    """A table key pattern as (kind, lo, hi) with enum names resolved to member indexes."""
    if k.kind == "name" and key_type.kind == "bool":
        return ("int", k.name == "true", None)
    if k.kind == "name":
        return ("int", program.enums[key_type.name].members.index(k.name), None)
    return (k.kind, k.lo, k.hi)
