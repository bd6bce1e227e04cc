"""The `view` section: its checker pass, and the view model built from a player's observation.

A view reads only what `State.observation(p)` returns (visible state variables, with other
players' private entries as `null`), so it cannot show hidden state. The checker enforces that
statically too: a view may not read a `hidden` variable, may read a `private` one only as
`v[me]`, and may call only defs that read neither. Files without a view get a generic one built
from the types of the state variables (`fallback_items`).

A view model is plain JSON data, rendered by the terminal, Textual and browser front ends:

    {"game", "seat", "num_players", "phase", "current_player",
     "items": [{"kind": "board", "title", "cols", "rows", "cells"},
               {"kind": "table", "title", "columns", "rows"},
               {"kind": "show", "label", "text"}]}
"""

from __future__ import annotations

import dataclasses
from typing import Any

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
                if cell.value is not None:
                    _displayable(checker, checker.infer(cell.value, inner, ctx), cell.value)
                    exprs.append(cell.value)
                if cell.when is not None:
                    checker.expect(cell.when, inner, ctx, T.BOOL)
                    exprs.append(cell.when)
        elif isinstance(item, ast.ViewTable):
            et = checker.elem_type(item.iter, scope, ctx)
            exprs.append(item.iter)
            inner = _Scope(scope)
            checker.declare_local(inner, item, item.var, et, item.span)
            for col in item.cols:
                if not isinstance(col.value, ast.ViewText):
                    _displayable(checker, checker.infer(col.value, inner, ctx), col.value)
                    exprs.append(col.value)
                if col.when is not None:
                    checker.expect(col.when, inner, ctx, T.BOOL)
                    exprs.append(col.when)
        elif isinstance(item, ast.ViewShow):
            if not isinstance(item.value, ast.ViewText):
                _displayable(checker, checker.infer(item.value, scope, ctx), item.value)
                exprs.append(item.value)
            if item.when is not None:
                checker.expect(item.when, scope, ctx, T.BOOL)
                exprs.append(item.when)
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
    """Action name -> parameter names, for every option of every `choose`, in file order."""
    out: dict[str, list[str]] = {}
    roots = [program.flow, *program.phases.values()]
    for root in roots:
        if root is None:
            continue
        chooses = sorted(_stmts(root.body), key=lambda c: (c.span.line, c.span.col))
        for ch in chooses:
            for opt in ch.options:
                out.setdefault(opt.name, [prm.name for prm in opt.params])
    return dict(sorted(out.items(), key=lambda kv: _first_line(program, kv[0])))


def _first_line(program, name: str) -> tuple[int, int]:
    for root in [program.flow, *program.phases.values()]:
        if root is None:
            continue
        for ch in _stmts(root.body):
            for opt in ch.options:
                if opt.name == name:
                    return (opt.span.line, opt.span.col)
    return (0, 0)


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


# ---------------------------------------------------------------------------------- evaluation


class ViewError(Exception):
    """A view expression failed on this observation (a rules fault, e.g. a none)."""


def seat_name(p: int | None, me: int | None = None) -> str:
    if p is None:
        return "-"
    return f"P{p}" + (" (you)" if me is not None and p == me else "")


