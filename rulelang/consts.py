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

import operator
from collections.abc import Mapping
from functools import partial
from operator import itemgetter
from types import MappingProxyType

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
        self.int_max = program.limits.int_max  # worked out once (a power of ten)
        # loc(node.span) per node, made on first use: most evaluations pass a location to a
        # check that passes, so formatting it each time would be wasted.
        self.locs = _Locations()
        # the meaning of each expression node evaluated so far, as a function (ExprEvaluator)
        self.fns: dict[object, object] = {}
        # per table, the value found for each argument tuple looked up so far
        self.table_found: dict[str, dict[tuple, object]] = {}
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
        try:
            for name in program.params:
                self.param(name)
            for name in program.consts:
                self.const(name)
            for name in program.enums:
                self.fields(name)
            self.table_rows = {name: self._table_rows(name) for name in program.tables}
            self.params = {n: format_value(program, self.param_values[n],
                                           program.param_types[n])
                           for n in program.params}
            self._check_sizes()
        except RulesRuntimeError as err:
            # a fault found while loading: the file is refused as a checker error would
            # refuse it (errors.load_fault_error reads this mark; it does not cross processes)
            err.loading_program = program
            raise

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

    def eval_const(self, e, env: dict | None = None):
        """Value of an expression that reads no state (and only the locals in `env`, by slot)."""
        return ExprEvaluator(self).eval(e, env or {})


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


ARITH_BOUND_OPS = ("+", "-", "*", "//", "%")


def arith_bound(op: str, a: int | None, b: int | None) -> int | None:
    """An upper bound on |x op y| given |x| <= a and |y| <= b (None: unknown): a // y is no
    larger than x, x % y is smaller than y. Shared by the constant bounds here and the code
    generator's range facts (codegen.analysis.int_bound)."""
    if op == "//":
        return a
    if op == "%":
        return b
    if a is None or b is None:
        return None
    return a * b if op == "*" else a + b


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
        if isinstance(e, ast.BinOp) and e.op in ARITH_BOUND_OPS:
            return arith_bound(e.op, self.static_max(e.left), self.static_max(e.right))
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


class _NoState(dict):
    """The state variables of the constant evaluator: none (reading one is an error)."""

    def __missing__(self, name: str):
        raise RulesRuntimeError(f"state '{name}' is not available here", "<constants>")


