"""What each def and each `when` test reads: the state variables (directly or through the defs
it calls) and the locals bound outside it. The interpreter's memo tables are keyed and
invalidated by these sets (see the engine's docstring); they come from the checker's name
references, so a construct that reads state the way a name does is covered without changes here.
"""

from __future__ import annotations

from rulelang import ast
from rulelang.errors import Span
from rulelang.program import Program


def nodes(x):
    """Every AST node under x (x included), through tuples of nodes and of (cond, block) pairs,
    not into the bodies of the defs it calls."""
    if isinstance(x, tuple | list):
        for y in x:
            yield from nodes(y)
    elif hasattr(x, "__dataclass_fields__") and not isinstance(x, Span):
        yield x
        for f in x.__dataclass_fields__:
            if f != "span":
                yield from nodes(getattr(x, f))


class Reads:
    """State variables and outside locals read by defs and expressions of one program."""

    def __init__(self, program: Program) -> None:
        self.p = program
        self._direct: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._defs: dict[str, frozenset[str]] = {}
        self._locals: dict[object, tuple[str, ...]] = {}
        self._costly: dict[object, bool] = {}
        self._at_def: dict[str, tuple[frozenset[str], dict[str, frozenset[int]]]] = {}

    def _scan(self, x) -> tuple[frozenset[str], frozenset[str]]:
        """(state variables named, defs called) anywhere under x."""
        state, defs = set(), set()
        for n in nodes(x):
            ref = self.p.refs.get(n)
            if ref is None:
                continue
            if ref[0] == "state":
                state.add(ref[1])
            elif ref[0] == "def":
                defs.add(ref[1])
        return frozenset(state), frozenset(defs)

    def of_def(self, name: str) -> frozenset[str]:
        """State variables a call of def `name` may read, through the defs it calls too."""
        if name not in self._defs:
            # Walk the call graph from `name` (defs may call each other in circles).
            seen, todo, out = {name}, [name], set()
            while todo:
                d = todo.pop()
                if d not in self._direct:
                    self._direct[d] = self._scan(self.p.defs[d].body)
                state, calls = self._direct[d]
                out |= state
                for c in calls - seen:
                    seen.add(c)
                    todo.append(c)
            self._defs[name] = frozenset(out)
        return self._defs[name]

    def of_expr(self, e) -> frozenset[str]:
        """State variables evaluating e may read."""
        state, calls = self._scan(e)
        out = set(state)
        for c in calls:
            out |= self.of_def(c)
        return frozenset(out)

    def at_index(self, x, slot_pos: dict) -> tuple[frozenset[str], dict[str, frozenset]]:
        """How x (an expression, or a def's body) reads state: (the variables it may read
        wholly, {variable: positions}) where a variable v listed with positions is read only as
        v[s] (maybe indexed further) for locals s in slot_pos, at the positions slot_pos gives
        them, also through the defs x calls with such locals as those arguments: the value of
        x then depends on v only through v[value of s] (and on v's length, which only a write
        of v itself changes). A local assigned anywhere in x does not count as such a slot.
        Variables read in any other way are read wholly."""
        assigned = {self.p.refs[n.target][1] for n in nodes(x)
                    if isinstance(n, ast.Assign | ast.AugAssign | ast.Add | ast.Remove
                                  | ast.Push) and self.p.refs[n.target][0] == "local"} \
            if isinstance(x, ast.Block) else ()  # (an expression assigns nothing)
        pos = {s: i for s, i in slot_pos.items() if s not in assigned}
        whole: set[str] = set()
        at: dict[str, set] = {}
        todo = [x]
        while todo:
            n = todo.pop()
            if isinstance(n, tuple | list):
                todo += n
                continue
            if not hasattr(n, "__dataclass_fields__") or isinstance(n, Span):
                continue
            ref = self.p.refs.get(n)
            if isinstance(n, ast.Index) and isinstance(n.obj, ast.Name) \
                    and self.p.refs.get(n.obj, ("",))[0] == "state" \
                    and self._slot(n.index) in pos:
                at.setdefault(self.p.refs[n.obj][1], set()).add(pos[self._slot(n.index)])
                continue
            if ref is not None and ref[0] == "state" and isinstance(n, ast.Name):
                whole.add(ref[1])
            elif ref is not None and ref[0] == "def" and isinstance(n, ast.Call):
                d_whole, d_at = self.at_def(ref[1])
                whole.update(d_whole)
                for v, js in d_at.items():
                    for j in js:
                        s = self._slot(n.args[j])
                        if s in pos:
                            at.setdefault(v, set()).add(pos[s])
                        else:
                            whole.add(v)
            todo += self.children(n)
        return frozenset(whole), {v: frozenset(js) for v, js in at.items() if v not in whole}

    def at_def(self, name: str) -> tuple[frozenset[str], dict[str, frozenset[int]]]:
        """at_index of def `name`'s body, its parameters at their positions (defs do not
        recurse: the checker's E030)."""
        if name not in self._at_def:
            d = self.p.defs[name]
            self._at_def[name] = self.at_index(
                d.body, {self.p.slots[f]: i for i, f in enumerate(d.params)})
        return self._at_def[name]

    def _slot(self, e) -> str | None:
        """The slot of e if e names a local."""
        ref = self.p.refs.get(e) if isinstance(e, ast.Name) else None
        return ref[1] if ref is not None and ref[0] == "local" else None

    def locals_of(self, e) -> tuple[str, ...]:
        """Slots of the locals e reads that are bound outside it (in slot order), i.e. what,
        besides state, e's value depends on."""
        if e not in self._locals:
            used, inner = set(), set()
            for n in nodes(e):
                ref = self.p.refs.get(n)
                if ref is not None and ref[0] == "local":
                    used.add(ref[1])
                if n in self.p.slots:
                    inner.add(self.p.slots[n])
            self._locals[e] = tuple(sorted(used - inner))
        return self._locals[e]

    def bound_in(self, e) -> frozenset[str]:
        """Slots of the locals bound inside e (comprehension and aggregate variables)."""
        return frozenset(self.p.slots[n] for n in nodes(e) if n in self.p.slots)

    @staticmethod
    def children(x) -> list:
        """The nodes directly under x (through tuples, as `nodes` goes)."""
        out: list = []
        for f in x.__dataclass_fields__:
            if f != "span":
                _direct(getattr(x, f), out)
        return out

    def reads_game(self, e) -> bool:
        """Whether evaluating e may read the position of a game: state variables or the players
        (`players`, `num_players`), directly or through the defs it calls. What does not is
        fixed by the rules file, its variant and its parameters (and e's locals)."""
        if self.of_expr(e):
            return True
        seen: set[str] = set()
        todo = [e]
        while todo:
            for n in nodes(todo.pop()):
                ref = self.p.refs.get(n)
                if ref is None:
                    continue
                if ref[0] in ("players", "num_players"):
                    return True
                if ref[0] == "def" and isinstance(n, ast.Call) and ref[1] not in seen:
                    seen.add(ref[1])
                    todo.append(self.p.defs[ref[1]].body)
        return False

    def costly(self, e) -> bool:
        """Whether e calls a def or has an aggregate, comprehension or sort."""
        out = self._costly.get(e)
        if out is None:
            out = self._costly[e] = any(
                isinstance(n, ast.Agg | ast.Comp | ast.Sort)
                or self.p.refs.get(n, ("",))[0] == "def" for n in nodes(e))
        return out


def _direct(v, out: list) -> None:
    if isinstance(v, tuple | list):
        for y in v:
            _direct(y, out)
    elif hasattr(v, "__dataclass_fields__") and not isinstance(v, Span):
        out.append(v)
