"""Optimisation passes: plain functions, run in the order of PASSES, each reading the checked and
lowered program through the analysis (rulelang.codegen.analysis) and writing its decisions into
one Plan. The printers only follow the plan: no decision is taken by looking at printed code.

A pass never changes the program, so the reference interpreter and the generated module still
run the same lowered instructions; a pass only chooses how the module computes them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

from rulelang import ast
from rulelang import types as T
from rulelang.codegen.analysis import _all_nodes
from rulelang.codegen.support import SMALL_ENUM
from rulelang.codegen.tree import _conjuncts, _stmt_count, _structured
from rulelang.consts import _returns_in, key_match
from rulelang.errors import RulesRuntimeError
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
    SetPhase,
)
from rulelang.semantics import BUILTINS

# Expression-bodied defs up to this many AST nodes (callees included) are inlined in statements.
INLINE_NODES = 120
# A one-int-key table whose keys cover at most this many values gets a dense tuple.
DENSE_TABLE_SPAN = 4096
# A set read from the state is walked by peeling (plan_peel_sets) above this many members of
# its enum (a mask wider than a machine word); at most this many, its members are kept as a
# tuple beside the mask (plan_kept_members)
WIDE_SET = 64
# Flow blocks of at most this many statements are copied into every function that reaches them.
SMALL_BLOCK = 3
# A flow function whose code measures at most this much (flow_size) is also copied where it is
# entered from before, at most HEAD_INLINE_DEPTH levels deep.
HEAD_INLINE_SIZE = 64
HEAD_INLINE_DEPTH = 2
# A parameterless def of at least this many AST nodes (callees included), with an aggregate or a
# loop, keeps its value on the state between writes of what it reads.
CACHE_NODES = 8


@dataclass
class Domain:
    """How one action parameter's values are listed."""

    kind: str  # "range" (constant int range), "int" (an int collection), "set", "list", "type"
    safe: bool  # listing it cannot fault
    first: int | None = None  # first value of a non-empty ascending constant range
    bounds: tuple[int, int, int] | None = None  # (lo, hi, step) of a constant range


@dataclass
class OptionPlan:
    """How the legal-action function lists one option's (option, args) pairs."""

    domains: list[Domain]
    unsafe_domain: int  # the last parameter whose domain may fault (-1: none)
    # every value of fixed domains, no `when`: the pairs are built once (their count)
    table_size: int | None
    # `when` conjuncts by loop level (-1: before every loop): (test, break out of the loop
    # when false, {slot: first value} substituted for a test repeated one level out, {slot of
    # an expanded def's parameter: the option-scope expression it stands for})
    placed: dict[int, list[tuple[object, bool, dict, dict]]]
    small_domain: int | None  # one enum/bool/player parameter: a table of its pairs
    # leading `x in S` / `x not in S` tests of a set domain's own parameter x, folded into the
    # domain's mask (plan_domain_filters): level -> [(S, keep members of S, rename)]
    filters: dict[int, list[tuple[object, bool, dict]]] = field(default_factory=dict)
    # the values its listing depends on besides its parameters (plan_listing_memo): each a
    # sub-expression of a conjunct that reads no parameter, with the conjunct's rename; None:
    # listed afresh at every call
    memo_keys: list[tuple[object, dict]] | None = None
    # the last parameter's values that pass are one run of its constant range
    # (plan_range_slices): for each test at its level, True if it stays false once false, False
    # if it stays true once true; None: its values are walked and each pair made
    slice_tests: list[bool] | None = None
    # the loop level whose variables those tests read last (-1: none): the run is searched for
    # there, once per value of that level's parameter, not once per value of those after it
    slice_level: int = -1


class _FlatList:
    """Values kept in one flat list per tuple of digits (a def's arguments, a table's keys):
    `sizes` gives each digit's number of values, the first digit the most significant."""

    sizes: tuple[int, ...]

    @property
    def size(self) -> int:
        """The length of the flat list: every tuple."""
        n = 1
        for k in self.sizes:
            n *= k
        return n

    def stride(self, j: int) -> int:
        """How far apart in the flat list two values of digit j are (mixed radix)."""
        n = 1
        for k in self.sizes[j + 1:]:
            n *= k
        return n


@dataclass
class KeyedDef(_FlatList):
    """A def whose parameters all have small finite types, its values kept per argument tuple
    (plan_keyed_defs)."""

    sizes: tuple[int, ...]  # each parameter's number of values: the radix of its digit
    enums: tuple[str | None, ...]  # each parameter's enum (None: a player or a bool)
    # state variable -> (the parameter that indexes it (-1: several do, a write forgets every
    # value), read at the argument itself, read at the argument's neighbours)
    deps: dict[str, tuple[int, bool, bool]]


@dataclass(frozen=True)
class DenseTable(_FlatList):
    """A table's values over a box of key values, flattened (plan_dense_tables)."""

    dims: tuple[tuple[str, int, int], ...]  # per key: ("int" | "enum" | "bool", lo, count)
    values: tuple = ()  # per cell, row-major: the value, or None where no row matches
    full: bool = True  # every cell has a row

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(count for _kind, _lo, count in self.dims)

    def cells(self) -> list[tuple]:
        """Every key tuple of the box, row-major (bools as False, True)."""
        return list(itertools.product(*[(False, True) if kind == "bool" else
                                        range(lo, lo + count) for kind, lo, count in self.dims]))


@dataclass(frozen=True)
class DefGuard:
    """What a bool def's being true implies, tested before the def is computed
    (plan_def_guards): either a conjunct of the def that reads none of its parameters (`cond`),
    or, for `count(P(c) for c in S) >= least` or `any(P(c) for c in S)` with S a set of enum
    members, the same aggregate over every member of the enum (`agg`: at least `least` members
    pass), kept on the state (attribute g_<def>) until a variable in `reads` is written."""

    cond: object | None = None
    agg: object | None = None
    least: int = 1
    enum: str = ""  # the enum walked
    reads: frozenset = frozenset()


@dataclass
class Plan:
    inline: set[str] = field(default_factory=set)  # defs expanded in place in statements
    dense: dict[str, DenseTable] = field(default_factory=dict)
    redundant_phase_sets: set[int] = field(default_factory=set)  # SetPhase pcs to skip
    # the phase at each pause and at the end when the flow fixes it there (plan_phase_sets):
    # pc -> phase name (None: the flow itself); None when a pause can be reached in two phases
    static_phase: dict[int, str | None] | None = None
    options: dict[tuple[int, int], OptionPlan] = field(default_factory=dict)
    reused_any: dict[int, dict[int, list]] = field(default_factory=dict)
    patterns: dict[int, tuple] = field(default_factory=dict)  # id(node) -> matched pattern
    # the flow's layout (plan_flow)
    block_end: dict[int, int] = field(default_factory=dict)  # basic block start -> end
    roots: list[int] = field(default_factory=list)  # where a step starts: 0 and resumptions
    heads: set[int] = field(default_factory=set)  # blocks that start a function
    small_heads: set[int] = field(default_factory=set)  # heads copied where they are entered
    # apply functions run the flow themselves instead of calling _run (plan_resume_in_apply);
    # reset_loops: they also reset the counter of counted flow `while` bodies
    resume_in_apply: bool = False
    reset_loops: bool = False
    # a test (JumpIfNot pc) whose `any` lists an option of the decision right after it
    # (plan_shared_any): test pc -> (decision pc, option index, id(any aggregate))
    shared_any: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    # parameterless defs whose value is kept on the state until a state variable they read is
    # written (plan_cached_defs): def name -> those variables
    cached_defs: dict[str, frozenset] = field(default_factory=dict)
    # defs of small finite parameters kept per argument tuple (plan_keyed_defs): def name -> how
    keyed_defs: dict[str, KeyedDef] = field(default_factory=dict)
    # set expressions walked by peeling off the lowest member (plan_peel_sets): id(node)
    peel: set[int] = field(default_factory=set)
    # local slots that only ever hold values of a constant int range: slot -> the largest
    # absolute value (plan_int_ranges)
    slot_max: dict[str, int] = field(default_factory=dict)
    # path_cost calls whose graph, start set and allowed set cannot fault nor be none
    # (plan_path_rows): id(node)
    path_rows: set[int] = field(default_factory=set)
    # aggregates and comprehensions over every member of an enum filtered by `x.f == v`
    # (plan_field_walks): id(node) -> (enum, field index, v)
    field_walks: dict[int, tuple] = field(default_factory=dict)
    # `remove x from S` right after `chance x in S` (plan_member_removes): id(statement)
    member_removes: set[int] = field(default_factory=set)
    # `A += n` / `A -= n` that a test just before bounds away from the int limit
    # (plan_bounded_updates): id(statement)
    bounded_updates: set[int] = field(default_factory=set)
    # history entries a `reveal` may make public, listed on the state (plan_hidden): id(secret
    # decision or hidden chance node) -> its list, id(reveal statement) -> the lists it reads
    hidden_lists: dict[int, int] = field(default_factory=dict)
    reveal_lists: dict[int, tuple[int, ...]] = field(default_factory=dict)
    # state sets whose members are kept as a sorted tuple beside the mask (plan_kept_members):
    # variable -> the index type of an array of sets (None: one set); the walks that read them
    kept_members: dict[str, T.Type | None] = field(default_factory=dict)
    kept_walks: set[int] = field(default_factory=set)
    # bool defs with a cheaper condition that their being true implies (plan_def_guards):
    # def name -> the guard
    def_guards: dict[str, DefGuard] = field(default_factory=dict)


def plan_inlining(an, plan: Plan) -> None:
    """Defs whose body is one expression, or lets, ifs, returns and fails with one way to fall
    through, of at most INLINE_NODES nodes, are expanded where statements call them (a fail
    raises the same fault, at the same .rules location, where the def is expanded). Safe: a
    def changes no state, and its arguments are evaluated first, in order, as in a call.
    (Its parameters bound to plain names keep the loop level of those names, for
    plan_path_rows only: hoisting the rest of the body too cost more than it saved, 0.99x
    on Poder and Automobile, since it also computes parts an `and` would have skipped.)
    A call of a def whose value the state keeps (plan_cached_defs, plan_keyed_defs: those
    passes run first) counts as a call, not as its body: where it is expanded, it is asked for
    the kept value (Power Grid's fits_with(p, r, extra), five calls of store(p, k))."""
    keep = frozenset(plan.cached_defs) | frozenset(plan.keyed_defs)
    for d in an.p.defs.values():
        size = an.def_size(d) - _kept_bodies(an, d.body, keep, frozenset({d.name}))
        if size <= INLINE_NODES and (
                not isinstance(d.body, ast.Block) or _structured(d.body.stmts)):
            plan.inline.add(d.name)