class ExprEvaluator:
    """The reference meaning of every expression node, in one method fn_<Node> per node class.

    fn_<Node>(e) returns the meaning of node e as a function f(ev, env) -> value, where ev is
    the evaluator of the moment (it gives the state, the number of players and the defs) and
    env the locals. Each f is a plain transcription of the node's meaning: it calls the
    functions of its children, then the same semantics entries (BINARY_OPS, BUILTINS, runtime)
    a generated engine uses. What depends only on the node is looked up once, when f is made:
    the name's kind and slot, the operator, the node's location for fault messages, whether its
    value may have grown (Growth), the value of a parameter, constant or enum member. f is
    made on a node's first evaluation and kept in `fns` (the Constants' table for constants,
    the Game's for the interpreter), so no evaluation walks the AST or looks a name up again.

    Every place where `none` cannot stand is checked (nn_fn/conv_fn), at the location of the
    expression that produced it; generated engines check exactly the same places. In the hot
    functions an operand that names a local is read in place (local_slot) and a right operand
    whose value is fixed when the function is made is held (known_value): the same value, the
    same checks, one call fewer.
    Comprehensions and aggregates bind their variable in env for the time of the loop (each has
    a slot of its own) instead of copying env for every element."""

    _makers: dict[type, object] = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._makers = {}

    def __init__(self, constants: Constants, fns: dict | None = None) -> None:
        self.k = constants
        self.p = constants.program
        self.limits = self.p.limits
        self.int_max = constants.int_max
        self.fns = constants.fns if fns is None else fns
        self.vars: dict = _NoState()

    # -- hooks the interpreter fills in
    def var(self, name: str):
        return self.vars[name]

    def num_players(self, e) -> int:
        raise RulesRuntimeError("the number of players is not known here", loc(e.span))

    # The defs' memo tables (def -> {argument tuple: value}) whose values a def call takes in
    # place (fn_Call); the interpreter gives its state's. None here: every call is call_def's.
    memo: Mapping = MappingProxyType({})

    def call_def(self, d: ast.DefDecl, args: tuple, table=None):
        """Def d's value for args (called when ev.memo has none for them; `table`: d's table
        in ev.memo, just found to lack them, or None when there is none)."""
        raise RulesRuntimeError(f"def '{d.name}' cannot be called here", loc(d.span))

    def stops_early(self, e: ast.Agg) -> bool:
        """Whether an `any` / `all` may stop at its first deciding element: only when no element
        can fault (by default every element is evaluated, so a later fault is reported)."""
        return False

    # -- evaluating
    def eval(self, e, env: dict):
        return self.fn(e)(self, env)

    def fn(self, e):
        """The function f(ev, env) giving e's value, made once."""
        f = self.fns.get(e)
        if f is None:
            make = self._makers.get(type(e))
            if make is None:
                make = self._makers[type(e)] = getattr(type(self), "fn_" + type(e).__name__)
            f = self.fns[e] = make(self, e)
        return f

    def nn(self, e, env):
        v = self.fn(e)(self, env)
        if v is None:
            runtime.fault_none(self.at(e))
        return v

    def conv(self, e, env, want: T.Type):
        """e's value where a value of type `want` is expected (none only if want allows it)."""
        v = self.fn(e)(self, env)
        if v is None and want.kind not in ("opt", "none", "any"):
            runtime.fault_none(self.at(e))
        levels = self.none_levels(e, want)
        if levels is not None:
            runtime.no_none_in(v, levels, self.at(e))
        return v

    def kept(self, e, v):
        """v, the value of e where it is kept (bound, stored, passed on): checked against the
        int limit if e may have grown."""
        if v is not None and self.k.growth(e):
            runtime.bounded(v, self.int_max, self.at(e))
        return v

    def truth(self, e, env) -> bool:
        return bool(self.fn(e)(self, env))

    def iterate(self, e, env) -> tuple:
        v = self.nn(e, env)
        return tuple(sorted(v)) if isinstance(v, frozenset) else tuple(v)

    # -- helpers
    def at(self, e) -> str:
        """loc(e.span), made once per node."""
        return self.k.locs[e]

    def nn_fn(self, e):
        """e's function, checked not to give none: e's own when its node never gives none,
        whatever its operands (never_none: the check could not fail)."""
        f, where = self.fn(e), self.at(e)
        if never_none(self.p, e):
            return f

        def nn(ev, env):
            v = f(ev, env)
            if v is None:
                runtime.fault_none(where)
            return v
        return nn

    def conv_fn(self, e, want: T.Type):
        """e's function where a value of type `want` is expected."""
        f = self.fn(e) if want.kind in ("opt", "none", "any") else self.nn_fn(e)
        return self.elems_checked(f, e, want)

    def elems_checked(self, f, e, want: T.Type):
        """f (e's function), or f checking that the list or array it gives holds no none where
        `want` forbids one (types.none_levels)."""
        levels = self.none_levels(e, want)
        if levels is None:
            return f
        where, check = self.at(e), runtime.no_none_in

        def checked(ev, env):
            return check(f(ev, env), levels, where)
        return checked

    def none_levels(self, e, want: T.Type):
        """types.none_levels for e's value kept where `want` is expected."""
        t = self.p.types.get(e)
        return None if t is None else T.none_levels(t, want)

    def known_value(self, e):
        """e's value if it is fixed when e's parent's function is made (a literal, an enum
        member, a parameter or constant already worked out), else _ABSENT: the parent then
        holds the value instead of calling e's function, which would give it."""
        if isinstance(e, ast.IntLit | ast.BoolLit):
            return e.value
        if isinstance(e, ast.Name | ast.Attr):
            ref = self.p.refs.get(e)
            if ref is not None:
                if ref[0] == "member":
                    return ref[2]
                if ref[0] in ("param", "const"):
                    known = self.k.param_values if ref[0] == "param" else self.k.const_values
                    return known.get(ref[1], _ABSENT)
        return _ABSENT

    def local_slot(self, e) -> str | None:
        """The slot of e if e names a local (its function would read env[slot]), else None."""
        if isinstance(e, ast.Name):
            ref = self.p.refs.get(e)
            if ref is not None and ref[0] == "local":
                return ref[1]
        return None

    def kept_fn(self, e, f):
        """f (e's function), its value checked against the int limit if e may have grown."""
        if not self.k.growth(e):
            return f
        top, where, bounded = self.int_max, self.at(e), runtime.bounded
        return lambda ev, env: bounded(f(ev, env), top, where)

    def iterate_fn(self, e):
        """e's function, its value (a set or list) as a tuple in order."""
        f = self.nn_fn(e)

        def iterate(ev, env):
            v = f(ev, env)
            return tuple(sorted(v)) if isinstance(v, frozenset) else tuple(v)
        return iterate

    # -- expressions
    def fn_IntLit(self, e):
        v = e.value
        return lambda ev, env: v

    fn_BoolLit = fn_IntLit

    def fn_NoneLit(self, e):
        return lambda ev, env: None

    def fn_Name(self, e):
        ref = self.p.refs[e]
        kind = ref[0]
        if kind == "local":
            slot = ref[1]
            return lambda ev, env: env[slot]
        if kind == "state":
            name = ref[1]
            return lambda ev, env: ev.vars[name]
        if kind in ("param", "const"):
            name, k = ref[1], self.k
            known = k.param_values if kind == "param" else k.const_values
            if name in known:  # else not worked out yet (Constants does it in order)
                v = known[name]
                return lambda ev, env: v
            get = k.param if kind == "param" else k.const
            return lambda ev, env: get(name)
        if kind == "member":
            v = ref[2]
            return lambda ev, env: v
        if kind == "enum_all":
            v = frozenset(range(len(self.p.enums[ref[1]].members)))
            return lambda ev, env: v
        if kind == "graph":
            v = ref[1]
            return lambda ev, env: v
        if kind == "players":
            return lambda ev, env: tuple(range(ev.num_players(e)))
        if kind == "num_players":
            return lambda ev, env: ev.num_players(e)
        raise AssertionError(ref)

    def fn_CondExpr(self, e):
        cond, then, orelse = self.fn(e.cond), self.fn(e.then), self.fn(e.orelse)
        slot = self.local_slot(e.cond)
        if slot is not None:  # a local condition read in place
            return lambda ev, env: then(ev, env) if env[slot] else orelse(ev, env)
        return lambda ev, env: then(ev, env) if cond(ev, env) else orelse(ev, env)

    def fn_BinOp(self, e):
        if e.op in ("and", "or"):
            return self.logic_fn(e)
        op = BINARY_OPS[e.op]
        run = op.run
        if op.kind == "member":
            is_set = T.strip(self.p.types[e.right]).kind == "set"
            left = self.nn_fn(e.left) if is_set else self.fn(e.left)
            right = self.nn_fn(e.right)
            return lambda ev, env: run(left(ev, env), right(ev, env), None)
        # the operator on two values as one call (no Python frame of its own when the table
        # gives its `pure` form; else run with the node's location bound)
        where = self.at(e)
        two = op.pure or partial(run, where=where)
        if op.kind == "equal":
            left, right = self.fn(e.left), self.fn(e.right)
            ls, rs = self.local_slot(e.left), self.local_slot(e.right)  # read in place
            c = self.known_value(e.right)
            if c is not _ABSENT:  # a value known now: held, not evaluated again
                return lambda ev, env: two(env[ls] if ls is not None else left(ev, env), c)
            return lambda ev, env: two(env[ls] if ls is not None else left(ev, env),
                                       env[rs] if rs is not None else right(ev, env))
        left, right = self.fn(e.left), self.fn(e.right)
        at_left, at_right = self.at(e.left), self.at(e.right)
        fault_none = runtime.fault_none
        # an operand that names a local is read in place (ls / rs: its slot, else None)
        ls, rs = self.local_slot(e.left), self.local_slot(e.right)
        c = self.known_value(e.right)
        # `+` on ints is the table's run on ints: a + b (on lists it is runtime.concat)
        ints = e.op == "+" and T.strip(self.p.types[e]).kind == "int"
        if ints:
            two = operator.add
        if (e.op != "+" or ints) and c is not None and c is not _ABSENT:
            # the right operand is a value known now (not none): held, not evaluated again
            def binop_c(ev, env):
                a = env[ls] if ls is not None else left(ev, env)
                if a is None:
                    fault_none(at_left)
                return two(a, c)
            return binop_c
        if e.op != "+" or ints:
            def binop(ev, env):
                a = env[ls] if ls is not None else left(ev, env)
                if a is None:
                    fault_none(at_left)
                b = env[rs] if rs is not None else right(ev, env)
                if b is None:
                    fault_none(at_right)
                return two(a, b)
            return binop
        concat, size = runtime.concat, self.limits.max_collection

        def plus(ev, env):
            a = env[ls] if ls is not None else left(ev, env)
            if a is None:
                fault_none(at_left)
            b = env[rs] if rs is not None else right(ev, env)
            if b is None:
                fault_none(at_right)
            if isinstance(a, tuple):
                return concat(a, b, size, where)
            return run(a, b, where)
        return plus

    def logic_fn(self, e):
        """`a and b` / `a or b` (true or false, the right operand evaluated only when the
        left does not decide). A chain `a and b and c ...` (left-nested, the same operator) is
        one function that tests its operands in turn, stopping at the first that decides."""
        operands = [e.right]
        x = e.left
        while isinstance(x, ast.BinOp) and x.op == e.op and x not in self.fns:
            operands.append(x.right)
            x = x.left
        operands.append(x)
        tests = tuple(self.fn(a) for a in reversed(operands))
        if len(tests) == 2:
            left, right = tests
            if e.op == "and":
                return lambda ev, env: True if left(ev, env) and right(ev, env) else False
            return lambda ev, env: True if left(ev, env) or right(ev, env) else False
        if e.op == "and":
            def all_of(ev, env):
                for t in tests:
                    if not t(ev, env):
                        return False
                return True
            return all_of

        def any_of(ev, env):
            for t in tests:
                if t(ev, env):
                    return True
            return False
        return any_of

    def fn_Not(self, e):
        operand = self.fn(e.operand)
        return lambda ev, env: not operand(ev, env)

    def fn_Neg(self, e):
        operand = self.nn_fn(e.operand)
        return lambda ev, env: -operand(ev, env)

    def fn_Range(self, e):
        lo = self.kept_fn(e.lo, self.nn_fn(e.lo))
        hi = self.kept_fn(e.hi, self.nn_fn(e.hi))
        step = self.kept_fn(e.step, self.nn_fn(e.step)) if e.step is not None \
            else (lambda ev, env: 1)
        where, size, int_range = self.at(e), self.limits.max_collection, runtime.int_range
        return lambda ev, env: tuple(int_range(lo(ev, env), hi(ev, env), step(ev, env), where,
                                               size))

    def fn_Index(self, e):
        obj, ix = self.fn(e.obj), self.fn(e.index)
        at_obj, at_ix, where = self.at(e.obj), self.at(e.index), self.at(e)
        fault_none, fault_index = runtime.fault_none, runtime.fault_index
        # a state variable's list and a local index are read in place
        ref = self.p.refs.get(e.obj) if isinstance(e.obj, ast.Name) else None
        name = ref[1] if ref is not None and ref[0] == "state" else None
        slot = self.local_slot(e.index)

        def index(ev, env):  # nn() of both and runtime.list_item written out: a hot path
            o = ev.vars[name] if name is not None else obj(ev, env)
            if o is None:
                fault_none(at_obj)
            i = env[slot] if slot is not None else ix(ev, env)
            if i is None:
                fault_none(at_ix)
            if not 0 <= i < len(o):
                fault_index(i, len(o), where)
            return o[i]
        return index

    def fn_Attr(self, e):
        ref = self.p.refs[e]
        if ref[0] == "member":
            v = ref[2]
            return lambda ev, env: v
        obj = self.nn_fn(e.obj)
        if ref[0] == "cell":
            c0, ncols, _rows = self.p.enums[T.strip(self.p.types[e.obj]).name].grid
            if ref[1] == "col":
                return lambda ev, env: obj(ev, env) % ncols + c0
            return lambda ev, env: obj(ev, env) // ncols
        enum, i = ref[1], ref[2]
        if enum not in self.k.enum_fields:  # not worked out yet (Constants does it in order)
            fields = self.k.fields
            return lambda ev, env: fields(enum)[obj(ev, env)][i]
        rows, obj, where = self.k.enum_fields[enum], self.fn(e.obj), self.at(e.obj)
        slot = self.local_slot(e.obj)  # a local read in place

        def field(ev, env):
            v = env[slot] if slot is not None else obj(ev, env)
            if v is None:
                runtime.fault_none(where)
            return rows[v][i]
        return field

    def fn_Call(self, e):
        ref = self.p.refs[e]
        fault_none = runtime.fault_none
        if ref[0] == "def":
            d = self.p.defs[ref[1]]
            wants = [self.p.slot_types[self.p.slots[f]] for f in d.params]
            # A value the def's memo table holds for the arguments (ev.memo, see call_def) is
            # taken in place; else call_def works it out (and fills the table it is given).
            if not e.args:
                def call0(ev, env):
                    table = ev.memo.get(d)
                    if table is not None:
                        v = table.get((), _ABSENT)
                        if v is not _ABSENT:
                            return v
                    return ev.call_def(d, (), table)
                return call0
            # conv_fn and kept_fn written out (a hot path): per argument its function, where a
            # none is a fault (None if the parameter allows none), and where an int over the
            # limit is (None if the argument cannot have grown).
            # An argument that names a local is read in place (its slot, else None).
            top, bounded = self.int_max, runtime.bounded
            # (an argument whose elements are checked is not read in place)
            specs = tuple(
                (f, None if want.kind in ("opt", "none", "any") else self.at(a),
                 self.at(a) if self.k.growth(a) else None,
                 self.local_slot(a) if f is self.fn(a) else None)
                for a, want in zip(e.args, wants)
                for f in (self.elems_checked(self.fn(a), a, want),))
            if len(specs) > 2 and all(s is not None and g is None for _f, _n, g, s in specs):
                # every argument names a local (none grown): all read at once, and a none
                # among them is then found where the loop below would find the first one
                get = itemgetter(*[s for _f, _n, _g, s in specs])

                def call_locals(ev, env):
                    args = get(env)
                    if None in args:
                        for v, (_f, n, _g, _s) in zip(args, specs):
                            if v is None and n is not None:
                                fault_none(n)
                    table = ev.memo.get(d)
                    if table is not None:
                        v = table.get(args, _ABSENT)
                        if v is not _ABSENT:
                            return v
                    return ev.call_def(d, args, table)
                return call_locals
            if len(specs) > 2:
                def call(ev, env):
                    args = []
                    for f, n, g, s in specs:
                        v = env[s] if s is not None else f(ev, env)
                        if v is None:
                            if n is not None:
                                fault_none(n)
                        elif g is not None:
                            bounded(v, top, g)
                        args.append(v)
                    args = tuple(args)
                    table = ev.memo.get(d)
                    if table is not None:
                        v = table.get(args, _ABSENT)
                        if v is not _ABSENT:
                            return v
                    return ev.call_def(d, args, table)
                return call
            (f0, n0, g0, s0), *rest = specs
            if not rest:  # one or two arguments: the same, without a loop
                def call1(ev, env):
                    v0 = env[s0] if s0 is not None else f0(ev, env)
                    if v0 is None:
                        if n0 is not None:
                            fault_none(n0)
                    elif g0 is not None:
                        bounded(v0, top, g0)
                    args = (v0,)
                    table = ev.memo.get(d)
                    if table is not None:
                        v = table.get(args, _ABSENT)
                        if v is not _ABSENT:
                            return v
                    return ev.call_def(d, args, table)
                return call1
            (f1, n1, g1, s1), = rest

            def call2(ev, env):
                v0 = env[s0] if s0 is not None else f0(ev, env)
                if v0 is None:
                    if n0 is not None:
                        fault_none(n0)
                elif g0 is not None:
                    bounded(v0, top, g0)
                v1 = env[s1] if s1 is not None else f1(ev, env)
                if v1 is None:
                    if n1 is not None:
                        fault_none(n1)
                elif g1 is not None:
                    bounded(v1, top, g1)
                args = (v0, v1)
                table = ev.memo.get(d)
                if table is not None:
                    v = table.get(args, _ABSENT)
                    if v is not _ABSENT:
                        return v
                return ev.call_def(d, args, table)
            return call2
        if ref[0] == "builtin" and len(e.args) in (1, 2):
            # one or two arguments, nn_fn written out (a hot path)
            run, where = BUILTINS[e.name].run, self.at(e)
            f0, at0 = self.fn(e.args[0]), self.at(e.args[0])
            if len(e.args) == 1:
                def builtin1(ev, env):
                    v0 = f0(ev, env)
                    if v0 is None:
                        fault_none(at0)
                    return run(ev, e, [v0], where)
                return builtin1
            f1, at1 = self.fn(e.args[1]), self.at(e.args[1])

            def builtin2(ev, env):
                v0 = f0(ev, env)
                if v0 is None:
                    fault_none(at0)
                v1 = f1(ev, env)
                if v1 is None:
                    fault_none(at1)
                return run(ev, e, [v0, v1], where)
            return builtin2
        args = [self.nn_fn(a) for a in e.args]
        if ref[0] == "table":
            # A table is a constant function: the value found for an argument tuple is kept
            # (a lookup that faults is not, so it faults again).
            name, span, found = ref[1], e.span, self.k.table_found.setdefault(ref[1], {})

            def table(ev, env):
                key = tuple([a(ev, env) for a in args])
                v = found.get(key, _ABSENT)
                if v is _ABSENT:
                    v = found[key] = ev.lookup(name, key, span)
                return v
            return table
        run, where = BUILTINS[e.name].run, self.at(e)
        return lambda ev, env: run(ev, e, [a(ev, env) for a in args], where)

    def lookup(self, name: str, args: tuple, span: Span):
        for keys, value in self.k.table_rows[name]:
            if all(key_match(k, a) for k, a in zip(keys, args)):
                return value
        return runtime.fault_no_row(name, args, loc(span), table_key_members(self.p, name))

    def fn_Agg(self, e):
        """An aggregate: its collection's elements bound in turn (those its filter keeps), each
        element evaluated; one function per aggregate (the same evaluations in the same order,
        the same checks)."""
        slot, f = self.p.slots[e], e.func
        items_of = self.iterate_fn(e.iter)
        cond = self.fn(e.cond) if e.cond is not None else None
        elem = self.nn_fn(e.elem) if f in ("sum", "min", "max") else self.fn(e.elem)
        where = self.at(e)
        if f == "first":
            def first(ev, env):
                old = env.get(slot, _ABSENT)
                try:
                    for x in items_of(ev, env):
                        env[slot] = x
                        if cond is None or cond(ev, env):
                            return elem(ev, env)
                finally:
                    _restore(env, slot, old)
                return None
            return first
        if f in ("sum", "count"):  # the count of true elements, or the sum of the elements
            counts = f == "count"

            def total(ev, env):
                n = 0
                old = env.get(slot, _ABSENT)
                try:
                    for x in items_of(ev, env):
                        env[slot] = x
                        if cond is None or cond(ev, env):
                            v = elem(ev, env)
                            if counts:
                                if v:
                                    n += 1
                            else:
                                n += v
                finally:
                    _restore(env, slot, old)
                return n
            return total
        if f in ("any", "all"):
            # `any` stops at a true element, `all` at a false one, when stops_early allows;
            # else every element is evaluated and the first deciding one gives the answer
            decides = f == "any"
            early = self.stops_early(e)

            def test(ev, env):
                found = False
                old = env.get(slot, _ABSENT)
                try:
                    for x in items_of(ev, env):
                        env[slot] = x
                        if (cond is None or cond(ev, env)) and bool(elem(ev, env)) is decides:
                            if early:
                                return decides
                            found = True
                finally:
                    _restore(env, slot, old)
                return decides if found else not decides
            return test
        pick = min if f == "min" else max

        def extreme(ev, env):
            items = []
            old = env.get(slot, _ABSENT)
            try:
                for x in items_of(ev, env):
                    env[slot] = x
                    if cond is None or cond(ev, env):
                        items.append(elem(ev, env))
            finally:
                _restore(env, slot, old)
            return runtime.extreme(items, pick, f, where)
        return extreme

    def fn_Sort(self, e):
        slot = self.p.slots[e]
        items_of = self.iterate_fn(e.iter)
        keys = [(self.nn_fn(k.key), k.descending) for k in e.keys]

        def sort(ev, env):
            items = items_of(ev, env)

            def key(x):
                env[slot] = x
                out = []
                for k, descending in keys:
                    v = k(ev, env)
                    out.append(-v if descending else v)
                return tuple(out)

            old = env.get(slot, _ABSENT)
            try:
                return tuple(sorted(items, key=key))
            finally:
                _restore(env, slot, old)
        return sort

    def fn_ListLit(self, e):
        items = [self.kept_fn(x, self.fn(x)) for x in e.items]
        return lambda ev, env: tuple([x(ev, env) for x in items])

    def fn_SetLit(self, e):
        items, where = [self.fn(x) for x in e.items], self.at(e)

        def set_lit(ev, env):
            values = [x(ev, env) for x in items]
            if None in values:
                runtime.fault_set_none(where)
            return frozenset(values)
        return set_lit

    def fn_ArrayLit(self, e):
        items = [self.kept_fn(x, self.fn(x)) for x in self.p.array_values[e]]
        return lambda ev, env: tuple([x(ev, env) for x in items])

    def fn_Comp(self, e):
        slot = self.p.slots[e]
        items_of = self.iterate_fn(e.iter)
        cond = self.fn(e.cond) if e.cond is not None else None
        elem = self.kept_fn(e.elem, self.fn(e.elem)) if e.kind == "list" else self.fn(e.elem)
        is_set, where = e.kind == "set", self.at(e.elem)

        def comp(ev, env):
            out = []
            old = env.get(slot, _ABSENT)
            try:
                for x in items_of(ev, env):
                    env[slot] = x
                    if cond is None or cond(ev, env):
                        out.append(elem(ev, env))
            finally:
                _restore(env, slot, old)
            if is_set:
                if None in out:
                    runtime.fault_set_none(where)
                return frozenset(out)
            return tuple(out)
        return comp


