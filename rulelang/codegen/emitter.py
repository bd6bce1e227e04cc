"""Python emitter: expressions and statements of a checked program as specialised Python code.

`emit_<Node>` writes one AST node. Values: ints/bools as such, enum and grid members and players
as their index, sets as int bit masks, lists and arrays as Python lists (copied whenever a stored
value is read into another place, so the value semantics of the interpreter hold).

Where code runs as statements (flow blocks, def bodies, legal-action functions) an expression is
emitted with a `Sink`: aggregates and comprehensions become plain loops, small defs (expression
bodies, or lets/ifs/returns) are inlined and their results reused when called again with the same
arguments, and `and`/`or`/`if-then-else` around such code become `if` statements. The order in
which sub-expressions run, and so which run-time fault comes first, is the interpreter's: a value
computed before a later sibling's statements is kept in a temporary unless it cannot fault
(`Emitter.safe`); an `any`/`all` stops early only when its remaining elements cannot fault.

Where nothing changes state (a def, a legal-action function, the expressions of one statement),
state read more than once is read into Python locals first. In legal-action functions the `when`
tests run in the outermost parameter loop that can decide them, may end a loop early (`break`)
when the test can only stay false, and sub-expressions that cannot fault are computed outside the
loops that do not change them (`choose_functions`).

The flow is emitted from the lowered instruction list: one function per head (the start, the
places where a pause resumes, loop heads, shared blocks), into which the basic blocks it leads to
are inlined up to a back edge or a pause.
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
    binding_nodes,
)

# Builtins that cannot fault on arguments that are not none.
_SAFE_BUILTINS = frozenset({"len", "min", "max", "abs", "seats_from", "next_seat", "as_list",
                            "neighbors", "connected"})
# The comparison that is true exactly when the given one is false.
_FLIP = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<", "in": "not in",
         "not in": "in"}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Code that reads one name or is a literal: evaluating it later or twice changes nothing.
_SIMPLE = re.compile(r"(?:s\.)?[A-Za-z_][A-Za-z0-9_]*\Z|-?[0-9]+\Z")

# Expression nodes that always produce a fresh value (no copy needed when stored).
_FRESH = (ast.ListLit, ast.SetLit, ast.Comp, ast.Range, ast.Sort, ast.Agg, ast.BinOp,
          ast.IntLit, ast.BoolLit, ast.NoneLit, ast.Neg, ast.Not)

# Expression-bodied defs up to this many AST nodes (callees included) are inlined in statements.
INLINE_NODES = 120
# An option with no `when` over fixed domains of at most this many values gets a constant table.
CONST_ACTIONS = 100_000
# Flow blocks of at most this many statements are copied into every function that reaches them.
SMALL_BLOCK = 3
# A flow function of at most this many lines is also copied where it is entered (unless it is
# being copied there already), at most this many levels deep.
HEAD_INLINE_LINES = 40
HEAD_INLINE_DEPTH = 2


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


class _Fn:
    """One generated function: hands out its temporary names."""

    def __init__(self) -> None:
        self.n = 0

    def tmp(self) -> str:
        self.n += 1
        return f"_t{self.n}"


class Sink:
    """Statement lines of one generated function at one indentation.

    A sink is also a scope for results of inlined defs already computed in a temporary (`memo`):
    an entry is visible in the code that follows it in the same block and in blocks nested
    there, never in enclosing blocks. Only code that changes no state shares a scope (an
    expression, the legal-action tests of one decision); each statement starts a fresh one.
    """

    def __init__(self, fn: _Fn, ind: int, lines: list[str] | None = None,
                 parent: Sink | None = None, memo: dict | None = None) -> None:
        self.fn = fn
        self.ind = ind
        self.lines = [] if lines is None else lines
        self.parent = parent
        self.memo = {} if memo is None else memo

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.ind + line)

    def tmp(self) -> str:
        return self.fn.tmp()

    def deeper(self, n: int = 1) -> Sink:
        """The same lines, n levels further in: a nested block (a new memo scope)."""
        return Sink(self.fn, self.ind + n, self.lines, parent=self)

    def scratch(self, n: int = 0) -> Sink:
        """New lines (spliced in later by the caller), n levels further in. At the same level
        the lines run unconditionally where they are spliced, so they share this scope."""
        if n == 0:
            return Sink(self.fn, self.ind, parent=self.parent, memo=self.memo)
        return Sink(self.fn, self.ind + n, parent=self)

    def recall(self, key) -> str | None:
        sk: Sink | None = self
        while sk is not None:
            if key in sk.memo:
                return sk.memo[key]
            sk = sk.parent
        return None


@dataclass
class _Hoist:
    """Loop-invariant code motion inside a legal-action function (see Emitter.choose_functions).

    levels[i] holds the values computed at loop level i - 1 (level -1: before every loop).
    """

    levels: list[Sink]
    param_level: dict[str, int]
    cur: int
    shared: dict = field(default_factory=dict)  # node id (or name) -> temp at level -1
    uses: dict | None = None  # reads per name: alias only those read more than once
    stmt: bool = False  # valid for one statement only (state may change after it)

    def at(self, level: int) -> _Hoist:
        return _Hoist(self.levels, self.param_level, level, self.shared, self.uses, self.stmt)


@dataclass
class Ctx:
    """Where locals live (flow locals on the state, def and loop locals in Python) and where
    statements computing sub-expressions go (sink None: a pure Python expression is needed)."""

    py: dict[str, str] = field(default_factory=dict)  # slot -> Python code reading it
    sink: Sink | None = None
    hoist: _Hoist | None = None

    def with_local(self, slot: str) -> tuple[Ctx, str]:
        name = "v_" + slot_attr(slot)[2:]
        return Ctx({**self.py, slot: name}, self.sink, self.hoist), name

    def at(self, sink: Sink | None) -> Ctx:
        return Ctx(self.py, sink, self.hoist)

    def pure(self) -> Ctx:
        return Ctx(self.py, None, self.hoist)


class Emitter:
    def __init__(self, program: Program, lowered: Lowered, consts) -> None:
        self.p = program
        self.low = lowered
        self.k = consts  # the interpreter's Game: constant values folded by the reference
        self.where: dict[str, str] = {}  # location string -> constant name
        self._safe: dict[int, bool] = {}
        self._def_safe: dict[str, bool] = {}
        self._free: dict[int, frozenset] = {}
        self._size: dict[str, int] = {}

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

    def bits_fn(self, set_type: T.Type) -> str:
        """Members of a set value in ascending order: a table lookup for small enums."""
        elem = T.strip(set_type).elem
        if elem is not None and elem.kind == "enum" and len(self.p.enums[elem.name].members) <= 8:
            return "_SMALL_BITS"
        if elem is not None and elem.kind == "bool":
            return "_SMALL_BITS"
        return "_bits"

    def iter_code(self, e, c: Ctx, snapshot: bool = False) -> str:
        ref = self.p.refs.get(e) if isinstance(e, ast.Name) else None
        if ref is not None and ref[0] == "enum_all":
            return f"range({len(self.p.enums[ref[1]].members)})"
        code = self.nn(e, c)
        kind = T.strip(self.t(e)).kind
        if kind == "set":
            fn = self.bits_fn(self.t(e))
            return f"{fn}[{code}]" if fn == "_SMALL_BITS" else f"_bits({_bare(code)})"
        if isinstance(e, ast.Range) and code.startswith("list(range(") and code.endswith("))"):
            return code[5:-1]  # walked once: the range itself will do
        fresh = isinstance(e, _FRESH) or (
            isinstance(e, ast.Call) and self.p.refs[e][0] in ("def", "table"))
        if snapshot and not fresh:
            return f"list({_bare(code)})"
        return code

    # -- analysis: which expressions cannot fault, and which locals they read
    def safe(self, e) -> bool:
        """Whether evaluating e can never raise (and always ends): such code may be moved,
        evaluated early or skipped without changing which run-time fault is reported."""
        key = id(e)
        if key not in self._safe:
            self._safe[key] = self._compute_safe(e)
        return self._safe[key]

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
            return self._ok(e.left) and self._ok(e.right)
        if isinstance(e, ast.Not):
            return self.safe(e.operand)
        if isinstance(e, ast.Neg):
            return self._ok(e.operand)
        if isinstance(e, ast.Range):
            step_ok = e.step is None or (isinstance(e.step, ast.IntLit) and e.step.value > 0)
            return step_ok and self._ok(e.lo) and self._ok(e.hi)
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
        if isinstance(e, ast.ListLit):
            elem = T.strip(self.t(e)).elem
            if elem is None or elem.kind in ("opt", "none", "any"):
                return all(self.safe(x) for x in e.items)
            return all(self._ok(x) for x in e.items)
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
                if not self.safe(a):
                    return False
                if want.kind not in ("opt", "none", "any") and self.optional(a):
                    return False
            return self.def_safe(d)
        if not all(self._ok(a) for a in e.args):
            return False
        if ref[0] == "table":
            rows = self.k.table_rows[ref[1]]
            return any(all(k[0] == "any" for k in keys) for keys, _v in rows)
        if e.name in ("ceil_div", "round_up", "round_down"):
            b = e.args[1]
            return isinstance(b, ast.IntLit) and b.value != 0
        return e.name in _SAFE_BUILTINS

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
                if not self.safe(s.value) or (
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

    def _stmt_size(self, s) -> int:
        n = 1
        if isinstance(s, ast.Let | ast.Return):
            n += self.size(s.value)
        elif isinstance(s, ast.If):
            for cond, body in s.branches:
                n += self.size(cond) + sum(self._stmt_size(x) for x in body.stmts)
            if s.orelse is not None:
                n += sum(self._stmt_size(x) for x in s.orelse.stmts)
        else:
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
                    if self.inlinable(d):
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

    def inlinable(self, d: ast.DefDecl) -> bool:
        if self.def_size(d) > INLINE_NODES:
            return False
        return not isinstance(d.body, ast.Block) or _structured(d.body.stmts)

    # -- ordered evaluation of sub-expressions
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
            if i < last and not is_safe and not _SIMPLE.match(code):
                t = c.sink.tmp()
                c.sink.emit(f"{t} = {code}")
                code = t
            codes.append(code)
        return codes

    def _part_nn(self, e):
        return (lambda cc: self.nn(e, cc)), self._ok(e)

    def _part_ex(self, e):
        return (lambda cc: self.ex(e, cc)), self.safe(e)

    # -- expressions
    def ex(self, e, c: Ctx) -> str:
        if c.hoist is not None and c.sink is not None:
            code = self.try_hoist(e, c)
            if code is not None:
                return code
        fn = getattr(self, "emit_" + type(e).__name__, None)
        if fn is None:
            raise EmitError(f"no emitter for {type(e).__name__}")
        return fn(e, c)

    def ex_not(self, e, c: Ctx) -> str:
        """Code of `not e`, with comparisons flipped instead of negated (ints are totally
        ordered, so `not a < b` is `a >= b`; both evaluate the same operands in the same order)."""
        if c.hoist is not None and c.sink is not None:
            code = self.try_hoist(e, c)
            if code is not None:
                return f"(not {code})"
        if isinstance(e, ast.Not):
            return self.ex(e.operand, c)
        if isinstance(e, ast.BinOp) and e.op in _FLIP:
            return self.emit_BinOp(e, c, negate=True)
        return f"(not {self.ex(e, c)})"

    def try_hoist(self, e, c: Ctx) -> str | None:
        """A loop-invariant expression that cannot fault, computed once at the outermost loop
        level where all it reads is bound (None: compute it here)."""
        h = c.hoist
        if isinstance(e, ast.Name):
            ref = self.p.refs[e]
            if ref[0] == "state" or (ref[0] == "local" and ref[1] not in c.py):
                # read once into a Python local at the top of the function
                key = ("name", *ref)
                if h.uses is not None and h.uses.get(key, 0) < 2:
                    return None
                if key not in h.shared:
                    alias = (f"_v_{ident(ref[1])}" if ref[0] == "state"
                             else f"_{slot_attr(ref[1])}")
                    h.levels[0].emit(f"{alias} = {self.emit_Name(e, c)}")
                    h.shared[key] = alias
                return h.shared[key]
            return None
        if isinstance(e, ast.IntLit | ast.BoolLit | ast.NoneLit):
            return None
        if isinstance(e, ast.Attr) and self.p.refs[e][0] == "member":
            return None
        level = -1
        for slot in self.free(e):
            if slot in h.param_level:
                level = max(level, h.param_level[slot])
            elif slot in c.py:  # bound inside the expression being emitted
                return None
        if level == -1 and id(e) in h.shared:
            return h.shared[id(e)]
        if level >= h.cur or not self.safe(e):
            return None
        sink = h.levels[level + 1]
        # Written aside first: what it hoists in turn goes into the level's lines before it.
        aside = Sink(sink.fn, sink.ind)
        code = self.ex(e, Ctx(c.py, aside, h.at(level)))
        t = sink.tmp()
        aside.emit(f"{t} = {code}")
        sink.lines.extend(aside.lines)
        if level == -1:
            h.shared[id(e)] = t
        return t

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
        if kind == "graph":
            return f"_G_{ident(ref[1])}"
        if kind == "players":
            return "s._players"
        if kind == "num_players":
            return "s.n"
        raise EmitError(ref)

    def _branch(self, e, c: Ctx, emit) -> tuple[str, list[str]]:
        """Code of e evaluated only on one branch: (code, statements one level further in)."""
        if c.sink is None:
            return emit(e, c), []
        sk = c.sink.scratch(1)
        return emit(e, c.at(sk)), sk.lines

    def emit_CondExpr(self, e, c):
        cond = self.ex(e.cond, c)
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
        op = _FLIP[e.op] if negate else e.op
        if op in ("and", "or"):
            a = self.ex(e.left, c)
            if a in ("True", "False"):  # a constant (a folded parameter): no test needed
                if (a == "True") == (op == "and"):
                    return self.ex(e.right, c)
                return a
            b, b_lines = self._branch(e.right, c, self.ex)
            if not b_lines:
                return f"({a} {op} {b})"
            t = c.sink.tmp()
            c.sink.emit(f"{t} = {a}")
            c.sink.emit(f"if {'' if op == 'and' else 'not '}{t}:")
            c.sink.lines.extend(b_lines)
            c.sink.emit(f"    {t} = {b}")
            return t
        if op in ("in", "not in"):
            rt = T.strip(self.t(e.right))
            if rt.kind == "set":
                a, b = self.seq(c, [self._part_nn(e.left), self._part_nn(e.right)])
                # (1 << a) first: the element is evaluated (and none-checked) before the set.
                return f"(((1 << {a}) & {b}) {'!=' if op == 'in' else '=='} 0)"
            a, b = self.seq(c, [self._part_ex(e.left), self._part_nn(e.right)])
            return f"({a} {op} {b})"
        if op in ("==", "!="):
            if isinstance(e.right, ast.NoneLit) or isinstance(e.left, ast.NoneLit):
                other = e.left if isinstance(e.right, ast.NoneLit) else e.right
                return f"({self.ex(other, c)} is {'' if op == '==' else 'not '}None)"
            a, b = self.seq(c, [self._part_ex(e.left), self._part_ex(e.right)])
            return f"({a} {op} {b})"
        a, b = self.seq(c, [self._part_nn(e.left), self._part_nn(e.right)])
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
        return self.ex_not(e.operand, c)

    def emit_Neg(self, e, c):
        return f"(-{self.nn(e.operand, c)})"

    def emit_Range(self, e, c):
        parts = [self._part_nn(e.lo), self._part_nn(e.hi)]
        literal_step = isinstance(e.step, ast.IntLit) and e.step.value > 0
        if e.step is not None and not literal_step:
            parts.append(self._part_nn(e.step))
        codes = self.seq(c, parts)
        lo, hi = codes[0], codes[1]
        if e.step is None:
            return f"list(range({hi} + 1))" if lo == "0" else f"list(range({lo}, {hi} + 1))"
        if literal_step:
            return f"list(range({lo}, {hi} + 1, {e.step.value}))"
        return f"_range({lo}, {hi}, {codes[2]}, {self.L(e.span)})"

    def emit_Index(self, e, c):
        obj, ix = self.seq(c, [self._part_nn(e.obj), self._part_nn(e.index)])
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
            if c.sink is not None and self.inlinable(d):
                return self.inline_call(e, d, c)
            parts = []
            for a, f in zip(e.args, d.params):
                want = self.p.slot_types[self.p.slots[f]]
                is_safe = self.safe(a) and not (
                    want.kind not in ("opt", "none", "any") and self.optional(a))
                parts.append(((lambda cc, a=a, want=want: self.conv(a, cc, want)), is_safe))
            args = self.seq(c, parts)
            return f"_d_{ident(d.name)}({', '.join(['s', *args])})"
        args = self.seq(c, [self._part_nn(a) for a in e.args])
        if ref[0] == "table":
            name = ident(ref[1])
            dense = self.dense_table(ref[1]) if c.sink is not None else None
            if dense is not None:
                # the common keys straight from the tuple; the function for the rest
                k = args[0]
                if not _SIMPLE.match(k):
                    t = c.sink.tmp()
                    c.sink.emit(f"{t} = {k}")
                    k = t
                lo, hi, _values = dense
                return (f"(_TB_{name}[{k} - {lo}] if {lo} <= {k} <= {hi} "
                        f"else _t_{name}({k}, {self.L(e.span)}))")
            return f"_t_{name}({', '.join(args)}, {self.L(e.span)})"
        n = e.name
        w = self.L(e.span)
        if n == "len":
            if T.strip(self.t(e.args[0])).kind == "set":
                return f"{args[0]}.bit_count()"
            return f"len({_bare(args[0])})"
        if n in ("min", "max"):
            return f"{n}({args[0]}, {args[1]})"
        if n == "abs":
            return f"abs({_bare(args[0])})"
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
        if n in ("path_cost", "edge_cost", "graph_neighbors"):
            g = ident(T.strip(self.t(e.args[0])).name)
            if n == "edge_cost":
                return f"_GE_{g}.get(({args[1]}, {args[2]}))"
            if n == "graph_neighbors":
                return f"_GN_{g}[{args[1]}]"
            src = args[1]
            if T.strip(self.t(e.args[1])).kind == "set":
                src = f"_bits({src})"
            allowed = f"frozenset(_bits({args[3]}))" if len(args) > 3 else "None"
            return f"_path_cost(_G_{g}, {src}, {args[2]}, {allowed})"
        if n == "as_list":
            if T.strip(self.t(e.args[0])).kind == "set":
                return f"list(_bits({_bare(args[0])}))"
            return f"list({_bare(args[0])})"
        grid = ident(T.strip(self.t(e.args[0])).name)
        if n == "neighbors":
            return f"_NB_{grid}[{args[0]}]"
        if n == "connected":
            return f"_connected({args[0]}, {args[1]}, _NBM_{grid})"
        raise EmitError(f"no emitter for builtin {n}")

    def inline_call(self, e: ast.Call, d: ast.DefDecl, c: Ctx) -> str:
        """An expression-bodied def expanded in place: arguments are evaluated (and none-checked)
        first, in order, then the body with the parameters bound to them. An expression body
        cannot change its arguments, so list arguments need no copy."""
        parts = []
        for a, f in zip(e.args, d.params):
            want = self.p.slot_types[self.p.slots[f]]
            if want.kind in ("opt", "none", "any"):
                parts.append(self._part_ex(a))
            else:
                parts.append(self._part_nn(a))
        codes = self.seq(c, parts)
        py = {}
        for f, code in zip(d.params, codes):
            if not _SIMPLE.match(code):
                t = c.sink.tmp()
                c.sink.emit(f"{t} = {code}")
                code = t
            py[self.p.slots[f]] = code
        # A pure def called again with the very same arguments: reuse the first result.
        key = ("def", d.name, tuple(codes))
        known = c.sink.recall(key)
        if known is not None:
            return known
        inner = Ctx(py, c.sink, c.hoist)
        ret = self.p.def_ret[d.name]
        if isinstance(d.body, ast.Block):
            # A body of lets, ifs and returns: each return assigns the result.
            result = c.sink.tmp()
            self._inline_stmts(list(d.body.stmts), inner, result, ret)
        else:
            result = self.conv(d.body, inner, ret)
        if _SIMPLE.match(result):
            c.sink.memo[key] = result
        return result

    def _inline_stmts(self, stmts: list, c: Ctx, result: str, ret: T.Type) -> None:
        """Statements of an inlined def body (see _structured): code after an `if` whose
        branches return is emitted inside the one branch that falls through."""
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

                def emit_body(inner_sink, body, c=c):
                    if body:
                        self._inline_stmts(body, c.at(inner_sink), result, ret)
                    else:
                        inner_sink.emit("pass")
                self._if_chain(c, st.branches, bodies, emit_body)
                if rest or _has_return([st]):
                    return

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
                const = len(cur.lines) == before and code in ("True", "False")
                if const and code == "False":  # a folded parameter: never taken
                    continue
                if const:  # always taken: no test, and the later branches are dead
                    emit_body(cur, bodies[i])
                    return
                cur.emit(f"if {code}:")
                opened = True
            else:
                pre = cur.scratch(1)
                code = self.ex(cond, c.at(pre))
                if not pre.lines and code == "False":
                    continue
                if not pre.lines and code == "True":
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

    def _gen(self, e, c: Ctx, elem_code_fn) -> tuple[str, Ctx]:
        inner, var = c.with_local(self.p.slots[e])
        it = self.iter_code(e.iter, c)
        cond = f" if {self.ex(e.cond, inner)}" if e.cond is not None else ""
        return f"{elem_code_fn(inner)} for {var} in {it}{cond}", inner

    def _loop(self, e, c: Ctx) -> Ctx:
        """`for var in iter:` (and `if not cond: continue`) in the sink; the body's context."""
        it = self.iter_code(e.iter, c)
        inner, var = c.with_local(self.p.slots[e])
        c.sink.emit(f"for {var} in {it}:")
        body = c.sink.deeper()
        ic = inner.at(body)
        if e.cond is not None:
            body.emit(f"if {self.ex_not(e.cond, ic)}:")
            body.emit("    continue")
        return ic

    def _extreme(self, e, c: Ctx) -> str | None:
        """`any/all(A[x] < K for x in E)` over every member of an enum E, A an int array indexed
        by E: the test on min(A) or max(A) (nothing here can fault, so the order of the tests
        and how many run does not matter)."""
        if e.func not in ("any", "all") or e.cond is not None:
            return None
        ref = self.p.refs.get(e.iter) if isinstance(e.iter, ast.Name) else None
        if ref is None or ref[0] != "enum_all" or not self.p.enums[ref[1]].members:
            return None
        test = e.elem
        if not isinstance(test, ast.BinOp) or test.op not in ("<", "<=", ">", ">="):
            return None
        slot = self.p.slots[e]
        flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
        for arr, bound, op in ((test.left, test.right, test.op),
                               (test.right, test.left, flip[test.op])):
            if not (isinstance(arr, ast.Index) and isinstance(arr.index, ast.Name)
                    and self.p.refs.get(arr.index) == ("local", slot)):
                continue
            at = self.t(arr.obj)
            if at.kind != "array" or at.index != T.enum(ref[1]) or at.elem != T.INT:
                continue
            if slot in self.free(arr.obj) or slot in self.free(bound) \
                    or not self._ok(arr.obj) or not self._ok(bound):
                continue
            a, k = self.seq(c, [self._part_nn(arr.obj), self._part_nn(bound)])
            small = op in ("<", "<=")  # true for the small values
            fn = "min" if small == (e.func == "any") else "max"
            return f"({fn}({a}) {op} {k})"
        return None

    def _nb_mask(self, e, c: Ctx) -> str | None:
        """`any/all/count(n in S for n in neighbors(x))` (or `not in`), and
        `{n for n in neighbors(x) if n in S}`, on the grid's neighbour bit masks. S cannot fault
        and does not read n, so testing all neighbours at once changes nothing."""
        it = e.iter
        if not isinstance(it, ast.Call) or self.p.refs.get(it) != ("builtin", "neighbors"):
            return None
        slot = self.p.slots[e]
        if isinstance(e, ast.Agg):
            if e.cond is not None or e.func not in ("any", "all", "count"):
                return None
            test = e.elem
        else:
            if e.kind != "set" or not isinstance(e.elem, ast.Name) \
                    or self.p.refs.get(e.elem) != ("local", slot):
                return None
            test = e.cond
        if not (isinstance(test, ast.BinOp) and test.op in ("in", "not in")
                and isinstance(test.left, ast.Name)
                and self.p.refs.get(test.left) == ("local", slot)
                and T.strip(self.t(test.right)).kind == "set" and slot not in self.free(test.right)
                and self._ok(test.right)):
            return None
        grid = ident(T.strip(self.t(it.args[0])).name)
        x, sset = self.seq(c, [self._part_nn(it.args[0]), self._part_ex(test.right)])
        m = f"_NBM_{grid}[{x}]"
        hit = f"({m} & {sset})" if test.op == "in" else f"({m} & ~{sset})"
        if isinstance(e, ast.Comp):
            return hit
        if e.func == "any":
            return f"({hit} != 0)"
        if e.func == "count":
            return f"{hit}.bit_count()"
        miss = f"({m} & ~{sset})" if test.op == "in" else f"({m} & {sset})"
        return f"({miss} == 0)"

    def emit_Agg(self, e, c):
        known = getattr(self, "_known_any", None)
        if known and id(e) in known:
            return known[id(e)]
        f = e.func
        w = self.L(e.span)
        code = self._nb_mask(e, c)
        if code is None:
            code = self._extreme(e, c)
        if code is not None:
            return code
        if c.sink is None:
            return self._agg_expr(e, c)
        sk = c.sink
        t = sk.tmp()
        init = {"count": "0", "sum": "0", "any": "False", "all": "True"}.get(f, "None")
        sk.emit(f"{t} = {init}")
        ic = self._loop(e, c)
        body = ic.sink
        if f == "count":
            body.emit(f"if {self.ex(e.elem, ic)}:")
            body.emit(f"    {t} += 1")
        elif f == "sum":
            body.emit(f"{t} += {self.nn(e.elem, ic)}")
        elif f in ("any", "all"):
            # The interpreter evaluates every element before it decides: stop early only when
            # the remaining elements cannot fault.
            code = self.ex(e.elem, ic) if f == "any" else self.ex_not(e.elem, ic)
            body.emit(f"if {code}:")
            body.emit(f"    {t} = {'True' if f == 'any' else 'False'}")
            if self.safe(e.elem):
                body.emit("    break")
        elif f == "first":
            body.emit(f"{t} = {self.ex(e.elem, ic)}")
            body.emit("break")
        else:
            v = sk.tmp()
            body.emit(f"{v} = {self.nn(e.elem, ic)}")
            body.emit(f"if {t} is None or {v} {'<' if f == 'min' else '>'} {t}:")
            body.emit(f"    {t} = {v}")
            sk.emit(f"if {t} is None:")
            sk.emit(f"    raise RulesRuntimeError({f + '() of an empty collection'!r}, {w})")
        return t

    def _agg_expr(self, e, c):
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
            # every element is evaluated first unless none of them can fault
            return f"{f}({gen})" if self.safe(e.elem) else f"{f}([{gen}])"
        if f == "first":
            gen, _ = self._gen(e, c, lambda inner: self.ex(e.elem, inner))
            return f"next(({gen}), None)"
        gen, _ = self._gen(e, c, lambda inner: self.nn(e.elem, inner))
        if f == "sum":
            return f"sum({gen})"
        return f"_agg([{gen}], {f}, {f!r}, {w})"

    def emit_Sort(self, e, c):
        it = self.iter_code(e.iter, c)
        inner, var = c.pure().with_local(self.p.slots[e])
        keys = []
        for k in e.keys:
            code = self.nn(k.key, inner)
            keys.append(f"-{code}" if k.descending else code)
        return f"sorted({it}, key=lambda {var}: ({', '.join(keys)},))"

    def emit_ListLit(self, e, c):
        elem = T.strip(self.t(e)).elem
        parts = []
        for x in e.items:
            is_safe = self.safe(x) and not (
                elem.kind not in ("opt", "none", "any") and self.optional(x))
            parts.append(((lambda cc, x=x: self.conv(x, cc, elem)), is_safe))
        return "[" + ", ".join(self.seq(c, parts)) + "]"

    def emit_SetLit(self, e, c):
        if not e.items:
            return "0"
        if any(self.optional(x) for x in e.items):
            items = ", ".join(self.seq(c, [self._part_ex(x) for x in e.items]))
            return f"_setof(({items},), {self.L(e.span)})"
        codes = self.seq(c, [self._part_ex(x) for x in e.items])
        if len(codes) == 1:
            return f"(1 << {codes[0]})"
        return "(" + " | ".join(f"(1 << {x})" for x in codes) + ")"

    def emit_Comp(self, e, c):
        code = self._nb_mask(e, c)
        if code is not None:
            return code
        if c.sink is None:
            if e.kind == "list":
                elem_t = T.strip(self.t(e)).elem
                gen, _ = self._gen(e, c, lambda inner: self.conv(e.elem, inner, elem_t))
                return f"[{gen}]"
            gen, _ = self._gen(e, c, lambda inner: self.ex(e.elem, inner))
            if not self.elem_optional(e):
                return f"_setof_nn({gen})"
            return f"_setof([{gen}], {self.L(e.elem.span)})"
        sk = c.sink
        t = sk.tmp()
        if e.kind == "list":
            elem_t = T.strip(self.t(e)).elem
            sk.emit(f"{t} = []")
            ic = self._loop(e, c)
            ic.sink.emit(f"{t}.append({self.conv(e.elem, ic, elem_t)})")
            return t
        sk.emit(f"{t} = 0")
        if not self.elem_optional(e):
            ic = self._loop(e, c)
            ic.sink.emit(f"{t} |= 1 << {self.ex(e.elem, ic)}")
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
        ic.sink.emit(f"    {t} |= 1 << {v}")
        sk.emit(f"if {bad}:")
        sk.emit(f"    raise RulesRuntimeError('a set cannot hold none', {self.L(e.elem.span)})")
        return t

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
        if not value_safe and target_faults and not _SIMPLE.match(v):
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
            fn(s, Ctx(c.py, sk, _Hoist([pre], {}, -1, {}, uses, True)), ret)
            lines = pre.lines + sk.lines
        else:
            fn(s, Ctx(c.py, sk, None), ret)
            lines = sk.lines
        # The marker lets the module map a generated line back to its .rules line.
        if lines and "  # rules:" not in lines[0]:
            lines[0] = lines[0] + f"  # rules:{s.span.line}"
        return lines

    def emit_Let(self, s, c, ret):
        slot = self.p.slots[s]
        name = c.py.get(slot) or f"s.{slot_attr(slot)}"
        c.sink.emit(f"{name} = {self.conv(s.value, c, self.p.slot_types[slot])}")

    def emit_Assign(self, s, c, ret):
        want = self.t(s.target)
        v = self.conv(s.value, c, want)
        tsk = c.sink.scratch()
        tgt = self.target(s.target, c.at(tsk))
        if tsk.lines and not _SIMPLE.match(v):
            t = c.sink.tmp()
            c.sink.emit(f"{t} = {v}")
            v = t
        c.sink.lines.extend(tsk.lines)
        c.sink.emit(f"{tgt} = {v}")

    def emit_AugAssign(self, s, c, ret):
        optional = self.t(s.target).kind in ("opt", "any")
        v, tgt = self._value_then_target(s, c, lambda cc: self.nn(s.value, cc),
                                         self._ok(s.value), optional)
        if optional:
            c.sink.emit(f"{tgt} = _nn({tgt}, {self.L(s.target.span)}) {s.op} {v}")
        else:
            c.sink.emit(f"{tgt} {s.op}= {v}")

    def emit_Add(self, s, c, ret):
        if self.optional(s.value):
            w = self.L(s.value.span)
            v, tgt = self._value_then_target(
                s, c, lambda cc: f"_setof(({self.ex(s.value, cc)},), {w})", False)
            c.sink.emit(f"{tgt} |= {v}")
            return
        v, tgt = self._value_then_target(s, c, lambda cc: self.ex(s.value, cc),
                                         self.safe(s.value))
        c.sink.emit(f"{tgt} |= 1 << {v}")

    def emit_Remove(self, s, c, ret):
        if T.strip(self.t(s.target)).kind == "set":
            if self._target_safe(s.target):
                bit = c.sink.tmp()
                c.sink.emit(f"{bit} = 1 << {self.nn(s.value, c)}")
                tgt = self.target(s.target, c)
                c.sink.emit(f"if not {tgt} & {bit}:")
                c.sink.emit("    raise RulesRuntimeError('removing a value that is not in the "
                            f"set', {self.L(s.span)})")
                c.sink.emit(f"{tgt} ^= {bit}")
                return
            v, tgt = self._value_then_target(s, c, lambda cc: self.nn(s.value, cc),
                                             self._ok(s.value))
            c.sink.emit(f"{tgt} = _set_remove({tgt}, {v}, {self.L(s.span)})")
            return
        v, tgt = self._value_then_target(s, c, lambda cc: self.ex(s.value, cc),
                                         self.safe(s.value))
        c.sink.emit(f"_list_remove({tgt}, {v}, {self.L(s.span)})")

    def emit_Push(self, s, c, ret):
        elem = T.strip(self.t(s.target)).elem
        is_safe = self.safe(s.value) and not (
            elem.kind not in ("opt", "none", "any") and self.optional(s.value))
        v, tgt = self._value_then_target(s, c, lambda cc: self.conv(s.value, cc, elem), is_safe)
        c.sink.emit(f"{tgt}.append({v})")

    def emit_If(self, s, c, ret):
        def emit_body(sink, stmts):
            sink.lines.extend(self.stmts(stmts, c.at(sink), sink.ind, ret))
        bodies = [list(b.stmts) for _c, b in s.branches]
        bodies.append(list(s.orelse.stmts) if s.orelse is not None else None)
        self._if_chain(c, s.branches, bodies, emit_body)

    def emit_For(self, s, c, ret):
        slot = self.p.slots[s]
        var = c.py.get(slot) or f"s.{slot_attr(slot)}"
        c.sink.emit(f"for {var} in {self.iter_code(s.iter, c, snapshot=True)}:")
        body = c.sink.deeper()
        c.sink.lines.extend(self.stmts(s.body.stmts, c.at(body), body.ind, ret))

    def emit_While(self, s, c, ret):
        pre = c.sink.scratch(1)
        code = self.ex(s.cond, c.at(pre))
        body = c.sink.deeper()
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
        c.sink.lines.extend(self.stmts(s.body.stmts, c.at(body), body.ind, ret))

    def emit_Break(self, s, c, ret):
        c.sink.emit("break")

    def emit_Return(self, s, c, ret):
        c.sink.emit(f"return {self.conv(s.value, c, ret)}")

    def emit_Reveal(self, s, c, ret):
        c.sink.emit(f"_reveal(s._seen, s.history, {tuple(ident(a) for a in s.actions)!r})")

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
        out = [f"def _d_{ident(d.name)}({', '.join(['s', *names])}):  # {d.span.line}"]
        # A def changes no state: state it reads more than once is read into locals first.
        pre = Sink(fn, 1)
        exprs = _block_exprs(d.body.stmts) if isinstance(d.body, ast.Block) else [d.body]
        hoist = _Hoist([pre], {}, -1, {}, self.name_uses(exprs))
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

    def dense_table(self, name: str) -> tuple[int, int, list] | None:
        """(lo, hi, values) when a one-int-key table has a value for every key in lo..hi."""
        t = self.p.tables[name]
        ktypes = [self.p.field_type(f) for f in t.params]
        rows = self.k.table_rows[name]
        keyed = [k for k, _ in rows if k[0][0] != "any"]
        if len(ktypes) != 1 or ktypes[0].kind != "int" or not keyed:
            return None
        lo = min(k[0][1] for k in keyed)
        hi = max((k[0][2] if k[0][0] == "range" else k[0][1]) for k in keyed)
        if hi - lo > 4096:
            return None
        dense = []
        for key in range(lo, hi + 1):
            dense.append(next((v for k, v in rows if _match(k[0], key)), _MISSING))
        if _MISSING in dense:
            return None
        return lo, hi, dense

    def table_function(self, t: ast.TableDecl) -> list[str]:
        name = ident(t.name)
        rows = self.k.table_rows[t.name]
        ret = self.p.def_ret[t.name]
        args = [f"k{i}" for i in range(len(t.params))]
        out = []
        dense = self.dense_table(t.name)
        if dense is not None:
            lo, hi, values = dense
            out.append(f"_TB_{name} = ({', '.join(self.literal(v, ret) for v in values)},)")
        out.append(f"def _t_{name}({', '.join(args)}, where):  # {t.span.line}")
        if dense is not None:
            out.append(f"    if {lo} <= k0 <= {hi}:")
            out.append(f"        return _TB_{name}[k0 - {lo}]")
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
        """One function per head of the flow: the start, every place where a decision or a
        chance outcome resumes, loop heads, and blocks that would otherwise be copied into
        several functions. Every other basic block is inlined into the one function that reaches
        it, so a step usually runs one function from resumption to the next pause. Returns
        (source lines, pc -> function name)."""
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
        order = sorted(x for x in leaders if 0 <= x < len(code))
        self._end = {}
        for i, start in enumerate(order):
            self._end[start] = order[i + 1] if i + 1 < len(order) else len(code)
        succ: dict[int, list[int]] = {}
        weight: dict[int, int] = {}
        roots = [0]
        for start in order:
            end = self._end[start]
            last = code[end - 1]
            if isinstance(last, Jump):
                succ[start] = [last.target]
            elif isinstance(last, JumpIfNot | IterNext):
                succ[start] = [end, last.target]
            elif isinstance(last, ChooseAt):
                succ[start] = []
                roots += list(last.targets)
            elif isinstance(last, ChanceAt):
                succ[start] = []
                roots.append(end)
            elif isinstance(last, FinishAt):
                succ[start] = []
            else:
                succ[start] = [end]
            weight[start] = sum(_stmt_count(ins.stmt) if isinstance(ins, Exec) else 1
                                for ins in code[start:end])
        # Heads: roots and targets of backward jumps (so the rest has no cycle), then, until
        # nothing changes, blocks of some size that would be emitted more than once.
        heads = set(roots)
        for start in order:
            heads.update(t for t in succ[start] if t <= start)
        while True:
            copies = {}
            for b in order:
                copies[b] = 1 if b in heads else 0
            for b in order:
                for t in succ[b]:
                    if t not in heads:
                        copies[t] += copies[b]
            more = {b for b in order if b not in heads and copies[b] > 1
                    and weight[b] > SMALL_BLOCK}
            if not more:
                break
            heads.add(min(more))
        self._heads = heads
        # Size of each head's function, to copy small ones where they are entered from before
        # (a forward jump: no cycle), which saves a round through the dispatcher.
        self._head_lines: dict[int, int] = {}
        self._needed = []
        for h in heads:
            if h < len(code):
                self._stack = [h] * (HEAD_INLINE_DEPTH + 1)  # measuring: inline no head
                self._head_lines[h] = len(self._render(h, 1, _Fn()))
        out: list[str] = []
        names: dict[int, str] = {}
        todo = list(dict.fromkeys(roots))
        while todo:
            start = todo.pop(0)
            if start in names or start >= len(code):
                continue
            name = f"_b{start}"
            names[start] = name
            self._needed: list[int] = []
            self._stack = [start]  # heads being copied in, to copy none into itself
            out.append("")
            out.append(f"def {name}(s):")
            out.extend(self._render(start, 1, _Fn()))
            todo.extend(t for t in self._needed if t not in names)
        return out, names

    def _goto(self, target: int, ind: int, fn: _Fn) -> list[str]:
        if target not in self._heads:
            return self._render(target, ind, fn)
        if target not in self._stack and len(self._stack) <= HEAD_INLINE_DEPTH \
                and self._head_lines.get(target, HEAD_INLINE_LINES + 1) <= HEAD_INLINE_LINES:
            self._stack.append(target)
            lines = self._render(target, ind, fn)
            self._stack.pop()
            return lines
        self._needed.append(target)
        return ["    " * ind + f"return {target}"]

    def _render(self, start: int, ind: int, fn: _Fn) -> list[str]:
        code = self.low.code
        end = self._end[start]
        sk = Sink(fn, ind)
        c = Ctx(sink=sk)

        def one(expr) -> tuple[Ctx, Sink]:
            """A context for the expression of one instruction: state it reads more than once
            is read into Python locals first (nothing changes state in between)."""
            pre = Sink(fn, ind)
            hoist = _Hoist([pre], {}, -1, {}, self.name_uses([expr]), True)
            return Ctx({}, Sink(fn, ind, sk.lines), hoist), pre

        def done(pre: Sink) -> None:
            # the aliases go before the instruction's own lines
            sk.lines[first:first] = pre.lines

        for pc in range(start, end):
            ins = code[pc]
            sk.memo = {}  # the instructions before may have changed state
            first = len(sk.lines)
            if isinstance(ins, Exec):
                # Variables bound inside the statement (loop variables, lets in its blocks) are
                # out of scope at every pause: Python locals will do.
                ce = Ctx(sink=sk)
                for node in binding_nodes(ast.Block(ins.stmt.span, (ins.stmt,))):
                    if node is not ins.stmt or not isinstance(node, ast.Let):
                        ce, _ = ce.with_local(self.p.slots[node])
                sk.lines.extend(self.stmt(ins.stmt, ce, ind))
            elif isinstance(ins, Bind):
                want = self.p.slot_types[ins.slot]
                ci, pre = one(ins.expr)
                value = self.conv(ins.expr, ci, want)
                ci.sink.emit(f"s.{slot_attr(ins.slot)} = {value}")
                done(pre)
            elif isinstance(ins, SetPhase):
                _then(sk.lines, ["    " * ind + f"s.phase = {ins.name!r}"])
            elif isinstance(ins, IterInit):
                ci, pre = one(ins.expr)
                it = self.iter_code(ins.expr, ci, snapshot=True)
                ci.sink.emit(f"s.it_{ins.loop} = {it}")
                ci.sink.emit(f"s.ix_{ins.loop} = 0")
                done(pre)
            elif isinstance(ins, IterNext):
                k = ins.loop
                sk.emit(f"if s.ix_{k} < len(s.it_{k}):")
                sk.emit(f"    s.{slot_attr(ins.slot)} = s.it_{k}[s.ix_{k}]")
                sk.emit(f"    s.ix_{k} += 1")
                sk.lines.extend(self._goto(pc + 1, ind + 1, fn))
                sk.lines.extend(self._goto(ins.target, ind, fn))
                return sk.lines
            elif isinstance(ins, Jump):
                _then(sk.lines, self._goto(ins.target, ind, fn))
                return sk.lines
            elif isinstance(ins, JumpIfNot):
                ci, pre = one(ins.cond)
                code = self.ex(ins.cond, ci)
                if len(sk.lines) == first and code in ("True", "False"):
                    # a constant test (`while true`, a folded parameter): one way only
                    _then(sk.lines, self._goto(pc + 1 if code == "True" else ins.target,
                                               ind, fn))
                    return sk.lines
                ci.sink.emit(f"if {code}:")
                done(pre)
                sk.lines.extend(self._goto(pc + 1, ind + 1, fn))
                sk.lines.extend(self._goto(ins.target, ind, fn))
                return sk.lines
            elif isinstance(ins, FinishAt):
                sk.emit(f"s.pc = {pc}")
                sk.emit("s.current_player = TERMINAL")
                sk.emit("s._acts = None")
                sk.emit("return -1")
                return sk.lines
            elif isinstance(ins, ChooseAt):
                w = self.L(ins.node.span)
                sk.emit(f"s.pc = {pc}")
                sk.emit(f"s.current_player = {self.nn(ins.node.player, c)}")
                sk.emit(f"acts = _a{pc}(s)")
                sk.emit("if not acts:")
                sk.emit(f"    raise RulesRuntimeError('no legal action at this decision', {w})")
                sk.emit("s._acts = acts")
                sk.emit("return -1")
                return sk.lines
            elif isinstance(ins, ChanceAt):
                w = self.L(ins.node.span)
                sk.emit(f"s.pc = {pc}")
                sk.emit("s.current_player = CHANCE")
                sk.emit(f"acts = _o{pc}(s)")
                sk.emit("if not acts:")
                sk.emit(f"    raise RulesRuntimeError(\"chance '{ident(ins.node.name)}' has no "
                        f"outcome\", {w})")
                sk.emit("s._acts = acts")
                sk.emit("return -1")
                return sk.lines
            else:
                raise EmitError(ins)
        _then(sk.lines, self._goto(end, ind, fn))
        return sk.lines

    # -- decisions
    def choose_functions(self, pc: int, ins: ChooseAt) -> list[str]:
        """_a<pc>: legal (option, args) pairs; _f<pc>: their strings; _r<pc>: bind + resume.

        An option's `when` is split at its top-level `and`s. Each part runs inside the
        outermost parameter loop whose variables it reads, when that cannot change which fault
        is reported: the parts before it cannot fault, and neither can the domains of the loops
        it is moved out of. Such a part that fails skips the rest of its loop (`break`) when it
        stays false for every later value of that loop's variable. Other sub-expressions that
        cannot fault are computed once, outside the loops that do not change them.
        """
        node = ins.node
        fn = _Fn()
        pre = Sink(fn, 1)
        shared: dict[int, str] = {}
        self._pc, self._tables = pc, []
        body: list[str] = []
        reuse = self._reused_any(node.options)
        starts: dict[int, str] = {}
        needed = {i for lst in reuse.values() for i, _ag in lst}
        for oi, opt in enumerate(node.options):
            if oi in needed:
                starts[oi] = fn.tmp()
                body.append(f"    {starts[oi]} = len(out)")
            known = {id(ag): f"(len(out) > {starts[i]})" for i, ag in reuse.get(oi, ())}
            self._known_any = known
            try:
                if opt.name in self.p.end_actions:
                    # where the first end declaration is, for end_action_index()
                    e = fn.tmp()
                    body.append(f"    {e} = len(out)")
                    body.extend(self._option(oi, opt, fn, pre, shared))
                    body.append(f"    if s._endk < 0 and len(out) > {e}:")
                    body.append(f"        s._endk = {e}")
                else:
                    body.extend(self._option(oi, opt, fn, pre, shared))
            finally:
                self._known_any = {}
        out = self._tables + [
            f"def _a{pc}(s):  # {node.span.line}: choices of this decision", "    out = []",
            "    s._endk = -1"]
        out += pre.lines + body + ["    return out"]
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
            body_s = " + ', ' + ".join(parts) if parts else None
            out.append(f"    if opt == {oi}:")
            if body_s is None:
                out.append(f"        return {ident(opt.name) + '()'!r}")
            else:
                out.append(f"        return {ident(opt.name) + '('!r} + {body_s} + ')'")
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
        # apply: the k-th legal action (k already checked): its string, its bindings, resume
        out.append("")
        texts = []
        for oi, opt in enumerate(node.options):
            if not opt.params:
                texts.append(repr(ident(opt.name) + "()"))
                continue
            t = T.strip(self.p.slot_types[self.p.slots[opt.params[0]]])
            if len(opt.params) == 1 and t.kind == "enum":
                out.append(f"_A{pc}_{oi} = tuple({ident(opt.name) + '('!r} + n + ')' "
                           f"for n in _N_{ident(t.name)})")
                texts.append(f"_A{pc}_{oi}[args[0]]")
            else:
                texts.append(f"_f{pc}({oi}, args)")
        out.append(f"def _p{pc}(s, acts, k):")
        out.append("    opt, args = acts[k]" if any(o.params for o in node.options)
                   else "    opt = acts[k][0]")
        for oi, opt in enumerate(node.options):
            out.append(f"    {'if' if oi == 0 else 'elif'} opt == {oi}:")
            out.append(f"        s.history.append({texts[oi]})")
            for i, prm in enumerate(opt.params):
                out.append(f"        s.{slot_attr(self.p.slots[prm])} = args[{i}]")
            out.append(f"        nxt = {ins.targets[oi]}")
        out.append("    else:")
        out.append("        raise AssertionError(opt)")
        out.append(f"    s._seen.append({'-2 - s.current_player' if node.secret else 'None'})")
        out.append("    s._acts = None")
        out.append("    _run(s, nxt)")
        return out

    def _reused_any(self, options) -> dict[int, list]:
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

    def _option(self, oi: int, opt: ast.Option, fn: _Fn, pre: Sink,
                shared: dict[int, str]) -> list[str]:
        m = len(opt.params)
        c = Ctx()
        names, levels = [], {}
        for i, prm in enumerate(opt.params):
            slot = self.p.slots[prm]
            c, var = c.with_local(slot)
            names.append(var)
            levels[slot] = i
        # domains: (code emitter, cannot fault, ascending int range)
        unsafe_dom = -1
        doms = []
        for i, prm in enumerate(opt.params):
            slot = self.p.slots[prm]
            t = self.p.slot_types[slot]
            if t.kind == "int":
                const = self._const_range(prm.domain)
                if const is not None:
                    bounds = self._const_bounds(prm.domain)
                    first = bounds[0] if bounds[0] <= bounds[1] else None
                    doms.append(((lambda cc, r=const: r), True, first))
                    continue
                doms.append(((lambda cc, prm=prm: self.ex(prm.domain, cc)),
                             self._iter_ok(prm.domain), None))
            elif prm.domain is not None:
                dt = T.strip(self.t(prm.domain))
                if dt.kind == "set":
                    fnb = self.bits_fn(dt)

                    def dom_set(cc, prm=prm, fnb=fnb):
                        code = self.nn(prm.domain, cc)
                        return (f"{fnb}[{code}]" if fnb == "_SMALL_BITS"
                                else f"_bits({_bare(code)})")
                    doms.append((dom_set, self._ok(prm.domain), None))
                else:
                    # the members of the parameter's type that are in the list, in order
                    # (a none in the list matches nothing)
                    def dom_list(cc, prm=prm):
                        return f"_bits(_listdom({self.nn(prm.domain, cc)}))"
                    doms.append((dom_list, self._ok(prm.domain), None))
            else:
                doms.append(((lambda cc, t=t: self.domain(t)), True, None))
            if not doms[-1][1]:
                unsafe_dom = i
        size = self._fixed_size(opt)
        if opt.when is None and size is not None:
            # Every value of fixed domains: the (option, args) pairs are made once.
            codes = [d[0](Ctx()) for d in doms]
            if size <= CONST_ACTIONS:
                table = f"_K{self._pc}_{oi}_all"
                loops = " ".join(f"for {n} in {code}" for n, code in zip(names, codes))
                args = "(" + "".join(f"{n}, " for n in names) + ")"
                self._tables.append(f"{table} = tuple(({oi}, {args}) {loops})")
                return [f"    out.extend({table})"]
        # place the parts of `when`
        conj = _conjuncts(opt.when) if opt.when is not None else []
        placed: dict[int, list] = {lv: [] for lv in range(-1, m)}
        prefix = True
        for a in conj:
            prefix = prefix and self.safe(a)
            if prefix:
                dep = -1
                for slot in self.free(a):
                    if slot in levels:
                        dep = max(dep, levels[slot])
                level = max(dep, unsafe_dom)
                brk = level >= 0 and (dep < level or self._falls(a, opt.params[level], doms[level]))
                if brk and level >= 1 and dep == level and unsafe_dom < level \
                        and doms[level][2] is not None and (
                        self._falls(a, opt.params[level - 1], doms[level - 1])
                        or self.p.slots[opt.params[level - 1]] not in self.free(a)):
                    # False at the first value of this loop (where it is easiest to satisfy),
                    # it is false for every later value of the loop outside too.
                    first = {self.p.slots[opt.params[level]]: str(doms[level][2])}
                    placed[level - 1].append((a, True, first))
            else:
                level, brk = m - 1, False
            placed[level].append((a, brk, {}))
        # emit: level -1 guards as nested ifs, then one loop per parameter. Nothing here changes
        # state, so the results of inlined defs are shared down the nest (one memo scope per
        # block).
        lines: list[str] = []
        hoist_levels = [pre]
        inserts: list[tuple[int, Sink]] = []
        ind = 1
        scope = Sink(fn, ind)

        def here(scope):
            return Sink(fn, scope.ind, parent=scope.parent, memo=scope.memo)
        guard: list[str] = []  # tests joined by `and` until one needs statements first
        for a, _brk, _sub in placed[-1]:
            sk = here(scope)
            code = self.ex(a, Ctx(c.py, sk, _Hoist(hoist_levels, levels, -1, shared)))
            if sk.lines and guard:
                # statements before this test: they go inside the tests so far
                lines.append("    " * ind + f"if {' and '.join(guard)}:")
                guard = []
                ind += 1
                scope = Sink(fn, ind, parent=scope)
                sk.lines[:] = ["    " + x for x in sk.lines]
            lines.extend(sk.lines)
            if code == "False":  # a folded parameter: the option is never legal
                return []
            if code != "True":
                guard.append(code)
        if guard:
            lines.append("    " * ind + f"if {' and '.join(guard)}:")
            ind += 1
            scope = Sink(fn, ind, parent=scope)
        for i in range(m):
            sk = here(scope)
            dom = doms[i][0](Ctx(c.py, sk, _Hoist(hoist_levels, levels, i - 1, shared)))
            lines.extend(sk.lines)
            lines.append("    " * ind + f"for {names[i]} in {dom}:")
            ind += 1
            scope = Sink(fn, ind, parent=scope)
            level_sink = Sink(fn, ind)
            hoist_levels.append(level_sink)
            inserts.append((len(lines), level_sink))
            for a, brk, sub in placed[i]:
                sk = here(scope)
                code = self.ex_not(a, Ctx({**c.py, **sub}, sk,
                                          _Hoist(hoist_levels, levels, i, shared)))
                lines.extend(sk.lines)
                note = "  # then no value of the loop inside passes either" if sub else ""
                lines.append("    " * ind + f"if {code}:{note}")
                lines.append("    " * ind + f"    {'break' if brk else 'continue'}")
        size = self._small_domain(opt)
        if size is not None:
            # the (option, args) pairs of a one-parameter option, made once
            table = f"_K{self._pc}_{oi}"
            self._tables.append(f"{table} = tuple(({oi}, (v,)) for v in range({size}))")
            lines.append("    " * ind + f"out.append({table}[{names[0]}])")
        else:
            args = "(" + "".join(f"{n}, " for n in names) + ")"
            lines.append("    " * ind + f"out.append(({oi}, {args}))")
        for pos, sk in reversed(inserts):
            lines[pos:pos] = sk.lines
        return lines

    def _fixed_size(self, opt: ast.Option) -> int | None:
        """How many argument tuples an option has when every parameter's domain is fixed (a
        constant int range, all members of an enum, both bools); None otherwise."""
        if not opt.params:
            return None
        size = 1
        for prm in opt.params:
            t = T.strip(self.p.slot_types[self.p.slots[prm]])
            if t.kind == "int" and self._const_range(prm.domain) is not None:
                lo, hi, step = self._const_bounds(prm.domain)
                size *= len(range(lo, hi + 1, step))
            elif t.kind == "enum" and prm.domain is None:
                size *= len(self.p.enums[t.name].members)
            elif t.kind == "bool" and prm.domain is None:
                size *= 2
            else:
                return None
        return size

    def _small_domain(self, opt: ast.Option) -> int | None:
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

    def _falls(self, a, prm: ast.OParam, dom) -> bool:
        """Whether `a`, once false, stays false for every later value of an int parameter that
        runs upwards (a comparison of a non-decreasing side with a non-increasing one)."""
        if dom[2] is None or not isinstance(a, ast.BinOp) or a.op not in ("<", "<=", ">", ">="):
            return False
        slot = self.p.slots[prm]
        if T.strip(self.t(a.left)).kind != "int" or T.strip(self.t(a.right)).kind != "int":
            return False
        lm, rm = self._mono(a.left, slot), self._mono(a.right, slot)
        if lm is None or rm is None:
            return False
        if a.op in ("<", "<="):  # true while left is small: left grows or right shrinks
            return lm >= 0 and rm <= 0 and (lm, rm) != (0, 0)
        return lm <= 0 and rm >= 0 and (lm, rm) != (0, 0)

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

    def _const_bounds(self, e) -> tuple[int, int, int]:
        return (self.k.eval_const(e.lo), self.k.eval_const(e.hi),
                self.k.eval_const(e.step) if e.step is not None else 1)

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
        """_o<pc>: [(value, weight)] in outcome order (or the set itself when every member
        weighs 1); _s<pc>: outcome string; _v<pc>: who sees it."""
        node = ins.node
        slot = self.p.slots[node]
        fn = _Fn()
        t = T.strip(self.p.slot_types[slot])
        dt = T.strip(self.t(node.domain))
        sk = Sink(fn, 1)
        c = Ctx(sink=sk)
        out = [f"def _o{pc}(s):  # {node.span.line}: outcomes of chance '{ident(node.name)}'"]
        if node.weight is None and dt.kind == "set":
            dom = self.nn(node.domain, c)
            sk.emit(f"return {dom}")
        else:
            it = self.iter_code(node.domain, c)
            ci, var = c.with_local(slot)
            sk.emit("ws = {}")
            sk.emit(f"for {var} in {it}:")
            body = sk.deeper()
            w = self.nn(node.weight, ci.at(body)) if node.weight is not None else "1"
            body.emit(f"w = {w}")
            if node.weight is not None:
                body.emit("if w < 0:")
                body.emit(f"    raise RulesRuntimeError('negative chance weight', "
                          f"{self.L(node.weight.span)})")
            body.emit(f"ws[{var}] = ws.get({var}, 0) + w")
            sk.emit("return [(v, w) for v, w in ws.items() if w > 0]")
        out.extend(sk.lines)
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
            vs = Sink(fn, 1)
            out_code = self.ex(node.seen_by, Ctx(sink=vs))
            out.extend(vs.lines)
            out.append(f"    who = {out_code}")
            out.append("    return -1 if who is None else who")
        # apply: the k-th outcome (k already checked)
        masked = node.weight is None and dt.kind == "set"
        out.append("")
        out.append(f"def _p{pc}(s, acts, k):")
        out.append(f"    v = {'_kth_bit(acts, k)' if masked else 'acts[k][0]'}")
        out.append(f"    s.{slot_attr(slot)} = v")
        out.append(f"    s.history.append({f'_S{pc}[v]' if t.kind == 'enum' else f'_s{pc}(v)'})")
        if node.seen_by is None:
            out.append("    s._seen.append(None)")
        else:
            vs = Sink(fn, 1)
            who = self.ex(node.seen_by, Ctx(sink=vs))
            if vs.lines or not self.optional(node.seen_by):
                out.append(f"    s._seen.append(_v{pc}(s))" if vs.lines
                           else f"    s._seen.append({who})")
            else:
                out.append(f"    who = {who}")
                out.append("    s._seen.append(-1 if who is None else who)")
        out.append("    s._acts = None")
        out.append(f"    _run(s, {pc + 1})")
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