def _kept_bodies(an, node, keep: frozenset, seen: frozenset) -> int:
    """The nodes that Analysis.size counts in node for the bodies of kept defs it calls,
    directly or through the defs it calls (plan_inlining)."""
    n = 0
    for x in _all_nodes(node):
        if isinstance(x, ast.Call) and an.p.refs.get(x, ("",))[0] == "def" and x.name not in seen:
            callee = an.p.defs[x.name]
            if x.name in keep:
                n += an.def_size(callee)
            else:
                n += _kept_bodies(an, callee.body, keep, seen | {x.name})
    return n


def plan_dense_tables(an, plan: Plan) -> None:
    """A table whose keys are enums, bools or ints, over a box of key values of at most
    DENSE_TABLE_SPAN cells, is also written as a flat tuple of its values, indexed row-major
    (the first key the most significant digit): an enum or bool key over all its values, an int
    key over lo..hi, the smallest and the largest value its rows name (a `from` row's first
    value included). A cell holds the value of the first row that matches it (the rows' own
    order), or None when no row does. Safe: the tuple holds the very values the rows give; a key
    outside lo..hi, and a cell with no row, still go through the row function, faults included.
    Tables whose values may be none keep only boxes every row covers (None would be a value).
    Power Grid's slot_price (resource x slot: a chain of 36 tests) and refill (map x resource x
    players x step), Automobile's car bounds and dealer slots, Pola Naftowe's exchange price."""
    for name, t in an.p.tables.items():
        ktypes = [an.p.field_type(f) for f in t.params]  # (an optional key: not dense)
        rows = an.k.table_rows[name]
        dims = []
        for i, kt in enumerate(ktypes):
            if kt.kind == "bool":
                dims.append(("bool", 0, 2))
            elif kt.kind == "enum":
                dims.append(("enum", 0, len(an.p.enums[kt.name].members)))
            elif kt.kind == "int":
                keyed = [k[i] for k, _ in rows if k[i][0] != "any"]
                if not keyed:
                    break
                lo = min(k[1] for k in keyed)
                hi = max((k[2] if k[0] == "range" else k[1]) for k in keyed)
                dims.append(("int", lo, hi - lo + 1))
            else:
                break
        else:
            box = DenseTable(tuple(dims))
            if not rows or box.size > DENSE_TABLE_SPAN:
                continue
            values = []
            for cell in box.cells():
                hit = [v for k, v in rows if all(key_match(kk, a) for kk, a in zip(k, cell))]
                values.append(hit[0] if hit else None)
            full = all(v is not None for v in values)
            ret = an.p.def_ret[name]
            if not full and ret.kind in ("opt", "none", "any"):
                continue
            plan.dense[name] = replace(box, values=tuple(values), full=full)


def plan_phase_sets(an, plan: Plan) -> None:
    """A SetPhase whose next instruction, through jumps only, is another SetPhase is skipped.
    Safe: the phase is only observed at a pause (state JSON), and none comes in between.

    When every pause (and the end) is reached in one phase only, whatever the path to it (the
    phases are expanded in place, so a decision is in the phase whose body holds it), the
    phase is not stored at all: State.phase reads it from the pc (plan.static_phase), and every
    SetPhase is skipped. Found by following every edge of the lowered flow from the start
    (phase none); an instruction of a kind not known here keeps the stores."""
    code = an.low.code
    plan.static_phase = _static_phase(code)
    if plan.static_phase is not None:
        plan.redundant_phase_sets.update(
            pc for pc, ins in enumerate(code) if isinstance(ins, SetPhase))
        return
    for pc, ins in enumerate(code):
        if not isinstance(ins, SetPhase):
            continue
        nxt, seen = pc + 1, set()
        while nxt < len(code) and isinstance(code[nxt], Jump) and nxt not in seen:
            seen.add(nxt)
            nxt = code[nxt].target
        if nxt < len(code) and isinstance(code[nxt], SetPhase):
            plan.redundant_phase_sets.add(pc)


def _static_phase(code) -> dict[int, str | None] | None:
    """pc -> the phase every path from the start reaches it in, for the pauses and the end
    (None if one of them can be reached in two phases)."""
    seen: dict[int, str | None] = {}
    todo: list[tuple[int, str | None]] = [(0, None)]
    while todo:
        pc, phase = todo.pop()
        if pc in seen:
            if seen[pc] != phase:
                return None
            continue
        seen[pc] = phase
        ins = code[pc]
        if isinstance(ins, SetPhase):
            nxt = [(pc + 1, ins.name)]
        elif isinstance(ins, Jump):
            nxt = [(ins.target, phase)]
        elif isinstance(ins, JumpIfNot | IterNext):
            nxt = [(pc + 1, phase), (ins.target, phase)]
        elif isinstance(ins, ChooseAt):
            # an option resumes at its target, `else` at its block; a standing option asks
            # the same decision again
            nxt = [(t, phase) for t in [*ins.targets, ins.orelse] if t >= 0]
        elif isinstance(ins, FinishAt):
            nxt = []
        elif isinstance(ins, Exec | Bind | IterInit | Copy | ChanceAt | DepthFault):
            nxt = [(pc + 1, phase)]
        else:
            return None
        todo.extend(x for x in nxt if x[0] < len(code))
    return {pc: seen[pc] for pc in sorted(seen)
            if isinstance(code[pc], ChooseAt | ChanceAt | FinishAt)}


def plan_options(an, plan: Plan) -> None:
    """For each option of each decision: how its parameters' values are listed, whether all its
    pairs can be built once, and where each conjunct of its `when` is tested. A conjunct moves
    to the outermost parameter loop whose variables it reads when nothing before it can fault,
    nor can the domains of the loops it moves out of (so the first fault reported is the
    interpreter's). Such a conjunct ends its loop (`break`) when it can only stay false for the
    later values of that loop's variable; if it is also false at the first value of its own
    loop, it is tested once more one loop further out.

    The conjuncts are those of the `when` with every call of a bool def whose body is one
    expression, and whose arguments are distinct plain names or literals, replaced by the
    conjuncts of that body (recursively; _when_conjuncts), each tested where what it reads
    puts it: `build(m in S, k in 0..2, parts: bool) when can_build(p, m, k, parts)` tests the
    parts of can_build that read only m once per m, not once per (m, k, parts). Safe: `f(x)
    and` ... evaluates f's body's conjuncts left to right with short circuit, exactly as the
    expanded chain does, and a plain argument is evaluated without a fault or a change.

    A conjunct that the domain of one of the option's parameters already guarantees is
    dropped (_domain_facts): `m: Model in build_spaces(p)` with `build_spaces(p) = {m for m in
    Model if buildable(p, m) and rd[p] >= rd_cost(m)}` makes a later `rd[p] >= rd_cost(m)` (or
    a def whose body says it) true for every listed m. Safe: the set (or list) comprehension
    evaluated that very expression, on the same state and the same values of what it reads,
    and found it true without a fault, so evaluating it again gives true and cannot fault.

    A def whose value the state keeps (plan_cached_defs, plan_keyed_defs: those passes run
    first) is not expanded: its call asks the kept value, where the expanded parts would
    compute it again at every listing (Acquire's `declare_end() when not ending and
    can_end()`)."""
    keep = frozenset(plan.cached_defs) | frozenset(plan.keyed_defs)
    for pc in an.low.pauses:
        ins = an.low.code[pc]
        if isinstance(ins, ChooseAt):
            for oi, opt in enumerate(ins.node.options):
                plan.options[(pc, oi)] = _plan_option(an, opt, keep)
    flat = [opt for sd in an.p.standing for opt in sd.options]
    for j, opt in enumerate(flat):
        plan.options[("standing", -1 - j)] = _plan_option(an, opt, keep)


def _expandable(an, e, rename: dict, keep=frozenset()) -> tuple | None:
    """(def, {def parameter slot: argument}) when e is a call of a bool def with an expression
    body whose arguments are plain names (a local, a state variable, a constant) or literals,
    of the parameters' very types, never none, distinct; arguments that are parameters of an
    enclosing expanded def stand for what those stand for (rename). Not a def in `keep`: one
    whose value the state keeps (plan_cached_defs, plan_keyed_defs) is asked, not expanded."""
    if not isinstance(e, ast.Call) or an.p.refs.get(e, ("",))[0] != "def":
        return None
    d = an.p.defs[an.p.refs[e][1]]
    if isinstance(d.body, ast.Block) or an.p.def_ret[d.name].kind != "bool" or d.name in keep:
        return None
    inner: dict = {}
    seen: set = set()
    for arg, f in zip(e.args, d.params):
        want = an.p.slot_types[an.p.slots[f]]
        if not isinstance(arg, ast.Name | ast.IntLit | ast.BoolLit) or not an._ok(arg) \
                or an.may_exceed(arg) or want.kind in ("opt", "none", "any") \
                or T.strip(an.t(arg)) != T.strip(want):
            return None
        ref = an.p.refs.get(arg) if isinstance(arg, ast.Name) else None
        if ref is not None and ref[0] == "local" and ref[1] in rename:
            arg = rename[ref[1]]
        key = _canon(an, arg, {})
        if key in seen:
            return None
        seen.add(key)
        inner[an.p.slots[f]] = arg
    return d, inner


def _when_conjuncts(an, e, rename: dict | None = None, keep=frozenset(),
                    expanded: set | None = None) -> list[tuple[object, dict]]:
    """The conjuncts of e as (expression, {def parameter slot: what it stands for}), calls of
    defs expanded (_expandable; plan_options), except those of the defs in keep; the names
    of the defs expanded are added to `expanded` when given."""
    rename = rename or {}
    out = []
    for a in _conjuncts(e):
        exp = _expandable(an, a, rename, keep)
        if exp is None:
            out.append((a, rename))
        else:
            if expanded is not None:
                expanded.add(exp[0].name)
            out.extend(_when_conjuncts(an, exp[0].body, exp[1], keep, expanded))
    return out


def _canon(an, e, rename: dict):
    """A structural key of an expression: equal keys, same value on the same state (names by
    what they refer to, a def parameter by what it stands for in rename: a node, or the slot
    of an option parameter)."""
    if isinstance(e, str):
        return ("name", ("local", e))
    if isinstance(e, ast.Name):
        ref = an.p.refs.get(e)
        if ref is not None and ref[0] == "local" and ref[1] in rename:
            return _canon(an, rename[ref[1]], {})
        return ("name", ref)
    if isinstance(e, tuple | list):
        return tuple(_canon(an, x, rename) for x in e)
    if not hasattr(e, "__dataclass_fields__"):
        return e
    ref = an.p.refs.get(e) if isinstance(e, ast.Call | ast.Attr) else None
    return (type(e).__name__, ref, *(_canon(an, getattr(e, f), rename)
                                    for f in e.__dataclass_fields__ if f != "span"))


