"""Printing expressions (and the statements an expression needs in statement context)."""

from __future__ import annotations

from dataclasses import replace

from rulelang import ast
from rulelang import types as T
from rulelang.codegen.support import (
    NOT_CONST,
    SMALL_ENUM,
    Code,
    Ctx,
    EmitError,
    Sink,
    const_of,
    ident,
    is_false,
    is_simple,
    is_true,
    loc,
    slot_attr,
    strip_parens,
)
from rulelang.codegen.tree import (
    _block_exprs,
    _conjuncts,
    _disjuncts,
    _has_loop,
    _has_return,
    _returns,
    _walk,
)
from rulelang.errors import RulesRuntimeError, Span
from rulelang.semantics import BINARY_OPS, BUILTINS, emit_path_row

_FRESH = (ast.ListLit, ast.ArrayLit, ast.SetLit, ast.Comp, ast.Range, ast.Sort, ast.Agg, ast.BinOp,
          ast.IntLit, ast.BoolLit, ast.NoneLit, ast.Neg, ast.Not)


class ExprPrinter:
    def t(self, e) -> T.Type:
        return self.p.types[e]

    def L(self, span: Span) -> str:
        """A constant holding a .rules location string (emitted once per location)."""
        text = loc(span)
        if text not in self.where:
            self.where[text] = f"AT_{span.line}_{span.col}"
        return self.where[text]

    def optional(self, e) -> bool:
        return self.t(e).kind in ("opt", "none", "any")

    def nn(self, e, c: Ctx) -> str:
        code = self.ex(e, c)
        if self.optional(e) and not self.known_not_none(e):
            return f"not_none({code}, {self.L(e.span)})"
        return code

    def known_not_none(self, e) -> bool:
        """Whether e is an expression that the `and` being printed tested `!= none` to the
        left of here (or the `or`, `== none`): its value cannot be none here, since an
        expression changes nothing."""
        return any(self._same(e, k, {}) for k in self._not_none)

    def _none_facts(self, e, op: str) -> list:
        """The expressions the left operand e of an `and` (op "and") or `or` shows are not
        none when the right operand is evaluated: E in `E != none` conjuncts (`E == none`
        disjuncts)."""
        out = []
        parts, want = ((_conjuncts(e), "!=") if op == "and" else (_disjuncts(e), "=="))
        for a in parts:
            if isinstance(a, ast.BinOp) and a.op == want:
                if isinstance(a.right, ast.NoneLit) and not isinstance(a.left, ast.NoneLit):
                    out.append(a.left)
                elif isinstance(a.left, ast.NoneLit) and not isinstance(a.right, ast.NoneLit):
                    out.append(a.right)
        return out

    def conv(self, e, c: Ctx, want: T.Type) -> str:
        """e as a value stored where type `want` is expected: none-checked and copied."""
        if want.kind in ("opt", "none", "any"):
            code = self.ex(e, c)
        else:
            code = self.nn(e, c)
        return self.owned(e, self.elems_checked(e, code, want))

    def elems_checked(self, e, code: str, want: T.Type) -> str:
        """code (e's value), checked to hold no none among the elements of a list or array
        where `want` forbids one (types.none_levels; the interpreter's ExprEvaluator has the
        same)."""
        levels = T.none_levels(self.t(e), want)
        if levels is None:
            return code
        return f"no_none_in({code}, {levels!r}, {self.L(e.span)})"

    def kept(self, e, code: str) -> str:
        """Code of e's value where it is kept (bound, stored, passed on): checked against the
        int limit if e may have grown (consts.Growth; the interpreter checks the same)."""
        if not self.fits(e, self._int_env):
            return f"bounded({code}, LIMIT_INT, {self.L(e.span)})"
        return code

    def param_bounds(self, pairs) -> dict:
        """{def parameter slot: bound of its argument} for (slot, argument) pairs, in the
        bounds known where the call is printed (passes.plan_int_ranges)."""
        return {slot: self.int_bound(a, self._int_env) if T.strip(self.t(a)).kind == "int"
                else None for slot, a in pairs}

    def owned(self, e, code: str) -> str:
        kind = T.strip(self.t(e)).kind
        if kind in ("list", "array") and not isinstance(e, _FRESH):
            return f"deep_copy({code})"
        return code

    def literal(self, v, t: T.Type) -> str:
        """A folded constant as Python source (only ints, bools, None and lists thereof)."""
        if v is None:
            return Code("None", simple=True, const=None)
        t = T.strip(t)
        if t.kind == "bool":
            return Code("True" if v else "False", simple=True, const=bool(v))
        if t.kind in ("int", "player", "enum"):
            return Code(repr(int(v)), simple=True, const=int(v))
        if t.kind == "graph":  # a graph is its index in declaration order (GRAPHS_*)
            i = list(self.p.graphs).index(v)
            return Code(repr(i), simple=True, const=i)
        if t.kind == "set":
            m = 0
            for x in v:
                m |= 1 << int(x)
            return Code(repr(m), simple=True, const=m)
        if t.kind in ("list", "array"):
            elem = t.elem
            return "[" + ", ".join(self.literal(x, elem) for x in v) + "]"
        raise EmitError(f"no literal for {t}")

    def desc(self, t: T.Type) -> tuple:
        t = T.strip(t)
        k = t.kind
        if k in ("int", "player", "any", "none"):
            return ("i",)
        if k == "bool":
            return ("b",)
        if k == "enum":
            return ("e", tuple(self.p.enums[t.name].members))
        if k == "set":
            if t.elem.kind == "enum":
                return ("s", tuple(self.p.enums[t.elem.name].members))
            if t.elem.kind == "bool":  # bit 0 false, bit 1 true; JSON false/true
                return ("s", (False, True))
            return ("S",)
        if k == "list":
            return ("l", self.desc(t.elem))
        if k == "graph":
            return ("g", tuple(self.p.graphs))
        if k == "array":
            if t.index.kind == "enum":
                return ("a", self.desc(t.elem), tuple(self.p.enums[t.index.name].members))
            return ("p", self.desc(t.elem))
        raise EmitError(f"no descriptor for {t}")

    def size_of(self, index: T.Type) -> str:
        if index.kind == "enum":
            return str(len(self.p.enums[index.name].members))
        return "s.n"

    def domain(self, t: T.Type) -> str:
        t = T.strip(t)
        if t.kind == "enum":
            return f"ALL_{ident(t.name)}"  # (a tuple made once: no range object a walk)
        if t.kind == "player":
            return "s._players"
        if t.kind == "bool":
            return "(False, True)"
        raise EmitError(f"no domain for {t}")

    def members(self, set_type: T.Type, code: str) -> str:
        """The members of a set value (a bit mask) in ascending order: a table lookup for small
        enums, bools as bools."""
        elem = T.strip(set_type).elem
        if elem is not None and elem.kind == "bool":
            return f"BOOL_MEMBERS[{code}]"
        if elem is not None and elem.kind == "enum" \
                and len(self.p.enums[elem.name].members) <= SMALL_ENUM:
            return f"SMALL_BITS[{code}]"
        return f"bits({strip_parens(code)})"

    def one_bit(self, elem: T.Type | None, code: str, paren: bool = False) -> str:
        """The mask of the one member `code` of a set of elem: read from the enum's table
        BIT_<enum> when it has more than 8 members (from 9 on, 1 << x is a new int object each
        time, the table's are made once: Acquire's tiles, 1.9% of a playout's time), else
        1 << x (a small int Python keeps)."""
        elem = T.strip(elem) if elem is not None else None
        if elem is not None and elem.kind == "enum" \
                and len(self.p.enums[elem.name].members) > SMALL_ENUM:
            return f"BIT_{ident(elem.name)}[{strip_parens(code)}]"
        return f"(1 << {code})" if paren else f"1 << {code}"

    def set_walk(self, e, c: Ctx, var, refine=None) -> tuple[list[str], list[str]] | None:
        """A walk over the members of the set e by peeling off its lowest member (passes.py,
        plan_peel_sets): (the lines heading the loop, the lines starting its body), or None when
        the plan keeps a `for` over iter_code's members. c.sink receives what the mask needs.
        refine(mask, c): the mask actually walked (a domain's filters, plan_domain_filters)."""
        if id(e) not in self.plan.peel or refine is None and self._kept_here(e, c):
            return None
        mask = self.nn(e, c)
        if refine is not None:
            mask = refine(mask, c)
        m, b = c.sink.tmp(), c.sink.tmp()
        return ([f"{m} = {strip_parens(mask)}", f"while {m}:"],
                [f"{b} = {m} & -{m}", f"{m} ^= {b}", f"{var} = {b}.bit_length() - 1"])

    def _kept_here(self, e, c: Ctx) -> bool:
        return id(e) in self.plan.kept_walks and c.sink is not None

    def kept_members(self, e, c: Ctx) -> str | None:
        """The members of the state set e (a variable, or A[i]) from the tuple kept beside its
        mask (passes.py, plan_kept_members), built from the mask when none is kept: the name
        of a temporary that c.sink sets, or None when the walk over e does not read it (or
        there is no sink for the lines)."""
        if not self._kept_here(e, c):
            return None
        mask = strip_parens(self.nn(e, c))
        sk = c.sink
        var = self.p.refs[e.obj if isinstance(e, ast.Index) else e][1]
        attr = f"s.w_{ident(var)}"
        t = sk.tmp()
        if isinstance(e, ast.Index):
            kept, ix = sk.tmp(), self.ex(e.index, c)
            size = self.size_of(self.plan.kept_members[var])
            sk.emit(f"{kept} = {attr}")
            sk.emit(f"if {kept} is None:")
            sk.emit(f"    {kept} = {attr} = [None] * {size}")
            sk.emit(f"{t} = {kept}[{ix}]")
            sk.emit(f"if {t} is None:")
            sk.emit(f"    {t} = {kept}[{ix}] = bits({mask})")
        else:
            sk.emit(f"{t} = {attr}")
            sk.emit(f"if {t} is None:")
            sk.emit(f"    {t} = {attr} = bits({mask})")
        return t

    def iter_code(self, e, c: Ctx, snapshot: bool = False) -> str:
        ref = self.p.refs.get(e) if isinstance(e, ast.Name) else None
        if ref is not None and ref[0] == "enum_all":
            return f"ALL_{ident(ref[1])}"  # (a tuple made once: no range object a walk)
        if isinstance(e, ast.Range):
            return self.range_code(e, c)[1]  # walked once: a Python range will do
        kept = self.kept_members(e, c)
        if kept is not None:
            return kept
        code = self.nn(e, c)
        kind = T.strip(self.t(e)).kind
        if kind == "set":
            return self.members(self.t(e), code)
        fresh = isinstance(e, _FRESH) or (
            isinstance(e, ast.Call) and self.p.refs[e][0] in ("def", "table"))
        if snapshot and not fresh:
            return f"list({strip_parens(code)})"
        return code

    # -- analysis: which expressions cannot fault, and which locals they read

    def seq(self, c: Ctx, parts: list) -> list[str]:
        """Code of sub-expressions that run in this order: parts are (emit(ctx) -> code, safe).

        In statement context a part may put statements into the sink; every earlier part that
        could fault is then evaluated into a temporary first, so faults keep their order.
        """
        if c.sink is None:
            return [f(c) for f, _safe in parts]
        done = []
        for f, is_safe in parts:
            sk = c.sink.scratch()
            code = f(c.at(sk))
            done.append((code, sk.lines, is_safe))
        last = max((i for i, d in enumerate(done) if d[1]), default=-1)
        codes = []
        for i, (code, lines, is_safe) in enumerate(done):
            c.sink.lines.extend(lines)
            if i < last and not is_safe and not is_simple(code):
                code = c.sink.bind(code)
            codes.append(code)
        return codes

    def _part_nn(self, e):
        return (lambda cc: self.nn(e, cc)), self._ok(e)

    def _part_ex(self, e):
        return (lambda cc: self.ex(e, cc)), self.safe(e)

    # -- expressions
    def ex(self, e, c: Ctx) -> str:
        known = self._listing_key(e, c)
        if known is not None:
            return known
        if c.hoist is not None and c.sink is not None:
            code = self.try_hoist(e, c)
            if code is not None:
                return code
        fn = getattr(self, "emit_" + type(e).__name__, None)
        if fn is None:
            raise EmitError(f"no emitter for {type(e).__name__}")
        return fn(e, c)

    def _known_key(self, e, c: Ctx) -> tuple:
        """e, with the code of each local slot it reads (the same expression printed where
        those slots stand for the same code has the same value)."""
        return (id(e), tuple(str(c.py.get(s)) for s in sorted(self.free(e))))

    def _listing_key(self, e, c: Ctx) -> str | None:
        """The temporary holding e's value if e is a key of the option being listed through
        its memo (DecisionPrinter._memo_lines), else None."""
        if not self._listing_known:
            return None
        return self._listing_known.get(self._known_key(e, c))

    def ex_not(self, e, c: Ctx) -> str:
        """Code of `not e`, with comparisons flipped instead of negated (ints are totally
        ordered, so `not a < b` is `a >= b`; both evaluate the same operands in the same order)."""
        if c.hoist is not None and c.sink is not None:
            code = self.try_hoist(e, c)
            if code is not None:
                return f"(not {code})"
        if isinstance(e, ast.Not):
            return self.ex(e.operand, c)
        if isinstance(e, ast.BinOp) and BINARY_OPS[e.op].flip is not None:
            return self.emit_BinOp(e, c, negate=True)
        code = self.ex(e, c)
        if is_true(code) or is_false(code):  # a folded parameter: the other constant
            return Code("False" if is_true(code) else "True", simple=True,
                        const=is_false(code))
        return f"(not {code})"

    def test(self, e, c: Ctx) -> Sink:
        """Emits `if e:` into c.sink and returns the sink of the lines run when e holds. An
        `and` whose right operand needs statements of its own (an inlined def, a kept value
        asked) is tested as nested ifs, `if a:`, b's statements, `if b:`, where its value
        alone would be a temporary set in one `if`, set again inside it and tested by a
        second (`t = a`, `if t:`, b's statements, `t = b`, `if t:`): the same operands in the
        same order, and b's statements run on the same path, with two stores, two loads and
        one test fewer per evaluation (Acquire's can_buy, asked for seven chains at every
        buy). The lines run when e holds may use what b's statements computed."""
        sk = c.sink
        hoisted = self.try_hoist(e, c) if c.hoist is not None else None
        if hoisted is None and isinstance(e, ast.BinOp) and e.op == "and":
            a = self.ex(e.left, c)
            if not (is_true(a) or is_false(a)):
                facts = self._none_facts(e.left, "and")
                self._not_none.extend(facts)
                try:
                    b_sink = sk.scratch(1)
                    b = self.ex(e.right, c.at(b_sink))
                finally:
                    del self._not_none[len(self._not_none) - len(facts):]
                if b_sink.lines:
                    sk.emit(f"if {a}:")
                    sk.lines.extend(b_sink.lines)
                    sk.emit(f"    if {b}:")
                    return Sink(sk.fn, sk.ind + 2, sk.lines, parent=b_sink)
                sk.emit(f"if ({a} and {b}):")
                return sk.deeper()
            code = self.ex(e.right, c) if is_true(a) else a
        else:
            code = hoisted if hoisted is not None else self.ex(e, c)
        sk.emit(f"if {code}:")
        return sk.deeper()

    def try_hoist(self, e, c: Ctx) -> str | None:
        """A loop-invariant expression that cannot fault, computed once at the outermost loop
        level where all it reads is bound (None: compute it here). A key of the option being
        listed through its memo is already in a temporary, computed where the listing starts
        (after the lines hoisted before every option): that temporary."""
        known = self._listing_key(e, c)
        if known is not None:
            return known
        h = c.hoist
        if isinstance(e, ast.Name):
            ref = self.p.refs[e]
            if ref[0] == "state" or (ref[0] == "local" and ref[1] not in c.py):
                # read once into a Python local at the top of the function
                key = ("name", *ref)
                sink, lifted = h.level0(key)
                if lifted and h.outer[3] is not None and h.outer[3].get(key, 0) < 2:
                    lifted, sink = False, h.levels[0]  # read once in the whole run
                if h.uses is not None and h.uses.get(key, 0) < 2 and not lifted:
                    return None
                if key not in h.shared:
                    if lifted and key in h.outer[1]:
                        h.shared[key] = h.outer[1][key]
                        return h.shared[key]
                    alias = (f"_v_{ident(ref[1])}" if ref[0] == "state"
                             else f"_{slot_attr(ref[1])}")
                    sink.emit(f"{alias} = {self.emit_Name(e, c)}")
                    h.shared[key] = Code(alias, simple=True)
                    if lifted:
                        h.outer[1][key] = h.shared[key]
                return h.shared[key]
            return None
        if isinstance(e, ast.IntLit | ast.BoolLit | ast.NoneLit):
            return None
        if isinstance(e, ast.Attr) and self.p.refs[e][0] == "member":
            return None
        level = self.hoist_level(e, c)
        if level is None and not h.barrier:
            # through the parameters of the defs expanded around e, bound to names: in an
            # aggregate's loop, to the current level only (Acquire's cash[p] in can_buy(p)'s
            # `any`); else out of a listing's loop (a test or a let's value in the body of a
            # def expanded there) when it is reads, arithmetic, len or defs whose values are
            # kept (Power Grid's `len(network[p]) == 0` in connection(p, c) and store(p, k) in
            # fits_with, once per listing instead of once per candidate); it cannot fault
            # (self.safe below), so computing it where it was not reached changes nothing
            level = self.hoist_level(e, c, True)
            if h.agg:
                if level != h.cur:
                    return None
            elif level is None or level >= h.cur:
                return None
            elif any(isinstance(n, ast.Agg | ast.Comp | ast.Sort)
                     or isinstance(n, ast.Call) and not self._cheap_call(n) for n in _walk(e)):
                return self._kept_once_reached(level, e, c)
        if level is None:
            return None
        # (a def's body is expanded with its parameters bound to different code at each call)
        key = (id(e), tuple(c.py.get(s) for s in sorted(self.free(e))))
        if level == -1 and key in h.shared:
            return h.shared[key]
        # At the current level only from inside an aggregate's loop (else no loop is left), and
        # only reads and arithmetic: a call or an aggregate may sit behind a test that is rarely
        # passed (Acquire's `min(size) > 0` in stuck(), 0.99x when computed before the loop).
        heavy = any(isinstance(n, ast.Call | ast.Agg | ast.Comp | ast.Sort) for n in _walk(e))
        if level > h.cur or (level == h.cur and not (
                h.agg and not h.barrier and not heavy)) or not self.safe(e):
            return self._kept_once_reached(level, e, c)
        t = self.hoisted(level, c, lambda cc: self.ex(e, cc))
        if level == -1:
            h.shared[key] = t
        return t

    def _walks(self, e, seen: set) -> bool:
        """Whether e's code walks a collection: an aggregate, a comprehension or a sort that the
        passes did not turn into one builtin call (`min(size) > 0`), or a def whose values are
        not kept and whose body walks one."""
        for n in _walk(e):
            if isinstance(n, ast.Agg | ast.Comp | ast.Sort) and id(n) not in self.plan.patterns:
                return True
            if isinstance(n, ast.Call) and self.p.refs[n][0] == "def" \
                    and not self._cheap_call(n) and n.name not in seen:
                seen.add(n.name)
                body = self.p.defs[n.name].body
                parts = _block_exprs(body.stmts) if isinstance(body, ast.Block) else [body]
                if isinstance(body, ast.Block) and _has_loop(body.stmts) \
                        or any(self._walks(x, seen) for x in parts):
                    return True
        return False

    def _cheap_call(self, n) -> bool:
        """len, or a def whose values are kept (per argument tuple or between writes): a read
        of its list once it is filled."""
        ref = self.p.refs[n]
        if ref[0] == "def":
            return ref[1] in self.plan.keyed_defs or ref[1] in self.plan.cached_defs
        return ref[0] != "table" and n.name == "len"

    def hoist_level(self, e, c: Ctx, through_defs: bool = False) -> int | None:
        """The loop level whose variables e reads last (-1: none), None if it reads a local
        bound inside the code being printed (through_defs: but for the parameters of an
        expanded def bound to plain names, at the level of those names)."""
        h = c.hoist
        level = -1
        for slot in self.free(e):
            if slot in h.param_level:
                level = max(level, h.param_level[slot])
            elif through_defs and slot in h.def_level:
                level = max(level, h.def_level[slot])
            elif slot in c.py:  # bound inside the expression being emitted
                return None
        return level

    def hoisted(self, level: int, c: Ctx, emit) -> str:
        """A temporary holding emit(ctx)'s code, computed at the given loop level."""
        h = c.hoist
        sink = h.levels[level + 1]
        # Written aside first: what it hoists in turn goes into the level's lines before it.
        aside = Sink(sink.fn, sink.ind)
        code = emit(Ctx(c.py, aside, h.at(level)))
        if not aside.lines and const_of(code) is not NOT_CONST:
            return code  # folded (`map != CentralEurope`, a let's `0`): no temporary to read
        if not aside.lines:
            # the same code at the same level has the same value there (it changes no state)
            same = h.shared.setdefault("code", {})
            t = same.get((id(sink), str(code)))
            if t is None:
                t = same[(id(sink), str(code))] = sink.tmp()
                sink.emit(f"{t} = {code}")
            return t
        t = sink.tmp()
        aside.emit(f"{t} = {code}")
        sink.lines.extend(aside.lines)
        return t

    def _kept_once_reached(self, level: int, e, c: Ctx) -> str | None:
        """Where e cannot be computed before the loop (try_hoist), a walk is kept once reached
        (hoisted_lazily), else None."""
        h = c.hoist
        if (level < h.cur or level == h.cur and h.agg) and not h.barrier \
                and c.sink is not None and self.t(e) in (T.BOOL, T.INT) \
                and self._walks(e, set()):
            return self.hoisted_lazily(level, e, c)
        return None

    def hoisted_lazily(self, level: int, e, c: Ctx) -> str:
        """An expression that walks a collection (ExprPrinter._walks) inside a loop that binds
        nothing it reads, where it cannot be computed before the loop: inside an aggregate's
        loop (Poder's bond_available(c) in can_pay's `any` over s: before the loop it would be
        computed where the test before it rarely passes, as Acquire's `min(size) > 0` in
        stuck() was at 0.99x), or in a listing's loop when it may fault. A temporary set to
        None at the loop level of what it reads is computed where the expression is first
        reached, then read (a bool or an int: never None). It is evaluated where and when it
        was before, so a fault in it is the same fault, and a loop that never reaches it
        never computes it; nothing changes state in between (an expression, a listing, a
        def)."""
        h = c.hoist
        sink = h.levels[level + 1]
        key = (id(sink), id(e), tuple(c.py.get(s) for s in sorted(self.free(e))))
        lazy = h.shared.setdefault("lazy", {})
        t = lazy.get(key)
        if t is None:
            t = lazy[key] = sink.tmp()
            sink.emit(f"{t} = None")
        c.sink.emit(f"if {t} is None:")
        inner = c.sink.deeper()
        code = self.ex(e, Ctx(c.py, inner, h.at(level)))
        inner.emit(f"{t} = {code}")
        return t

    def emit_IntLit(self, e, c):
        return Code(repr(e.value), simple=True, const=e.value)

    def emit_BoolLit(self, e, c):
        return Code("True" if e.value else "False", simple=True, const=e.value)

    def emit_NoneLit(self, e, c):
        return Code("None", simple=True, const=None)

    def emit_Name(self, e, c):
        """Every name reads one variable or is a literal: simple code."""
        ref = self.p.refs[e]
        kind = ref[0]
        if kind == "local":
            return c.py.get(ref[1]) or Code(f"s.{slot_attr(ref[1])}", simple=True)
        if kind == "param":
            return self.literal(self.k.param_values[ref[1]], self.p.param_types[ref[1]])
        if kind == "const":
            t = T.strip(self.t(e))
            if t.kind not in ("list", "array"):
                return self.literal(self.k.const_values[ref[1]], t)
        if kind == "member":
            return Code(repr(ref[2]), simple=True, const=ref[2])
        if kind == "graph":
            return self.literal(ref[1], self.t(e))
        if kind == "enum_all":
            mask = (1 << len(self.p.enums[ref[1]].members)) - 1
            return Code(repr(mask), simple=True, const=mask)
        text = {"state": lambda: f"s.v_{ident(ref[1])}",
                "const": lambda: f"CONST_{ident(ref[1])}",
                "players": lambda: "s._players",
                "num_players": lambda: "s.n"}.get(kind)
        if text is None:
            raise EmitError(ref)
        return Code(text(), simple=True)

    def _branch(self, e, c: Ctx, emit) -> tuple[str, list[str]]:
        """Code of e evaluated only on one branch: (code, statements one level further in)."""
        if c.sink is None:
            return emit(e, c), []
        sk = c.sink.scratch(1)
        return emit(e, c.at(sk)), sk.lines

    def emit_CondExpr(self, e, c):
        cond = self.ex(e.cond, c)
        if is_true(cond) or is_false(cond):  # a folded parameter: only one branch is ever taken
            return self.ex(e.then if is_true(cond) else e.orelse, c)
        a, a_lines = self._branch(e.then, c, self.ex)
        b, b_lines = self._branch(e.orelse, c, self.ex)
        if not a_lines and not b_lines:
            return f"({a} if {cond} else {b})"
        t = c.sink.tmp()
        c.sink.emit(f"if {cond}:")
        c.sink.lines.extend(a_lines)
        c.sink.emit(f"    {t} = {a}")
        c.sink.emit("else:")
        c.sink.lines.extend(b_lines)
        c.sink.emit(f"    {t} = {b}")
        return t

    def emit_BinOp(self, e, c, negate: bool = False):
        op = BINARY_OPS[e.op].flip if negate else e.op
        if op in ("and", "or"):
            a = self.ex(e.left, c)
            if is_true(a) or is_false(a):  # a constant (a folded parameter): no test needed
                if is_true(a) == (op == "and"):
                    return self.ex(e.right, c)
                return a
            facts = self._none_facts(e.left, e.op)
            self._not_none.extend(facts)
            try:
                b, b_lines = self._branch(e.right, c, self.ex)
            finally:
                del self._not_none[len(self._not_none) - len(facts):]
            if not b_lines:
                if const_of(b) is (op == "or") and self.safe(e.left):
                    return b  # `x or true`, `x and false` on an x that cannot fault
                return f"({a} {op} {b})"
            return self._short_circuit(op, a, b, b_lines, c)
        entry = BINARY_OPS[op]
        empty = self._empty_test(e, op)
        if empty is not None:
            arg, is_empty = empty
            mask = self.nn(arg, c)
            return self._folded("==" if is_empty else "!=", mask, Code("0", const=0)) or \
                f"({mask} {'==' if is_empty else '!='} 0)"
        if entry.kind == "member":
            sets = T.strip(self.t(e.right)).kind == "set"
            left = self._part_nn(e.left) if sets else self._part_ex(e.left)
            a, b = self.seq(c, [left, self._part_nn(e.right)])
            return entry.emit(a, b, None, sets and self.one_bit(
                T.strip(self.t(e.right)).elem, a, paren=True))
        if entry.kind == "equal":
            if isinstance(e.right, ast.NoneLit) or isinstance(e.left, ast.NoneLit):
                other = e.left if isinstance(e.right, ast.NoneLit) else e.right
                return f"({self.ex(other, c)} is {'' if op == '==' else 'not '}None)"
            a, b = self.seq(c, [self._part_ex(e.left), self._part_ex(e.right)])
            return self._folded(op, a, b) or entry.emit(a, b, None, False)
        a, b = self.seq(c, [self._part_nn(e.left), self._part_nn(e.right)])
        if entry.kind == "order":
            folded = self._folded(op, a, b)
            if folded:
                return folded
        if entry.fast is not None and isinstance(e.right, ast.IntLit) and e.right.value != 0:
            return f"({a} {entry.fast} {b})"
        where = self.L(e.span) if entry.faults else None
        if op == "+" and T.strip(self.t(e)).kind == "list":
            return f"concat({a}, {b}, LIMIT_COLLECTION, {self.L(e.span)})"
        return entry.emit(a, b, where, T.strip(self.t(e.left)).kind == "set")

    @staticmethod
    def _folded(op: str, a: str, b: str) -> Code | None:
        """A comparison of two constants (folded parameters, enum members, literals: Python
        ints and bools, neither of which can fault), as the constant it denotes, by the
        operator's own function in the semantics table: `map == Benelux` on a map chosen at
        load. None if either side is not such a constant."""
        va, vb = const_of(a), const_of(b)
        if type(va) not in (int, bool) or type(vb) not in (int, bool):
            return None
        v = BINARY_OPS[op].pure(va, vb)
        return Code("True" if v else "False", simple=True, const=v)

    # len(S) compared with 0 (or 1) -> whether S is empty (op flipped when the literal is left)
    _EMPTY = {(">", 0): False, ("!=", 0): False, (">=", 1): False,
              ("==", 0): True, ("<=", 0): True, ("<", 1): True}
    _MIRROR = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}

    def _empty_test(self, e, op: str):
        """(S, True when the test is `S is empty`) for `len(S) > 0`, `len(S) == 0`, `0 < len(S)`
        and the like on a set S: a mask is tested against 0 instead of counting its members
        (S's code is evaluated the same, once; a set's mask is never negative). None if e is
        not such a test."""
        left, right = e.left, e.right
        if isinstance(left, ast.IntLit) and not isinstance(right, ast.IntLit):
            left, right, op = right, left, self._MIRROR.get(op, op)
        if not (isinstance(right, ast.IntLit) and isinstance(left, ast.Call)
                and left.name == "len" and self.p.refs.get(left, ("",))[0] not in ("def", "table")
                and len(left.args) == 1
                and T.strip(self.t(left.args[0])).kind == "set"):
            return None
        is_empty = self._EMPTY.get((op, right.value))
        return None if is_empty is None else (left.args[0], is_empty)

    def emit_Not(self, e, c):
        return self.ex_not(e.operand, c)

    def emit_Neg(self, e, c):
        return f"(-{self.nn(e.operand, c)})"

    def emit_Range(self, e, c):
        return f"list({self.range_code(e, c)[1]})"

    def range_code(self, e, c) -> tuple[bool, str]:
        """(True, a Python range) when the bounds are constants within the size limit, else
        (False, an int_range call that checks the step and the size and returns a range)."""
        bounds = self.const_bounds(e)
        if bounds is not None:
            lo, hi, step = bounds
            if step != 1:
                return True, f"range({lo}, {hi + 1}, {step})"
            return True, f"range({hi + 1})" if lo == 0 else f"range({lo}, {hi + 1})"

        if self.k.growth.small_range(e):  # bounds known to be small: a Python range
            codes = self.seq(c, [self._part_nn(e.lo), self._part_nn(e.hi)])
            step = f", {e.step.value}" if e.step is not None else ""
            lo, hi = codes
            if not step and type(const_of(lo)) is int and const_of(lo) == 0:
                return True, f"range({hi} + 1)"
            return True, f"range({lo}, {hi} + 1{step})"

        def part(x):
            return (lambda cc: self.kept(x, self.nn(x, cc))), self._ok(x) and not self.may_exceed(x)
        parts = [part(e.lo), part(e.hi)]
        if e.step is not None:
            parts.append(part(e.step))
        codes = self.seq(c, parts)
        step = codes[2] if e.step is not None else "1"
        return False, (f"int_range({codes[0]}, {codes[1]}, {step}, {self.L(e.span)}, "
                       "LIMIT_COLLECTION)")

    def emit_Index(self, e, c):
        obj, ix = self.seq(c, [self._part_nn(e.obj), self._part_nn(e.index)])
        if T.strip(self.t(e.obj)).kind == "list":
            return f"list_item({obj}, {ix}, {self.L(e.span)})"
        return f"{obj}[{ix}]"

    def emit_Attr(self, e, c):
        ref = self.p.refs[e]
        if ref[0] == "member":
            return Code(repr(ref[2]), simple=True, const=ref[2])
        obj = self.nn(e.obj, c)
        if ref[0] == "cell":
            info = self.p.enums[T.strip(self.t(e.obj)).name]
            c0, ncols, _rows = info.grid
            if ref[1] == "col":
                return f"({obj} % {ncols} + {c0})"
            return f"({obj} // {ncols})"
        field = self.p.enums[ref[1]].fields[ref[2]][0]
        return f"FIELD_{ident(ref[1])}_{ident(field)}[{obj}]"

    def emit_Call(self, e, c):
        ref = self.p.refs[e]
        if ref[0] == "def":
            d = self.p.defs[ref[1]]
            g = self.plan.def_guards.get(d.name) if c.sink is not None else None
            if g is not None and id(e) not in self._guarded and self.args_safe(e):
                return self._guarded_call(e, g, c)
            if c.sink is not None and d.name in self.plan.keyed_defs:
                return self._keyed_call(e, d, c)
            if c.sink is not None and d.name in self.plan.cached_defs:
                # kept on the state until a variable it reads is written (plan_cached_defs)
                attr = f"s.c_{ident(d.name)}"
                t = c.sink.tmp()
                c.sink.emit(f"{t} = {attr}")
                c.sink.emit(f"if {t} is None:")
                inner = c.sink.deeper()
                cc = Ctx(c.py, inner, c.hoist and c.hoist.in_kept_branch())
                code = (self.inline_call(e, d, cc) if d.name in self.plan.inline
                        else f"def_{ident(d.name)}(s)")
                inner.emit(f"{t} = {attr} = {code}")
                return t
            if c.sink is not None and d.name in self.plan.inline:
                return self.inline_call(e, d, c)
            parts = []
            for a, f in zip(e.args, d.params):
                want = self.p.slot_types[self.p.slots[f]]
                is_safe = self.safe(a) and not self.may_exceed(a) and not (
                    want.kind not in ("opt", "none", "any") and self.optional(a))
                parts.append(((lambda cc, a=a, want=want: self.kept(a, self.conv(a, cc, want))),
                              is_safe))
            args = self.seq(c, parts)
            return f"def_{ident(d.name)}({', '.join(['s', *args])})"
        if id(e) in self.plan.path_rows and c.hoist is not None and c.sink is not None:
            row = self._path_row(e, c)
            if row is not None:
                return f"{row}.get({self.nn(e.args[2], c)})"
        args = self.seq(c, [self._part_nn(a) for a in e.args])
        if ref[0] == "table":
            name = ident(ref[1])
            dense = self.plan.dense.get(ref[1]) if c.sink is not None else None
            if dense is not None:
                return self._dense_lookup(name, dense, args, self.L(e.span), c)
            return f"table_{name}({', '.join(args)}, {self.L(e.span)})"
        entry = BUILTINS.get(e.name)
        if entry is None:
            raise EmitError(f"no emitter for builtin {e.name}")
        return entry.emit(self, e, args)

    def args_safe(self, e: ast.Call) -> bool:
        """Whether binding a def call's arguments to its parameters cannot fault (no fault in
        an argument, no int past the limit, no none for a parameter that takes none): then a
        guard may skip the call whole (plan_def_guards)."""
        d = self.p.defs[e.name]
        for a, f in zip(e.args, d.params):
            want = self.p.slot_types[self.p.slots[f]]
            if not self.safe(a) or self.may_exceed(a) or (
                    want.kind not in ("opt", "none", "any") and self.optional(a)):
                return False
        return True

    def _guarded_call(self, e: ast.Call, g, c: Ctx) -> str:
        """A bool def asked behind the condition its being true implies (passes.py,
        plan_def_guards): `guard and def(...)`, the def's code printed on the guard's branch."""
        guard = self.guard_code(e.name, c)
        if is_false(guard):
            return guard
        self._guarded.add(id(e))
        try:
            if is_true(guard):
                return self.ex(e, c)
            b, b_lines = self._branch(e, c, self.ex)
        finally:
            self._guarded.discard(id(e))
        if not b_lines:
            return f"({guard} and {b})"
        return self._short_circuit("and", guard, b, b_lines, c)

    @staticmethod
    def _short_circuit(op: str, a: str, b: str, b_lines: list[str], c: Ctx) -> str:
        """`a and b` (`a or b`) where b needs statements of its own (b_lines, printed one level
        in): a temporary set to a, and to b where a does not decide."""
        t = c.sink.tmp()
        c.sink.emit(f"{t} = {a}")
        c.sink.emit(f"if {'' if op == 'and' else 'not '}{t}:")
        c.sink.lines.extend(b_lines)
        c.sink.emit(f"    {t} = {b}")
        return t

    def guard_code(self, name: str, c: Ctx) -> str:
        """The code of def `name`'s guard (passes.plan_def_guards), computed once before the
        loops of a listing."""
        g = self.plan.def_guards[name]
        if g.cond is not None:
            guard = self.try_hoist(g.cond, c) if c.hoist is not None else None
            return guard if guard is not None else self.ex(g.cond, c)
        if c.hoist is not None:
            key = ("guard", name)
            if key not in c.hoist.shared:
                c.hoist.shared[key] = self.hoisted(-1, c, lambda cc: self._guard_value(name, g,
                                                                                      cc))
            return c.hoist.shared[key]
        return self._guard_value(name, g, c)

    def _guard_value(self, name: str, g, c: Ctx) -> str:
        """The aggregate guard of def `name` (at least g.least members of the whole enum pass
        its test), kept on the state until a variable it reads is written."""
        attr = f"s.g_{ident(name)}"
        t = c.sink.tmp()
        c.sink.emit(f"{t} = {attr}")
        c.sink.emit(f"if {t} is None:")
        inner = c.sink.deeper()
        n, v = inner.tmp(), inner.tmp()
        inner.emit(f"{n} = 0")
        inner.emit(f"for {v} in ALL_{ident(g.enum)}:")
        body = inner.deeper()
        test = self.test(g.agg.elem, Ctx({**c.py, self.p.slots[g.agg]: Code(v, simple=True)},
                                         body, None))
        test.emit(f"{n} += 1")
        test.emit(f"if {n} >= {g.least}:")
        test.emit("    break")
        inner.emit(f"{t} = {attr} = {n} >= {g.least}")
        return t

    def _dense_lookup(self, name: str, dense, args: list, where: str, c) -> str:
        """A table call read from its flat tuple (passes.py, plan_dense_tables) when every int
        key is in its range and the cell has a row; the row function otherwise. One
        expression, so that an `and` around it needs no statements: the keys are evaluated
        once each, in order, on the way to the cell (a key that is not a simple name is bound
        by the test that needs it), and the function gets the bound names, or, for a key that
        a failed test may have skipped, its expression again (keys are pure)."""
        dims = dense.dims
        tested = [d[0] == "int" and const_of(a) is NOT_CONST for d, a in zip(dims, args)]
        tests, fallback, terms = [], [], []
        offset = 0
        for i, ((kind, lo, count), a) in enumerate(zip(dims, args)):
            stride = dense.stride(i)
            value = const_of(a)
            if value is not NOT_CONST:
                if kind == "int" and not lo <= value <= lo + count - 1:
                    return f"table_{name}({', '.join(args)}, {where})"  # always outside
                offset += (int(value) - lo) * stride
                fallback.append(a)
                continue
            bound = False
            if is_simple(a):
                k = key = a
            elif tested[i] or any(tested[i + 1:]):
                # bound in order, before a later key's test can skip the rest
                k, bound = c.sink.tmp(), True
                key = f"({k} := {strip_parens(a)})"
            else:
                k = key = f"({strip_parens(a)})"  # read where the index is computed
            if kind == "int":
                tests.append(f"{lo} <= {key} <= {lo + count - 1}")
                offset -= lo * stride
            elif bound:
                tests.append(f"{key} is not None")  # (a member: always true)
            terms.append(f"{k} * {stride}" if stride != 1 else f"{k}")
            # the function gets the name if the first test binds it, else the key again
            fallback.append(k if is_simple(a) or bound and len(tests) == 1 else a)
        ix = " + ".join(terms) if terms else str(offset)
        if terms and offset > 0:
            ix += f" + {offset}"
        elif terms and offset < 0:
            ix += f" - {-offset}"
        call = f"table_{name}({', '.join([*fallback, where])})"
        if not dense.full:
            v = c.sink.tmp()
            tests.append(f"({v} := TABLE_{name}[{ix}]) is not None")
            return f"({v} if {' and '.join(tests)} else {call})"
        if not tests:
            return f"TABLE_{name}[{ix}]"
        return f"(TABLE_{name}[{ix}] if {' and '.join(tests)} else {call})"

    # -- what the semantics table's emitters ask for
    def location(self, e) -> str:
        """The location constant of an expression (for helpers that can fault)."""
        return self.L(e.span)

    def known_int(self, code: str) -> int | None:
        """The int a piece of code is known to denote (a literal, a folded constant), or None."""
        value = const_of(code)
        return value if type(value) is int else None

    def bare(self, code: str) -> str:
        return strip_parens(code)

    def name_of_enum(self, name: str) -> str:
        return ident(name)

    def name_of_graph(self, name: str) -> str:
        return ident(name)

    def graph_table(self, table: str, e, code: str) -> str:
        """The constant `table` (GRAPH, GRAPH_NEIGHBORS or EDGE_COSTS) of the graph that e (of
        code `code`) denotes: the graph's own constant when it is known here (a graph's name,
        or a const or a parameter-only choice folded at load), else the graph value's entry
        in the tuple of every graph's."""
        i = self.known_int(code)
        if i is None:
            i = self.static_graph(e)
        if i is not None:
            return f"{table}_{ident(list(self.p.graphs)[i])}"
        return f"GRAPHS_{table}[{code}]"

    def static_graph(self, e) -> int | None:
        """The index of the graph a graph expression that reads no state and no local always
        denotes (None: not known before run time, or it would fault)."""
        if any(self.p.refs.get(n, ("",))[0] in ("local", "state", "players", "num_players")
               or isinstance(n, ast.Call) and self.p.refs.get(n, ("",))[0] == "def"
               for n in _walk(e)):
            return None
        try:
            name = self.k.eval_const(e)
        except RulesRuntimeError:
            return None
        return list(self.p.graphs).index(name) if name in self.p.graphs else None

    def _path_row(self, e: ast.Call, c: Ctx) -> str | None:
        """path_cost(G, S, t, A) in a loop where G, S and A do not change (passes.plan_path_rows):
        the distances from S (path_row, the dict path_cost reads) are fetched once, at the
        outermost loop level where G, S and A are bound, and each target reads its entry."""
        level = -1
        for a in (e.args[0], e.args[1], *e.args[3:]):
            lv = self.hoist_level(a, c, True)
            if lv is None:
                return None
            level = max(level, lv)
        if level >= c.hoist.cur:
            return None

        def row(cc):
            parts = [self._part_nn(x) for x in e.args[:2]]
            if len(e.args) > 3:
                parts.append(self._part_nn(e.args[3]))
            codes = self.seq(cc, parts)
            return emit_path_row(self, e, codes if len(e.args) > 3 else [*codes, "None"])
        return self.hoisted(level, c, row)

    def _keyed_call(self, e: ast.Call, d: ast.DefDecl, c: Ctx) -> str:
        """A call of a def kept per argument tuple (passes.py, plan_keyed_defs): the arguments
        in order, then the kept value at their mixed-radix position, computed (inlined when the
        plan says so) and kept when missing."""
        kd = self.plan.keyed_defs[d.name]
        args = []
        for code in self.seq(c, [self._part_nn(a) for a in e.args]):
            args.append(code if is_simple(code) else c.sink.bind(code))
        key = ("def", d.name, tuple(args))
        known = c.sink.recall(key)
        if known is not None:
            return known
        # the position: each argument times its stride, constant arguments summed
        terms, fixed = [], 0
        for j, a in enumerate(args):
            v = {"True": 1, "False": 0}.get(a, self.known_int(a))
            if v is not None:
                fixed += v * kd.stride(j)
            else:
                terms.append(f"{a} * {kd.stride(j)}" if kd.stride(j) > 1 else a)
        at = " + ".join(terms + ([str(fixed)] if fixed or not terms else []))
        if len(terms) == 1 and not fixed:
            at = terms[0]  # (a simple argument stays simple)
        attr = f"s.c_{ident(d.name)}"
        h = c.hoist
        new = f"[None] * {kd.size}"
        if h is not None:
            # The list of kept values is fetched once, before the whole expression (or the
            # legal function's loops): nothing forgets it until the expression has run, so
            # a call in a loop (Acquire's playable(t) over a hand) asks the state once.
            list_key = ("keyed", d.name)
            kept = h.shared.get(list_key)
            if kept is None:
                pre, lifted = h.level0(list_key)
                kept = h.outer[1].get(list_key) if lifted else None
                if kept is None:
                    kept = pre.tmp()
                    pre.emit(f"{kept} = {attr}")
                    pre.emit(f"if {kept} is None:")
                    pre.emit(f"    {kept} = {attr} = {new}")
                    if lifted:
                        h.outer[1][list_key] = kept
                h.shared[list_key] = kept
        else:
            kept = c.sink.tmp()
            c.sink.emit(f"{kept} = {attr}")
            c.sink.emit(f"if {kept} is None:")
            c.sink.emit(f"    {kept} = {attr} = {new}")
        if terms and not is_simple(at):
            ix = c.sink.tmp()
            c.sink.emit(f"{ix} = {at}")
            at = ix
        t = c.sink.tmp()
        c.sink.emit(f"{t} = {kept}[{at}]")
        c.sink.emit(f"if {t} is None:")
        inner = c.sink.deeper()
        if d.name in self.plan.inline:
            cc = Ctx({self.p.slots[prm]: a for prm, a in zip(d.params, args)}, inner,
                     c.hoist and c.hoist.in_kept_branch())
            code = self.conv(d.body, cc, self.p.def_ret[d.name])
        else:
            code = f"def_{ident(d.name)}({', '.join(['s', *args])})"
        inner.emit(f"{t} = {kept}[{at}] = {code}")
        c.sink.memo[key] = t
        return t

    def inline_call(self, e: ast.Call, d: ast.DefDecl, c: Ctx) -> str:
        """An expression-bodied def expanded in place: arguments are evaluated (and none-checked)
        first, in order, then the body with the parameters bound to them. An expression body
        cannot change its arguments, so list arguments need no copy."""
        parts = []
        # a plain int argument that may have grown, with nothing after it that can fault: its
        # limit check is printed inline where it is bound (two comparisons, not a call of
        # bounded; the same fault at the same point, the arguments after it being safe)
        checked = set()
        for i, (a, f) in enumerate(zip(e.args, d.params)):
            want = self.p.slot_types[self.p.slots[f]]
            part = self._part_ex(a) if want.kind in ("opt", "none", "any") else self._part_nn(a)
            if T.none_levels(self.t(a), want) is not None:  # (conv's check of the elements)
                part = ((lambda cc, fn=part[0], a=a, want=want:
                         self.elems_checked(a, fn(cc), want)), False)
            if self.may_exceed(a):
                if want.kind == "int" and not self.fits(a, self._int_env) and all(
                        self.safe(b) and not self.may_exceed(b) for b in e.args[i + 1:]):
                    checked.add(i)
                else:
                    part = ((lambda cc, fn=part[0], a=a: self.kept(a, fn(cc))), False)
            parts.append(part)
        codes = self.seq(c, parts)
        py = {}
        levels = {}  # parameters bound to plain names: the loop level of what they name
        for i, (a, f, code) in enumerate(zip(e.args, d.params, codes)):
            if i in checked:
                t = c.sink.tmp()
                c.sink.emit(f"{t} = {strip_parens(code)}")
                self.check_after(a, c, t)
                code = Code(t, simple=True)
            elif not is_simple(code):
                t = c.sink.tmp()
                c.sink.emit(f"{t} = {code}")
                code = t
            elif c.hoist is not None and isinstance(a, ast.Name | ast.IntLit | ast.BoolLit):
                level = self.hoist_level(a, c, True)
                if level is not None:
                    levels[self.p.slots[f]] = level
            py[self.p.slots[f]] = code
        # A pure def called again with the very same arguments: reuse the first result.
        key = ("def", d.name, tuple(codes))
        known = c.sink.recall(key)
        if known is not None:
            return known
        h = c.hoist
        if levels:
            # path_cost's distances in the body may be fetched outside the loops (_path_row)
            h = replace(h, def_level={**h.def_level, **levels})
        inner = Ctx(py, c.sink, h)
        ret = self.p.def_ret[d.name]
        saved = self._int_env
        self._int_env = {**saved, **self.param_bounds(
            (self.p.slots[f], a) for a, f in zip(e.args, d.params))}
        try:
            if isinstance(d.body, ast.Block):
                result = self._inline_cond(list(d.body.stmts), inner, ret)
                if result is None:
                    # A body of lets, ifs and returns: each return assigns the result.
                    result = c.sink.tmp()
                    self._inline_stmts(list(d.body.stmts), inner, result, ret)
            else:
                result = self.conv(d.body, inner, ret)
        finally:
            self._int_env = saved
        if is_simple(result):
            c.sink.memo[key] = result
        return result

    def _inline_cond(self, stmts: list, c: Ctx, ret: T.Type) -> str | None:
        """A def body `if C { return X } return Y` whose three parts print as plain expressions:
        `(X if C else Y)`, which evaluates them in the same order (Acquire's founds_eighth, asked
        for every tile of a hand), else None. The attempt prints into a sink of its own, so
        nothing it remembers outlives it when it fails."""
        if len(stmts) != 2 or not isinstance(stmts[0], ast.If) \
                or not isinstance(stmts[1], ast.Return) or self._capture_any:
            return None
        st = stmts[0]
        if len(st.branches) != 1 or st.orelse is not None:
            return None
        cond, block = st.branches[0]
        if len(block.stmts) != 1 or not isinstance(block.stmts[0], ast.Return):
            return None
        sk = Sink(c.sink.fn, c.sink.ind, parent=c.sink)
        cc = c.at(sk)
        test = self.ex(cond, cc)
        then = self.conv(block.stmts[0].value, cc, ret)
        mark = len(self._not_none)
        self._not_none.extend(self._none_facts(cond, "or"))  # `if x == none { return }`
        try:
            other = self.conv(stmts[1].value, cc, ret)
        finally:
            del self._not_none[mark:]
        if sk.lines:
            return None
        if is_true(test) or is_false(test):  # a folded parameter: one way only
            return then if is_true(test) else other
        return f"({then} if {test} else {other})"

    def _inline_stmts(self, stmts: list, c: Ctx, result: str, ret: T.Type) -> None:
        """Statements of an inlined def body (see _structured): code after an `if` whose
        branches return is emitted inside the one branch that falls through. After `if x ==
        none { return/fail }` (no other branch), x is known not to be none."""
        mark = len(self._not_none)
        try:
            self._inline_stmts_from(stmts, c, result, ret)
        finally:
            del self._not_none[mark:]

    def _inline_stmts_from(self, stmts: list, c: Ctx, result: str, ret: T.Type) -> None:
        sk = c.sink
        for i, st in enumerate(stmts):
            if isinstance(st, ast.Let):
                slot = self.p.slots[st]
                c, name = c.with_local(slot)
                c = c.at(sk)
                sk.emit(f"{name} = {self.conv(st.value, c, self.p.slot_types[slot])}")
            elif isinstance(st, ast.Return):
                sk.emit(f"{result} = {self.conv(st.value, c, ret)}")
                return
            elif isinstance(st, ast.Fail):
                # the def's fault, raised where it is expanded (same message and location)
                sk.emit(f"raise RulesRuntimeError({st.message!r}, {self.L(st.span)})")
                return
            else:
                assert isinstance(st, ast.If)
                rest = stmts[i + 1:]
                blocks = [b for _c, b in st.branches] + [st.orelse]
                if not any(b is not None and _has_return(b.stmts) for b in blocks):
                    rest = []
                bodies = []
                for b in blocks:
                    body = list(b.stmts) if b is not None else []
                    if not _returns(body):
                        body += rest
                    bodies.append(body)

                # `if x == none { return/fail }`: x is not none in what comes after it
                facts = (self._none_facts(st.branches[0][0], "or")
                         if len(st.branches) == 1 and st.orelse is None
                         and _returns(list(st.branches[0][1].stmts)) else [])

                def emit_body(inner_sink, body, c=c, bodies=bodies, facts=facts):
                    if body:
                        mark = len(self._not_none)
                        if body is bodies[-1]:
                            self._not_none.extend(facts)
                        self._inline_stmts(body, c.at(inner_sink), result, ret)
                        del self._not_none[mark:]
                    else:
                        inner_sink.emit("pass")
                self._if_chain(c, st.branches, bodies, emit_body)
                if rest or _has_return([st]):
                    return
                self._not_none.extend(facts)

    def _if_chain(self, c: Ctx, branches, bodies: list, emit_body) -> None:
        """if/elif/else over (cond, _) branches; bodies[i] (one more for the else: None or
        empty means none) are written by emit_body(sink, body). A condition that needs
        statements turns its `elif` into `else:` + `if`."""
        cur = c.sink
        opened = False  # an `if` is written at cur's level
        for i, (cond, _b) in enumerate(branches):
            if not opened:
                before = len(cur.lines)
                code = self.ex(cond, c.at(cur))
                const = len(cur.lines) == before and (is_true(code) or is_false(code))
                if const and is_false(code):  # a folded parameter: never taken
                    continue
                if const:  # always taken: no test, and the later branches are dead
                    emit_body(cur, bodies[i])
                    return
                cur.emit(f"if {code}:")
                opened = True
            else:
                pre = cur.scratch(1)
                code = self.ex(cond, c.at(pre))
                if not pre.lines and is_false(code):
                    continue
                if not pre.lines and is_true(code):
                    cur.emit("else:")
                    emit_body(cur.deeper(), bodies[i])
                    return
                if pre.lines:
                    cur.emit("else:")
                    cur = cur.deeper()
                    cur.lines.extend(pre.lines)
                    cur.emit(f"if {code}:")
                else:
                    cur.emit(f"elif {code}:")
            emit_body(cur.deeper(), bodies[i])
        if bodies[-1]:
            if opened:
                cur.emit("else:")
                emit_body(cur.deeper(), bodies[-1])
            else:
                emit_body(cur, bodies[-1])