def _then(lines: list[str], more: list[str]) -> None:
    """Append straight-line code; a phase set and at once set again keeps only the last."""
    if lines and more and more[0].lstrip().startswith("s.phase = "):
        pad = more[0][:len(more[0]) - len(more[0].lstrip())]
        if lines[-1].startswith(pad + "s.phase = "):
            lines.pop()
    lines.extend(more)


def _bare(code: str) -> str:
    """Code without parentheses around the whole of it (for the only argument of a call)."""
    if "'" in code or '"' in code:
        return code
    while code.startswith("(") and code.endswith(")"):
        depth = 0
        for i, ch in enumerate(code):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(code) - 1:
                return code  # the first group closes before the end: `(a) + (b)`
        inner = code[1:-1]
        if inner.endswith(",") or not inner:
            return code  # a tuple
        code = inner
    return code


def _conjuncts(e) -> list:
    """The operands of a chain of `and`s, left to right."""
    if isinstance(e, ast.BinOp) and e.op == "and":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def _children(e) -> list:
    """Direct sub-expressions of an expression node."""
    if isinstance(e, ast.CondExpr):
        return [e.cond, e.then, e.orelse]
    if isinstance(e, ast.BinOp):
        return [e.left, e.right]
    if isinstance(e, ast.Not | ast.Neg):
        return [e.operand]
    if isinstance(e, ast.Range):
        return [x for x in (e.lo, e.hi, e.step) if x is not None]
    if isinstance(e, ast.Index):
        return [e.obj, e.index]
    if isinstance(e, ast.Attr):
        return [e.obj]
    if isinstance(e, ast.Call):
        return list(e.args)
    if isinstance(e, ast.Agg | ast.Comp):
        return [x for x in (e.iter, e.elem, e.cond) if x is not None]
    if isinstance(e, ast.Sort):
        return [e.iter, *(k.key for k in e.keys)]
    if isinstance(e, ast.ListLit | ast.SetLit):
        return list(e.items)
    return []


