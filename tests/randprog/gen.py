"""Random well-typed rules programs (the Csmith method): every file the generator writes should
pass the checker, terminate, and play the same on both back ends.

`generate(seed)` returns a `Case`: the .rules text plus the configurations (variant, parameter
overrides, player count) to play it with. The generator tracks the type and the kind of every
name in scope, so it builds expressions of a wanted type only from what is legal there. Loops
are bounded by construction (small collections, `while` loops with their own counter), so games
end. Faults (division by zero, a table without a row, `fail`, an empty `min`, indexes out of
range, a `none` used as a value) are written on purpose, with a small probability, so that
both back ends are also compared on how they fail.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

INT, BOOL, PLAYER = "int", "bool", "player"


def set_of(t: str) -> str:
    return f"set<{t}>"


def list_of(t: str) -> str:
    return f"list<{t}>"


def is_set(t: str) -> bool:
    return t.startswith("set<")


def is_list(t: str) -> bool:
    return t.startswith("list<")


def elem(t: str) -> str:
    return t[t.index("<") + 1:-1]


def is_array(t: str) -> bool:
    return t.endswith("]")


def graph_of(en: str) -> str:
    return f"graph<{en}>"


def is_graph(t: str) -> bool:
    return t.startswith("graph<")


def array_parts(t: str) -> tuple[str, str]:
    """'int[Col][player]' -> ('int[Col]', 'player'): the last index is applied first."""
    head, _, idx = t[:-1].rpartition("[")
    return head, idx


@dataclass
class Var:
    name: str
    type: str
    kind: str  # state local loop oparam param const chance

    @property
    def assignable(self) -> bool:
        return self.kind in ("state", "local")


@dataclass
class Ctx:
    pure: bool = False  # in a def, score or table: no writes, no pauses
    loops: int = 0
    depth: int = 0
    pauses: bool = True  # may decide / roll / run here
    phase: int | None = None  # index of the phase being written (runs only earlier ones)
    ret: str | None = None


@dataclass
class Case:
    seed: int
    text: str
    configs: list[dict] = field(default_factory=list)  # {variant, params, players, seed}
    features: set[str] = field(default_factory=set)


class Gen:
    def __init__(self, seed: int, faults: float | None = None) -> None:
        self.seed = seed
        self.r = random.Random(seed)
        self.faults = faults if faults is not None else self.r.choice([0.0, 0.0, 0.02, 0.06])
        self.n = 0
        self.enums: dict[str, dict] = {}  # name -> {members, fields, grid}
        self.member_of: dict[str, str] = {}
        self.params: list[Var] = []
        self.param_values: dict[str, list] = {}
        self.consts: list[Var] = []
        self.state: list[Var] = []
        self.tables: list[tuple[str, list[str], str]] = []  # name, key types, result
        self.defs: list[tuple[str, list[str], str]] = []
        self.kept_defs: list[tuple[str, str]] = []  # gen_kept_def: name, result type
        self.keyed_defs: list[tuple[str, str]] = []  # gen_keyed_def: name, parameter enum
        self.big_defs: list[tuple[str, int, int]] = []  # gen_big_def: name, safe top, factor
        # gen_domain_defs: set def, its player parameter, its filter, bool def, enum
        self.domain_defs: list[tuple[str, str, str, str, str]] = []
        self.phases: list[tuple[str, list[str]]] = []
        self.deep_phases: set[int] = set()  # phases declared with `depth N`: may run themselves
        self.phase_text: dict[str, str] = {}  # phase name -> its body's lines
        self.graphs: list[tuple[str, str]] = []
        self.secret_actions: list[str] = []
        self.hidden_draws: list[str] = []  # chance names with `seen by` (a reveal may name them)
        self.variants: list[str] = []
        self.features: set[str] = set()
        self.budget = 0
        self.lo_players = 1
        self.hi_players = 4

    # -- helpers ---------------------------------------------------------------------------
    def name(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def pick(self, xs):
        return xs[self.r.randrange(len(xs))]

    def enum_types(self, grids: bool = True) -> list[str]:
        return [e for e, info in self.enums.items() if grids or not info["grid"]]

    def plain_types(self) -> list[str]:
        return [INT, BOOL, PLAYER, *self.enum_types()]

    def discrete_types(self) -> list[str]:
        return [BOOL, PLAYER, *self.enum_types()]

    # -- declarations ----------------------------------------------------------------------
    def gen_enums(self, out: list[str]) -> None:
        for _ in range(self.r.randint(1, 2)):
            name = self.name("En")
            k = self.r.randint(2, 4)
            members = [f"{name}M{i}" for i in range(k)]
            fields = self.chance(0.7)
            if fields:
                vals = [self.r.randint(0, 5) for _ in members]
                out.append(f"enum {name}(w: int) {{ "
                           + ", ".join(f"{m}({v})" for m, v in zip(members, vals)) + " }")
                self.features.add("enum fields")
            else:
                out.append(f"enum {name} {{ {', '.join(members)} }}")
            self.enums[name] = {"members": members, "fields": fields, "grid": None}
            for m in members:
                self.member_of[m] = name
        if self.chance(0.6):
            name = self.name("Gr")
            cols = self.r.randint(1, 3)
            rows = self.r.randint(1, 2)
            out.append(f"grid {name} cols 1..{cols} rows A..{'AB'[rows - 1]}")
            self.enums[name] = {"members": [f"{c}{'AB'[r]}" for r in range(rows)
                                            for c in range(1, cols + 1)],
                                "fields": False, "grid": (cols, rows)}
            self.features.add("grid")
        big = [e for e in self.enum_types(grids=False) if len(self.enums[e]["members"]) >= 3]
        if big and self.chance(0.5):
            en = self.pick(big)
            g = self.name("Gph")
            ms = self.enums[en]["members"]
            pairs = [(a, b) for i, a in enumerate(ms) for b in ms[i + 1:]]
            self.r.shuffle(pairs)
            edges = pairs[: self.r.randint(1, len(pairs))]
            out.append(f"graph {g}({en}) {{ "
                       + ", ".join(f"{a} - {b}: {self.r.randint(0, 6)}" for a, b in edges)
                       + " }")
            self.graphs.append((g, en))
            self.features.add("graph")
            if self.chance(0.6):  # a second map over the same cities: graph values choose
                g2 = self.name("Gph")
                self.r.shuffle(pairs)
                edges = pairs[: self.r.randint(1, len(pairs))]
                out.append(f"graph {g2}({en}) {{ "
                           + ", ".join(f"{a} - {b}: {self.r.randint(0, 6)}" for a, b in edges)
                           + " }")
                self.graphs.append((g2, en))

    def literal(self, t: str) -> str:
        """A constant of type t (for params, variants, table values)."""
        if t == INT:
            return str(self.r.randint(0, 6))
        if t == BOOL:
            return self.pick(["true", "false"])
        return self.pick(self.enums[t]["members"])

    def gen_params(self, out: list[str]) -> None:
        for _ in range(self.r.randint(1, 4)):
            t = self.pick([INT, BOOL, BOOL, *self.enum_types(grids=False)])
            name = self.name("pa")
            out.append(f"param {name}: {t} = {self.literal(t)}")
            self.params.append(Var(name, t, "param"))
        for _ in range(self.r.randint(0, 2)):
            v = self.name("var")
            sets = [p for p in self.params if self.chance(0.6)]
            body = " ".join(f"{p.name} = {self.literal(p.type)}" for p in sets)
            out.append(f"variant {v} {{ {body} }}")
            self.variants.append(v)
            self.features.add("variant")
        self.features.add("params")

    def gen_consts(self, out: list[str]) -> None:
        for _ in range(self.r.randint(0, 2)):
            name = self.name("K")
            t = self.pick([INT, INT, list_of(INT), *[set_of(e) for e in self.enum_types(False)]])
            if t == INT:
                env = [v for v in self.params + self.consts if v.type == INT]
                val = str(self.r.randint(0, 9))
                if env and self.chance(0.6):
                    val = f"{self.pick(env).name} + {val}"
            elif t == list_of(INT):
                val = "[" + ", ".join(str(self.r.randint(0, 4))
                                      for _ in range(self.r.randint(1, 4))) + "]"
            else:
                ms = self.enums[elem(t)]["members"]
                val = "{" + ", ".join(self.r.sample(ms, self.r.randint(1, len(ms)))) + "}"
            out.append(f"const {name}: {t} = {val}")
            self.consts.append(Var(name, t, "const"))
            self.features.add("const")
        bools = [p.name for p in self.params if p.type == BOOL]
        if self.graphs and bools and self.chance(0.7):
            # a map chosen by a parameter, as Power Grid chooses Benelux or Central Europe
            g, en = self.pick(self.graphs)
            others = [x for x, e2 in self.graphs if e2 == en]
            name = self.name("KG")
            out.append(f"const {name}: {graph_of(en)} = if {self.pick(bools)} then {g} "
                       f"else {self.pick(others)}")
            self.consts.append(Var(name, graph_of(en), "const"))
            self.features.add("graph value")

    def key_pat(self, t: str) -> str:
        if t == INT:
            lo = self.r.randint(-2, 5)
            return self.pick([str(lo), f"{lo}..{lo + self.r.randint(0, 3)}", f"{lo}..", "_"])
        if t == BOOL:
            return self.pick(["true", "false", "_"])
        if t == PLAYER:
            return "_"  # a player column takes only `_` (language.md 6.7)
        return self.pick([*self.enums[t]["members"], "_"])

    def gen_tables(self, out: list[str]) -> None:
        for _ in range(self.r.randint(0, 2)):
            name = self.name("tb")
            keys = [self.pick([INT, INT, BOOL, PLAYER, *self.enum_types(False)])
                    for _ in range(self.r.randint(1, 2))]
            ret = self.pick([INT, INT, BOOL, *self.enum_types(False)])
            rows = []
            for _ in range(self.r.randint(1, 4)):
                pats = [self.key_pat(k) for k in keys]
                key = pats[0] if len(pats) == 1 else f"({', '.join(pats)})"
                rows.append(f"{key} => {self.const_value(ret)}")
            if not self.chance(self.faults * 5):  # without a catch-all a lookup may fault
                any_key = "_" if len(keys) == 1 else f"({', '.join('_' for _ in keys)})"
                rows.append(f"{any_key} => {self.const_value(ret)}")
            else:
                self.features.add("fault: table without a row")
            params = ", ".join(f"k{i}: {k}" for i, k in enumerate(keys))
            out.append(f"table {name}({params}) -> {ret} {{ {', '.join(rows)} }}")
            self.tables.append((name, keys, ret))
            if BOOL in keys:
                self.features.add("table with bool key")
            self.features.add("table")

    def const_value(self, t: str) -> str:
        cands = [v.name for v in self.params + self.consts if v.type == t]
        if cands and self.chance(0.3):
            return self.pick(cands)
        return self.literal(t)

    def gen_state(self, out: list[str]) -> None:
        out.append("state {")
        enums = self.enum_types(False)
        specs = [("int", None), ("int[player]", None), ("bool", None), ("list<int>", None),
                 ("set<player>", None), ("player?", None), ("set<bool>", None)]
        for e in enums:
            specs += [(set_of(e), None), (f"int[{e}]", None), (f"{e}?", None)]
        for g in [e for e in self.enums if self.enums[e]["grid"]]:
            specs += [(set_of(g), None), (f"int[{g}]", None)]
        self.r.shuffle(specs)
        chosen = specs[: self.r.randint(3, min(8, len(specs)))]
        if not any(t == "int[player]" for t, _ in chosen):
            chosen.append(("int[player]", None))
        for t, _ in chosen:
            if t == "set<bool>":
                self.features.add("set of bool")
            name = self.name("sv")
            vis = ""
            if t == "int[player]" and self.chance(0.4):
                vis = " private"
                self.features.add("private")
            elif self.chance(0.15):
                vis = " hidden"
                self.features.add("hidden")
            init = self.expr(t, self.params + self.consts + self.state,
                             Ctx(pure=True, pauses=False), typed=True, init=True)
            out.append(f"  {name}: {t}{vis} = {init}")
            self.state.append(Var(name, t, "state"))
        out.append("}")

    def gen_defs(self, out: list[str]) -> None:
        for _ in range(self.r.randint(0, 3)):
            name = self.name("df")
            args = [self.pick(self.plain_types()) for _ in range(self.r.randint(0, 2))]
            if self.graphs and self.chance(0.3):
                args.append(graph_of(self.pick(self.graphs)[1]))
                self.features.add("graph value")
            ret = self.pick([INT, INT, BOOL, *self.enum_types(False)])
            env = self.globals_env() + [Var(f"a{i}_{name}", t, "local")
                                        for i, t in enumerate(args)]
            params = ", ".join(f"a{i}_{name}: {t}" for i, t in enumerate(args))
            ctx = Ctx(pure=True, pauses=False, ret=ret)
            if self.chance(0.5):
                out.append(f"def {name}({params}) -> {ret} = {self.expr(ret, env, ctx)}")
            else:
                lines = [f"def {name}({params}) -> {ret} {{"]
                body: list[str] = []
                self.budget = 4
                env2 = list(env)
                for _ in range(self.r.randint(0, 2)):
                    self.stmt_let(body, env2, ctx, 1)
                c = self.cond(env2, ctx, 0)
                body.append(f"  if {c} {{")
                body.append(f"    return {self.expr(ret, env2, ctx)}")
                body.append("  }")
                if self.faults and self.chance(0.5):
                    # a fail in a def the compiler may expand where it is called
                    # (plan_inlining): the same fault, at the same place, either way
                    body.append(f"  if {self.cond(env2, ctx, 1)} {{")
                    body.append(f'    fail "def fault {self.n}"')
                    body.append("  }")
                    self.features.add("fault: fail in def")
                body.append(f"  return {self.expr(ret, env2, ctx)}")
                out += lines + body + ["}"]
            self.defs.append((name, args, ret))
            self.features.add("def")
        if self.chance(0.5):
            self.gen_kept_def(out)
        if self.chance(0.5):
            self.gen_keyed_def(out)
        if self.chance(0.3):
            self.gen_big_def(out)
        if self.chance(0.35):
            self.gen_domain_defs(out)

    def gen_big_def(self, out: list[str]) -> None:
        """A def whose result comes near the int limit (10**100 - 1) for an argument in a small
        constant range: the compiler drops its limit check where the ranges of the arguments
        prove that the result fits (plan_int_ranges, analysis.int_bound), and must keep it
        where they do not (stmt_big and big_option call it with 0..top, and, in programs with
        faults, now and then with 0..top + 1, whose last value overflows)."""
        name = self.name("bg")
        a = f"a_{name}"
        top = self.r.randint(1, 4)
        factor = (10 ** 100 - 1) // top - self.r.randint(0, 9)
        out.append(f"def {name}({a}: int) -> int = {a} * {factor} - {self.r.randint(0, 9)}")
        self.big_defs.append((name, top, factor))
        self.features.add("big int def")

    def big_range(self) -> tuple[str, int, str]:
        """A big def, the range to call it over, and the divisor that brings it back down."""
        name, top, factor = self.pick(self.big_defs)
        if self.chance(self.faults * 5):
            top += 1
            self.features.add("fault: int limit")
        return name, top, str(factor)

    def gen_domain_defs(self, out: list[str]) -> None:
        """A def giving the members of an enum that pass a filter (`{y for y in E if P(y, a)}`)
        and a bool def over one member, either of which may fault: options range over the first
        and test the second, and the filter again, in their `when` (Automobile's
        build(m in build_spaces(p), ...) when can_build(p, m, ...)), the shapes a compiler may
        push down to the outer loop or drop as implied by the domain (domain_option)."""
        en = self.pick(self.enum_types())
        name = self.name("dm")
        a, y = f"a_{name}", self.name("dy")
        ctx = Ctx(pure=True, pauses=False, ret=set_of(en))
        test = self.filter_test(y, en, self.globals_env() + [Var(a, PLAYER, "local")], ctx)
        out.append(f"def {name}({a}: player) -> {set_of(en)} = {{{y} for {y} in {en} if {test}}}")
        bname = self.name("db")
        b = f"a_{bname}"
        body = self.filter_test(b, en, self.globals_env(), Ctx(pure=True, pauses=False, ret=BOOL))
        out.append(f"def {bname}({b}: {en}) -> bool = {body}")
        self.defs.append((bname, [en], BOOL))
        self.domain_defs.append((name, a, re.sub(rf"\b{y}\b", "@", test), bname, en))
        self.features.add("domain def")

    def gen_keyed_def(self, out: list[str]) -> None:
        """A def of the shape the compiler keeps per argument (codegen plan_keyed_defs): one
        enum parameter t, state read only as A[t] or, on a grid, as A[n] for n in neighbors(t);
        conditions call it often (cond), and statements write A at loop variables (a targeted
        forget) and at other indices (a whole forget) between the calls."""
        arrays = [v for v in self.state if is_array(v.type) and array_parts(v.type)[0] == INT
                  and array_parts(v.type)[1] in self.enums]
        if not arrays:
            return
        a = self.pick(arrays)
        en = array_parts(a.type)[1]
        same = [v.name for v in arrays if array_parts(v.type)[1] == en]
        name = self.name("kk")
        t = f"a_{name}"
        k = self.r.randint(0, 3)
        if self.enums[en]["grid"] and self.chance(0.7):
            b = self.pick(same)
            body = self.pick([
                f"{a.name}[{t}] + count({b}[n] > {k} for n in neighbors({t}))",
                f"sum({b}[n] for n in neighbors({t})) - {a.name}[{t}] * {k}",
                f"max({a.name}[{t}], sum({b}[n] * {k} for n in neighbors({t}) if {b}[n] != 0))",
            ])
            self.features.add("grid builtins")
        else:
            body = f"{a.name}[{t}] * {k} + sum({a.name}[{t}] + i for i in 0..{k})"
        out.append(f"def {name}({t}: {en}) -> int = {body}")
        self.defs.append((name, [en], INT))
        self.keyed_defs.append((name, en))
        self.features.add("keyed def")

    def gen_kept_def(self, out: list[str]) -> None:
        """A def of the shape the compiler keeps between writes (codegen plan_cached_defs): no
        parameters, a plain result, aggregates over state; conditions call it often (cond), so
        that statements writing what it reads come between its calls."""
        name = self.name("kd")
        ret = self.pick([INT, BOOL])
        env = self.globals_env()
        ctx = Ctx(pure=True, pauses=False, ret=ret)
        if ret == INT:
            body = f"{self.agg_int(env, ctx, 1)} + {self.agg_int(env, ctx, 1)}"
        else:
            body = (f"{self.agg_bool(env, ctx, 1)} or {self.agg_int(env, ctx, 1)} "
                    f"> {self.r.randint(0, 4)}")
        out.append(f"def {name}() -> {ret} = {body}")
        self.defs.append((name, [], ret))
        self.kept_defs.append((name, ret))
        self.features.add("kept def")

    def globals_env(self) -> list[Var]:
        return self.params + self.consts + self.state

    # -- expressions -----------------------------------------------------------------------
    def op(self, t: str, env: list[Var], ctx: Ctx, d: int = 0, typed: bool = False) -> str:
        """An expression of type t fit to be an operand: parenthesised unless atomic."""
        return wrap(self.expr(t, env, ctx, d, typed))

    def cond(self, env: list[Var], ctx: Ctx, d: int) -> str:
        """A bool for a statement's condition (a leading `if` would swallow the block)."""
        if self.keyed_defs and self.chance(0.25):
            name, en = self.pick(self.keyed_defs)
            return (f"{name}({self.expr(en, env, ctx, d + 1)}) "
                    f"{self.pick(['>', '<=', '!='])} {self.r.randint(0, 6)}")
        if self.kept_defs and self.chance(0.3):
            name, ret = self.pick(self.kept_defs)
            c = f"{name}()"
            if ret == INT:
                c += f" {self.pick(['>', '<='])} {self.r.randint(0, 9)}"
            if self.chance(0.5):
                return c
            return f"{c} {self.pick(['and', 'or'])} {self.op(BOOL, env, ctx, d + 1)}"
        c = self.expr(BOOL, env, ctx, d)
        return f"({c})" if c.startswith("if ") else c

    def vars_of(self, env: list[Var], t: str) -> list[Var]:
        return [v for v in env if v.type == t]

    def expr(self, t: str, env: list[Var], ctx: Ctx, d: int = 0, typed: bool = False,
             init: bool = False) -> str:
        """An expression of type t. `typed`: the context gives the type (so [] and {} fit)."""
        leaf = d >= 3 or self.chance(0.25 + 0.15 * d)
        if t.endswith("?"):
            inner = t[:-1]
            if self.chance(0.3):
                return "none"
            return self.expr(inner, env, ctx, d, typed, init)
        vs = self.vars_of(env, t)
        if vs and (leaf or self.chance(0.3)):
            return self.pick(vs).name
        if t == INT:
            return self.int_expr(env, ctx, d, leaf)
        if t == BOOL:
            return self.bool_expr(env, ctx, d, leaf)
        if t == PLAYER:
            return self.player_expr(env, ctx, d, leaf)
        if t in self.enums:
            return self.enum_expr(t, env, ctx, d, leaf)
        if is_set(t):
            return self.set_expr(t, env, ctx, d, leaf, typed)
        if is_list(t):
            return self.list_expr(t, env, ctx, d, leaf, typed)
        if is_array(t):
            return self.array_expr(t, env, ctx, d, init)
        if is_graph(t):
            return self.graph_expr(t, env, ctx, d)
        raise AssertionError(t)

    def array_expr(self, t, env, ctx, d, init) -> str:
        """An array: a constructor, a literal naming every member, or (a state initialiser)
        one value that fills it."""
        head, idx = array_parts(t)
        forms = ["build"]
        if idx != PLAYER and not self.enums[idx]["grid"]:  # cells have no literal
            forms.append("literal")
        if init:
            forms += ["fill", "fill"]
        form = self.pick(forms) if d < 3 else ("fill" if init else "build")
        if form == "fill":
            return self.expr(head, env, ctx, d + 1, typed=True, init=init)
        if form == "literal":
            ms = list(self.enums[idx]["members"])
            self.r.shuffle(ms)
            self.features.add("array literal")
            return "[" + ", ".join(f"{m} => {self.expr(head, env, ctx, d + 1, typed=True)}"
                                   for m in ms) + "]"
        x = self.name("ak")
        self.features.add("array constructor")
        value = self.expr(head, env + [Var(x, idx, "loop")], ctx, d + 1, typed=True)
        return f"[{x} => {value} for {x} in {idx if idx != PLAYER else 'players'}]"

    def graph_expr(self, t, env, ctx, d) -> str:
        en = elem(t)
        self.features.add("graph value")
        names = [g for g, e in self.graphs if e == en]
        forms = [lambda: self.pick(names)]
        vs = self.vars_of(env, t)
        if vs:
            forms += [lambda: self.pick(vs).name] * 2
        if d < 3:
            sub = lambda: self.op(t, env, ctx, d + 1)  # noqa: E731
            forms.append(lambda: f"if {self.op(BOOL, env, ctx, d + 1)} then {sub()} "
                                 f"else {sub()}")
        return self.pick(forms)()

    def coll_of(self, env: list[Var], ctx: Ctx, d: int, kinds=None) -> tuple[str, str]:
        """A small collection to iterate: (expression, element type)."""
        cands: list[tuple[str, str]] = [("players", PLAYER)]
        for e in self.enum_types():
            cands.append((e, e))
        for v in env:
            if is_set(v.type) or is_list(v.type):
                cands.append((v.name, elem(v.type)))
        cands.append((f"0..{self.r.randint(0, 3)}", INT))
        if self.chance(0.3):
            e = self.pick(self.enum_types())
            x = self.name("cx")
            cands.append(("{" + f"{x} for {x} in {e} if {self.cmp_member(x, e)}" + "}", e))
        if kinds:
            cands = [c for c in cands if c[1] in kinds] or cands
        return self.pick(cands)

    def cmp_member(self, x: str, e: str) -> str:
        ms = self.enums[e]["members"]
        if self.enums[e]["grid"]:
            return f"{x}.col >= {self.r.randint(1, 2)}"
        return f"{x} != {self.pick(ms)}"

    def int_expr(self, env, ctx, d, leaf) -> str:
        if leaf:
            opts = [lambda: str(self.r.randint(0, 9)), lambda: "num_players"]
            ints = self.vars_of(env, INT)
            if ints:
                opts.append(lambda: self.pick(ints).name)
            return self.pick(opts)()
        sub = lambda: self.op(INT, env, ctx, d + 1)  # noqa: E731
        forms = [
            lambda: f"{sub()} + {sub()}",
            lambda: f"{sub()} - {sub()}",
            lambda: f"{sub()} * {self.r.randint(0, 3)}",
            lambda: f"{sub()} // {self.r.randint(1, 4)}",
            lambda: f"{sub()} % {self.r.randint(1, 4)}",
            lambda: f"-{sub()}",
            lambda: f"abs({sub()})",
            lambda: f"{self.pick(['min', 'max'])}({sub()}, {sub()})",
            lambda: f"{self.pick(['ceil_div', 'round_up', 'round_down'])}({sub()}, "
                    f"{self.r.randint(1, 5)})",
            lambda: f"if {self.op(BOOL, env, ctx, d + 1)} then {sub()} else {sub()}",
            lambda: self.len_expr(env, ctx, d),
            lambda: self.agg_int(env, ctx, d),
        ]
        arrays = [v for v in env if is_array(v.type) and array_parts(v.type)[0] == INT]
        if arrays:
            def index():
                v = self.pick(arrays)
                return f"{v.name}[{self.expr(array_parts(v.type)[1], env, ctx, d + 1)}]"
            forms += [index, index]
        fielded = [e for e in self.enum_types(False) if self.enums[e]["fields"]]
        if fielded:
            forms.append(lambda: f"{self.enum_expr_paren(self.pick(fielded), env, ctx, d)}.w")
        grids = [e for e in self.enums if self.enums[e]["grid"]]
        if grids:
            forms.append(lambda: f"{self.enum_expr_paren(self.pick(grids), env, ctx, d)}"
                                 f".{self.pick(['col', 'row'])}")
        tables = [tb for tb in self.tables if tb[2] == INT]
        if tables:
            forms.append(lambda: self.call(self.pick(tables), env, ctx, d))
        defs = [df for df in self.defs if df[2] == INT]
        if defs:
            forms.append(lambda: self.call(self.pick(defs), env, ctx, d))
        lists = [v for v in env if v.type == list_of(INT)]
        if lists:
            def lindex():
                v = self.pick(lists).name
                if self.chance(self.faults * 3):
                    self.features.add("fault: index")
                    return f"{v}[{sub()}]"
                return f"(if len({v}) > 0 then {v}[abs({sub()}) % len({v})] else 0)"
            forms.append(lindex)
        if self.graphs:
            def cost():
                _g, en = self.pick(self.graphs)
                g = wrap(self.graph_expr(graph_of(en), env, ctx, d + 1))
                self.features.add("graph builtins")
                a = self.expr(set_of(en), env, ctx, d + 1, typed=True)
                b = self.expr(en, env, ctx, d + 1)
                if self.chance(self.faults * 4):
                    self.features.add("fault: none")
                    return f"path_cost({g}, {a}, {b})"
                return f"(if path_cost({g}, {a}, {b}) == none then 0 else path_cost({g}, {a}, {b}))"
            forms.append(cost)
        def position():
            t = self.pick([list_of(INT), list_of(PLAYER)])
            xs = wrap(self.expr(t, env, ctx, d + 1))
            x = self.op(elem(t), env, ctx, d + 1)
            self.features.add("index_of")
            if self.chance(self.faults * 4):
                self.features.add("fault: index_of")
                return f"index_of({xs}, {x})"
            return f"(if {x} in {xs} then index_of({xs}, {x}) else 0)"
        forms.append(position)
        if self.chance(self.faults * 3):
            self.features.add("fault: division")
            return f"{sub()} // {sub()}"
        return self.pick(forms)()

    def enum_expr_paren(self, e, env, ctx, d) -> str:
        x = self.enum_expr(e, env, ctx, d + 1, leaf=True)
        return f"({x})" if " " in x else x

    def len_expr(self, env, ctx, d) -> str:
        r = self.r.random()
        if r < 0.3:
            self.features.add("len of enum name")
            return f"len({self.pick(self.enum_types())})"
        c, _t = self.coll_of(env, ctx, d + 1)
        if c in self.enums:
            self.features.add("len of enum name")
        return f"len({c})"

    def agg_int(self, env, ctx, d) -> str:
        c, et = self.coll_of(env, ctx, d + 1)
        x = self.name("ag")
        inner = env + [Var(x, et, "loop")]
        self.features.add("aggregate")
        f = self.pick(["sum", "count", "min", "max"])
        body = self.expr(BOOL if f == "count" else INT, inner, ctx, d + 1)
        cond = f" if {self.expr(BOOL, inner, ctx, d + 2)}" if self.chance(0.4) else ""
        if f in ("min", "max") and not self.chance(self.faults * 5):
            # guarded: min/max of an empty collection is a fault
            return (f"(if count(true for {x} in {c}{cond}) > 0 "
                    f"then {f}({body} for {x} in {c}{cond}) else 0)")
        if f in ("min", "max"):
            self.features.add("fault: empty min/max")
        return f"{f}({body} for {x} in {c}{cond})"

    def call(self, fn, env, ctx, d) -> str:
        name, args, _ret = fn
        return f"{name}({', '.join(self.expr(a, env, ctx, d + 1) for a in args)})"

    def bool_expr(self, env, ctx, d, leaf) -> str:
        if leaf:
            bools = self.vars_of(env, BOOL)
            if bools and self.chance(0.7):
                return self.pick(bools).name
            return self.pick(["true", "false"])
        sub = lambda: self.op(BOOL, env, ctx, d + 1)  # noqa: E731
        isub = lambda: self.op(INT, env, ctx, d + 1)  # noqa: E731
        forms = [
            lambda: f"{isub()} {self.pick(['==', '!=', '<', '<=', '>', '>='])} {isub()}",
            lambda: f"{sub()} and {sub()}",
            lambda: f"{sub()} or {sub()}",
            lambda: f"not {sub()}",
            lambda: self.membership(env, ctx, d),
            lambda: self.agg_bool(env, ctx, d),
            lambda: self.compare_discrete(env, ctx, d),
        ]
        for kind, ret in (("tb", BOOL), ("df", BOOL)):
            fns = [f for f in (self.tables if kind == "tb" else self.defs) if f[2] == ret]
            if fns:
                forms.append(lambda fns=fns: self.call(self.pick(fns), env, ctx, d))
        opts = [v for v in env if v.type.endswith("?")]
        if opts:
            forms.append(lambda: f"{self.pick(opts).name} {self.pick(['==', '!='])} none")
        if self.graphs:
            def edge():
                _g, en = self.pick(self.graphs)
                g = wrap(self.graph_expr(graph_of(en), env, ctx, d + 1))
                self.features.add("graph builtins")
                return (f"edge_cost({g}, {self.expr(en, env, ctx, d + 1)}, "
                        f"{self.expr(en, env, ctx, d + 1)}) {self.pick(['==', '!='])} none")
            forms.append(edge)
        return self.pick(forms)()

    def compare_discrete(self, env, ctx, d) -> str:
        t = self.pick([PLAYER, *self.enum_types()])
        op = self.pick(["==", "!=", "<", ">="])
        return f"{self.op(t, env, ctx, d + 1)} {op} {self.op(t, env, ctx, d + 1)}"

    def membership(self, env, ctx, d) -> str:
        c, et = self.coll_of(env, ctx, d + 1)
        return f"{self.op(et, env, ctx, d + 1)} {self.pick(['in', 'not in'])} {wrap(c)}"

    def agg_bool(self, env, ctx, d) -> str:
        c, et = self.coll_of(env, ctx, d + 1)
        x = self.name("ag")
        inner = env + [Var(x, et, "loop")]
        self.features.add("aggregate")
        return (f"{self.pick(['any', 'all'])}({self.expr(BOOL, inner, ctx, d + 1)} "
                f"for {x} in {c})")

    def player_expr(self, env, ctx, d, leaf) -> str:
        ps = self.vars_of(env, PLAYER)
        if leaf:
            if ps and self.chance(0.7):
                return self.pick(ps).name
            return "players[0]"
        forms = [
            lambda: f"next_seat({self.expr(PLAYER, env, ctx, d + 1)})",
            lambda: f"seats_from({self.expr(PLAYER, env, ctx, d + 1)})[0]",
            lambda: f"players[{self.op(INT, env, ctx, d + 1)} % num_players]",
            lambda: f"if {self.op(BOOL, env, ctx, d + 1)} then "
                    f"{self.op(PLAYER, env, ctx, d + 1)} else {self.op(PLAYER, env, ctx, d + 1)}",
            lambda: self.sorted_first(env, ctx, d),
        ]
        return self.pick(forms)()

    def sorted_first(self, env, ctx, d) -> str:
        x = self.name("so")
        inner = env + [Var(x, PLAYER, "loop")]
        self.features.add("sort")
        keys = ", ".join(f"{self.expr(INT, inner, ctx, d + 1)}{self.pick(['', ' asc', ' desc'])}"
                         for _ in range(self.r.randint(1, 2)))
        return f"sort({x} in players by {keys})[0]"

    def enum_expr(self, t, env, ctx, d, leaf) -> str:
        info = self.enums[t]
        vs = self.vars_of(env, t)
        if info["grid"]:
            if vs and self.chance(0.7):
                return self.pick(vs).name
            cols, rows = info["grid"]
            x = self.name("c")
            return (f"first({x} for {x} in {t} if {x}.col == {self.r.randint(1, cols)} "
                    f"and {x}.row == {self.r.randint(0, rows - 1)})")
        if leaf or self.chance(0.5):
            if vs and self.chance(0.5):
                return self.pick(vs).name
            m = self.pick(info["members"])
            return m if self.chance(0.7) else f"{t}.{m}"
        forms = [lambda: f"if {self.op(BOOL, env, ctx, d + 1)} then "
                         f"{self.op(t, env, ctx, d + 1)} else {self.op(t, env, ctx, d + 1)}"]
        fns = [f for f in self.tables + self.defs if f[2] == t]
        if fns:
            forms.append(lambda: self.call(self.pick(fns), env, ctx, d))
        return self.pick(forms)()

    def set_expr(self, t, env, ctx, d, leaf, typed) -> str:
        et = elem(t)
        if leaf:
            if et in self.enums and not self.enums[et]["grid"] and self.chance(0.5):
                return et
            if typed:
                return "{}"
            return "{" + f"{self.expr(et, env, ctx, d + 1)}" + "}"
        sub = lambda: self.op(t, env, ctx, d + 1, typed=True)  # noqa: E731
        forms = [
            lambda: f"{sub()} + {sub()}",
            lambda: f"{sub()} - {sub()}",
            lambda: "{" + ", ".join(self.expr(et, env, ctx, d + 1)
                                    for _ in range(self.r.randint(1, 3))) + "}",
        ]
        src = et if et in self.enums else {PLAYER: "players", BOOL: "{false, true}"}.get(et)
        if src is not None:
            def comp():
                x = self.name("sc")
                inner = env + [Var(x, et, "loop")]
                self.features.add("comprehension")
                return "{" + f"{x} for {x} in {src} if {self.expr(BOOL, inner, ctx, d + 1)}" + "}"
            forms.append(comp)
        if et in self.enums and self.enums[et]["grid"]:
            forms.append(lambda: f"connected({self.expr(et, env, ctx, d + 1)}, {sub()})")
            self.features.add("grid builtins")
        return self.pick(forms)()

    def list_expr(self, t, env, ctx, d, leaf, typed) -> str:
        et = elem(t)
        if leaf:
            if et == PLAYER:
                return "players"
            if et == INT:
                return self.pick(["[]" if typed else "[0]", f"0..{self.r.randint(0, 3)}",
                                  f"[{self.r.randint(0, 5)}, {self.r.randint(0, 5)}]"])
            if typed:
                return "[]"
            return f"[{self.expr(et, env, ctx, d + 1)}]"
        sub = lambda: self.op(t, env, ctx, d + 1, typed=True)  # noqa: E731
        forms = [lambda: f"{sub()} + {sub()}"]

        def backwards():
            self.features.add("reversed")
            if et in self.enums or et == PLAYER:
                if self.chance(0.5):
                    return f"reversed({self.expr(set_of(et), env, ctx, d + 1, typed=True)})"
            return f"reversed({self.expr(t, env, ctx, d + 1, typed=True)})"
        forms.append(backwards)
        if et == INT:
            forms += [
                lambda: (f"{self.r.randint(0, 2)}..{self.r.randint(0, 4)} "
                         f"step {self.r.randint(1, 2)}"),
                lambda: self.list_comp(INT, env, ctx, d),
                lambda: self.list_sort(t, env, ctx, d),
            ]
        if et == PLAYER:
            forms += [lambda: f"seats_from({self.expr(PLAYER, env, ctx, d + 1)})",
                      lambda: self.list_sort(t, env, ctx, d)]
        if et in self.enums:
            forms.append(lambda: f"as_list({self.expr(set_of(et), env, ctx, d + 1, typed=True)})")
            if self.enums[et]["grid"]:
                forms.append(lambda: f"neighbors({self.expr(et, env, ctx, d + 1)})")
            for g, en in self.graphs:
                if en == et:
                    forms.append(lambda g=g: f"graph_neighbors({g}, "
                                             f"{self.expr(et, env, ctx, d + 1)})")
        return self.pick(forms)()

    def list_comp(self, et, env, ctx, d) -> str:
        c, ct = self.coll_of(env, ctx, d + 1)
        x = self.name("lc")
        inner = env + [Var(x, ct, "loop")]
        self.features.add("comprehension")
        cond = f" if {self.expr(BOOL, inner, ctx, d + 2)}" if self.chance(0.5) else ""
        return f"[{self.expr(et, inner, ctx, d + 1)} for {x} in {c}{cond}]"

    def list_sort(self, t, env, ctx, d) -> str:
        src = self.op(t, env, ctx, d + 1)
        x = self.name("so")
        inner = env + [Var(x, elem(t), "loop")]
        self.features.add("sort")
        key = self.expr(INT, inner, ctx, d + 1)
        return f"sort({x} in {src} by {key}{self.pick(['', ' desc'])})"

    # -- statements ------------------------------------------------------------------------
    def block(self, out: list[str], env: list[Var], ctx: Ctx, ind: int,
              n: int | None = None) -> None:
        env = list(env)
        count = n if n is not None else self.r.randint(1, 4 if ctx.depth < 2 else 2)
        for _ in range(count):
            if self.budget <= 0:
                break
            self.budget -= 1
            self.stmt(out, env, ctx, ind)

    def stmt(self, out, env, ctx, ind) -> None:
        deep = ctx.depth >= 3
        kinds = [("let", 3), ("assign", 6), ("coll", 2)]
        if not deep:
            kinds += [("if", 3), ("for", 2), ("while", 1)]
            if self.big_defs and not ctx.pure:
                kinds.append(("big", 0.7))
        if not ctx.pure and ctx.pauses:
            kinds += [("choose", 3), ("chance", 2)]
            if self.runnable(ctx):
                kinds.append(("run", 2))
            if self.secret_actions or self.hidden_draws:
                kinds.append(("reveal", 1))
        if ctx.loops and not ctx.pure:
            kinds.append(("break", 1))
        if not ctx.pure:
            kinds.append(("fault", 1 if self.faults else 0))
            if ctx.pauses:  # (a standing option's body may not finish)
                kinds.append(("finish", 0.3))
        total = sum(w for _k, w in kinds)
        x = self.r.random() * total
        chosen = kinds[-1][0]
        for k, w in kinds:
            x -= w
            if x < 0:
                chosen = k
                break
        getattr(self, f"stmt_{chosen}")(out, env, ctx, ind)

    def runnable(self, ctx) -> list[int]:
        limit = len(self.phases) if ctx.phase is None else ctx.phase
        if ctx.phase is not None and ctx.phase in self.deep_phases:
            limit += 1  # re-entry, bounded by the depth (a run past it is a fault)
        return list(range(limit))

    def pad(self, ind: int) -> str:
        return "  " * ind

    def stmt_let(self, out, env, ctx, ind) -> None:
        t = self.pick([INT, INT, BOOL, PLAYER, *self.enum_types(), list_of(INT),
                       set_of(PLAYER), f"{self.pick(self.enum_types())}?",
                       f"int[{self.pick([PLAYER, *self.enum_types()])}]",
                       *[graph_of(en) for _g, en in self.graphs[:1]]])
        name = self.name("lo")
        annotate = (self.chance(0.5) or t.endswith("?") or is_set(t) or is_list(t)
                    or is_array(t))
        value = self.expr(t, env, ctx, 1, typed=annotate)
        out.append(f"{self.pad(ind)}let {name}{': ' + t if annotate else ''} = {value}")
        env.append(Var(name, t, "local"))
        self.features.add("let")

    def stmt_assign(self, out, env, ctx, ind) -> None:
        targets = [v for v in env if v.assignable and (not ctx.pure or v.kind == "local")]
        if not targets:
            return self.stmt_let(out, env, ctx, ind)
        v = self.pick(targets)
        lhs, t = v.name, v.type
        if is_array(t) and self.chance(0.25):
            out.append(f"{self.pad(ind)}{lhs} = {self.array_expr(t, env, ctx, 1, False)}")
            return
        while is_array(t):
            t, idx = array_parts(t)
            lhs += f"[{self.expr(idx, env, ctx, 2)}]"
        if t == INT and self.chance(0.5):
            out.append(f"{self.pad(ind)}{lhs} {self.pick(['+=', '-='])} "
                       f"{self.expr(INT, env, ctx, 1)}")
        else:
            out.append(f"{self.pad(ind)}{lhs} = {self.expr(t, env, ctx, 1, typed=True)}")

    def stmt_coll(self, out, env, ctx, ind) -> None:
        colls = [v for v in env if v.assignable and (is_set(v.type) or is_list(v.type))
                 and (not ctx.pure or v.kind == "local")]
        if not colls:
            return self.stmt_assign(out, env, ctx, ind)
        v = self.pick(colls)
        et = elem(v.type)
        x = self.expr(et, env, ctx, 2)
        if is_list(v.type):
            if self.chance(0.8):
                out.append(f"{self.pad(ind)}push {x} to {v.name}")
                return
        elif self.chance(0.6):
            out.append(f"{self.pad(ind)}add {x} to {v.name}")
            return
        if self.chance(self.faults * 5):
            self.features.add("fault: remove")
            out.append(f"{self.pad(ind)}remove {x} from {v.name}")
        else:
            out.append(f"{self.pad(ind)}if {wrap(x)} in {v.name} {{")
            out.append(f"{self.pad(ind + 1)}remove {x} from {v.name}")
            out.append(f"{self.pad(ind)}}}")

    def sub(self, ctx: Ctx, loop: bool = False) -> Ctx:
        return Ctx(ctx.pure, ctx.loops + (1 if loop else 0), ctx.depth + 1, ctx.pauses,
                   ctx.phase, ctx.ret)

    def stmt_if(self, out, env, ctx, ind) -> None:
        bparams = [p for p in self.params if p.type == BOOL]
        if bparams and self.chance(0.4):
            p = self.pick(bparams).name
            cond = self.pick([p, f"not {p}", f"{p} and {self.expr(BOOL, env, ctx, 2)}"])
            self.features.add("if on a bool param")
        else:
            cond = self.cond(env, ctx, 1)
        out.append(f"{self.pad(ind)}if {cond} {{")
        self.block(out, env, self.sub(ctx), ind + 1)
        for _ in range(self.r.randint(0, 1)):
            out.append(f"{self.pad(ind)}}} elif {self.cond(env, ctx, 1)} {{")
            self.block(out, env, self.sub(ctx), ind + 1)
        if self.chance(0.4):
            out.append(f"{self.pad(ind)}}} else {{")
            self.block(out, env, self.sub(ctx), ind + 1)
        out.append(f"{self.pad(ind)}}}")

    def stmt_for(self, out, env, ctx, ind) -> None:
        c, et = self.coll_of(env, ctx, 1)
        x = self.name("it")
        out.append(f"{self.pad(ind)}for {x} in {c} {{")
        self.block(out, env + [Var(x, et, "loop")], self.sub(ctx, loop=True), ind + 1)
        out.append(f"{self.pad(ind)}}}")
        if ctx.loops:
            self.features.add("nested loops")

    def stmt_while(self, out, env, ctx, ind) -> None:
        w = self.name("w")
        out.append(f"{self.pad(ind)}let {w} = 0")
        env.append(Var(w, INT, "loop"))  # read-only: only the increment below changes it
        cond = f"{w} < {self.r.randint(1, 3)}"
        if self.chance(0.5):
            cond += f" and {self.op(BOOL, env, ctx, 2)}"  # wrapped: `or` binds looser
        out.append(f"{self.pad(ind)}while {cond} {{")
        self.block(out, env, self.sub(ctx, loop=True), ind + 1)
        out.append(f"{self.pad(ind + 1)}{w} += 1")
        out.append(f"{self.pad(ind)}}}")
        self.features.add("while")

    def stmt_big(self, out, env, ctx, ind) -> None:
        """A loop over a small constant range calling a big def (gen_big_def)."""
        name, top, factor = self.big_range()
        i = self.name("it")
        out.append(f"{self.pad(ind)}for {i} in 0..{top} {{")
        ints = [v for v in env if v.type == INT and v.assignable]
        if ints and self.chance(0.7):
            v = self.pick(ints).name
            out.append(f"{self.pad(ind + 1)}{v} = {v} % 1000 + {name}({i}) // {factor}")
        else:
            out.append(f"{self.pad(ind + 1)}let {self.name('bl')} = {name}({i}) - {name}({i})")
        out.append(f"{self.pad(ind)}}}")

    def stmt_break(self, out, env, ctx, ind) -> None:
        out.append(f"{self.pad(ind)}if {self.cond(env, ctx, 1)} {{")
        out.append(f"{self.pad(ind + 1)}break")
        out.append(f"{self.pad(ind)}}}")
        self.features.add("break")

    def stmt_fault(self, out, env, ctx, ind) -> None:
        out.append(f"{self.pad(ind)}if {self.cond(env, ctx, 1)} {{")
        out.append(f'{self.pad(ind + 1)}fail "random fault {self.n}"')
        out.append(f"{self.pad(ind)}}}")
        self.features.add("fault: fail")

    def stmt_finish(self, out, env, ctx, ind) -> None:
        out.append(f"{self.pad(ind)}if {self.cond(env, ctx, 1)} {{")
        out.append(f"{self.pad(ind + 1)}finish")
        out.append(f"{self.pad(ind)}}}")
        self.features.add("finish")

    def stmt_reveal(self, out, env, ctx, ind) -> None:
        pool = self.secret_actions + self.hidden_draws
        names = self.r.sample(pool, self.r.randint(1, len(pool)))
        if any(n in self.hidden_draws for n in names):
            self.features.add("reveal of a draw")
        out.append(f"{self.pad(ind)}reveal {', '.join(names)}")
        self.features.add("reveal")

    def stmt_run(self, out, env, ctx, ind) -> None:
        k = self.pick(self.runnable(ctx))
        name, args = self.phases[k]
        values = ", ".join(self.expr(a, env, ctx, 1) for a in args)
        out.append(f"{self.pad(ind)}run {name}({values})")
        self.features.add("phase")
        if k == ctx.phase:
            self.features.add("phase re-entry")
            if ctx.loops:
                self.features.add("phase re-entry in a loop")

    def oparam(self, env, ctx) -> tuple[str, str, str]:
        t = self.pick([INT, INT, BOOL, BOOL, PLAYER, *self.enum_types()])
        if t == INT:
            lo = self.r.randint(0, 2)
            ints = [p.name for p in self.params + self.consts if p.type == INT]
            hi = str(lo + self.r.randint(0, 3))
            if ints and self.chance(0.3):
                hi = f"{lo} + {self.pick(ints)} % 3"
            step = f" step {self.r.randint(1, 2)}" if self.chance(0.2) else ""
            return t, f" in {lo}..{hi}{step}", ""
        if t == BOOL:
            self.features.add("bool decision parameter")
            return t, "", ""
        if self.chance(0.5):
            c, _ = self.coll_of(env, ctx, 1, kinds=[t])
            if _ == t:
                return t, f" in {c}", ""
        return t, "", ""

    def layered_option(self, env, ctx) -> tuple[list[str], list[Var], str]:
        """An option of 2-3 parameters whose `when` is a chain of conjuncts, each reading a
        prefix of the parameters (in shuffled order, so a conjunct on the outer parameters may
        come after one on the inner ones, and any of them may fault), and whose enum or player
        parameters may range over a comprehension whose filter the `when` tests again: the
        shapes a compiler may push down to the outer loops or drop as implied by the domain.
        The order of the legal actions and the first fault must not change."""
        params: list[str] = []
        inner = list(env)
        conjuncts: list[str] = []
        for _ in range(self.r.randint(2, 3)):
            t = self.pick([INT, BOOL, PLAYER, *self.enum_types()])
            pn = self.name("x")
            dom = ""
            if t == INT:
                lo = self.r.randint(0, 2)
                dom = f" in {lo}..{lo + self.r.randint(0, 3)}"
            elif t != BOOL and self.chance(0.6):
                src = t if t in self.enums else "players"
                test = self.filter_test(pn, t, inner, ctx)
                y = self.name("sc")
                filt = re.sub(rf"\b{pn}\b", y, test)
                dom = f" in {{{y} for {y} in {src} if {filt}}}"
                conjuncts.append(f"({test})")
                self.features.add("filtered domain")
            elif t != BOOL and self.chance(0.3):
                c, ct = self.coll_of(inner, ctx, 1, kinds=[t])
                if ct == t:
                    dom = f" in {c}"
            params.append(f"{pn}: {t}{dom}")
            inner.append(Var(pn, t, "oparam"))
            for _ in range(self.r.randint(0, 2)):
                conjuncts.append(self.op(BOOL, inner, ctx, 1))
        if not conjuncts:
            conjuncts.append(self.op(BOOL, inner, ctx, 1))
        self.r.shuffle(conjuncts)
        self.features.add("layered when")
        return params, inner, " when " + " and ".join(conjuncts)

    def big_option(self, env, ctx) -> tuple[list[str], list[Var], str]:
        """An int parameter over a small constant range whose `when` calls a big def."""
        name, top, factor = self.big_range()
        pn = self.name("x")
        when = f" when {name}({pn}) // {factor} != {self.r.randint(0, top)}"
        return [f"{pn}: int in 0..{top}"], env + [Var(pn, INT, "oparam")], when

    def range_option(self, env, ctx) -> tuple[list[str], list[Var], str]:
        """A player or bool parameter, then an int one over a constant range (at times from
        below zero, at times by a step), whose `when` is a few comparisons of the int with
        expressions of the rest, at times mixed with any test: the passing values of the int
        are one run when every test is monotone in it (passes.py, plan_range_slices)."""
        outer = self.name("x")
        t = self.pick([PLAYER, PLAYER, BOOL])
        inner = env + [Var(outer, t, "oparam")]
        k = self.name("x")
        lo = self.r.randint(-4, 2)
        step = self.r.randint(1, 3)
        params = [f"{outer}: {t}", f"{k}: int in {lo}..{lo + self.r.randint(0, 9)}"
                  + (f" step {step}" if step > 1 else "")]
        conjuncts = []
        for _ in range(self.r.randint(1, 3)):
            e = self.op(INT, inner, ctx, 2)
            conjuncts.append(self.pick([f"{k} <= {e}", f"{k} < {e}", f"{e} <= {k}",
                                        f"-{k} <= {e}", f"2 * {k} + 1 >= {e}",
                                        f"{k} - {self.r.randint(0, 3)} > {e}"]))
        inner = inner + [Var(k, INT, "oparam")]
        if self.chance(0.25):
            conjuncts.append(self.op(BOOL, inner, ctx, 1))
        self.r.shuffle(conjuncts)
        self.features.add("range option")
        return params, inner, " when " + " and ".join(conjuncts)

    def domain_option(self, env, ctx) -> tuple[list[str], list[Var], str]:
        """An option over a domain def's set, its `when` calling the bool def and the domain's
        filter again (gen_domain_defs), the conjuncts in random order, with at times an int
        parameter after it."""
        name, a, test, bname, en = self.pick(self.domain_defs)
        who = self.op(PLAYER, env, ctx, 2)
        pn = self.name("x")
        params = [f"{pn}: {en} in {name}({who})"]
        inner = env + [Var(pn, en, "oparam")]
        again = re.sub(rf"\b{a}\b", lambda _m: who, test).replace("@", pn)
        conjuncts = [f"{bname}({pn})", f"({again})"]
        if self.chance(0.5):
            k = self.name("x")
            params.append(f"{k}: int in 0..{self.r.randint(1, 3)}")
            inner.append(Var(k, INT, "oparam"))
            conjuncts.append(self.op(BOOL, inner, ctx, 1))
        self.r.shuffle(conjuncts)
        self.features.add("domain option")
        return params, inner, " when " + " and ".join(conjuncts)

    def path_sets(self) -> list[tuple[str, str, str]]:
        """(graph, state set over its cities, enum) for path_option."""
        return [(g, v.name, en) for g, en in self.graphs for v in self.state
                if v.type == set_of(en)]

    def path_option(self, env, ctx) -> tuple[list[str], list[Var], str]:
        """A city parameter tested by path_cost from a state set (statements add to it and
        remove from it), at times within another state set, at times under a player parameter:
        the shape whose distances the compiler fetches once per listing (plan_path_rows)."""
        g, start, en = self.pick(self.path_sets())
        params: list[str] = []
        inner = list(env)
        if self.chance(0.4):
            p = self.name("x")
            params.append(f"{p}: player")
            inner.append(Var(p, PLAYER, "oparam"))
        x = self.name("x")
        params.append(f"{x}: {en}")
        inner.append(Var(x, en, "oparam"))
        within = [v.name for v in self.state if v.type == set_of(en)]
        args = f"{g}, {start}, {x}" + (f", {self.pick(within)}" if self.chance(0.4) else "")
        k = self.r.randint(0, 8)
        if self.chance(self.faults * 4):
            self.features.add("fault: none")
            when = f"path_cost({args}) <= {k}"
        else:
            when = f"(if path_cost({args}) == none then false else path_cost({args}) <= {k})"
        if len(params) == 2 and self.chance(0.5):
            when += f" and {self.op(BOOL, inner, ctx, 1)}"
        self.features.add("path option")
        return params, inner, " when " + when

    def filter_test(self, pn: str, t: str, env: list[Var], ctx: Ctx) -> str:
        """A bool that mostly reads the parameter pn (of type t), over env."""
        near = env + [Var(pn, t, "loop")]
        k = self.r.randrange(4)
        if k == 0:
            return self.expr(BOOL, near, ctx, 1)
        if k == 1:
            return f"{pn} != {self.op(t, env, ctx, 2)}"
        if k == 2:
            return f"{pn} in {self.op(set_of(t), env, ctx, 2, typed=True)}"
        return f"{self.op(BOOL, near, ctx, 2)} or {pn} == {self.op(t, env, ctx, 2)}"

    def stmt_choose(self, out, env, ctx, ind) -> None:
        who = self.op(PLAYER, env, ctx, 2)
        secret = self.chance(0.25)
        out.append(f"{self.pad(ind)}choose {who}{' secret' if secret else ''} {{")
        n_opts = self.r.randint(1, 3)
        self.features.add("choose")
        for i in range(n_opts):
            name = self.name("op")
            last = i == n_opts - 1
            special = [f for f, ok in ((self.big_option, self.big_defs),
                                       (self.domain_option, self.domain_defs),
                                       (self.path_option, self.path_sets()),
                                       (self.range_option, True)) if ok]
            if special and self.chance(0.2):
                params, inner, when = self.pick(special)(env, ctx)
            elif self.chance(0.2):
                params, inner, when = self.layered_option(env, ctx)
            else:
                params = []
                inner = list(env)
                for _ in range(self.r.randint(0, 2)):
                    t, dom, _ = self.oparam(inner, ctx)
                    pn = self.name("x")
                    params.append(f"{pn}: {t}{dom}")
                    inner.append(Var(pn, t, "oparam"))
                when = ""
                if (not last or self.chance(self.faults * 4)) and self.chance(0.6):
                    when = f" when {self.cond(inner, ctx, 1)}"
                    self.features.add("choose with when")
            end = "@end " if self.chance(0.05) else ""
            if end:
                self.features.add("@end")
            out.append(f"{self.pad(ind + 1)}{end}{name}({', '.join(params)}){when} {{")
            self.block(out, inner, self.sub(ctx), ind + 2, n=self.r.randint(0, 3))
            out.append(f"{self.pad(ind + 1)}}}")
            if secret:
                self.secret_actions.append(name)
                self.features.add("secret choice")
        if self.chance(0.3):
            # the fallback when no option is legal (often: the options' `when`s are random)
            out.append(f"{self.pad(ind)}}} else {{")
            self.block(out, env, self.sub(ctx), ind + 1, n=self.r.randint(0, 2))
            self.features.add("choose else")
        out.append(f"{self.pad(ind)}}}")

    def stmt_chance(self, out, env, ctx, ind) -> None:
        name = self.name("ch")
        x = self.name("o")
        t = self.pick([INT, BOOL, PLAYER, *self.enum_types()])
        if t == INT:
            dom = self.pick([f"1..{self.r.randint(1, 4)}", "[1, 1, 2]",
                             *[v.name for v in env if v.type == list_of(INT)]])
        elif t == BOOL:
            dom = "{true, false}"
        elif t == PLAYER:
            dom = self.pick(["players", *[v.name for v in env if v.type == set_of(PLAYER)]])
        else:
            dom = self.pick([t, *[v.name for v in env if v.type in (set_of(t), list_of(t))]])
        if dom not in ("players",) and not dom[0].isdigit() and not dom.startswith(("[", "{")) \
                and dom not in self.enums:
            # a state collection may be empty: no outcome is a fault, so guard it
            if not self.chance(self.faults * 5):
                out.append(f"{self.pad(ind)}if len({dom}) > 0 {{")
                self.chance_line(out, env, ctx, ind + 1, name, x, t, dom)
                out.append(f"{self.pad(ind)}}}")
                return
            self.features.add("fault: no outcome")
        self.chance_line(out, env, ctx, ind, name, x, t, dom)
        env.append(Var(x, t, "chance"))

    def chance_line(self, out, env, ctx, ind, name, x, t, dom) -> None:
        weight = ""
        if self.chance(0.4):
            inner = env + [Var(x, t, "chance")]
            w = self.expr(INT, inner, ctx, 2)
            weight = f" weight {w}" if self.chance(self.faults * 5) else f" weight 1 + abs({w})"
            self.features.add("chance weight")
        seen = ""
        if self.chance(0.35):
            seen = f" seen by {self.pick(['none', self.expr(PLAYER, env, ctx, 2)])}"
            self.features.add("chance seen by")
            self.hidden_draws.append(name)
        out.append(f"{self.pad(ind)}chance {name}({x}: {t} in {dom}){weight}{seen}")
        self.features.add("chance")
        if self.chance(0.5):
            self.block(out, env + [Var(x, t, "chance")], ctx, ind, n=1)

    # -- whole programs --------------------------------------------------------------------
    def phases_decl(self, out: list[str]) -> None:
        n = self.r.randint(0, 3)
        names = []
        for _ in range(n):
            name = self.name("ph")
            args = [self.pick([INT, BOOL, BOOL, PLAYER, *self.enum_types()])
                    for _ in range(self.r.randint(0, 2))]
            names.append((name, args))
        self.phases = names
        for k, (name, args) in enumerate(names):
            params = [Var(f"{name}_a{i}", t, "local") for i, t in enumerate(args)]
            depth = ""
            if self.chance(0.3):
                self.deep_phases.add(k)
                depth = f" depth {self.r.randint(1, 3)}"
                self.features.add("phase depth")
            out.append(f"phase {name}({', '.join(f'{p.name}: {p.type}' for p in params)})"
                       f"{depth} {{")
            self.budget = 10
            start = len(out)
            self.block(out, self.globals_env() + params, Ctx(phase=k, depth=1), 1,
                       n=self.r.randint(1, 4))
            out.append("}")
            self.phase_text[name] = "\n".join(out[start:])

    def standing_decl(self, out: list[str]) -> None:
        """`standing` options: offered at every decision of their player, each bounded by a
        per-player count of its own uses (no other code touches it), as docs/language.md 7.2
        asks; the bodies may not pause, run or finish."""
        counter = self.name("uses")
        sp = self.name("sp")
        out.append(f"state {{ {counter}: int[player] hidden = 0 }}")
        out.append(f"standing {sp} {{")
        for _ in range(self.r.randint(1, 2)):
            name = self.name("so")
            env = self.globals_env() + [Var(sp, PLAYER, "local")]
            params = []
            for _ in range(self.r.randint(0, 1)):
                t, dom, _ = self.oparam(env, Ctx(pauses=False))
                pn = self.name("x")
                params.append(f"{pn}: {t}{dom}")
                env.append(Var(pn, t, "oparam"))
            when = f"{counter}[{sp}] < {self.r.randint(1, 3)}"
            if self.chance(0.5):
                when += f" and {self.cond(env, Ctx(pauses=False), 1)}"
            out.append(f"  {name}({', '.join(params)}) when {when} {{")
            out.append(f"    {counter}[{sp}] += 1")
            self.budget = 4
            self.block(out, env, Ctx(pauses=False, depth=1), 2, n=self.r.randint(0, 2))
            out.append("  }")
        out.append("}")
        self.features.add("standing option")

    def wide_decl(self, decl: list[str], kept: bool = False) -> list[str]:
        """A hand-and-bag section over a grid of more than 64 cells, returned as flow lines
        (its declarations go to `decl`): hands are an array of sets over that grid, walked by a
        `for` whose body removes from the hand it walks and may `break`, counted and tested by
        `count`/`any` in defs, and drawn from by a decision's parameter -- the shapes the
        compiler walks by peeling the lowest member off the mask (codegen plan_peel_sets,
        WIDE_SET). With kept, the grid has 18 to 60 cells, so that the compiler keeps the
        hands' and the pile's members as tuples beside their masks (plan_kept_members), and the
        section also writes them in the other ways that update or forget a kept tuple: a card
        added to a hand it is already in, an add to the next seat's hand (an index that is no
        local), a whole assignment of a hand, a walk over the pile that removes from it. Beside
        it, a small enum with a stock and a price def kept per argument
        (plan_keyed_defs) read through a table that may lack a row: the loop's `while` tests
        `any(stock > 0 and can pay price)` and a decision tests the same `and` in its `when`
        (the element printed as nested ifs, shared with the `choose`), and a `count` of an
        `and` whose right side needs the price. Faults land inside the optimised walks."""
        g, tb, hand, bag, pile, pts = (self.name(k) for k in ("Wg", "wt", "wh", "wb", "wp",
                                                              "ws"))
        sk, stk, pr, hi, tw = (self.name(k) for k in ("Sk", "sk", "pr", "whi", "wtw"))
        cols, rows = self.r.randint(9, 12), self.r.randint(2, 5) if kept else self.r.randint(8, 10)
        row_names = "ABCDEFGHIJ"
        decl.append(f"grid {g} cols 1..{cols} rows A..{row_names[rows - 1]}")
        gap = self.r.randint(4, cols + 4)
        hole = self.chance(self.faults * 8)  # no row for `gap`: valuing one column faults
        if hole:
            self.features.add("fault: table without a row")
        decl.append(self.gapped_table(tb, gap, hole, 40))
        n_sk = self.r.randint(3, 6)
        members = [f"{sk}M{i}" for i in range(n_sk)]
        decl.append(f"enum {sk}(v: int) {{ "
                    + ", ".join(f"{m}({self.r.randint(1, 6)})" for m in members) + " }")
        decl.append(f"state {{ {hand}: set<{g}>[player] = {{}} "
                    f"{bag}: set<{g}> = {g} {pile}: set<{g}> = {{}} "
                    f"{pts}: int[player] = {self.r.randint(3, 8)} "
                    f"{stk}: int[{sk}] = {self.r.randint(1, 2)} }}")
        decl.append(f"def {pr}(x: {sk}) -> int = {tb}({stk}[x] + x.v) + x.v")
        decl.append(f"def {hi}(q: player) -> int = count(c.col > {self.r.randint(2, cols - 1)} "
                    f"for c in {hand}[q] if c.col != {self.r.randint(1, cols)})")
        decl.append(f"def {tw}(q: player) -> bool = any({tb}(c.col + {self.r.randint(0, 3)}) > 1 "
                    f"for c in {hand}[q] if c.row < {self.r.randint(1, 3)})")
        who, k = self.name("wq"), self.name("wk")
        c, x, d = self.name("wc"), self.name("wx"), self.name("wd")
        can = f"{stk}[{x}] > 0 and {pts}[{who}] >= {pr}({x})"
        choose = [f"choose {who} {{",
                  f"  {self.name('op')}({c}: {g} in {hand}[{who}]) when {c}.col != "
                  f"{self.r.randint(1, cols)} {{",
                  f"    remove {c} from {hand}[{who}]",
                  f"    {pts}[{who}] += {tb}({c}.col + {self.r.randint(0, 3)})",
                  f"    add {c} to {pile}",
                  "  }",
                  f"  {self.name('op')}({x}: {sk}) when {can} {{",
                  f"    {pts}[{who}] -= {pr}({x})",
                  f"    {stk}[{x}] -= 1",
                  "  }",
                  f"  {self.name('op')}() {{",
                  f"    {stk}[{self.pick(members)}] += 1",
                  "  }",
                  "}"]
        # the decision right after the loop test shares the test's `any` (plan_shared_any)
        shared = self.chance(0.5)
        body = [f"let {who}: player = players[0]", f"let {k} = 0",
                f"while {k} < {self.r.randint(4, 14)} and (any({can} for {x} in {sk}) or "
                f"{k} % {self.r.randint(2, 4)} == 0) {{",
                *(["  " + line for line in choose] if shared else []),
                f"  if len({bag}) > 0 {{",
                f"    chance {d}({c}: {g} in {bag})",
                f"    remove {c} from {bag}",
                f"    add {c} to {hand}[{who}]",
                *(self.kept_writes(c, g, hand, bag, pile, who, k, cols) if kept else ["  }"]),
                f"  for {c} in {hand}[{who}] {{",
                f"    if {c}.col % 2 == {self.r.randint(0, 1)} {{",
                f"      {pts}[{who}] += 1",
                f"      if {c}.row == {self.r.randint(0, 2)} {{",
                f"        remove {c} from {hand}[{who}]",
                f"        add {c} to {pile}",
                "      }",
                "    }",
                f"    if {c}.col == {self.r.randint(1, cols)} {{",
                f"      {pts}[{who}] += {tb}({c}.col + {self.r.randint(0, 4)})",
                "    }",
                f"    if {c}.col > {self.r.randint(cols // 2, cols)} {{",
                "      break",
                "    }",
                "  }",
                *([] if shared else
                  [f"  if {hi}({who}) > {self.r.randint(0, 2)} or (len({hand}[{who}]) > "
                   f"{self.r.randint(1, 4)} and {tw}({who})) {{",
                   *["    " + line for line in choose],
                   "  }"]),
                f"  if count({stk}[{x}] > 1 and {pr}({x}) > {self.r.randint(2, 6)} "
                f"for {x} in {sk}) > 1 or {hi}({who}) > {self.r.randint(1, 4)} "
                f"and {tw}({who}) {{",
                f"    {pts}[{who}] += 1",
                "  }",
                f"  {k} += 1",
                f"  {who} = next_seat({who})",
                "}"]
        self.features |= {"kept tuples" if kept else "wide peel", "and with kept def"}
        return ["  " + line for line in body]

    def guard_decl(self, decl: list[str]) -> list[str]:
        """Defs of a player that count or test the members of that player's set of a small
        enum, and one whose `return` has a conjunct reading none of its parameters: the
        compiler computes them only while a cheaper condition holds (codegen plan_def_guards:
        at least so many members of the whole enum pass, kept on the state until the levels
        are written; the conjunct, tested before the listing's loop). Asked in a listing whose
        only tests are `not D(q)`, in a `for` whose body is only `if D(q) {...}`, and in a
        `when`; the levels and the sets are written by options and by the flow, returned as
        flow lines (declarations go to `decl`)."""
        self.features.add("guarded def")
        en, lv, hd, sc = (self.name(k) for k in ("Ge", "gl", "gh", "gs"))
        gd, ga, gc = (self.name(k) for k in ("gd", "ga", "gc"))
        x, y, q, who, i = (self.name(k) for k in ("gx", "gy", "gq", "gw", "gi"))
        members = [f"{en}M{j}" for j in range(self.r.randint(3, 7))]
        decl.append(f"enum {en} {{ {', '.join(members)} }}")
        decl.append(f"state {{ {lv}: int[{en}] = {self.r.randint(0, 2)} "
                    f"{hd}: set<{en}>[player] = {{}} {sc}: int[player] = 0 }}")
        least = self.r.randint(1, 3)
        op = self.pick([">=", ">"])
        decl.append(f"def {gd}({q}: player) -> bool = count({lv}[{x}] >= {self.r.randint(1, 3)} "
                    f"for {x} in {hd}[{q}]) {op} {least if op == '>=' else least - 1}")
        decl.append(f"def {ga}({q}: player) -> bool = any({lv}[{x}] > {self.r.randint(1, 3)} "
                    f"for {x} in {hd}[{q}])")
        decl += [f"def {gc}({q}: player) -> bool {{",
                 f"  if len({hd}[{q}]) == 0 {{",
                 "    return false",
                 "  }",
                 f"  return len({hd}[{q}]) > {self.r.randint(0, 2)} and all({lv}[{x}] >= "
                 f"{self.r.randint(1, 2)} for {x} in {en})",
                 "}"]
        return [f"let {who}: player = players[0]",
                f"let {i} = 0",
                f"while {i} < {self.r.randint(6, 16)} {{",
                f"  choose {who} {{",
                f"    {self.name('op')}({q}: player) when not {gd}({q}) and not {gc}({q}) {{",
                f"      {sc}[{q}] += 1",
                f"      add {self.pick(members)} to {hd}[{q}]",
                "    }",
                f"    {self.name('op')}({x}: {en}) {{",
                f"      {lv}[{x}] += 1",
                f"      add {x} to {hd}[{who}]",
                "    }",
                f"    {self.name('op')}({x}: {en} in {hd}[{who}]) when {lv}[{x}] > 0 {{",
                f"      {lv}[{x}] -= 1",
                f"      remove {x} from {hd}[{who}]",
                "    }",
                f"    {self.name('op')}() when {ga}({who}) {{",
                f"      {sc}[{who}] += count({ga}({y}) for {y} in players)",
                "    }",
                "  }",
                f"  for {y} in players {{",
                f"    if {gd}({y}) {{",
                f"      {sc}[{y}] += 2",
                f"      {lv}[{self.pick(members)}] = 0",
                "    }",
                "  }",
                f"  {i} += 1",
                f"  {who} = next_seat({who})",
                "}"]

    def kept_writes(self, c, g, hand, bag, pile, who, k, cols) -> list[str]:
        """wide_decl's writes of its kept sets beyond `add` and `remove` at the seat's own hand
        (the lines end the `if` that draws a card)."""
        return [f"    if {c}.col == {self.r.randint(1, cols)} {{",
                f"      add {c} to {hand}[{who}]",
                f"    }} elif {c}.row == {self.r.randint(0, 1)} {{",
                f"      add {c} to {hand}[next_seat({who})]",
                "    }",
                "  }",
                f"  if {k} % {self.r.randint(2, 4)} == 1 {{",
                f"    {hand}[{who}] = {{{c} for {c} in {hand}[{who}] if {c}.col != "
                f"{self.r.randint(1, cols)}}}",
                "  }",
                f"  for {c} in {pile} {{",
                f"    if {c}.row == {self.r.randint(0, 1)} {{",
                f"      remove {c} from {pile}",
                f"      add {c} to {bag}",
                "    }",
                "  }"]

    def empty_test(self, s: str) -> str:
        """`len(s)` compared with 0 or 1, in one of the six comparisons, the literal on either
        side, now and then under a `not`: the compiler tests the set's mask against 0 instead of
        counting its members (ExprPrinter._empty_test)."""
        k = self.r.randint(0, 1)
        op = self.pick(["==", "!=", "<", "<=", ">", ">="])
        t = f"len({s}) {op} {k}" if self.chance(0.5) else f"{k} {op} len({s})"
        return f"not ({t})" if self.chance(0.25) else t

    def gapped_table(self, tb: str, gap: int, hole: bool, top: int) -> str:
        """A table of one int key, 1 below gap and 2 to 4 from there to top, without a row for
        gap itself when hole."""
        return (f"table {tb}(n: int) -> int {{ 0..{gap - 1} => 1, "
                f"{gap + hole}..{top} => {self.r.randint(2, 4)} }}")

    def weighted_enum(self, en: str, decl: list[str]) -> list[str]:
        """An enum of 3 to 5 members with a small int field w, declared in decl: its members."""
        members = [f"{en}M{i}" for i in range(self.r.randint(3, 5))]
        decl.append(f"enum {en}(w: int) {{ "
                    + ", ".join(f"{m}({self.r.randint(0, 3)})" for m in members) + " }")
        return members

    def edge_decl(self, decl: list[str]) -> list[str]:
        """A section, returned as flow lines (its declarations go to `decl`), for three rewrites
        of the code generator that only fixtures reached before:
        - sets tested for emptiness (`len(S)` against 0 or 1, every form, `empty_test`), also on
          a set that is `none` until the first drop (read before then, it faults in a `when`
          while the choices are listed; in programs without faults the read is guarded);
        - `+=` and `-=` on array items and on a plain variable near the int limit, checked on
          one side only when a literal is added or taken away (StmtPrinter.emit_AugAssign): in
          programs with faults the literal may cross the limit, on either side;
        - aggregates whose element has an operand that does not depend on the loop variable,
          also through a def's parameter (computed before the loop, ExprPrinter.try_hoist), next
          to a table lookup that may lack a row or a division that may be by zero -- that
          operand must not fault where the original never evaluates it: it is placed after a
          test that may be false for every element, or after an empty collection."""
        en, tb = self.name("Ek"), self.name("et")
        bag, held, spare, cnt, big, tall, pts, zz = (
            self.name(k) for k in ("eb", "eh", "esp", "ec", "eg", "ea", "ep", "ez"))
        rich, spr, tot, val = (self.name(k) for k in ("er", "en", "et", "ev"))
        members = self.weighted_enum(en, decl)
        faults = self.faults > 0
        gap = self.r.randint(6, 12)
        hole = faults and self.chance(0.5)  # no row for `gap`
        decl.append(self.gapped_table(tb, gap, hole, 80))
        top = 10 ** 100 - 1
        near = self.r.randint(0, 6)  # how far below the limit the big values start
        decl.append(f"state {{ {bag}: set<{en}> = {en} {held}: set<{en}>[player] = {{}} "
                    f"{spare}: set<{en}>? = none {cnt}: int[{en}] = {self.r.randint(0, 2)} "
                    f"{big}: int[{en}] = 0 {tall}: int = 0 {pts}: int[player] = "
                    f"{self.r.randint(2, 5)} {zz}: int = {self.r.randint(0, 2)} }}")
        k1, k2 = self.r.randint(0, 3), self.r.randint(0, 4)
        g, x, q = self.name("eg"), self.name("ex"), self.name("eq")
        # the invariant operand of each aggregate's element comes second: hoisted before the
        # loop, it must not fault when the first operand is false for every element
        risky = f"10 // {zz} > {self.r.randint(0, 5)}" if faults else f"{zz} >= {k1}"
        decl.append(f"def {rich}({q}: player) -> bool = any({tb}({cnt}[{g}] + {g}.w) <= "
                    f"{pts}[{q}] + {k1} and {pts}[{q}] * 2 > {cnt}[{g}] for {g} in {en})")
        decl.append(f"def {spr}({q}: player) -> int = count({cnt}[{g}] > {k2} and {risky} "
                    f"for {g} in {en})")
        decl.append(f"def {tot}({q}: player) -> int = sum({tb}({cnt}[{g}] + {pts}[{q}] % 3) "
                    f"for {g} in {en} if {pts}[{q}] > {k2} and {cnt}[{g}] > 0)")
        decl.append(f"def {val}({x}: {en}) -> int = {tb}({cnt}[{x}] + {x}.w) + {x}.w")
        who, i = self.name("eq"), self.name("ei")
        mine = f"{held}[{who}]"
        spare_test = self.empty_test(spare)
        if not (faults and self.chance(0.3)):  # `none` until the first drop: guarded
            spare_test = f"({spare} != none and {spare_test})"
        # past the limit by 1 to 3 now and then in programs with faults
        hi_lit, lo_lit = (near + self.r.randint(1, 3) if faults and self.chance(0.3)
                          else self.r.randint(0, near) for _ in range(2))
        # read through the loop variable or, now and then, as invariant as the operand after it
        first = f"{cnt}[{self.pick([x, x, g])}] > {self.r.randint(4, 7)}"
        choose = [
            f"choose {who} {{",
            f"  {self.name('op')}({g}: {en} in {bag}) when {self.empty_test(mine)} or "
            f"{spare_test} {{",
            f"    remove {g} from {bag}",
            f"    add {g} to {mine}",
            f"    {pts}[{who}] += 1",
            "  }",
            f"  {self.name('op')}({g}: {en} in {mine}) when {self.empty_test(mine)} {{",
            f"    remove {g} from {mine}",
            f"    add {g} to {bag}",
            f"    {pts}[{who}] -= 1",
            f"    if {self.empty_test(mine)} {{",
            f"      {spare} = {mine}",
            "    }",
            "  }",
            f"  {self.name('op')}({g}: {en}) when {cnt}[{g}] < {pts}[{who}] + 3 and "
            f"count({val}({x}) > {self.r.randint(1, 3)} for {x} in {en}) < {self.r.randint(2, 4)} "
            f"{{",
            f"    {cnt}[{g}] += 1",
            "  }",
            f"  {self.name('op')}({g}: {en}) when count({first} and {risky} for {x} in {en}) "
            f"== 0 {{",
            f"    {big}[{g}] = {top - near}",
            f"    {big}[{g}] += {hi_lit}",
            f"    {big}[{g}] -= {self.r.randint(0, 9)}",
            f"    {tall} = {top - near}",
            f"    {tall} += {hi_lit}",
            "  }",
            f"  {self.name('op')}({g}: {en}) when {self.empty_test(bag)} {{",
            f"    {big}[{g}] = -{top - near}",
            f"    {big}[{g}] -= {lo_lit}",
            f"    {big}[{g}] += {self.r.randint(0, 9)}",
            f"    {tall} = {self.r.randint(0, 9)} - {top - near}",
            f"    {tall} -= {lo_lit}",
            "  }",
            f"  {self.name('op')}() {{",
            f"    {cnt}[{self.pick(members)}] += 1",
            "  }",
            "}"]
        body = [f"let {who}: player = players[0]", f"let {i} = 0",
                f"while {i} < {self.r.randint(5, 14)} and ({rich}({who}) or {spr}({who}) > "
                f"{k1} or any({val}({x}) > {k2} for {x} in {en}) or {i} % 2 == 0) {{",
                *["  " + line for line in choose],
                f"  if {self.empty_test(bag)} and {tot}({who}) > {self.r.randint(0, 6)} {{",
                f"    {pts}[{who}] += 1",
                "  }",
                f"  {i} += 1",
                f"  {who} = next_seat({who})",
                "}"]
        self.features |= {"empty tests", "array item near the int limit",
                          "aggregate with an invariant operand"}
        return ["  " + line for line in body]

    def tuple_decl(self, decl: list[str]) -> list[str]:
        """A section, returned as flow lines (its declarations go to `decl`), for three rewrites
        of the code generator that only fixtures reached before:
        - defs of several small finite parameters (player, enum, bool) kept per argument tuple
          (plan_keyed_defs), forgotten by writes at the first parameter's index, at the last
          one's, at another index, or of the whole array, with a table that may lack a row
          inside one of them (a kept def that faults keeps nothing);
        - an option's leading `x not in S` / `x in S` tests folded into the walked mask of its
          set domain (plan_domain_filters), and, as a counterpart left unfolded, a test of a
          set that may be `none` in programs with faults;
        - the int limit check of an argument bound to an expanded def's int parameter, printed
          where it is bound (ExprPrinter.inline_call), with the argument near the limit (past
          it now and then in programs with faults) and, in some, an argument after it that may
          fault first."""
        en, tb = self.name("Tk"), self.name("tt")
        held, stock, own, pool, lock, pts, big, zz, maybe = (
            self.name(k) for k in ("th", "ts", "to", "tp", "tl", "tq", "tg", "tz", "tm"))
        hoard, rate, owns, fits, tri, duo = (
            self.name(k) for k in ("thd", "trt", "tow", "tfi", "ttr", "tdu"))
        members = self.weighted_enum(en, decl)
        faults = self.faults > 0
        gap = self.r.randint(5, 9)
        hole = faults and self.chance(0.6)  # no row for `gap`: rate faults there
        decl.append(self.gapped_table(tb, gap, hole, 90))
        top = 10 ** 100 - 1
        near = self.r.randint(2, 9)
        decl.append(f"state {{ {held}: int[{en}][player] = {self.r.randint(0, 1)} "
                    f"{stock}: int[{en}] = {self.r.randint(0, 3)} {own}: set<{en}>[player] = {{}} "
                    f"{pool}: set<{en}> = {en} {lock}: set<{en}> = {{}} "
                    f"{pts}: int[player] = {self.r.randint(0, 3)} {big}: int = {top - near} "
                    f"{zz}: int = {self.r.randint(0, 2)} {maybe}: set<{en}>? = none }}")
        q, k, j, hot, x, a, b = (self.name(v) for v in ("tq", "tk", "tj", "th", "tx", "ta", "tb"))
        decl.append(f"def {hoard}({q}: player, {k}: {en}) -> int = sum({held}[{q}][{j}] * "
                    f"(if {j} == {k} then 2 else 1) for {j} in {en})")
        decl.append(f"def {rate}({q}: player, {k}: {en}) -> int = "
                    f"{tb}({stock}[{k}] + {held}[{q}][{k}])")
        decl.append(f"def {owns}({q}: player, {k}: {en}, {hot}: bool) -> int = "
                    f"count({j}.w == {k}.w for {j} in {own}[{q}]) + "
                    f"(if {hot} then {pts}[{q}] % 3 else 0)")
        decl.append(f"def {fits}({q}: player, {k}: {en}) -> bool = {held}[{q}][{k}] < 3 and "
                    f"{rate}({q}, {k}) > 0")
        decl.append(f"def {tri}({x}: int) -> int = {x} // 4 + 1")
        decl.append(f"def {duo}({a}: int, {b}: int) -> int = {a} // 3 + {b} // 5")
        who, i, g, h = self.name("tw"), self.name("ti"), self.name("tg"), self.name("th")
        mine = f"{own}[{who}]"
        # the set of the unfolded test: `none` until the first drop, read unguarded now and
        # then in programs with faults (it faults while the choices are listed)
        unsafe = (f"{g} not in {maybe}" if faults and self.chance(0.5)
                  else f"({maybe} == none or {g} not in {maybe})")
        past = near + self.r.randint(1, 3) if faults and self.chance(0.4) else 0
        # the argument after the checked one: may fault (a division by zz) in some programs
        after = f"sum(7 // {zz} for {h} in players)" if faults and self.chance(0.5) else \
            f"{pts}[{who}]"
        reset_at = self.r.randint(3, 9)
        choose = [
            f"choose {who} {{",
            f"  {self.name('op')}({g}: {en} in {pool}) when {g} not in {mine} and "
            f"{g} not in {lock} and {fits}({who}, {g}) and "
            f"{hoard}({who}, {g}) < {self.r.randint(5, 9)} {{",
            f"    {pts}[{who}] += {rate}({who}, {g}) + {hoard}({who}, {g})",
            f"    {held}[{who}][{g}] += 1",
            f"    add {g} to {mine}",
            f"    {pts}[{who}] += {owns}({who}, {g}, true) + {rate}({who}, {g})",
            "  }",
            f"  {self.name('op')}({g}: {en} in {mine}) when {g} in {lock} or "
            f"{owns}({who}, {g}, false) > 1 {{",
            f"    remove {g} from {mine}",
            f"    {maybe} = {mine}",
            f"    {pts}[{who}] += {owns}({who}, {g}, true)",
            "  }",
            f"  {self.name('op')}({g}: {en} in {pool}) when {g} not in {lock} and {unsafe} {{",
            f"    add {g} to {lock}",
            f"    {stock}[{g}] += 1",
            f"    {pts}[{who}] += {rate}({who}, {g})",
            "  }",
            f"  {self.name('op')}({g}: {en}) when {rate}({who}, {g}) == 1 {{",
            f"    {stock}[{g}] += 1",
            f"    {held}[players[0]][{self.pick(members)}] += 1",
            f"    {pts}[{who}] += {hoard}({who}, {g})",
            "  }",
            f"  {self.name('op')}() when {i} == {reset_at} {{",
            f"    {held}[{who}] = [{g} => 0 for {g} in {en}]",
            f"    {stock} = [{g} => 1 for {g} in {en}]",
            f"    {lock} = {{}}",
            f"    {pts}[{who}] += sum({hoard}({h}, {self.pick(members)}) for {h} in players)",
            "  }",
            f"  {self.name('op')}() {{",
            f"    {pts}[{who}] = {tri}({big} + {past}) % 7 + "
            f"{duo}({big} + {past}, {after}) % 5",
            f"    {big} -= {self.r.randint(0, 3)}",
            "  }"]
        self.features |= {"tuple-keyed def", "domain filter", "argument check"}
        return self.rounds(who, i, choose, pts)

    def rank_decl(self, decl: list[str], configs: list[dict]) -> list[str]:
        """A section, returned as flow lines (its declarations go to `decl`), for three rewrites
        of the code generator that only fixtures reached before:
        - count/any/all of `y < x` (any of < <= > >=, y on either side) over a set of enum
          members, taken from the set's mask (passes._match_below), for x a parameter of a def
          and an option's parameter, over a set that empties and fills;
        - aggregates and comprehensions over every member of an enum filtered by `c.w == v`
          (either side) walking only the members with that field value (plan_field_walks), for
          v a value no member may have, with an element that faults for one value of w in
          programs with faults;
        - comparisons of an enum parameter chosen at load with a member (folded with the
          `and` / `or` and `if` around them: exprs._folded); the section's parameter gets a
          random value in the configurations that vary parameters."""
        en = self.name("Rk")
        members = self.weighted_enum(en, decl)
        mode = self.name("rmode")
        decl.append(f"param {mode}: {en} = {self.pick(members)}")
        for config in configs[1:]:
            if self.chance(0.7):
                config["params"][mode] = self.pick(members)
        deck, pts, last = self.name("rd"), self.name("rp"), self.name("rl")
        decl.append(f"state {{ {deck}: set<{en}> = {{{', '.join(members)}}} "
                    f"{pts}: int[player] = 0 {last}: int = {self.r.randint(0, 3)} }}")
        ops = ("<", "<=", ">", ">=")
        x, y, c, q, v = (self.name(k) for k in ("rx", "ry", "rc", "rq", "rv"))

        def test(a: str, b: str) -> str:
            op = self.pick(ops)
            return f"{a} {op} {b}" if self.chance(0.5) else f"{b} {op} {a}"
        below, some, every, walk, kinds = (self.name(k) for k in ("rb", "rs", "re", "rw", "rn"))
        decl.append(f"def {below}({x}: {en}) -> int = count({test(y, x)} for {y} in {deck})")
        decl.append(f"def {some}({x}: {en}) -> bool = any({test(y, x)} for {y} in {deck})")
        decl.append(f"def {every}({x}: {en}) -> bool = all({test(y, x)} for {y} in {deck})")
        bad = self.r.randint(0, 3) if self.faults > 0 and self.chance(0.6) else 9
        eq = f"{c}.w == {v}" if self.chance(0.5) else f"{v} == {c}.w"
        decl.append(f"def {walk}({v}: int) -> int = sum(12 // ({c}.w - {bad}) for {c} in {en} "
                    f"if {eq})")
        decl.append(f"def {kinds}({v}: int) -> set<{en}> = {{{c} for {c} in {en} if {eq}}}")
        who, i, g = self.name("rw"), self.name("ri"), self.name("rg")
        m1, m2 = self.pick(members), self.pick(members)
        choose = [
            f"choose {who} {{",
            f"  {self.name('op')}({g}: {en} in {deck}) when {below}({g}) < {self.r.randint(1, 3)}"
            f" or ({mode} == {m1} and {some}({g})) {{",
            f"    remove {g} from {deck}",
            f"    {pts}[{who}] += {below}({g}) + (if {mode} != {m2} then {walk}({g}.w) else 1)",
            "  }",
            f"  {self.name('op')}({g}: {en}) when {g} not in {deck} and ({every}({g}) "
            f"or {mode} == {m2}) {{",
            f"    add {g} to {deck}",
            f"    {last} = {walk}({self.r.randint(0, 4)}) + len({kinds}({last} % 5))",
            "  }",
            f"  {self.name('op')}() when {mode} == {m1} or {mode} != {m2} {{",
            f"    {pts}[{who}] += count({c} in {deck} for {c} in {en} if {eq.replace(v, last)})",
            "  }"]
        self.features |= {"rank over a mask", "field walk", "folded comparison"}
        return self.rounds(who, i, choose, pts)

    def rounds(self, who: str, i: str, choose: list[str], pts: str) -> list[str]:
        """Flow lines of a section: 6 to 16 rounds of its `choose` (given up to its last option,
        which is added: a point for the player, always legal), the players in turn."""
        choose = [*choose, f"  {self.name('op')}() {{", f"    {pts}[{who}] += 1", "  }", "}"]
        body = [f"let {who}: player = players[0]", f"let {i} = 0",
                f"while {i} < {self.r.randint(6, 16)} {{",
                *["  " + line for line in choose],
                f"  {i} += 1",
                f"  {who} = next_seat({who})",
                "}"]
        return ["  " + line for line in body]

    def program(self) -> Case:
        out = [f"# random program, seed {self.seed}", f"game R{self.seed}"]
        self.lo_players = self.r.randint(1, 2)
        self.hi_players = self.r.randint(self.lo_players, 4)
        out.append(f"players {self.lo_players}..{self.hi_players}")
        decl: list[str] = []
        self.gen_enums(decl)
        self.gen_params(decl)
        self.gen_consts(decl)
        self.gen_tables(decl)
        self.gen_state(decl)
        self.gen_defs(decl)
        phases: list[str] = []
        self.phases_decl(phases)
        flow = ["flow {"]
        self.budget = self.r.randint(8, 25)
        env = self.globals_env()
        self.block(flow, env, Ctx(), 1, n=self.r.randint(3, 7))
        for name, args in self.phases:  # every phase must be run somewhere (E017)
            # (by the flow or another phase: a phase that only runs itself is never started)
            used = "\n".join([*flow, *(t for n, t in self.phase_text.items() if n != name)])
            if f"run {name}(" not in used:
                flow.append(f"  run {name}({', '.join(self.expr(a, env, Ctx(), 2) for a in args)})")
        flow.append("}")
        q = self.name("q")
        score_env = self.globals_env() + [Var(q, PLAYER, "local")]
        score = f"score {q} => {self.expr(INT, score_env, Ctx(pure=True, pauses=False))}"
        tail = [score]
        if self.chance(0.4):
            t = self.name("q")
            env2 = self.globals_env() + [Var(t, PLAYER, "local")]
            tail.append(f"tiebreak {t} => {self.expr(INT, env2, Ctx(pure=True, pauses=False))}")
        standing: list[str] = []
        if self.chance(0.3):  # drawn last: the rest of the program is as without it
            self.standing_decl(standing)
        if self.chance(0.12):  # drawn last too, played first (a finish may come early)
            flow[1:1] = self.wide_decl(decl)
        configs = self.configs()
        if self.chance(0.15):  # drawn after all the rest: the programs before are unchanged
            flow[1:1] = self.edge_decl(decl)
        if self.chance(0.15):  # drawn after all the rest: the programs before are unchanged
            flow[1:1] = self.tuple_decl(decl)
        if self.chance(0.15):  # drawn after all the rest: the programs before are unchanged
            flow[1:1] = self.rank_decl(decl, configs)
        if self.chance(0.15):  # drawn after all the rest: the programs before are unchanged
            flow[1:1] = self.wide_decl(decl, kept=True)
        if self.chance(0.15):  # drawn after all the rest: the programs before are unchanged
            flow[1:1] = self.guard_decl(decl)
        text = "\n".join(out + decl + phases + standing + flow + tail) + "\n"
        return Case(self.seed, text, configs, set(self.features))

    def configs(self) -> list[dict]:
        """The default, one variant, and random -D values (bool switches off among them)."""
        out = []
        players = self.r.randint(self.lo_players, self.hi_players)
        out.append({"variant": None, "params": {}, "players": players, "seed": self.seed})
        params = {}
        for p in self.params:
            if self.chance(0.6):
                if p.type == INT:
                    params[p.name] = self.r.randint(0, 6)
                elif p.type == BOOL:
                    params[p.name] = self.r.random() < 0.3
                else:
                    params[p.name] = self.pick(self.enums[p.type]["members"])
        variant = self.pick(self.variants) if self.variants and self.chance(0.5) else None
        if params or variant:
            out.append({"variant": variant, "params": params,
                        "players": self.r.randint(self.lo_players, self.hi_players),
                        "seed": self.seed + 1})
        return out


def wrap(s: str) -> str:
    """s in parentheses unless it is one token or already wrapped as a whole."""
    if not any(ch in s for ch in " ."):
        return s
    if s[0] in "([{":
        close = {"(": ")", "[": "]", "{": "}"}
        depth = 0
        for i, ch in enumerate(s):
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
                if depth == 0:
                    if i == len(s) - 1 and ch == close[s[0]]:
                        return s
                    break
    elif s.replace("_", "").isalnum():
        return s
    return f"({s})"


def generate(seed: int, faults: float | None = None) -> Case:
    return Gen(seed, faults).program()