def _free_in(an, a, rename: dict) -> set:
    """The option-scope local slots a (possibly expanded) conjunct reads."""
    out = set()
    for s in an.free(a):
        if s in rename:
            node = rename[s]
            out |= set(an.free(node)) if not isinstance(node, str) else {node}
        else:
            out.add(s)
    return out


def _inner_slot(an, prm: ast.OParam, rename: dict) -> str:
    """The slot an option parameter is read through in an expanded conjunct."""
    slot = an.p.slots[prm]
    for s, node in rename.items():
        if isinstance(node, ast.Name) and an.p.refs.get(node) == ("local", slot):
            return s
    return slot


def _domain_facts(an, opt: ast.Option) -> set:
    """Keys (_canon) of the conjuncts that a parameter's domain guarantees: the filter of a
    comprehension `{x for x in E if C}` (or a list one) whose element is its variable, given
    directly or as the body of a def called with plain arguments (plan_options)."""
    facts = set()
    for prm in opt.params:
        dom, rename = prm.domain, {}
        if isinstance(dom, ast.Call) and an.p.refs.get(dom, ("",))[0] == "def":
            d = an.p.defs[an.p.refs[dom][1]]
            if isinstance(d.body, ast.Block):
                continue
            for arg, f in zip(dom.args, d.params):
                want = an.p.slot_types[an.p.slots[f]]
                if not isinstance(arg, ast.Name | ast.IntLit | ast.BoolLit) or not an._ok(arg) \
                        or want.kind in ("opt", "none", "any") \
                        or T.strip(an.t(arg)) != T.strip(want):
                    break
                rename[an.p.slots[f]] = arg
            else:
                dom = d.body
        if not (isinstance(dom, ast.Comp) and dom.kind in ("set", "list")
                and dom.cond is not None and isinstance(dom.elem, ast.Name)
                and an.p.refs.get(dom.elem) == ("local", an.p.slots[dom])):
            continue
        rename = {**rename, an.p.slots[dom]: an.p.slots[prm]}
        for a, rn in _when_conjuncts(an, dom.cond, rename):
            facts.add(_canon(an, a, rn))
    return facts


def _plan_option(an, opt: ast.Option, keep=frozenset()) -> OptionPlan:
    m = len(opt.params)
    levels = {an.p.slots[prm]: i for i, prm in enumerate(opt.params)}
    domains: list[Domain] = []
    unsafe = -1
    for i, prm in enumerate(opt.params):
        t = an.p.slot_types[an.p.slots[prm]]
        if t.kind == "int":
            bounds = an.const_bounds(prm.domain)
            if bounds is not None:
                lo, hi, _step = bounds
                dom = Domain("range", True, lo if lo <= hi else None, bounds)
            else:
                dom = Domain("int", an._iter_ok(prm.domain))
        elif prm.domain is not None:
            kind = "set" if T.strip(an.t(prm.domain)).kind == "set" else "list"
            dom = Domain(kind, an._ok(prm.domain))
        else:
            dom = Domain("type", True)
        domains.append(dom)
        if not dom.safe:
            unsafe = i
    size = an.fixed_size(opt) if opt.when is None else None
    placed: dict[int, list] = {lv: [] for lv in range(-1, m)}
    prefix = True
    conj = _when_conjuncts(an, opt.when, None, keep) if opt.when is not None else []
    facts = _domain_facts(an, opt) if conj else set()
    for a, rn in conj:
        if facts and _canon(an, a, rn) in facts:
            continue  # the domain guarantees it
        bounds = {slot: an.int_bound(node, {}) for slot, node in rn.items()
                  if T.strip(an.t(node)).kind == "int"}
        prefix = prefix and an.safe_with(a, bounds)
        if not prefix:
            placed[m - 1].append((a, False, {}, rn))
            continue
        free = _free_in(an, a, rn)
        dep = max([-1] + [levels[s] for s in free if s in levels])
        level = max(dep, unsafe)
        brk = level >= 0 and (dep < level or an.falls_slot(
            a, _inner_slot(an, opt.params[level], rn), domains[level]))
        if brk and level >= 1 and dep == level and unsafe < level \
                and domains[level].first is not None and (
                an.falls_slot(a, _inner_slot(an, opt.params[level - 1], rn), domains[level - 1])
                or an.p.slots[opt.params[level - 1]] not in free):
            first = {_inner_slot(an, opt.params[level], rn): domains[level].first}
            placed[level - 1].append((a, True, first, rn))
        placed[level].append((a, brk, {}, rn))
    return OptionPlan(domains, unsafe, size, placed, an.small_domain(opt))


def plan_domain_filters(an, plan: Plan) -> None:
    """An option parameter x walking a set domain D whose first `when` tests at its loop
    level are `x not in S` (or `x in S`), S a set that cannot fault, read from what is bound
    outside that loop: the loop walks `D & ~S` (`D & S`) and the tests are dropped. Power
    Grid's build(c: City in in_play) when can_build(p, c) ..., whose first part is `c not in
    network[p]`: the cities already built are not walked at all. Safe: for a member of S the
    test was false, so nothing after it ran for that member (the tests before it at this level
    are none, and those outside the loop do not depend on x); for the others it was true and
    changed nothing; S is evaluated once before the loop, where it has the same value (a
    listing changes no state) and cannot fault, even when D is empty."""
    for pc in an.low.pauses:
        ins = an.low.code[pc]
        if isinstance(ins, ChooseAt):
            for oi, opt in enumerate(ins.node.options):
                _domain_filters(an, opt, plan.options[(pc, oi)])
    flat = [opt for sd in an.p.standing for opt in sd.options]
    for j, opt in enumerate(flat):
        _domain_filters(an, opt, plan.options[("standing", -1 - j)])


def _domain_filters(an, opt: ast.Option, op: OptionPlan) -> None:
    levels = {an.p.slots[prm]: i for i, prm in enumerate(opt.params)}
    for i, prm in enumerate(opt.params):
        if op.domains[i].kind != "set":
            continue
        own = an.p.slots[prm]
        tests = op.placed[i]
        while tests:
            a, brk, sub, rn = tests[0]
            if brk or sub or not isinstance(a, ast.BinOp) or a.op not in ("in", "not in") \
                    or not isinstance(a.left, ast.Name):
                break
            ref = an.p.refs.get(a.left, ("",))
            if ref[0] != "local":
                break
            x = rn.get(ref[1], ref[1])
            if isinstance(x, ast.Name):
                x = an.p.refs.get(x, ("", ""))[1] if an.p.refs.get(x, ("",))[0] == "local" else ""
            st = an.t(a.right)
            if x != own or st.kind != "set" or not an._ok(a.right) \
                    or any(levels.get(s, -1) >= i for s in _free_in(an, a.right, rn)):
                break
            if a.op == "not in" or _canon(an, a.right, rn) != _canon(an, prm.domain, {}):
                op.filters.setdefault(i, []).append((a.right, a.op == "in", rn))
            tests.pop(0)  # (x in D itself: true for every member walked)


def plan_reused_any(an, plan: Plan) -> None:
    """`any(P(x) for x in D)` in the `when` of a parameterless option, where an earlier option
    `o(t: T in D) when P(t)` (one parameter over a set) lists exactly the members passing P,
    becomes whether that option added a choice. Safe: nothing changes state in between, and the
    earlier option evaluated P on every member first, so any fault was raised there, as in the
    interpreter."""
    for pc in an.low.pauses:
        ins = an.low.code[pc]
        if isinstance(ins, ChooseAt):
            found = an.reused_any(ins.node.options)
            if found:
                plan.reused_any[pc] = found


def plan_mask_patterns(an, plan: Plan) -> None:
    """Aggregates computed on whole bit masks or array extremes instead of element by element:
    `any/all/count(n in S for n in neighbors(x))` and `{n for n in neighbors(x) if n in S}` on
    the neighbour masks (S cannot fault and does not read n), and `any/all(A[x] < K for x in
    E)` over every member of an enum as a test on min(A) or max(A) (nothing in it can fault),
    or, for an enum of at most SMALL_ENUM members, as the cells' tests unrolled into one chain
    of `or` (any) or `and` (all): `A[0] > 0 and A[1] > 0 and ...` runs in 18-94 ns where
    `min(A) > 0` takes 155-165 (7 members, CPython 3.11), and Acquire asks such tests on its
    seven chains' sizes several times a turn (can_end(), founds_eighth(t)'s guard): 3% fewer
    instructions, 1.04-1.06x the games/s (in-process, both orders).
    Safe: when nothing can fault, the order and number of element tests cannot be seen. (Every
    node is visited, those in the branches of an `if` included.)"""
    for node in _all_nodes(an.p.module.decls):
        if isinstance(node, ast.Agg | ast.Comp):
            match = _match_nb_mask(an, node)
            if match is None and isinstance(node, ast.Agg):
                match = _match_extreme(an, node) or _match_below(an, node)
            if match is not None:
                plan.patterns[id(node)] = match


def plan_field_walks(an, plan: Plan) -> None:
    """An aggregate or comprehension over every member of an enum with the filter `x.f == v`
    (either side; f a field of enum, bool or int type, v not reading x, never none, unable to
    fault) walks only the members whose field f is v, from a table made once per field
    (MEMBERS_<enum>_<field>: the members of each value, in declaration order): Automobile's
    has_cars(p, c), `any(... for m in Model if m.cls == c)`, tries 6 models of 26. Safe: the
    filter cannot fault, so testing it on every member, or on none, cannot be seen; the members
    left are the same, in the same order, and v is evaluated once before the walk instead of
    once per member (it cannot fault and nothing changes while an aggregate is evaluated)."""
    for node in _all_nodes(an.p.module.decls):
        if not isinstance(node, ast.Agg | ast.Comp) or not isinstance(node.iter, ast.Name) \
                or not isinstance(node.cond, ast.BinOp) or node.cond.op != "==":
            continue
        ref = an.p.refs.get(node.iter)
        if ref is None or ref[0] != "enum_all":
            continue
        slot = an.p.slots[node]
        test = node.cond
        for attr, v in ((test.left, test.right), (test.right, test.left)):
            if not (isinstance(attr, ast.Attr) and isinstance(attr.obj, ast.Name)
                    and an.p.refs.get(attr.obj) == ("local", slot)):
                continue
            fref = an.p.refs.get(attr)
            if fref is None or fref[0] != "field" or fref[1] != ref[1]:
                continue
            ft = an.p.enums[ref[1]].fields[fref[2]][1]
            if ft.kind in ("enum", "bool", "int") and slot not in an.free(v) and an._ok(v):
                plan.field_walks[id(node)] = (ref[1], fref[2], v)
                break


