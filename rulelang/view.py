"""The `view` section's checker pass, and the action parameter names and labels it gives.

A view may not read a `hidden` variable, may read a `private` one only as `v[me]`, and may call
only defs that read neither; so a view evaluated from a player's observation
(rulelang/viewmodel.py) never needs, and never shows, what that player may not see.
"""

from __future__ import annotations

import dataclasses

from rulelang import ast
from rulelang import types as T
from rulelang.errors import Span

# ---------------------------------------------------------------------------------- checking


def _nodes(node):
    """Every AST node below `node` (inclusive), statements and expressions alike."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple | list):
            stack.extend(n)
            continue
        if not dataclasses.is_dataclass(n) or isinstance(n, Span):
            continue
        yield n
        for f in dataclasses.fields(n):
            if f.name != "span":
                stack.append(getattr(n, f.name))


def check_view(checker) -> None:
    """Check the file's `view` sections (at most one) and attach it as `program.view`."""
    from rulelang.check import _Ctx, _Scope

    p = checker.p
    views = [d for d in p.module.decls if isinstance(d, ast.ViewDecl)]
    p.view = views[0] if views else None
    if not views:
        return
    for extra in views[1:]:
        checker.error("E011", "duplicate 'view' section", extra.span,
                      f"first defined at {views[0].span}")
    view = views[0]
    reads = _def_reads(p)
    scope = _Scope()
    checker.declare_local(scope, view, "me", T.PLAYER, view.span)
    me_slot = p.slots[view]
    ctx = _Ctx(pure=True, where="view")
    exprs: list[ast.Expr] = []
    labelled: dict[str, Span] = {}

    def shown(value, when, where) -> None:
        """A displayed value (none, or fixed text, needs no check) and its optional condition."""
        if value is not None and not isinstance(value, ast.ViewText):
            _displayable(checker, checker.infer(value, where, ctx), value)
            exprs.append(value)
        if when is not None:
            checker.expect(when, where, ctx, T.BOOL)
            exprs.append(when)

    for item in view.items:
        if isinstance(item, ast.ViewBoard):
            info = p.enums.get(item.enum)
            if info is None:
                checker.undefined("enum or grid", item.enum, item.span, list(p.enums))
                continue
            inner = _Scope(scope)
            checker.declare_local(inner, item, item.var, T.enum(item.enum), item.span)
            if item.at is not None:
                for e in item.at:
                    checker.expect(e, inner, ctx, T.INT)
                    exprs.append(e)
            elif info.grid is None:
                checker.error("E051", f"'{item.enum}' is not a grid: say where each member "
                              f"goes with 'at COL, ROW'", item.span)
            for cell in item.cells:
                shown(cell.value, cell.when, inner)
        elif isinstance(item, ast.ViewTable):
            et = checker.elem_type(item.iter, scope, ctx)
            exprs.append(item.iter)
            inner = _Scope(scope)
            checker.declare_local(inner, item, item.var, et, item.span)
            for col in item.cols:
                shown(col.value, col.when, inner)
        elif isinstance(item, ast.ViewShow):
            shown(item.value, item.when, scope)
        elif isinstance(item, ast.ViewLabel):
            params = action_params(p).get(item.action)
            if params is None:
                checker.undefined("action", item.action, item.span, list(action_params(p)))
                continue
            if item.action in labelled:
                checker.error("E011", f"duplicate label for action '{item.action}'", item.span,
                              f"first labelled at {labelled[item.action]}")
            labelled[item.action] = item.span
            for name, _text, span in item.labels:
                if name not in params:
                    checker.undefined(f"parameter of {item.action}", name, span, params)
    for e in exprs:
        _check_visibility(checker, e, me_slot, reads)


def _displayable(checker, t: T.Type, e: ast.Expr) -> None:
    t = T.strip(t)
    if t.kind in ("array", "graph"):
        checker.error("E012", f"a view cannot show a value of type {t} directly; index it",
                      e.span)


def _def_reads(p) -> dict[str, set[str]]:
    """def name -> state variables it reads, directly or through the defs it calls."""
    direct: dict[str, set[str]] = {}
    calls: dict[str, set[str]] = {}
    for name, d in p.defs.items():
        direct[name], calls[name] = set(), set()
        for n in _nodes(d.body):
            ref = p.refs.get(n)
            if ref is None:
                continue
            if ref[0] == "state":
                direct[name].add(ref[1])
            elif ref[0] == "def":
                calls[name].add(ref[1])
    out: dict[str, set[str]] = {}
    for name in p.defs:
        seen, stack, acc = {name}, [name], set()
        while stack:
            cur = stack.pop()
            acc |= direct.get(cur, set())
            for c in calls.get(cur, ()):
                if c not in seen:
                    seen.add(c)
                    stack.append(c)
        out[name] = acc
    return out


