"""Facts about a checked program the code generator relies on: which expressions cannot fault,
which locals they read, how big defs are, which option tests can be moved or shared."""

from __future__ import annotations

from rulelang import ast
from rulelang import types as T
from rulelang.codegen.tree import (
    _block_exprs,
    _children,
    _conjuncts,
    _walk,
)
from rulelang.consts import ARITH_BOUND_OPS, arith_bound
from rulelang.errors import RulesRuntimeError, Span
from rulelang.semantics import BUILTINS


def _all_nodes(x):
    """Every AST node under x, x included, through tuples of tuples (an `if`'s branches, which
    tree._walk does not enter)."""
    if isinstance(x, tuple | list):
        for y in x:
            yield from _all_nodes(y)
        return
    if not hasattr(x, "__dataclass_fields__") or isinstance(x, Span):
        return
    yield x
    for f in x.__dataclass_fields__:
        if f != "span":
            yield from _all_nodes(getattr(x, f))


class Analysis:
    def safe(self, e) -> bool:
        """Whether evaluating e can never raise (and always ends): such code may be moved,
        evaluated early or skipped without changing which run-time fault is reported."""
        key = id(e)
        if key not in self._safe:
            self._safe[key] = self._compute_safe(e)
        return self._safe[key]

    def may_exceed(self, e) -> bool:
        """Whether e's value, where it is kept, needs a check against the int limit: it may
        have grown (consts.Growth) and no constant bound keeps it within the limit (nor the
        ranges of the loop variables it reads: passes.plan_int_ranges)."""
        if not self.k.growth(e) or self.k.growth.within_limit(e):
            return False
        key = id(e)
        if key not in self._exceed:
            top = self.int_bound(e, self._bound_env)
            self._exceed[key] = top is None or top > self.p.limits.int_max
        return self._exceed[key]

    def safe_with(self, e, env: dict) -> bool:
        """safe(e), the def parameters in env bounded as given (e is a part of an expanded
        def's body: passes.plan_options); worked out aside, with caches of its own."""
        if not env or self.safe(e):
            return self.safe(e)
        saved = self._safe, self._exceed, self._def_safe, self._bound_env
        self._safe, self._exceed, self._def_safe, self._bound_env = {}, {}, {}, env
        try:
            return self.safe(e)
        finally:
            self._safe, self._exceed, self._def_safe, self._bound_env = saved

    def fits(self, e, env: dict) -> bool:
        """Whether e's value is known never to exceed the int limit, the def parameters in env
        bounded as given (where a def is expanded in place)."""
        if not self.may_exceed(e):
            return True
        top = self.int_bound(e, env) if env else None
        return top is not None and top <= self.p.limits.int_max

    def int_bound(self, e, env: dict) -> int | None:
        """An upper bound on the absolute value of an int expression (None: unknown), from
        constants (consts.Growth.static_max), the ranges of loop variables
        (passes.plan_int_ranges) and env (a def parameter's slot -> the bound of the argument
        it stands for, or None). A def with an expression body is bounded through its body,
        its parameters by its arguments."""
        if isinstance(e, ast.Name):
            ref = self.p.refs.get(e)
            if ref is not None and ref[0] == "local":
                return env[ref[1]] if ref[1] in env else self.plan.slot_max.get(ref[1])
            return self.k.growth.static_max(e)
        if isinstance(e, ast.Neg):
            return self.int_bound(e.operand, env)
        if isinstance(e, ast.CondExpr):
            a, b = self.int_bound(e.then, env), self.int_bound(e.orelse, env)
            return None if a is None or b is None else max(a, b)
        if isinstance(e, ast.BinOp) and e.op in ARITH_BOUND_OPS:
            return arith_bound(e.op, self.int_bound(e.left, env), self.int_bound(e.right, env))
        if isinstance(e, ast.Call) and self.p.refs.get(e, ("",))[0] == "def":
            d = self.p.defs[self.p.refs[e][1]]
            if isinstance(d.body, ast.Block):
                return None
            inner = {self.p.slots[f]: self.int_bound(a, env) if T.strip(self.t(a)).kind == "int"
                     else None for a, f in zip(e.args, d.params)}
            return self.int_bound(d.body, inner)
        return self.k.growth.static_max(e)

    def _ok(self, e) -> bool:
        """Safe and never none (so a none check on it cannot fail either)."""
        return self.safe(e) and not self.optional(e)

    def _compute_safe(self, e) -> bool:
        if isinstance(e, ast.IntLit | ast.BoolLit | ast.NoneLit | ast.Name):
            return True
        if isinstance(e, ast.CondExpr):
            return self.safe(e.cond) and self.safe(e.then) and self.safe(e.orelse)
        if isinstance(e, ast.BinOp):
            op = e.op
            if op in ("and", "or", "==", "!="):
                return self.safe(e.left) and self.safe(e.right)
            if op in ("in", "not in"):
                if T.strip(self.t(e.right)).kind == "set":
                    return self._ok(e.left) and self._ok(e.right)
                return self.safe(e.left) and self._ok(e.right)
            if op in ("//", "%"):
                return (isinstance(e.right, ast.IntLit) and e.right.value != 0
                        and self._ok(e.left))
            if T.strip(self.t(e)).kind == "list":
                return False  # a list over the size limit
            return self._ok(e.left) and self._ok(e.right)
        if isinstance(e, ast.Not):
            return self.safe(e.operand)
        if isinstance(e, ast.Neg):
            return self._ok(e.operand)
        if isinstance(e, ast.Range):
            # constant bounds, within the size limit (any other range is checked at run time)
            if self.const_bounds(e) is not None:
                return True
            return self.k.growth.small_range(e) and self._ok(e.lo) and self._ok(e.hi)
        if isinstance(e, ast.Index):
            return (T.strip(self.t(e.obj)).kind == "array" and self._ok(e.obj)
                    and self._ok(e.index))
        if isinstance(e, ast.Attr):
            if self.p.refs[e][0] == "member":
                return True
            return self._ok(e.obj)
        if isinstance(e, ast.Call):
            return self._call_safe(e)
        if isinstance(e, ast.Agg):
            if e.func in ("min", "max"):
                return False
            if not self._iter_ok(e.iter) or (e.cond is not None and not self.safe(e.cond)):
                return False
            if e.func == "sum":
                return self._ok(e.elem)
            return self.safe(e.elem)
        if isinstance(e, ast.Sort):
            return self._iter_ok(e.iter) and all(self._ok(k.key) for k in e.keys)
        if isinstance(e, ast.ListLit | ast.ArrayLit):
            items = e.items if isinstance(e, ast.ListLit) else e.values
            if any(self.may_exceed(x) for x in items):
                return False  # an element over the int limit
            elem = T.strip(self.t(e)).elem
            if elem is None or elem.kind in ("opt", "none", "any"):
                return all(self.safe(x) for x in items)
            return all(self._ok(x) for x in items)
        if isinstance(e, ast.Comp) and e.kind != "set" and self.may_exceed(e.elem):
            return False
        if isinstance(e, ast.SetLit):
            return all(self._ok(x) for x in e.items)
        if isinstance(e, ast.Comp):
            if not self._iter_ok(e.iter) or (e.cond is not None and not self.safe(e.cond)):
                return False
            if e.kind == "set":
                return self.safe(e.elem) and not self.elem_optional(e)
            elem_t = T.strip(self.t(e)).elem
            if elem_t.kind in ("opt", "none", "any"):
                return self.safe(e.elem)
            return self._ok(e.elem)
        return False

    def _iter_ok(self, e) -> bool:
        ref = self.p.refs.get(e) if isinstance(e, ast.Name) else None
        if ref is not None and ref[0] == "enum_all":
            return True
        return self._ok(e)

    def _call_safe(self, e: ast.Call) -> bool:
        ref = self.p.refs[e]
        if ref[0] == "def":
            d = self.p.defs[ref[1]]
            for a, f in zip(e.args, d.params):
                want = self.p.slot_types[self.p.slots[f]]
                if not self.safe(a) or self.may_exceed(a):
                    return False
                if want.kind not in ("opt", "none", "any") and self.optional(a):
                    return False
            return self.def_safe(d)
        if not all(self._ok(a) for a in e.args):
            return False
        if ref[0] == "table":
            rows = self.k.table_rows[ref[1]]
            return any(all(k[0] == "any" for k in keys) for keys, _v in rows)
        safe = BUILTINS[e.name].safe
        return safe is not None and safe(self, e)

    def def_safe(self, d: ast.DefDecl) -> bool:
        if d.name not in self._def_safe:
            self._def_safe[d.name] = False  # defs do not recurse; this only guards the cache
            ret = self.p.def_ret[d.name]
            if isinstance(d.body, ast.Block):
                ok = self._block_safe(d.body, ret)
            else:
                ok = self.safe(d.body) and not (
                    ret.kind not in ("opt", "none", "any") and self.optional(d.body))
            self._def_safe[d.name] = ok
        return self._def_safe[d.name]

    def _block_safe(self, b: ast.Block, ret: T.Type) -> bool:
        for s in b.stmts:
            if isinstance(s, ast.Let):
                want = self.p.slot_types[self.p.slots[s]]
                if not self.safe(s.value) or self.may_exceed(s.value) or (
                        want.kind not in ("opt", "none", "any") and self.optional(s.value)):
                    return False
            elif isinstance(s, ast.Return):
                if not self.safe(s.value) or (
                        ret.kind not in ("opt", "none", "any") and self.optional(s.value)):
                    return False
            elif isinstance(s, ast.If):
                for cond, body in s.branches:
                    if not self.safe(cond) or not self._block_safe(body, ret):
                        return False
                if s.orelse is not None and not self._block_safe(s.orelse, ret):
                    return False
            elif isinstance(s, ast.For):
                if not self._iter_ok(s.iter) or not self._block_safe(s.body, ret):
                    return False
            elif isinstance(s, ast.Break):
                pass
            else:  # assignments to locals, loops that may not end, fail, ...
                return False
        return True

    def elem_optional(self, e) -> bool:
        """Whether the element of a set comprehension may be none: not when the filter is
        `x != none` (possibly among others joined by `and`) for the very same expression x."""
        if not self.optional(e.elem):
            return False
        conds = _conjuncts(e.cond) if e.cond is not None else []
        for cnd in conds:
            if (isinstance(cnd, ast.BinOp) and cnd.op == "!="
                    and isinstance(cnd.right, ast.NoneLit) and self.same(cnd.left, e.elem)):
                return False
        return True

    def same(self, a, b) -> bool:
        """Structural equality of two expressions (names compared by what they refer to)."""
        if type(a) is not type(b):
            return False
        if isinstance(a, ast.Name):
            return self.p.refs.get(a) == self.p.refs.get(b)
        if isinstance(a, ast.IntLit | ast.BoolLit):
            return a.value == b.value
        if isinstance(a, ast.Index):
            return self.same(a.obj, b.obj) and self.same(a.index, b.index)
        if isinstance(a, ast.Attr):
            return self.p.refs.get(a) == self.p.refs.get(b) and self.same(a.obj, b.obj)
        return False

    def free(self, e) -> frozenset:
        """Local slots an expression reads (those it binds itself excluded)."""
        key = id(e)
        if key in self._free:
            return self._free[key]
        out: set[str] = set()
        if isinstance(e, ast.Name):
            ref = self.p.refs.get(e)
            if ref is not None and ref[0] == "local":
                out.add(ref[1])
        elif isinstance(e, ast.Agg | ast.Comp | ast.Sort):
            inner = set(self.free(e.iter))
            parts = [k.key for k in e.keys] if isinstance(e, ast.Sort) else [e.elem, e.cond]
            bound = self.p.slots[e]
            for x in parts:
                if x is not None:
                    inner |= self.free(x) - {bound}
            out = inner
        else:
            for x in _children(e):
                out |= self.free(x)
        res = frozenset(out)
        self._free[key] = res
        return res

    def size(self, e) -> int:
        """AST nodes of an expression, with the bodies of the defs it calls."""
        n = 1
        if isinstance(e, ast.Call):
            ref = self.p.refs[e]
            if ref[0] == "def":
                n += self.def_size(self.p.defs[ref[1]])
        for x in _children(e):
            n += self.size(x)
        return n

    def def_size(self, d: ast.DefDecl) -> int:
        if d.name not in self._size:
            self._size[d.name] = 10**6
            if isinstance(d.body, ast.Block):
                self._size[d.name] = sum(self._stmt_size(x) for x in d.body.stmts)
            else:
                self._size[d.name] = self.size(d.body)
        return self._size[d.name]

    def stmt_nodes(self, s) -> int:
        """AST nodes of a statement as printed: nested statements and expressions, and the
        bodies of the defs it calls that are inlined."""
        n = 1
        for node in _walk(s):
            n += 1
            if isinstance(node, ast.Call) and self.p.refs.get(node, ("",))[0] == "def" \
                    and node.name in self.plan.inline:
                n += self.def_size(self.p.defs[node.name])
        return n

    def _stmt_size(self, s) -> int:
        n = 1
        if isinstance(s, ast.Let | ast.Return):
            n += self.size(s.value)
        elif isinstance(s, ast.If):
            for cond, body in s.branches:
                n += self.size(cond) + sum(self._stmt_size(x) for x in body.stmts)
            if s.orelse is not None:
                n += sum(self._stmt_size(x) for x in s.orelse.stmts)
        elif not isinstance(s, ast.Fail):
            n += 10**6  # not inlined
        return n

    def name_uses(self, exprs) -> dict:
        """How often each state variable / flow local is read by these expressions (and the
        defs they inline); reads inside loops count many times."""
        out: dict = {}

        def walk(e, weight):
            if isinstance(e, ast.Name):
                ref = self.p.refs.get(e)
                if ref is not None and ref[0] in ("state", "local"):
                    key = ("name", *ref)
                    out[key] = out.get(key, 0) + weight
                return
            if isinstance(e, ast.Call):
                ref = self.p.refs.get(e)
                if ref is not None and ref[0] == "def":
                    d = self.p.defs[ref[1]]
                    if d.name in self.plan.inline:
                        body = self.name_uses(
                            [d.body] if not isinstance(d.body, ast.Block)
                            else _block_exprs(d.body.stmts))
                        for key, n in body.items():
                            if key[1] == "state":
                                out[key] = out.get(key, 0) + weight * n
                        # an argument is read as often as its parameter
                        for a, f in zip(e.args, d.params):
                            n = body.get(("name", "local", self.p.slots[f]), 0)
                            walk(a, weight * max(n, 1))
                        return
            inner = weight * 8 if isinstance(e, ast.Agg | ast.Comp | ast.Sort) else weight
            for x in _children(e):
                walk(x, inner if x is not getattr(e, "iter", None) else weight)

        for e in exprs:
            walk(e, 1)
        return out

    def reused_any(self, options) -> dict[int, list]:
        """`any(P(x) for x in D)` in the `when` of a parameterless option, where an earlier
        option `o(t: T in D) when P(t)` (one parameter over a set) lists exactly the members
        passing P: its value is whether that option added any choice. Nothing changes state
        in between and the earlier option evaluated P on every member first (so any fault it
        could raise was raised there, as the interpreter does). Option index -> [(earlier
        option index, Agg node)]."""
        out: dict[int, list] = {}
        cands = []
        for i, opt in enumerate(options):
            if len(opt.params) == 1 and opt.when is not None and opt.params[0].domain is not None \
                    and T.strip(self.t(opt.params[0].domain)).kind == "set":
                cands.append((i, opt))
        if not cands:
            return out
        for j, opt in enumerate(options):
            if opt.params or opt.when is None:
                continue
            for ag in _walk(opt.when):
                if not isinstance(ag, ast.Agg) or ag.func != "any" or ag.cond is not None:
                    continue
                vslot = self.p.slots.get(ag)
                if vslot is None:
                    continue
                for i, a in cands:
                    if i >= j:
                        break
                    pslot = self.p.slots[a.params[0]]
                    if self._same(a.params[0].domain, ag.iter, {}) and \
                            self._same(a.when, ag.elem, {pslot: vslot}):
                        out.setdefault(j, []).append((i, ag))
                        break
        return out

    def shared_any(self, cond, options) -> tuple[int, ast.Agg] | None:
        """The first `any(P(x) for x in D)` evaluated by `cond` (through `and`, `or`, `not` and
        inlined expression defs whose arguments are locals), at most once, that is the `when`
        of a one-parameter option `o(x: T [in D]) when P(x)` (x over all members of an enum,
        or over a set or an int range D): (option index, the aggregate), or None."""
        found: list[tuple[ast.Agg, dict]] = []
        count: dict[int, int] = {}

        def walk(e, env):  # env: slot of a def parameter -> the flow local passed for it
            if isinstance(e, ast.BinOp) and e.op in ("and", "or"):
                walk(e.left, env)
                walk(e.right, env)
            elif isinstance(e, ast.Not):
                walk(e.operand, env)
            elif isinstance(e, ast.Agg) and e.func == "any" and e.cond is None:
                count[id(e)] = count.get(id(e), 0) + 1
                found.append((e, env))
            elif isinstance(e, ast.Call) and self.p.refs.get(e, ("",))[0] == "def" \
                    and e.name in self.plan.inline:
                d = self.p.defs[e.name]
                if isinstance(d.body, ast.Block):
                    return
                inner = {}
                for a, f in zip(e.args, d.params):
                    ref = self.p.refs.get(a) if isinstance(a, ast.Name) else None
                    if ref is None or ref[0] != "local":
                        return
                    inner[self.p.slots[f]] = env.get(ref[1], ref[1])
                walk(d.body, inner)

        walk(cond, {})
        for ag, env in found:
            if count[id(ag)] != 1:
                continue
            outer = {}
            for prm_slot, local in env.items():
                if local in outer:
                    break  # one local passed for two parameters: not renamed
                outer[local] = prm_slot
            else:
                for oi, opt in enumerate(options):
                    if len(opt.params) != 1 or opt.when is None:
                        continue
                    prm = opt.params[0]
                    pslot = self.p.slots[prm]
                    t = T.strip(self.p.slot_types[pslot])
                    if prm.domain is None:
                        ref = self.p.refs.get(ag.iter) if isinstance(ag.iter, ast.Name) else None
                        if t.kind != "enum" or ref != ("enum_all", t.name):
                            continue
                    elif T.strip(self.t(prm.domain)).kind not in ("set",) and not (
                            t.kind == "int" and isinstance(prm.domain, ast.Range)):
                        continue
                    elif not self._same(prm.domain, ag.iter, outer):
                        continue
                    if pslot in outer or not self._same(
                            opt.when, ag.elem, {**outer, pslot: self.p.slots[ag]}):
                        continue
                    return oi, ag
        return None

    def def_reads(self, d: ast.DefDecl, seen: set | None = None) -> frozenset | None:
        """The state variables a def reads, directly or through the defs it calls (None if it
        calls a def with a block body that is not structured: then it is not cached)."""
        seen = set() if seen is None else seen
        if d.name in seen:
            return frozenset()
        seen.add(d.name)
        return self.reads(d, seen)

    def reads(self, x, seen: set | None = None) -> frozenset | None:
        """The state variables a node (an expression, a def) reads, directly or through the
        defs it calls (def_reads, `seen` the defs already counted)."""
        seen = set() if seen is None else seen
        out: set[str] = set()
        for node in _all_nodes(x):
            ref = self.p.refs.get(node) if hasattr(node, "span") else None
            if ref is None:
                continue
            if ref[0] == "state":
                out.add(ref[1])
            elif ref[0] == "def" and isinstance(node, ast.Call):
                inner = self.def_reads(self.p.defs[ref[1]], seen)
                if inner is None:
                    return None
                out |= inner
        return frozenset(out)

    def def_nodes(self, d: ast.DefDecl) -> int:
        """AST nodes of a def with the defs it calls, or 0 when it has no aggregate, comprehension
        or loop (then computing it costs about as much as reading a kept value)."""
        nodes, loops, todo, seen = 0, False, [d], set()
        while todo:
            x = todo.pop()
            if x.name in seen:
                continue
            seen.add(x.name)
            for node in _all_nodes(x):
                nodes += 1
                if isinstance(node, ast.Agg | ast.Comp | ast.Sort | ast.For | ast.While):
                    loops = True
                if isinstance(node, ast.Call) and self.p.refs.get(node, ("",))[0] == "def":
                    todo.append(self.p.defs[node.name])
        return nodes if loops else 0

    def _same(self, a, b, ren: dict) -> bool:
        """Whether two expressions are the same code (spans aside), reading the same names
        (locals of `ren` renamed)."""
        if type(a) is not type(b):
            return False
        if isinstance(a, tuple | list):
            return len(a) == len(b) and all(self._same(x, y, ren) for x, y in zip(a, b))
        if not hasattr(a, "__dataclass_fields__"):
            return a == b
        if isinstance(a, Span):
            return True
        refs = self.p.refs
        if (a in refs) != (b in refs):
            return False
        if a in refs:
            ra, rb = refs[a], refs[b]
            if ra != rb:
                if not (isinstance(a, ast.Name) and ra[0] == "local" and rb[0] == "local"
                        and ren.get(ra[1]) == rb[1]):
                    return False
                return True  # a renamed local (its name aside)
        if (a in self.p.slots) or (b in self.p.slots):
            return False  # binds a variable of its own: not compared
        for f in a.__dataclass_fields__:
            if f == "span":
                continue
            if not self._same(getattr(a, f), getattr(b, f), ren):
                return False
        return True


    def fixed_size(self, opt: ast.Option) -> int | None:
        """How many argument tuples an option has when every parameter's domain is fixed (a
        constant int range, all members of an enum, both bools); None otherwise."""
        if not opt.params:
            return None
        size = 1
        for prm in opt.params:
            t = T.strip(self.p.slot_types[self.p.slots[prm]])
            bounds = self.const_bounds(prm.domain) if t.kind == "int" else None
            if bounds is not None:
                lo, hi, step = bounds
                size *= len(range(lo, hi + 1, step))
            elif t.kind == "enum" and prm.domain is None:
                size *= len(self.p.enums[t.name].members)
            elif t.kind == "bool" and prm.domain is None:
                size *= 2
            else:
                return None
        return size

    def small_domain(self, opt: ast.Option) -> int | None:
        """Size of the value range of an option's only parameter, if it is an enum, a bool or
        a player (None otherwise)."""
        if len(opt.params) != 1:
            return None
        t = T.strip(self.p.slot_types[self.p.slots[opt.params[0]]])
        if t.kind == "enum":
            return len(self.p.enums[t.name].members)
        if t.kind == "bool":
            return 2
        if t.kind == "player":
            return self.p.max_players
        return None

    def falls_slot(self, a, slot: str, dom) -> bool:
        """Whether `a`, once false, stays false for every later value of an int parameter
        (read as `slot` in a: an expanded def's own parameter, passes.plan_options) that runs
        upwards (a comparison of a non-decreasing side with a non-increasing one)."""
        return self._slot_trend(a, slot, dom) == -1

    def rises_slot(self, a, slot: str, dom) -> bool:
        """Whether `a`, once true, stays true for every later value of an int parameter read as
        `slot` that runs upwards (falls_slot's mirror: Poder's `-money <= cash[partner]`)."""
        return self._slot_trend(a, slot, dom) == 1

    def _slot_trend(self, a, slot: str, dom) -> int:
        """For a comparison of ints `a` and an int parameter read as `slot` over an ascending
        range: -1 if a, once false, stays false for its later values, 1 if once true it stays
        true, 0 if neither can be shown (or a does not depend on it)."""
        if dom.first is None or not isinstance(a, ast.BinOp) or a.op not in ("<", "<=", ">", ">="):
            return 0
        if T.strip(self.t(a.left)).kind != "int" or T.strip(self.t(a.right)).kind != "int":
            return 0
        lm, rm = self._mono(a.left, slot), self._mono(a.right, slot)
        if lm is None or rm is None or (lm, rm) == (0, 0):
            return 0
        # `<`: true while left is small: left growing or right shrinking ends it (falls), left
        # shrinking or right growing keeps it once it holds (rises); `>` the other way round
        grows = 1 if a.op in ("<", "<=") else -1
        if lm * grows >= 0 and rm * grows <= 0:
            return -1
        if lm * grows <= 0 and rm * grows >= 0:
            return 1
        return 0

    def _mono(self, e, slot: str) -> int | None:
        """+1 non-decreasing, -1 non-increasing, 0 constant in `slot`; None: unknown."""
        if slot not in self.free(e):
            return 0
        if isinstance(e, ast.Name):
            return 1
        if T.strip(self.t(e)).kind != "int":
            return None
        if isinstance(e, ast.Neg):
            m = self._mono(e.operand, slot)
            return None if m is None else -m
        if isinstance(e, ast.BinOp):
            a, b = self._mono(e.left, slot), self._mono(e.right, slot)
            if a is None or b is None:
                return None
            if e.op == "-":
                b = -b
            if e.op in ("+", "-"):
                if a >= 0 and b >= 0:
                    return max(a, b)
                if a <= 0 and b <= 0:
                    return min(a, b)
                return None
            if e.op in ("*", "//") and isinstance(e.right, ast.IntLit) and e.right.value > 0:
                return a
            if e.op == "*" and isinstance(e.left, ast.IntLit) and e.left.value > 0:
                return b
        return None

    def const_bounds(self, e) -> tuple[int, int, int] | None:
        """(lo, hi, step) of a range whose bounds are constants (parameters, literals) and whose
        step is positive; None otherwise."""
        if not isinstance(e, ast.Range):
            return None
        try:
            lo = self.k.eval_const(e.lo)
            hi = self.k.eval_const(e.hi)
            step = self.k.eval_const(e.step) if e.step is not None else 1
        except (RulesRuntimeError, KeyError):  # reads state or a local: not constant
            return None
        if step <= 0 or (hi >= lo and (hi - lo) // step >= self.p.limits.max_collection):
            return None  # checked (and refused) at run time, as the interpreter does
        return (lo, hi, step)