# the most values a listing is kept for (per option; a game asks a few tens)
LISTING_MEMO = 256
# plan_range_slices: the most values of the sliced range, and the most pairs kept for one option
# (rows of the range's values for tuples of the parameters before it: a few MB at most)
RANGE_ROW = 10_000
RANGE_PAIRS = 65_536


def plan_listing_memo(an, plan: Plan) -> None:
    """An option whose parameters all walk fixed domains (constant int ranges, every member of
    an enum or both bools) and whose `when` reads state (or outside locals, or the number of
    players) only through sub-expressions that read none of its parameters and cannot fault
    (the keys: Automobile's place_dealers(lux, mid, eco), whose only such part is
    dealers_placed(p); Acquire's dispose(sell, trade), with shares[q][d] and bank[survivor]):
    its list of (option, args) pairs depends on the keys' values only, so the module keeps
    the list made for each tuple of key values (at most LISTING_MEMO of them, in a dict of the
    module, which is made for one variant and one set of parameters) and a listing with known
    keys extends `out` with it. Safe: the keys are evaluated before the option's loops, where
    they cannot fault and have the values the tests would read (a listing changes nothing);
    every other part of the tests is a function of the parameters and the keys (operators,
    fields, constants, tables and defs that read no state), so the same keys give the same
    pairs; a listing that faults stores nothing (the next one faults again, at the same place,
    as in the interpreter). A decision listed from the test before it (plan_shared_any) keeps
    its own listing."""
    listed = {(cpc, oi) for cpc, oi, _ag in plan.shared_any.values()}
    for (pc, oi), op in plan.options.items():
        if pc == "standing" or (pc, oi) in listed:
            continue
        opt = an.low.code[pc].node.options[oi]
        keys = _listing_keys(an, opt, op)
        if keys is not None:
            op.memo_keys = keys


def plan_range_slices(an, plan: Plan) -> None:
    """An option of two parameters or more whose last parameter x walks a constant int
    range, every test at x's loop level cannot fault and is monotone in x (once false it
    stays false for the later values, as `money <= cash[p]`, or once true it stays true, as
    `-money <= cash[partner]`), and which has no listing memo: the values of x that pass are
    one run of the range. Its pairs for every value of x are made once per tuple of the
    earlier parameters' values (in a dict of the module holding at most RANGE_PAIRS pairs),
    and a listing finds the run's ends by binary search (the first index where every rising
    test holds, then from there the first where a falling test fails) at the head of the
    loop of the last parameter those tests read (of the first loop when they read none), and
    extends `out` with that slice of the pairs. O Jogo do Poder's trade offers,
    `offer_swap(partner: player, give: Company in hand[p], money: int in
    -trade_cash..trade_cash step 5)`: 21 pairs for each partner and card, made one by one at
    every offer (`advanced`: 1.20x the games/s, in-process A/B on new seeds; 1.06x with the
    searches in the card's loop). An option of one parameter over a constant range whose
    tests are safe always has a listing memo (the other side of each comparison reads no
    parameter: a key), and an option with a memo keeps it (Pola Naftowe's `lobby(amount: int
    in min_bid..bid_cap step bid_step) when amount <= cash[q]`, kept per cash[q]: a memo
    found copies its list once, where a slice is made and then copied after a search; 0.94x
    the games/s when sliced). Safe: the slice holds the pairs the loop would make, in the
    same order (the passing values of an ascending range, made from the same parameter
    values); the tests cannot fault nor change anything, so testing them at other values, or
    fewer times, changes nothing but the time taken."""
    for (pc, oi), op in plan.options.items():
        if pc == "standing":
            continue
        opt = an.low.code[pc].node.options[oi]
        m = len(opt.params)
        if m < 2 or op.table_size is not None or op.memo_keys is not None:
            continue
        dom = op.domains[m - 1]
        if dom.kind != "range" or dom.first is None or op.filters.get(m - 1):
            continue
        lo, hi, step = dom.bounds
        if not 2 <= (hi - lo) // step + 1 <= RANGE_ROW:
            continue
        tests = op.placed.get(m - 1, [])
        levels = {an.p.slots[prm]: i for i, prm in enumerate(opt.params[:-1])}
        kinds, deepest = [], -1
        for a, _brk, sub, rn in tests:
            deepest = max([deepest] + [levels[s] for s in _free_in(an, a, rn) if s in levels])
            bounds = {slot: an.int_bound(node, {}) for slot, node in rn.items()
                      if T.strip(an.t(node)).kind == "int"}
            slot = _inner_slot(an, opt.params[m - 1], rn)
            if sub or not an.safe_with(a, bounds):
                break
            if an.falls_slot(a, slot, dom):
                kinds.append(True)
            elif an.rises_slot(a, slot, dom):
                kinds.append(False)
            else:
                break
        else:
            if kinds:
                op.slice_tests = kinds
                op.slice_level = deepest


def _listing_keys(an, opt: ast.Option, op: OptionPlan) -> list | None:
    if not opt.params or opt.when is None or op.table_size is not None or op.filters \
            or op.unsafe_domain >= 0:
        return None
    for prm, dom in zip(opt.params, op.domains):
        kind = an.p.slot_types[an.p.slots[prm]].kind
        if not (dom.kind == "range" or (dom.kind == "type" and kind in ("enum", "bool"))):
            return None
    params = {an.p.slots[prm] for prm in opt.params}
    keys: list = []
    for tests in op.placed.values():
        for a, _brk, _sub, rn in tests:
            if not _split_keys(an, a, rn, params, keys):
                return None
    unique = list({_canon(an, e, rn): (e, rn) for e, rn in keys}.values())
    return unique if len(unique) <= 4 else None


def _reads_game(an, e, seen: set) -> bool:
    """Whether e (or a def it calls) reads state or the players."""
    for node in _all_nodes(e):
        ref = an.p.refs.get(node) if hasattr(node, "span") else None
        if ref is None:
            continue
        if ref[0] in ("state", "num_players", "players"):
            return True
        if ref[0] == "def" and isinstance(node, ast.Call) and ref[1] not in seen:
            seen.add(ref[1])
            if _reads_game(an, an.p.defs[ref[1]].body, seen):
                return True
    return False


def _split_keys(an, e, rn: dict, params: set, keys: list) -> bool:
    """Adds to keys the largest sub-expressions of e that read no option parameter but read
    the game (plan_listing_memo); False if the game is read some other way."""
    free = _free_in(an, e, rn)
    if not free & params:
        if free or _reads_game(an, e, set()):  # (an outside local, state or the players)
            t = T.strip(an.t(e))
            plain = t.kind in ("int", "bool", "enum", "player") or (
                t.kind == "set" and t.elem is not None
                and t.elem.kind in ("enum", "bool", "player"))  # (a bit mask: hashable)
            if not plain or not an.safe(e):
                return False
            keys.append((e, rn))
        return True
    parts: list
    if isinstance(e, ast.Name):
        return True  # a parameter (or a def's parameter standing for one)
    if isinstance(e, ast.BinOp):
        parts = [e.left, e.right]
    elif isinstance(e, ast.Not | ast.Neg):
        parts = [e.operand]
    elif isinstance(e, ast.CondExpr):
        parts = [e.cond, e.then, e.orelse]
    elif isinstance(e, ast.Attr):
        parts = [e.obj]
    elif isinstance(e, ast.Call):
        ref = an.p.refs.get(e, ("",))
        pure = ref[0] == "table" or (ref[0] == "builtin" and BUILTINS[ref[1]].arith) or (
            ref[0] == "def" and not _reads_game(an, an.p.defs[ref[1]].body, {ref[1]}))
        if not pure:
            return False
        parts = list(e.args)
    else:
        return False
    return all(_split_keys(an, x, rn, params, keys) for x in parts)


def _match_extreme(an, e: ast.Agg) -> tuple | None:
    if e.func not in ("any", "all") or e.cond is not None:
        return None
    ref = an.p.refs.get(e.iter) if isinstance(e.iter, ast.Name) else None
    if ref is None or ref[0] != "enum_all" or not an.p.enums[ref[1]].members:
        return None
    test = e.elem
    if not isinstance(test, ast.BinOp) or test.op not in ("<", "<=", ">", ">="):
        return None
    slot = an.p.slots[e]
    flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
    for arr, bound, op in ((test.left, test.right, test.op),
                           (test.right, test.left, flip[test.op])):
        if not (isinstance(arr, ast.Index) and isinstance(arr.index, ast.Name)
                and an.p.refs.get(arr.index) == ("local", slot)):
            continue
        at = an.t(arr.obj)
        if at.kind != "array" or at.index != T.enum(ref[1]) or at.elem != T.INT:
            continue
        if slot in an.free(arr.obj) or slot in an.free(bound) \
                or not an._ok(arr.obj) or not an._ok(bound):
            continue
        small = op in ("<", "<=")  # true for the small values
        return ("extreme", arr.obj, bound, op, "min" if small == (e.func == "any") else "max",
                e.func, len(an.p.enums[ref[1]].members))
    return None


def _match_below(an, e: ast.Agg) -> tuple | None:
    """`count/any/all(y < x for y in S)` (any of < <= > >=, either side) with S a set of enum
    members (a mask) and x a member of that enum that does not read y: the members of S below
    (or above) x, taken from the mask at once. Power Grid's rank(x) = count(y < x for y in
    market), asked for every plant of the market at every auction listing."""
    if e.func not in ("any", "all", "count") or e.cond is not None:
        return None
    st = T.strip(an.t(e.iter))
    test = e.elem
    if st.kind != "set" or st.elem.kind != "enum" or not isinstance(test, ast.BinOp) \
            or test.op not in ("<", "<=", ">", ">=") or not an._ok(e.iter):
        return None
    slot = an.p.slots[e]
    flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
    for y, x, op in ((test.left, test.right, test.op), (test.right, test.left, flip[test.op])):
        if isinstance(y, ast.Name) and an.p.refs.get(y) == ("local", slot) \
                and an.t(x) == st.elem and slot not in an.free(x) and an._ok(x) \
                and slot not in an.free(e.iter):
            return ("below", e.iter, x, op)
    return None