class Viewer:
    """Builds view models for one checked program from observations (either back end)."""

    def __init__(self, program) -> None:
        from rulelang.interpreter import Game

        self.program = program
        self.game = Game(program)  # used only to evaluate view expressions and parse values
        self.view: ast.ViewDecl | None = getattr(program, "view", None)

    # -- values
    def fmt(self, v, t: T.Type, me: int | None = None) -> str:
        """Text of an internal value of type t."""
        if v is None:
            return ""
        t = T.strip(t)
        k = t.kind
        if k == "enum":
            return self.program.enums[t.name].members[v]
        if k == "bool":
            return "yes" if v else "no"
        if k == "player":
            return seat_name(v, me)
        if k in ("set", "list"):
            items = sorted(v) if k == "set" else list(v)
            return ", ".join(self.fmt(x, t.elem, me) for x in items) or "-"
        return str(v)

    def _state(self, obs: dict):
        from rulelang.interpreter.engine import State

        st = State.__new__(State)
        st.game = self.game
        st.num_players = obs["num_players"]
        types = self.program.state_types
        st.vars = {name: self.game.parse_value(j, types[name])
                   for name, j in obs["vars"].items() if name in types}
        return st

    def model(self, obs: dict, seat: int | None = None) -> dict[str, Any]:
        """The view model of an observation (or of a full state's JSON, for spectators)."""
        me = obs.get("player", seat)
        head = {"game": obs["game"], "seat": me, "num_players": obs["num_players"],
                "phase": obs.get("phase"), "current_player": obs.get("current_player")}
        if self.view is None:
            head["items"] = fallback_items(self, obs, me)
        else:
            head["items"] = self._items(obs, me)
        return head

    def _items(self, obs: dict, me: int | None) -> list[dict]:
        from rulelang.errors import RulesRuntimeError
        from rulelang.interpreter.engine import _Evaluator

        p = self.program
        st = self._state(obs)
        ev = _Evaluator(self.game, st)
        # a spectator (full state, no seat) has no `me`: entries that need one show "?"
        env = {p.slots[self.view]: me}

        def val(e, scope):
            try:
                return ev.eval(e, scope)
            except (RulesRuntimeError, KeyError, IndexError, TypeError) as exc:
                raise ViewError(str(exc)) from None

        def text(e, scope):
            if isinstance(e, ast.ViewText):
                return e.text
            try:
                return self.fmt(val(e, scope), p.types[e], me)
            except ViewError:
                return "?"

        def when(e, scope):
            if e is None:
                return True
            try:
                return bool(val(e, scope))
            except ViewError:
                return False

        items: list[dict] = []
        for item in self.view.items:
            if isinstance(item, ast.ViewBoard):
                info = p.enums[item.enum]
                slot = p.slots[item]
                places = []
                for m in range(len(info.members)):
                    scope = {**env, slot: m}
                    if item.at is None:
                        c0, ncols, _rows = info.grid
                        pos = (m % ncols, m // ncols)
                    else:
                        try:
                            pos = (val(item.at[0], scope), val(item.at[1], scope))
                        except ViewError:
                            continue
                    cell = ""
                    for c in item.cells:
                        if when(c.when, scope):
                            cell = c.text if c.text is not None else text(c.value, scope)
                            break
                    places.append((pos, cell))
                if item.at is None:
                    c0, ncols, rows = info.grid
                    cols = [str(c0 + i) for i in range(ncols)]
                    rlabels = list(rows)
                    grid = [["" for _ in cols] for _ in rlabels]
                    for (x, y), cell in places:
                        grid[y][x] = cell
                else:
                    xs = [x for (x, _y), _c in places]
                    ys = [y for (_x, y), _c in places]
                    x0, y0 = (min(xs), min(ys)) if places else (0, 0)
                    cols = [str(x) for x in range(x0, (max(xs) if xs else 0) + 1)]
                    rlabels = [str(y) for y in range(y0, (max(ys) if ys else 0) + 1)]
                    grid = [["" for _ in cols] for _ in rlabels]
                    for (x, y), cell in places:
                        grid[y - y0][x - x0] = cell
                items.append({"kind": "board", "title": item.enum, "cols": cols,
                              "rows": rlabels, "cells": grid})
            elif isinstance(item, ast.ViewTable):
                slot = p.slots[item]
                et = T.list_of(T.ANY)
                et = p.types.get(item.iter, et)
                elem = T.strip(et).elem or T.ANY
                try:
                    v = val(item.iter, env)
                except ViewError:
                    v = ()
                rows = []
                for x in (sorted(v) if isinstance(v, frozenset) else v):
                    scope = {**env, slot: x}
                    row = [self.fmt(x, elem, me)]
                    for col in item.cols:
                        row.append(text(col.value, scope) if when(col.when, scope) else "")
                    rows.append(row)
                items.append({"kind": "table", "title": item.title,
                              "columns": [""] + [c.label for c in item.cols], "rows": rows})
            elif isinstance(item, ast.ViewShow):
                if when(item.when, env):
                    items.append({"kind": "show", "label": item.label,
                                  "text": text(item.value, env)})
        return items


# ---------------------------------------------------------------------------------- fallback


def fallback_items(viewer: Viewer, obs: dict, me: int | None) -> list[dict]:
    """A generic view from the types: per-player and per-member arrays become tables, grids
    become boards, sets and lists become lists, scalars become labelled values."""
    p = viewer.program
    n = obs["num_players"]
    vis = {v.name: v.visibility for v in p.state_vars}
    ov = obs["vars"]
    parse = viewer.game.parse_value
    items: list[dict] = []
    per_player: list[tuple[str, T.Type]] = []
    per_enum: dict[str, list[tuple[str, T.Type]]] = {}
    nested: list[tuple[str, T.Type]] = []
    grids: dict[str, list[tuple[str, T.Type]]] = {}
    shows: list[tuple[str, T.Type]] = []
    for v in p.state_vars:
        if v.name not in ov:
            continue
        t = p.state_types[v.name]
        if t.kind == "array" and t.index.kind == "player":
            if T.strip(t.elem).kind == "array":
                nested.append((v.name, t))
            else:
                per_player.append((v.name, t))
        elif t.kind == "array" and t.index.kind == "enum":
            if p.enums[t.index.name].grid is not None:
                grids.setdefault(t.index.name, []).append((v.name, t))
            elif T.strip(t.elem).kind != "array":
                per_enum.setdefault(t.index.name, []).append((v.name, t))
        elif t.kind == "set" and t.elem.kind == "enum" and p.enums[t.elem.name].grid:
            grids.setdefault(t.elem.name, []).append((v.name, t))
        else:
            shows.append((v.name, t))
    for grid, members in grids.items():
        info = p.enums[grid]
        c0, ncols, rows = info.grid
        cells = [["" for _ in range(ncols)] for _ in rows]
        marks = []
        for name, t in members:
            val = parse(ov[name], t)
            if t.kind == "set":
                mark = name[0].upper()
                marks.append(f"{mark} = {name}")
                for m in val:
                    y, x = divmod(m, ncols)
                    if not cells[y][x]:
                        cells[y][x] = mark
            else:
                for m, x_val in enumerate(val):
                    y, x = divmod(m, ncols)
                    if x_val is not None and x_val is not False and not cells[y][x]:
                        cells[y][x] = viewer.fmt(x_val, t.elem, me)
        items.append({"kind": "board", "title": grid, "cols": [str(c0 + i) for i in
                                                                 range(ncols)],
                      "rows": list(rows), "cells": cells})
        if marks:
            items.append({"kind": "show", "label": "marks", "text": "; ".join(marks)})
    if per_player:
        rows = []
        for q in range(n):
            row = [seat_name(q, me)]
            for name, t in per_player:
                j = ov[name][q]
                if j is None and vis[name] == "private":
                    row.append("?")
                else:
                    row.append(viewer.fmt(parse(j, t.elem), t.elem, me))
            rows.append(row)
        items.append({"kind": "table", "title": "players",
                      "columns": [""] + [name for name, _ in per_player], "rows": rows})
    for name, t in nested:
        inner = T.strip(t.elem)
        members = p.enums[inner.index.name].members if inner.index.kind == "enum" else [
            seat_name(i) for i in range(n)]
        rows = []
        for q in range(n):
            j = ov[name][q]
            if j is None:
                rows.append([seat_name(q, me)] + ["?" for _ in members])
                continue
            v = parse(j, inner)
            rows.append([seat_name(q, me)] + [viewer.fmt(x, inner.elem, me) for x in v])
        items.append({"kind": "table", "title": name, "columns": [""] + list(members),
                      "rows": rows})
    for enum, members in per_enum.items():
        names = p.enums[enum].members
        vals = [parse(ov[name], t) for name, t in members]
        rows = [[m] + [viewer.fmt(v[i], t.elem, me) for v, (_n, t) in zip(vals, members)]
                for i, m in enumerate(names)]
        items.append({"kind": "table", "title": enum,
                      "columns": [""] + [name for name, _ in members], "rows": rows})
    for name, t in shows:
        items.append({"kind": "show", "label": name,
                      "text": viewer.fmt(parse(ov[name], t), t, me)})
    return items
