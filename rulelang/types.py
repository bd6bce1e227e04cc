"""The type language of rulelang: what the checker infers and both back ends rely on."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Type:
    kind: str  # int bool player enum set list array opt graph none any
    name: str = ""  # enum name
    elem: Type | None = None  # set/list/array element, opt inner, graph node type
    index: Type | None = None  # array index

    def __str__(self) -> str:
        k = self.kind
        if k == "enum":
            return self.name
        if k in ("set", "list"):
            return f"{k}<{self.elem}>"
        if k == "array":
            return f"{self.elem}[{self.index}]"
        if k == "opt":
            return f"{self.elem}?"
        if k == "graph":
            return f"graph<{self.elem}>"
        return k


INT = Type("int")
BOOL = Type("bool")
PLAYER = Type("player")
NONE = Type("none")
ANY = Type("any")


def enum(name: str) -> Type:
    return Type("enum", name)


def set_of(t: Type) -> Type:
    return Type("set", elem=t)


def list_of(t: Type) -> Type:
    return Type("list", elem=t)


def array_of(elem: Type, index: Type) -> Type:
    return Type("array", elem=elem, index=index)


def graph_of(node: Type) -> Type:
    return Type("graph", elem=node)


def has_graph(t: Type) -> bool:
    """Whether a value of type t is or holds a graph."""
    return t.kind == "graph" or any(has_graph(x) for x in (t.elem, t.index) if x is not None
                                    and t.kind != "graph")


def opt(t: Type) -> Type:
    if t.kind in ("opt", "none", "any"):
        return t
    return Type("opt", elem=t)


def strip(t: Type) -> Type:
    """The type without its optional marker."""
    return t.elem if t.kind == "opt" else t


def none_levels(have: Type, want: Type) -> tuple[bool, ...] | None:
    """For a list or array of type `have` kept where `want` is expected: per level of nesting,
    whether `want` forbids a none among the elements there, when `have` may hold one at such a
    level (else None: there is nothing to check). `x: int = e` checks e's value; `xs:
    int[Colour] = [c => path_cost(...) for c in Colour]` must check every element the same way."""
    levels: list[bool] = []
    found = False
    have, want = strip(have), strip(want)
    while want.kind in ("list", "array") and have.kind in ("list", "array"):
        must = want.elem.kind not in ("opt", "none", "any")
        levels.append(must)
        found = found or (must and have.elem.kind in ("opt", "none"))
        have, want = strip(have.elem), strip(want.elem)
    return tuple(levels) if found else None


def is_discrete(t: Type) -> bool:
    """Finite, ordered domains: usable as array indexes, set elements and action parameters."""
    return t.kind in ("player", "enum", "bool")


def compatible(want: Type, got: Type) -> bool:
    """Whether a value of type `got` may be used where `want` is expected.

    Optional values are accepted where their inner type is wanted; using `none` there is a
    run-time fault reported with the .rules location.
    """
    if want == got or want.kind == "any" or got.kind == "any":
        return True
    if got.kind == "none":
        return want.kind == "opt"
    if want.kind == "opt":
        return compatible(want.elem, strip(got))
    if got.kind == "opt":
        return compatible(want, got.elem)
    if want.kind == got.kind and want.kind in ("set", "list"):
        return compatible(want.elem, got.elem)
    if want.kind == got.kind == "array":
        return compatible(want.elem, got.elem) and want.index == got.index
    return False


def join(a: Type, b: Type) -> Type | None:
    """The common type of two branches (None if they have none)."""
    if a == b:
        return a
    if a.kind == "any":
        return b
    if b.kind == "any":
        return a
    if a.kind == "none":
        return opt(b)
    if b.kind == "none":
        return opt(a)
    if a.kind == "opt" or b.kind == "opt":
        inner = join(strip(a), strip(b))
        return opt(inner) if inner else None
    if a.kind == b.kind and a.kind in ("set", "list"):
        inner = join(a.elem, b.elem)
        return Type(a.kind, elem=inner) if inner else None
    return None