def _match_nb_mask(an, e) -> tuple | None:
    it = e.iter
    if not isinstance(it, ast.Call) or an.p.refs.get(it) != ("builtin", "neighbors"):
        return None
    slot = an.p.slots[e]
    if isinstance(e, ast.Agg):
        if e.cond is not None or e.func not in ("any", "all", "count"):
            return None
        test = e.elem
    else:
        if e.kind != "set" or not isinstance(e.elem, ast.Name) \
                or an.p.refs.get(e.elem) != ("local", slot):
            return None
        test = e.cond
    if not (isinstance(test, ast.BinOp) and test.op in ("in", "not in")
            and isinstance(test.left, ast.Name)
            and an.p.refs.get(test.left) == ("local", slot)
            and T.strip(an.t(test.right)).kind == "set" and slot not in an.free(test.right)
            and an._ok(test.right)):
        return None
    return ("nb_mask", it.args[0], test.right, test.op)


def plan_flow(an, plan: Plan) -> None:
    """The flow's functions: one per head (the start, every place where a decision or chance
    outcome resumes, loop heads, and blocks that would otherwise be copied into several
    functions); every other basic block is copied into the one function that reaches it, so a
    step usually runs one function from resumption to the next pause. A small head is also
    copied where it is entered by a forward jump, which saves a round through the dispatcher.
    Safe: the same instructions run in the same order, only the function boundaries move."""
    code = an.low.code
    leaders = {0}
    for pc, ins in enumerate(code):
        if isinstance(ins, Jump | JumpIfNot | IterNext):
            leaders.update((ins.target, pc + 1))
        if isinstance(ins, IterNext):
            leaders.add(pc)
        if isinstance(ins, ChooseAt):
            leaders.update(ins.targets)
            leaders.update((pc, pc + 1))
            if ins.orelse >= 0:
                leaders.add(ins.orelse)
        if isinstance(ins, ChanceAt | FinishAt | DepthFault):
            leaders.update((pc, pc + 1))
    order = sorted(x for x in leaders if 0 <= x < len(code))
    for i, start in enumerate(order):
        plan.block_end[start] = order[i + 1] if i + 1 < len(order) else len(code)
    succ: dict[int, list[int]] = {}
    weight: dict[int, int] = {}
    roots = [0]
    for start in order:
        end = plan.block_end[start]
        last = code[end - 1]
        if isinstance(last, Jump):
            succ[start] = [last.target]
        elif isinstance(last, JumpIfNot | IterNext):
            succ[start] = [end, last.target]
        elif isinstance(last, ChooseAt):
            succ[start] = [last.orelse] if last.orelse >= 0 else []
            roots += list(last.targets)
            if an.p.standing:
                roots.append(end - 1)  # after a standing action the decision is asked again
        elif isinstance(last, ChanceAt):
            succ[start] = []
            roots.append(end)
        elif isinstance(last, FinishAt | DepthFault):
            succ[start] = []
        else:
            succ[start] = [end]
        weight[start] = sum(_stmt_count(ins.stmt) if isinstance(ins, Exec) else 1
                            for ins in code[start:end])
    # Heads: roots and targets of backward jumps (so the rest has no cycle), then, until
    # nothing changes, blocks of some size that would be copied more than once.
    heads = set(roots)
    for start in order:
        heads.update(t for t in succ[start] if t <= start)
    while True:
        copies = {b: 1 if b in heads else 0 for b in order}
        for b in order:
            for t in succ[b]:
                if t not in heads:
                    copies[t] += copies[b]
        more = {b for b in order if b not in heads and copies[b] > 1 and weight[b] > SMALL_BLOCK}
        if not more:
            break
        heads.add(min(more))
    plan.roots = list(dict.fromkeys(roots))
    plan.heads = heads
    for h in heads:
        if h < len(code) and flow_size(an, plan, h, succ) <= HEAD_INLINE_SIZE:
            plan.small_heads.add(h)


def flow_size(an, plan: Plan, head: int, succ: dict[int, list[int]]) -> int:
    """A measure of the code of a head's function: the AST nodes of its instructions and of the
    blocks copied into it (those reached without passing another head)."""
    code = an.low.code
    total, todo, seen = 0, [head], set()
    while todo:
        b = todo.pop()
        if b in seen or b >= len(code):
            continue
        seen.add(b)
        for ins in code[b:plan.block_end[b]]:
            total += _instr_size(an, ins)
        todo.extend(t for t in succ[b] if t not in plan.heads)
    return total


def _instr_size(an, ins) -> int:
    if isinstance(ins, Exec):
        return an.stmt_nodes(ins.stmt)
    expr = getattr(ins, "expr", None) or getattr(ins, "cond", None)
    return 1 + (an.size(expr) if expr is not None else 0)


def plan_resume_in_apply(an, plan: Plan) -> None:
    """Every apply function (the k-th action or outcome of a pause) runs the flow on to the next
    pause itself, with _run's loop and fault conversion written in it, instead of calling _run:
    one Python call less per step, on every step. Safe: the same block functions run in the
    same order from the same resumption point, and a Python fault inside them is turned into
    the same RulesRuntimeError (located by _where, which reads the deepest frame of the module,
    not the caller's); the counter of counted flow `while` bodies is reset first, as _run does
    (reset_loops, when the program has such a loop)."""
    plan.resume_in_apply = True
    plan.reset_loops = any(isinstance(ins, JumpIfNot) and ins.loop is not None
                           for ins in an.low.code)


def plan_shared_any(an, plan: Plan) -> None:
    """A flow test (`while` or `if`) followed, with nothing but phase changes and jumps in
    between, by a decision, where the test contains `any(P(x) for x in D)` (directly or in an
    inlined def whose arguments are locals) and an option of the decision is `o(x: T [in D])
    when P(x)` with the same D and P (the def's parameters standing for those locals): the test
    keeps the members passing P in a list (its `any` is whether the list is non-empty), and the
    decision's legal function, called right after it, lists that option from the list instead
    of testing P again. The brief's `while bought < 3 and can_buy(p) { choose p { buy(c) when
    <can_buy's test of c> ... } }`. Safe: the interpreter's `any` evaluates P on every member in
    order (unless nothing can fault, when the order cannot be seen), and so does the list; the
    state and the locals P reads do not change in between, so the option's members are the
    same and any fault P could raise was raised by the test first, as in the interpreter. When
    the `any` is not evaluated (short-circuited), the list stays None and the legal function
    tests P itself. Tests that lead to one decision share with one of its options only."""
    code = an.low.code
    for pc, ins in enumerate(code):
        if not isinstance(ins, JumpIfNot):
            continue
        nxt, seen = pc + 1, set()
        while nxt < len(code) and nxt not in seen and isinstance(code[nxt], Jump | SetPhase):
            seen.add(nxt)
            nxt = code[nxt].target if isinstance(code[nxt], Jump) else nxt + 1
        if nxt >= len(code) or not isinstance(code[nxt], ChooseAt):
            continue
        found = an.shared_any(ins.cond, code[nxt].node.options)
        if found is not None:
            # The decision's legal function takes one list (`known`) and the plan says which
            # option it lists: a second test leading to the same decision (a `break` out of a
            # loop after another) shares only with that option, else it keeps its `any`
            # (tests/fixtures/sharedtwice.rules).
            if any(cpc == nxt and oi != found[0] for cpc, oi, _ag in plan.shared_any.values()):
                continue
            plan.shared_any[pc] = (nxt, found[0], id(found[1]))


def plan_cached_defs(an, plan: Plan) -> None:
    """A def with no parameters, a plain value (int, bool, enum member or player: never none,
    nothing mutable to share), at least CACHE_NODES nodes with an aggregate or a loop in them
    (callees included), called from two places or more, is kept on the state (attribute
    c_<def>) once computed, and forgotten (set to None) by every statement that writes a state
    variable it reads, directly or through the defs it calls: `can_end()` reading `size` and
    `ending`, asked at every decision of a turn. Clone copies the value, set_vars forgets it, a
    new game starts without it. Safe: a def reads only state and constants and changes
    nothing, so while none of the variables it reads is written its value is the same; a call
    that faults stores nothing (the next call faults again, as in the interpreter), and a value
    was stored only by a call that did not fault, which a call on the same state would not do
    either."""
    calls: dict[str, int] = {}
    for node in _all_nodes(an.p.module.decls):
        if isinstance(node, ast.Call) and an.p.refs.get(node, ("",))[0] == "def":
            calls[node.name] = calls.get(node.name, 0) + 1
    for d in an.p.defs.values():
        if d.params or calls.get(d.name, 0) < 2 \
                or an.p.def_ret[d.name].kind not in ("int", "bool", "enum", "player"):
            continue
        reads = an.def_reads(d)
        if reads is None or an.def_nodes(d) < CACHE_NODES:
            continue
        plan.cached_defs[d.name] = reads


# What a def kept per argument may read besides state variables: values fixed for the game.
_KEYED_REFS = ("builtin", "cell", "const", "enum_all", "field", "graph", "local", "member",
               "num_players", "param", "players", "table")


