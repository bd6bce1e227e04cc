"""The checked program: the AST plus the side tables (types, name references, local slots) that
the checker fills in and every later stage reads."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from rulelang import ast
from rulelang import types as T
from rulelang.errors import Span
from rulelang.runtime import Limits

# Statements that pause the flow or leave it (the lowering turns them into instructions).
PAUSES = (ast.Choose, ast.Chance, ast.Run, ast.Finish)


@dataclass
class EnumInfo:
    name: str
    members: list[str]
    fields: list[tuple[str, T.Type]]
    member_args: list[tuple[ast.Expr, ...]]
    span: Span
    grid: tuple[int, int, list[str]] | None = None  # (first col, number of cols, row labels)
    # What people see for each member: its display name (`Lodz "Łódź"`), else its name
    display: list[str] = field(default_factory=list)


@dataclass
class Program:
    """A checked .rules file: the AST plus the side tables both back ends read."""

    filename: str
    source: str
    module: ast.Module
    name: str = ""
    min_players: int = 1
    max_players: int = 1
    variant: str | None = None
    variants: dict[str, ast.VariantDecl] = field(default_factory=dict)
    params: dict[str, ast.ParamDecl] = field(default_factory=dict)
    param_types: dict[str, T.Type] = field(default_factory=dict)
    param_exprs: dict[str, ast.Expr] = field(default_factory=dict)  # effective (variant applied)
    param_values: dict[str, object] = field(default_factory=dict)  # -D overrides, typed values
    enums: dict[str, EnumInfo] = field(default_factory=dict)
    graphs: dict[str, ast.GraphDecl] = field(default_factory=dict)
    consts: dict[str, ast.ConstDecl] = field(default_factory=dict)
    tables: dict[str, ast.TableDecl] = field(default_factory=dict)
    defs: dict[str, ast.DefDecl] = field(default_factory=dict)
    phases: dict[str, ast.PhaseDecl] = field(default_factory=dict)
    state_vars: list[ast.StateVar] = field(default_factory=list)
    state_types: dict[str, T.Type] = field(default_factory=dict)
    flow: ast.FlowDecl | None = None
    standing: list[ast.StandingDecl] = field(default_factory=list)  # in declaration order
    score: ast.ScoreDecl | None = None
    tiebreak: ast.ScoreDecl | None = None
    heuristic: ast.ScoreDecl | None = None  # `heuristic p => ...` (bots), or None
    metrics: dict[str, ast.MetricDecl] = field(default_factory=dict)
    param_ranges: dict[str, tuple[int, int]] = field(default_factory=dict)  # `param n: int in a..b`
    types: dict[object, T.Type] = field(default_factory=dict)
    refs: dict[object, tuple] = field(default_factory=dict)
    slots: dict[object, str] = field(default_factory=dict)
    slot_names: dict[str, str] = field(default_factory=dict)
    slot_types: dict[str, T.Type] = field(default_factory=dict)
    action_sigs: dict[str, tuple[T.Type, ...]] = field(default_factory=dict)
    end_actions: frozenset[str] = frozenset()

    field_types: dict[object, T.Type] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)  # run-time guards (load(..., limits=...))
    def_ret: dict[str, T.Type] = field(default_factory=dict)
    view: ast.ViewDecl | None = None  # the `view` section, checked by rulelang/view.py
    # Files pulled in by `include` (rulelang/include.py): (shown name, bytes) and their text
    included: tuple[tuple[str, bytes], ...] = ()
    included_texts: dict[str, str] = field(default_factory=dict)
    # Array literals: their values in member order (the order both back ends evaluate them)
    array_values: dict[object, tuple] = field(default_factory=dict)

    def field_type(self, f: ast.Field) -> T.Type:
        return self.field_types[f]

    def local_keys(self, scope) -> tuple[str, ...]:
        """The keys of the locals in scope at a pause in the state's JSON: each one's name, or,
        where two of them share a name (a phase's local and its caller's), each of those its
        slot ('x' for the flow's, 'inner.x' for phase inner's), so that neither hides the
        other. Both back ends key their JSON by this."""
        names = [self.slot_names[s] for s in scope]
        return tuple(n if names.count(n) == 1 else s for n, s in zip(names, scope))

    @property
    def digest(self) -> str:
        """sha256 of the rules text; with includes, of the text and every included file's
        path (relative to the rules file's folder) and bytes, each length-prefixed, so an
        edit to included data changes it."""
        if not self.included:
            return hashlib.sha256(self.source.encode("utf-8")).hexdigest()
        h = hashlib.sha256()
        for name, data in [("", self.source.encode("utf-8")), *self.included]:
            n = name.encode("utf-8", "surrogateescape")
            h.update(b"%d:%s\x00%d:" % (len(n), n, len(data)))
            h.update(data)
        return h.hexdigest()
