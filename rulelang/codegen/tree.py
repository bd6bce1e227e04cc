"""Structural questions about AST nodes the code generator asks (children, conjuncts, returns)."""

from __future__ import annotations

from rulelang import ast
from rulelang.errors import Span


def _conjuncts(e) -> list:
    """The operands of a chain of `and`s, left to right."""
    if isinstance(e, ast.BinOp) and e.op == "and":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def _disjuncts(e) -> list:
    """The operands of a chain of `or`s, left to right."""
    if isinstance(e, ast.BinOp) and e.op == "or":
        return _disjuncts(e.left) + _disjuncts(e.right)
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
    if isinstance(e, ast.ArrayLit):
        return list(e.values)
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


def _has_loop(stmts) -> bool:
    """Whether a list of statements holds a `for` or a `while`, nested ones included."""
    for s in stmts:
        if isinstance(s, ast.For | ast.While):
            return True
        if isinstance(s, ast.If) and (
                any(_has_loop(b.stmts) for _c, b in s.branches)
                or s.orelse is not None and _has_loop(s.orelse.stmts)):
            return True
    return False


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
    """Whether a statement list returns (or fails) on every path: it never falls through."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return | ast.Fail):
        return True
    if isinstance(last, ast.If) and last.orelse is not None:
        return all(_returns(b.stmts) for _c, b in last.branches) and _returns(last.orelse.stmts)
    return False


def _structured(stmts) -> bool:
    """A def body that can be inlined: lets, ifs, returns and fails only, where after an `if`
    with a return in it at most one branch (the missing `else` included) continues."""
    for s in stmts:
        if isinstance(s, ast.Let | ast.Return | ast.Fail):
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