def plan_keyed_defs(an, plan: Plan) -> None:
    """A def whose parameters all have small finite types (an enum, a player, a bool: never
    none), with at most DENSE_TABLE_SPAN argument tuples in all, an expression body, a plain
    value (int, bool, enum member, player or set: never none, nothing mutable to share), at
    least CACHE_NODES nodes with an aggregate in them or a table lookup (Acquire's price(c), a
    table row and arithmetic, asked seven times per buy), called from two places or more, that
    reads state only as A[t] or as A[n] for n in neighbors(t), t one of its parameters (A an
    array indexed by t's type; no def calls, only values fixed for the game otherwise): its
    values are kept on the state in one flat list indexed by the mixed-radix position of the
    arguments (attribute c_<def>, None until a value is asked; the first parameter is the most
    significant digit, so one parameter's list is indexed by the argument itself), and a
    write of A[x] forgets only the arguments it can change: those whose t is x itself (if the
    def reads A[t]) or a neighbour of x (if it reads A[n]: grid neighbours are mutual). With
    several parameters that is a slice of the list when t is the first parameter (a run) or
    the last (a step); otherwise, or when A is indexed by two parameters, a write of A forgets
    every value, as does a write of A at an index that is not a plain local, or of A as a
    whole. Acquire's adjacent_chains(t), asked for every tile of a hand several times a turn,
    while a placed tile changes chain_of at a few cells only; Power Grid's store(p, k), five
    sums over p's plants asked for every resource at every purchase, while owned[p] changes
    when p buys or drops a plant. DENSE_TABLE_SPAN bounds the list as it bounds a dense
    table: a few tens of kilobytes at most, allocated on the first ask after a clone. A clone
    and set_vars start without the list, a new game too. Safe: the def's value at an argument
    tuple depends only on the cells named, so it is the same while none of them is written; a
    call that faults keeps nothing (the next call faults again, as in the interpreter).

    A def that walks every member of an enum of more than 8 members (an aggregate or a
    comprehension over the enum's name) may also read the state otherwise: at the walk's
    members, as a whole variable, or through the defs it calls (Automobile's own_spaces(p),
    {m for m in Model if owns(p, m)}, asked by several listings a turn while owner and closed
    change a few times a game). Then any write of a variable it reads forgets every kept value
    (kept, Automobile's own_spaces, car_spaces, cars_of and holdings: 1.07x fewer
    instructions, 1.04x less time in a 4-player game). Defs without such a walk are not kept
    that way: Acquire's dead(t) over a tile's adjacent chains, Power Grid's house_cost (its
    path costs are fetched once per listing instead) and rank, Pola Naftowe's upkeep cost
    0.97x, 0.81x and 0.99x in instructions when they were.

    Not kept: a bool def that plan_options expands in an option's `when` (Power Grid's
    may_take(p, x), tests/fixtures/pushdown.rules' reach(p, c)): expanded, its parts are
    tested at the loop level of what each reads, and those the domain already guarantees are
    dropped, where a kept value is asked only once every argument is bound and costs a lookup
    even when the test is one comparison of a folded parameter."""
    calls: dict[str, int] = {}
    for node in _all_nodes(an.p.module.decls):
        if isinstance(node, ast.Call) and an.p.refs.get(node, ("",))[0] == "def":
            calls[node.name] = calls.get(node.name, 0) + 1
    # bool defs that plan_options would expand in an option's `when`: left to it
    in_when: set[str] = set()
    for opt in _all_options(an):
        if opt.when is not None:
            _when_conjuncts(an, opt.when, None, frozenset(plan.cached_defs), in_when)
    for d in an.p.defs.values():
        if not d.params or isinstance(d.body, ast.Block) or calls.get(d.name, 0) < 2 \
                or d.name in in_when \
                or an.p.def_ret[d.name].kind not in ("int", "bool", "enum", "player", "set"):
            continue
        sizes, enums = [], []
        for prm in d.params:
            pt = an.p.slot_types[an.p.slots[prm]]
            if pt.kind == "enum":
                sizes.append(len(an.p.enums[pt.name].members))
            elif pt.kind == "player":
                sizes.append(an.p.max_players)
            elif pt.kind == "bool":
                sizes.append(2)
            else:
                break
            enums.append(pt.name if pt.kind == "enum" else None)
        if len(sizes) != len(d.params):
            continue
        kd = KeyedDef(tuple(sizes), tuple(enums), {})
        if kd.size > DENSE_TABLE_SPAN or (an.def_nodes(d) < CACHE_NODES and not any(
                isinstance(n, ast.Call) and an.p.refs.get(n, ("",))[0] == "table"
                for n in _all_nodes(d.body))):
            continue
        deps = _keyed_deps(an, d)
        if deps:
            kd.deps = deps
            plan.keyed_defs[d.name] = kd


def _all_options(an) -> list[ast.Option]:
    """Every option of every decision and every standing option."""
    out = [opt for pc in an.low.pauses if isinstance(an.low.code[pc], ChooseAt)
           for opt in an.low.code[pc].node.options]
    return out + [opt for sd in an.p.standing for opt in sd.options]


def _keyed_deps(an, d) -> dict[str, tuple[int, bool, bool]] | None:
    """The state variables a def of small finite parameters reads, each as (the parameter
    indexing it, -1 when two do; at the argument, at its neighbours), or None when it reads
    state any other way (plan_keyed_defs)."""
    refs = an.p.refs
    pslots = [an.p.slots[x] for x in d.params]

    def local_slot(e) -> str | None:
        if isinstance(e, ast.Name) and refs.get(e, ("",))[0] == "local":
            return refs[e][1]
        return None
    nb_of: dict[str, int] = {}  # a slot walking neighbors(t) -> t's position
    for node in _all_nodes(d.body):
        if isinstance(node, ast.Agg | ast.Comp) and isinstance(node.iter, ast.Call) \
                and refs.get(node.iter) == ("builtin", "neighbors") \
                and local_slot(node.iter.args[0]) in pslots:
            nb_of[an.p.slots[node]] = pslots.index(local_slot(node.iter.args[0]))
    deps: dict[str, tuple[int, bool, bool]] = {}
    indexed = set()
    loose = False  # some read is not at a parameter (or its neighbours)
    for node in _all_nodes(d.body):
        if isinstance(node, ast.Index) and isinstance(node.obj, ast.Name) \
                and refs.get(node.obj, ("",))[0] == "state":
            at = T.strip(an.t(node.obj))
            slot = local_slot(node.index)
            if slot in pslots:
                j, own, nb = pslots.index(slot), True, False
            elif slot in nb_of:
                j, own, nb = nb_of[slot], False, True
            else:
                j, own, nb = -1, True, False  # read at another index: any write forgets all
                loose = True
            if j >= 0 and (at.kind != "array"
                           or T.strip(at.index) != an.p.slot_types[pslots[j]]):
                return None
            _merge_dep(deps, refs[node.obj][1], j, own, nb)
            indexed.add(id(node.obj))
    for node in _all_nodes(d.body):
        ref = refs.get(node) if hasattr(node, "span") else None
        if ref is None or id(node) in indexed:
            continue
        if ref[0] == "state":  # the variable as a whole: any write forgets all
            _merge_dep(deps, ref[1], -1, True, False)
            loose = True
        elif ref[0] == "def":  # what the def it calls reads: any write forgets all
            reads = _def_reads(an, an.p.defs[node.name], set())
            if reads is None:
                return None
            for var in reads:
                _merge_dep(deps, var, -1, True, False)
            loose = True
        elif ref[0] not in _KEYED_REFS:
            return None
    if loose and not _walks_wide_enum(an, d):
        return None
    return deps


def _walks_wide_enum(an, d) -> bool:
    """Whether the def's body walks every member of an enum of more than 8 members (an
    aggregate or comprehension over the enum's name): a value worth keeping even though any
    write of what it reads forgets them all (plan_keyed_defs)."""
    for node in _all_nodes(d.body):
        if isinstance(node, ast.Agg | ast.Comp) and isinstance(node.iter, ast.Name):
            ref = an.p.refs.get(node.iter, ("",))
            if ref[0] == "enum_all" and len(an.p.enums[ref[1]].members) > SMALL_ENUM:
                return True
    return False


def _merge_dep(deps: dict, var: str, j: int, own: bool, nb: bool) -> None:
    if var in deps:
        j0, own0, nb0 = deps[var]
        j, own, nb = (j if j0 == j else -1), own or own0, nb or nb0
    deps[var] = (j, own, nb)


def _def_reads(an, d, seen: set) -> set[str] | None:
    """The state variables a def reads, with the defs it calls; None when it reads anything a
    kept value cannot follow (plan_keyed_defs)."""
    if d.name in seen:
        return set()
    seen.add(d.name)
    out: set[str] = set()
    for node in _all_nodes(d.body):
        ref = an.p.refs.get(node) if hasattr(node, "span") else None
        if ref is None:
            continue
        if ref[0] == "state":
            out.add(ref[1])
        elif ref[0] == "def":
            more = _def_reads(an, an.p.defs[node.name], seen)
            if more is None:
                return None
            out |= more
        elif ref[0] not in _KEYED_REFS:
            return None
    return out


def _walks(an):
    """(node, the collection it walks) for every `for`, aggregate, comprehension and sort, and
    every action parameter drawn from a domain (`x: T in D`)."""
    for node in _all_nodes(an.p.module.decls):
        it = node.domain if isinstance(node, ast.OParam) else node.iter if isinstance(
            node, ast.For | ast.Agg | ast.Comp | ast.Sort) else None
        if it is not None:
            yield node, it


def plan_peel_sets(an, plan: Plan) -> None:
    """A loop printed as a statement over a set (a `for`, an aggregate or comprehension walked
    in a loop, an action parameter's `in` domain) walks the bit mask by peeling its lowest
    member off (`while m: low = m & -m; m ^= low; x = low.bit_length() - 1; body`, the peel
    before the body so that `continue` and `break` keep their meaning) instead of iterating
    the tuple of members that `bits` builds (or finds in its cache). No tuple is built and a
    loop that stops early pays only for the members it saw; a cache miss costs more than a
    walk of a few members. Chosen for sets computed where they are walked (a comprehension,
    connected(...), a local): not an enum's name (all its members: a range), nor sets of bools
    or of enums of at most 8 members (a table lookup gives those). A set read from the state
    (a board, a hand) is peeled only when its enum has more than WIDE_SET members: a narrower
    one is often walked again unchanged, when bits' cache answers (Power Grid's owned plants,
    three times in a row), while a wider mask is mostly a cache miss (Acquire's hands of 108
    tiles: a tile drawn or placed changes them between walks, and each miss converts the mask
    to bytes and walks 14 of them), so the peel wins (4% fewer instructions in a 4-player
    Acquire playout, callgrind).
    Safe: the members come in the same ascending order, and the mask is an int read once
    before the loop, as the tuple was (a body that changes the set walks the old members)."""
    for _node, it in _walks(an):
        if T.strip(an.t(it)).kind != "set":
            continue
        elem = T.strip(an.t(it)).elem
        if elem is None or elem.kind == "bool" or (
                elem.kind == "enum" and len(an.p.enums[elem.name].members) <= SMALL_ENUM):
            continue
        base = it
        while isinstance(base, ast.Index):
            base = base.obj
        ref = an.p.refs.get(base) if isinstance(base, ast.Name) else None
        if ref is not None and (ref[0] == "enum_all" or ref[0] == "state" and (
                base is it or elem.kind != "enum"
                or len(an.p.enums[elem.name].members) <= WIDE_SET)):
            continue  # (every member of an enum: a range)
        plan.peel.add(id(it))


def plan_int_ranges(an, plan: Plan) -> None:
    """Ranges of int locals, so that a value checked against the int limit (consts.Growth)
    whose operands' ranges prove it fits is not checked (Analysis.int_bound,
    ExprPrinter.kept): a variable bound by a loop over a range with constant bounds (an
    action parameter `k: int in 0..2`, a `for`, an aggregate or a comprehension over `a..b`)
    and never assigned holds only values of that range. A def parameter is bounded by its
    argument where the def is expanded in place (inlined, or its `when` parts spread over an
    option's loops), and an enum field or a table value by its largest constant. Build's
    `k * m.cost + (if parts then parts_cost else 0)` with k in 0..2 needs no check. Runs first,
    so that what the other passes ask of the analysis (which code cannot fault) knows it.
    Safe: a check that can never fail is left out; the interpreter's check of the same value
    passes, and nothing else changes. State ints are not bounded (any value within the limit
    can be stored), nor are locals that an assignment may change."""
    assigned = {an.p.refs[n.target][1] for n in _all_nodes(an.p.module.decls)
                if isinstance(n, ast.Assign | ast.AugAssign)
                and an.p.refs.get(n.target, ("",))[0] == "local"}
    for node, it in _walks(an):
        bounds = an.const_bounds(it) if isinstance(it, ast.Range) else None
        slot = an.p.slots.get(node)
        if bounds is None or slot is None or slot in assigned:
            continue
        lo, hi, _step = bounds
        if lo <= hi:
            plan.slot_max[slot] = max(abs(lo), abs(hi))


