"""Printing aggregates, comprehensions, sorts and collection literals."""

from __future__ import annotations

from rulelang import ast
from rulelang import types as T
from rulelang.codegen.support import (
    AGG_LOOP_DEPTH,
    NOT_CONST,
    SMALL_ENUM,
    Ctx,
    const_of,
    ident,
    is_simple,
)


class AggregatePrinter:
    def _field_walk(self, e, c: Ctx) -> str | None:
        """The members an aggregate or comprehension over an enum with the filter `x.f == v`
        walks instead (passes.plan_field_walks: those whose field f is v, so the filter is not
        tested), or None."""
        match = self.plan.field_walks.get(id(e))
        if match is None:
            return None
        enum, i, v = match
        info = self.p.enums[enum]
        table = f"MEMBERS_{ident(enum)}_{ident(info.fields[i][0])}"
        key = self.nn(v, c)
        return f"{table}.get({key}, ())" if info.fields[i][1].kind == "int" \
            else f"{table}[{key}]"

    def _gen(self, e, c: Ctx, elem_code_fn) -> tuple[str, Ctx]:
        inner, var = c.with_local(self.p.slots[e])
        it = self._field_walk(e, c)
        if it is not None:
            return f"{elem_code_fn(inner)} for {var} in {it}", inner
        it = self.iter_code(e.iter, c)
        cond = f" if {self.ex(e.cond, inner)}" if e.cond is not None else ""
        return f"{elem_code_fn(inner)} for {var} in {it}{cond}", inner

    def _loop(self, e, c: Ctx) -> Ctx:
        """`for var in iter:` (and `if not cond: continue`) in the sink; the body's context."""
        inner, var = c.with_local(self.p.slots[e])
        members = self._field_walk(e, c)
        if members is not None:
            c.sink.emit(f"for {var} in {members}:")
            body = c.sink.deeper()
            ic = inner.at(body)
            if ic.hoist is not None:
                ic = Ctx(ic.py, body, ic.hoist.in_aggregate())
            return ic
        walk = self.set_walk(e.iter, c, var)
        if walk is None:
            it = self.iter_code(e.iter, c)
            c.sink.emit(f"for {var} in {it}:")
        else:
            for line in walk[0]:
                c.sink.emit(line)
        body = c.sink.deeper()
        if walk is not None:
            for line in walk[1]:
                body.emit(line)
        ic = inner.at(body)
        if ic.hoist is not None:  # loop-invariant parts go before the loop (try_hoist)
            ic = Ctx(ic.py, body, ic.hoist.in_aggregate())
        if e.cond is not None:
            body.emit(f"if {self.ex_not(e.cond, ic)}:")
            body.emit("    continue")
        return ic

    def _pattern(self, e, c: Ctx) -> str | None:
        """Code of an aggregate the passes matched to a whole-mask or extreme form (passes.py,
        plan_mask_patterns), or None."""
        match = self.plan.patterns.get(id(e))
        if match is None:
            return None
        if match[0] == "extreme":
            _kind, arr, bound, op, fn, func, members = match
            a, k = self.seq(c, [self._part_nn(arr), self._part_nn(bound)])
            if members <= SMALL_ENUM and c.sink is not None:
                # the cells' tests in one chain (each operand is a bool), the array and the
                # bound read once
                a, k = (x if is_simple(x) or const_of(x) is not NOT_CONST else c.sink.bind(x)
                        for x in (a, k))
                join = " or " if func == "any" else " and "
                return "(" + join.join(f"{a}[{i}] {op} {k}" for i in range(members)) + ")"
            return f"({fn}({a}) {op} {k})"
        if match[0] == "below":  # the members y of S with `y op x`, and those without
            _kind, sset, x, op = match
            m, k = self.seq(c, [self._part_nn(sset), self._part_nn(x)])
            low = f"((1 << {k}) - 1)" if op in ("<", ">=") else f"((2 << {k}) - 1)"
            hit, miss = (f"({m} & {low})", f"({m} & ~{low})") if op in ("<", "<=") \
                else (f"({m} & ~{low})", f"({m} & {low})")
            if e.func == "count":
                return f"{hit}.bit_count()"
            return f"({hit} != 0)" if e.func == "any" else f"({miss} == 0)"
        _kind, cell, sset_expr, op = match
        grid = self.name_of_enum(T.strip(self.t(cell)).name)
        x, sset = self.seq(c, [self._part_nn(cell), self._part_ex(sset_expr)])
        m = f"NEIGHBOR_MASKS_{grid}[{x}]"
        hit = f"({m} & {sset})" if op == "in" else f"({m} & ~{sset})"
        if isinstance(e, ast.Comp):
            return hit
        if e.func == "any":
            return f"({hit} != 0)"
        if e.func == "count":
            return f"{hit}.bit_count()"
        miss = f"({m} & ~{sset})" if op == "in" else f"({m} & {sset})"
        return f"({miss} == 0)"

    def emit_Agg(self, e, c):
        if id(e) in self._known_any:
            return self._known_any[id(e)]
        f = e.func
        w = self.L(e.span)
        code = self._pattern(e, c)
        if code is not None:
            return code
        if c.sink is None or c.sink.fn.loops >= AGG_LOOP_DEPTH:
            return self._agg_expr(e, c.pure())
        sk = c.sink
        sk.fn.loops += 1
        try:
            return self._agg_loop(e, c, sk, f, w)
        finally:
            sk.fn.loops -= 1

    def _agg_loop(self, e, c, sk, f, w):
        t = sk.tmp()
        init = {"count": "0", "sum": "0", "any": "False", "all": "True"}.get(f, "None")
        sk.emit(f"{t} = {init}")
        cap = self._capture_any.pop(id(e), None) if f == "any" else None
        if cap is not None:  # the pairs of the members passing, for the decision after this test
            cap, pair = cap
            sk.emit(f"{cap} = []")
        ic = self._loop(e, c)
        body = ic.sink
        if cap is not None:
            then = self.test(e.elem, ic)
            then.emit(f"{cap}.append({pair(ic.py[self.p.slots[e]])})")
            then.emit(f"{t} = True")
            return t
        if f == "count":
            self.test(e.elem, ic).emit(f"{t} += 1")
        elif f == "sum":
            body.emit(f"{t} += {self.nn(e.elem, ic)}")
        elif f in ("any", "all"):
            # The interpreter evaluates every element before it decides: stop early only when
            # the remaining elements cannot fault.
            if f == "any":
                then = self.test(e.elem, ic)
            else:
                body.emit(f"if {self.ex_not(e.elem, ic)}:")
                then = body.deeper()
            then.emit(f"{t} = {'True' if f == 'any' else 'False'}")
            if self.safe(e.elem):
                then.emit("break")
        elif f == "first":
            body.emit(f"{t} = {self.ex(e.elem, ic)}")
            body.emit("break")
        else:
            v = sk.tmp()
            body.emit(f"{v} = {self.nn(e.elem, ic)}")
            body.emit(f"if {t} is None or {v} {'<' if f == 'min' else '>'} {t}:")
            body.emit(f"    {t} = {v}")
            sk.emit(f"if {t} is None:")
            sk.emit(f"    fault_empty({f!r}, {w})")
        return t

    def _agg_expr(self, e, c):
        f = e.func
        w = self.L(e.span)
        if f == "count":
            inner, var = c.with_local(self.p.slots[e])
            conds = [self.ex(e.elem, inner)]
            members = self._field_walk(e, c)
            if members is not None:
                return f"sum(1 for {var} in {members} if {conds[0]})"
            if e.cond is not None:
                conds.insert(0, self.ex(e.cond, inner))
            return (f"sum(1 for {var} in {self.iter_code(e.iter, c)} "
                    f"if {' and '.join(conds)})")
        if f in ("any", "all"):
            gen, _ = self._gen(e, c, lambda inner: self.ex(e.elem, inner))
            # every element is evaluated first unless none of them can fault
            return f"{f}({gen})" if self.safe(e.elem) else f"{f}([{gen}])"
        if f == "first":
            gen, _ = self._gen(e, c, lambda inner: self.ex(e.elem, inner))
            return f"next(({gen}), None)"
        gen, _ = self._gen(e, c, lambda inner: self.nn(e.elem, inner))
        if f == "sum":
            return f"sum({gen})"
        return f"extreme([{gen}], {f}, {f!r}, {w})"

    def emit_Sort(self, e, c):
        it = self.iter_code(e.iter, c)
        inner, var = c.pure().with_local(self.p.slots[e])
        keys = []
        for k in e.keys:
            code = self.nn(k.key, inner)
            keys.append(f"-{code}" if k.descending else code)
        return f"sorted({it}, key=lambda {var}: ({', '.join(keys)},))"

    def emit_ArrayLit(self, e, c):
        return self._items(e, self.p.array_values[e], c)

    def emit_ListLit(self, e, c):
        return self._items(e, e.items, c)

    def _items(self, e, items, c):
        elem = T.strip(self.t(e)).elem
        parts = []
        for x in items:
            is_safe = self.safe(x) and not (
                elem.kind not in ("opt", "none", "any") and self.optional(x))
            parts.append(((lambda cc, x=x: self.kept(x, self.conv(x, cc, elem))),
                          is_safe and not self.may_exceed(x)))
        return "[" + ", ".join(self.seq(c, parts)) + "]"

    def emit_SetLit(self, e, c):
        if not e.items:
            return "0"
        if any(self.optional(x) for x in e.items):
            items = ", ".join(self.seq(c, [self._part_ex(x) for x in e.items]))
            return f"mask_of(({items},), {self.L(e.span)})"
        codes = self.seq(c, [self._part_ex(x) for x in e.items])
        elem = T.strip(self.t(e)).elem
        if len(codes) == 1:
            return self.one_bit(elem, codes[0], paren=True)
        return "(" + " | ".join(self.one_bit(elem, x, paren=True) for x in codes) + ")"

    def emit_Comp(self, e, c):
        code = self._pattern(e, c)
        if code is not None:
            return code
        if c.sink is not None and c.sink.fn.loops < AGG_LOOP_DEPTH:
            c.sink.fn.loops += 1
            try:
                return self._comp_loop(e, c)
            finally:
                c.sink.fn.loops -= 1
        c = c.pure()
        if e.kind != "set":
            elem_t = T.strip(self.t(e)).elem
            gen, _ = self._gen(
                e, c, lambda inner: self.kept(e.elem, self.conv(e.elem, inner, elem_t)))
            return f"[{gen}]"
        gen, _ = self._gen(e, c, lambda inner: self.ex(e.elem, inner))
        if not self.elem_optional(e):
            return f"mask_of_known({gen})"
        return f"mask_of([{gen}], {self.L(e.elem.span)})"

    def _comp_loop(self, e, c):
        sk = c.sink
        t = sk.tmp()
        if e.kind != "set":
            elem_t = T.strip(self.t(e)).elem
            sk.emit(f"{t} = []")
            ic = self._loop(e, c)
            ic.sink.emit(f"{t}.append({self.kept(e.elem, self.conv(e.elem, ic, elem_t))})")
            return t
        sk.emit(f"{t} = 0")
        if not self.elem_optional(e):
            ic = self._loop(e, c)
            ic.sink.emit(f"{t} |= {self.one_bit(T.strip(self.t(e)).elem, self.ex(e.elem, ic))}")
            return t
        # The interpreter collects every element, then rejects a none among them.
        bad = sk.tmp()
        sk.emit(f"{bad} = False")
        ic = self._loop(e, c)
        v = sk.tmp()
        ic.sink.emit(f"{v} = {self.ex(e.elem, ic)}")
        ic.sink.emit(f"if {v} is None:")
        ic.sink.emit(f"    {bad} = True")
        ic.sink.emit("else:")
        ic.sink.emit(f"    {t} |= {self.one_bit(T.strip(self.t(e)).elem, v)}")
        sk.emit(f"if {bad}:")
        sk.emit(f"    fault_set_none({self.L(e.elem.span)})")
        return t

    # -- statements