# Statements that evaluate all their expressions before changing anything (their nested
# statements, if any, are emitted separately).
_ONE_PASS = (ast.Let, ast.Assign, ast.AugAssign, ast.Add, ast.Remove, ast.Push, ast.Return,
             ast.If, ast.For)


def _stmt_exprs(s) -> list:
    """The expressions a statement itself evaluates (not those of its nested statements)."""
    if isinstance(s, ast.Let | ast.Return):
        return [s.value]
    if isinstance(s, ast.Assign | ast.AugAssign | ast.Add | ast.Remove | ast.Push):
        return [s.value, *s.target.indices]
    if isinstance(s, ast.If):
        return [cond for cond, _b in s.branches]
    if isinstance(s, ast.For):
        return [s.iter]
    if isinstance(s, ast.While):
        return [s.cond]
    return []


def _block_exprs(stmts) -> list:
    """Every expression in a list of statements, nested ones included."""
    out = []
    for s in stmts:
        out.extend(_stmt_exprs(s))
        if isinstance(s, ast.If):
            for _c, b in s.branches:
                out.extend(_block_exprs(b.stmts))
            if s.orelse is not None:
                out.extend(_block_exprs(s.orelse.stmts))
        elif isinstance(s, ast.For | ast.While):
            out.extend(_block_exprs(s.body.stmts))
    return out


