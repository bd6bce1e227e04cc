"""AST of a .rules file: small frozen nodes, each with its source span, no logic."""

from __future__ import annotations

from dataclasses import dataclass

from rulelang.errors import Span

# eq=False: nodes compare and hash by identity, so the checker can key side tables on them.
node = dataclass(frozen=True, slots=True, eq=False)


# ---- types -------------------------------------------------------------------------------------
@node
class TName:
    span: Span
    name: str


@node
class TSet:
    span: Span
    elem: TypeExpr


@node
class TList:
    span: Span
    elem: TypeExpr


@node
class TArray:
    span: Span
    elem: TypeExpr
    index: TypeExpr


@node
class TOpt:
    span: Span
    inner: TypeExpr


@node
class TGraph:
    """`graph<E>`: a weighted graph over the members of enum (or grid) E."""

    span: Span
    node: TypeExpr


TypeExpr = TName | TSet | TList | TArray | TOpt | TGraph


# ---- expressions -------------------------------------------------------------------------------
@node
class IntLit:
    span: Span
    value: int


@node
class BoolLit:
    span: Span
    value: bool


@node
class NoneLit:
    span: Span


@node
class Name:
    span: Span
    name: str


@node
class CondExpr:
    span: Span
    cond: Expr
    then: Expr
    orelse: Expr


@node
class BinOp:
    """Arithmetic, comparison, membership and boolean operators (op is the source spelling)."""

    span: Span
    op: str
    left: Expr
    right: Expr


@node
class Not:
    span: Span
    operand: Expr


@node
class Neg:
    span: Span
    operand: Expr


@node
class Range:
    span: Span
    lo: Expr
    hi: Expr
    step: Expr | None


@node
class Index:
    span: Span
    obj: Expr
    index: Expr


@node
class Attr:
    span: Span
    obj: Expr
    name: str
    name_span: Span | None = None  # the field name after the dot


@node
class Call:
    span: Span
    name: str
    args: tuple[Expr, ...]


@node
class Agg:
    """`func(elem for var in iter if cond)`: sum, min, max, any, all, count, first."""

    span: Span
    func: str
    elem: Expr
    var: str
    iter: Expr
    cond: Expr | None
    var_span: Span | None = None  # the loop variable


@node
class SortKey:
    span: Span
    key: Expr
    descending: bool


@node
class Sort:
    span: Span
    var: str
    iter: Expr
    keys: tuple[SortKey, ...]
    var_span: Span | None = None  # the loop variable


@node
class ListLit:
    span: Span
    items: tuple[Expr, ...]


@node
class SetLit:
    span: Span
    items: tuple[Expr, ...]


@node
class Comp:
    """`[elem for var in iter if cond]` (kind "list"), `{...}` (kind "set"), or the array
    constructor `[key => elem for var in iter]` (kind "array"; key is the name written before
    `=>`, which must be var, and iter a whole index type)."""

    span: Span
    kind: str
    elem: Expr
    var: str
    iter: Expr
    cond: Expr | None
    key: str = ""
    key_span: Span | None = None
    var_span: Span | None = None  # the loop variable


@node
class ArrayLit:
    """`[Coal => 24, Oil => 18, ...]`: an enum-indexed array naming every member once. The
    checker puts the values in member order (Program.array_values): both back ends evaluate
    them in that order."""

    span: Span
    keys: tuple[Expr, ...]
    values: tuple[Expr, ...]


Expr = (
    IntLit | BoolLit | NoneLit | Name | CondExpr | BinOp | Not | Neg | Range | Index | Attr
    | Call | Agg | Sort | ListLit | SetLit | Comp | ArrayLit
)


# ---- statements --------------------------------------------------------------------------------
@node
class Block:
    span: Span
    stmts: tuple[Stmt, ...]


@node
class LValue:
    span: Span
    name: str
    indices: tuple[Expr, ...]


@node
class Let:
    span: Span
    name: str
    type: TypeExpr | None
    value: Expr
    name_span: Span | None = None  # the name after `let`


@node
class Assign:
    span: Span
    target: LValue
    value: Expr


@node
class AugAssign:
    span: Span
    target: LValue
    op: str
    value: Expr


@node
class Add:
    span: Span
    value: Expr
    target: LValue


@node
class Remove:
    span: Span
    value: Expr
    target: LValue


@node
class Push:
    span: Span
    value: Expr
    target: LValue


@node
class If:
    span: Span
    branches: tuple[tuple[Expr, Block], ...]
    orelse: Block | None


@node
class For:
    span: Span
    var: str
    iter: Expr
    body: Block
    var_span: Span | None = None  # the loop variable


@node
class While:
    span: Span
    cond: Expr
    body: Block


@node
class Return:
    span: Span
    value: Expr


@node
class Run:
    span: Span
    name: str
    args: tuple[Expr, ...]


@node
class OParam:
    span: Span
    name: str
    type: TypeExpr
    domain: Expr | None


@node
class Option:
    span: Span
    annotation: str | None
    name: str
    params: tuple[OParam, ...]
    when: Expr | None
    body: Block
    annotation_span: Span | None = None  # the `@name` marker, when there is one


@node
class Choose:
    span: Span
    player: Expr
    secret: bool
    options: tuple[Option, ...]
    orelse: Block | None  # `else { ... }`: runs when no option is legal (no pause)


@node
class Chance:
    span: Span
    name: str
    var: str
    type: TypeExpr
    domain: Expr
    weight: Expr | None
    seen_by: Expr | None
    var_span: Span | None = None  # the outcome's variable