# Nodes whose function never gives none, whatever their operands give: literals, operators
# (their operands are checked; and/or, comparisons and `not` give true or false), `-x`, ranges,
# collection displays, comprehensions and sorts.
_NEVER_NONE = (ast.IntLit, ast.BoolLit, ast.BinOp, ast.Not, ast.Neg, ast.Range, ast.ListLit,
               ast.SetLit, ast.ArrayLit, ast.Comp, ast.Sort)
_NEVER_NONE_NAMES = ("member", "enum_all", "players", "num_players", "graph")


def never_none(p: Program, e) -> bool:
    """Whether e's node never gives none, whatever its operands give (by its kind alone: the
    aggregates but `first`, which gives none for no element; names of members, players, all
    of an enum; an `if` whose branches are such)."""
    if isinstance(e, _NEVER_NONE):
        return True
    if isinstance(e, ast.Agg):
        return e.func != "first"
    if isinstance(e, ast.Name | ast.Attr):
        ref = p.refs.get(e)
        return ref is not None and ref[0] in _NEVER_NONE_NAMES
    if isinstance(e, ast.CondExpr):
        return never_none(p, e.then) and never_none(p, e.orelse)
    return False


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


def table_key_members(program: Program, name: str) -> tuple:
    """Per key of table `name`, its enum's member names (None for an int, bool or player key),
    for the message of a lookup that matches no row; () when no key is an enum."""
    types = [T.strip(program.field_types[f]) for f in program.tables[name].params]
    if all(t.kind != "enum" for t in types):
        return ()
    return tuple(tuple(program.enums[t.name].members) if t.kind == "enum" else None
                 for t in types)


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
