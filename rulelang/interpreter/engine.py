"""Reference interpreter: walks the checked program; values are immutable, clarity over speed.

Value model (shared with generated engines, which use faster layouts but the same meaning):
int and bool as Python ints/bools; players and enum/grid members as their index; none as None;
sets as frozensets (iterated in domain order); lists and arrays as tuples.

Why it is still the reference. Every construct means here what docs/language.md says, written
once, in the order the language defines: each expression node, statement and lowered
instruction is a plain function made once from its node (consts.ExprEvaluator.fn_<Node>,
exec_<Stmt>, step_<Instr> below), calling its children's functions and the shared semantics
(semantics.py BINARY_OPS / BUILTINS reference implementations, runtime.py helpers and fault
messages) with the same checks, at the same locations. No Python source is generated and
nothing is exec'd; no def is inlined, no check is left out because of a type or a constant, no
test is moved out of the loop it is written in (those are the code generator's business). What
keeps it from being slow is only (1) that a node's meaning is looked up once, when its function
is made, instead of at every evaluation, and (2) caching that changes no result, no fault and no
limit:

- The flow runs as the lowered instruction list (rulelang/lower.py, the one both back ends run):
  step_<Instr> makes each instruction's function, which does what the instruction says and gives
  the next pc (-1 at a pause). Statements without a pause are functions too (exec_<Stmt>), the
  loops they contain stop at `break` (a value the statement's function gives, as `return`
  gives the def's value) and count their rounds against max_loop_steps as the language says.
- Memo tables for defs and `when` tests. A def's value is remembered per argument tuple; a
  `when` test that calls a def or has an aggregate is remembered per values of the locals it
  reads from outside (option parameters and flow locals: Reads.locals_of), unless it is one
  def call (the def's own table then does it).
  Each table belongs to one State and is dropped by State.write, the only place where state
  variables change (with write_at), for exactly the variables it reads (Reads.of_def /
  of_expr: found statically from the checker's name references, through the defs it calls).
  Defs cannot change state (the checker's E016), so nothing else can make a value stale.
  A write through one index (v[i] = ..., v[i][j] += ...: State.write_at) drops less: a table
  whose def or test reads v only as v[s], s one of its key's parts (a def's parameter, a
  test's outside local, also passed on as such to the defs it calls: Reads.at_index), loses
  only the entries whose key holds i there. Such an entry's value depends on v only through
  v[i] and v's length; a write through an index changes neither the other items nor the
  length. Each table lists its keys per index at those positions (_Table.by). A value that
  faults is not remembered: the same fault comes again at the same place. A clone starts with
  empty tables, a fault that undoes an apply empties them (entries made after a write would
  describe the undone state), set_vars writes through State.write. VERIFY_MEMO checks every
  hit against a fresh evaluation (tests). A write of a value equal to the one it replaces
  drops nothing: values are immutable and a variable's values all have its type, so whatever
  reads it reads the same. A def call takes a value its table holds in place (ev.memo, in
  consts.fn_Call), else asks call_def. The first tables of each def or test are on trial
  (_Trial counts their lookups and hits); one whose tables found a value for fewer than one
  lookup in TRIAL_HITS is given no more tables for the rest of the game (a table costs a
  lookup and a store at every call, and a def redone is exactly what the table would have
  given: which tables exist changes no result, no fault, no limit).
- One candidate list per decision (_Choices), made on first use by whichever protocol call comes
  first (legal_actions, num_choices, apply, apply_index, observation, end_action_index) and
  shared until the state changes. Candidates are runs of parameter-value tuples per option (a
  one-parameter option with no `when` keeps its domain itself: _Singles, as does a chance node
  with no weights whose values are each listed once); the action strings are made only when
  asked for.
- An option with two parameters or more whose `when` test calls a def or has an aggregate
  keeps its candidate lists in a memo table too (Evaluator.listing; key: its _Listing, the
  parameters with their domains and the `when` test, not the body), per values of the
  outside locals those read, dropped by writes exactly as a `when` test's table is (Reads
  over the same nodes, index writes at the key's positions): the list is the value of its
  domains and `when` test for every candidate, in order, so what was found for the same
  locals and the same values of everything read is found again, without a fault (a listing
  that faults is not remembered). Its trial is that of the other tables. One lookup then
  stands for every candidate's test (Automobile's build: 27).
- An option whose parameters run over fixed domains and whose `when` test reads the position
  (state, players) and outside locals only through parts that read none of its parameters and
  can never fault (its keys: Game.value_keys) keeps its candidate lists on the game instead,
  per values of those parts (kept_listing, at most LISTING_MEMO key tuples per option): the
  rest of the test is a function of the parameters and the keys, so the same key values give
  the same candidates, and no write drops them. The keys are evaluated first; they cannot
  fault, and a listing changes nothing, so they have the values the tests would read.
  Automobile's place_dealers (64 candidates, keyed by dealers_placed(p)), Acquire's dispose,
  Power Grid's and Pola Naftowe's bids.
- While a decision's candidates are listed nothing can change the state, and the locals from
  outside its options are fixed. An option's candidates are listed by binding its parameters
  in order, one loop per parameter. The parts of its `when` test (of each operand of its `and`
  chain) and domains that read only its first L parameters (a prefix; L = 0: none) are
  remembered while those keep their values (prefix_fn: the largest such subexpressions;
  binding parameter L-1 forgets them). Each is first evaluated where it always was, so the
  first fault is the same, and a value that faults is not remembered. Every candidate is still
  tested in order with the whole `when`, left to right, except where the outcome is already
  known without a fault: when a leading operand of the `and` chain that reads only the first L
  parameters (after operands of no higher L) is found false, the candidates left under those
  L values would each find it false again and stop there, so the loops of the later parameters
  stop (dead_ends: only when the domains evaluated on the way read no later parameter, so they
  would give the values they gave before, without a fault). Conversely, once the leading
  operands that read only the parameters before the last one have all been found true under
  the current values of those, every value of the last parameter left would find them true
  again, without a fault: the operands after them decide, in order (known_lead).
- `any` / `all` stop at their first deciding element when no element can fault (faults.py, a
  small conservative analysis of the interpreter's own); otherwise every element is evaluated,
  as the language defines, so a later element's fault is still reported.
- Expressions: each node's function (consts.ExprEvaluator.fn_<Node>) has what depends only on
  the node (its name's slot, its operator, its location, its Growth answer) looked up when the
  function is made; comprehensions bind their variable in place instead of copying the env per
  element; the none checks of def and builtin arguments, an index's bounds check and a chain of
  `and` / `or` are written out in one function each (the same checks, in the same order); an
  operand that names a local is read in place (env[slot]) and a right operand whose value is
  fixed when the function is made (a literal, member, parameter or constant) is held, instead
  of calling the function that would give the same value. An operator that cannot fault is
  called in its `pure` form from the semantics table (the function of Python's operator module
  its reference implementation calls; `+` on ints: operator.add, what _run_plus does on ints),
  and a none check is left out only where the node itself can never give none whatever its
  operands (consts.never_none: literals, operators, displays, comprehensions; not because of a
  type). Each aggregate kind (count/sum, any/all, min/max, first) is a function of its own,
  and a write through one index is _update written out: the same evaluations, in the same
  order, with the same checks.
- A table's value is kept per argument tuple once found (tables are constants); a lookup with
  no row is not kept and faults again.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from operator import itemgetter

from rulelang import ast, runtime
from rulelang import types as T
from rulelang.consts import Constants, ExprEvaluator, format_value, loc
from rulelang.errors import IllegalAction, RulesRuntimeError
from rulelang.interpreter.faults import NeverFaults
from rulelang.interpreter.reads import Reads
from rulelang.lower import (
    Bind,
    ChanceAt,
    ChooseAt,
    Copy,
    DepthFault,
    Exec,
    FinishAt,
    IterInit,
    IterNext,
    Jump,
    JumpIfNot,
    Lowered,
    SetPhase,
    lower,
)
from rulelang.program import Program
from rulelang.runtime import CHANCE, TERMINAL
from rulelang.semantics import BUILTINS

# Tests set this to check every memo hit against a fresh evaluation (a stale table fails).
VERIFY_MEMO = False

# The most key tuples an option's candidate lists are kept for on the game (kept_listing), and
# the most keys such an option may have.
LISTING_MEMO = 256
LISTING_KEYS = 4

_MISSING = object()

# A memo key's first tables count their lookups; after TRIAL_LOOKUPS of them, a key whose
# tables found a value for fewer than one in TRIAL_HITS has none for the rest of the game.
TRIAL_LOOKUPS = 200
TRIAL_HITS = 8

# expression nodes (steady_parts), and those not worth remembering
_EXPRS = ast.Expr.__args__
_CHEAP = (ast.Name, ast.IntLit, ast.BoolLit, ast.NoneLit)


def _format_bool(v) -> str:
    return "true" if v else "false"


class _Break:
    """What a statement's function gives at a `break` (see stmt_fn)."""


