"""Fixed integer spaces for reinforcement learning, derived from a checked rules file.

Every action (and every chance outcome) of a rules file gets a stable integer, the same for
every game played with that (file, variant, params): the action names in the order their first
option appears in the file, and within a name the product of its parameters' domains, the last
parameter varying fastest. A parameter's domain is its type's (enum members in declaration
order, players 0..max_players-1, false then true) or, for an int, the values of its constant
`in LO..HI step S` range (the union over options sharing the name, and over the values of the
earlier parameters it names). A domain that names a state variable (`v: int in bag`) has no
fixed numbering: such chance outcomes are drawn inside the PettingZoo and Gymnasium
environments, which never number them, and OpenSpiel refuses the file. See docs/rl.md.

The observation vector lays out, in order: the observing seat (one-hot), the player to move
(one-hot over seats, then chance and the end), the phase (one-hot over the phases, then none),
then every state variable a player may see, in declaration order, encoded by type.

This module needs no third-party package; the adapters (PettingZoo, Gymnasium, OpenSpiel) live
in the submodules and need the `rl` extra.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from rulelang import ast
from rulelang import types as T
from rulelang.view import _nodes


@dataclass(frozen=True)
class Param:
    name: str
    type: T.Type
    values: tuple[str, ...]  # canonical argument strings, in index order


@dataclass(frozen=True)
class ActionKind:
    name: str
    params: tuple[Param, ...]
    offset: int
    size: int


class Space:
    """A fixed numbering of canonical action strings (decisions or chance outcomes)."""

    def __init__(self, kinds: list[ActionKind]) -> None:
        self.kinds = kinds
        self.by_name = {k.name: k for k in kinds}
        self.n = sum(k.size for k in kinds)
        self._pos = {k.name: [{v: i for i, v in enumerate(p.values)} for p in k.params]
                     for k in kinds}
        self._memo: dict[str, int] = {}  # action strings seen so far (drivers repeat them)

    def __len__(self) -> int:
        return self.n

    def index(self, action: str) -> int:
        """The integer of a canonical action string ('dispose(2, 4)' -> 4711)."""
        k = self._memo.get(action)
        if k is None:
            k = self._memo[action] = self._index(action)
        return k

    def indices(self, actions: list[str]) -> list[int]:
        """The integers of a list of action strings (a mask's: one dict lookup each once seen)."""
        memo = self._memo
        try:
            return [memo[a] for a in actions]
        except KeyError:
            return [self.index(a) for a in actions]

    def _index(self, action: str) -> int:
        name, _, rest = action.partition("(")
        kind = self.by_name.get(name)
        if kind is None:
            raise KeyError(f"{action!r} is not in the action space")
        args = rest[:-1].split(", ") if rest[:-1] else []
        if len(args) != len(kind.params):
            raise KeyError(f"{action!r} has {len(args)} arguments, not {len(kind.params)}")
        k = 0
        for arg, p, pos in zip(args, kind.params, self._pos[name]):
            i = pos.get(arg)
            if i is None:
                raise KeyError(f"{action!r}: {arg!r} is outside the domain of {p.name}")
            k = k * len(p.values) + i
        return kind.offset + k

    def action(self, index: int) -> str:
        """The canonical action string of an integer (inverse of `index`)."""
        if not 0 <= index < self.n:
            raise IndexError(f"action index {index} outside 0..{self.n - 1}")
        for kind in self.kinds:
            if index < kind.offset + kind.size:
                k = index - kind.offset
                args = []
                for p in reversed(kind.params):
                    k, i = divmod(k, len(p.values))
                    args.append(p.values[i])
                return f"{kind.name}({', '.join(reversed(args))})"
        raise AssertionError(index)

    def describe(self) -> list[dict[str, Any]]:
        """The layout as data: per action name, its offset, size and parameter domains."""
        return [{"action": k.name, "offset": k.offset, "size": k.size,
                 "params": [{"name": p.name, "type": str(p.type), "values": list(p.values)}
                            for p in k.params]} for k in self.kinds]


class NotNumbered(ValueError):
    """A parameter domain that has no fixed numbering: where it is (`span`) and why (`reason`)."""

    def __init__(self, span, reason: str) -> None:
        super().__init__(f"{span}: {reason}")
        self.span = span
        self.reason = reason


# The most combinations of earlier parameters' values an int domain that names them is
# worked out over (its values are the union over them).
MAX_DOMAIN_COMBINATIONS = 100_000


def _type_values(program, t: T.Type, max_players: int) -> list:
    """The values of an enum, player or bool parameter, in numbering order (as the engine holds
    them: enum members and seats by index)."""
    if t.kind == "enum":
        return list(range(len(program.enums[t.name].members)))
    if t.kind == "player":
        return list(range(max_players))
    if t.kind == "bool":
        return [False, True]
    raise ValueError(f"cannot number values of type {t}")


def _int_values(game, domain, slots: list[str], earlier: list[list]) -> list[int]:
    """The values an int parameter's `in` range can take: a constant range's, or the union
    of the ranges over every combination of the earlier parameters it names
    (`m: int in n..5`)."""
    refs = game.program.refs
    names = sorted(((n.span.line, n.span.col, n.name, refs[n]) for n in _nodes(domain)
                    if isinstance(n, ast.Name) and n in refs), key=lambda x: x[:3])
    for _line, _col, name, ref in names:
        # the values a state variable holds change as the game goes (a bag of tiles drawn
        # from and refilled): no numbering fixed before the game can be sure to cover them
        if ref[0] == "state":
            raise NotNumbered(domain.span, "an int domain must be constant, or depend only on "
                              "earlier parameters, to be numbered; it names state variable "
                              f"'{name}', whose values change during the game")
        if ref[0] == "local" and ref[1] not in slots:  # a loop variable, the deciding player...
            raise NotNumbered(domain.span, "an int domain must be constant, or depend only on "
                              f"earlier parameters, to be numbered; it names '{name}'")
    locals_ = {ref[1] for _line, _col, _name, ref in names if ref[0] == "local"}
    used = [i for i, slot in enumerate(slots) if slot in locals_]
    combos = 1
    for i in used:
        combos *= max(len(earlier[i]), 1)
    if combos > MAX_DOMAIN_COMBINATIONS:
        raise NotNumbered(domain.span, "an int domain that depends on earlier parameters is "
                          f"numbered over their combinations: {combos} is over "
                          f"{MAX_DOMAIN_COMBINATIONS}")
    values: set[int] = set()
    try:
        for combo in itertools.product(*(earlier[i] for i in used)):
            values.update(game.eval_const(domain, {slots[i]: v for i, v in zip(used, combo)}))
    except Exception as exc:  # noqa: BLE001 - any fault means "not a constant range"
        raise NotNumbered(domain.span, "an int domain must be constant, or depend only on "
                          f"earlier parameters, to be numbered ({exc})") from None
    return sorted(values)


def _param_values(game, program, params, max_players: int) -> list[list[str]]:
    """Per parameter of one option, its values as numbered, written as in action strings."""
    slots: list[str] = []
    earlier: list[list] = []
    out = []
    for _pn, pt, dom, slot in params:
        t = T.strip(pt)
        if t.kind == "int":
            raw = _int_values(game, dom, slots, earlier)
            out.append([str(v) for v in raw])
        else:
            raw = _type_values(program, t, max_players)
            if t.kind == "enum":
                out.append(list(program.enums[t.name].members))
            elif t.kind == "bool":
                out.append(["false", "true"])
            else:
                out.append([str(v) for v in raw])
        slots.append(slot)
        earlier.append(raw)
    return out


def _build(program, nodes: list[tuple[str, list[tuple[str, T.Type, Any, str]]]]) -> Space:
    from rulelang.consts import Constants

    game = Constants(program)
    merged: dict[str, list[tuple[str, T.Type, list[str]]]] = {}
    for name, params in nodes:
        vals = [(pn, pt, vs) for (pn, pt, _dom, _slot), vs
                in zip(params, _param_values(game, program, params, program.max_players))]
        if name not in merged:
            merged[name] = vals
            continue
        for i, (_pn, pt, vs) in enumerate(vals):
            old = merged[name][i]
            if T.strip(pt).kind == "int":
                union = sorted({int(v) for v in old[2]} | {int(v) for v in vs})
                merged[name][i] = (old[0], old[1], [str(v) for v in union])
    kinds, offset = [], 0
    for name, params in merged.items():
        size = 1
        for _pn, _pt, vs in params:
            size *= len(vs)
        kinds.append(ActionKind(name, tuple(Param(pn, T.strip(pt), tuple(vs))
                                            for pn, pt, vs in params), offset, size))
        offset += size
    return Space(kinds)


def _in_file_order(program, cls):
    roots = [r for r in [program.flow, *program.phases.values()] if r is not None]
    found = [n for r in roots for n in _nodes(r.body) if isinstance(n, cls)]
    return sorted(found, key=lambda n: (n.span.line, n.span.col))


def action_space(program) -> Space:
    """The decision actions of a checked program, numbered."""
    nodes = []
    # every decision's options, then the standing options (offered at any decision)
    options = [opt for ch in _in_file_order(program, ast.Choose) for opt in ch.options]
    options += [opt for sd in program.standing for opt in sd.options]
    for opt in options:
        params = []
        for prm in opt.params:
            slot = program.slots[prm]
            params.append((prm.name, program.slot_types[slot], prm.domain, slot))
        nodes.append((opt.name, params))
    return _build(program, nodes)


def chance_space(program) -> Space:
    """The chance outcomes of a checked program, numbered (OpenSpiel's chance actions).
    Raises NotNumbered for an outcome domain that names a state variable (`int in bag`)."""
    nodes = []
    for c in _in_file_order(program, ast.Chance):
        slot = program.slots[c]
        nodes.append((c.name, [(c.var, program.slot_types[slot], c.domain, slot)]))
    return _build(program, nodes)


# ---------------------------------------------------------------------------------- observations


@dataclass(frozen=True)
class Field:
    name: str
    offset: int
    size: int


class ObservationEncoder:
    """Flattens an observation (JSON, as `State.observation(p)` returns it) into integers."""

    def __init__(self, program, num_players: int) -> None:
        self.program = program
        self.n = num_players
        self.phases = sorted(program.phases)
        self.vars = [(v.name, program.state_types[v.name]) for v in program.state_vars
                     if v.visibility != "hidden"]
        self._sizes: dict[T.Type, int] = {}
        fields, off = [], 0
        for name, size in ([("seat", num_players), ("to_move", num_players + 2),
                            ("phase", len(self.phases) + 1)]
                           + [(name, self._size(t)) for name, t in self.vars]):
            fields.append(Field(name, off, size))
            off += size
        self.fields = fields
        self.size = off
        self._seats = range(num_players)
        self._phase_at = 2 * num_players + 2
        self._phase_pos = {ph: i for i, ph in enumerate(self.phases)}
        at = {f.name: f.offset for f in fields}
        self._fills = [(name, self._filler(t), at[name]) for name, t in self.vars]

    def _domain(self, t: T.Type) -> list:
        if t.kind == "enum":
            return list(self.program.enums[t.name].members)
        if t.kind == "player":
            return list(range(self.n))
        if t.kind == "bool":
            return [False, True]
        raise AssertionError(t)

    def _size(self, t: T.Type) -> int:
        n = self._sizes.get(t)
        if n is None:
            n = self._sizes[t] = self._size_of(t)
        return n

    def _size_of(self, t: T.Type) -> int:
        k = t.kind
        if k == "opt":
            return 1 + self._size(t.elem)
        if k in ("int", "bool"):
            return 1
        if k in ("enum", "player"):
            return len(self._domain(t))
        if k == "set":
            return len(self._domain(t.elem))
        if k == "list":
            e = T.strip(t.elem)
            return len(self._domain(e)) if T.is_discrete(e) else 2
        if k == "array":
            return len(self._domain(t.index)) * self._size(t.elem)
        raise ValueError(f"cannot encode a value of type {t}")

    def _filler(self, t: T.Type):
        """A function fill(j, out, off) writing the encoding of the JSON value j of type t into
        out[off:off + size], which holds zeros: made once per type, so that encoding a state
        walks its values and writes only the entries that are not zero (the observation of a
        board of 108 tiles writes its placed tiles, not 108 entries)."""
        k = t.kind
        if k == "opt":
            inner = self._filler(t.elem)

            def fill_opt(j, out, off):
                if j is None:
                    out[off] = 1
                else:
                    inner(j, out, off + 1)
            return fill_opt
        if k == "int":
            def fill_int(j, out, off):
                if j is not None:  # (None: another player's private entry, all zeros)
                    out[off] = int(j)
            return fill_int
        if k == "bool":
            def fill_bool(j, out, off):
                if j:
                    out[off] = 1
            return fill_bool
        if k in ("enum", "player", "set", "list"):
            e = t if k in ("enum", "player") else T.strip(t.elem)
            if k == "list" and not T.is_discrete(e):
                def fill_numbers(j, out, off):
                    if j is not None:
                        out[off] = len(j)
                        out[off + 1] = sum(int(y) for y in j if y is not None)
                return fill_numbers
            # a value's position in its domain (bools and ints compare equal to their values,
            # as == does: True finds 1)
            pos = {x: i for i, x in enumerate(self._domain(e))}
            if k in ("enum", "player"):
                def fill_one(j, out, off):
                    i = pos.get(j)
                    if i is not None:
                        out[off + i] = 1
                return fill_one
            if k == "set":
                def fill_set(j, out, off):
                    if j is not None:
                        for x in j:
                            i = pos.get(x)
                            if i is not None:
                                out[off + i] = 1
                return fill_set

            def fill_counts(j, out, off):  # a list of discrete values: how often each occurs
                if j is not None:
                    for y in j:
                        i = pos.get(y)
                        if i is not None:
                            out[off + i] += 1
            return fill_counts
        if k == "array":
            elem = self._filler(t.elem)
            step = self._size(t.elem)
            e = t.elem
            # the items in domain order; ints and optional members (a board's owner per cell)
            # are written in the loop itself, other items by their type's fill function
            if e.kind == "int":
                def items(vals, out, off):
                    for v in vals:
                        if v is not None:
                            out[off] = int(v)
                        off += 1
            elif e.kind == "opt" and e.elem.kind in ("enum", "player"):
                at = {x: i + 1 for i, x in enumerate(self._domain(e.elem))}

                def items(vals, out, off):
                    for v in vals:
                        if v is None:
                            out[off] = 1
                        else:
                            i = at.get(v)
                            if i is not None:
                                out[off + i] = 1
                        off += step
            else:
                def items(vals, out, off):
                    for v in vals:
                        elem(v, out, off)
                        off += step
            if t.index.kind == "enum":
                names = self._domain(t.index)

                def fill_by_name(j, out, off):
                    if j is not None:
                        items([j[m] for m in names], out, off)
                return fill_by_name

            def fill_items(j, out, off):
                if j is not None:
                    items(j, out, off)
            return fill_items
        raise ValueError(f"cannot encode a value of type {t}")

    def encode(self, obs: dict) -> list[int]:
        """The flat vector of an observation (State.observation(p)'s JSON)."""
        out = [0] * self.size
        n = self.n
        seat = obs["player"]
        if seat in self._seats:
            out[seat] = 1
        cur = obs["current_player"]
        slot = cur if cur >= 0 else n + (0 if cur == -1 else 1)
        if 0 <= slot < n + 2:
            out[n + slot] = 1
        ph = obs.get("phase")
        out[self._phase_at + self._phase_pos.get(ph, len(self.phases))] = 1
        ov = obs["vars"]
        for name, fill, off in self._fills:
            fill(ov[name], out, off)
        return out

    def describe(self) -> list[dict[str, Any]]:
        types = dict(self.vars)
        return [{"field": f.name, "offset": f.offset, "size": f.size,
                 "type": str(types[f.name]) if f.name in types else "header"}
                for f in self.fields]


def returns(state) -> list[float]:
    """Terminal rewards used by every adapter: +1 for each winner (shared wins too), -1 for
    everyone else; 0 for all until the game is over."""
    if not state.is_terminal():
        return [0.0] * state.num_players
    winners = set(state.winners())
    return [1.0 if p in winners else -1.0 for p in range(state.num_players)]


class LegalCache:
    """The legal actions of one position, listed once: an adapter observes, masks and steps
    the same position, and a decision of Poder offers a thousand bids. The list is kept with
    the state object and its history length (every action and chance outcome adds to the
    history), so a state changed in any way lists them again."""

    __slots__ = ("_state", "_length", "_legal")

    def __init__(self) -> None:
        self._state = None
        self._length = -1
        self._legal: list[str] = []

    def put(self, state, legal: list[str]) -> list[str]:
        self._state, self._length, self._legal = state, len(state.history), legal
        return legal

    def get(self, state) -> list[str]:
        if self._state is state and self._length == len(state.history):
            return self._legal
        return self.put(state, state.legal_actions())


class Table:
    """A rules file loaded for learning: engine, program, action space and encoder."""

    def __init__(self, path: str, num_players: int, variant: str | None = None,
                 params: dict | None = None, backend: str = "compiled") -> None:
        import rulelang

        self.path = str(path)
        self.program = rulelang.check_file(path, variant=variant, params=params)
        if backend == "compiled":
            from rulelang.codegen import load_compiled

            self.game = load_compiled(self.program)
        else:
            from rulelang.interpreter import Game

            self.game = Game(self.program)
        if not self.game.min_players <= num_players <= self.game.max_players:
            raise ValueError(f"{self.game.name} takes {self.game.min_players}-"
                             f"{self.game.max_players} players, not {num_players}")
        self.num_players = num_players
        self.actions = action_space(self.program)
        self.encoder = ObservationEncoder(self.program, num_players)

    @cached_property
    def chance(self) -> Space:
        """The chance outcomes, numbered when first asked for: only OpenSpiel needs them
        (PettingZoo and Gymnasium draw chance inside the environment), and a file whose
        outcomes have no fixed numbering (NotNumbered) must still load for those two."""
        return chance_space(self.program)

    def legal_indices(self, state) -> list[int]:
        return self.actions.indices(state.legal_actions())
