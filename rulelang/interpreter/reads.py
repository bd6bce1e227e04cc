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
