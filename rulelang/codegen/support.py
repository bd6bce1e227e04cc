"""Printing support for the code generator: validated names, output sinks, contexts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from rulelang.errors import Span

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
NOT_CONST = object()


class Code(str):
    """Python source of an expression, with what the printer knew when it wrote it: `simple`
    (a name or a literal: evaluating it later or twice changes nothing) and `const` (the value
    it denotes, or NOT_CONST). Code built by formatting is a plain str: neither."""

    simple: bool
    const: object

    def __new__(cls, text: str, simple: bool = False, const: object = NOT_CONST) -> Code:
        obj = super().__new__(cls, text)
        obj.simple = simple
        obj.const = const
        return obj


def is_simple(code: str) -> bool:
    return getattr(code, "simple", False)


def const_of(code: str) -> object:
    """The value a piece of code is known to denote, or NOT_CONST."""
    return getattr(code, "const", NOT_CONST)


def is_true(code: str) -> bool:
    return const_of(code) is True


def is_false(code: str) -> bool:
    return const_of(code) is False


class EmitError(Exception):
    """A node the emitter does not know: a compiler bug, never a user error."""


def ident(name: str) -> str:
    """A name from the rules file, validated before it is spliced into generated code."""
    if not _IDENT.match(name) or not name.isascii():
        raise EmitError(f"not a valid identifier: {name!r}")
    return name


def slot_name(slot: str) -> str:
    """The name a local slot (`owner.name`, `owner.name#2`, or `name` in the flow) has in
    generated code: `owner__name`, `owner__name_2`, `name`."""
    owner, _, rest = slot.rpartition(".")
    name, _, num = rest.partition("#")
    base = f"{ident(owner)}__{ident(name)}" if owner else ident(name)
    return f"{base}_{int(num)}" if num else base


def slot_attr(slot: str) -> str:
    """The state attribute of a flow local (kept on the state across pauses). The lowering's
    shadow slots of re-entered phases (`slot@2`, `slot@in`) get `d2_...` and `a_...`."""
    base, _, tag = slot.partition("@")
    if tag:
        return (f"d{int(tag)}_" if tag.isdigit() else "a_") + slot_name(base)
    return "l_" + slot_name(slot)


def loc(span: Span) -> str:
    return f"{span.file}:{span.line}:{span.col}"


# An enum of at most this many members has set masks below 256: SMALL_BITS lists their members
# and 1 << x is a small int Python keeps. Wider ones get a table of one-bit masks (BIT_<enum>),
# and their sets and walks the passes that pay only beyond a table lookup.
SMALL_ENUM = 8

AGG_LOOP_DEPTH = 12


class _Fn:
    """One generated function: hands out its temporary names."""

    def __init__(self) -> None:
        self.n = 0
        # Python loop blocks around the code being printed (Python allows 20): aggregates
        # nested deeper than AGG_LOOP_DEPTH are printed as expressions, which nest none
        self.loops = 0

    def tmp(self) -> Code:
        self.n += 1
        return Code(f"_t{self.n}", simple=True)


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

    def tmp(self) -> Code:
        return self.fn.tmp()

    def bind(self, code: str) -> Code:
        """A new temporary set to code's value here: its name."""
        t = self.tmp()
        self.emit(f"{t} = {code}")
        return t

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
    # parameters of a def expanded here, bound to plain names: the loop level of those names
    # (only path_cost's distances are fetched early through them: ExprPrinter._path_row)
    def_level: dict[str, int] = field(default_factory=dict)
    # inside an aggregate's loop (AggregatePrinter._loop): what reads nothing bound below the
    # current level is computed once at it, before the aggregate, instead of once per member
    agg: bool = False
    # inside the branch computing a kept def's missing value: nothing is taken out of it for
    # an aggregate's sake (it would then be computed on every hit too)
    barrier: bool = False
    # a statement in a `for` body or in a run of flow statements (StmtPrinter.emit_For,
    # FlowPrinter._render): (the sink before them, what was read into it, the keys that none of
    # them changes, reads per key over all of them or None for a loop) — reads of those keys are
    # made once, there, instead of once per statement (and per member)
    outer: tuple | None = None

    def at(self, level: int) -> _Hoist:
        return _Hoist(self.levels, self.param_level, level, self.shared, self.uses, self.stmt,
                      self.def_level, outer=self.outer)

    def level0(self, key) -> tuple[Sink, bool]:
        """Where a read kept under `key` for the whole statement goes: (sink, lifted out of
        the enclosing loop)."""
        if self.outer is not None and key in self.outer[2]:
            return self.outer[0], True
        return self.levels[0], False

    def in_aggregate(self) -> _Hoist:
        return replace(self, agg=True)

    def in_kept_branch(self) -> _Hoist:
        return replace(self, agg=False, barrier=True)


@dataclass
class Ctx:
    """Where locals live (flow locals on the state, def and loop locals in Python) and where
    statements computing sub-expressions go (sink None: a pure Python expression is needed)."""

    py: dict[str, str] = field(default_factory=dict)  # slot -> Python code reading it
    sink: Sink | None = None
    hoist: _Hoist | None = None

    def with_local(self, slot: str) -> tuple[Ctx, str]:
        name = Code("v_" + slot_name(slot), simple=True)
        return Ctx({**self.py, slot: name}, self.sink, self.hoist), name

    def at(self, sink: Sink | None) -> Ctx:
        return Ctx(self.py, sink, self.hoist)

    def pure(self) -> Ctx:
        return Ctx(self.py, None, self.hoist)



def strip_parens(code: str) -> str:
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