def _has_return(stmts) -> bool:
    for s in stmts:
        if isinstance(s, ast.Return):
            return True
        if isinstance(s, ast.If):
            blocks = [b for _c, b in s.branches] + ([s.orelse] if s.orelse else [])
            if any(_has_return(b.stmts) for b in blocks):
                return True
        if isinstance(s, ast.For | ast.While) and _has_return(s.body.stmts):
            return True
    return False


def _returns(stmts) -> bool:
    """Whether a statement list returns on every path."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If) and last.orelse is not None:
        return all(_returns(b.stmts) for _c, b in last.branches) and _returns(last.orelse.stmts)
    return False


def _structured(stmts) -> bool:
    """A def body that can be inlined: lets, ifs and returns only, where after an `if` with a
    return in it at most one branch (the missing `else` included) continues."""
    for s in stmts:
        if isinstance(s, ast.Let | ast.Return):
            continue
        if not isinstance(s, ast.If):
            return False
        blocks = [b.stmts for _c, b in s.branches] + [s.orelse.stmts if s.orelse else ()]
        if not all(_structured(b) for b in blocks):
            return False
        if any(_has_return(b) for b in blocks):
            falls = sum(1 for b in blocks if not _returns(list(b)))
            if falls > 1:
                return False
    return True


def _stmt_count(s) -> int:
    """Statements in a statement, nested ones included (a size measure for inlining)."""
    n = 1
    if isinstance(s, ast.If):
        for _c, body in s.branches:
            n += sum(_stmt_count(x) for x in body.stmts)
        if s.orelse is not None:
            n += sum(_stmt_count(x) for x in s.orelse.stmts)
    elif isinstance(s, ast.For | ast.While):
        n += sum(_stmt_count(x) for x in s.body.stmts)
    return n


def _walk(e):
    """An expression's nodes, outermost first (not into def bodies)."""
    yield e
    if not hasattr(e, "__dataclass_fields__"):
        return
    for f in e.__dataclass_fields__:
        if f == "span":
            continue
        v = getattr(e, f)
        for x in (v if isinstance(v, tuple | list) else (v,)):
            if hasattr(x, "__dataclass_fields__") and not isinstance(x, Span):
                yield from _walk(x)