_BREAK = _Break()


class Game:
    """A loaded rules file (one variant, one set of parameters) ready to start games."""

    backend = "interpreter"

    def __init__(self, program: Program) -> None:
        self.program = program
        self.lowered: Lowered = lower(program)
        self.name = program.name
        self.min_players = program.min_players
        self.max_players = program.max_players
        self.variants = list(program.variants)
        self.variant = program.variant
        self.source_digest = program.digest
        self.end_actions = program.end_actions
        # Parameters, constants, enum fields, tables, grids and graphs: worked out at load by
        # the evaluator both back ends share (a faulting table row fails here).
        self.constants = Constants(program)
        self.params = self.constants.params
        self.limits = dataclasses.asdict(program.limits)
        # Memo tables (see the module docstring): a def's table is keyed by the def, a `when`
        # test's by its expression node; `readers[v]` lists the tables a write to v drops.
        self.reads = Reads(program)
        self.never_faults = NeverFaults(self.constants)
        self._option_slots: dict[ast.Option, tuple[str, ...]] = {}
        self._def_parts: dict[ast.DefDecl, tuple] = {}
        # per (decision or chance node, option index): its action name and argument formatters
        self.forms: dict[tuple, tuple] = {}
        self.readers: dict[str, list] = {}
        # per state variable, the keys reading it wholly, and (key, position) of those that
        # read it only at the index their key holds at that position; per key, those positions
        self.whole_readers: dict[str, list] = {}
        self.readers_at: dict[str, list] = {}
        self.positions: dict[object, tuple] = {}
        # standing options, flat: option index len(decision's options) + j is the j-th
        self.standing = [(sd, opt) for sd in program.standing for opt in sd.options]
        # per option with value keys: {key values: its candidate list} (kept_listing)
        self.listed: dict[ast.Option, dict] = {}
        self._watched: set = set()
        # memo keys on trial: [lookups, hits] of their tables so far; those found useless
        self.trials: dict[object, list] = {}
        self.memo_off: set = set()
        # the interpreter's own functions of expression nodes (consts.ExprEvaluator.fn)
        self.fns: dict[object, object] = {}
        # per `when` test: the outside locals that key its memo table, or None (not memoised)
        self.when_keys: dict[object, tuple[str, ...] | None] = {}
        # per pc, the function running that instruction (made on first use: Game.step)
        self.steps: list = [None] * len(self.lowered.code)
        # the most parameters an option has (the levels of legal()'s prefix parts)
        self.max_params = max([len(o.params) for ins in self.lowered.code
                               if isinstance(ins, ChooseAt) for o in ins.node.options]
                              + [len(o.params) for _sd, o in self.standing], default=0)

    def listing_key(self, opt: ast.Option):
        """(the _Listing keying opt's candidate lists, the function giving the values of the
        outside locals they read), or None for an option not worth a table: one with fewer
        than two parameters, or whose `when` test calls no def and has no aggregate (such a
        listing costs not much more than a lookup and a store)."""
        if len(opt.params) < 2 or opt.when is None or not self.reads.costly(opt.when):
            return None
        key = _Listing(opt.params, opt.when)
        slots = self.reads.locals_of(key)
        return key, (itemgetter(*slots) if slots else (lambda env: ()))

    def value_keys(self, opt: ast.Option) -> tuple | None:
        """The keys of an option whose candidate lists are kept on the game per values of the
        parts of its `when` test that read the position (Evaluator.kept_listing), or None for
        an option that does not qualify: every parameter must run over a fixed domain (the
        members of its enum or bool type, or a range of the rules file's own constants), and
        the `when` test must read the state, the players and the locals from outside only
        through sub-expressions that read none of its parameters and can never fault (the
        keys: Automobile's place_dealers(lux, mid, eco) has one, dealers_placed(p)), being
        otherwise made of the parameters, constants, operators, fields, tables and defs that
        read no position. Then its candidates are a function of the keys' values alone.
        (The code generator's plan_listing_memo asks the same of its options in its own terms;
        the two are kept apart on purpose, as faults.py is, so that the back ends do not share
        a mistake: the lock-step tests compare them.)"""
        if not opt.params or opt.when is None:
            return None
        reads = self.reads
        for prm in opt.params:
            kind = T.strip(self.program.slot_types[self.program.slots[prm]]).kind
            if prm.domain is None:
                if kind not in ("enum", "bool"):
                    return None
            elif not (kind == "int" and isinstance(prm.domain, ast.Range)
                      and not reads.locals_of(prm.domain) and not reads.reads_game(prm.domain)):
                return None
        params = frozenset(self.program.slots[prm] for prm in opt.params)
        keys: list = []
        if not self._split_keys(opt.when, params, keys) or len(keys) > LISTING_KEYS:
            return None
        return tuple(keys)

    def _split_keys(self, e, params: frozenset, keys: list) -> bool:
        """Adds to keys the largest sub-expressions of e that read no parameter of params but
        read the position or outside locals (value_keys); False if e reads those some other
        way, or a key may fault or has values that are not plain (ints, bools, members,
        players and sets of those)."""
        reads = self.reads
        used = reads.locals_of(e)
        if params.isdisjoint(used):
            if used or reads.reads_game(e):
                t = T.strip(self.program.types[e])
                plain = t.kind in ("int", "bool", "enum", "player") or (
                    t.kind == "set" and t.elem is not None
                    and T.strip(t.elem).kind in ("enum", "bool", "player"))
                if not plain or not self.never_faults(e):
                    return False
                keys.append(e)
            return True
        if isinstance(e, ast.Name):
            return True  # a parameter
        if isinstance(e, ast.BinOp):
            parts = [e.left, e.right]
        elif isinstance(e, ast.Not | ast.Neg):
            parts = [e.operand]
        elif isinstance(e, ast.CondExpr):
            parts = [e.cond, e.then, e.orelse]
        elif isinstance(e, ast.Attr):
            parts = [e.obj]
        elif isinstance(e, ast.Call):
            ref = self.program.refs[e]
            if not (ref[0] == "table" or (ref[0] == "builtin" and BUILTINS[ref[1]].arith)
                    or (ref[0] == "def" and not reads.reads_game(self.program.defs[ref[1]].body))):
                return False
            parts = list(e.args)
        else:
            return False
        return all(self._split_keys(x, params, keys) for x in parts)

    def step(self, pc: int):
        """The function of instruction pc, made once by _Evaluator.step_<Instr>."""
        ins = self.lowered.code[pc]
        f = self.steps[pc] = getattr(_Evaluator, "step_" + type(ins).__name__)(
            _Evaluator(self, None), ins, pc)
        return f

    def watch(self, key) -> None:
        """List memo table `key` (a DefDecl or a `when` expression) under the state variables it
        reads, before its first table is made: whatever code path evaluates a def or a `when`
        test, its table is dropped by the right writes. A variable it reads only at an index
        given by one of its key's parts (Reads.at_index: a def's parameter, a `when` test's
        outside local) is also listed in readers_at with that part's position: a write
        through one index of it drops only the entries whose key has that index there."""
        if key not in self._watched:
            self._watched.add(key)
            self.trials[key] = [0, 0]  # its first tables' lookups and hits (_new_table)
            if isinstance(key, ast.DefDecl):
                whole, at = self.reads.at_def(key.name)
            else:  # a when table's key: the values of its outside locals (one: the value)
                slots = self.reads.locals_of(key)
                whole, at = self.reads.at_index(
                    key, {s: (i if len(slots) > 1 else None) for i, s in enumerate(slots)})
            for v in whole:
                self.readers.setdefault(v, []).append(key)
                self.whole_readers.setdefault(v, []).append(key)
            for v, where in at.items():
                self.readers.setdefault(v, []).append(key)
                self.readers_at.setdefault(v, []).extend((key, j) for j in sorted(
                    where, key=str))
            self.positions[key] = tuple(sorted({j for js in at.values() for j in js}, key=str))

    # -- formatting values by type
    def format_value(self, v, t: T.Type):
        """JSON form of a value of type t."""
        return format_value(self.program, v, t)

    def parse_value(self, j, t: T.Type):
        """Inverse of format_value: a JSON form back to the internal value."""
        if j is None:
            return None
        t = T.strip(t)
        k = t.kind
        if k == "enum":
            return self.program.enums[t.name].members.index(j)
        if k == "bool":
            return bool(j)
        if k == "graph":
            return str(j)
        if k in ("int", "player", "any"):
            return int(j)
        if k == "set":
            return frozenset(self.parse_value(x, t.elem) for x in j)
        if k == "list":
            return tuple(self.parse_value(x, t.elem) for x in j)
        if k == "array":
            if t.index.kind == "enum":
                names = self.program.enums[t.index.name].members
                return tuple(self.parse_value(j[n], t.elem) for n in names)
            return tuple(self.parse_value(x, t.elem) for x in j)
        raise AssertionError(t)

    def option(self, node: ast.Choose, oi: int) -> ast.Option:
        """Option oi of a decision: its own, then the standing options (flat)."""
        n = len(node.options)
        return node.options[oi] if oi < n else self.standing[oi - n][1]

    def option_slots(self, opt: ast.Option) -> tuple[str, ...]:
        """The frame slots of an option's parameters."""
        out = self._option_slots.get(opt)
        if out is None:
            out = self._option_slots[opt] = tuple(self.program.slots[p] for p in opt.params)
        return out

    def def_parts(self, d: ast.DefDecl) -> tuple:
        """The frame slots of a def's parameters; the function of its body (an expression's,
        or a block's); whether the body is a block; and where a none an expression body gives
        is a fault (None if its return type allows none)."""
        out = self._def_parts.get(d)
        if out is None:
            ev, where = _Evaluator(self, None), None
            block = isinstance(d.body, ast.Block)
            if block:
                body = ev.block_fn(d.body)
                ret = self.program.def_ret[d.name]
                if T.strip(ret).kind in ("list", "array"):
                    body = self._elems_returned(body, ret)
            else:
                body = ev.elems_checked(ev.fn(d.body), d.body, self.program.def_ret[d.name])
                if self.program.def_ret[d.name].kind not in ("opt", "none", "any"):
                    where = self.constants.locs[d.body]
            out = self._def_parts[d] = (tuple(self.program.slots[p] for p in d.params), body,
                                        block, where)
        return out

    def _elems_returned(self, body, ret: T.Type):
        """A block def's function checking the elements of the list or array it returns
        (conv() written out: types.none_levels)."""
        types = self.program.types

        def checked(ev, local):
            r = body(ev, local)
            if r is not None and r is not _BREAK:
                value, node = r
                levels = T.none_levels(types[node.value], ret)
                if levels is not None:
                    runtime.no_none_in(value, levels, loc(node.value.span))
            return r
        return checked

    def option_types(self, opt: ast.Option) -> tuple[T.Type, ...]:
        return tuple(self.program.slot_types[s] for s in self.option_slots(opt))

    def formatter(self, t: T.Type):
        """format_arg for values of type t, as one function."""
        t = T.strip(t)
        if t.kind == "enum":
            return self.program.enums[t.name].members.__getitem__
        if t.kind == "bool":
            return _format_bool
        return str

    def format_arg(self, v, t: T.Type) -> str:
        t = T.strip(t)
        if t.kind == "enum":
            return self.program.enums[t.name].members[v]
        if t.kind == "bool":
            return "true" if v else "false"
        return str(v)

    def domain(self, t: T.Type, n: int) -> range:
        t = T.strip(t)
        if t.kind == "enum":
            return range(len(self.program.enums[t.name].members))
        if t.kind == "player":
            return range(n)
        if t.kind == "bool":
            return (False, True)
        raise AssertionError(t)

    def new_game(self, num_players: int) -> State:
        if not isinstance(num_players, int) or not (
                self.min_players <= num_players <= self.max_players):
            raise ValueError(f"{self.name} takes {self.min_players}-{self.max_players} players, "
                             f"not {num_players}")
        st = State(self, num_players)
        ev = _Evaluator(self, st)
        for v in self.program.state_vars:
            t = self.program.state_types[v.name]
            vt = self.program.types[v.init]
            target = t  # the type the initial value fills: an array's element when broadcast
            while target.kind == "array" and not T.compatible(target, vt):
                target = target.elem
            val = ev.kept(v.init, ev.conv(v.init, {}, target))
            st.write(v.name, self._broadcast(val, t, vt, num_players))
        st._advance()
        return st

    def _broadcast(self, val, t: T.Type, vt: T.Type, n: int):
        if t.kind != "array" or T.compatible(t, vt):
            return val
        size = len(self.domain(t.index, n))
        inner = self._broadcast(val, t.elem, vt, n)
        return tuple(inner for _ in range(size))


