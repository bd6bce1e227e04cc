"""Constant evaluation, shared by both back ends: parameters, constants, enum fields, table rows,
grid neighbours and graph adjacency, worked out once at load by the reference evaluator of
expressions (which the interpreter extends with state, defs and statements).

Tables are evaluated at load on both back ends: a row that faults is a RulesRuntimeError when
the rules file is loaded, with the row's location.

Also here, for both back ends: where the int limit (Limits.max_int_digits) is checked. Every
int a program starts from (a literal, parameter, constant, table value or enum field) is checked
at load, and every value that may have grown (`Growth`) where it is kept: bound by `let`,
assigned, added to with `+=`/`-=`, pushed, put in a list literal or comprehension, passed to a
def or a phase, used as a range bound, and scores. So no variable ever holds an int over the
limit, and an expression's ints stay within a power of it fixed by the expression's size:
nothing that grows with run time escapes a check. Products are checked where they are kept,
not where they are made, so `when` tests (the hot path of legal-action listing) are never
checked: a value that is only compared cannot escape.
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
        # loc(node.span) per node, made on first use: most evaluations pass a location to a
        # check that passes, so formatting it each time would be wasted.
        self.locs = _Locations()
        self.growth = Growth(program, self)
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
        self._check_sizes()

    def _check_sizes(self) -> None:
        """Every int the program starts from is within the int limit (checked at load)."""
        p = self.program
        top = p.limits.int_max
        for node in p.types:
            if isinstance(node, ast.IntLit) and not -top <= node.value <= top:
                runtime.fault_int_limit(top, loc(node.span))
        for name in p.params:
            _check_value(self.param_values[name], top, p.params[name].span)
        for name, d in p.consts.items():
            _check_value(self.const_values[name], top, d.span)
        for name, rows in self.table_rows.items():
            for row, (_keys, value) in zip(p.tables[name].rows, rows):
                _check_value(value, top, row.value.span)
        for name, vals in self.enum_fields.items():
            for args, row in zip(p.enums[name].member_args, vals):
                for a, v in zip(args, row):
                    _check_value(v, top, a.span)

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


class _Locations(dict):
    """node -> loc(node.span), filled in on first use."""

    def __missing__(self, node) -> str:
        w = self[node] = loc(node.span)
        return w


def _check_value(v, top: int, span: Span) -> None:
    if isinstance(v, bool) or v is None:
        return
    if isinstance(v, int):
        runtime.bounded(v, top, loc(span))
    elif isinstance(v, tuple | list | frozenset):
        for x in v:
            _check_value(x, top, span)


# Builtins whose int result may be larger than every int they read.
GROWING_BUILTINS = frozenset({"round_up", "round_down", "path_cost"})


class Growth:
    """Which expressions may yield an int larger (in absolute value) than every int they read:
    `+`, `-` and `*` on ints, `sum`, round_up/round_down, path_cost, and calls of defs that may
    return such a value (a def's lets and assignments are checked where they are kept). Not
    `//`, `%`, unary minus, abs, min, max, len or count.
    Both back ends check exactly the values this marks, at the same places."""

    def __init__(self, program: Program, constants: Constants) -> None:
        self.p = program
        self.k = constants
        self._defs: dict[str, bool] = {}
        self._max: dict[int, int | None] = {}
        # Values of lets and assignments in a def, outside its loops, that only add or
        # subtract (no `*`, no def call): left unchecked, since each adds at most a bit or a
        # few and the def's result is checked where it is kept (def_grows counts them).
        self.exempt: set[int] = set()
        self._exempt_in: dict[str, bool] = {}
        self._grows: dict[object, bool] = {}
        for name, d in program.defs.items():
            if isinstance(d.body, ast.Block):
                before = len(self.exempt)
                self._straight(d.body.stmts)
                self._exempt_in[name] = len(self.exempt) > before
        self._grows.clear()  # answers given while `exempt` was still being filled in

    def _straight(self, stmts) -> None:
        for s in stmts:
            if isinstance(s, ast.Let | ast.Assign) and self(s.value) and not any(
                    isinstance(n, ast.Call) and self.p.refs[n][0] == "def"
                    or isinstance(n, ast.BinOp) and n.op == "*" for n in _nodes(s.value)):
                self.exempt.add(id(s.value))
            elif isinstance(s, ast.If):
                for _c, b in s.branches:
                    self._straight(b.stmts)
                if s.orelse is not None:
                    self._straight(s.orelse.stmts)

    def __call__(self, e) -> bool:
        grows = self._grows.get(e)
        if grows is None:
            grows = self._grows[e] = self._compute(e)
        return grows

    def _compute(self, e) -> bool:
        if id(e) in self.exempt:
            return False
        if isinstance(e, ast.BinOp):
            return e.op in ("+", "-", "*") and T.strip(self.p.types[e]).kind in ("int", "any")
        if isinstance(e, ast.CondExpr):
            return self(e.then) or self(e.orelse)
        if isinstance(e, ast.Agg):
            return e.func == "sum"
        if isinstance(e, ast.Call):
            ref = self.p.refs[e]
            if ref[0] == "def":
                return self.def_grows(ref[1])
            return ref[0] == "builtin" and e.name in GROWING_BUILTINS
        return False

    def within_limit(self, e) -> bool:
        """Whether e's value is known, from constants alone, never to exceed the int limit: a
        check of it could never fail, so a generated engine may leave it out."""
        top = self.static_max(e)
        return top is not None and top <= self.p.limits.int_max

    def static_max(self, e) -> int | None:
        """An upper bound on the absolute value of an int expression known from its constants
        (literals, parameters, constants, enum fields, table values), or None."""
        key = id(e)
        if key not in self._max:
            self._max[key] = self._static_max(e)
        return self._max[key]

    def _static_max(self, e) -> int | None:
        p = self.p
        if isinstance(e, ast.IntLit):
            return abs(e.value)
        if isinstance(e, ast.Name):
            ref = p.refs[e]
            if ref[0] == "num_players":
                return p.max_players
            if ref[0] in ("param", "const"):
                v = self.k.param_values.get(ref[1]) if ref[0] == "param" \
                    else self.k.const_values.get(ref[1])
                return abs(v) if isinstance(v, int) else None
            return None
        if isinstance(e, ast.Attr):
            ref = p.refs[e]
            if ref[0] == "field":
                vals = [row[ref[2]] for row in self.k.enum_fields.get(ref[1], [])]
                if vals and all(isinstance(v, int) for v in vals):
                    return max(abs(v) for v in vals)
            return None
        if isinstance(e, ast.Neg):
            return self.static_max(e.operand)
        if isinstance(e, ast.CondExpr):
            a, b = self.static_max(e.then), self.static_max(e.orelse)
            return None if a is None or b is None else max(a, b)
        if isinstance(e, ast.Agg) and e.func == "count":
            return p.limits.max_collection
        if isinstance(e, ast.Call):
            ref = p.refs[e]
            if ref == ("builtin", "len"):
                return p.limits.max_collection
            if ref[0] == "table":
                vals = [v for _k, v in self.k.table_rows.get(ref[1], [])]
                if vals and all(isinstance(v, int) for v in vals):
                    return max(abs(v) for v in vals)
            return None
        if isinstance(e, ast.BinOp) and e.op in ("+", "-", "*", "//", "%"):
            a, b = self.static_max(e.left), self.static_max(e.right)
            if e.op == "//":
                return a
            if e.op == "%":
                return b
            if a is None or b is None:
                return None
            return a * b if e.op == "*" else a + b
        return None

    def small_range(self, e: ast.Range) -> bool:
        """Whether a range's bounds are known from constants to be so small that it can never
        be over the size limit (nor its step bad): no run-time check needed."""
        lo, hi = self.static_max(e.lo), self.static_max(e.hi)
        step_ok = e.step is None or (isinstance(e.step, ast.IntLit) and e.step.value > 0)
        return step_ok and lo is not None and hi is not None \
            and lo + hi < self.p.limits.max_collection

    def def_grows(self, name: str) -> bool:
        if name not in self._defs:
            self._defs[name] = False  # a cycle adds no growth of its own
            body = self.p.defs[name].body
            self._defs[name] = (self._exempt_in[name]
                                or any(self(r.value) for r in _returns_in(body.stmts))
                                if isinstance(body, ast.Block) else self(body))
        return self._defs[name]


def _nodes(e):
    """An expression's nodes (not into def bodies)."""
    yield e
    for f in getattr(e, "__dataclass_fields__", ()):
        if f == "span":
            continue
        v = getattr(e, f)
        for x in (v if isinstance(v, tuple | list) else (v,)):
            if hasattr(x, "__dataclass_fields__") and not isinstance(x, Span):
                yield from _nodes(x)


def _returns_in(stmts) -> list:
    out = []
    for s in stmts:
        if isinstance(s, ast.Return):
            out.append(s)
        elif isinstance(s, ast.If):
            for _c, b in s.branches:
                out += _returns_in(b.stmts)
            if s.orelse is not None:
                out += _returns_in(s.orelse.stmts)
        elif isinstance(s, ast.For | ast.While):
            out += _returns_in(s.body.stmts)
    return out


_ABSENT = object()


class ExprEvaluator:
    """eval_<Node> for every expression node: the reference meaning of expressions.

    Every place where `none` cannot stand is checked with nn/conv, at the span of the expression
    that produced it; generated engines check exactly the same places.

    `eval` finds eval_<Node> in a table per evaluator class (node class -> function), filled on
    first use, rather than building the method name on every call. Comprehensions and
    aggregates bind their variable in the caller's env for the time of the loop (each has a
    slot of its own) instead of copying the env for every element."""

    _evals: dict[type, object] = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._evals = {}

    def __init__(self, constants: Constants) -> None:
        self.k = constants
        self.p = constants.program
        self.limits = self.p.limits
        self.int_max = self.limits.int_max

    # -- hooks the interpreter fills in
    def var(self, name: str):
        raise RulesRuntimeError(f"state '{name}' is not available here", "<constants>")

    def num_players(self, e) -> int:
        raise RulesRuntimeError("the number of players is not known here", loc(e.span))

    def call_def(self, d: ast.DefDecl, args: list):
        raise RulesRuntimeError(f"def '{d.name}' cannot be called here", loc(d.span))

    def stops_early(self, e: ast.Agg) -> bool:
        """Whether an `any` / `all` may stop at its first deciding element: only when no element
        can fault (by default every element is evaluated, so a later fault is reported)."""
        return False

    # -- helpers
    def at(self, e) -> str:
        """loc(e.span), made once per node."""
        return self.k.locs[e]

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

    def kept(self, e, v):
        """v, the value of e where it is kept (bound, stored, passed on): checked against the
        int limit if e may have grown."""
        if v is not None and self.k.growth(e):
            runtime.bounded(v, self.int_max, self.at(e))
        return v

    def truth(self, e, env) -> bool:
        return bool(self.eval(e, env))

    def iterate(self, e, env) -> tuple:
        v = self.nn(e, env)
        return tuple(sorted(v)) if isinstance(v, frozenset) else tuple(v)

    # -- expressions
    def eval(self, e, env: dict):
        try:
            f = self._evals[type(e)]
        except KeyError:
            f = self._evals[type(e)] = getattr(type(self), "eval_" + type(e).__name__)
        return f(self, e, env)

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
        if e.op == "and":  # truth() written out, here and below
            return bool(self.eval(e.left, env)) and bool(self.eval(e.right, env))
        if e.op == "or":
            return bool(self.eval(e.left, env)) or bool(self.eval(e.right, env))
        op = BINARY_OPS[e.op]
        if op.kind == "member":
            is_set = T.strip(self.p.types[e.right]).kind == "set"
            a = self.nn(e.left, env) if is_set else self.eval(e.left, env)
            return op.run(a, self.nn(e.right, env), None)
        if op.kind == "equal":
            return op.run(self.eval(e.left, env), self.eval(e.right, env), None)
        # nn() written out: this is the hottest path of `when` tests
        a = self.eval(e.left, env)
        if a is None:
            runtime.fault_none(loc(e.left.span))
        b = self.eval(e.right, env)
        if b is None:
            runtime.fault_none(loc(e.right.span))
        if e.op == "+" and isinstance(a, tuple):
            return runtime.concat(a, b, self.limits.max_collection, self.k.locs[e])
        return op.run(a, b, self.k.locs[e])

    def eval_Not(self, e, env):
        return not self.truth(e.operand, env)

    def eval_Neg(self, e, env):
        return -self.nn(e.operand, env)

    def eval_Range(self, e, env):
        lo = self.kept(e.lo, self.nn(e.lo, env))
        hi = self.kept(e.hi, self.nn(e.hi, env))
        step = self.kept(e.step, self.nn(e.step, env)) if e.step is not None else 1
        return tuple(runtime.int_range(lo, hi, step, self.k.locs[e], self.limits.max_collection))

    def eval_Index(self, e, env):
        obj = self.eval(e.obj, env)
        if obj is None:
            runtime.fault_none(loc(e.obj.span))
        ix = self.eval(e.index, env)
        if ix is None:
            runtime.fault_none(loc(e.index.span))
        return runtime.list_item(obj, ix, self.k.locs[e])

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
            args = [self.kept(a, self.conv(a, env, self.p.slot_types[self.p.slots[f]]))
                    for a, f in zip(e.args, d.params)]
            return self.call_def(d, args)
        args = [self.nn(a, env) for a in e.args]
        if ref[0] == "table":
            return self.lookup(ref[1], args, e.span)
        return BUILTINS[e.name].run(self, e, args, self.k.locs[e])

    def lookup(self, name: str, args: list, span: Span):
        for keys, value in self.k.table_rows[name]:
            if all(key_match(k, a) for k, a in zip(keys, args)):
                return value
        return runtime.fault_no_row(name, args, loc(span))

    def eval_Agg(self, e, env):
        slot = self.p.slots[e]
        f = e.func
        items = []
        # `any` stops at a true element, `all` at a false one, when stops_early allows
        decides = (f == "any") if f in ("any", "all") and self.stops_early(e) else None
        old = env.get(slot, _ABSENT)
        try:
            for x in self.iterate(e.iter, env):
                env[slot] = x
                if e.cond is not None and not self.truth(e.cond, env):
                    continue
                if f in ("count", "any", "all"):
                    t = self.truth(e.elem, env)
                    if t is decides:
                        return t
                    items.append(t)
                elif f == "first":
                    return self.eval(e.elem, env)
                else:
                    items.append(self.nn(e.elem, env))
        finally:
            _restore(env, slot, old)
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
            env[slot] = x
            out = []
            for k in e.keys:
                v = self.nn(k.key, env)
                out.append(-v if k.descending else v)
            return tuple(out)

        old = env.get(slot, _ABSENT)
        try:
            return tuple(sorted(items, key=key))
        finally:
            _restore(env, slot, old)

    def eval_ListLit(self, e, env):
        return tuple(self.kept(x, self.eval(x, env)) for x in e.items)

    def eval_SetLit(self, e, env):
        items = [self.eval(x, env) for x in e.items]
        if None in items:
            runtime.fault_set_none(loc(e.span))
        return frozenset(items)

    def eval_ArrayLit(self, e, env):
        return tuple(self.kept(x, self.eval(x, env)) for x in self.p.array_values[e])

    def eval_Comp(self, e, env):
        slot = self.p.slots[e]
        out = []
        old = env.get(slot, _ABSENT)
        try:
            for x in self.iterate(e.iter, env):
                env[slot] = x
                if e.cond is None or self.truth(e.cond, env):
                    out.append(self.kept(e.elem, self.eval(e.elem, env)) if e.kind == "list"
                               else self.eval(e.elem, env))
        finally:
            _restore(env, slot, old)
        if e.kind == "set":
            if None in out:
                runtime.fault_set_none(loc(e.elem.span))
            return frozenset(out)
        return tuple(out)


def _restore(env: dict, slot: str, old) -> None:
    """Put back what env held at slot before a comprehension bound its variable there."""
    if old is _ABSENT:
        env.pop(slot, None)
    else:
        env[slot] = old


def format_value(program: Program, v, t: T.Type):
    """JSON form of a value of type t (interpreter layout)."""
    if v is None:
        return None
    t = T.strip(t)
    k = t.kind
    if k == "enum":
        return program.enums[t.name].members[v]
    if k in ("int", "player", "bool", "any", "graph"):  # a graph value is its name
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
