"""Python emitter: expressions and statements of a checked program as specialised Python code.

`emit_<Node>` writes one AST node; the flow is emitted from the lowered instruction list, one
function per basic block. Values: ints/bools as such, enum and grid members and players as their
index, sets as int bit masks, lists and arrays as Python lists (copied whenever a stored value is
read into another place, so the value semantics of the interpreter hold).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rulelang import ast
from rulelang import types as T
from rulelang.check import Program
from rulelang.errors import Span
from rulelang.lower import (
    Bind,
    ChanceAt,
    ChooseAt,
    Exec,
    FinishAt,
    IterInit,
    IterNext,
    Jump,
    JumpIfNot,
    Lowered,
    SetPhase,
)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# Expression nodes that always produce a fresh value (no copy needed when stored).
_FRESH = (ast.ListLit, ast.SetLit, ast.Comp, ast.Range, ast.Sort, ast.Agg, ast.BinOp,
          ast.IntLit, ast.BoolLit, ast.NoneLit, ast.Neg, ast.Not)


class EmitError(Exception):
    """A node the emitter does not know: a compiler bug, never a user error."""


def ident(name: str) -> str:
    """A name from the rules file, validated before it is spliced into generated code."""
    if not _IDENT.match(name) or not name.isascii():
        raise EmitError(f"not a valid identifier: {name!r}")
    return name


def slot_attr(slot: str) -> str:
    name, _, num = slot.partition("#")
    return f"l_{ident(name)}_{int(num)}"


def loc(span: Span) -> str:
    return f"{span.file}:{span.line}:{span.col}"


@dataclass
class Ctx:
    """Where locals live: flow locals on the state (s.l_x), def and loop locals in Python."""

    py: dict[str, str] = field(default_factory=dict)  # slot -> Python local name

    def with_local(self, slot: str) -> tuple[Ctx, str]:
        name = "v_" + slot_attr(slot)[2:]
        return Ctx({**self.py, slot: name}), name


class Emitter:
    def __init__(self, program: Program, lowered: Lowered, consts) -> None:
        self.p = program
        self.low = lowered
        self.k = consts  # the interpreter's Game: constant values folded by the reference
        self.where: dict[str, str] = {}  # location string -> constant name

    # -- helpers
    def t(self, e) -> T.Type:
        return self.p.types[e]

    def L(self, span: Span) -> str:
        """A constant holding a .rules location string (emitted once per location)."""
        text = loc(span)
        if text not in self.where:
            self.where[text] = f"_W{len(self.where)}"
        return self.where[text]

    def optional(self, e) -> bool:
        return self.t(e).kind in ("opt", "none", "any")

    def nn(self, e, c: Ctx) -> str:
        code = self.ex(e, c)
        return f"_nn({code}, {self.L(e.span)})" if self.optional(e) else code

    def conv(self, e, c: Ctx, want: T.Type) -> str:
        """e as a value stored where type `want` is expected: none-checked and copied."""
        if want.kind in ("opt", "none", "any"):
            code = self.ex(e, c)
        else:
            code = self.nn(e, c)
        return self.owned(e, code)

    def owned(self, e, code: str) -> str:
        kind = T.strip(self.t(e)).kind
        if kind in ("list", "array") and not isinstance(e, _FRESH):
            return f"_deep({code})"
        return code

    def literal(self, v, t: T.Type) -> str:
        """A folded constant as Python source (only ints, bools, None and lists thereof)."""
        if v is None:
            return "None"
        t = T.strip(t)
        if t.kind == "bool":
            return "True" if v else "False"
        if t.kind in ("int", "player", "enum"):
            return repr(int(v))
        if t.kind == "set":
            m = 0
            for x in v:
                m |= 1 << int(x)
            return repr(m)
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
            return ("S",)
        if k == "list":
            return ("l", self.desc(t.elem))
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
            return f"range({len(self.p.enums[t.name].members)})"
        if t.kind == "player":
            return "range(s.n)"
        if t.kind == "bool":
            return "(False, True)"
        raise EmitError(f"no domain for {t}")

    def iter_code(self, e, c: Ctx, snapshot: bool = False) -> str:
        ref = self.p.refs.get(e) if isinstance(e, ast.Name) else None
        if ref is not None and ref[0] == "enum_all":
            return f"range({len(self.p.enums[ref[1]].members)})"
        code = self.nn(e, c)
        kind = T.strip(self.t(e)).kind
        if kind == "set":
            return f"_bits({code})"
        if snapshot and not isinstance(e, _FRESH):
            return f"list({code})"
        return code

    # -- expressions
    def ex(self, e, c: Ctx) -> str:
        fn = getattr(self, "emit_" + type(e).__name__, None)
        if fn is None:
            raise EmitError(f"no emitter for {type(e).__name__}")
        return fn(e, c)

    def emit_IntLit(self, e, c):
        return repr(e.value)

    def emit_BoolLit(self, e, c):
        return "True" if e.value else "False"

    def emit_NoneLit(self, e, c):
        return "None"

    def emit_Name(self, e, c):
        ref = self.p.refs[e]
        kind = ref[0]
        if kind == "local":
            return c.py.get(ref[1]) or f"s.{slot_attr(ref[1])}"
        if kind == "state":
            return f"s.v_{ident(ref[1])}"
        if kind == "param":
            return self.literal(self.k.param_values[ref[1]], self.p.param_types[ref[1]])
        if kind == "const":
            t = T.strip(self.t(e))
            if t.kind in ("list", "array"):
                return f"_C_{ident(ref[1])}"
            return self.literal(self.k.const_values[ref[1]], t)
        if kind == "member":
            return repr(ref[2])
        if kind == "enum_all":
            return repr((1 << len(self.p.enums[ref[1]].members)) - 1)
        if kind == "players":
            return "s._players"
        if kind == "num_players":
            return "s.n"
        raise EmitError(ref)

    def emit_CondExpr(self, e, c):
        return f"({self.ex(e.then, c)} if {self.ex(e.cond, c)} else {self.ex(e.orelse, c)})"

    def emit_BinOp(self, e, c):
        op = e.op
        if op in ("and", "or"):
            return f"({self.ex(e.left, c)} {op} {self.ex(e.right, c)})"
        if op in ("in", "not in"):
            rt = T.strip(self.t(e.right))
            if rt.kind == "set":
                test = f"(({self.nn(e.right, c)} >> {self.nn(e.left, c)}) & 1)"
                return f"({test} == {1 if op == 'in' else 0})"
            return f"({self.ex(e.left, c)} {op} {self.nn(e.right, c)})"
        if op in ("==", "!="):
            if isinstance(e.right, ast.NoneLit) or isinstance(e.left, ast.NoneLit):
                other = e.left if isinstance(e.right, ast.NoneLit) else e.right
                return f"({self.ex(other, c)} is {'' if op == '==' else 'not '}None)"
            return f"({self.ex(e.left, c)} {op} {self.ex(e.right, c)})"
        a, b = self.nn(e.left, c), self.nn(e.right, c)
        if op in ("<", "<=", ">", ">="):
            return f"({a} {op} {b})"
        lt = T.strip(self.t(e.left))
        if lt.kind == "set":
            return f"({a} | {b})" if op == "+" else f"({a} & ~{b})"
        if op in ("+", "-", "*"):
            return f"({a} {op} {b})"
        if isinstance(e.right, ast.IntLit) and e.right.value != 0:
            return f"({a} {op} {b})"
        fn = "_div" if op == "//" else "_mod"
        return f"{fn}({a}, {b}, {self.L(e.span)})"

    def emit_Not(self, e, c):
        return f"(not {self.ex(e.operand, c)})"

    def emit_Neg(self, e, c):
        return f"(-{self.nn(e.operand, c)})"

    def emit_Range(self, e, c):
        lo, hi = self.nn(e.lo, c), self.nn(e.hi, c)
        if e.step is None:
            return f"list(range({lo}, {hi} + 1))"
        if isinstance(e.step, ast.IntLit) and e.step.value > 0:
            return f"list(range({lo}, {hi} + 1, {e.step.value}))"
        return f"_range({lo}, {hi}, {self.nn(e.step, c)}, {self.L(e.span)})"

    def emit_Index(self, e, c):
        obj, ix = self.nn(e.obj, c), self.nn(e.index, c)
        if T.strip(self.t(e.obj)).kind == "list":
            return f"_lix({obj}, {ix}, {self.L(e.span)})"
        return f"{obj}[{ix}]"

    def emit_Attr(self, e, c):
        ref = self.p.refs[e]
        if ref[0] == "member":
            return repr(ref[2])
        obj = self.nn(e.obj, c)
        if ref[0] == "cell":
            info = self.p.enums[T.strip(self.t(e.obj)).name]
            c0, ncols, _rows = info.grid
            if ref[1] == "col":
                return f"({obj} % {ncols} + {c0})"
            return f"({obj} // {ncols})"
        return f"_F_{ident(ref[1])}_{ref[2]}[{obj}]"

    def emit_Call(self, e, c):
        ref = self.p.refs[e]
        if ref[0] == "def":
            d = self.p.defs[ref[1]]
            args = [self.conv(a, c, self.p.slot_types[self.p.slots[f]])
                    for a, f in zip(e.args, d.params)]
            return f"_d_{ident(d.name)}({', '.join(['s', *args])})"
        args = [self.nn(a, c) for a in e.args]
        if ref[0] == "table":
            return f"_t_{ident(ref[1])}({', '.join(args)}, {self.L(e.span)})"
        n = e.name
        w = self.L(e.span)
        if n == "len":
            if T.strip(self.t(e.args[0])).kind == "set":
                return f"{args[0]}.bit_count()"
            return f"len({args[0]})"
        if n in ("min", "max"):
            return f"{n}({args[0]}, {args[1]})"
        if n == "abs":
            return f"abs({args[0]})"
        if n == "ceil_div":
            return f"_cdiv({args[0]}, {args[1]}, {w})"
        if n == "round_up":
            return f"_round_up({args[0]}, {args[1]}, {w})"
        if n == "round_down":
            return f"_round_down({args[0]}, {args[1]}, {w})"
        if n == "seats_from":
            return f"s._seats[{args[0]}]"
        if n == "next_seat":
            return f"(({args[0]}) + 1) % s.n"
        if n == "as_list":
            if T.strip(self.t(e.args[0])).kind == "set":
                return f"list(_bits({args[0]}))"
            return f"list({args[0]})"
        grid = ident(T.strip(self.t(e.args[0])).name)
        if n == "neighbors":
            return f"_NB_{grid}[{args[0]}]"
        if n == "connected":
            return f"_connected({args[0]}, {args[1]}, _NBM_{grid})"
        raise EmitError(f"no emitter for builtin {n}")

    def _gen(self, e, c: Ctx, elem_code_fn) -> tuple[str, Ctx]:
        inner, var = c.with_local(self.p.slots[e])
        it = self.iter_code(e.iter, c)
        cond = f" if {self.ex(e.cond, inner)}" if e.cond is not None else ""
        return f"{elem_code_fn(inner)} for {var} in {it}{cond}", inner

    def emit_Agg(self, e, c):
        f = e.func
        w = self.L(e.span)
        if f == "count":
            inner, var = c.with_local(self.p.slots[e])
            conds = [self.ex(e.elem, inner)]
            if e.cond is not None:
                conds.insert(0, self.ex(e.cond, inner))
            return (f"sum(1 for {var} in {self.iter_code(e.iter, c)} "
                    f"if {' and '.join(conds)})")
        if f in ("any", "all"):
            gen, _ = self._gen(e, c, lambda inner: self.ex(e.elem, inner))
            return f"{f}({gen})"
        if f == "first":
            gen, _ = self._gen(e, c, lambda inner: self.ex(e.elem, inner))
            return f"next(({gen}), None)"
        gen, _ = self._gen(e, c, lambda inner: self.nn(e.elem, inner))
        if f == "sum":
            return f"sum({gen})"
        return f"_agg(({gen}), {f}, {f!r}, {w})"

    def emit_Sort(self, e, c):
        inner, var = c.with_local(self.p.slots[e])
        keys = []
        for k in e.keys:
            code = self.nn(k.key, inner)
            keys.append(f"-{code}" if k.descending else code)
        return (f"sorted({self.iter_code(e.iter, c)}, key=lambda {var}: "
                f"({', '.join(keys)},))")

    def emit_ListLit(self, e, c):
        elem = T.strip(self.t(e)).elem
        return "[" + ", ".join(self.conv(x, c, elem) for x in e.items) + "]"

    def emit_SetLit(self, e, c):
        if not e.items:
            return "0"
        if any(self.optional(x) for x in e.items):
            items = ", ".join(self.ex(x, c) for x in e.items)
            return f"_setof(({items},), {self.L(e.span)})"
        return "(" + " | ".join(f"(1 << {self.ex(x, c)})" for x in e.items) + ")"

    def emit_Comp(self, e, c):
        if e.kind == "list":
            elem_t = T.strip(self.t(e)).elem
            gen, _ = self._gen(e, c, lambda inner: self.conv(e.elem, inner, elem_t))
            return f"[{gen}]"
        gen, _ = self._gen(e, c, lambda inner: self.ex(e.elem, inner))
        return f"_setof(({gen}), {self.L(e.elem.span)})"

    # -- statements
    def target(self, lv: ast.LValue, c: Ctx) -> str:
        """An assignable Python expression for an lvalue (indexes range-checked on lists)."""
        ref = self.p.refs[lv]
        if ref[0] == "local":
            code = c.py.get(ref[1]) or f"s.{slot_attr(ref[1])}"
            t = self.p.slot_types[ref[1]]
        else:
            code = f"s.v_{ident(ref[1])}"
            t = self.p.state_types[ref[1]]
        for ix in lv.indices:
            t = T.strip(t)
            i = self.nn(ix, c)
            if t.kind == "list":
                code = f"{code}[_li({code}, {i}, {self.L(lv.span)})]"
            else:
                code = f"{code}[{i}]"
            t = t.elem
        return code

    def stmts(self, stmts, c: Ctx, ind: int, ret: T.Type | None = None) -> list[str]:
        out: list[str] = []
        for s in stmts:
            out.extend(self.stmt(s, c, ind, ret))
        return out or ["    " * ind + "pass"]

    def stmt(self, s, c: Ctx, ind: int, ret: T.Type | None = None) -> list[str]:
        pad = "    " * ind
        fn = getattr(self, "emit_" + type(s).__name__, None)
        if fn is None:
            raise EmitError(f"no emitter for {type(s).__name__}")
        lines = fn(s, c, ind, ret)
        # The marker lets the module map a generated line back to its .rules line.
        lines[0] = lines[0] + f"  # rules:{s.span.line}"
        return [pad + x if not x.startswith(pad) else x for x in lines]

    def emit_Let(self, s, c, ind, ret):
        slot = self.p.slots[s]
        name = c.py.get(slot) or f"s.{slot_attr(slot)}"
        return [f"{name} = {self.conv(s.value, c, self.p.slot_types[slot])}"]

    def emit_Assign(self, s, c, ind, ret):
        return [f"{self.target(s.target, c)} = {self.conv(s.value, c, self.t(s.target))}"]

    def emit_AugAssign(self, s, c, ind, ret):
        tgt = self.target(s.target, c)
        v = self.nn(s.value, c)
        if self.t(s.target).kind in ("opt", "any"):
            return [f"{tgt} = _nn({tgt}, {self.L(s.target.span)}) {s.op} {v}"]
        return [f"{tgt} {s.op}= {v}"]

    def emit_Add(self, s, c, ind, ret):
        tgt = self.target(s.target, c)
        if self.optional(s.value):
            return [f"{tgt} |= _setof(({self.ex(s.value, c)},), {self.L(s.value.span)})"]
        return [f"{tgt} |= 1 << {self.ex(s.value, c)}"]

    def emit_Remove(self, s, c, ind, ret):
        tgt = self.target(s.target, c)
        if T.strip(self.t(s.target)).kind == "set":
            return [f"{tgt} = _set_remove({tgt}, {self.nn(s.value, c)}, {self.L(s.span)})"]
        return [f"_list_remove({tgt}, {self.ex(s.value, c)}, {self.L(s.span)})"]

    def emit_Push(self, s, c, ind, ret):
        elem = T.strip(self.t(s.target)).elem
        return [f"{self.target(s.target, c)}.append({self.conv(s.value, c, elem)})"]

    def emit_If(self, s, c, ind, ret):
        out = []
        for i, (cond, body) in enumerate(s.branches):
            out.append(f"{'if' if i == 0 else 'elif'} {self.ex(cond, c)}:")
            out.extend(self.stmts(body.stmts, c, ind + 1, ret))
        if s.orelse is not None:
            out.append("else:")
            out.extend(self.stmts(s.orelse.stmts, c, ind + 1, ret))
        return out

    def emit_For(self, s, c, ind, ret):
        slot = self.p.slots[s]
        var = c.py.get(slot) or f"s.{slot_attr(slot)}"
        out = [f"for {var} in {self.iter_code(s.iter, c, snapshot=True)}:"]
        out.extend(self.stmts(s.body.stmts, c, ind + 1, ret))
        return out

    def emit_While(self, s, c, ind, ret):
        return [f"while {self.ex(s.cond, c)}:", *self.stmts(s.body.stmts, c, ind + 1, ret)]

    def emit_Break(self, s, c, ind, ret):
        return ["break"]

    def emit_Return(self, s, c, ind, ret):
        return [f"return {self.conv(s.value, c, ret)}"]

    def emit_Fail(self, s, c, ind, ret):
        return [f"raise RulesRuntimeError({s.message!r}, {self.L(s.span)})"]

    # -- declarations
    def def_function(self, d: ast.DefDecl) -> list[str]:
        c = Ctx()
        names = []
        for f in d.params:
            c, name = c.with_local(self.p.slots[f])
            names.append(name)
        ret = self.p.def_ret[d.name]
        out = [f"def _d_{ident(d.name)}({', '.join(['s', *names])}):  # {d.span.line}"]
        if isinstance(d.body, ast.Block):
            body = list(d.body.stmts)
            # Def locals are Python locals: map every binding inside the body.
            for node in _bindings(d.body):
                c, _ = c.with_local(self.p.slots[node])
            out.extend(self.stmts(body, c, 1, ret))
        else:
            out.append(f"    return {self.conv(d.body, c, ret)}")
        return out

    def table_function(self, t: ast.TableDecl) -> list[str]:
        name = ident(t.name)
        ktypes = [self.p.field_type(f) for f in t.params]
        rows = self.k.table_rows[t.name]
        ret = self.p.def_ret[t.name]
        args = [f"k{i}" for i in range(len(t.params))]
        out = [f"def _t_{name}({', '.join(args)}, where):  # {t.span.line}"]
        keyed = [k for k, _ in rows if k[0][0] != "any"]
        if len(ktypes) == 1 and ktypes[0].kind == "int" and keyed:
            lo = min(k[0][1] for k in keyed)
            hi = max((k[0][2] if k[0][0] == "range" else k[0][1]) for k in keyed)
            if hi - lo <= 4096:
                dense = []
                for key in range(lo, hi + 1):
                    dense.append(next((v for k, v in rows if _match(k[0], key)), _MISSING))
                if _MISSING not in dense:
                    table = "(" + ", ".join(self.literal(v, ret) for v in dense) + ",)"
                    out.append(f"    if {lo} <= k0 <= {hi}:")
                    out.append(f"        return {table}[k0 - {lo}]")
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
            shown = " + ', ' + ".join(f"str({a})" for a in args)
            out.append(f"    raise RulesRuntimeError(\"table '{name}' has no row for (\" + "
                       f"{shown} + \")\", where)")
        return out

    # -- flow
    def blocks(self) -> tuple[list[str], dict[int, str]]:
        """One function per basic block; returns (source lines, pc -> function name)."""
        code = self.low.code
        leaders = {0}
        for pc, ins in enumerate(code):
            if isinstance(ins, Jump | JumpIfNot | IterNext):
                leaders.add(ins.target)
                leaders.add(pc + 1)
            if isinstance(ins, IterNext):
                leaders.add(pc)
            if isinstance(ins, ChooseAt):
                leaders.update(ins.targets)
                leaders.update((pc, pc + 1))
            if isinstance(ins, ChanceAt | FinishAt):
                leaders.update((pc, pc + 1))
        leaders = sorted(x for x in leaders if 0 <= x < len(code))
        out: list[str] = []
        names: dict[int, str] = {}
        for i, start in enumerate(leaders):
            end = leaders[i + 1] if i + 1 < len(leaders) else len(code)
            name = f"_b{start}"
            names[start] = name
            out.append("")
            out.append(f"def {name}(s):")
            out.extend(self.block_body(start, end))
        return out, names

    def block_body(self, start: int, end: int) -> list[str]:
        c = Ctx()
        out: list[str] = []
        code = self.low.code
        for pc in range(start, end):
            ins = code[pc]
            if isinstance(ins, Exec):
                out.extend(self.stmt(ins.stmt, c, 1))
            elif isinstance(ins, Bind):
                want = self.p.slot_types[ins.slot]
                out.append(f"    s.{slot_attr(ins.slot)} = {self.conv(ins.expr, c, want)}")
            elif isinstance(ins, SetPhase):
                out.append(f"    s.phase = {ins.name!r}")
            elif isinstance(ins, IterInit):
                it = self.iter_code(ins.expr, c, snapshot=True)
                out.append(f"    s.it_{ins.loop} = {it}")
                out.append(f"    s.ix_{ins.loop} = 0")
            elif isinstance(ins, IterNext):
                k = ins.loop
                out.append(f"    if s.ix_{k} < len(s.it_{k}):")
                out.append(f"        s.{slot_attr(ins.slot)} = s.it_{k}[s.ix_{k}]")
                out.append(f"        s.ix_{k} += 1")
                out.append(f"        return {pc + 1}")
                out.append(f"    return {ins.target}")
                return out
            elif isinstance(ins, Jump):
                out.append(f"    return {ins.target}")
                return out
            elif isinstance(ins, JumpIfNot):
                out.append(f"    return {pc + 1} if {self.ex(ins.cond, c)} else {ins.target}")
                return out
            elif isinstance(ins, FinishAt):
                out.append("    s.pc = " + str(pc))
                out.append("    s.cp = TERMINAL")
                out.append("    s._acts = None")
                out.append("    return -1")
                return out
            elif isinstance(ins, ChooseAt):
                out.extend(self.choose_pause(pc, ins))
                return out
            elif isinstance(ins, ChanceAt):
                out.extend(self.chance_pause(pc, ins))
                return out
            else:
                raise EmitError(ins)
        out.append(f"    return {end}")
        return out

    def choose_pause(self, pc: int, ins: ChooseAt) -> list[str]:
        w = self.L(ins.node.span)
        return [
            f"    s.pc = {pc}",
            f"    s.cp = {self.nn(ins.node.player, Ctx())}",
            f"    acts = _a{pc}(s)",
            "    if not acts:",
            f"        raise RulesRuntimeError('no legal action at this decision', {w})",
            "    s._acts = acts",
            "    return -1",
        ]

    def chance_pause(self, pc: int, ins: ChanceAt) -> list[str]:
        w = self.L(ins.node.span)
        name = ins.node.name
        return [
            f"    s.pc = {pc}",
            "    s.cp = CHANCE",
            f"    acts = _o{pc}(s)",
            "    if not acts:",
            f"        raise RulesRuntimeError(\"chance '{ident(name)}' has no outcome\", {w})",
            "    s._acts = acts",
            "    return -1",
        ]

    def choose_functions(self, pc: int, ins: ChooseAt) -> list[str]:
        """_a<pc>: legal (option, args) pairs; _f<pc>: their strings; _r<pc>: bind + resume."""
        node = ins.node
        out = [f"def _a{pc}(s):  # {node.span.line}: choices of this decision", "    out = []"]
        for oi, opt in enumerate(node.options):
            c = Ctx()
            ind = 1
            names = []
            for prm in opt.params:
                slot = self.p.slots[prm]
                c, var = c.with_local(slot)
                names.append(var)
                t = self.p.slot_types[slot]
                if t.kind == "int":
                    dom = self.ex(prm.domain, c)
                    dom = self._const_range(prm.domain) or dom
                elif prm.domain is not None:
                    dt = T.strip(self.t(prm.domain))
                    dcode = self.nn(prm.domain, c)
                    if dt.kind == "set":
                        dom = f"_bits({dcode})"
                    else:
                        dom = f"_bits(_setof({dcode}, {self.L(prm.domain.span)}))"
                else:
                    dom = self.domain(t)
                out.append("    " * ind + f"for {var} in {dom}:")
                ind += 1
            args = "(" + "".join(f"{n}, " for n in names) + ")"
            if opt.when is not None:
                out.append("    " * ind + f"if {self.ex(opt.when, c)}:")
                ind += 1
            out.append("    " * ind + f"out.append(({oi}, {args}))")
        out.append("    return out")
        # strings
        out.append("")
        out.append(f"def _f{pc}(opt, args):")
        for oi, opt in enumerate(node.options):
            parts = []
            for i, prm in enumerate(opt.params):
                t = T.strip(self.p.slot_types[self.p.slots[prm]])
                if t.kind == "enum":
                    parts.append(f"_N_{ident(t.name)}[args[{i}]]")
                elif t.kind == "bool":
                    parts.append(f"('true' if args[{i}] else 'false')")
                else:
                    parts.append(f"str(args[{i}])")
            body = " + ', ' + ".join(parts) if parts else "''"
            out.append(f"    if opt == {oi}:")
            out.append(f"        return {ident(opt.name) + '('!r} + {body} + ')'")
        out.append("    raise AssertionError(opt)")
        # resume
        out.append("")
        out.append(f"def _r{pc}(s, opt, args):")
        for oi, opt in enumerate(node.options):
            out.append(f"    if opt == {oi}:")
            for i, prm in enumerate(opt.params):
                out.append(f"        s.{slot_attr(self.p.slots[prm])} = args[{i}]")
            out.append(f"        return {ins.targets[oi]}")
        out.append("    raise AssertionError(opt)")
        return out

    def _const_range(self, e) -> str | None:
        if not isinstance(e, ast.Range):
            return None
        try:
            lo = self.k.eval_const(e.lo)
            hi = self.k.eval_const(e.hi)
            step = self.k.eval_const(e.step) if e.step is not None else 1
        except Exception:  # not foldable: fall back to the emitted expression
            return None
        if step <= 0:
            return None
        return f"range({lo}, {hi + 1}, {step})"

    def chance_functions(self, pc: int, ins: ChanceAt) -> list[str]:
        """_o<pc>: [(value, weight)] in outcome order; _s<pc>: outcome string; _v<pc>: who sees."""
        node = ins.node
        slot = self.p.slots[node]
        c, var = Ctx().with_local(slot)
        t = T.strip(self.p.slot_types[slot])
        dt = T.strip(self.t(node.domain))
        dom = self.nn(node.domain, Ctx())
        out = [f"def _o{pc}(s):  # {node.span.line}: outcomes of chance '{ident(node.name)}'"]
        if node.weight is None and dt.kind == "set":
            out.append(f"    return {dom}")
        else:
            it = f"_bits({dom})" if dt.kind == "set" else dom
            w = self.nn(node.weight, c) if node.weight is not None else "1"
            out += [
                "    ws = {}",
                f"    for {var} in {it}:",
                f"        w = {w}",
            ]
            if node.weight is not None:
                out += ["        if w < 0:",
                        f"            raise RulesRuntimeError('negative chance weight', "
                        f"{self.L(node.weight.span)})"]
            out += [
                f"        ws[{var}] = ws.get({var}, 0) + w",
                "    return [(v, w) for v, w in ws.items() if w > 0]",
            ]
        out.append("")
        prefix = ident(node.name) + "("
        if t.kind == "enum":
            out.append(f"_S{pc} = tuple({prefix!r} + n + ')' for n in _N_{ident(t.name)})")
            out.append(f"def _s{pc}(v):")
            out.append(f"    return _S{pc}[v]")
        elif t.kind == "bool":
            out.append(f"def _s{pc}(v):")
            out.append(f"    return {prefix!r} + ('true' if v else 'false') + ')'")
        else:
            out.append(f"def _s{pc}(v):")
            out.append(f"    return {prefix!r} + str(v) + ')'")
        out.append("")
        out.append(f"def _v{pc}(s):")
        if node.seen_by is None:
            out.append("    return None")
        else:
            out.append(f"    who = {self.ex(node.seen_by, Ctx())}")
            out.append("    return -1 if who is None else who")
        return out


_MISSING = object()


def _match(k: tuple, a: int) -> bool:
    kind, lo, hi = k
    if kind == "any":
        return True
    if kind == "range":
        return lo <= a <= hi
    if kind == "from":
        return a >= lo
    return a == lo


def _bindings(b: ast.Block):
    """Every node that binds a local inside a def body (lets, loops, comprehensions)."""
    out = []

    def walk(x):
        if isinstance(x, ast.Let | ast.For):
            out.append(x)
        if isinstance(x, ast.Block):
            for s in x.stmts:
                walk(s)
        elif isinstance(x, ast.If):
            for _c, body in x.branches:
                walk(body)
            if x.orelse is not None:
                walk(x.orelse)
        elif isinstance(x, ast.For | ast.While):
            walk(x.body)

    walk(b)
    return out
