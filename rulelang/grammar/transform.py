"""Parse .rules text with Lark and turn the parse tree into the AST."""

from __future__ import annotations

import difflib
import functools
import hashlib
import io
import pickle
import re
import sys
from importlib import resources

import lark
from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from rulelang import ast
from rulelang.errors import Diagnostic, RulesError, Span

_GRAMMAR = "rules.lark"
_TABLES = "rules.tables"
_OPTIONS = {"parser": "lalr", "propagate_positions": True, "maybe_placeholders": True}


def grammar_text() -> str:
    return resources.files("rulelang.grammar").joinpath(_GRAMMAR).read_text(encoding="utf-8")


def tables_header(text: str, lark_version: str | None = None) -> str:
    """The first line of the shipped tables: the grammar's sha256 and the Lark version that
    built them. Tables are used only when both match (another Lark may lay its tables out
    otherwise); with another Lark installed the parser is built in memory instead."""
    version = lark.__version__ if lark_version is None else lark_version
    return f"{hashlib.sha256(text.encode()).hexdigest()} lark {version}"


def build_parser(strict: bool = False) -> Lark:
    """Build the LALR parser from the grammar. strict=True (needs the interegular package, a
    test dependency) also proves that no two terminals can collide; the grammar test does that."""
    return Lark(grammar_text(), strict=strict, **_OPTIONS)


def write_tables(path: str | None = None) -> str:
    """Write the prebuilt parser tables shipped with the package (run after editing the grammar:
    `python -m rulelang.grammar`). The same grammar always gives the same bytes (see
    _canonical_tables), so the file changes only when the grammar does."""
    target = path or str(resources.files("rulelang.grammar").joinpath(_TABLES))
    text = grammar_text()
    buf = io.BytesIO()
    build_parser().save(buf)
    with open(target, "wb") as f:
        f.write(tables_header(text).encode() + b"\n")
        f.write(_canonical_tables(buf.getvalue()))
    return target


# the maximum width written for a pattern without an upper bound (_canonical_tables)
_NO_LIMIT = 2**32 - 1


def _canonical_tables(saved: bytes) -> bytes:
    """Lark.save's bytes with the LALR table numbered canonically. Lark numbers its states and
    terminals in an order that varies from run to run (it walks sets of objects), so two builds
    of one grammar gave different files. Here terminals are numbered by name and states in the
    order a breadth-first walk from the start states meets them (transitions by terminal name);
    shift targets and the start and end states follow. Lark.load reads the result as it reads
    its own: the numbers only name states and terminals."""
    obj = pickle.loads(saved)  # noqa: S301 - our own bytes, just written by Lark.save
    table = obj["data"]["parser"]["parser"]
    names = table["tokens"]  # number -> terminal name
    states = table["states"]  # state -> {terminal number: (action, argument)}
    by_name = {st: {names[t]: act for t, act in row.items()} for st, row in states.items()}
    order: list = []
    seen: set = set()
    queue = [table["start_states"][k] for k in sorted(table["start_states"])]
    queue += [table["end_states"][k] for k in sorted(table["end_states"])]
    while queue:
        st = queue.pop(0)
        if st in seen:
            continue
        seen.add(st)
        order.append(st)
        for name in sorted(by_name[st]):
            action, arg = by_name[st][name]
            if action == 0 and arg not in seen:  # a shift: arg is the next state
                queue.append(arg)
    if len(order) != len(states):
        raise AssertionError("parser tables: states unreachable from the start states")
    number = {st: i for i, st in enumerate(order)}
    token_ids = {name: i for i, name in enumerate(sorted(set(names.values())))}
    table["tokens"] = {i: name for name, i in token_ids.items()}
    table["states"] = {
        number[st]: {token_ids[name]: (action, number[arg] if action == 0 else arg)
                     for name, (action, arg) in sorted(by_name[st].items())}
        for st in order}
    table["start_states"] = {k: number[v] for k, v in sorted(table["start_states"].items())}
    table["end_states"] = {k: number[v] for k, v in sorted(table["end_states"].items())}
    # A regular expression without an upper bound (an identifier, a number) has Python's "no
    # limit" as its maximum width, and that number differs between Python releases (2**32 - 1,
    # MAXREPEAT, before 3.11.7; 2**64, MAXWIDTH, since): one value for it here. Lark only sorts
    # terminals by the width (longest first), and every width it sorts comes from this file.
    for entry in obj["memo"].values():
        pattern = entry.get("pattern") if isinstance(entry, dict) else None
        width = pattern.get("_width") if isinstance(pattern, dict) else None
        if width is not None and width[1] >= _NO_LIMIT:
            pattern["_width"] = [width[0], _NO_LIMIT]
    # Pickle writes an object met twice as a reference to the first: rebuilt with a fresh
    # container everywhere and one object per string value, equal data gives equal bytes.
    return pickle.dumps(_fresh(obj), protocol=pickle.HIGHEST_PROTOCOL)