@dataclasses.dataclass(frozen=True, eq=False)
class _Listing:
    """The memo key of an option's candidate lists: what they read (its parameters, with
    their domains, and its `when` test; not its body)."""

    params: tuple
    when: object

    @property
    def span(self):
        return self.when.span


class _Table(dict):
    """A memo table: a dict of key -> value, and for a def or test that reads some variable
    only at the index one of its key's parts gives (Game.positions), `by`: per such position,
    {index: the keys stored with that index there}, so that a write through one index drops
    those entries only (State.write_at). A key is listed once stored (remember); a list
    is emptied when its entries are dropped (a key dropped through another position stays
    listed, and dropping it again finds nothing)."""

    __slots__ = ("by",)

    def remember(self, key) -> None:
        """List key (just stored) under its index at each position of `by`."""
        for j, index in self.by.items():
            index.setdefault(key if j is None else key[j], []).append(key)


class _Trial(_Table):
    """A memo table on trial (Evaluator._new_table): a table that counts, in `counts` (the
    game's [lookups, hits] of its key), the lookups of get() and those that find a value."""

    __slots__ = ("counts",)

    def get(self, key, default=None):
        counts = self.counts
        counts[0] += 1
        v = dict.get(self, key, _MISSING)
        if v is _MISSING:
            return default
        counts[1] += 1
        return v


class _Choices:
    """The candidates of one decision (or chance node), in order: runs of (option index, list of
    value tuples), one run per option with candidates (a chance node has one run of outcomes,
    with their weights). The action strings are made only when asked for: random playouts
    pick by index, and a decision may have a thousand candidates."""

    __slots__ = ("game", "ins", "runs", "weights", "n", "_texts", "_uneven")

    def __init__(self, game: Game, ins, runs: list, weights: list | None) -> None:
        self.game, self.ins, self.runs, self.weights = game, ins, runs, weights
        self.n = sum(len(r[1]) for r in runs)
        self._texts: list[str] | None = None
        self._uneven = _MISSING

    def at(self, k: int) -> tuple[int, tuple]:
        """(option index, parameter values) of candidate k."""
        for oi, combos in self.runs:
            if k < len(combos):
                return oi, combos[k]
            k -= len(combos)
        raise IndexError(k)

    def text(self, k: int) -> str:
        if self._texts is not None:
            return self._texts[k]
        oi, values = self.at(k)
        return self._text(oi, values)

    def _form(self, oi: int) -> tuple[str, list]:
        """The action name of run oi and one argument formatter per parameter (made once per
        decision and option: Game.forms)."""
        node = self.ins.node
        g = self.game
        out = g.forms.get((node, oi))
        if out is None:
            if isinstance(node, ast.Chance):
                out = node.name, [g.formatter(g.program.slot_types[g.program.slots[node]])]
            else:
                opt = g.option(node, oi)
                out = opt.name, [g.formatter(t) for t in g.option_types(opt)]
            g.forms[(node, oi)] = out
        return out

    def _text(self, oi: int, values: tuple) -> str:
        name, fmts = self._form(oi)
        if len(fmts) == 1:
            return f"{name}({fmts[0](values[0])})"
        return f"{name}({', '.join(f(v) for f, v in zip(fmts, values))})"

    def texts(self) -> list[str]:
        if self._texts is None:
            out: list[str] = []
            for oi, combos in self.runs:
                name, fmts = self._form(oi)
                if len(fmts) == 1:
                    f = fmts[0]
                    out += [f"{name}({f(v)})" for (v,) in combos]
                else:
                    out += [f"{name}({', '.join(f(v) for f, v in zip(fmts, values))})"
                            for values in combos]
            self._texts = out
        return self._texts

    def first_end(self) -> int:
        """Index of the first candidate of an @end option, or -1."""
        k = 0
        ends = self.game.end_actions
        for oi, combos in self.runs:
            if self.game.option(self.ins.node, oi).name in ends:
                return k
            k += len(combos)
        return -1

    def uneven_weights(self) -> list[int] | None:
        """The chance weights, or None when they are all equal."""
        if self._uneven is _MISSING:
            ws = self.weights
            self._uneven = None if len(set(ws)) <= 1 else list(ws)
        return self._uneven


class _Singles:
    """The candidates of a one-parameter option with no `when` test: its domain's values, each
    as a 1-tuple when asked for (a bid may have a thousand)."""

    __slots__ = ("values",)

    def __init__(self, values) -> None:
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, k: int) -> tuple:
        return (self.values[k],)

    def __iter__(self):
        return ((v,) for v in self.values)