def plan_path_rows(an, plan: Plan) -> None:
    """path_cost(G, S, t, A) whose G, S and A cannot fault and are never none: where it is
    printed in a loop (a legal-action function's, or an inlined def's body there) in which G,
    S and A do not change, the distances from S (runtime.path_row: the dict path_cost itself
    reads, from the same cache) are fetched once, at the outermost loop level where all
    three are bound, and each target reads its entry (ExprPrinter._path_row). Power Grid's
    build(c in in_play) when ... house_cost(p, c) <= cash[p]: one fetch per listing instead
    of a path_cost call per city. Safe: path_row and path_cost give the same distances;
    fetching them cannot fault (the arguments cannot) nor change anything, so doing it
    early, or when no target is asked, is not seen; the target is none-checked where the
    call was."""
    for node in _all_nodes(an.p.module.decls):
        if isinstance(node, ast.Call) and an.p.refs.get(node) == ("builtin", "path_cost") \
                and all(an._ok(a) for i, a in enumerate(node.args) if i != 2):
            plan.path_rows.add(id(node))


def plan_member_removes(an, plan: Plan) -> None:
    """`remove x from S` where x was just drawn from S by a chance node (`chance x in S`) or
    is an option's parameter `x: T in S` (S a state variable holding a set, or an array of sets
    at flow locals), reached from that chance node or option with nothing in between but phase
    changes, jumps and the binding of phase parameters to those locals (`run place_tile(p, t)`
    then `remove t from hand[p]`), and no other way into it: x is a member of S there, so the
    removal needs no membership test (no fault is possible), in every copy of the statement
    (a phase run from two places is copied at each). Acquire's `remove t from bag`
    after each draw and `remove t from hand[p]` after each placement. Safe: the outcomes and
    the options' values are S's members when the flow pauses (set_vars works them out again
    from the new state), and nothing between the pause and the statement writes the state or
    the locals naming S's indexes."""
    code = an.low.code
    ways = _ways_into(code)  # how many instructions lead to each one

    def drawn_from(slot: str, dom) -> dict:
        """{slot: (state variable, slots of the locals indexing it)} for a set domain."""
        if dom is None or T.strip(an.t(dom)).kind != "set":
            return {}
        idx: list[str] = []
        while isinstance(dom, ast.Index):
            ref = an.p.refs.get(dom.index) if isinstance(dom.index, ast.Name) else None
            if ref is None or ref[0] != "local":
                return {}
            idx.insert(0, ref[1])
            dom = dom.obj
        ref = an.p.refs.get(dom) if isinstance(dom, ast.Name) else None
        return {slot: (ref[1], tuple(idx))} if ref is not None and ref[0] == "state" else {}

    def follow(pc: int, drawn: dict) -> None:
        alias: dict[str, str] = {}  # phase parameter slot -> the local it was bound to
        fixed = set(drawn) | {i for _v, ix in drawn.values() for i in ix}
        while drawn and pc < len(code) and ways.get(pc) == 1:
            ins = code[pc]
            if isinstance(ins, SetPhase):
                pc += 1
            elif isinstance(ins, Jump):
                pc = ins.target
            elif isinstance(ins, Bind) and ins.slot not in fixed \
                    and ins.slot not in alias.values():
                ref = an.p.refs.get(ins.expr) if isinstance(ins.expr, ast.Name) else None
                if ref is not None and ref[0] == "local":
                    alias[ins.slot] = alias.get(ref[1], ref[1])
                else:
                    alias.pop(ins.slot, None)
                pc += 1
            else:
                break
        else:
            return
        st = code[pc].stmt if isinstance(code[pc], Exec) else None
        if not isinstance(st, ast.Remove) or not isinstance(st.value, ast.Name):
            return
        ref = an.p.refs.get(st.value)
        if ref is None or ref[0] != "local" or alias.get(ref[1], ref[1]) not in drawn:
            return
        var, ix = drawn[alias.get(ref[1], ref[1])]
        names = []
        for e in st.target.indices:
            r = an.p.refs.get(e) if isinstance(e, ast.Name) else None
            if r is None or r[0] != "local":
                return
            names.append(alias.get(r[1], r[1]))
        if an.p.refs.get(st.target) == ("state", var) and tuple(names) == ix:
            known.add(pc)

    known: set[int] = set()  # pcs of the removals that need no test
    for pc, ins in enumerate(code):
        if isinstance(ins, ChanceAt):
            follow(pc + 1, drawn_from(an.p.slots[ins.node], ins.node.domain))
        elif isinstance(ins, ChooseAt):
            for opt, target in zip(ins.node.options, ins.targets):
                drawn: dict = {}
                for prm in opt.params:
                    drawn.update(drawn_from(an.p.slots[prm], prm.domain))
                follow(target, drawn)
    # (a second `run` of the same removal finds the member gone)
    plan.member_removes.update(_every_copy(code, known))


def plan_bounded_updates(an, plan: Plan) -> None:
    """`A += n` / `A -= n` (n a literal; A a state variable, a flow local, or an array item at
    literal or name indexes) among the first statements of a decision's option, where the
    option's `when`, or the flow test the decision comes right after, has a conjunct bounding
    A by a constant on the side the update moves it (`bank[c] > 0` before `bank[c] -= 1`,
    `bought < max_buy` before `bought += 1`) so that the new value cannot cross the int limit:
    its limit check is left out, when every copy of the statement qualifies (a phase run from
    two places is copied at each). Only statements before which nothing writes A or its indexes
    (nor binds them) count, and from the flow test only bounds of flow locals. Safe: the
    conjuncts were true when the options were listed; the state does not change until one is
    applied but by set_vars, which lists the options again (their `when`s, not the flow test:
    it cannot change flow locals); A keeps its value until the update."""
    code = an.low.code
    top = 10 ** an.p.limits.max_int_digits - 1
    ways = _ways_into(code)

    def const(e):
        try:
            v = an.k.eval_const(e)
        except (RulesRuntimeError, KeyError):
            return None
        return v if type(v) is int else None

    def facts_of(conds) -> list:
        """(A, lowest value, highest value) of A from comparisons with a constant."""
        out = []
        flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
        for cond in conds:
            for e in _conjuncts(cond):
                if not isinstance(e, ast.BinOp) or e.op not in flip:
                    continue
                a, op, b = e.left, e.op, const(e.right)
                if b is None:
                    a, op, b = e.right, flip[e.op], const(e.left)
                if b is None or not isinstance(a, ast.Name | ast.Index):
                    continue
                lo = b + 1 if op == ">" else b if op == ">=" else None
                hi = b - 1 if op == "<" else b if op == "<=" else None
                out.append((a, lo, hi))
        return out

    def parts(e):
        """(variable ref, index refs or literals) of a name or of items of one, else None."""
        idx: list = []
        while isinstance(e, ast.Index):
            i = e.index
            if isinstance(i, ast.IntLit):
                idx.insert(0, ("lit", i.value))
            elif isinstance(i, ast.Name) and an.p.refs.get(i, ("",))[0] in ("local", "state"):
                idx.insert(0, an.p.refs[i])
            else:
                return None
            e = e.obj
        ref = an.p.refs.get(e) if isinstance(e, ast.Name) else None
        if ref is None or ref[0] not in ("local", "state"):
            return None
        return ref, tuple(idx)

    def lvalue_parts(t):
        idx = []
        for i in t.indices:
            if isinstance(i, ast.IntLit):
                idx.append(("lit", i.value))
            elif isinstance(i, ast.Name) and an.p.refs.get(i, ("",))[0] in ("local", "state"):
                idx.append(an.p.refs[i])
            else:
                return None
        ref = an.p.refs.get(t)
        return (ref, tuple(idx)) if ref is not None else None

    def follow(pc: int, facts: list) -> None:
        facts = [(parts(a), lo, hi) for a, lo, hi in facts]
        facts = [f for f in facts if f[0] is not None]
        written: set = set()  # refs written or bound so far
        while facts and pc < len(code) and ways.get(pc) == 1:
            ins = code[pc]
            if isinstance(ins, SetPhase):
                pc += 1
                continue
            if isinstance(ins, Jump):
                pc = ins.target
                continue
            if isinstance(ins, Bind):
                written.add(("local", ins.slot))
                pc += 1
                continue
            if not isinstance(ins, Exec):
                return
            st = ins.stmt
            if isinstance(st, ast.AugAssign) and st.op in ("+", "-") \
                    and isinstance(st.value, ast.IntLit) \
                    and T.strip(an.t(st.target)).kind == "int" \
                    and an.t(st.target).kind == "int":
                tp = lvalue_parts(st.target)
                n = st.value.value
                for (ref, idx), lo, hi in facts:
                    if tp != (ref, idx) or ref in written or any(i in written for i in idx):
                        continue
                    if st.op == "+" and hi is not None and hi + n <= top \
                            or st.op == "-" and lo is not None and lo - n >= -top:
                        known.add(pc)
                        break
            for n in _all_nodes(st):
                slot = an.p.slots.get(n) if hasattr(n, "span") else None
                if slot is not None:
                    written.add(("local", slot))
                if isinstance(n, ast.Assign | ast.AugAssign | ast.Add | ast.Remove | ast.Push):
                    ref = an.p.refs.get(n.target)
                    if ref is not None:
                        written.add(ref)
            pc += 1

    before: dict[int, list] = {}  # decision pc -> the conditions of the test just before it
    for pc, ins in enumerate(code):
        if isinstance(ins, JumpIfNot):
            nxt = pc + 1
            while nxt < len(code) and ways.get(nxt) == 1 and isinstance(code[nxt], SetPhase):
                nxt += 1
            if nxt < len(code) and ways.get(nxt) == 1 and isinstance(code[nxt], ChooseAt):
                before[nxt] = [ins.cond]
    def flow_local(a) -> bool:
        """Whether a bound from the flow test before a decision still holds when an option is
        applied: set_vars, at the pause, lists the options again (their `when`s) but does not
        test the flow again, so only flow locals (and literal indexes) qualify."""
        p = parts(a)
        return p is not None and p[0][0] == "local" and all(i[0] in ("local", "lit")
                                                            for i in p[1])
    known: set[int] = set()  # pcs of the updates that need no check
    for pc, ins in enumerate(code):
        if isinstance(ins, ChooseAt) and not an.p.standing:
            flow = [f for f in facts_of(before.get(pc, [])) if flow_local(f[0])]
            for opt, target in zip(ins.node.options, ins.targets):
                follow(target, flow + facts_of([opt.when] if opt.when is not None else []))
    # (a `run` after an option with no bounding test reaches the same update unbounded;
    # tests/fixtures/boundedtwice.rules)
    plan.bounded_updates.update(_every_copy(code, known))


