"""Semantic passes: names, types, arity, duplicates, reachability, variants and parameters."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from rulelang import ast
from rulelang import types as T
from rulelang.errors import Diagnostic, RulesError, Span
from rulelang.program import PAUSES, EnumInfo, Program
from rulelang.semantics import AGGREGATES, BINARY_OPS
from rulelang.semantics import BUILTINS as BUILTIN_TABLE

AGG_FUNCS = tuple(AGGREGATES)
# Names no declaration may take: the built-in names and every builtin of the semantics table
# (read at each use, so a table entry is all a new builtin needs).
BUILTINS = BUILTIN_TABLE
_BUILTIN_NAMES = frozenset({"players", "num_players", "int", "bool", "player"})


class _Reserved:
    def __contains__(self, name: object) -> bool:
        return name in _BUILTIN_NAMES or name in BUILTIN_TABLE


RESERVED = _Reserved()
MAX_DIAGNOSTICS = 100


@dataclass
class _Local:
    slot: str
    type: T.Type


class _Scope:
    def __init__(self, parent: _Scope | None = None) -> None:
        self.parent = parent
        self.names: dict[str, _Local] = {}

    def lookup(self, name: str) -> _Local | None:
        s: _Scope | None = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        return None

    def all_names(self) -> list[str]:
        out, s = [], self
        while s is not None:
            out.extend(s.names)
            s = s.parent
        return out


# Loops nested in one body, and parameters of one option (each a loop of its legal-action
# listing): generated engines are Python, which refuses more than 20 nested loop blocks.
MAX_LOOP_NESTING = 16
# `phase ... depth N`: N is at most this; and the bodies the lowering expands in place for
# re-entered phases are at most MAX_PHASE_COPIES (E035), so a file cannot make loading explode.
MAX_PHASE_DEPTH = 16
MAX_PHASE_COPIES = 2000


@dataclass
class _Ctx:
    pure: bool = False  # inside a def: no state writes, no decisions
    ret: T.Type | None = None
    loops: int = 0
    where: str = "flow"


class Checker:
    def __init__(self, program: Program) -> None:
        self.p = program
        self.diags: list[Diagnostic] = []
        self.global_names: dict[str, Span] = {}
        self.members: dict[str, list[tuple[str, int]]] = {}
        # Local slots are named after their owner (a def, a phase, the flow, a score) and
        # their own name, with a number only for a second local of that name in that owner:
        # generated code takes its names from them, so adding a local renames nothing else.
        self.owner = ""
        self.slot_seen: dict[tuple[str, str], int] = {}
        self.runs: dict[str, list[str]] = {}  # phase or "<flow>" -> phases it runs
        self.reveals: list[ast.Reveal] = []
        self.secret_actions: set[str] = set()
        self.hidden_draws: set[str] = set()  # chance names with `seen by`
        self.public_draws: set[str] = set()  # chance names without
        self.def_calls: dict[str, list[str]] = {}  # def -> defs it calls
        self.choice_names: dict[str, Span] = {}  # option names of every `choose`, first seen
        self.cur_def: str | None = None
        self.resolved: dict[ast.TypeExpr, T.Type] = {}

    # -- diagnostics
    def error(self, code: str, msg: str, span: Span, *notes: str) -> None:
        self.diags.append(Diagnostic(code, msg, span, tuple(notes)))

    def undefined(self, what: str, name: str, span: Span, candidates) -> None:
        close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
        notes = (f"did you mean '{close[0]}'?",) if close else ()
        kind, of, owner = what.partition(" of ")  # "member of Color": the name before "of"
        self.error("E010", f"undefined {kind} '{name}'{of}{owner}", span, *notes)

    # -- entry
    def run(self, variant: str | None, overrides: dict[str, object]) -> Program:
        p = self.p
        self.collect()
        if self.diags:
            return p
        self.check_types_of_decls()
        self.owner = "const"
        self.apply_variant(variant, overrides)
        self.check_consts()
        self.check_const_cycles()
        self.check_state()
        for d in p.defs.values():
            self.check_def(d)
        for ph in p.phases.values():
            self.check_phase(ph)
        self.owner = ""
        if p.flow is not None:
            scope = _Scope()
            self.cur_runner = "<flow>"
            self.check_block(p.flow.body, scope, _Ctx())
        self.check_standing()
        for md in p.metrics.values():
            self.owner = md.name
            self.expect(md.expr, _Scope(), _Ctx(pure=True), T.INT)
        for owner, sd in (("score", p.score), ("tiebreak", p.tiebreak),
                          ("heuristic", p.heuristic)):
            if sd is not None:
                self.owner = owner
                scope = _Scope()
                scope.names[sd.var] = self.bind(sd, sd.var, T.PLAYER)
                self.expect(sd.expr, scope, _Ctx(pure=True), T.INT)
        self.check_reachability()
        self.check_def_recursion()
        for s in self.reveals:
            secret, draws = [], []
            for name in s.actions:
                if name in self.secret_actions:
                    secret.append(name)
                if name in self.hidden_draws:
                    draws.append(name)
                if name in self.secret_actions or name in self.hidden_draws:
                    continue
                if name in self.public_draws:
                    self.error("E038", f"chance '{name}' is public (it has no 'seen by'): there "
                               "is nothing to reveal", s.span)
                else:
                    self.undefined("secret action or hidden draw", name, s.span,
                                   sorted(self.secret_actions | self.hidden_draws))
            # which history entries the reveal makes public: secret choices, hidden draws
            self.p.refs[s] = ("reveal", tuple(secret), tuple(draws))
        return p

    # -- pass 1: collect declarations
    def declare(self, name: str, span: Span) -> bool:
        if name in RESERVED:
            self.error("E011", f"'{name}' is a built-in name and cannot be redefined", span)
            return False
        if name in self.global_names:
            prev = self.global_names[name]
            self.error("E011", f"duplicate definition of '{name}'", span,
                       f"first defined at {prev}")
            return False
        self.global_names[name] = span
        return True

    def collect(self) -> None:
        p = self.p
        seen_game = seen_players = None
        for d in p.module.decls:
            if isinstance(d, ast.GameDecl):
                if seen_game:
                    self.error("E011", "duplicate 'game' declaration", d.span,
                               f"first declared at {seen_game.span}")
                seen_game = d
                p.name = d.name
            elif isinstance(d, ast.PlayersDecl):
                if seen_players:
                    self.error("E011", "duplicate 'players' declaration", d.span,
                               f"first declared at {seen_players.span}")
                seen_players = d
                if not 1 <= d.lo <= d.hi <= 64:
                    self.error("E012", "player counts must satisfy 1 <= min <= max <= 64", d.span)
                p.min_players, p.max_players = d.lo, d.hi
            elif isinstance(d, ast.ParamDecl):
                if self.declare(d.name, d.span):
                    p.params[d.name] = d
            elif isinstance(d, ast.VariantDecl):
                if d.name in p.variants:
                    self.error("E011", f"duplicate variant '{d.name}'", d.span,
                               f"first defined at {p.variants[d.name].span}")
                p.variants[d.name] = d
            elif isinstance(d, ast.EnumDecl):
                if self.declare(d.name, d.span):
                    self.collect_enum(d)
            elif isinstance(d, ast.GridDecl):
                if self.declare(d.name, d.span):
                    self.collect_grid(d)
            elif isinstance(d, ast.GraphDecl):
                if self.declare(d.name, d.span):
                    p.graphs[d.name] = d
            elif isinstance(d, ast.ConstDecl):
                if self.declare(d.name, d.span):
                    p.consts[d.name] = d
            elif isinstance(d, ast.TableDecl):
                if self.declare(d.name, d.span):
                    p.tables[d.name] = d
            elif isinstance(d, ast.DefDecl):
                if self.declare(d.name, d.span):
                    p.defs[d.name] = d
            elif isinstance(d, ast.PhaseDecl):
                if self.declare(d.name, d.span):
                    p.phases[d.name] = d
            elif isinstance(d, ast.StateDecl):
                for v in d.vars:
                    if self.declare(v.name, v.span):
                        p.state_vars.append(v)
            elif isinstance(d, ast.StandingDecl):
                p.standing.append(d)
            elif isinstance(d, ast.FlowDecl):
                if p.flow is not None:
                    self.error("E011", "duplicate 'flow' block", d.span,
                               f"first defined at {p.flow.span}")
                p.flow = d
            elif isinstance(d, ast.MetricDecl):
                if d.name in p.metrics:
                    self.error("E011", f"duplicate metric '{d.name}'", d.span,
                               f"first declared at {p.metrics[d.name].span}")
                p.metrics[d.name] = d
            elif isinstance(d, ast.ScoreDecl):
                slot = d.kind
                if getattr(p, slot) is not None:
                    self.error("E011", f"duplicate '{d.kind}' declaration", d.span,
                               f"first declared at {getattr(p, slot).span}")
                setattr(p, slot, d)
        top = Span(p.filename, 1, 1)
        if seen_game is None:
            self.error("E020", "missing 'game NAME' declaration", top)
        if seen_players is None:
            self.error("E020", "missing 'players MIN..MAX' declaration", top)
        if p.flow is None:
            self.error("E020", "missing 'flow { ... }' block", top)
        if p.score is None:
            self.error("E020", "missing 'score PLAYER => EXPR' declaration", top)

    def collect_enum(self, d: ast.EnumDecl) -> None:
        names: list[str] = []
        for m in d.members:
            if m.name in names:
                first = next(x for x in d.members if x.name == m.name)
                self.error("E011", f"duplicate member '{m.name}' in enum '{d.name}'", m.span,
                           f"first defined at {first.span}")
            names.append(m.name)
            self.members.setdefault(m.name, []).append((d.name, len(names) - 1))
        info = EnumInfo(d.name, names, [], [m.args for m in d.members], d.span,
                        display=[m.display if m.display is not None else m.name
                                 for m in d.members])
        self.check_display_names(d, info)
        self.p.enums[d.name] = info

    def check_display_names(self, d: ast.EnumDecl, info: EnumInfo) -> None:
        """Display names are one line of printable text, and no two members look alike."""
        for m, shown in zip(d.members, info.display):
            if m.display is None:
                continue
            if not m.display.strip() or not m.display.isprintable():
                self.error("E047", "a display name is a line of printable text, not empty",
                           m.display_span)
                continue
            same = [x for x, s in zip(d.members, info.display)
                    if x is not m and (s.casefold() == shown.casefold()
                                       or x.name.casefold() == shown.casefold())]
            if same:
                self.error("E047", f"display name \"{shown}\" is also how member "
                           f"'{same[0].name}' of {d.name} is shown", m.display_span)

    def collect_grid(self, d: ast.GridDecl) -> None:
        if len(d.row_lo) != 1 or len(d.row_hi) != 1 or not (d.row_lo.isupper()
                                                             and d.row_hi.isupper()):
            self.error("E012", "grid rows must be single capital letters, e.g. A..I", d.span)
            return
        if d.col_lo > d.col_hi or d.row_lo > d.row_hi or d.col_hi - d.col_lo >= 64:
            self.error("E012", "empty or oversized grid", d.span)
            return
        rows = [chr(c) for c in range(ord(d.row_lo), ord(d.row_hi) + 1)]
        cols = list(range(d.col_lo, d.col_hi + 1))
        names = [f"{c}{r}" for r in rows for c in cols]
        self.p.enums[d.name] = EnumInfo(d.name, names, [], [() for _ in names], d.span,
                                        grid=(d.col_lo, len(cols), rows), display=list(names))

    # -- types of declarations
    def resolve_type(self, t: ast.TypeExpr) -> T.Type:
        """The type a type expression names; each is resolved (and reported) once, however
        often it is read (a def's parameter types are read at every call)."""
        done = self.resolved.get(t)
        if done is None:
            done = self.resolved[t] = self._resolve_type(t)
        return done

    def _resolve_type(self, t: ast.TypeExpr) -> T.Type:
        if isinstance(t, ast.TName):
            if t.name == "int":
                return T.INT
            if t.name == "bool":
                return T.BOOL
            if t.name == "player":
                return T.PLAYER
            if t.name in self.p.enums:
                return T.enum(t.name)
            self.undefined("type", t.name, t.span,
                           ["int", "bool", "player", *self.p.enums])
            return T.ANY
        if isinstance(t, ast.TSet):
            e = self.resolve_type(t.elem)
            if e.kind not in ("player", "enum", "bool", "any"):
                self.error("E012", "set elements must be a player, bool, enum or grid type, "
                           f"not {e}", t.span)
                return T.set_of(T.ANY)  # (no second error at every value of it)
            return T.set_of(e)
        if isinstance(t, ast.TList):
            return T.list_of(self.resolve_type(t.elem))
        if isinstance(t, ast.TArray):
            e, i = self.resolve_type(t.elem), self.resolve_type(t.index)
            if not (i.kind in ("player", "enum") or i.kind == "any"):
                self.error("E012", f"arrays are indexed by player, an enum or a grid, not {i}",
                           t.index.span)
            return T.array_of(e, i)
        if isinstance(t, ast.TOpt):
            return T.opt(self.resolve_type(t.inner))
        if isinstance(t, ast.TGraph):
            n = self.resolve_type(t.node)
            if n.kind not in ("enum", "any"):
                self.error("E044", f"a graph's nodes are the members of an enum or grid, not {n}",
                           t.node.span)
                return T.ANY
            return T.graph_of(n)
        raise AssertionError(t)

    def check_types_of_decls(self) -> None:
        p = self.p
        for name, d in p.params.items():
            t = self.resolve_type(d.type)
            if t.kind not in ("int", "bool", "enum"):
                self.error("E012", "parameters must be int, bool or an enum", d.type.span)
            p.param_types[name] = t
            if d.range is not None:
                bounds = _literal_range(d.range)
                if t.kind != "int" or bounds is None:
                    self.error("E041", "a parameter range is 'int in LO..HI' with integer "
                               "literals", d.range.span)
                elif bounds[0] > bounds[1]:
                    self.error("E041", f"empty parameter range {bounds[0]}..{bounds[1]}",
                               d.range.span)
                else:
                    p.param_ranges[name] = bounds
        for info in p.enums.values():
            if info.grid is not None:
                continue
            decl = next(d for d in p.module.decls
                        if isinstance(d, ast.EnumDecl) and d.name == info.name)
            info.fields = [(f.name, self.resolve_type(f.type)) for f in decl.fields]
        for v in p.state_vars:
            p.state_types[v.name] = self.resolve_type(v.type)
            if T.has_graph(p.state_types[v.name]):
                self.error("E044", "state cannot hold a graph; select it with a const or pass "
                           "it to a def", v.type.span)
        for g in p.graphs.values():
            self.check_graph(g)

    def check_graph(self, g: ast.GraphDecl) -> None:
        info = self.p.enums.get(g.node_type)
        if info is None:
            self.undefined("type", g.node_type, g.span, self.p.enums)
            return
        seen: dict[tuple[str, str], Span] = {}
        for e in g.edges:
            for end in (e.a, e.b):
                if end not in info.members:
                    self.undefined(f"member of {info.name}", end, e.span, info.members)
            if e.a == e.b:
                self.error("E012", f"edge from '{e.a}' to itself", e.span)
            key = tuple(sorted((e.a, e.b)))
            if key in seen:
                self.error("E011", f"duplicate edge {e.a} - {e.b}", e.span,
                           f"first given at {seen[key]}")
            seen[key] = e.span

    def apply_variant(self, variant: str | None, overrides: dict[str, object]) -> None:
        p = self.p
        p.param_exprs = {n: d.default for n, d in p.params.items()}
        for vd in p.variants.values():
            seen: dict[str, ast.Override] = {}
            for o in vd.overrides:
                if o.name not in p.params:
                    self.undefined("parameter", o.name, o.span, p.params)
                elif o.name in seen:  # the last would win without a word
                    self.error("E011", f"variant '{vd.name}' sets '{o.name}' twice", o.span,
                               f"first set at {seen[o.name].span}")
                seen.setdefault(o.name, o)
        if variant is not None:
            if variant not in p.variants:
                # str(): names may come from Python callers, not only from the CLI
                close = difflib.get_close_matches(str(variant), list(p.variants), n=1)
                notes = [f"did you mean '{close[0]}'?"] if close else []
                notes.append("variants: " + (", ".join(p.variants) or "(none)"))
                self.error("E026", f"unknown variant '{variant}'", Span(p.filename, 0, 0),
                           *notes)
            else:
                p.variant = variant
                for o in p.variants[variant].overrides:
                    if o.name in p.params:
                        p.param_exprs[o.name] = o.value
        for name, value in overrides.items():
            if name not in p.params:
                close = difflib.get_close_matches(str(name), list(p.params), n=1)
                notes = [f"did you mean '{close[0]}'?"] if close else []
                notes.append("parameters: " + (", ".join(p.params) or "(none)"))
                self.error("E018", f"unknown parameter '{name}'", Span("<command line>", 0, 0),
                           *notes)
                continue
            t = p.param_types.get(name, T.ANY)
            ok = ((t.kind == "int" and isinstance(value, int) and not isinstance(value, bool))
                  or (t.kind == "bool" and isinstance(value, bool))
                  or (t.kind == "enum" and isinstance(value, str)
                      and value in p.enums[t.name].members))
            if not ok:
                notes = []
                if t.kind == "enum":  # the members, and the one meant when only case differs
                    members = list(p.enums[t.name].members)
                    same = [m for m in members if str(value).lower() == m.lower()]
                    close = same or difflib.get_close_matches(str(value), members, n=1)
                    notes = [f"did you mean '{close[0]}'?"] if close else []
                    notes.append(f"{t.name}: {', '.join(members)}")
                self.error("E019", f"parameter '{name}' is {t}; {value!r} does not fit",
                           Span("<command line>", 0, 0), *notes)
                continue
            if t.kind == "enum":
                value = p.enums[t.name].members.index(value)
            else:  # plain values only: an IntEnum or a bool/str subclass must not reach code
                value = bool(value) if t.kind == "bool" else int(value)
            if not self.in_range(name, value, Span("<command line>", 0, 0), "-D"):
                continue
            p.param_values[name] = value
        # Literal defaults and variant values are checked against the range too.
        for name, e in p.param_exprs.items():
            if name in p.param_values:
                continue
            v = _literal_int(e)
            if v is not None:
                self.in_range(name, v, e.span, "value")

    def in_range(self, name: str, value: object, span: Span, what: str) -> bool:
        bounds = self.p.param_ranges.get(name)
        if bounds is None or not isinstance(value, int) or bounds[0] <= value <= bounds[1]:
            return True
        lo, hi = bounds
        self.error("E040", f"parameter '{name}' must be in {lo}..{hi}; {what} {value} is outside",
                   span, f"declared at {self.p.params[name].span}")
        return False

    def check_consts(self) -> None:
        p = self.p
        empty = _Scope()
        for name in p.params:
            self.expect(p.param_exprs[name], empty, _Ctx(pure=True), p.param_types[name])
            self.require_const(p.param_exprs[name])
        for d in p.consts.values():
            self.expect(d.value, empty, _Ctx(pure=True), self.resolve_type(d.type))
            self.require_const(d.value)
        for info in p.enums.values():
            for mname, args in zip(info.members, info.member_args):
                if len(args) != len(info.fields):
                    span = next((a.span for a in args), info.span)
                    self.error("E013", f"enum member '{mname}' takes {len(info.fields)} "
                               f"values, got {len(args)}", span)
                    continue
                for a, (_fname, ft) in zip(args, info.fields):
                    self.expect(a, empty, _Ctx(pure=True), ft)
                    self.require_const(a)
        for t in p.tables.values():
            self.check_table(t)

    def check_table(self, t: ast.TableDecl) -> None:
        ptypes = [self.resolve_type(f.type) for f in t.params]
        for f, pt in zip(t.params, ptypes):
            self.p.field_types[f] = pt
        ret = self.resolve_type(t.ret)
        self.p.def_ret[t.name] = ret
        for pt, f in zip(ptypes, t.params):
            if pt.kind not in ("int", "enum", "bool", "player"):
                self.error("E012", "table keys must be int, bool, player or an enum", f.span)
        for row in t.rows:
            if len(row.keys) != len(t.params):
                self.error("E013", f"table '{t.name}' has {len(t.params)} keys; this row "
                           f"gives {len(row.keys)}", row.span)
                continue
            for k, pt in zip(row.keys, ptypes):
                if k.kind == "name":
                    if pt.kind == "bool" and k.name in ("true", "false"):
                        continue
                    if pt.kind != "enum" or k.name not in self.p.enums[pt.name].members:
                        self.error("E012", f"'{k.name}' is not a value of {pt}", k.span)
                elif k.kind != "any" and pt.kind != "int":
                    self.error("E012", f"numeric key for a {pt} column", k.span)
                elif k.kind == "range" and k.lo > k.hi:
                    self.error("E024", "empty key range", k.span)
            self.expect(row.value, _Scope(), _Ctx(pure=True), ret)
            self.require_const(row.value)

    def require_const(self, e: ast.Expr) -> None:
        bad = self.find_nonconst(e)
        if bad is not None:
            self.error("E028", "this must be a constant (literals, parameters, constants, "
                       "enum values)", bad.span)

    def find_nonconst(self, e) -> ast.Expr | None:
        if isinstance(e, ast.Name):
            ref = self.p.refs.get(e)
            if ref is None or ref[0] in ("param", "const", "member", "enum_all", "local",
                                         "graph"):
                return None
            return e
        if isinstance(e, ast.Call):
            ref = self.p.refs.get(e)
            if ref and ref[0] != "builtin":
                return e
        for child in _children(e):
            bad = self.find_nonconst(child)
            if bad is not None:
                return bad
        return None

    def check_const_cycles(self) -> None:
        """Parameters and constants may use each other in any order, but not in a circle."""
        p = self.p
        exprs = {n: p.param_exprs[n] for n in p.params}
        exprs.update({n: d.value for n, d in p.consts.items()})
        spans = {n: d.span for n, d in list(p.params.items()) + list(p.consts.items())}
        deps = {n: sorted({self.p.refs[x][1] for x in _walk_names(e)
                           if self.p.refs.get(x, ("",))[0] in ("param", "const")})
                for n, e in exprs.items()}
        state: dict[str, int] = {}

        def visit(n: str, path: list[str]) -> None:
            state[n] = 1
            for m in deps.get(n, []):
                if state.get(m) == 1:
                    self.error("E032", f"'{m}' is defined in terms of itself "
                               f"({' -> '.join(path + [m])})", spans[m])
                elif m not in state:
                    visit(m, path + [m])
            state[n] = 2

        for n in exprs:
            if n not in state:
                visit(n, [n])

    def check_state(self) -> None:
        p = self.p
        scope = _Scope()
        self.initialising: set[str] = set(p.state_types)
        for v in p.state_vars:
            t = p.state_types[v.name]
            it = self.infer(v.init, scope, _Ctx(pure=True), t)
            self.initialising.discard(v.name)
            target = t
            while not T.compatible(target, it) and target.kind == "array":
                target = target.elem
            if not T.compatible(target, it):
                self.error("E012", f"'{v.name}' is {t}; its initial value is {it}", v.init.span)
            if v.visibility == "private" and not (t.kind == "array" and t.index == T.PLAYER):
                self.error("E029", "only per-player arrays (T[player]) can be private", v.span)
        self.initialising = set()

    # -- defs and phases
    def bind(self, node, name: str, t: T.Type) -> _Local:
        n = self.slot_seen[(self.owner, name)] = self.slot_seen.get((self.owner, name), 0) + 1
        slot = f"{self.owner}.{name}" if self.owner else name
        if n > 1:
            slot += f"#{n}"
        self.p.slots[node] = slot
        self.p.slot_names[slot] = name
        self.p.slot_types[slot] = t
        return _Local(slot, t)

    def declare_local(self, scope: _Scope, node, name: str, t: T.Type, span: Span) -> None:
        if scope.lookup(name) is not None:
            self.error("E025", f"'{name}' is already a local here; pick another name", span)
        elif name in self.global_names or name in RESERVED or name in self.members:
            self.error("E025", f"local '{name}' would hide a global name", span)
        scope.names[name] = self.bind(node, name, t)

    def check_def(self, d: ast.DefDecl) -> None:
        self.owner = d.name
        scope = _Scope()
        for f in d.params:
            self.declare_local(scope, f, f.name, self.resolve_type(f.type), f.span)
        ret = self.resolve_type(d.ret)
        self.p.def_ret[d.name] = ret
        ctx = _Ctx(pure=True, ret=ret, where="def")
        self.cur_def = d.name
        if isinstance(d.body, ast.Block):
            self.check_block(d.body, scope, ctx)
            if not _always_returns(d.body):
                self.error("E021", f"def '{d.name}' can reach its end without 'return'", d.span)
        else:
            self.expect(d.body, scope, ctx, ret)
        self.cur_def = None

    def check_phase(self, ph: ast.PhaseDecl) -> None:
        self.owner = ph.name
        scope = _Scope()
        for f in ph.params:
            self.declare_local(scope, f, f.name, self.resolve_type(f.type), f.span)
        self.cur_runner = ph.name
        self.check_block(ph.body, scope, _Ctx(where="phase"))

    def check_reachability(self) -> None:
        seen: set[str] = set()
        stack = ["<flow>"]
        while stack:
            cur = stack.pop()
            for name in self.runs.get(cur, []):
                if name not in seen:
                    seen.add(name)
                    stack.append(name)
        for name, ph in self.p.phases.items():
            if name not in seen:
                self.error("E017", f"phase '{name}' is never run from the flow", ph.span)
        # Phases are expanded in place, so a phase may (indirectly) run itself only when every
        # phase on the cycle bounds its open activations with `depth N`.
        phases = self.p.phases
        for ph in phases.values():
            if ph.depth is not None and not 1 <= ph.depth[0] <= MAX_PHASE_DEPTH:
                self.error("E034", f"a phase depth is 1..{MAX_PHASE_DEPTH}, not {ph.depth[0]}",
                           ph.depth[1])
        state: dict[str, int] = {}
        reported: set[str] = set()
        note = "a phase may run itself only if every phase on the cycle declares 'depth N'"

        def visit(n: str, path: list[str]) -> None:
            state[n] = 1
            for m in self.runs.get(n, []):
                if state.get(m) == 1:
                    cycle = path[path.index(m):]
                    bare = [x for x in cycle if phases[x].depth is None]
                    if bare:
                        at = m if m in bare else bare[0]
                        self.error("E030", f"phase '{at}' runs itself "
                                   f"({' -> '.join(path + [m])})", phases[at].span, note)
                        reported.update(cycle)
                elif m not in state:
                    visit(m, path + [m])
            state[n] = 2

        visit("<flow>", ["flow"])
        # A cycle the search above saw only in part (it meets finished phases): any phase that
        # reaches itself must declare a depth too.
        for name, ph in phases.items():
            if ph.depth is not None or name in reported or name not in seen:
                continue
            back = self._run_path(name, name)
            if back is not None:
                self.error("E030", f"phase '{name}' runs itself ({' -> '.join(back)})",
                           ph.span, note)
                reported.update(back)
        if not self.diags:
            self.check_expansion()

    def _run_path(self, start: str, goal: str) -> list[str] | None:
        """A shortest chain of runs from phase start to phase goal (at least one run)."""
        prev: dict[str, str] = {}
        todo = [start]
        while todo:
            nxt = []
            for n in todo:
                for m in self.runs.get(n, []):
                    if m == goal:
                        path = [m, n]
                        while path[-1] != start:
                            path.append(prev[path[-1]])
                        return path[::-1]
                    if m not in prev and m != start:
                        prev[m] = n
                        nxt.append(m)
            todo = nxt
        return None

    def check_expansion(self) -> None:
        """The lowering expands every `run` in place, re-entered phases up to their depth: the
        number of phase bodies that gives is bounded here (E035), before anything is built."""
        phases = self.p.phases
        memo: dict[tuple, int] = {}

        def copies(name: str, open_: tuple[str, ...]) -> int:
            key = (name, tuple(sorted(set(open_) & self._reaching(name))),
                   tuple(open_.count(x) for x in sorted(set(open_) & self._reaching(name))))
            if key in memo:
                return memo[key]
            total = 1
            inner = open_ + (name,)
            for m in self.runs.get(name, []):
                depth = phases[m].depth[0] if phases[m].depth is not None else 1
                if inner.count(m) < depth:
                    total += copies(m, inner)
                if total > MAX_PHASE_COPIES:
                    break
            memo[key] = total
            return total

        total = 0
        for m in self.runs.get("<flow>", []):
            total += copies(m, ())
            if total > MAX_PHASE_COPIES:
                worst = max((ph for ph in phases.values() if ph.depth is not None),
                            key=lambda ph: ph.depth[0], default=None)
                span = worst.depth[1] if worst is not None else phases[m].span
                self.error("E035", f"phases re-entered up to their depths expand to more than "
                           f"{MAX_PHASE_COPIES} phase bodies; lower a depth", span)
                return

    def _reaching(self, name: str) -> set[str]:
        """The phases that `name` runs, directly or through others (itself if on a cycle)."""
        cache = self.__dict__.setdefault("_reach_cache", {})
        if name not in cache:
            out: set[str] = set()
            todo = list(self.runs.get(name, []))
            while todo:
                m = todo.pop()
                if m not in out:
                    out.add(m)
                    todo.extend(self.runs.get(m, []))
            cache[name] = out
        return cache[name]

    def check_def_recursion(self) -> None:
        # Both back ends evaluate defs on the Python stack, so a recursive def would end in a
        # Python RecursionError instead of a rules diagnostic; loops and aggregates suffice.
        for start, d in self.p.defs.items():
            path, seen = [start], {start}
            stack = [(start, iter(self.def_calls.get(start, [])))]
            while stack:
                _name, callees = stack[-1]
                nxt = next(callees, None)
                if nxt is None:
                    stack.pop()
                    path.pop()
                elif nxt == start:
                    self.error("E030", f"def '{start}' calls itself "
                               f"({' -> '.join(path + [start])}); defs may not recurse", d.span)
                    break
                elif nxt not in seen:
                    seen.add(nxt)
                    path.append(nxt)
                    stack.append((nxt, iter(self.def_calls.get(nxt, []))))

    # -- statements
    def check_block(self, b: ast.Block, scope: _Scope, ctx: _Ctx) -> None:
        inner = _Scope(scope)
        for s in b.stmts:
            self.check_stmt(s, inner, ctx)

    def lvalue(self, lv: ast.LValue, scope: _Scope, ctx: _Ctx) -> T.Type:
        loc = scope.lookup(lv.name)
        if loc is not None:
            self.p.refs[lv] = ("local", loc.slot)
            t = loc.type
        elif lv.name in self.p.state_types:
            if ctx.pure:
                self.error("E016", f"a def cannot change state ('{lv.name}')", lv.span)
            self.p.refs[lv] = ("state", lv.name)
            t = self.p.state_types[lv.name]
        else:
            if lv.name in self.global_names:
                self.error("E015", f"'{lv.name}' cannot be assigned", lv.span)
            else:
                self.undefined("variable", lv.name, lv.span,
                               scope.all_names() + list(self.p.state_types))
            return T.ANY
        for ix in lv.indices:
            t = self.index_type(t, ix, scope, ctx, lv.span)
        self.p.types[lv] = t
        return t

    def index_type(self, t: T.Type, ix: ast.Expr, scope, ctx, span: Span) -> T.Type:
        t = T.strip(t)
        if t.kind == "array":
            self.expect(ix, scope, ctx, t.index)
            return t.elem
        if t.kind == "list":
            self.expect(ix, scope, ctx, T.INT)
            return t.elem
        if t.kind != "any":
            self.error("E012", f"cannot index a value of type {t}", span)
        self.infer(ix, scope, ctx)
        return T.ANY

    def check_stmt(self, s, scope: _Scope, ctx: _Ctx) -> None:
        if ctx.pure and isinstance(s, PAUSES):
            self.error("E016", "decisions, chance, 'run' and 'finish' are not allowed in a def",
                       s.span)
            return
        if ctx.where == "standing" and isinstance(s, PAUSES + (ast.Reveal,)):
            what = {ast.Choose: "a decision", ast.Chance: "chance", ast.Run: "'run'",
                    ast.Finish: "'finish'", ast.Reveal: "'reveal'"}[type(s)]
            self.error("E036", f"{what} is not allowed in a standing option (its body runs "
                       "between two asks of the same decision)", s.span)
            return
        if isinstance(s, ast.Let):
            want = self.resolve_type(s.type) if s.type is not None else None
            t = self.infer(s.value, scope, ctx, want)
            if want is not None:
                if not T.compatible(want, t):
                    self.error("E012", f"'{s.name}' is {want}; the value is {t}", s.value.span)
                t = want
            elif t.kind == "none":
                self.error("E012", f"cannot tell the type of '{s.name}' from none; write "
                           f"'let {s.name}: TYPE? = none'", s.span)
                t = T.ANY  # not also an error at every later assignment
            elif _has_any(t):
                self.error("E012", f"cannot tell the type of '{s.name}'; write 'let {s.name}: "
                           "TYPE = ...'", s.span)
            self.declare_local(scope, s, s.name, t, s.name_span or s.span)
        elif isinstance(s, ast.Assign):
            t = self.lvalue(s.target, scope, ctx)
            self.expect(s.value, scope, ctx, t)
        elif isinstance(s, ast.AugAssign):
            t = self.lvalue(s.target, scope, ctx)
            if not T.compatible(T.INT, t):
                self.error("E012", f"'{s.op}=' needs an int target, not {t}", s.target.span)
            self.expect(s.value, scope, ctx, T.INT)
        elif isinstance(s, (ast.Add, ast.Remove, ast.Push)):
            t = T.strip(self.lvalue(s.target, scope, ctx))
            kind = "list" if isinstance(s, ast.Push) else ("set", "list")
            if t.kind == "any":
                self.infer(s.value, scope, ctx)
            elif t.kind not in kind:
                verb = type(s).__name__.lower()
                self.error("E012", f"cannot '{verb}' on a value of type {t}", s.target.span)
                self.infer(s.value, scope, ctx)
            elif isinstance(s, ast.Add) and t.kind == "list":
                self.error("E012", "use 'push' to append to a list", s.span)
            else:
                self.expect(s.value, scope, ctx, t.elem)
        elif isinstance(s, ast.If):
            for cond, body in s.branches:
                self.expect(cond, scope, ctx, T.BOOL)
                self.check_block(body, scope, ctx)
            if s.orelse is not None:
                self.check_block(s.orelse, scope, ctx)
        elif isinstance(s, ast.For | ast.While) and ctx.loops == MAX_LOOP_NESTING:
            self.error("E033", f"loops nested more than {MAX_LOOP_NESTING} deep (the limit of "
                       "compiled engines); move the inner loops into a def", s.span)
        elif isinstance(s, ast.For):
            et = self.elem_type(s.iter, scope, ctx)
            inner = _Scope(scope)
            self.declare_local(inner, s, s.var, et, s.var_span or s.span)
            self.check_block(s.body, inner, _loop(ctx))
        elif isinstance(s, ast.While):
            self.expect(s.cond, scope, ctx, T.BOOL)
            self.check_block(s.body, scope, _loop(ctx))
        elif isinstance(s, ast.Return):
            if ctx.ret is None:
                self.error("E021", "'return' is only allowed in a def", s.span)
                self.infer(s.value, scope, ctx)
            else:
                self.expect(s.value, scope, ctx, ctx.ret)
        elif isinstance(s, ast.Break):
            if ctx.loops == 0:
                self.error("E022", "'break' outside a loop", s.span)
        elif isinstance(s, ast.Fail | ast.Finish):
            pass
        elif isinstance(s, ast.Reveal):
            if ctx.pure:
                self.error("E016", "'reveal' is not allowed in a def", s.span)
            self.reveals.append(s)
        elif isinstance(s, ast.Run):
            ph = self.p.phases.get(s.name)
            if ph is None:
                if s.name in self.p.defs or s.name in self.p.tables:
                    what = "def" if s.name in self.p.defs else "table"
                    self.error("E016", f"'{s.name}' is a {what}, not a phase: call it in an "
                               f"expression", s.span)
                else:
                    self.undefined("phase", s.name, s.span, self.p.phases)
                for a in s.args:
                    self.infer(a, scope, ctx)
                return
            self.runs.setdefault(self.cur_runner, []).append(s.name)
            self.p.refs[s] = ("phase", s.name)
            if len(s.args) != len(ph.params):
                self.error("E013", f"phase '{s.name}' takes {len(ph.params)} arguments, "
                           f"got {len(s.args)}", s.span)
            for a, f in zip(s.args, ph.params):
                self.expect(a, scope, ctx, self.resolve_type(f.type))
        elif isinstance(s, ast.Choose):
            self.check_choose(s, scope, ctx)
        elif isinstance(s, ast.Chance):
            vt = self.resolve_type(s.type)
            if not (T.is_discrete(vt) or vt.kind == "int"):
                self.error("E023", "a chance outcome must be int, bool, player or an enum",
                           s.type.span)
            self.expect(s.domain, scope, ctx, T.list_of(vt) if vt.kind == "int"
                        else T.Type("any"))
            et = self.elem_type(s.domain, scope, ctx)
            if not T.compatible(vt, et):
                self.error("E012", f"outcomes of '{s.name}' are {vt}; the domain holds {et}",
                           s.domain.span)
            self.declare_local(scope, s, s.var, vt, s.var_span or s.span)
            if s.weight is not None:
                self.expect(s.weight, scope, ctx, T.INT)
            if s.seen_by is not None:
                self.expect(s.seen_by, scope, ctx, T.opt(T.PLAYER))
                self.hidden_draws.add(s.name)
            else:
                self.public_draws.add(s.name)
            self.register_action(s.name, (vt,), s.span)
        else:
            raise AssertionError(s)

    def check_standing(self) -> None:
        """`standing p { ... }` declarations, after the flow (so every decision's option names
        are known): their options share one name space, with each other and with every
        decision (two equal action strings at one decision could not be told apart)."""
        names: dict[str, Span] = {}
        for sd in self.p.standing:
            self.owner = "standing"
            scope = _Scope()
            self.declare_local(scope, sd, sd.var, T.PLAYER, sd.span)
            for o in sd.options:
                if o.name in names:
                    self.error("E011", f"duplicate standing option '{o.name}'", o.span,
                               f"first declared at {names[o.name]}")
                elif o.name in self.choice_names:
                    self.error("E037", f"'{o.name}' is an option of a decision too (at "
                               f"{self.choice_names[o.name]}); a standing option needs a name "
                               "of its own", o.span)
                names.setdefault(o.name, o.span)
            self.check_options(sd.options, scope, _Ctx(where="standing"), False)
        self.owner = ""

    def check_choose(self, s: ast.Choose, scope: _Scope, ctx: _Ctx) -> None:
        self.expect(s.player, scope, ctx, T.PLAYER)
        for o in s.options:
            self.choice_names.setdefault(o.name, o.span)
        self.check_options(s.options, scope, ctx, s.secret, duplicates=True)
        if s.orelse is not None:
            self.check_block(s.orelse, scope, ctx)

    def check_options(self, options, scope: _Scope, ctx: _Ctx, secret: bool,
                      duplicates: bool = False) -> None:
        names: set[str] = set()
        ends = set(self.p.end_actions)
        for o in options:
            if o.name in names and duplicates:
                self.error("E011", f"duplicate option '{o.name}' in this choice", o.span)
            names.add(o.name)
            if o.annotation is not None:
                if o.annotation != "end":
                    self.error("E031", f"unknown annotation '@{o.annotation}' (known: @end)",
                               o.annotation_span or o.span)
                ends.add(o.name)
            inner = _Scope(scope)
            sig = []
            if len(o.params) > MAX_LOOP_NESTING:
                self.error("E033", f"an option takes at most {MAX_LOOP_NESTING} parameters",
                           o.params[MAX_LOOP_NESTING].span)
            for prm in o.params:
                pt = self.resolve_type(prm.type)
                sig.append(pt)
                if pt.kind == "int":
                    if not isinstance(prm.domain, ast.Range):
                        self.error("E023", f"int parameter '{prm.name}' needs a bounded domain: "
                                   "'in LO..HI' (optionally 'step N')", prm.span)
                    else:
                        self.expect(prm.domain, inner, ctx, T.list_of(T.INT))
                        self.require_const(prm.domain)
                elif not T.is_discrete(pt):
                    self.error("E023", f"action parameters must be int, bool, player or an enum,"
                               f" not {pt}", prm.span)
                elif prm.domain is not None:
                    et = self.elem_type(prm.domain, inner, ctx)
                    if not T.compatible(pt, et):
                        self.error("E012", f"'{prm.name}' is {pt}; its domain holds {et}",
                                   prm.domain.span)
                self.declare_local(inner, prm, prm.name, pt, prm.span)
            if o.when is not None:
                self.expect(o.when, inner, ctx, T.BOOL)
            self.check_block(o.body, inner, ctx)
            self.register_action(o.name, tuple(sig), o.span)
            if secret:
                self.secret_actions.add(o.name)
        self.p.end_actions = frozenset(ends)

    def register_action(self, name: str, sig: tuple[T.Type, ...], span: Span) -> None:
        prev = self.p.action_sigs.get(name)
        if prev is not None and prev != sig:
            self.error("E027", f"action '{name}' was declared with parameters "
                       f"({', '.join(map(str, prev))}); here ({', '.join(map(str, sig))})", span)
        self.p.action_sigs.setdefault(name, sig)

    # -- expressions
    def expect(self, e: ast.Expr, scope, ctx, want: T.Type) -> T.Type:
        got = self.infer(e, scope, ctx, want)
        if not T.compatible(want, got):
            self.error("E012", f"expected {want}, found {got}", e.span)
        return got

    def elem_type(self, e: ast.Expr, scope, ctx) -> T.Type:
        t = self.types_of(e, scope, ctx)
        t = T.strip(t)
        if t.kind in ("set", "list"):
            return t.elem
        if t.kind != "any":
            self.error("E012", f"cannot iterate over a value of type {t}", e.span)
        return T.ANY

    def types_of(self, e, scope, ctx) -> T.Type:
        if e in self.p.types:
            return self.p.types[e]
        return self.infer(e, scope, ctx)

    def _join_elements(self, items, scope: _Scope, ctx: _Ctx, wanted: T.Type | None) -> T.Type:
        """The common type of a literal's elements (the wanted one when the context gives it);
        an element that fits no common type is E012 at that element."""
        et = wanted or T.ANY
        for item in items:
            it = self.infer(item, scope, ctx, wanted)
            j = T.join(et, it)
            if j is None:
                self.error("E012", f"mixed element types {et} and {it}", item.span)
            else:
                et = j
        return et

    def infer(self, e: ast.Expr, scope: _Scope, ctx: _Ctx, want: T.Type | None = None) -> T.Type:
        t = self._infer(e, scope, ctx, want)
        self.p.types[e] = t
        return t

    def _infer(self, e, scope: _Scope, ctx: _Ctx, want: T.Type | None) -> T.Type:
        if isinstance(e, ast.IntLit):
            return T.INT
        if isinstance(e, ast.BoolLit):
            return T.BOOL
        if isinstance(e, ast.NoneLit):
            return T.NONE
        if isinstance(e, ast.Name):
            return self.infer_name(e, scope, want)
        if isinstance(e, ast.CondExpr):
            self.expect(e.cond, scope, ctx, T.BOOL)
            a = self.infer(e.then, scope, ctx, want)
            b = self.infer(e.orelse, scope, ctx, want)
            j = T.join(a, b)
            if j is None:
                self.error("E012", f"branches have different types: {a} and {b}", e.span)
                return T.ANY
            return j
        if isinstance(e, ast.BinOp):
            return self.infer_binop(e, scope, ctx, want)
        if isinstance(e, ast.Not):
            self.expect(e.operand, scope, ctx, T.BOOL)
            return T.BOOL
        if isinstance(e, ast.Neg):
            self.expect(e.operand, scope, ctx, T.INT)
            return T.INT
        if isinstance(e, ast.Range):
            self.expect(e.lo, scope, ctx, T.INT)
            self.expect(e.hi, scope, ctx, T.INT)
            if e.step is not None:
                self.expect(e.step, scope, ctx, T.INT)
            return T.list_of(T.INT)
        if isinstance(e, ast.Index):
            return self.index_type(self.infer(e.obj, scope, ctx), e.index, scope, ctx, e.span)
        if isinstance(e, ast.Attr):
            return self.infer_attr(e, scope, ctx)
        if isinstance(e, ast.Call):
            return self.infer_call(e, scope, ctx)
        if isinstance(e, ast.Agg):
            return self.infer_agg(e, scope, ctx)
        if isinstance(e, ast.Sort):
            et = self.elem_type(e.iter, scope, ctx)
            inner = _Scope(scope)
            self.declare_local(inner, e, e.var, et, e.var_span or e.span)
            for k in e.keys:
                kt = self.infer(k.key, inner, ctx)
                if not (T.compatible(T.INT, kt) or T.is_discrete(T.strip(kt))):
                    self.error("E012", f"sort keys must be int or ordered values, not {kt}",
                               k.span)
            return T.list_of(et)
        if isinstance(e, ast.ListLit | ast.SetLit):
            kind = "list" if isinstance(e, ast.ListLit) else "set"
            wanted = want.elem if want is not None and want.kind == kind else None
            et = self._join_elements(e.items, scope, ctx, wanted)
            if kind == "set" and not (T.is_discrete(T.strip(et)) or et.kind == "any"):
                self.error("E012", f"set elements must be player, bool or enum values, not {et}",
                           e.span)
            return T.Type(kind, elem=et)
        if isinstance(e, ast.Comp) and e.kind == "array":
            return self.infer_array_comp(e, scope, ctx, want)
        if isinstance(e, ast.ArrayLit):
            return self.infer_array_lit(e, scope, ctx, want)
        if isinstance(e, ast.Comp):
            et = self.elem_type(e.iter, scope, ctx)
            inner = _Scope(scope)
            self.declare_local(inner, e, e.var, et, e.var_span or e.span)
            if e.cond is not None:
                self.expect(e.cond, inner, ctx, T.BOOL)
            rt = self.infer(e.elem, inner, ctx)
            if e.kind == "set" and not T.is_discrete(T.strip(rt)):
                self.error("E012", f"set elements must be player, bool or enum values, not {rt}",
                           e.elem.span)
            return T.Type(e.kind, elem=T.strip(rt) if e.kind == "set" else rt)
        raise AssertionError(e)

    def infer_array_comp(self, e: ast.Comp, scope, ctx, want) -> T.Type:
        """`[k => v for k in C]`: C names a whole index type (an enum, a grid, players)."""
        ct = self.infer(e.iter, scope, ctx)
        ref = self.p.refs.get(e.iter) if isinstance(e.iter, ast.Name) else None
        if ref is not None and ref[0] == "enum_all":
            index = T.enum(ref[1])
        elif ref is not None and ref[0] == "players":
            index = T.PLAYER
        else:
            if ct.kind != "any":
                self.error("E042", "an array constructor runs over a whole index type: an enum "
                           f"or grid name, or players (not a {ct})", e.iter.span)
            index = T.ANY
        if e.key != e.var:
            self.error("E042", f"the key before '=>' must be the loop variable '{e.var}'",
                       e.key_span or e.span)
        inner = _Scope(scope)
        self.declare_local(inner, e, e.var, index, e.var_span or e.span)
        wanted = want.elem if want is not None and want.kind == "array" else None
        vt = self.infer(e.elem, inner, ctx, wanted)
        return T.ANY if index.kind == "any" else T.array_of(vt, index)

    def infer_array_lit(self, e: ast.ArrayLit, scope, ctx, want) -> T.Type:
        """`[Coal => 24, ...]`: every member of one enum (or grid) once, in any order."""
        index: T.Type | None = None
        at: dict[int, ast.Expr] = {}
        key_at: dict[int, ast.Expr] = {}
        ok = True
        for k, v in zip(e.keys, e.values):
            kt = self.infer(k, scope, ctx)
            ref = self.p.refs.get(k)
            if ref is None or ref[0] != "member":
                if kt.kind != "any":
                    self.error("E043", "a key of an array literal is a member of an enum or "
                               "grid, written by name", k.span)
                ok = False
                continue
            if index is None:
                index = kt
            elif kt != index:
                self.error("E043", f"this key is a {kt}; the first key is a {index}", k.span)
                ok = False
                continue
            if ref[2] in at:
                self.error("E043", f"member '{self.p.enums[ref[1]].members[ref[2]]}' is given "
                           "twice", k.span, f"first given at {key_at[ref[2]].span}")
                ok = False
                continue
            at[ref[2]] = v
            key_at[ref[2]] = k
        wanted = want.elem if want is not None and want.kind == "array" else None
        et = self._join_elements(e.values, scope, ctx, wanted)
        if index is None:
            return T.ANY
        members = self.p.enums[index.name].members
        missing = [m for i, m in enumerate(members) if i not in at]
        if missing and ok:
            shown = ", ".join(missing[:8]) + (", ..." if len(missing) > 8 else "")
            self.error("E043", f"this array literal does not give {shown} (an array literal "
                       f"names every member of {index.name} once)", e.span)
        elif ok:
            self.p.array_values[e] = tuple(at[i] for i in range(len(members)))
        return T.array_of(et, index)

    def infer_name(self, e: ast.Name, scope: _Scope, want: T.Type | None = None) -> T.Type:
        p = self.p
        if e.name in p.graphs and want is not None and T.strip(want).kind == "enum" and any(
                en == T.strip(want).name for en, _i in self.members.get(e.name, ())) and (
                scope.lookup(e.name) is None):
            # a graph named like a member of the enum wanted here (`Maps.Benelux` and the
            # graph `Benelux`): the member
            en, idx = next(x for x in self.members[e.name] if x[0] == T.strip(want).name)
            p.refs[e] = ("member", en, idx)
            return T.enum(en)
        loc = scope.lookup(e.name)
        if loc is not None:
            p.refs[e] = ("local", loc.slot)
            return loc.type
        if e.name in p.state_types:
            p.refs[e] = ("state", e.name)
            if e.name in getattr(self, "initialising", ()):
                self.error("E032", f"state '{e.name}' is used before it is initialised "
                           "(state is set up in declaration order)", e.span)
            return p.state_types[e.name]
        if e.name in p.params:
            p.refs[e] = ("param", e.name)
            return p.param_types.get(e.name, T.ANY)
        if e.name in p.consts:
            p.refs[e] = ("const", e.name)
            return self.resolve_type(p.consts[e.name].type)
        if e.name in p.enums:
            p.refs[e] = ("enum_all", e.name)
            return T.set_of(T.enum(e.name))
        if e.name in p.graphs:
            p.refs[e] = ("graph", e.name)
            node = p.graphs[e.name].node_type
            return T.graph_of(T.enum(node)) if node in p.enums else T.ANY
        if e.name == "players":
            p.refs[e] = ("players",)
            return T.list_of(T.PLAYER)
        if e.name == "num_players":
            p.refs[e] = ("num_players",)
            return T.INT
        if e.name in self.members:
            found = self.members[e.name]
            if len(found) > 1:
                self.error("E010", f"'{e.name}' is a member of several enums; qualify it",
                           e.span, *(f"write {en}.{e.name}" for en, _ in found))
                return T.ANY
            en, idx = found[0]
            p.refs[e] = ("member", en, idx)
            return T.enum(en)
        self.undefined("name", e.name, e.span,
                       scope.all_names() + list(self.global_names) + list(self.members)
                       + ["players", "num_players"])
        return T.ANY

    def infer_attr(self, e: ast.Attr, scope, ctx) -> T.Type:
        p = self.p
        if isinstance(e.obj, ast.Name) and e.obj.name in p.enums and scope.lookup(
                e.obj.name) is None:
            info = p.enums[e.obj.name]
            if e.name in info.members:
                p.refs[e] = ("member", info.name, info.members.index(e.name))
                return T.enum(info.name)
            self.undefined(f"member of {info.name}", e.name, e.name_span or e.span,
                           info.members)
            return T.ANY
        ot = T.strip(self.infer(e.obj, scope, ctx))
        if ot.kind == "enum":
            info = p.enums[ot.name]
            if info.grid is not None and e.name in ("col", "row"):
                p.refs[e] = ("cell", e.name)
                return T.INT
            names = [f for f, _ in info.fields]
            if e.name in names:
                i = names.index(e.name)
                p.refs[e] = ("field", info.name, i)
                return info.fields[i][1]
            names += ["col", "row"] if info.grid else []
            close = difflib.get_close_matches(e.name, names, n=1, cutoff=0.6)
            self.error("E010", f"undefined field '{e.name}' of {ot}", e.name_span or e.span,
                       *((f"did you mean '{close[0]}'?",) if close else ()),
                       f"fields of {ot}: {', '.join(names) or '(none)'}")
            return T.ANY
        if ot.kind != "any":
            self.error("E012", f"a value of type {ot} has no fields", e.span)
        return T.ANY

    def infer_binop(self, e: ast.BinOp, scope, ctx, want) -> T.Type:
        return BINARY_OPS[e.op].check(self, e, scope, ctx, want)

    def infer_call(self, e: ast.Call, scope, ctx) -> T.Type:
        p = self.p
        if e.name in p.defs:
            d = p.defs[e.name]
            p.refs[e] = ("def", e.name)
            if self.cur_def is not None:
                self.def_calls.setdefault(self.cur_def, []).append(e.name)
            self.call_args(e, [self.resolve_type(f.type) for f in d.params], scope, ctx)
            return self.resolve_type(d.ret)
        if e.name in p.tables:
            t = p.tables[e.name]
            p.refs[e] = ("table", e.name)
            self.call_args(e, [self.resolve_type(f.type) for f in t.params], scope, ctx)
            return self.resolve_type(t.ret)
        if e.name in BUILTINS:
            p.refs[e] = ("builtin", e.name)
            return BUILTIN_TABLE[e.name].check(self, e, scope, ctx)
        if e.name in p.phases:
            self.error("E016", f"'{e.name}' is a phase; start it with 'run {e.name}(...)'",
                       e.span)
            return T.ANY
        if e.name in AGGREGATES:  # sum(xs): an aggregate takes a generator, not a value
            self.error("E010", f"'{e.name}' is an aggregate, not a function: write "
                       f"{e.name}(x for x in ...)", e.span)
        else:
            self.undefined("function", e.name, e.span,
                           list(p.defs) + list(p.tables) + list(BUILTINS))
        for a in e.args:
            self.infer(a, scope, ctx)
        return T.ANY

    def call_args(self, e: ast.Call, want: list[T.Type], scope, ctx) -> list[T.Type]:
        if len(e.args) != len(want):
            self.error("E013", f"'{e.name}' takes {len(want)} argument"
                       f"{'s' if len(want) != 1 else ''}, got {len(e.args)}", e.span)
        got = []
        for i, a in enumerate(e.args):
            got.append(self.expect(a, scope, ctx, want[i]) if i < len(want)
                       else self.infer(a, scope, ctx))
        return got

    def infer_agg(self, e: ast.Agg, scope, ctx) -> T.Type:
        if e.func not in AGG_FUNCS:
            self.undefined("aggregate", e.func, e.span, AGG_FUNCS)
            return T.ANY
        et = self.elem_type(e.iter, scope, ctx)
        inner = _Scope(scope)
        self.declare_local(inner, e, e.var, et, e.var_span or e.span)
        if e.cond is not None:
            self.expect(e.cond, inner, ctx, T.BOOL)
        elem, result = AGGREGATES[e.func]
        if result is not None:
            self.expect(e.elem, inner, ctx, elem)
            return result
        return T.opt(self.infer(e.elem, inner, ctx))  # first


def _loop(ctx: _Ctx) -> _Ctx:
    return _Ctx(ctx.pure, ctx.ret, ctx.loops + 1, ctx.where)


def _has_any(t: T.Type) -> bool:
    return t.kind == "any" or any(_has_any(x) for x in (t.elem, t.index) if x is not None)


def _always_returns(b: ast.Block) -> bool:
    for s in b.stmts:
        if isinstance(s, ast.Return | ast.Fail):
            return True
        if isinstance(s, ast.If) and s.orelse is not None and all(
                _always_returns(body) for _c, body in s.branches) and _always_returns(s.orelse):
            return True
    return False


def _walk_names(e):
    """Every Name node inside an expression."""
    if isinstance(e, ast.Name):
        yield e
    for child in _children(e):
        yield from _walk_names(child)


def _children(e):
    """The sub-expressions of an expression node (used by generic walks)."""
    if isinstance(e, ast.CondExpr):
        return (e.cond, e.then, e.orelse)
    if isinstance(e, ast.BinOp):
        return (e.left, e.right)
    if isinstance(e, ast.Not | ast.Neg):
        return (e.operand,)
    if isinstance(e, ast.Range):
        return tuple(x for x in (e.lo, e.hi, e.step) if x is not None)
    if isinstance(e, ast.Index):
        return (e.obj, e.index)
    if isinstance(e, ast.Attr):
        return (e.obj,)
    if isinstance(e, ast.Call | ast.ListLit | ast.SetLit):
        return e.args if isinstance(e, ast.Call) else e.items
    if isinstance(e, ast.ArrayLit):
        return (*e.keys, *e.values)
    if isinstance(e, ast.Agg | ast.Comp):
        return tuple(x for x in (e.elem, e.iter, e.cond) if x is not None)
    if isinstance(e, ast.Sort):
        return (e.iter, *(k.key for k in e.keys))
    return ()


def check(module: ast.Module, source: str, filename: str, variant: str | None = None,
          params: dict[str, object] | None = None, included=None) -> Program:
    """Run every semantic pass; raise RulesError with all diagnostics if any fail.
    `included`: the files `include` pulled in (rulelang/include.py), for digest and messages."""
    program = Program(filename=filename, source=source, module=module)
    if included is not None:
        program.included = tuple(included.raw)
        program.included_texts = dict(included.texts)
    checker = Checker(program)
    try:
        checker.run(variant, dict(params or {}))
        if not checker.diags:
            from rulelang.view import check_view

            check_view(checker)
    except RecursionError:
        checker.error("E001", "input nested too deeply", Span(filename, 1, 1))
    if checker.diags:
        diags = sorted(checker.diags, key=lambda d: (d.span.file != filename, d.span.line,
                                                     d.span.col))
        if included is not None:  # a diagnostic in an included file says where it was included
            diags = included.annotate(diags)
        if len(diags) > MAX_DIAGNOSTICS:
            # Rendering is per diagnostic; thousands of cascading errors help nobody.
            last = diags[MAX_DIAGNOSTICS - 1]
            more = f"{len(diags) - MAX_DIAGNOSTICS} more errors not shown"
            diags = diags[:MAX_DIAGNOSTICS - 1] + [
                Diagnostic(last.code, last.message, last.span, (*last.notes, more))]
        raise RulesError(diags, source, program.included_texts)
    return program


def _literal_int(e: ast.Expr) -> int | None:
    """The value of an integer literal, possibly negated, else None."""
    if isinstance(e, ast.IntLit):
        return e.value
    if isinstance(e, ast.Neg) and isinstance(e.operand, ast.IntLit):
        return -e.operand.value
    return None


def _literal_range(e: ast.Expr) -> tuple[int, int] | None:
    """(lo, hi) of a `LO..HI` range of integer literals, else None."""
    if not isinstance(e, ast.Range) or e.step is not None:
        return None
    lo, hi = _literal_int(e.lo), _literal_int(e.hi)
    return None if lo is None or hi is None else (lo, hi)
