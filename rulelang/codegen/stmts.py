"""Printing statements, def bodies and table functions."""

from __future__ import annotations

import re

from rulelang import ast
from rulelang import types as T
from rulelang.codegen.analysis import _all_nodes
from rulelang.codegen.passes import kept_index
from rulelang.codegen.support import (
    Code,
    Ctx,
    EmitError,
    Sink,
    _Fn,
    _Hoist,
    ident,
    is_simple,
    slot_attr,
    strip_parens,
)
from rulelang.codegen.tree import (
    _ONE_PASS,
    _block_exprs,
    _stmt_exprs,
)
from rulelang.consts import table_key_members
from rulelang.lower import binding_nodes

# code that needs no parentheses as an operand: names, attributes and subscripts of them
_PRIMARY = re.compile(r"[\w.\[\]]+")


class StmtPrinter:
    def target(self, lv: ast.LValue, c: Ctx) -> str:
        """An assignable Python expression for an lvalue (indexes range-checked on lists)."""
        ref = self.p.refs[lv]
        if ref[0] == "local":
            code = c.py.get(ref[1]) or Code(f"s.{slot_attr(ref[1])}", simple=True)
            t = self.p.slot_types[ref[1]]
        else:
            code = f"s.v_{ident(ref[1])}"
            t = self.p.state_types[ref[1]]
        for ix in lv.indices:
            t = T.strip(t)
            i = self.nn(ix, c)
            if t.kind == "list":
                code = f"{code}[list_index({code}, {i}, {self.L(lv.span)})]"
            else:
                code = f"{code}[{i}]"
            t = t.elem
        return code

    def _target_safe(self, lv: ast.LValue) -> bool:
        ref = self.p.refs[lv]
        t = self.p.slot_types[ref[1]] if ref[0] == "local" else self.p.state_types[ref[1]]
        for ix in lv.indices:
            t = T.strip(t)
            if t.kind == "list" or not self._ok(ix):
                return False
            t = t.elem
        return True

    def _value_then_target(self, s, c: Ctx, value_fn, value_safe: bool,
                           old_checked: bool = False) -> tuple[str, str]:
        """(value code, target code) for a statement that evaluates its value before the indexes
        of its target (as the interpreter does), whatever order Python uses for the final line.
        old_checked: the final line none-checks the old value before it reads the new one."""
        sk = c.sink
        v = value_fn(c)
        tsk = sk.scratch()
        tgt = self.target(s.target, c.at(tsk))
        target_faults = tsk.lines or old_checked or not self._target_safe(s.target)
        if not value_safe and target_faults and not is_simple(v):
            t = sk.tmp()
            sk.emit(f"{t} = {v}")
            v = t
        sk.lines.extend(tsk.lines)
        return v, tgt

    def stmts(self, stmts, c: Ctx, ind: int, ret: T.Type | None = None) -> list[str]:
        out: list[str] = []
        for s in stmts:
            out.extend(self.stmt(s, c, ind, ret))
        return out or ["    " * ind + "pass"]

    def stmt(self, s, c: Ctx, ind: int, ret: T.Type | None = None) -> list[str]:
        fn = getattr(self, "emit_" + type(s).__name__, None)
        if fn is None:
            raise EmitError(f"no emitter for {type(s).__name__}")
        f = c.sink.fn if c.sink is not None else _Fn()
        sk = Sink(f, ind)
        if c.hoist is not None and not c.hoist.stmt:  # a function that changes no state
            fn(s, c.at(sk), ret)
            lines = sk.lines
        elif isinstance(s, _ONE_PASS):
            # Nothing changes state until every expression of the statement has run: state
            # read more than once is read into Python locals first.
            pre = Sink(f, ind)
            uses = self.name_uses(_stmt_exprs(s))
            fn(s, Ctx(c.py, sk, _Hoist([pre], {}, -1, {}, uses, True, outer=self._loop_outer)),
               ret)
            lines = pre.lines + sk.lines
        else:
            fn(s, Ctx(c.py, sk, None), ret)
            lines = sk.lines
        target = getattr(s, "target", None)
        if isinstance(target, ast.LValue) and self.p.refs[target][0] == "state":
            # kept values of defs that read the variable are forgotten (plan_cached_defs)
            var = self.p.refs[target][1]
            lines += ["    " * ind + f"s.c_{ident(name)} = None"
                      for name, reads in self.plan.cached_defs.items() if var in reads]
            lines += ["    " * ind + f"s.g_{ident(name)} = None"
                      for name, g in self.plan.def_guards.items() if var in g.reads]
            lines += self._forget_keyed(target, var, c, f, ind)
            lines += self._kept_members_after(s, target, var, c, f, ind)
        # The marker lets the module map a generated line back to its .rules line.
        if lines and "  # rules:" not in lines[0]:
            lines[0] = lines[0] + f"  # rules:{s.span.line}"
        return lines

    def _facts_hold(self, st, facts: list) -> bool:
        """Whether expressions tested `!= none` just before statement st keep their values
        through all of st's code: st assigns (or adds to, removes from) a state variable none
        of them reads, so even the int check after its write reads them unchanged."""
        if not isinstance(st, ast.Assign | ast.AugAssign | ast.Add | ast.Remove):
            return False
        ref = self.p.refs.get(st.target)
        if ref is None or ref[0] != "state":
            return False
        return not any(self.p.refs.get(n, ("",)) == ("state", ref[1])
                       for e in facts for n in _all_nodes(e) if hasattr(n, "span"))

    def _forget_keyed(self, target, var: str, c: Ctx, f, ind: int) -> list[str]:
        """After a write of the state variable var: the kept values of defs kept per argument
        tuple (plan_keyed_defs) that the write can change are forgotten: those whose argument
        indexing var is the written index or one of its neighbours, when the index is a plain
        local and those values lie in one slice of the list, else all of them."""
        out: list[str] = []
        pad = "    " * ind
        ix = target.indices[0] if target.indices else None
        for name, kd in self.plan.keyed_defs.items():
            if var not in kd.deps:
                continue
            j, own, nb = kd.deps[var]
            attr = f"s.c_{ident(name)}"
            if j < 0 or 0 < j < len(kd.sizes) - 1 \
                    or not (isinstance(ix, ast.Name) and self.p.refs.get(ix, ("",))[0] == "local"):
                out.append(f"{pad}{attr} = None")
                continue
            x = self.ex(ix, Ctx(c.py, Sink(f, ind), None))
            kept = f.tmp()
            out += [f"{pad}{kept} = {attr}", f"{pad}if {kept} is not None:"]
            if own:
                out.append(f"{pad}    {_forget_at(kd, j, kept, x)}")
            if nb:
                u = f.tmp()
                out += [f"{pad}    for {u} in NEIGHBORS_{ident(kd.enums[j])}[{x}]:",
                        f"{pad}        {_forget_at(kd, j, kept, u)}"]
        return out

    def _kept_members_after(self, s, target, var: str, c: Ctx, f, ind: int) -> list[str]:
        """After a write of a state set whose members are kept as a sorted tuple (passes.py,
        plan_kept_members): `add x` / `remove x` of a local or member x at a local index (or to
        a plain set) insert x into the kept tuple or delete it; any other write forgets the
        tuple at its index, or all of them. Run after the mask's update, so a remove of a
        missing member has faulted before."""
        if var not in self.plan.kept_members:
            return []
        pad = "    " * ind
        attr = f"s.w_{ident(var)}"
        indexed = self.plan.kept_members[var] is not None
        ix = target.indices[0] if indexed and len(target.indices) == 1 else None
        if indexed and (ix is None or not kept_index(self, ix)):
            return [f"{pad}{attr} = None"]
        cc = Ctx(c.py, Sink(f, ind), None)
        x = s.value if isinstance(s, ast.Add | ast.Remove) and kept_index(self, s.value) \
            else None
        out = []
        if indexed:
            kept, t = f.tmp(), f.tmp()
            i = self.ex(ix, cc)
            out += [f"{pad}{kept} = {attr}", f"{pad}if {kept} is not None:"]
            if x is None:
                return out + [f"{pad}    {kept}[{i}] = None"]
            out += [f"{pad}    {t} = {kept}[{i}]", f"{pad}    if {t} is not None:"]
            where, pad = f"{kept}[{i}]", pad + "        "
        else:
            if x is None:
                return [f"{pad}{attr} = None"]
            t = f.tmp()
            out += [f"{pad}{t} = {attr}", f"{pad}if {t} is not None:"]
            where, pad = attr, pad + "    "
        v, k = self.ex(x, cc), f.tmp()
        out.append(f"{pad}{k} = bisect_left({t}, {v})")
        if isinstance(s, ast.Add):
            out += [f"{pad}if {k} == len({t}) or {t}[{k}] != {v}:",
                    f"{pad}    {where} = {t}[:{k}] + ({v},) + {t}[{k}:]"]
        else:
            out.append(f"{pad}{where} = {t}[:{k}] + {t}[{k} + 1:]")
        return out

    def check_after(self, e, c: Ctx, name: str,
                    sides: tuple[str, str] = ("LIMIT_INT_MIN <=", "<= LIMIT_INT")) -> None:
        """The int limit check of a plain int just stored in `name` (a local or an attribute)
        from e, written after the store: a fault restores the whole state anyway, and two
        comparisons cost less than a call of `bounded`. sides: the bounds that the value can
        have crossed (one of them "" when it cannot cross it)."""
        test = " ".join(x for x in (sides[0], str(name), sides[1]) if x)
        c.sink.emit(f"if not {test}:")
        c.sink.emit(f"    fault_int_limit(LIMIT_INT, {self.L(e.span)})")

    def _plain_int(self, e) -> bool:
        return self.may_exceed(e) and self.t(e).kind == "int"

    def emit_Let(self, s, c, ret):
        slot = self.p.slots[s]
        name = c.py.get(slot) or Code(f"s.{slot_attr(slot)}", simple=True)
        if self._plain_int(s.value):
            c.sink.emit(f"{name} = {self.conv(s.value, c, self.p.slot_types[slot])}")
            self.check_after(s.value, c, name)
            return
        value = self.kept(s.value, self.conv(s.value, c, self.p.slot_types[slot]))
        c.sink.emit(f"{name} = {value}")

    def emit_Assign(self, s, c, ret):
        want = self.t(s.target)
        if not s.target.indices and self._plain_int(s.value):
            v = self.conv(s.value, c, want)
            tgt = self.target(s.target, c)
            c.sink.emit(f"{tgt} = {v}")
            self.check_after(s.value, c, tgt)
            return
        v = self.kept(s.value, self.conv(s.value, c, want))
        tsk = c.sink.scratch()
        tgt = self.target(s.target, c.at(tsk))
        if tsk.lines and not is_simple(v):
            t = c.sink.tmp()
            c.sink.emit(f"{t} = {v}")
            v = t
        c.sink.lines.extend(tsk.lines)
        c.sink.emit(f"{tgt} = {v}")

    def emit_AugAssign(self, s, c, ret):
        optional = self.t(s.target).kind in ("opt", "any")
        v, tgt = self._value_then_target(s, c, lambda cc: self.nn(s.value, cc),
                                         self._ok(s.value), optional)
        w = self.L(s.span)
        if optional:
            c.sink.emit(f"{tgt} = bounded(not_none({tgt}, {self.L(s.target.span)}) {s.op} {v}, "
                        f"LIMIT_INT, {w})")
        elif id(s) in self.plan.bounded_updates:
            # a test just before bounds the old value: the new one is within the limit
            # (passes.plan_bounded_updates)
            c.sink.emit(f"{tgt} {s.op}= {v}")
        else:
            sides = ("LIMIT_INT_MIN <=", "<= LIMIT_INT")
            if isinstance(s.value, ast.IntLit) and s.op in ("+", "-"):
                # a literal is never negative: adding it can only cross the top, taking it
                # away only the bottom (the old value is within both, as every int stored)
                sides = ("", "<= LIMIT_INT") if s.op == "+" else ("LIMIT_INT_MIN <=", "")
            if "(" in tgt or not s.target.indices:
                c.sink.emit(f"{tgt} {s.op}= {v}")
                self.check_after(s, c, tgt, sides)
            else:
                # an item of an array: the new value is kept in a temporary for the check
                # (the array and its indexes are read again, not the item)
                x = c.sink.tmp()
                if not (is_simple(v) or _PRIMARY.fullmatch(v)):
                    v = f"({strip_parens(v)})"
                c.sink.emit(f"{tgt} = {x} = {tgt} {s.op} {v}")
                self.check_after(s, c, x, sides)

    def emit_Add(self, s, c, ret):
        if self.optional(s.value):
            w = self.L(s.value.span)
            v, tgt = self._value_then_target(
                s, c, lambda cc: f"mask_of(({self.ex(s.value, cc)},), {w})", False)
            c.sink.emit(f"{tgt} |= {v}")
            return
        v, tgt = self._value_then_target(s, c, lambda cc: self.ex(s.value, cc),
                                         self.safe(s.value))
        c.sink.emit(f"{tgt} |= {self.one_bit(T.strip(self.t(s.target)).elem, v)}")

    def emit_Remove(self, s, c, ret):
        if T.strip(self.t(s.target)).kind == "set":
            if id(s) in self.plan.member_removes:  # x drawn from the set just before
                v = self.nn(s.value, c)
                c.sink.emit(f"{self.target(s.target, c)} ^= "
                            f"{self.one_bit(T.strip(self.t(s.target)).elem, v)}")
                return
            if self._target_safe(s.target):
                bit = c.sink.tmp()
                c.sink.emit(f"{bit} = "
                            f"{self.one_bit(T.strip(self.t(s.target)).elem, self.nn(s.value, c))}")
                tgt = self.target(s.target, c)
                c.sink.emit(f"if not {tgt} & {bit}:")
                c.sink.emit(f"    fault_not_in_set({self.L(s.span)})")
                c.sink.emit(f"{tgt} ^= {bit}")
                return
            v, tgt = self._value_then_target(s, c, lambda cc: self.nn(s.value, cc),
                                             self._ok(s.value))
            c.sink.emit(f"{tgt} = mask_remove({tgt}, {v}, {self.L(s.span)})")
            return
        v, tgt = self._value_then_target(s, c, lambda cc: self.ex(s.value, cc),
                                         self.safe(s.value))
        c.sink.emit(f"list_remove({tgt}, {v}, {self.L(s.span)})")

    def emit_Push(self, s, c, ret):
        elem = T.strip(self.t(s.target)).elem
        is_safe = self.safe(s.value) and not self.may_exceed(s.value) and not (
            elem.kind not in ("opt", "none", "any") and self.optional(s.value))
        v, tgt = self._value_then_target(
            s, c, lambda cc: self.kept(s.value, self.conv(s.value, cc, elem)), is_safe, True)
        c.sink.emit(f"push({tgt}, {v}, LIMIT_COLLECTION, {self.L(s.span)})")

    def emit_If(self, s, c, ret):
        facts_of: dict[int, list] = {}

        def emit_body(sink, stmts):
            # `if E != none and ... { first; ... }`: E is not none in the first statement when
            # that statement writes nothing E reads before its own expressions have run
            facts = facts_of.get(id(stmts), [])
            if facts and stmts and self._facts_hold(stmts[0], facts):
                self._not_none.extend(facts)
                try:
                    sink.lines.extend(self.stmts(stmts[:1], c.at(sink), sink.ind, ret))
                finally:
                    del self._not_none[len(self._not_none) - len(facts):]
                if len(stmts) > 1:
                    sink.lines.extend(self.stmts(stmts[1:], c.at(sink), sink.ind, ret))
                return
            sink.lines.extend(self.stmts(stmts, c.at(sink), sink.ind, ret))
        bodies = [list(b.stmts) for _c, b in s.branches]
        for (cond, _b), body in zip(s.branches, bodies):
            facts_of[id(body)] = self._none_facts(cond, "and")
        bodies.append(list(s.orelse.stmts) if s.orelse is not None else None)
        self._if_chain(c, s.branches, bodies, emit_body)

    def invariant_reads(self, stmts) -> frozenset:
        """What statements read into Python locals (state variables and flow locals read by
        name, kept-value lists of defs: ExprPrinter.try_hoist, kept_call) that none of them
        changes: a variable they never write, or an array they write only item by item (the
        list read first is the one the items are written into); a flow local none of them
        binds or writes; the list of a def none of whose variables they write."""
        whole: set[str] = set()  # state variables the statements may rebind
        written: set[str] = set()
        bound: set[str] = set()  # local slots
        for n in _all_nodes(stmts):
            slot = self.p.slots.get(n) if hasattr(n, "span") else None
            if slot is not None:
                bound.add(slot)
            if isinstance(n, ast.Assign | ast.AugAssign | ast.Add | ast.Remove | ast.Push):
                ref = self.p.refs.get(n.target)
                if ref is not None and ref[0] == "local":
                    bound.add(ref[1])
                if ref is None or ref[0] != "state":
                    continue
                written.add(ref[1])
                if not n.target.indices or T.strip(self.p.state_types[ref[1]]).kind != "array":
                    whole.add(ref[1])
        keys = {("name", "state", v) for v in self.p.state_types if v not in whole}
        keys |= {("name", "local", v) for v in self.p.slot_types if v not in bound}
        keys |= {("keyed", name) for name, kd in self.plan.keyed_defs.items()
                 if not written & set(kd.deps)}
        return frozenset(keys)

    def emit_For(self, s, c, ret):
        guarded = self._loop_guard(s)
        if guarded is not None:
            # `for x in S { if D(x) {...} }` with D guarded (passes.plan_def_guards): while the
            # guard fails, D(x) is false for every x and the loop does nothing
            c.sink.emit(f"if {self.guard_code(guarded, c)}:")
            c = c.at(c.sink.deeper())
        slot = self.p.slots[s]
        var = c.py.get(slot) or Code(f"s.{slot_attr(slot)}", simple=True)
        # reads that the body's statements would each make, on every member, made once before
        # the loop when nothing in the body changes them (StmtPrinter.invariant_reads)
        at = len(c.sink.lines)
        lifted = Sink(c.sink.fn, c.sink.ind)
        outer = self._loop_outer
        self._loop_outer = (lifted, {}, self.invariant_reads(s.body.stmts), None)
        try:
            self._emit_for(s, c, ret, var)
        finally:
            self._loop_outer = outer
        c.sink.lines[at:at] = lifted.lines

    def _loop_guard(self, s):
        """The guarded def whose call is the whole body's only test (`for x in S { if D(x)
        {...} }`, no other branch), S a walk that cannot fault; else None."""
        if len(s.body.stmts) != 1 or not isinstance(s.body.stmts[0], ast.If):
            return None
        st = s.body.stmts[0]
        if len(st.branches) != 1 or st.orelse is not None or not self.safe(s.iter):
            return None
        cond = st.branches[0][0]
        if not isinstance(cond, ast.Call) or self.p.refs[cond][0] != "def" \
                or cond.name not in self.plan.def_guards or not self.args_safe(cond):
            return None
        return cond.name

    def _emit_for(self, s, c, ret, var):
        walk = self.set_walk(s.iter, c, var)
        if walk is None:
            c.sink.emit(f"for {var} in {self.iter_code(s.iter, c, snapshot=True)}:")
        else:
            for line in walk[0]:
                c.sink.emit(line)
        body = c.sink.deeper()
        if walk is not None:
            for line in walk[1]:
                body.emit(line)
        body.fn.loops += 1
        c.sink.lines.extend(self.stmts(s.body.stmts, c.at(body), body.ind, ret))
        body.fn.loops -= 1

    def emit_While(self, s, c, ret):
        pre = c.sink.scratch(1)
        code = self.ex(s.cond, c.at(pre))
        body = c.sink.deeper()
        # the body may start max_loop_steps times in one execution of the loop
        n = c.sink.tmp()
        c.sink.emit(f"{n} = 0")
        if not pre.lines:
            c.sink.emit(f"while {code}:")
        else:
            # statements before the test: emit it again, negated, inside `while True`
            pre = c.sink.scratch(1)
            code = self.ex_not(s.cond, c.at(pre))
            c.sink.emit("while True:")
            c.sink.lines.extend(pre.lines)
            body.emit(f"if {code}:")
            body.emit("    break")
        body.emit(f"{n} += 1")
        body.emit(f"if {n} > LIMIT_LOOP_STEPS:")
        body.emit(f"    fault_loop_limit(LIMIT_LOOP_STEPS, {self.L(s.span)})")
        body.fn.loops += 1
        c.sink.lines.extend(self.stmts(s.body.stmts, c.at(body), body.ind, ret))
        body.fn.loops -= 1

    def emit_Break(self, s, c, ret):
        c.sink.emit("break")

    def emit_Return(self, s, c, ret):
        c.sink.emit(f"return {self.conv(s.value, c, ret)}")

    def emit_Reveal(self, s, c, ret):
        _kind, secret, draws = self.p.refs[s]
        names = repr(tuple(ident(a) for a in secret))
        if draws:
            names += f", {tuple(ident(a) for a in draws)!r}"
        listed = self.plan.reveal_lists.get(id(s), ())
        if not listed:
            return  # nothing it names is ever hidden (passes.plan_hidden)
        lists = "".join(f"s._hidden[{k}], " for k in listed)
        c.sink.emit(f"reveal(s._seen, s.history, {names}, hidden=({lists}))")

    def emit_Fail(self, s, c, ret):
        c.sink.emit(f"raise RulesRuntimeError({s.message!r}, {self.L(s.span)})")

    # -- declarations
    def def_function(self, d: ast.DefDecl) -> list[str]:
        fn = _Fn()
        c = Ctx()
        names = []
        for f in d.params:
            c, name = c.with_local(self.p.slots[f])
            names.append(name)
        ret = self.p.def_ret[d.name]
        out = [f"def def_{ident(d.name)}({', '.join(['s', *names])}):  # rules:{d.span.line}"]
        # A def changes no state: state it reads more than once is read into locals first.
        pre = Sink(fn, 1)
        exprs = _block_exprs(d.body.stmts) if isinstance(d.body, ast.Block) else [d.body]
        # (its parameters are bound before every loop in it: level -1)
        hoist = _Hoist([pre], {self.p.slots[f]: -1 for f in d.params}, -1, {},
                       self.name_uses(exprs))
        if isinstance(d.body, ast.Block):
            body = list(d.body.stmts)
            # Def locals are Python locals: map every binding inside the body.
            for node in binding_nodes(d.body):
                c, _ = c.with_local(self.p.slots[node])
            lines = self.stmts(body, Ctx(c.py, Sink(fn, 1), hoist), 1, ret)
        else:
            sk = Sink(fn, 1)
            code = self.conv(d.body, Ctx(c.py, sk, hoist), ret)
            sk.emit(f"return {code}")
            lines = sk.lines
        out.extend(pre.lines)
        out.extend(lines)
        return out


    def table_function(self, t: ast.TableDecl) -> list[str]:
        name = ident(t.name)
        rows = self.k.table_rows[t.name]
        ret = self.p.def_ret[t.name]
        args = [f"k{i}" for i in range(len(t.params))]
        out = []
        dense = self.plan.dense.get(t.name)
        if dense is not None:
            # (None: a cell no row matches; the lookup then calls the function, which faults)
            cells = ", ".join("None" if v is None else self.literal(v, ret) for v in dense.values)
            out.append(f"TABLE_{name} = ({cells},)")
            out += ["", ""]
        out.append(f"def table_{name}({', '.join(args)}, where):  # rules:{t.span.line}")
        if dense is not None and dense.full and len(dense.dims) == 1 and dense.dims[0][0] == "int":
            # one int key: the box from the tuple, the rows only for the rest
            _kind, lo, count = dense.dims[0]
            out.append(f"    if {lo} <= k0 <= {lo + count - 1}:")
            out.append(f"        return TABLE_{name}[k0 - {lo}]")
            rows = [(k, v) for k, v in rows if k[0][0] in ("from", "any")]
        for keys, value in rows:
            conds = []
            for a, (kind, lo_, hi_) in zip(args, keys):
                if kind == "int":
                    conds.append(f"{a} == {lo_}")
                elif kind == "range":
                    conds.append(f"{lo_} <= {a} <= {hi_}")
                elif kind == "from":
                    conds.append(f"{a} >= {lo_}")
            val = self.literal(value, ret)
            if conds:
                out.append(f"    if {' and '.join(conds)}:")
                out.append(f"        return {val}")
            else:
                out.append(f"    return {val}")
                break
        else:
            members = table_key_members(self.p, t.name)
            out.append(f"    fault_no_row({name!r}, ({''.join(a + ', ' for a in args)}), where"
                       f"{', ' + repr(members) if members else ''})")
        return out

    # -- flow


def _forget_at(kd, j: int, kept: str, x: str) -> str:
    """The statement that forgets, in the list `kept` of a def kept per argument tuple, every
    value whose parameter j (the first or the last) is x: the value itself with one
    parameter, a run of the list for the first parameter, every n-th entry for the last."""
    if len(kd.sizes) == 1:
        return f"{kept}[{x}] = None"
    if j == 0:
        step = kd.stride(0)
        return f"{kept}[{x} * {step}:{x} * {step} + {step}] = [None] * {step}"
    return f"{kept}[{x}::{kd.sizes[j]}] = [None] * {kd.size // kd.sizes[j]}"