def _check_visibility(checker, e: ast.Expr, me_slot: str, reads: dict[str, set[str]]) -> None:
    p = checker.p
    visibility = {v.name: v.visibility for v in p.state_vars}
    allowed: set[int] = set()
    for n in _nodes(e):
        if (isinstance(n, ast.Index) and isinstance(n.obj, ast.Name)
                and isinstance(n.index, ast.Name) and p.refs.get(n.index) == ("local", me_slot)):
            allowed.add(id(n.obj))
    for n in _nodes(e):
        ref = p.refs.get(n)
        if ref is None:
            continue
        if ref[0] == "state":
            vis = visibility.get(ref[1])
            if vis == "hidden":
                checker.error("E050", f"a view cannot read hidden state '{ref[1]}'", n.span,
                              "views show only what the player's observation holds")
            elif vis == "private" and id(n) not in allowed:
                checker.error("E050", f"a view can read private state '{ref[1]}' only as "
                              f"'{ref[1]}[me]'", n.span)
        elif ref[0] == "def":
            bad = sorted(v for v in reads.get(ref[1], ()) if visibility.get(v) in
                         ("hidden", "private"))
            if bad:
                checker.error("E050", f"a view cannot call '{ref[1]}': it reads "
                              f"{visibility[bad[0]]} state '{bad[0]}'", n.span)


# ---------------------------------------------------------------------------------- actions


def _stmts(block):
    for n in _nodes(block):
        if isinstance(n, ast.Choose):
            yield n


def action_params(program) -> dict[str, list[str]]:
    """Action name -> parameter names, for every option of every `choose` in file order, then
    the standing options."""
    out: dict[str, list[str]] = {}
    roots = [root for root in [program.flow, *program.phases.values()] if root is not None]
    for root in roots:
        chooses = sorted(_stmts(root.body), key=lambda c: (c.span.line, c.span.col))
        for ch in chooses:
            for opt in ch.options:
                out.setdefault(opt.name, [prm.name for prm in opt.params])
    # Each name's place: its first option met walking the roots in order (one walk for all).
    first: dict[str, tuple[int, int]] = {}
    for root in roots:
        for ch in _stmts(root.body):
            for opt in ch.options:
                first.setdefault(opt.name, (opt.span.line, opt.span.col))
    out = dict(sorted(out.items(), key=lambda kv: first.get(kv[0], (0, 0))))
    for sd in getattr(program, "standing", ()):
        for opt in sd.options:
            out.setdefault(opt.name, [prm.name for prm in opt.params])
    return out


def arg_display(program) -> dict[str, list[dict[str, str]]]:
    """Action name -> for each parameter, member name -> display name (`Lodz "Łódź"`): what
    people see for an argument (action strings themselves keep the ASCII names). Only
    members whose display name differs from their name are listed. A player is shown by his
    seat name, as everywhere else (`1` -> `P1`, viewmodel.seat_name): `exempt_player(P1)`."""
    seats = {str(p): f"P{p}" for p in range(program.max_players)}
    out: dict[str, list[dict[str, str]]] = {}
    for name, sig in program.action_sigs.items():
        per = []
        for t in sig:
            t = T.strip(t)
            info = program.enums.get(t.name) if t.kind == "enum" else None
            if t.kind == "player":
                per.append(dict(seats))
                continue
            per.append({} if info is None else {m: d for m, d in zip(info.members, info.display)
                                                if m != d})
        if any(per):
            out[name] = per
    return out


def display_aliases(program) -> dict[str, tuple[str, ...]]:
    """What people may type for an enum member, casefolded -> the member names it can mean:
    its display name (`Łódź` for Lodz), and the part of a display name before ': ' (`green`
    for BnlGreen, "green: Netherlands north/east"). A display name several members share
    means each of them; the reader (play.resolve) keeps the one the legal actions name."""
    seen: dict[str, set[str]] = {}
    for info in program.enums.values():
        for m, d in zip(info.members, info.display):
            if m == d:
                continue
            seen.setdefault(d.casefold(), set()).add(m)
            head = d.split(": ", 1)[0]
            if head != d and head.strip():
                seen.setdefault(head.casefold(), set()).add(m)
    return {d: tuple(sorted(ms)) for d, ms in sorted(seen.items())}


def param_labels(program) -> dict[str, list[str]]:
    """Action name -> the label of each parameter: the view's `label`, else the name."""
    out = {name: list(params) for name, params in action_params(program).items()}
    view = getattr(program, "view", None)
    if view is not None:
        for item in view.items:
            if isinstance(item, ast.ViewLabel) and item.action in out:
                names = action_params(program)[item.action]
                for pname, text, _span in item.labels:
                    if pname in names:
                        out[item.action][names.index(pname)] = text
    return out