class State:
    """One game position. Implements the engine protocol of DESIGN.md section 4."""

    def __init__(self, game: Game, num_players: int) -> None:
        self.game = game
        self.num_players = num_players
        self.vars: dict[str, object] = {}
        self.frame: dict[str, object] = {}
        self.pc = 0
        self.phase: str | None = None
        self.current_player = 0
        self.history: list[str] = []
        # Per history entry, who sees it: None everyone; p >= 0 only p (a private draw);
        # -1 nobody; -2 - p only p until a `reveal` (a secret choice of p).
        self._seen: list[int | None] = []
        self._actions_cache: list | None = None
        # def / `when` memo tables: key (a DefDecl or a when expression) -> {args: value}
        self._memo: dict[object, dict] = {}

    # -- protocol
    def clone(self) -> State:
        c = State.__new__(State)
        c.game, c.num_players = self.game, self.num_players
        c.vars, c.frame = dict(self.vars), dict(self.frame)
        c.pc, c.phase, c.current_player = self.pc, self.phase, self.current_player
        c.history, c._seen = list(self.history), list(self._seen)
        c._actions_cache = self._actions_cache
        c._memo = {}
        return c

    def write(self, name: str, value) -> None:
        """Set state variable `name`; every state write goes through here, and drops the memo
        tables of the defs and `when` tests that read it, unless the value is equal to the one
        it replaces (values are immutable, and a variable's values all have its type: equal
        values read the same, so every remembered value stays right)."""
        vars = self.vars
        memo = self._memo
        if memo and vars.get(name, _MISSING) != value:
            for key in self.game.readers.get(name, ()):
                memo.pop(key, None)
        vars[name] = value

    def write_at(self, name: str, i, value) -> None:
        """Set state variable `name` to `value`, a container equal to its value but for item i
        (a write through one index: v[i] = ..., v[i][j] += ...). Tables of what reads v wholly
        are dropped; of what reads v only at an index its key holds (Game.readers_at), only the
        entries whose key holds i there: the others read only other items of v, which are
        unchanged, and its length, which is too. Nothing is dropped if item i is equal to the
        one it replaces."""
        vars = self.vars
        memo = self._memo
        if memo and vars[name][i] != value[i]:
            g = self.game
            for key in g.whole_readers.get(name, ()):
                memo.pop(key, None)
            for key, j in g.readers_at.get(name, ()):
                table = memo.get(key)
                if table is not None:
                    for k in table.by[j].pop(i, ()):
                        table.pop(k, None)
        vars[name] = value

    def is_terminal(self) -> bool:
        return self.current_player == TERMINAL

    def _choices(self, ev: _Evaluator | None = None) -> _Choices:
        """The candidates of the current decision or chance node, worked out once per decision
        and shared by every protocol call until the state changes (ev: the evaluator of the
        flow that has just paused here, if it is running)."""
        if self._actions_cache is None:
            ins = self.game.lowered.code[self.pc]
            if ev is None:
                ev = _Evaluator(self.game, self)
            if isinstance(ins, ChooseAt):
                self._actions_cache = ev.legal(ins, self.frame)
            elif isinstance(ins, ChanceAt):
                self._actions_cache = ev.outcomes(ins, self.frame)
            else:
                self._actions_cache = _Choices(self.game, ins, [], None)
        return self._actions_cache

    def legal_actions(self) -> list[str]:
        if self.current_player < 0:
            return []
        return list(self._choices().texts())

    def chance_outcomes(self) -> list[tuple[str, Fraction]]:
        if self.current_player != CHANCE:
            return []
        ch = self._choices()
        total = sum(ch.weights)
        return [(t, Fraction(w, total)) for t, w in zip(ch.texts(), ch.weights)]

    def num_choices(self) -> int:
        return 0 if self.current_player == TERMINAL else self._choices().n

    def chance_weights(self) -> list[int] | None:
        if self.current_player != CHANCE:
            return None
        return self._choices().uneven_weights()

    def end_action_index(self) -> int:
        """Index of the first legal end declaration (an @end option), or -1."""
        if self.current_player < 0:
            return -1
        return self._choices().first_end()

    def apply(self, action: str) -> None:
        if self.current_player == TERMINAL:
            raise IllegalAction(f"the game is over; cannot apply {action!r}")
        names = self._choices().texts()
        if not isinstance(action, str) or action not in names:
            legal = ", ".join(names[:12]) + (" ..." if len(names) > 12 else "")
            raise IllegalAction(f"{action!r} is not legal here; legal: {legal}")
        self.apply_index(names.index(action))

    def apply_index(self, k: int) -> None:
        if self.current_player == TERMINAL:
            raise IllegalAction("the game is over")
        choices = self._choices()
        if type(k) is not int or not 0 <= k < choices.n:
            raise IllegalAction(f"choice index {k!r} out of range 0..{choices.n - 1}")
        saved = (dict(self.vars), dict(self.frame), self.pc, self.phase, self.current_player,
                 len(self.history), self._actions_cache, list(self._seen))
        try:
            self._apply(choices, k)
        except BaseException:
            (self.vars, self.frame, self.pc, self.phase, self.current_player, n,
             self._actions_cache, self._seen) = saved
            del self.history[n:]
            self._memo.clear()  # entries made after a write would describe the undone state
            raise

    def _apply(self, choices: _Choices, k: int) -> None:
        ins = self.game.lowered.code[self.pc]
        text = choices.text(k)
        oi, values = choices.at(k)
        if isinstance(ins, ChooseAt) and oi >= len(ins.node.options):
            # a standing option: public history even at a secret decision; its body runs on
            # locals of its own, then the same decision is asked again (the pc stays)
            sd, opt = self.game.standing[oi - len(ins.node.options)]
            env = {self.game.program.slots[sd]: self.current_player,
                   **dict(zip(self.game.option_slots(opt), values))}
            self.history.append(text)
            self._seen.append(None)
            _Evaluator(self.game, self).exec_block(opt.body, env)
        elif isinstance(ins, ChooseAt):
            self.frame.update(zip(self.game.option_slots(ins.node.options[oi]), values))
            self.history.append(text)
            self._seen.append(-2 - self.current_player if ins.node.secret else None)
            self.pc = ins.targets[oi]
        else:
            self.frame[self.game.program.slots[ins.node]] = values[0]
            seen = None
            if ins.node.seen_by is not None:
                who = _Evaluator(self.game, self).eval(ins.node.seen_by, self.frame)
                seen = -1 if who is None else who
            self.history.append(text)
            self._seen.append(seen)
            self.pc += 1
        self._actions_cache = None
        self._advance()

    def scores(self) -> list[int]:
        sd = self.game.program.score
        return [self._score(sd, p) for p in range(self.num_players)]

    def _score(self, sd: ast.ScoreDecl, p: int) -> int:
        ev = _Evaluator(self.game, self)
        return runtime.bounded(ev.conv(sd.expr, {self.game.program.slots[sd]: p}, T.INT),
                               ev.int_max, loc(sd.expr.span))

    def heuristic(self) -> list[int] | None:
        """The rules file's `heuristic p => ...` for every player (bots read it), or None."""
        sd = self.game.program.heuristic
        if sd is None:
            return None
        return [self._score(sd, p) for p in range(self.num_players)]

    def winners(self) -> list[int]:
        if not self.is_terminal():
            return []
        tb = self.game.program.tiebreak
        keys = [(s, self._score(tb, p) if tb else 0) for p, s in enumerate(self.scores())]
        best = max(keys)
        return [p for p, k in enumerate(keys) if k == best]

    # -- serialisation
    def _json_obj(self, viewer: int | None = None) -> dict:
        g = self.game
        prog = g.program
        out_vars = {}
        for v in prog.state_vars:
            t = prog.state_types[v.name]
            val = g.format_value(self.vars[v.name], t)
            if viewer is not None:
                if v.visibility == "hidden":
                    continue
                if v.visibility == "private":
                    val = [x if i == viewer else None for i, x in enumerate(val)]
            out_vars[v.name] = val
        obj = {"game": g.name, "phase": self.phase, "current_player": self.current_player,
               "num_players": self.num_players, "vars": out_vars}
        if viewer is None:
            ins = g.lowered.code[self.pc]
            obj["pc"] = self.pc
            scope = getattr(ins, "scope", ())
            obj["locals"] = {key: g.format_value(self.frame.get(s), prog.slot_types[s])
                             for key, s in zip(prog.local_keys(scope), scope)}
            obj["loops"] = [[[g.format_value(x, g.lowered.loop_elem[k])
                              for x in self.frame[f"$it{k}"]], self.frame[f"$ix{k}"]]
                            for k in getattr(ins, "loops", ())]
        return obj

    def to_json(self) -> str:
        return runtime.canonical_json(self._json_obj())

    def set_vars(self, values: dict) -> None:
        """Overwrite state variables from their JSON form (scenario set-up for tests and
        designers); the pending decision stays where it is and its legal actions are redone
        at once, so a fault in them is raised here, with the state as it was."""
        prog = self.game.program
        for name in values:
            if name not in prog.state_types:
                raise KeyError(f"no state variable {name!r}")
        # all or nothing: every value is read before anything is written, and if working out
        # the pending choices faults with the new values, the old ones are put back
        new = {name: self.game.parse_value(j, prog.state_types[name])
               for name, j in values.items()}
        old = {name: self.vars[name] for name in new}
        cache = self._actions_cache
        for name, v in new.items():
            self.write(name, v)
        self._actions_cache = None
        if self.current_player != TERMINAL:
            try:
                self._choices()
            except BaseException:
                for name, v in old.items():
                    self.write(name, v)
                self._actions_cache = cache
                self._memo.clear()  # entries made with the new values would describe them
                raise

    def get_var(self, name: str):
        """A state variable in its JSON form."""
        return self.game.format_value(self.vars[name], self.game.program.state_types[name])

    def digest(self) -> str:
        return runtime.digest(self.to_json())

    def history_for(self, p: int) -> list[str]:
        """The history as player p may see it: others' secrets and private draws are "?"."""
        runtime.check_viewer(p, self.num_players)
        return [h if w is None or w == p or w == -2 - p else "?"
                for h, w in zip(self.history, self._seen)]

    def observation(self, p: int, history: bool = True) -> dict:
        runtime.check_viewer(p, self.num_players)
        obj = self._json_obj(viewer=p)
        obj["player"] = p
        if history:
            obj["history"] = self.history_for(p)
        if self.current_player == p:
            obj["legal_actions"] = self.legal_actions()
        return obj

    # -- running the flow
    def _advance(self) -> None:
        """Run the lowered instruction list from self.pc to the next pause or the end: each
        instruction's function (Game.step) does what it says and gives the next pc, or -1 at a
        pause (having set self.pc, the player, and worked out the choices)."""
        steps = self.game.steps
        ev = _Evaluator(self.game, self)
        ev.loop_steps = 0  # starts of flow `while` bodies since the last pause
        frame = self.frame
        pc = self.pc
        while pc >= 0:
            pc = (steps[pc] or self.game.step(pc))(self, ev, frame)