def _every_copy(code, known: set[int]) -> set[int]:
    """The statements (ids) every lowered copy of which is at a pc in `known`. A phase run from
    two places is copied at each, and a plan names the statement, so a decision taken for one
    copy holds only if it holds for all of them."""
    copies: dict[int, list[int]] = {}
    for pc, ins in enumerate(code):
        if isinstance(ins, Exec):
            copies.setdefault(id(ins.stmt), []).append(pc)
    return {sid for sid, pcs in copies.items() if set(pcs) <= known}


def _ways_into(code) -> dict[int, int]:
    """How many instructions lead to each one (jumps, fall-through, resumptions)."""
    ways: dict[int, int] = {}

    def lead(to: int) -> None:
        ways[to] = ways.get(to, 0) + 1
    for pc, ins in enumerate(code):
        if isinstance(ins, Jump):
            lead(ins.target)
        elif isinstance(ins, JumpIfNot | IterNext):
            lead(ins.target)
            lead(pc + 1)
        elif isinstance(ins, ChooseAt):
            for t in [*ins.targets, ins.orelse]:
                if t >= 0:
                    lead(t)
        elif not isinstance(ins, FinishAt):
            lead(pc + 1)
    return ways


def plan_hidden(an, plan: Plan) -> None:
    """The history entries that a `reveal` may make public (a secret choice of an option it
    names, a draw seen by one player of a chance node it names) are listed on the state, one
    list per decision or chance node, kept by the apply functions; a reveal looks at the lists
    of the nodes it names instead of the whole history (Poder reveals the bids every round,
    and its deals, which no reveal names, are not listed at all)."""
    nodes = [n for root in (an.p.flow, *an.p.phases.values()) if root is not None
             for n in _all_nodes(root)]
    reveals = [(n, an.p.refs[n]) for n in nodes if isinstance(n, ast.Reveal)]
    for n in nodes:
        if isinstance(n, ast.Choose) and n.secret:
            names = {o.name for o in n.options}
            kinds = [r for r, (_k, secret, _draws) in reveals if names & set(secret)]
        elif isinstance(n, ast.Chance) and n.seen_by is not None:
            kinds = [r for r, (_k, _secret, draws) in reveals if n.name in draws]
        else:
            continue
        if kinds and id(n) not in plan.hidden_lists:
            k = plan.hidden_lists[id(n)] = len(plan.hidden_lists)
            for r in kinds:
                plan.reveal_lists[id(r)] = (*plan.reveal_lists.get(id(r), ()), k)


def plan_kept_members(an, plan: Plan) -> None:
    """A set in the state (or an array of sets, indexed once) of an enum of more than 8 and at
    most WIDE_SET members that the rules walk (a `for`, an aggregate, a comprehension, a sort,
    an action parameter's `in` domain) over the variable itself or over A[i], i a local: its
    members are kept in ascending order as a tuple beside the mask (attribute w_<var>: the
    tuple, or for an array a list with one tuple per index; None until a walk asks). A walk
    reads the tuple, and builds it from the mask (`bits`) only if it is not kept; `add x` and
    `remove x` with x and i locals (or members) insert or delete x in the kept tuple (bisect),
    any other write forgets it (the entry at a local index, else all). This is the issue's
    "small sets kept as sorted tuples beside their masks": O Jogo do Poder's hands, offers and
    companies owned change between walks, so bits' cache mostly missed on them; kept, a 4-player
    game takes 1.04x fewer instructions and 1.09x less time (peeling them instead: 1.07x less
    time, and 0.97x on Power Grid, whose plants and cities are walked again unchanged, where the
    tuple does as well as bits' cache). Enums of at most 8 members and sets of players are left
    to bits' table (SMALL_BITS); wider ones to the peel (plan_peel_sets) or bits: kept, Acquire's
    hands and board of 108 tiles took 1.047x fewer instructions but 1.015x more time (each
    insert and delete allocates tuples, written about as often as they are walked), the hands
    alone 1.015x more time too.
    Safe: the tuple holds exactly the members of the mask whenever it is kept (each write
    updates or forgets it, after the mask's own update, which faults first when a removed
    member is missing); a tuple is never changed, so a walk whose body writes the set goes on
    over the members it started with, as over `bits(mask)` before. Clones copy the list (the
    tuples are shared), set_vars and a new game start without it."""
    walks: dict[str, list[int]] = {}
    for _node, it in _walks(an):
        var = _kept_walk_var(an, it)
        if var is not None:
            walks.setdefault(var, []).append(id(it))
    for var, ids in walks.items():
        t = an.p.state_types[var]
        plan.kept_members[var] = t.index if t.kind == "array" else None
        plan.kept_walks.update(ids)


def _kept_walk_var(an, it) -> str | None:
    """The state variable whose members plan_kept_members keeps for the walk over `it`, if any:
    `it` is a set variable or A[i] for an array of sets A and a local i that is never none."""
    t = an.t(it)
    if t.kind != "set" or t.elem is None or t.elem.kind != "enum" \
            or not SMALL_ENUM < len(an.p.enums[t.elem.name].members) <= WIDE_SET:
        return None
    base = it.obj if isinstance(it, ast.Index) else it
    if not isinstance(base, ast.Name) or an.p.refs.get(base, ("",))[0] != "state":
        return None
    var = an.p.refs[base][1]
    vt = an.p.state_types[var]
    if isinstance(it, ast.Index):
        if vt.kind != "array" or vt.elem.kind != "set" or not kept_index(an, it.index):
            return None
    elif vt.kind != "set":
        return None
    return var


def kept_index(an, e) -> bool:
    """Whether e is a local (or an enum member) that is never none: an index or a member that
    plan_kept_members' updates can evaluate again after the write."""
    return isinstance(e, ast.Name) and an.p.refs.get(e, ("",))[0] in ("local", "member") \
        and an.t(e).kind in ("enum", "player")


def plan_def_guards(an, plan: Plan) -> None:
    """A bool def that cannot fault, whose true value implies a cheaper condition, is computed
    only when that condition holds (else it is false). Two forms:
    - `count(P(c) for c in S) >= k` (k >= 1; also `> k - 1`) or `any(P(c) for c in S)`, S a
      set of members of an enum E and P reading none of the def's parameters: at least k
      members of S pass, so at least k of E do. That count over E is kept on the state
      (attribute g_<def>) until a state variable P reads is written, as plan_cached_defs keeps
      a def's value. Acquire's `dead(t) = count(safe(c) for c in adjacent_chains(t)) >= 2`,
      asked for every tile of a hand at every placement, at every draw and at the end of each
      turn, is false without looking at t's neighbours while fewer than two chains are safe:
      in four of five turns of a random 4-player game.
    - a conjunct that reads none of the def's parameters: of the body, or of every `return`
      of a block body that does not return `false` (Acquire's `founds_eighth(t)` returns true
      only if `all(size[c] > 0 for c in Chain)`). It is printed where the def is asked, so the
      listings' loop-invariant code motion computes it once before their loops.
    Safe: the def cannot fault (analysis.def_safe), and a call is skipped only where binding
    its arguments cannot fault either (ExprPrinter.args_safe), so skipping it changes no
    fault; the guard cannot fault (it is computed where the def was not reached) and reads the
    state only; a set has each member once, so a count over S is at most the count over E."""
    for d in an.p.defs.values():
        if not d.params or an.p.def_ret[d.name].kind != "bool" or d.name in plan.keyed_defs \
                or d.name in plan.cached_defs or not an.def_safe(d):
            continue
        g = None
        if isinstance(d.body, ast.Block):
            conds = [_free_conjunct(an, r.value) for r in _returns_in(d.body.stmts)
                     if not isinstance(r.value, ast.BoolLit) or r.value.value]
            if len(conds) == 1 and conds[0] is not None:
                g = DefGuard(cond=conds[0])
        else:
            g = _agg_guard(an, d.body)
            if g is None:
                cond = _free_conjunct(an, d.body)
                g = DefGuard(cond=cond) if cond is not None else None
        if g is not None:
            plan.def_guards[d.name] = g


def _free_conjunct(an, e):
    """A conjunct of e (a chain of `and`s), not the first (that one is tested first anyway),
    that reads no local (a def's parameters, its lets) and cannot fault, or None."""
    for x in _conjuncts(e)[1:]:
        if not an.free(x) and an.safe(x):
            return x
    return None


def _agg_guard(an, e) -> DefGuard | None:
    """The aggregate form of plan_def_guards for a def body e, if it has it."""
    least = 1
    if isinstance(e, ast.BinOp) and e.op in (">=", ">") and isinstance(e.right, ast.IntLit):
        least = e.right.value + (e.op == ">")
        e = e.left
        if not isinstance(e, ast.Agg) or e.func != "count" or least < 1:
            return None
    elif not isinstance(e, ast.Agg) or e.func != "any":
        return None
    t = an.t(e.iter)
    if e.cond is not None or t.kind != "set" or t.elem is None or t.elem.kind != "enum":
        return None
    if an.free(e.elem) - {an.p.slots[e]} or not an.safe(e.elem):
        return None
    reads = an.reads(e.elem)
    if reads is None:
        return None
    return DefGuard(agg=e, least=least, enum=t.elem.name, reads=reads)


PASSES = (plan_int_ranges, plan_dense_tables, plan_phase_sets, plan_cached_defs, plan_keyed_defs,
          plan_inlining, plan_options, plan_domain_filters, plan_reused_any, plan_mask_patterns,
          plan_field_walks, plan_flow, plan_resume_in_apply, plan_shared_any, plan_listing_memo,
          plan_range_slices, plan_peel_sets, plan_path_rows, plan_member_removes,
          plan_bounded_updates, plan_hidden, plan_kept_members, plan_def_guards)


def run_passes(an, plan: Plan) -> Plan:
    for p in PASSES:
        p(an, plan)
    return plan
