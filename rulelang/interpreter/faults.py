"""Which expressions can never fault, for the interpreter's one use of it: `any` and `all` stop
at the first deciding element when no element could have faulted (otherwise every element is
evaluated, as the language defines, so a later element's fault is still reported).

Deliberately small and conservative, in the interpreter's own terms (what each fn_<Node> of
consts.ExprEvaluator checks): a node kind it does not know may fault. It is kept apart from the
code generator's analysis on purpose, so the two back ends do not share a mistake.
"""

from __future__ import annotations

from rulelang import ast
from rulelang import types as T
from rulelang.consts import Constants
from rulelang.semantics import BINARY_OPS, BUILTINS

_MAYBE_NONE = ("opt", "none", "any")


class NeverFaults:
    def __init__(self, constants: Constants) -> None:
        self.k = constants
        self.p = constants.program
        self._memo: dict[object, bool] = {}
        self._defs: dict[str, bool] = {}

    def __call__(self, e) -> bool:
        if e not in self._memo:
            self._memo[e] = False  # no circles through expressions; this guards the cache
            self._memo[e] = self._expr(e)
        return self._memo[e]

    def optional(self, e) -> bool:
        return self.p.types[e].kind in _MAYBE_NONE

    def _some(self, e) -> bool:
        """Never faults and is never none (so an nn check of it cannot fail either)."""
        return self(e) and not self.optional(e)

    def _kept(self, e) -> bool:
        """Never faults where it is kept (no int-limit check on it)."""
        return self(e) and not self.k.growth(e)

    def _expr(self, e) -> bool:
        if isinstance(e, ast.IntLit | ast.BoolLit | ast.NoneLit | ast.Name):
            return True
        if isinstance(e, ast.CondExpr):
            return self(e.cond) and self(e.then) and self(e.orelse)
        if isinstance(e, ast.Not):
            return self(e.operand)
        if isinstance(e, ast.Neg):
            return self._some(e.operand)
        if isinstance(e, ast.BinOp):
            kind = BINARY_OPS[e.op].kind
            if kind in ("logic", "equal"):
                return self(e.left) and self(e.right)
            if kind == "member":
                left_ok = self._some(e.left) if T.strip(self.p.types[e.right]).kind == "set" \
                    else self(e.left)
                return left_ok and self._some(e.right)
            if BINARY_OPS[e.op].faults and not (isinstance(e.right, ast.IntLit)
                                                and e.right.value != 0):
                return False  # division by what may be zero
            if T.strip(self.p.types[e]).kind == "list":
                return False  # a list that may pass the size limit
            return self._some(e.left) and self._some(e.right)
        if isinstance(e, ast.Index):
            return T.strip(self.p.types[e.obj]).kind == "array" and self._some(e.obj) \
                and self._some(e.index)
        if isinstance(e, ast.Attr):
            return self.p.refs[e][0] == "member" or self._some(e.obj)
        if isinstance(e, ast.Call):
            return self._call(e)
        if isinstance(e, ast.Agg):
            if e.func in ("min", "max"):
                return False  # of an empty collection
            elem_ok = self._some(e.elem) if e.func == "sum" else self(e.elem)
            return self._some(e.iter) and (e.cond is None or self(e.cond)) and elem_ok
        if isinstance(e, ast.Comp):
            if not self._some(e.iter) or (e.cond is not None and not self(e.cond)):
                return False
            if e.kind == "list":
                return self._kept(e.elem)
            return self(e.elem) and (not self.optional(e.elem) or self._filtered(e))
        return False  # anything else may fault, as far as this module knows

    def _filtered(self, e: ast.Comp) -> bool:
        """Whether a set comprehension's filter is `x != none` (maybe among other tests joined
        by `and`) for the very expression x it collects, so no none gets into the set."""
        todo = [e.cond] if e.cond is not None else []
        while todo:
            c = todo.pop()
            if isinstance(c, ast.BinOp) and c.op == "and":
                todo += [c.left, c.right]
            elif isinstance(c, ast.BinOp) and c.op == "!=" and isinstance(c.right, ast.NoneLit) \
                    and self._same(c.left, e.elem):
                return True
        return False

    def _same(self, a, b) -> bool:
        """Whether two simple expressions (names, literals, indexing, fields) are the same."""
        if type(a) is not type(b):
            return False
        if isinstance(a, ast.Name):
            return self.p.refs[a] == self.p.refs[b]
        if isinstance(a, ast.IntLit | ast.BoolLit):
            return a.value == b.value
        if isinstance(a, ast.Index):
            return self._same(a.obj, b.obj) and self._same(a.index, b.index)
        if isinstance(a, ast.Attr):
            return self.p.refs[a] == self.p.refs[b] and self._same(a.obj, b.obj)
        return False

    def _call(self, e: ast.Call) -> bool:
        ref = self.p.refs[e]
        if ref[0] == "def":
            d = self.p.defs[ref[1]]
            for a, f in zip(e.args, d.params):
                want = self.p.slot_types[self.p.slots[f]]
                if not self._kept(a) or (want.kind not in _MAYBE_NONE and self.optional(a)):
                    return False
            return self.def_never_faults(d)
        if ref[0] != "builtin" or not all(self._some(a) for a in e.args):
            return False
        b = BUILTINS[e.name]
        return not b.faults and b.safe is not None

    def def_never_faults(self, d: ast.DefDecl) -> bool:
        if d.name not in self._defs:
            self._defs[d.name] = False  # guards against circles
            ret = self.p.def_ret[d.name]
            if isinstance(d.body, ast.Block):
                ok = self._block(d.body, ret)
            else:
                ok = self(d.body) and (ret.kind in _MAYBE_NONE or not self.optional(d.body))
            self._defs[d.name] = ok
        return self._defs[d.name]

    def _block(self, b: ast.Block, ret: T.Type) -> bool:
        for s in b.stmts:
            if isinstance(s, ast.Let):
                want = self.p.slot_types[self.p.slots[s]]
                if not self._kept(s.value) or (want.kind not in _MAYBE_NONE
                                               and self.optional(s.value)):
                    return False
            elif isinstance(s, ast.Return):
                if not self(s.value) or (ret.kind not in _MAYBE_NONE and self.optional(s.value)):
                    return False
            elif isinstance(s, ast.If):
                if not all(self(c) and self._block(body, ret) for c, body in s.branches):
                    return False
                if s.orelse is not None and not self._block(s.orelse, ret):
                    return False
            elif isinstance(s, ast.For):
                if not self._some(s.iter) or not self._block(s.body, ret):
                    return False
            elif not isinstance(s, ast.Break):
                return False  # assignments, `while` (its step limit), `fail`, ...
        return True