def _fresh(x):
    if isinstance(x, dict):
        return {_fresh(k): _fresh(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return type(x)([_fresh(v) for v in x])
    if isinstance(x, str):
        return sys.intern(x)
    if x is None or isinstance(x, bool | int):
        return x
    raise TypeError(f"parser tables: unexpected {type(x).__name__}")


@functools.cache
def _parser() -> Lark:
    # The tables ship with the package, keyed by the grammar's digest and Lark's version, so the
    # first run on a fresh machine is as fast as later ones and nothing is written to the temp
    # folder. Stale or missing tables (a grammar edit not yet followed by write_tables) cost one
    # in-memory build of about half a second.
    text = grammar_text()
    try:
        data = resources.files("rulelang.grammar").joinpath(_TABLES).read_bytes()
    except OSError:
        data = b""
    head, _, body = data.partition(b"\n")
    if head.decode("ascii", "replace") == tables_header(text):
        try:
            return Lark.load(io.BytesIO(body))
        except Exception:  # noqa: BLE001 - damaged tables: rebuild below
            pass
    return build_parser()


def _unescape(literal: str) -> str:
    body = literal[1:-1]
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


class _ToAst(Transformer):
    def __init__(self, filename: str) -> None:
        super().__init__()
        self.filename = filename

    def _span(self, meta) -> Span:
        if getattr(meta, "empty", True):
            return Span(self.filename, 0, 0)
        return Span(self.filename, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tok(self, tok: Token) -> Span:
        return Span(self.filename, tok.line, tok.column, tok.end_line or tok.line,
                    tok.end_column or tok.column)

    # -- declarations
    @v_args(meta=True)
    def start(self, meta, items):
        return ast.Module(self._span(meta), tuple(items))

    @v_args(meta=True)
    def game_decl(self, meta, c):
        return ast.GameDecl(self._span(meta), str(c[0]))

    @v_args(meta=True)
    def include_decl(self, meta, c):
        return ast.IncludeDecl(self._span(meta), _unescape(str(c[0])))

    @v_args(meta=True)
    def players_decl(self, meta, c):
        return ast.PlayersDecl(self._span(meta), int(c[0]), int(c[1]))

    @v_args(meta=True)
    def param_decl(self, meta, c):
        return ast.ParamDecl(self._tok(c[0]), str(c[0]), c[1], c[2])

    @v_args(meta=True)
    def variant_decl(self, meta, c):
        return ast.VariantDecl(self._tok(c[0]), str(c[0]), tuple(c[1:]))

    @v_args(meta=True)
    def override(self, meta, c):
        return ast.Override(self._tok(c[0]), str(c[0]), c[1])

    @v_args(meta=True)
    def enum_decl(self, meta, c):
        fields = c[1] or ()
        members = tuple(m for m in c[2:] if m is not None)
        return ast.EnumDecl(self._tok(c[0]), str(c[0]), tuple(fields), members)

    def enum_fields(self, c):
        return tuple(c)

    @v_args(meta=True)
    def field(self, meta, c):
        return ast.Field(self._tok(c[0]), str(c[0]), c[1])

    @v_args(meta=True)
    def enum_member(self, meta, c):
        label = c[1] if isinstance(c[1], Token) else None
        args = tuple(a for a in c[2:] if a is not None)
        return ast.EnumMember(self._tok(c[0]), str(c[0]), args,
                              None if label is None else _unescape(str(label)),
                              None if label is None else self._tok(label))

    @v_args(meta=True)
    def grid_decl(self, meta, c):
        return ast.GridDecl(self._tok(c[0]), str(c[0]), int(c[1]), int(c[2]), str(c[3]),
                            str(c[4]))

    @v_args(meta=True)
    def graph_decl(self, meta, c):
        edges = tuple(x for x in c[2:] if x is not None)
        return ast.GraphDecl(self._tok(c[0]), str(c[0]), str(c[1]), edges)

    @v_args(meta=True)
    def edge(self, meta, c):
        return ast.Edge(self._span(meta), str(c[0]), str(c[1]), int(c[2]))

    @v_args(meta=True)
    def const_decl(self, meta, c):
        return ast.ConstDecl(self._tok(c[0]), str(c[0]), c[1], c[2])

    @v_args(meta=True)
    def table_decl(self, meta, c):
        name, rest = c[0], c[1:]
        params = tuple(x for x in rest if isinstance(x, ast.Field))
        others = [x for x in rest if not isinstance(x, ast.Field) and x is not None]
        ret, rows = others[0], tuple(others[1:])
        return ast.TableDecl(self._tok(name), str(name), params, ret, rows)

    @v_args(meta=True)
    def table_row(self, meta, c):
        return ast.TableRow(self._span(meta), c[0], c[1])

    def table_key(self, c):
        return (c[0],)

    def table_key_tuple(self, c):
        return tuple(c)

    @v_args(meta=True)
    def key_int(self, meta, c):
        return ast.KeyPat(self._span(meta), "int", c[0], None, None)

    @v_args(meta=True)
    def key_range(self, meta, c):
        return ast.KeyPat(self._span(meta), "range", c[0], c[1], None)

    @v_args(meta=True)
    def key_from(self, meta, c):
        return ast.KeyPat(self._span(meta), "from", c[0], None, None)

    @v_args(meta=True)
    def key_name(self, meta, c):
        return ast.KeyPat(self._span(meta), "name", None, None, str(c[0]))

    @v_args(meta=True)
    def key_any(self, meta, c):
        return ast.KeyPat(self._span(meta), "any", None, None, None)

    def signed_int(self, c):
        return int(c[0])

    def neg_int(self, c):
        return -int(c[0])

    @v_args(meta=True)
    def state_decl(self, meta, c):
        return ast.StateDecl(self._span(meta), tuple(c))

    @v_args(meta=True)
    def var_decl(self, meta, c):
        vis = str(c[2]) if c[2] is not None else "public"
        return ast.StateVar(self._tok(c[0]), str(c[0]), c[1], vis, c[3])

    def visibility(self, c):
        return str(c[0])

    def _def(self, c, body):
        name = c[0]
        params = tuple(x for x in c[1:-2] if x is not None)
        return ast.DefDecl(self._tok(name), str(name), params, c[-2], body)

    @v_args(meta=True)
    def def_expr(self, meta, c):
        return self._def(c, c[-1])

    @v_args(meta=True)
    def def_block(self, meta, c):
        return self._def(c, c[-1])

    @v_args(meta=True)
    def phase_decl(self, meta, c):
        params = tuple(x for x in c[1:-2] if x is not None)
        return ast.PhaseDecl(self._tok(c[0]), str(c[0]), params, c[-1], c[-2])

    @v_args(meta=True)
    def standing_decl(self, meta, c):
        return ast.StandingDecl(self._tok(c[0]), str(c[0]), tuple(c[1:]))

    @v_args(meta=True)
    def phase_depth(self, meta, c):
        return (int(c[0]), self._tok(c[0]))

    @v_args(meta=True)
    def flow_decl(self, meta, c):
        return ast.FlowDecl(self._span(meta), c[0])

    @v_args(meta=True)
    def score_decl(self, meta, c):
        return ast.ScoreDecl(self._span(meta), "score", str(c[0]), c[1])

    @v_args(meta=True)
    def tiebreak_decl(self, meta, c):
        return ast.ScoreDecl(self._span(meta), "tiebreak", str(c[0]), c[1])

    @v_args(meta=True)
    def ranged_param_decl(self, meta, c):
        return ast.ParamDecl(self._tok(c[0]), str(c[0]), c[1], c[3], c[2])

    @v_args(meta=True)
    def heuristic_decl(self, meta, c):
        return ast.ScoreDecl(self._span(meta), "heuristic", str(c[0]), c[1])

    @v_args(meta=True)
    def metric_decl(self, meta, c):
        return ast.MetricDecl(self._tok(c[0]), str(c[0]), c[1])

    # -- types
    @v_args(meta=True)
    def named_type(self, meta, c):
        return ast.TName(self._tok(c[0]), str(c[0]))

    @v_args(meta=True)
    def set_type(self, meta, c):
        return ast.TSet(self._span(meta), c[0])

    @v_args(meta=True)
    def list_type(self, meta, c):
        return ast.TList(self._span(meta), c[0])

    @v_args(meta=True)
    def array_type(self, meta, c):
        return ast.TArray(self._span(meta), c[0], c[1])

    @v_args(meta=True)
    def opt_type(self, meta, c):
        return ast.TOpt(self._span(meta), c[0])

    @v_args(meta=True)
    def graph_type(self, meta, c):
        return ast.TGraph(self._span(meta), c[0])

    # -- statements
    @v_args(meta=True)
    def block(self, meta, c):
        return ast.Block(self._span(meta), tuple(c))

    @v_args(meta=True)
    def let_stmt(self, meta, c):
        return ast.Let(self._span(meta), str(c[0]), c[1], c[2], self._tok(c[0]))

    @v_args(meta=True)
    def assign_stmt(self, meta, c):
        return ast.Assign(self._span(meta), c[0], c[1])

    @v_args(meta=True)
    def aug_stmt(self, meta, c):
        return ast.AugAssign(self._span(meta), c[0], str(c[1])[0], c[2])

    @v_args(meta=True)
    def add_stmt(self, meta, c):
        return ast.Add(self._span(meta), c[0], c[1])

    @v_args(meta=True)
    def remove_stmt(self, meta, c):
        return ast.Remove(self._span(meta), c[0], c[1])

    @v_args(meta=True)
    def push_stmt(self, meta, c):
        return ast.Push(self._span(meta), c[0], c[1])

    @v_args(meta=True)
    def if_stmt(self, meta, c):
        branches = [(c[0], c[1])]
        orelse = None
        for x in c[2:]:
            if x is None:
                continue
            if isinstance(x, tuple):
                branches.append(x)
            else:
                orelse = x
        return ast.If(self._span(meta), tuple(branches), orelse)

    def elif_clause(self, c):
        return (c[0], c[1])

    def else_clause(self, c):
        return c[0]

    @v_args(meta=True)
    def for_stmt(self, meta, c):
        return ast.For(self._span(meta), str(c[0]), c[1], c[2], self._tok(c[0]))

    @v_args(meta=True)
    def while_stmt(self, meta, c):
        return ast.While(self._span(meta), c[0], c[1])

    @v_args(meta=True)
    def return_stmt(self, meta, c):
        return ast.Return(self._span(meta), c[0])

    @v_args(meta=True)
    def run_stmt(self, meta, c):
        return ast.Run(self._span(meta), str(c[0]), tuple(x for x in c[1:] if x is not None))

    @v_args(meta=True)
    def choose_stmt(self, meta, c):
        return ast.Choose(self._span(meta), c[0], c[1] is not None, tuple(c[2:-1]), c[-1])

    def choose_else(self, c):
        return c[0]

    def secret(self, c):
        return True

    @v_args(meta=True)
    def option(self, meta, c):
        ann, name = c[0], c[1]
        params = tuple(x for x in c[2:-2] if x is not None)
        ann_text = str(ann)[1:] if ann is not None else None
        return ast.Option(self._tok(name), ann_text, str(name), params, c[-2], c[-1],
                          self._tok(ann) if ann is not None else None)

    @v_args(meta=True)
    def oparam(self, meta, c):
        return ast.OParam(self._tok(c[0]), str(c[0]), c[1], c[2])

    @v_args(meta=True)
    def chance_stmt(self, meta, c):
        return ast.Chance(self._span(meta), str(c[0]), str(c[1]), c[2], c[3], c[4], c[5],
                          self._tok(c[1]))

    def weight_clause(self, c):
        return c[0]

    def seen_clause(self, c):
        return c[0]

    @v_args(meta=True)
    def finish_stmt(self, meta, c):
        return ast.Finish(self._span(meta))

    @v_args(meta=True)
    def break_stmt(self, meta, c):
        return ast.Break(self._span(meta))

    @v_args(meta=True)
    def reveal_stmt(self, meta, c):
        return ast.Reveal(self._span(meta), tuple(str(x) for x in c))

    @v_args(meta=True)
    def fail_stmt(self, meta, c):
        return ast.Fail(self._span(meta), _unescape(str(c[0])))

    @v_args(meta=True)
    def lvalue(self, meta, c):
        return ast.LValue(self._span(meta), str(c[0]), tuple(c[1:]))

    # -- expressions
    @v_args(meta=True)
    def cond_expr(self, meta, c):
        return ast.CondExpr(self._span(meta), c[0], c[1], c[2])

    @v_args(meta=True)
    def or_op(self, meta, c):
        return ast.BinOp(self._span(meta), "or", c[0], c[1])

    @v_args(meta=True)
    def and_op(self, meta, c):
        return ast.BinOp(self._span(meta), "and", c[0], c[1])

    @v_args(meta=True)
    def not_op(self, meta, c):
        return ast.Not(self._span(meta), c[0])

    @v_args(meta=True)
    def compare(self, meta, c):
        return ast.BinOp(self._span(meta), str(c[1]), c[0], c[2])

    @v_args(meta=True)
    def in_op(self, meta, c):
        return ast.BinOp(self._span(meta), "in", c[0], c[1])

    @v_args(meta=True)
    def not_in_op(self, meta, c):
        return ast.BinOp(self._span(meta), "not in", c[0], c[1])

    @v_args(meta=True)
    def range_op(self, meta, c):
        return ast.Range(self._span(meta), c[0], c[1], None)

    @v_args(meta=True)
    def range_step_op(self, meta, c):
        return ast.Range(self._span(meta), c[0], c[1], c[2])

    @v_args(meta=True)
    def binop(self, meta, c):
        return ast.BinOp(self._span(meta), str(c[1]), c[0], c[2])

    @v_args(meta=True)
    def neg(self, meta, c):
        return ast.Neg(self._span(meta), c[0])

    @v_args(meta=True)
    def index(self, meta, c):
        return ast.Index(self._span(meta), c[0], c[1])

    @v_args(meta=True)
    def attr(self, meta, c):
        return ast.Attr(self._span(meta), c[0], str(c[1]), self._tok(c[1]))

    @v_args(meta=True)
    def call(self, meta, c):
        return ast.Call(self._span(meta), str(c[0]), tuple(x for x in c[1:] if x is not None))

    @v_args(meta=True)
    def agg(self, meta, c):
        return ast.Agg(self._span(meta), str(c[0]), c[1], str(c[2]), c[3], c[4],
                       self._tok(c[2]))

    @v_args(meta=True)
    def sort_expr(self, meta, c):
        return ast.Sort(self._span(meta), str(c[0]), c[1], tuple(c[2:]), self._tok(c[0]))

    @v_args(meta=True)
    def sort_key(self, meta, c):
        return ast.SortKey(self._span(meta), c[0], c[1] == "desc")

    def order(self, c):
        return str(c[0])

    @v_args(meta=True)
    def int_lit(self, meta, c):
        return ast.IntLit(self._span(meta), int(c[0]))

    @v_args(meta=True)
    def true_lit(self, meta, c):
        return ast.BoolLit(self._span(meta), True)

    @v_args(meta=True)
    def false_lit(self, meta, c):
        return ast.BoolLit(self._span(meta), False)

    @v_args(meta=True)
    def none_lit(self, meta, c):
        return ast.NoneLit(self._span(meta))

    @v_args(meta=True)
    def name(self, meta, c):
        return ast.Name(self._span(meta), str(c[0]))

    @v_args(meta=True)
    def list_lit(self, meta, c):
        return ast.ListLit(self._span(meta), tuple(x for x in c if x is not None))

    @v_args(meta=True)
    def set_lit(self, meta, c):
        return ast.SetLit(self._span(meta), tuple(x for x in c if x is not None))

    @v_args(meta=True)
    def list_comp(self, meta, c):
        return ast.Comp(self._span(meta), "list", c[0], str(c[1]), c[2], c[3],
                        var_span=self._tok(c[1]))

    @v_args(meta=True)
    def array_comp(self, meta, c):
        key = c[0]
        name = key.name if isinstance(key, ast.Name) else ""
        return ast.Comp(self._span(meta), "array", c[1], str(c[2]), c[3], None, name, key.span,
                        self._tok(c[2]))

    def array_entry(self, c):
        return (c[0], c[1])

    @v_args(meta=True)
    def array_lit(self, meta, c):
        entries = [x for x in c if x is not None]
        return ast.ArrayLit(self._span(meta), tuple(k for k, _v in entries),
                            tuple(v for _k, v in entries))

    @v_args(meta=True)
    def set_comp(self, meta, c):
        return ast.Comp(self._span(meta), "set", c[0], str(c[1]), c[2], c[3],
                        var_span=self._tok(c[1]))

    # -- view section
    @v_args(meta=True)
    def view_decl(self, meta, c):
        return ast.ViewDecl(self._span(meta), tuple(c))

    @v_args(meta=True)
    def view_board(self, meta, c):
        return ast.ViewBoard(self._tok(c[0]), str(c[0]), str(c[1]), c[2], tuple(c[3:]))

    def view_at(self, c):
        return (c[0], c[1])

    @v_args(meta=True)
    def view_cell_text(self, meta, c):
        return ast.ViewCell(self._span(meta), _unescape(str(c[0])), None, c[1])

    @v_args(meta=True)
    def view_cell_expr(self, meta, c):
        return ast.ViewCell(self._span(meta), None, c[0], c[1])

    @v_args(meta=True)
    def view_table(self, meta, c):
        return ast.ViewTable(self._span(meta), _unescape(str(c[0])), str(c[1]), c[2],
                             tuple(c[3:]))

    @v_args(meta=True)
    def view_text(self, meta, c):
        return ast.ViewText(self._span(meta), _unescape(str(c[0])))

    @v_args(meta=True)
    def view_col(self, meta, c):
        return ast.ViewCol(self._span(meta), _unescape(str(c[0])), c[1], c[2])

    @v_args(meta=True)
    def view_show(self, meta, c):
        return ast.ViewShow(self._span(meta), _unescape(str(c[0])), c[1], c[2])

    @v_args(meta=True)
    def view_label(self, meta, c):
        return ast.ViewLabel(self._tok(c[0]), str(c[0]), tuple(x for x in c[1:] if x is not None))

    def view_param_label(self, c):
        return (str(c[0]), _unescape(str(c[1])), self._tok(c[0]))


_TOKEN_NAMES = {
    "NAME": "a name", "INT": "an integer", "STRING": "a string", "$END": "end of file",
    "ANNOTATION": "an annotation", "COMPOP": "a comparison",
}
# Operator terminals that stand for several symbols: listed one by one, so that the list of
# expected tokens joins them like any others.
_OPERATORS = {"ADDOP": ("+", "-"), "MULOP": ("*", "//", "%"), "AUGOP": ("+=", "-=")}


def _describe(parser: Lark, names) -> list[str]:
    out = set()
    for n in names:
        if n in _TOKEN_NAMES:
            out.add(_TOKEN_NAMES[n])
            continue
        if n in _OPERATORS:
            out.update(f"'{op}'" for op in _OPERATORS[n])
            continue
        try:
            term = parser.get_terminal(n)
        except KeyError:
            out.add(n)
            continue
        pat = term.pattern
        out.add(f"'{pat.value}'" if pat.type == "str" else n.lower())
    return sorted(out)


def parse(text: str, filename: str = "<rules>") -> ast.Module:
    """Parse .rules source into an AST, raising RulesError with the position on bad syntax."""
    parser = _parser()
    try:
        tree = parser.parse(text)
    except UnexpectedInput as exc:
        raise RulesError([_syntax_diagnostic(parser, exc, text, filename)], text) from None
    except RecursionError:
        raise RulesError([Diagnostic("E001", "input nested too deeply",
                                     Span(filename, 1, 1))], text) from None
    deep = _too_deep(tree, filename)
    if deep is not None:
        raise RulesError([deep], text)
    try:
        return _ToAst(filename).transform(tree)
    except RecursionError:
        raise RulesError([Diagnostic("E001", "input nested too deeply",
                                     Span(filename, 1, 1))], text) from None
    except VisitError as exc:
        # Lark wraps errors raised inside a rule callback; the only expected one is int() on
        # a literal longer than Python's digit limit.
        if not isinstance(exc.orig_exc, ValueError | RecursionError):
            raise
        meta = getattr(exc.obj, "meta", None)
        span = Span(filename, getattr(meta, "line", 1), getattr(meta, "column", 1))
        msg = ("integer literal too long" if isinstance(exc.orig_exc, ValueError)
               else "input nested too deeply")
        raise RulesError([Diagnostic("E001", msg, span)], text) from None


# The transform, checker, lowering and interpreter recurse once or twice per nesting level, and
# generated Python has its own nesting limits; real rules nest about 16 deep.
MAX_NESTING = 100


def _too_deep(tree: Tree, filename: str) -> Diagnostic | None:
    """The first node nested deeper than MAX_NESTING, found without recursing."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NESTING:
            meta = node.meta
            span = Span(filename, getattr(meta, "line", 1), getattr(meta, "column", 1))
            return Diagnostic("E001", f"nested more than {MAX_NESTING} levels deep", span)
        stack.extend((c, depth + 1) for c in node.children if isinstance(c, Tree))
    return None


def _syntax_diagnostic(parser: Lark, exc: UnexpectedInput, text: str, filename: str) -> Diagnostic:
    line = getattr(exc, "line", 0) or 0
    col = getattr(exc, "column", 0) or 0
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        if tok.type == "$END":
            lines = text.splitlines() or [""]
            line, col = len(lines), len(lines[-1]) + 1
            got = "end of file"
        else:
            got = f"'{tok}'"
        # `accepts` also holds keywords the contextual lexer would have turned into NAME;
        # `expected` alone omits e.g. 'if', 'not' and 'true' where an expression may start.
        expected = _describe(parser, exc.accepts or exc.expected)
        msg = f"unexpected {got}; expected {_join(expected)}"
        if tok.type != "NAME" and "a name" in expected and str(tok).isidentifier():
            msg += f" ('{tok}' is a keyword and cannot be used as a name)"
        notes = _hints(parser, text, tok, expected)
    elif isinstance(exc, UnexpectedCharacters):
        ch = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else "?"
        msg = f"unexpected character {ch!r}"
        if ch == '"':
            msg += " (unterminated string: a string ends on the line it starts)"
        elif not ch.isascii():
            msg += f" (U+{ord(ch):04X}); names and symbols are ASCII only"
    elif isinstance(exc, UnexpectedEOF):
        lines = text.splitlines() or [""]
        line, col = len(lines), len(lines[-1]) + 1
        msg = f"unexpected end of file; expected {_join(_describe(parser, exc.expected))}"
    else:  # pragma: no cover - lark has no other subclasses today
        msg = "syntax error"
    if not isinstance(exc, UnexpectedToken):
        notes = ()
    return Diagnostic("E001", msg, Span(filename, max(line, 1), max(col, 1)), notes)


def _hints(parser: Lark, text: str, tok: Token, expected: list[str]) -> tuple[str, ...]:
    """Notes for common slips: a misspelt keyword starting a line (`chooze p {`, read as a name,
    so that the error falls on the word after it; or `stat {` at the top level, where the name
    itself is unexpected), a phase called like a function (`deal()` for `run deal()`), and
    `players 4` for `4..4`."""
    start = getattr(tok, "start_pos", None)
    if start is None:
        return ()
    head = text[:start]
    line = head[head.rfind("\n") + 1:]
    word = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*", line)
    # `name(` where a statement may go on (`name =`, `name +=`, `name[`): a call
    call = tok == "(" and "'+='" in expected
    if word:
        if call and word.group(1) in _phases(text):
            return (f"'{word.group(1)}' is a phase: write 'run {word.group(1)}"
                    f"{_call_args(text, start)}'",)
        keywords = sorted({t.pattern.value for t in parser.terminals
                           if t.pattern.type == "str" and t.pattern.value.isidentifier()})
        if word.group(1) not in keywords:
            close = difflib.get_close_matches(word.group(1), keywords, n=1, cutoff=0.75)
            if close:
                return (f"did you mean '{close[0]}'?",)
        if call:
            return ("a call on its own is not a statement; a phase is started with "
                    "'run name(args)'",)
    elif not line.strip() and tok.type == "NAME":
        # A name starting a line where it cannot go (a declaration at the top level): the
        # keywords that could go there are the ones it may misspell.
        keywords = [e.strip("'") for e in expected if e.strip("'").isidentifier()]
        close = difflib.get_close_matches(str(tok), keywords, n=1, cutoff=0.75)
        if close:
            return (f"did you mean '{close[0]}'?",)
    before = head.rstrip()
    if expected == ["'..'"] and re.fullmatch(r"\s*players\s+(\d+)",
                                             before[before.rfind("\n") + 1:]):
        n = before.split()[-1]
        return (f"a fixed number of players is a range of one: players {n}..{n}",)
    return ()


def _phases(text: str) -> list[str]:
    """The phases declared in `text`, by a scan of its `phase NAME` lines: an included file
    holds only data, so the file that failed to parse declares them all."""
    return re.findall(r"^[ \t]*phase\s+([A-Za-z_][A-Za-z0-9_]*)", text, re.M)


def _call_args(text: str, paren: int) -> str:
    """The `(...)` of a call starting at `paren`, as written when it fits on its line with no
    parentheses inside, else `(...)`."""
    args = re.compile(r"\([^()\n]*\)").match(text, paren)
    return args.group() if args else "(...)"


def _join(items: list[str]) -> str:
    """`'a'`, `'a' or 'b'`, `'a', 'b' or 'c'`; past 16 items, `'a', ..., 'p' or 5 more`."""
    if not items:
        return "something else"
    if len(items) > 16:
        return ", ".join(items[:16]) + f" or {len(items) - 16} more"
    return " or ".join([", ".join(items[:-1]), items[-1]]) if len(items) > 1 else items[0]