class _Evaluator(ExprEvaluator):
    """The shared expression evaluator, with the state, defs, statements and decisions."""

    # While one decision's candidates are worked out (legal): per level L, the values found so
    # far of the parts of its `when` tests and domains that read only the first L parameters of
    # their option (L = 0: none) and the locals outside it, for the values those have now
    # (see prefix_fn).
    known: list | None = None

    def __init__(self, game: Game, state: State | None) -> None:
        super().__init__(game.constants, game.fns)
        self.g = game
        self.s = state
        if state is not None:
            self.vars = state.vars
            if not VERIFY_MEMO:  # (else every call comes to call_def, which checks hits)
                self.memo = state._memo

    def num_players(self, e) -> int:
        if self.s is None:
            return super().num_players(e)
        return self.s.num_players

    def stops_early(self, e: ast.Agg) -> bool:
        nf = self.g.never_faults
        return nf(e.elem) and (e.cond is None or nf(e.cond))

    def call_def(self, d: ast.DefDecl, args: tuple, table=None):
        """A def's value, remembered per argument tuple in the def's memo table. A call that has
        just found d's table without args in it (fn_Call) passes the table: the value is
        worked out and stored without looking args up again."""
        if table is not None:
            if type(table) is _Trial:  # the trial counts a def's miss twice, as it always has
                table.counts[0] += 1   # (once in fn_Call, once more here: lookup and store)
            v = table[args] = self._run_def(d, args)
            if table.by is not None:
                table.remember(args)
            return v
        if self.s is None or d in self.g.memo_off:  # (memoised would find no table either)
            return self._run_def(d, args)
        return self.memoised(d, args, self._run_def, d, args)

    def memoised(self, key, k, fn, a, b):
        """fn(a, b), remembered under k in the state's memo table `key` (a def, a `when` test or
        an option's _Listing; see _new_table): the one place where tables are found, made,
        tried, filled and, under VERIFY_MEMO, checked."""
        table = self.s._memo.get(key)
        if table is None:
            if key in self.g.memo_off:
                return fn(a, b)
            table = self._new_table(key)
            if table is None:  # found useless on its trial
                return fn(a, b)
        v = table.get(k, _MISSING)
        if v is _MISSING:
            v = table[k] = fn(a, b)
            if table.by is not None:
                table.remember(k)
        elif VERIFY_MEMO:
            fresh = fn(a, b)
            assert fresh == v and type(fresh) is type(v), (key, k, v, fresh)
        return v

    def _run_def(self, d: ast.DefDecl, args):
        slots, body, block, where = self.g._def_parts.get(d) or self.g.def_parts(d)
        n = len(slots)  # the parameters bound (a dict display is cheaper than dict(zip()))
        local = {slots[0]: args[0]} if n == 1 else {slots[0]: args[0], slots[1]: args[1]} \
            if n == 2 else dict(zip(slots, args))
        if block:
            r = body(self, local)  # (value, the return statement)
            if r is None or r is _BREAK:  # pragma: no cover
                raise AssertionError("checked defs always return")
            value, node = r
            if value is None and self.p.def_ret[d.name].kind not in ("opt", "any"):
                runtime.fault_none(loc(node.value.span))
            return value
        v = body(self, local)
        if v is None and where is not None:  # conv() written out
            runtime.fault_none(where)
        return v

    def _new_table(self, key) -> dict | None:
        """The state's memo table `key` (a def or a `when` test), made empty. Its values stay
        until a write to a variable it reads drops it (State.write); a value that faults is
        never stored, so the fault comes again, at the same place, the next time.
        The first tables of a key are on trial (_Trial: they count their lookups and hits for
        the game); once TRIAL_LOOKUPS lookups are counted, a key whose tables found fewer than
        one in TRIAL_HITS of them is left without tables for the rest of the game (Game.memo_off:
        None here; its values are then worked out at every call, which is always exact).
        (Trying such keys again every few thousand calls was measured: in 3 games each of
        Acquire, Automobile and Power Grid no key passed a second trial, and Power Grid took
        3% more instructions.)"""
        g = self.g
        g.watch(key)
        trial = g.trials.get(key)
        if trial is None:  # a key tried and kept
            table = _Table()
        elif trial[0] < TRIAL_LOOKUPS:
            table = _Trial()
            table.counts = trial
        else:
            del g.trials[key]
            if trial[1] * TRIAL_HITS < trial[0]:
                g.memo_off.add(key)
                return None
            table = _Table()
        positions = g.positions[key]
        table.by = {j: {} for j in positions} if positions else None
        self.s._memo[key] = table
        return table

    # -- decisions and chance
    def when(self, e, env: dict) -> bool:
        """An option's `when` test (see when_fn)."""
        return bool(self.when_fn(e)(self, env))

    def when_fn(self, e):
        """The function f(ev, env) of an option's `when` test e, made once: remembered per
        values of the outside locals it reads if it calls a def or has an aggregate (a plain
        test is cheaper to redo than to look up; its function is e's own, whose value the
        caller takes as true or false). Also when those are in its prefix parts: the table
        outlives the decision (until a write to what it reads), the prefix parts do not."""
        key = ("when", e)
        f = self.fns.get(key)
        if f is not None:
            return f
        test = self.fn(e)
        slots = self.g.reads.locals_of(e) if self.g.reads.costly(e) else None
        if isinstance(e, ast.Call) and self.p.refs[e][0] == "def":
            slots = None  # one def call: remembered in the def's own table, per argument
        if slots is None:
            f = test
        else:
            get = itemgetter(*slots) if slots else (lambda env: ())

            def f(ev, env):
                try:
                    key = get(env)  # the values of the slots (one: the value itself)
                except KeyError:  # pragma: no cover - a test reads only bound locals
                    key = tuple([env.get(s, _MISSING) for s in slots])
                table = ev.s._memo.get(e)
                if table is not None and not VERIFY_MEMO:  # a hit without another frame
                    v = table.get(key, _MISSING)
                    if v is not _MISSING:
                        return v
                return ev.memoised(e, key, test, ev, env)  # (taken as true or false)
        self.fns[key] = f
        return f

    def legal(self, ins: ChooseAt, frame: dict) -> _Choices:
        self.known = [{} for _ in range(self.g.max_params + 1)]
        try:
            return self._legal(ins, frame)
        finally:  # the prefix parts' values are the listing's (the flow may go on: `else`)
            self.known = None

    def _legal(self, ins: ChooseAt, frame: dict) -> _Choices:
        runs = []
        # One copy of the frame for all the options: each local has a slot of its own, and an
        # option's listing binds only its parameters and its comprehensions' variables, which
        # no other option reads, and takes them out again (the frame itself is left alone)
        env = dict(frame)
        for oi, opt in enumerate(ins.node.options):
            combos = self._combos(opt, env)
            if combos:
                runs.append((oi, combos))
        if runs and self.g.standing:
            # the deciding player's standing options, after the decision's own legal actions
            n = len(ins.node.options)
            for j, (sd, opt) in enumerate(self.g.standing):
                combos = self._combos(opt, {self.p.slots[sd]: self.s.current_player})
                if combos:
                    runs.append((n + j, combos))
        return _Choices(self.g, ins, runs, None)

    def listing(self, listed: tuple, parts: tuple, env: dict) -> list:
        """The candidates of an option with parts `parts` (as _combos gives them), remembered
        per values of the outside locals its domains and `when` test read, in the state's
        memo table `listed[0]` (its _Listing; listed[1] gives those values from env)."""
        key, get = listed
        return self.memoised(key, get(env), self._listed, parts, env)

    def option_parts(self, opt: ast.Option) -> tuple:
        """An option's parameter slots, the function of each parameter's domain, its `when`
        test's function (None without one), and per parameter i the leading conjuncts of its
        `when` test that end the listing of the candidates left under a prefix when they are
        known to be false (see dead_ends), made once."""
        key = ("option", opt)
        parts = self.fns.get(key)
        if parts is None:
            slots = self.g.option_slots(opt)
            levels = {slot: i + 1 for i, slot in enumerate(slots)}
            for i, prm in enumerate(opt.params):
                if prm.domain is not None:
                    self.steady_parts(prm.domain, levels, i)
            for c in _conjuncts(opt.when):  # each operand of its `and` chain on its own
                self.steady_parts(c, levels, len(slots))
            domains = tuple(self.domain_fn(prm, slot) for prm, slot in zip(opt.params, slots))
            test = self.when_fn(opt.when) if opt.when is not None else None
            stops = self.dead_ends(opt, levels)
            lead, tail = self.known_lead(opt, levels)
            if lead:  # its own function, no memo table: a hit would leave the lead unknown
                test = self.fn(opt.when)
            # kept on the game per key values (value_keys), or else maybe in the state's tables
            value_keys = self.g.value_keys(opt)
            listed = None
            if value_keys is not None:
                self.g.listed[opt] = {}
                value_keys = tuple(self.fn(k) for k in value_keys)
            else:
                listed = self.g.listing_key(opt)
            parts = self.fns[key] = (slots, domains, test, stops, lead, tail, listed,
                                     value_keys)
        return parts

    def _combos(self, opt: ast.Option, env: dict):
        """The parameter values of an option's legal actions, in order (env: the locals its
        domains and `when` may read; the parameters are bound in it as they go): a sequence of
        value tuples."""
        parts = self.option_parts(opt)
        slots, domains, test = parts[:3]
        if not slots:
            return [()] if test is None or test(self, env) else []
        if len(slots) == 1 and test is None:
            return _Singles(domains[0](self, env))  # each value is a candidate
        if parts[7] is not None:
            return self.kept_listing(opt, parts, env)
        if parts[6] is not None:
            return self.listing(parts[6], parts, env)
        return self._listed(parts, env)

    def kept_listing(self, opt: ast.Option, parts: tuple, env: dict) -> list:
        """The candidates of an option with value keys (Game.value_keys), kept on the game per
        the keys' values (at most LISTING_MEMO of them). The keys are evaluated first: they
        cannot fault, and read what the tests would read (a listing changes nothing); every
        other part of the tests and the domains is a function of the parameters and the
        keys, so the same keys give the same candidates, in the same order, and the same
        fault (a listing that faults is not kept; the next one faults again, at the same
        place)."""
        kept = self.g.listed[opt]
        key = tuple([f(self, env) for f in parts[7]])
        out = kept.get(key)
        if out is None:
            out = self._listed(parts, env)
            if len(kept) < LISTING_MEMO:
                kept[key] = out
        elif VERIFY_MEMO:
            fresh = self._listed(parts, env)
            assert fresh == out, (opt.name, key, out, fresh)
        return out

    def _listed(self, parts: tuple, env: dict) -> list:
        """The candidates of an option with parts `parts`, each one tested."""
        out: list[tuple] = []
        self._bind(parts, 0, env, out, ())
        return out

    def _bind(self, parts: tuple, i: int, env: dict, out: list, head: tuple) -> None:
        """Bind the option's parameters i.. in env to each combination of their values in
        turn (head: the values of those before i), adding to out the values of those for
        which its `when` test holds. Binding parameter i forgets the values of the prefix
        parts that read it (ev.known[i + 1]); after each value, the loop stops if a conjunct
        in stops[i] is known false for the prefix it reads (see dead_ends)."""
        slots, domains, test, stops, lead, tail = parts[:6]
        slot = slots[i]
        values = domains[i](self, env)
        stop = stops[i]
        if i + 1 < len(slots):
            known = self.known[i + 1]
            for v in values:
                env[slot] = v
                known.clear()
                self._bind(parts, i + 1, env, out, head + (v,))
                if stop and self._dead(stop):
                    break
        else:  # the last parameter: the values of the others are bound
            if test is None:  # each value is a candidate
                out += [head + (v,) for v in values]
            elif lead:
                self._last(parts, values, env, head, out)
            elif stop:
                for v in values:
                    env[slot] = v
                    if test(self, env):
                        out.append(head + (v,))
                    elif self._dead(stop):
                        break
            else:  # each value is a candidate if `when` holds
                for v in values:
                    env[slot] = v
                    if test(self, env):
                        out.append(head + (v,))
        env.pop(slot, None)

    def _last(self, parts: tuple, values, env: dict, head: tuple, out: list) -> None:
        """_bind's loop over the last parameter's values, for a `when` test with leading
        operands that read only the parameters before it (known_lead): once each of them has
        been found true, the operands after them (tail) decide for the values left."""
        slots, _domains, test, stops, lead, tail = parts[:6]
        slot, stop = slots[-1], stops[-1]
        values = iter(values)
        for v in values:
            env[slot] = v
            if test(self, env):
                out.append(head + (v,))
            elif stop and self._dead(stop):
                return
            if self._known_true(lead):
                for v in values:
                    env[slot] = v
                    if tail is None or tail(self, env):
                        out.append(head + (v,))
                        if VERIFY_MEMO:
                            assert test(self, env), (slots, v)
                    elif VERIFY_MEMO:
                        assert not test(self, env), (slots, v)
                return

    def _known_true(self, lead: tuple) -> bool:
        """Whether every conjunct in lead has been found true for the current prefix."""
        known = self.known
        for e, level in lead:
            if not known[level].get(e, False):
                return False
        return True

    def known_lead(self, opt: ast.Option, levels: dict) -> tuple:
        """(lead, tail) for an option's `when` test c1 and c2 and ... (its operands as logic_fn
        flattens them): lead, the (operand, level) pairs of its leading operands made prefix
        parts at levels below the number of parameters (they read only the parameters bound
        before the last one), and tail the function testing the operands after them, in order,
        as an `and` chain does (None: there are none). While the last parameter runs over its
        values the others are bound: once each of c1 ... cm in lead has been found true there,
        every value left evaluates them again to true, with nothing else and no fault, then the
        rest of the chain; so the rest of the chain alone decides (_bind). Nothing is
        skipped unless all of them have been found true (a false operand before them
        evaluates none of them). Such a test is evaluated by its own function, not through
        a memo table (option_parts): a hit would not evaluate the lead, and the tail costs
        about what a lookup does (Poder advanced, whose offers have such tests: 1,034,715
        instructions per decision through the tables, 962,985 without)."""
        n = len(opt.params)
        if opt.when is None or n == 0:
            return (), None
        reads, ops = self.g.reads, _conjuncts(opt.when)
        lead: list = []
        for c in ops:
            if getattr(self.fns.get(c), "__name__", "") not in ("steady", "prefix") \
                    or reads.bound_in(c):
                break
            level = self.level(c, levels)
            if level >= n:
                break
            lead.append((c, level))
        rest = tuple(self.fn(c) for c in ops[len(lead):])
        if not lead:
            return (), None
        if not rest:
            return tuple(lead), None
        if len(rest) == 1:
            one = rest[0]
            return tuple(lead), lambda ev, env: True if one(ev, env) else False

        def tail(ev, env):
            for t in rest:
                if not t(ev, env):
                    return False
            return True
        return tuple(lead), tail

    def _dead(self, stop: tuple) -> bool:
        """Whether one of the conjuncts in stop has been found false for the current prefix."""
        known = self.known
        for e, level in stop:
            v = known[level].get(e, True)
            if not v:
                return True
        return False

    def dead_ends(self, opt: ast.Option, levels: dict) -> tuple:
        """Per parameter i, the (conjunct, level) pairs whose being known false ends the loop of
        parameter i. Let the `when` test be c1 and c2 and ... (its operands as logic_fn
        flattens them), and cm one of its leading operands made a prefix part at level L
        (it reads only the first L parameters, L < the number of parameters), with c1 ...
        c(m-1) such parts too, of levels at most L. Once cm has been found false under a
        prefix of L values, it was found after c1 ... c(m-1) were found true there; every
        candidate left under that prefix would evaluate c1 ... c(m-1) to the same values
        (they read only the prefix, the state does not change) and cm to false, and stop
        there: false, with nothing else evaluated and no fault. So its candidates can be
        skipped (the loops of parameters L .. stop) provided the domains evaluated on the
        way (those of parameters L+1 ..) read no parameter after the prefix: then they give
        the values they gave on the way to the first candidate, without a fault."""
        n = len(opt.params)
        if opt.when is None or n == 0:
            return ((),) * n
        reads = self.g.reads
        dom_levels = [self.level(prm.domain, levels) if prm.domain is not None else 0
                      for prm in opt.params]
        found, top = [], 0
        for c in _conjuncts(opt.when):
            if getattr(self.fns.get(c), "__name__", "") not in ("steady", "prefix"):
                break
            level = self.level(c, levels)
            if level < top or reads.bound_in(c) or level >= n:
                break
            top = level
            if all(dom_levels[j] <= level for j in range(level + 1, n)):
                found.append((c, level))
        return tuple(tuple((c, lv) for c, lv in found if lv <= i) for i in range(n))

    def level(self, e, levels: dict) -> int:
        """1 + the index of the last option parameter e reads (0: none)."""
        return max((levels.get(s, 0) for s in self.g.reads.locals_of(e)), default=0)

    def steady_parts(self, e, levels: dict, top: int) -> None:
        """Give the largest parts of expression e (an option's domain or `when` test,
        evaluated once per values of its first `top` parameters) that read fewer of the
        option's parameters (a prefix: its first L, L < top; or none) and no variable bound
        inside e the function prefix_fn at level L, so that they are evaluated once per
        decision and values of that prefix: before the functions of e are made, since a
        node's function is made once and its parent's takes it then. Names, literals and enum
        members are left alone (as cheap to read again as to look up). `levels`: the level of
        each parameter's slot (1 + its index)."""
        reads = self.g.reads
        inner = reads.bound_in(e)
        todo = [e]
        while todo:
            x = todo.pop()
            if x in self.fns:  # already made (e evaluated before): left as it is
                continue
            if isinstance(x, _EXPRS) and not isinstance(x, _CHEAP):
                used = reads.locals_of(x)
                level = max((levels.get(s, 0) for s in used), default=0)
                if level < max(top, 1) and not inner.intersection(used):
                    self.fns[x] = self.prefix_fn(x, level)
                    continue
            todo += reads.children(x)

    def prefix_fn(self, e, level: int):
        """e's function, its value remembered (in ev.known[level]) for the rest of the decision
        whose candidates are being worked out (none outside legal()), while the first `level`
        parameters of its option keep their values (binding parameter level-1 forgets it:
        _bind). The state does not change while the candidates are listed, e reads no other
        parameter and no other local that changes during the listing, and it is evaluated the
        first time where it always was: the same values and the same first fault (a value that
        faults is not remembered; the listing stops there). Level 0 (`steady`): e reads no
        parameter, remembered for the whole listing."""
        f = self.fn(e)

        def steady(ev, env):
            known = ev.known
            if known is None:
                return f(ev, env)
            table = known[level]
            v = table.get(e, _MISSING)
            if v is _MISSING:
                v = table[e] = f(ev, env)
            elif VERIFY_MEMO:
                fresh = f(ev, env)
                assert fresh == v and type(fresh) is type(v), (e, v, fresh)
            return v
        if level:
            steady.__name__ = "prefix"
        return steady

    def domain_fn(self, prm: ast.OParam, slot: str):
        """The function giving the values an option parameter runs over, in order: an int
        parameter's collection, or the members of its enum, player or bool type (those in its
        collection, if it names one)."""
        t = self.p.slot_types[slot]
        if t.kind == "int":
            return self.iterate_fn(prm.domain)
        g = self.g
        every = None if T.strip(t).kind == "player" else g.domain(t, 0)
        allowed_of = self.nn_fn(prm.domain) if prm.domain is not None else None

        def domain(ev, env):
            dom = every if every is not None else range(ev.s.num_players)
            if allowed_of is None:
                return dom
            allowed = allowed_of(ev, env)  # a set or list: only membership counts
            if not isinstance(allowed, frozenset):
                allowed = set(allowed)
            return list(filter(allowed.__contains__, dom))  # (no Python frame per member)
        return domain

    def outcomes(self, ins: ChanceAt, frame: dict) -> _Choices:
        node = ins.node
        slot = self.p.slots[node]
        values = self.iterate(node.domain, frame)
        if node.weight is None and len(dict.fromkeys(values)) == len(values):
            # each value once, of weight 1: the values are the outcomes
            ch = _Choices(self.g, ins, [(0, _Singles(values))], [1] * len(values))
            ch._uneven = None
            return ch
        weights: dict[object, int] = {}
        env = dict(frame)
        for v in values:
            if node.weight is not None:
                env[slot] = v
                w = self.nn(node.weight, env)
                if w < 0:
                    runtime.fault_weight(loc(node.weight.span))
            else:
                w = 1
            weights[v] = weights.get(v, 0) + w
        kept = [(v, w) for v, w in weights.items() if w > 0]
        return _Choices(self.g, ins, [(0, [(v,) for v, _w in kept])], [w for _v, w in kept])

    # -- the lowered instructions (lower.py): step_<Instr>(ins, pc) makes the function
    # f(state, ev, frame) that runs instruction pc and gives the next pc, or -1 at a pause.
    def step_Exec(self, ins: Exec, pc: int):
        run, nxt = self.stmt_fn(ins.stmt), pc + 1

        def exec_(st, ev, frame):
            run(ev, frame)
            return nxt
        return exec_

    def step_Bind(self, ins: Bind, pc: int):
        slot, nxt = ins.slot, pc + 1
        value = self.kept_fn(ins.expr, self.conv_fn(ins.expr, self.p.slot_types[slot]))

        def bind(st, ev, frame):
            frame[slot] = value(ev, frame)
            return nxt
        return bind

    def step_Jump(self, ins: Jump, pc: int):
        target = ins.target
        return lambda st, ev, frame: target

    def step_JumpIfNot(self, ins: JumpIfNot, pc: int):
        cond, target, nxt = self.fn(ins.cond), ins.target, pc + 1
        if ins.loop is None:
            return lambda st, ev, frame: nxt if cond(ev, frame) else target
        limit, where = self.limits.max_loop_steps, self.at(ins.loop)

        def loop_test(st, ev, frame):  # a flow `while` whose round may pass no pause
            if not cond(ev, frame):
                return target
            ev.loop_steps += 1
            if ev.loop_steps > limit:
                runtime.fault_loop_limit(limit, where)
            return nxt
        return loop_test

    def step_IterInit(self, ins: IterInit, pc: int):
        items_of, it, ix, nxt = self.iterate_fn(ins.expr), f"$it{ins.loop}", f"$ix{ins.loop}", \
            pc + 1

        def iter_init(st, ev, frame):
            frame[it] = items_of(ev, frame)
            frame[ix] = 0
            return nxt
        return iter_init

    def step_IterNext(self, ins: IterNext, pc: int):
        it, ix, slot, target, nxt = f"$it{ins.loop}", f"$ix{ins.loop}", ins.slot, ins.target, \
            pc + 1

        def iter_next(st, ev, frame):
            items, i = frame[it], frame[ix]
            if i < len(items):
                frame[slot] = items[i]
                frame[ix] = i + 1
                return nxt
            return target
        return iter_next

    def step_SetPhase(self, ins: SetPhase, pc: int):
        name, nxt = ins.name, pc + 1

        def set_phase(st, ev, frame):
            st.phase = name
            return nxt
        return set_phase

    def step_Copy(self, ins: Copy, pc: int):
        dst, src, nxt = ins.dst, ins.src, pc + 1

        def copy(st, ev, frame):
            frame[dst] = frame.get(src)
            return nxt
        return copy

    def step_DepthFault(self, ins: DepthFault, pc: int):
        phase, depth, where = ins.phase, ins.depth, self.at(ins.node)

        def depth_fault(st, ev, frame):
            runtime.fault_phase_depth(phase, depth, where)
        return depth_fault

    def step_FinishAt(self, ins: FinishAt, pc: int):
        def finish(st, ev, frame):
            st.pc = pc
            st.current_player = TERMINAL
            return -1
        return finish

    def step_ChooseAt(self, ins: ChooseAt, pc: int):
        player, orelse, where = self.nn_fn(ins.node.player), ins.orelse, self.at(ins.node)

        def choose(st, ev, frame):
            st.pc = pc
            st.current_player = player(ev, frame)
            if st._choices(ev).n == 0:
                if orelse >= 0:  # `choose ... else`: no pause, nothing in the history
                    st._actions_cache = None
                    return orelse
                runtime.fault_no_choice(where)
            return -1
        return choose

    def step_ChanceAt(self, ins: ChanceAt, pc: int):
        name, where = ins.node.name, self.at(ins.node)

        def chance(st, ev, frame):
            st.pc = pc
            st.current_player = CHANCE
            if st._choices(ev).n == 0:
                runtime.fault_no_outcome(name, where)
            return -1
        return chance

    # -- statements (no pauses: the lowering handles those)
    # Each statement's meaning is made once into a function f(ev, env), as expressions are
    # (fn_<Node>): exec_<Stmt>(s) makes it, a plain transcription of what running s does, with
    # its children's functions, slots, types and locations looked up when it is made. It gives
    # None, or what ends the blocks it is in: _BREAK at a `break` (its loop ends), (value, the
    # statement) at a `return` (its def ends): plain values, not exceptions, which cost more.
    _stmt_makers: dict[type, object] = {}

    def stmt_fn(self, s):
        """The function f(ev, env) running statement s, made once."""
        f = self.fns.get(s)
        if f is None:
            make = self._stmt_makers.get(type(s))
            if make is None:
                make = self._stmt_makers[type(s)] = getattr(_Evaluator,
                                                            "exec_" + type(s).__name__)
            f = self.fns[s] = make(self, s)
        return f

    def block_fn(self, b: ast.Block):
        """The function running a block's statements in order, made once."""
        f = self.fns.get(b)
        if f is None:
            stmts = tuple(self.stmt_fn(s) for s in b.stmts)
            if len(stmts) == 1:
                f = stmts[0]
            else:
                def f(ev, env):
                    for s in stmts:
                        r = s(ev, env)
                        if r is not None:  # a break or a return: the rest is not run
                            return r
                    return None
            self.fns[b] = f
        return f

    def exec_block(self, b: ast.Block, env: dict) -> None:
        self.block_fn(b)(self, env)

    def exec_Let(self, s):
        slot = self.p.slots[s]
        value = self.kept_fn(s.value, self.conv_fn(s.value, self.p.slot_types[slot]))

        def let(ev, env):
            env[slot] = value(ev, env)
        return let

    def target_fn(self, lv: ast.LValue):
        """The function write(ev, env, fn, v) that puts fn(old, v) in place of the value `old`
        at lvalue lv: its indices are evaluated (none-checked) first, then the variable read,
        each index checked against its list, and the new container written back (a state
        variable through State.write, or State.write_at with its first index). fn is the
        statement's, made once with it."""
        kind, name = self.p.refs[lv][:2]
        idx = tuple(self.nn_fn(i) for i in lv.indices)
        where, local = self.at(lv), kind == "local"
        if len(idx) == 1:  # _update written out for one index
            index, list_item = idx[0], runtime.list_item

            def write1(ev, env, fn, v):
                i = index(ev, env)
                old = env[name] if local else ev.vars[name]
                list_item(old, i, where)
                items = list(old)
                items[i] = fn(old[i], v)
                if local:
                    env[name] = tuple(items)
                else:
                    ev.s.write_at(name, i, tuple(items))
            return write1

        def write(ev, env, fn, v):
            ix = [i(ev, env) for i in idx]
            if local:
                env[name] = _update(env[name], ix, lambda old: fn(old, v), where)
            elif ix:  # through its first index
                ev.s.write_at(name, ix[0], _update(ev.vars[name], ix, lambda old: fn(old, v),
                                                   where))
            else:
                ev.s.write(name, fn(ev.vars[name], v))
        return write

    def exec_Assign(self, s):
        value = self.kept_fn(s.value, self.conv_fn(s.value, self.p.types[s.target]))
        write = self.target_fn(s.target)
        if not s.target.indices:  # the variable itself takes the value
            kind, name = self.p.refs[s.target][:2]
            if kind == "local":
                def assign_local(ev, env):
                    env[name] = value(ev, env)
                return assign_local

            def assign_state(ev, env):
                ev.s.write(name, value(ev, env))
            return assign_state

        def assign(ev, env):
            write(ev, env, _replace, value(ev, env))
        return assign

    def exec_AugAssign(self, s):
        value, write = self.nn_fn(s.value), self.target_fn(s.target)
        at_target, where, top = self.at(s.target), self.at(s), self.int_max
        plus, fault_none, bounded = s.op == "+", runtime.fault_none, runtime.bounded

        def fn(old, v):
            if old is None:
                fault_none(at_target)
            return bounded(old + v if plus else old - v, top, where)

        def aug_assign(ev, env):
            write(ev, env, fn, value(ev, env))
        return aug_assign

    def exec_Add(self, s):
        value, write, where = self.fn(s.value), self.target_fn(s.target), self.at(s.value)

        def add(ev, env):
            v = value(ev, env)
            if v is None:
                runtime.fault_set_none(where)
            write(ev, env, _join, v)
        return add

    def exec_Remove(self, s):
        is_set = T.strip(self.p.types[s.target]).kind == "set"
        value = self.nn_fn(s.value) if is_set else self.fn(s.value)
        write, where = self.target_fn(s.target), self.at(s)

        def fn(old, v):
            if isinstance(old, frozenset):
                if v not in old:
                    runtime.fault_not_in_set(where)
                return old - {v}
            if v not in old:
                runtime.fault_not_in_list(where)
            i = old.index(v)
            return old[:i] + old[i + 1:]

        def remove(ev, env):
            write(ev, env, fn, value(ev, env))
        return remove

    def exec_Push(self, s):
        value = self.kept_fn(s.value, self.conv_fn(s.value,
                                                   T.strip(self.p.types[s.target]).elem))
        write, where, limit = self.target_fn(s.target), self.at(s), self.limits.max_collection

        def fn(old, v):
            if len(old) >= limit:
                runtime.fault_size_limit(len(old) + 1, limit, where)
            return old + (v,)

        def push(ev, env):
            write(ev, env, fn, value(ev, env))
        return push

    def exec_If(self, s):
        branches = tuple((self.fn(cond), self.block_fn(body)) for cond, body in s.branches)
        orelse = self.block_fn(s.orelse) if s.orelse is not None else None

        def if_(ev, env):
            for cond, body in branches:
                if cond(ev, env):
                    return body(ev, env)
            if orelse is not None:
                return orelse(ev, env)
            return None
        return if_

    def exec_For(self, s):
        slot, items_of, body = self.p.slots[s], self.iterate_fn(s.iter), self.block_fn(s.body)

        def for_(ev, env):
            for x in items_of(ev, env):
                env[slot] = x
                r = body(ev, env)
                if r is not None:  # a break ends the loop, a return the def
                    return None if r is _BREAK else r
            return None
        return for_

    def exec_While(self, s):
        cond, body = self.fn(s.cond), self.block_fn(s.body)
        limit, where = self.limits.max_loop_steps, self.at(s)

        def while_(ev, env):
            steps = 0
            while cond(ev, env):
                steps += 1
                if steps > limit:
                    runtime.fault_loop_limit(limit, where)
                r = body(ev, env)
                if r is not None:  # a break ends the loop, a return the def
                    return None if r is _BREAK else r
            return None
        return while_

    def exec_Break(self, s):
        def break_(ev, env):
            return _BREAK
        return break_

    def exec_Return(self, s):
        value = self.fn(s.value)

        def return_(ev, env):
            return value(ev, env), s
        return return_

    def exec_Reveal(self, s):
        _kind, secret, draws = self.p.refs[s]

        def reveal(ev, env):
            runtime.reveal(ev.s._seen, ev.s.history, secret, draws)
        return reveal

    def exec_Fail(self, s):
        message, where = s.message, self.at(s)

        def fail(ev, env):
            raise RulesRuntimeError(message, where)
        return fail


def _conjuncts(e) -> list:
    """The operands of e's `and` chain, left to right (e itself if it is not an `and`; none if
    e is None), as logic_fn tests them."""
    if e is None:
        return []
    out = []
    while isinstance(e, ast.BinOp) and e.op == "and":
        out.append(e.right)
        e = e.left
    out.append(e)
    return out[::-1]


def _replace(old, v):
    """An assignment's new value for the old one."""
    return v


def _join(old, v):
    """`add v to` a set."""
    return old | {v}


def _update(container, idx, fn, where):
    """container with the item at the index path idx replaced by fn(item) (fn(container) itself
    when idx is empty); each index checked against its list."""
    if not idx:
        return fn(container)
    i = idx[0]
    runtime.list_item(container, i, where)
    items = list(container)
    items[i] = _update(container[i], idx[1:], fn, where)
    return tuple(items)
