"""View models: a file's `view` (or a generic one) evaluated from a player's observation.

A view reads only what `State.observation(p)` returns (visible state variables, with other
players' private entries as `null`), so it cannot show hidden state; the checker
(rulelang/view.py) makes sure a view asks for nothing else. Files without a view get a generic
one built from the types of the state variables (`fallback_items`).

A view model is plain JSON data, rendered by the terminal, Textual and browser front ends:

    {"game", "seat", "num_players", "phase", "current_player",
     "items": [{"kind": "board", "title", "cols", "rows", "cells"},
               {"kind": "table", "title", "columns", "rows"},
               {"kind": "show", "label", "text"}]}
"""

from __future__ import annotations

from typing import Any

from rulelang import ast
from rulelang import types as T


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
        if k == "enum":  # a member as people see it: its display name
            return self.program.enums[t.name].display[v]
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

        st = State(self.game, obs["num_players"])  # a position holding only the variables
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
        members = p.enums[inner.index.name].display if inner.index.kind == "enum" else [
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
        names = p.enums[enum].display
        vals = [parse(ov[name], t) for name, t in members]
        rows = [[m] + [viewer.fmt(v[i], t.elem, me) for v, (_n, t) in zip(vals, members)]
                for i, m in enumerate(names)]
        items.append({"kind": "table", "title": enum,
                      "columns": [""] + [name for name, _ in members], "rows": rows})
    for name, t in shows:
        items.append({"kind": "show", "label": name,
                      "text": viewer.fmt(parse(ov[name], t), t, me)})
    return items