@node
class Finish:
    span: Span


@node
class Break:
    span: Span


@node
class Reveal:
    """`reveal a, b`: the secret choices of actions a, b made so far become public history."""

    span: Span
    actions: tuple[str, ...]


@node
class Fail:
    span: Span
    message: str


Stmt = (
    Let | Assign | AugAssign | Add | Remove | Push | If | For | While | Return | Run | Choose
    | Chance | Finish | Break | Fail | Reveal
)


# ---- declarations ------------------------------------------------------------------------------
@node
class Field:
    span: Span
    name: str
    type: TypeExpr


@node
class IncludeDecl:
    """`include "data/x.rules"`: resolved before checking (rulelang/include.py)."""

    span: Span
    path: str


@node
class GameDecl:
    span: Span
    name: str


@node
class PlayersDecl:
    span: Span
    lo: int
    hi: int


@node
class ParamDecl:
    span: Span
    name: str
    type: TypeExpr
    default: Expr
    range: Expr | None = None  # `param n: int in LO..HI = default`


@node
class MetricDecl:
    """`metric NAME = expr`: a number the workbench reports at the end of each game."""

    span: Span
    name: str
    expr: Expr


@node
class Override:
    span: Span
    name: str
    value: Expr


@node
class VariantDecl:
    span: Span
    name: str
    overrides: tuple[Override, ...]


@node
class EnumMember:
    span: Span
    name: str
    args: tuple[Expr, ...]
    display: str | None = None  # `Lodz "Łódź"`: how people see the member
    display_span: Span | None = None


@node
class EnumDecl:
    span: Span
    name: str
    fields: tuple[Field, ...]
    members: tuple[EnumMember, ...]


@node
class GridDecl:
    span: Span
    name: str
    col_lo: int
    col_hi: int
    row_lo: str
    row_hi: str


@node
class Edge:
    span: Span
    a: str
    b: str
    cost: int


@node
class GraphDecl:
    """An undirected graph over the members of an enum, with integer edge costs."""

    span: Span
    name: str
    node_type: str
    edges: tuple[Edge, ...]


@node
class ConstDecl:
    span: Span
    name: str
    type: TypeExpr
    value: Expr


@node
class KeyPat:
    """A table key: kind is "int" (lo), "range" (lo..hi), "from" (lo..), "name", or "any"."""

    span: Span
    kind: str
    lo: int | None
    hi: int | None
    name: str | None


@node
class TableRow:
    span: Span
    keys: tuple[KeyPat, ...]
    value: Expr


@node
class TableDecl:
    span: Span
    name: str
    params: tuple[Field, ...]
    ret: TypeExpr
    rows: tuple[TableRow, ...]


@node
class StateVar:
    span: Span
    name: str
    type: TypeExpr
    visibility: str
    init: Expr


@node
class StateDecl:
    span: Span
    vars: tuple[StateVar, ...]


@node
class DefDecl:
    span: Span
    name: str
    params: tuple[Field, ...]
    ret: TypeExpr
    body: Expr | Block


@node
class PhaseDecl:
    span: Span
    name: str
    params: tuple[Field, ...]
    body: Block
    # `depth N`: at most N activations may be open at once (re-entry); (N, span of N) or None
    depth: tuple[int, Span] | None = None


@node
class StandingDecl:
    """`standing p { options }`: options offered to p after the legal actions of every decision
    of p that has some; after one runs, the same decision is asked again."""

    span: Span  # of the player variable
    var: str
    options: tuple[Option, ...]


@node
class FlowDecl:
    span: Span
    body: Block


@node
class ScoreDecl:
    span: Span
    kind: str  # "score", "tiebreak" or "heuristic" (what greedy and MCTS bots maximise)
    var: str
    expr: Expr


# ---- view: how the game looks (checked in rulelang/view.py) ----------------------------------
@node
class ViewCell:
    """`cell "text" when cond` (text set) or `cell expr when cond` (value set)."""

    span: Span
    text: str | None
    value: Expr | None
    when: Expr | None


@node
class ViewBoard:
    span: Span
    enum: str
    var: str
    at: tuple[Expr, Expr] | None
    cells: tuple[ViewCell, ...]


@node
class ViewText:
    """A fixed text shown by a view column or value."""

    span: Span
    text: str


@node
class ViewCol:
    span: Span
    label: str
    value: Expr | ViewText
    when: Expr | None


@node
class ViewTable:
    span: Span
    title: str
    var: str
    iter: Expr
    cols: tuple[ViewCol, ...]


@node
class ViewShow:
    span: Span
    label: str
    value: Expr | ViewText
    when: Expr | None


@node
class ViewLabel:
    """`label action(param: "label", ...)`: how a parameter is named to players."""

    span: Span
    action: str
    labels: tuple[tuple[str, str, Span], ...]


@node
class ViewDecl:
    span: Span
    items: tuple[ViewBoard | ViewTable | ViewShow | ViewLabel, ...]


Decl = (
    GameDecl | PlayersDecl | ParamDecl | VariantDecl | EnumDecl | GridDecl | GraphDecl | ConstDecl
    | TableDecl | StateDecl | DefDecl | PhaseDecl | FlowDecl | ScoreDecl | MetricDecl
    | ViewDecl | IncludeDecl | StandingDecl
)


@node
class Module:
    span: Span
    decls: tuple[Decl, ...]
