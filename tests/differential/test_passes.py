"""tests/fixtures/passes.rules: the code generator's sharing passes (rulelang/codegen/passes.py)
in lock step on both back ends, faults included (same message and .rules location, state
kept), and the generated module really uses them."""

from __future__ import annotations

import os
import random
import re

import pytest

import rulelang
from rulelang.codegen import compile_program
from tests.conftest import ROOT
from tests.differential.lockstep import snapshot

PASSES = os.path.join(ROOT, "tests", "fixtures", "passes.rules")
PEEL = os.path.join(ROOT, "tests", "fixtures", "peel.rules")
WIDE_PEEL = os.path.join(ROOT, "tests", "fixtures", "widepeel.rules")
AND_TESTS = os.path.join(ROOT, "tests", "fixtures", "andtests.rules")
KEYED = os.path.join(ROOT, "tests", "fixtures", "keyed.rules")
TUPLE_KEYED = os.path.join(ROOT, "tests", "fixtures", "tuplekeyed.rules")
ARG_CHECKS = os.path.join(ROOT, "tests", "fixtures", "argchecks.rules")
DOMAIN_FILTERS = os.path.join(ROOT, "tests", "fixtures", "domainfilters.rules")
FAULTS_TUPLE_KEYED = {"tuplekeyed.rules:30:39", "tuplekeyed.rules:34:41"}
NONE_FACTS = os.path.join(ROOT, "tests", "fixtures", "nonefacts.rules")
PUSHDOWN = os.path.join(ROOT, "tests", "fixtures", "pushdown.rules")
PATH_ROWS = os.path.join(ROOT, "tests", "fixtures", "pathrows.rules")
EMPTY_TESTS = os.path.join(ROOT, "tests", "fixtures", "emptytests.rules")
AGG_HOIST = os.path.join(ROOT, "tests", "fixtures", "agghoist.rules")
PROTO_PATH = os.path.join(ROOT, "tests", "fixtures", "protopath.rules")
LOOP_READS = os.path.join(ROOT, "tests", "fixtures", "loopreads.rules")
BOUNDS = os.path.join(ROOT, "tests", "fixtures", "bounds.rules")
COND_INLINE = os.path.join(ROOT, "tests", "fixtures", "condinline.rules")
DENSE_TABLES = os.path.join(ROOT, "tests", "fixtures", "densetables.rules")
KEPT_SETS = os.path.join(ROOT, "tests", "fixtures", "keptsets.rules")
LOOSE_KEYED = os.path.join(ROOT, "tests", "fixtures", "loosekeyed.rules")
GUARDS = os.path.join(ROOT, "tests", "fixtures", "guards.rules")
RANKS = os.path.join(ROOT, "tests", "fixtures", "ranks.rules")
LISTINGS = os.path.join(ROOT, "tests", "fixtures", "listings.rules")
ACTION_TEXTS = os.path.join(ROOT, "tests", "fixtures", "actiontexts.rules")
LAZY_HOIST = os.path.join(ROOT, "tests", "fixtures", "lazyhoist.rules")
BOUNDED_TWICE = os.path.join(ROOT, "tests", "fixtures", "boundedtwice.rules")
SHARED_TWICE = os.path.join(ROOT, "tests", "fixtures", "sharedtwice.rules")
REUSED_GAP = os.path.join(ROOT, "tests", "fixtures", "reusedgap.rules")
EXTREMES = os.path.join(ROOT, "tests", "fixtures", "extremes.rules")
FIXED_LISTINGS = os.path.join(ROOT, "tests", "fixtures", "fixedlistings.rules")
RANGE_SLICES = os.path.join(ROOT, "tests", "fixtures", "rangeslices.rules")


def _play(players: int, seed: int, path: str = PASSES, new_vars=None,
          params=None, variant=None) -> tuple[int, str | None]:
    """One random game on both back ends in lock step; a rules fault must be the same on both
    and leave both states as they were. Returns (steps, fault location or None). With
    new_vars, now and then both games go on as their clones (which start without kept
    values) or get new values through set_vars (new_vars(rng, players): the same on both; a
    fault there must be the same too and change nothing)."""
    a = rulelang.load(path, variant, params, backend="interpreter").new_game(players)
    b = rulelang.load(path, variant, params, backend="compiled").new_game(players)
    rng = random.Random(seed)
    for step in range(2000):
        assert snapshot(a) == snapshot(b), f"seed {seed} step {step}"
        if a.is_terminal():
            return step, None
        roll = rng.random() if new_vars is not None else 1.0
        if roll < 0.15:
            a, b = a.clone(), b.clone()
        before = a.digest()
        if 0.15 <= roll < 0.25:
            new = new_vars(rng, players)
            errs = _faults((a, b), "set_vars", new)
            assert errs[0] == errs[1], f"seed {seed} step {step}: {errs}"
            if errs[0] is not None:
                assert a.digest() == b.digest() == before
            continue
        k = rng.randrange(a.num_choices())
        errs = _faults((a, b), "apply_index", k)
        assert errs[0] == errs[1], f"seed {seed} step {step}: {errs}"
        if errs[0] is not None:
            assert a.digest() == b.digest() == before
            return step, errs[0][1]
    raise AssertionError("no end")


def _ends(players: int, seeds: int, path: str = PASSES, new_vars=None) -> dict:
    """How the lock-step games of seeds 0..seeds-1 end (_play): fault location, or None for a
    normal end -> number of games."""
    ends: dict = {}
    for seed in range(seeds):
        _steps, where = _play(players, seed, path, new_vars)
        ends[where] = ends.get(where, 0) + 1
    return ends


def _faults(states, method: str, arg) -> list:
    """s.method(arg) for each state s: the (message, location) of the rules fault each one
    raised, or None."""
    out = []
    for s in states:
        try:
            getattr(s, method)(arg)
            out.append(None)
        except rulelang.RulesRuntimeError as exc:
            out.append((exc.message, exc.location))
    return out


@pytest.mark.parametrize("players", [2, 3])
def test_shared_any_in_lockstep(players):
    ends = _ends(players, 40)
    # some games end normally, others at the price table's miss inside can_buy's `any`,
    # raised by the `while` test (the decision after it never evaluates it first), or inside
    # dear() (a kept def: a call that faults keeps nothing)
    assert ends.get(None, 0) > 0
    faults = {os.path.basename(w) for w in ends if w is not None}
    assert faults == {"passes.rules:23:49", "passes.rules:24:26"}  # price(...) in both defs


def test_shared_any_is_used():
    """Both decisions after a test with a matching `any` get its members (plan_shared_any)."""
    src = compile_program(rulelang.check_file(PASSES))
    assert "def legal_buy(s, known=None):" in src
    assert "def legal_take(s, known=None):" in src
    assert "acts = legal_buy(s, _t" in src
    assert "acts = legal_take(s, _t" in src


@pytest.mark.parametrize("first, listed", [
    ("take(B)", ["mine(B)", "pass()"]), ("drop(C)", ["other(C)", "pass()"])])
def test_two_tests_sharing_into_one_decision(first, listed):
    """Two flow tests break out of a loop to the same decision, each with an `any` matching a
    different option of it: the decision's legal function takes the members of one of them
    only (plan_shared_any), so each option is listed once, on both back ends; and in lock
    step."""
    states = [rulelang.load(SHARED_TWICE, backend=b).new_game(2)
              for b in ("interpreter", "compiled")]
    for s in states:
        s.apply(first)
    assert [s.legal_actions() for s in states] == [listed] * 2
    assert _ends(2, 20, SHARED_TWICE) == {None: 20}


def test_reused_any_past_an_option_in_between():
    """boast's `any` is whether play listed a card (plan_reused_any), not whether play or
    wait, listed between them, added a pair: with only A in hand, boast is not legal on
    either back end; with B drawn, it is; and in lock step."""
    states = [rulelang.load(REUSED_GAP, backend=b).new_game(2)
              for b in ("interpreter", "compiled")]
    assert [s.legal_actions() for s in states] == [["wait()", "draw(B)", "draw(C)"]] * 2
    for s in states:
        s.apply("draw(B)")
    assert [s.legal_actions() for s in states] == [
        ["play(B)", "wait()", "boast()", "draw(C)"]] * 2
    assert _ends(2, 20, REUSED_GAP) == {None: 20}


def test_cached_def_is_used_and_forgotten():
    """dear() is kept on the state (plan_cached_defs) and forgotten by writes of `stock` only."""
    src = compile_program(rulelang.check_file(PASSES))
    assert "= s.c_dear" in src
    forgets = [line.strip() for line in src.splitlines() if line.strip() == "s.c_dear = None"]
    # after each write of stock (buy's, sell's), and in set_vars
    stock_writes = [line for line in src.splitlines()
                    if line.strip().startswith("s.v_stock[") and "=" in line]
    assert len(forgets) == len(stock_writes) == 2
    assert "        self.c_dear = None" in src


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_cached_def_forgotten_by_set_vars_and_writes(backend):
    """A kept value does not outlive set_vars, nor a write of `stock`; a write of `cash` keeps
    it (and changes nothing)."""
    s = rulelang.load(PASSES, backend=backend).new_game(2)
    assert s.legal_actions() == ["buy(Wood)", "buy(Stone)", "buy(Gold)", "stop()"]
    nothing = {"Wood": 0, "Stone": 0, "Gold": 0}
    # dear(): 2 + 3 + 3 > 7
    s.set_vars({"stock": {"Wood": 1, "Stone": 2, "Gold": 2},
                "held": [{**nothing, "Wood": 1}, nothing]})
    dear = ["buy(Wood)", "buy(Stone)", "buy(Gold)", "sell(Wood)", "hoard()", "stop()"]
    assert s.legal_actions() == dear
    s.apply("hoard()")  # writes cash
    assert s.legal_actions() == dear
    s.apply("sell(Wood)")  # stock of Wood 0: 1 + 3 + 3, no longer dear
    assert s.legal_actions() == ["buy(Wood)", "buy(Stone)", "buy(Gold)", "stop()"]


@pytest.mark.parametrize("players", [2, 3])
def test_peeled_sets_in_lockstep(players):
    ends = _ends(players, 60, PEEL)
    # games end normally, or at worth(7) in top_worth's `any` (the `if` test), in the walk over
    # the local set (`for c in mine`) or in play's body
    assert ends.get(None, 0) > 0
    faults = {os.path.basename(w) for w in ends if w is not None}
    assert faults == {"peel.rules:22:40", "peel.rules:48:19", "peel.rules:55:21"}


def test_peeled_sets_are_used():
    """The walk over the local set (`for c in mine`) peels the mask (plan_peel_sets); the walks
    over the pile, a set of the state, read the members kept beside its mask
    (plan_kept_members), built by bits when none are kept."""
    src = compile_program(rulelang.check_file(PEEL))
    peels = [line for line in src.splitlines() if line.endswith(".bit_length() - 1")]
    assert len(peels) == 1 and peels[0].strip().startswith("v_c_3 = _t")
    # (pile and p read before the run)
    assert re.search(r"\n    (_t\d+) = (_t\d+)\[_l_p\]\n    if \1 is None:\n"
                     r"        \1 = \2\[_l_p\] = bits\(_v_pile\[_l_p\]\)\n"
                     r"    for v_c_2 in \1:\n", src)
    assert not re.search(r"for v_\w+ in bits\(", src)


@pytest.mark.parametrize("players", [2, 3])
def test_peeled_wide_state_sets_in_lockstep(players):
    ends = _ends(players, 60, WIDE_PEEL)
    # games end normally, or at worth(7) in top_worth's `any` (the `if` test), in the walk over
    # the hand (`for c in hand[p]`) or in play's body
    assert ends.get(None, 0) > 20
    faults = {os.path.basename(w) for w in ends if w is not None}
    assert faults == {"widepeel.rules:24:40", "widepeel.rules:43:19", "widepeel.rules:58:21"}


def test_peeled_wide_state_sets_are_used():
    """Walks over an entry of an array of sets of a grid of 80 cells peel the mask
    (plan_peel_sets): the `for` over the hand, the aggregates of high and top_worth, the
    domain of play's parameter; the walk over the board, no array entry, keeps bits."""
    src = compile_program(rulelang.check_file(WIDE_PEEL))
    peels = [line.strip().split(" = ")[0] for line in src.splitlines()
             if line.endswith(".bit_length() - 1")]
    assert peels == ["v_c_2", "v_high__c", "v_top_worth__c", "v_c_4"]
    assert "for v_c_3 in bits(s.v_board):" in src
    assert "in bits(s.v_hand" not in src and "in bits(_v_hand" not in src


CARDS = "ABCDEFGHIJKL"


def _new_loose_keyed(rng, n):
    return {"owner": {c: (rng.randrange(n) if rng.random() < 0.3 else None) for c in CARDS},
            "closed": {c: rng.random() < 0.2 for c in CARDS},
            "stock": {c: rng.randrange(4) for c in CARDS}, "bonus": rng.randrange(5)}


@pytest.mark.parametrize("players", [2, 3])
def test_loose_keyed_defs_in_lockstep(players):
    ends = _ends(players, 80, LOOSE_KEYED, _new_loose_keyed)
    # games end normally, or at worth(7) inside risky's kept walk (rest's body or the flow's if)
    assert ends.get(None, 0) > 30
    assert {os.path.basename(w) for w in ends if w is not None} == {"loosekeyed.rules:27:35"}
    assert sum(n for w, n in ends.items() if w is not None) > 5


def test_loose_keyed_defs_are_kept_and_forgotten():
    """mine, wealth and risky walk every card (more than 8) and read the state at the walk's
    card, through owns or as a whole: they are kept per player (plan_keyed_defs) and every
    value is forgotten at any write of what each reads, and only of that (closed: mine;
    bonus: wealth; stock: wealth and risky; owner: all three). Automobile's own_spaces,
    car_spaces, cars_of and holdings are kept so; Acquire's dead (over a tile's adjacent
    chains, no walk of a whole enum) is not."""
    from rulelang.codegen.emitter import Emitter
    from rulelang.consts import Constants
    from rulelang.lower import lower

    def keyed(path):
        p = rulelang.check_file(path)
        return Emitter(p, lower(p), Constants(p)).plan.keyed_defs

    assert {n: kd.deps for n, kd in keyed(LOOSE_KEYED).items()} == {
        "mine": {"owner": (-1, True, False), "closed": (-1, True, False)},
        "wealth": {"stock": (-1, True, False), "owner": (-1, True, False),
                   "bonus": (-1, True, False)},
        "risky": {"stock": (-1, True, False), "owner": (-1, True, False)}}
    src = compile_program(rulelang.check_file(LOOSE_KEYED))

    def forgets(write):
        at = src.index(write)
        tail = src[at:].split("\n")[1:5]
        return {m.group(1) for line in tail if (m := re.fullmatch(r" +s\.c_(\w+) = None", line))}
    assert forgets("s.v_owner[s.l_c] = _l_p  # rules:34\n") == {"mine", "wealth", "risky"}
    assert forgets("s.v_closed[s.l_c_2] = True  # rules:38\n") == {"mine"}
    assert forgets("fault_int_limit(LIMIT_INT, AT_43_9)\n") == {"wealth"}  # bonus += 1
    assert forgets("fault_int_limit(LIMIT_INT, AT_42_9)\n") == {"wealth", "risky"}  # stock
    automobile = keyed(os.path.join(ROOT, "rules", "automobile.rules"))
    assert {"own_spaces", "car_spaces", "cars_of", "holdings"} <= set(automobile)
    assert "dead" not in keyed(os.path.join(ROOT, "rules", "acquire.rules"))


CELLS = [f"{c}{r}" for r in "ABC" for c in range(1, 6)]
KINDS = ["Red", "Blue", "Green", "Gold"]


def _new_guards(rng, n):
    return {"owner": {t: (rng.choice(KINDS) if rng.random() < 0.4 else None) for t in CELLS},
            "level": {k: rng.randrange(5) for k in KINDS},
            "spots": [t for t in CELLS if rng.random() < 0.5],
            "gone": [t for t in CELLS if rng.random() < 0.2] or ["3B"]}  # (a draw may wait)


@pytest.mark.parametrize("players", [2, 3])
def test_def_guards_in_lockstep(players):
    ends = _ends(players, 80, GUARDS, _new_guards)
    # games end normally, or at the none passed to crowded in round 17 (no spot in column 5),
    # which faults whatever crowded's guard says
    assert ends.get(None, 0) > 40
    faults = {os.path.basename(w): n for w, n in ends.items() if w is not None}
    assert set(faults) == {"guards.rules:81:33"} and faults["guards.rules:81:33"] >= 10


def test_def_guards_are_tested_and_forgotten():
    """crowded, hot_near and lonely count or test the kinds next to a cell: the count over all
    kinds is kept (g_<def>) and forgotten at every write of level, and only there; opening
    implies `all(level[k] > 0 for k in Kind)`. The claim listing tests its two guards once
    before its loop and nothing for a spot while neither holds; the flow's `for t in spots {
    if crowded(t) ... }` runs only while crowded's guard holds. Acquire's dead (two safe chains)
    and founds_eighth (every chain on the board) are guarded so; a def whose guard would be
    its own first conjunct (Automobile's can_ford) is not."""
    from rulelang.codegen.emitter import Emitter
    from rulelang.consts import Constants
    from rulelang.lower import lower

    def guards(path):
        p = rulelang.check_file(path)
        return Emitter(p, lower(p), Constants(p)).plan.def_guards

    g = guards(GUARDS)
    assert {n: (x.least, x.enum, sorted(x.reads)) for n, x in g.items() if x.agg} == {
        "crowded": (2, "Kind", ["level"]), "hot_near": (1, "Kind", ["level"]),
        "lonely": (1, "Kind", ["level"])}
    assert set(g) == {"crowded", "hot_near", "lonely", "opening"} and g["opening"].cond
    acq = guards(os.path.join(ROOT, "rules", "acquire.rules"))
    assert set(acq) == {"dead", "founds_eighth"} and acq["dead"].least == 2
    assert "can_ford" not in guards(os.path.join(ROOT, "rules", "automobile.rules"))

    src = compile_program(rulelang.check_file(GUARDS))
    lines = src.splitlines()
    forgets = [i for i, x in enumerate(lines) if x.strip() == "s.g_crowded = None"]
    level_writes = [i for i, x in enumerate(lines)
                    if re.match(r" +s\.v_level\[.*\] (= _t\d+ = |[-+]= )", x)]
    # after each write of level (heat, cool, the flow's loop, in each flow function that
    # copies it), and in set_vars
    assert len(forgets) == len(level_writes) >= 3
    assert "        self.g_crowded = None" in lines
    assert all(any(w < f <= w + 4 for f in forgets) for w in level_writes)
    assert not any("s.g_" in x for x in lines if x.strip().startswith("s.v_owner["))
    claim = src[src.index("for v_t_3 in "):src.index("out.append(ARGS_settle_claim")]
    assert re.search(r"\n +if _t\d+ or _t\d+:\n", claim)
    flow_loop = re.search(r"\n( +)if (_t\d+):\n(?:\1    .*\n)*?\1    for v_t_\d+ in ", src)
    assert flow_loop is not None


def _new_kept_sets(rng, n):
    def some(p):
        return [c for c in CARDS if rng.random() < p]
    return {"hand": [some(0.3) for _ in range(n)], "board": some(0.3),
            "stock": {"Red": some(0.2), "Blue": some(0.2)}}


@pytest.mark.parametrize("players", [2, 3])
def test_kept_sets_in_lockstep(players):
    ends = _ends(players, 80, KEPT_SETS, _new_kept_sets)
    # games end normally, or at worth(7) inside risky's `any` over the hand (the `if` test) or
    # in play's body
    assert ends.get(None, 0) > 15
    faults = {os.path.basename(w) for w in ends if w is not None}
    assert faults == {"keptsets.rules:31:36", "keptsets.rules:73:21"}


@pytest.mark.parametrize("players", [2, 3])
def test_kept_sets_of_clones_whose_originals_play_on(players):
    """A clone copies the list of kept hands and stocks (their tuples are never changed, so
    they are shared): the original and the clone both play on, each with its own sets, in
    lock step with the interpreter's clone and original."""
    games = [rulelang.load(KEPT_SETS, backend=be) for be in ("interpreter", "compiled")]

    def step(a, b, rng):
        k = rng.randrange(a.num_choices())
        errs = _faults((a, b), "apply_index", k)
        assert errs[0] == errs[1]
        return errs[0] is None

    played = 0
    for seed in range(40):
        rng = random.Random(seed)
        a, b = (g.new_game(players) for g in games)
        going = True
        while going and not a.is_terminal():
            assert snapshot(a) == snapshot(b), (seed, played)
            if rng.random() < 0.2:
                ca, cb = a.clone(), b.clone()
                for _ in range(6):
                    if a.is_terminal() or not step(a, b, rng):
                        break
                    assert snapshot(a) == snapshot(b), (seed, played)
                a, b = ca, cb
            going = step(a, b, rng)
            played += 1
    assert played > 500


def test_kept_sets_are_used_updated_and_forgotten():
    """Every walk over hand, board, stock and marks reads the tuple kept beside the mask; an add
    or a remove of a local at a local (or member) index inserts or deletes it (an add of a
    member already there changes nothing), a write at another index forgets every kept hand, a
    whole assignment forgets the entry or the set; clones copy the list, set_vars forgets it.
    The wider sets of widepeel.rules and Acquire (80 and 108 cells) are not kept (above)."""
    src = compile_program(rulelang.check_file(KEPT_SETS))
    assert not re.search(r"for v_\w+ in bits\(", src)
    assert "= bits(_v_hand[_l_p])" in src and "= s.w_board = bits(s.v_board)" in src
    assert "= bits(s.v_stock[0])" in src and "= bits(_v_stock[1])" in src
    draw = src.split("def step_draw_then(s):")[1].split("\ndef ")[0]
    inserts = re.findall(r"\n( +)if (_t\d+) == len\((_t\d+)\) or \3\[\2\] != s\.l_c:\n\1    "
                         r"(\S+) = \3\[:\2\] \+ \(s\.l_c,\) \+ \3\[\2:\]\n", draw)
    # add c to hand[p] (twice: the second finds c there) and to stock[Red]
    assert [re.sub(r"_t\d+", "L", w) for _pad, _k, _t, w in inserts] == ["L[s.l_p]"] * 2 + ["L[0]"]
    assert re.search(r"\n +s\.w_hand = None\n", draw)  # add c to hand[next_seat(p)]
    assert re.search(r"\n( +)(_t\d+)\[s\.l_p\] = (_t\d+)\[:(_t\d+)\] \+ \3\[\4 \+ 1:\]\n", src)
    assert re.search(r"\n +(_t\d+)\[s\.l_p\] = None\n", src)  # hand[p] = {...}
    assert re.search(r"\n +(_t\d+)\[0\] = None\n", src)  # stock[Red] = {}
    assert re.search(r"\n +s\.w_board = None\n", src)  # board = low_board()
    assert re.search(r"\n +s\.w_marks = (_t\d+)\[:(_t\d+)\] \+ \(v_x_\d+,\) \+ \1\[\2:\]\n", src)
    # take(q, c in hand[q]): the tuple of q's hand is fetched inside the loop over q
    take = src.split("def legal_play(s):")[1].split("\ndef ")[0]
    assert re.search(r"\n    for v_q in s\._players:\n(        .*\n)+        (_t\d+) = (_t\d+)"
                     r"\[v_q\]\n", take)
    lines = [line.strip() for line in src.splitlines()]
    assert "c.w_hand = None if (w := self.w_hand) is None else w[:]" in lines
    assert "c.w_board = self.w_board" in lines
    assert "self.w_hand = None" in lines and "self.w_stock = None" in lines  # set_vars


def test_one_bit_masks_of_wide_enums_come_from_a_table():
    """A member of a set of an enum of more than 8 members is added, removed and tested with
    its one-bit mask read from BIT_<enum> (made once; 1 << x of 9 or more makes a new int each
    time), a member of a smaller enum with 1 << x: Acquire's tiles and its chains, the cards of
    keptsets.rules (`c in hand[p]` in count, in lock step above)."""
    acq = compile_program(rulelang.check_file(os.path.join(ROOT, "rules", "acquire.rules")))
    assert "\nBIT_Tile = tuple(1 << i for i in range(108))\n" in acq and "BIT_Chain" not in acq
    assert "    s.v_board |= BIT_Tile[_l_place_tile__t]  # rules:209\n" in acq
    assert not re.search(r"1 << (_l_place_tile__t|s\.l_draw__t|_l_draw__t)\b", acq)
    assert re.search(r"_t\d+ \|= 1 << _v_chain_of\[v_adjacent_chains__n\]", acq)  # (7 chains)
    src = compile_program(rulelang.check_file(KEPT_SETS))
    assert re.search(r"if \(\(BIT_Card\[v_c_\d+\] & _t\d+\) != 0\):", src)
    assert "s.v_hand[_l_p] |= BIT_Card[_l_c]  # rules:40\n" in src


def test_acquire_hands_are_peeled():
    """Acquire's hands (sets of 108 tiles, one per player) are walked by peeling, its board
    (one set) through bits: neither is kept as a tuple (more than WIDE_SET members, measured
    slower kept, plan_kept_members)."""
    src = compile_program(rulelang.check_file(os.path.join(ROOT, "rules", "acquire.rules")))
    assert "_v_hand" in src and "in bits(_v_hand" not in src and "in bits(s.v_hand" not in src
    assert "s.w_" not in src and "bisect" not in src
    assert "for v_merger__x in bits(s.v_board):\n" in src


@pytest.mark.parametrize("players", [2, 3])
def test_and_tests_as_nested_ifs_in_lockstep(players):
    ends = _ends(players, 60, AND_TESTS)
    # games end normally, or at worth(9) inside price, asked in the nested tests (or in buy)
    assert ends.get(None, 0) > 40
    assert {os.path.basename(w) for w in ends if w is not None} == {"andtests.rules:20:28"}
    assert sum(n for w, n in ends.items() if w is not None) > 3


def test_and_tests_are_nested_ifs():
    """An aggregate's `and` element whose right operand needs statements (price, kept per
    gem) is tested as nested ifs (ExprPrinter.test), with no temporary holding the `and`: in
    the `any` shared with the decision, the `count` and the `any` of the flow tests."""
    src = compile_program(rulelang.check_file(AND_TESTS))
    lines = [line.strip() for line in src.splitlines()]
    # (coins[p] itself is read before the loop: ExprPrinter.try_hoist in an aggregate)
    for left, right in (("_v_stock[v_g] > 0", r"if \(_t\d+ >= _t\d+\):"),
                        ("_v_stock[v_g_4] > 1", r"if \(_t\d+ > 4\):"),
                        ("_v_stock[v_g_5] > 2", r"if \(_t\d+ < 8\):")):
        at = lines.index(f"if ({left}):")
        # the kept list itself was fetched before the loop (ExprPrinter._keyed_call)
        assert re.fullmatch(r"_t\d+ = _t\d+\[v_g(_\d)?\]", lines[at + 1])
        assert re.fullmatch(right, next(x for x in lines[at + 1:] if x.startswith("if (")))
    assert not any(re.fullmatch(r"_t\d+ = \(\(_v_stock\[.*\) and .*", line) for line in lines)
    assert "if ((_v_size[v_can_buy__c] > 0) and (_v_bank[v_can_buy__c] > 0)):" in compile_program(
        rulelang.check_file(os.path.join(ROOT, "rules", "acquire.rules")))


@pytest.mark.parametrize("players", [2, 3])
def test_keyed_defs_in_lockstep(players):
    ends = _ends(players, 60, KEYED)
    # games end normally, or at bonus(6) inside boost (in spread's `when`, listing the next
    # decision, or in pick's body) or inside cost (pick's body)
    assert ends.get(None, 0) > 0
    faults = {os.path.basename(w) for w in ends if w is not None}
    assert faults == {"keyed.rules:23:29", "keyed.rules:25:28"}
    assert sum(n for w, n in ends.items() if w is not None) > 5


def test_keyed_defs_are_used_and_forgotten():
    """heat, boost and cost are kept per cell (plan_keyed_defs); a write at a local index
    forgets that cell (and its neighbours for the defs reading them), any other write of mark
    or tags forgets them all."""
    src = compile_program(rulelang.check_file(KEYED))
    for name in ("heat", "boost", "cost"):
        assert f"s.c_{name} = [None] * 12" in src
    lines = [line.strip() for line in src.splitlines()]
    forgets = [line for line in lines if re.fullmatch(r"_t\d+\[s\.l_c\] = None", line)]
    nb_loops = [line for line in lines
                if re.fullmatch(r"for _t\d+ in NEIGHBORS_Cell\[s\.l_c\]:", line)]
    # pick's mark[c] (a flow local): that cell in heat, boost and cost, its neighbours in heat
    # and boost; add c to tags[c]: that cell in heat only (boost and cost do not read tags)
    assert len(forgets) == 4 and len(nb_loops) == 2
    # spread's mark[n] in a loop: targeted; mark[neighbors(c)[0]] and `mark = ...`: all
    assert sum(1 for line in lines
               if re.fullmatch(r"for _t\d+ in NEIGHBORS_Cell\[v_n\]:", line)) == 2
    assert lines.count("s.c_heat = None") == 2 and lines.count("s.c_cost = None") == 2
    assert "self.c_heat = None" in lines  # set_vars
    assert "c.c_heat = None" in lines  # a clone starts without the list


@pytest.mark.parametrize("players", [2, 3])
def test_tuple_keyed_defs_in_lockstep(players):
    ends = _ends(players, 80, TUPLE_KEYED, lambda rng, n: {
        "stock": {k: rng.randrange(4) for k in ("Red", "Blue", "Green")}})
    # games end normally, or at bonus(6) inside rate (take's or restock's `when`, listing
    # the next decision, or their bodies) or inside owes (lend's `when` or body)
    assert ends.get(None, 0) > 0
    faults = {os.path.basename(w) for w in ends if w is not None}
    assert faults == FAULTS_TUPLE_KEYED
    assert sum(n for w, n in ends.items() if w is not None) > 5


def test_tuple_keyed_defs_are_used_and_forgotten():
    """hoard, rate, near, heat and owes are kept in one list per def, indexed by the
    mixed-radix position of their arguments (plan_keyed_defs); a write forgets a run of the
    list (the first parameter's argument), every n-th value (the last parameter's), the runs
    of a cell and its neighbours, or every value (the middle parameter's, a parameter pair's,
    an index that is not a plain local, a whole variable). fits, expanded in take's `when`,
    is not kept."""
    src = compile_program(rulelang.check_file(TUPLE_KEYED))
    for name, size in (("hoard", 9), ("rate", 9), ("near", 18), ("heat", 36), ("owes", 9)):
        assert f"s.c_{name} = [None] * {size}" in src
        assert f"        self.c_{name} = None" in src  # set_vars
        assert f"        c.c_{name} = None" in src  # a clone starts without the list
    assert "c_fits" not in src
    lines = [line.strip() for line in src.splitlines()]

    def count(pattern: str) -> int:
        return sum(1 for line in lines if re.fullmatch(pattern, line))
    # take's held[p][k] and reset's held[p]: p's run in hoard and rate
    assert count(r"_t\d+\[s\.l_p \* 3:s\.l_p \* 3 \+ 3\] = \[None\] \* 3") == 4
    # restock's stock[k] and refill's loop over stock: every third value of rate and near
    assert count(r"_t\d+\[(s\.l_k_2|v_k_3)::3\] = \[None\] \* 3") == 2
    assert count(r"_t\d+\[(s\.l_k_2|v_k_3)::3\] = \[None\] \* 6") == 2
    # paint's mark[c]: c's run in near and its neighbours'; heat (mark at its middle) all
    assert count(r"_t\d+\[s\.l_c_2 \* 3:s\.l_c_2 \* 3 \+ 3\] = \[None\] \* 3") == 1
    assert count(r"for _t\d+ in NEIGHBORS_Cell\[s\.l_c_2\]:") == 1
    # writes of pts[p] (pts[q]): p's run of heat (12 = 6 cells x 2)
    assert count(r"_t\d+\[s\.l_(p|q) \* 12:s\.l_(p|q) \* 12 \+ 12\] = \[None\] \* 12") > 4
    # lend's debt[p][q] (owes reads debt at both parameters), paint's and reset's mark, and
    # refill's held[players[0]][Blue] forget every value
    assert lines.count("s.c_owes = None") == 1
    assert lines.count("s.c_heat = None") == 2
    assert lines.count("s.c_hoard = None") == 1
    assert count(r"_t\d+ = _l_p \* 12 \+ v_c_4 \* 2 \+ 1") == 1  # a constant folded


def test_keyed_defs_on_power_grid():
    """Power Grid's store(p, k) and unit_price(p, r) are kept per argument pair; a plant
    bought forgets p's run of store; fits_with, whose five calls of store count as calls, is
    expanded in the buy listing (plan_inlining), where each asks the kept list."""
    src = compile_program(rulelang.check_file(os.path.join(ROOT, "rules", "powergrid.rules")))
    assert "s.c_store = [None] * 42" in src and "s.c_unit_price = [None] * 24" in src
    assert re.search(r"_t\d+\[s\.l_bidding__leader \* 7:s\.l_bidding__leader \* 7 \+ 7\] "
                     r"= \[None\] \* 7", src)
    legal = src[src.index("def legal_buy(s):"):src.index("def text_buy(")]
    kept = re.search(r"(_t\d+) = s\.c_store\n", legal).group(1)
    # five asks, each a read and (when missing) a store
    assert "def_fits_with(" not in legal and legal.count(f"{kept}[_t") == 10
    # store(p, k) reads only p and a constant: its five values are asked once, before the
    # loop over the resources (ExprPrinter.try_hoist through expanded defs)
    loop = legal.index("for v_buy_resources__r in ALL_Res:")
    assert [legal.index(f"_l_buy_resources__p * 7{k}\n") < loop
            for k in ("", " + 1", " + 2", " + 3", " + 4")] == [True] * 5
    assert "c_may_take" not in src  # (expanded in the auction's `when`)


@pytest.mark.parametrize("players", [2, 3])
def test_domain_filters_in_lockstep(players):
    ends = _ends(players, 80, DOMAIN_FILTERS, lambda rng, n: {
        "banned": [g for g in ("Ruby", "Jade", "Opal", "Onyx") if rng.random() < 0.3],
        "bonus": [rng.randrange(3) for _ in range(n)]})
    # games end normally, or at worth(13) in swap's or take's `when` (listing the next
    # decision), or at players[2] in give's (two players only)
    assert ends.get(None, 0) > 0
    faults = {os.path.basename(w) for w in ends if w is not None}
    assert faults == ({"domainfilters.rules:37:33", "domainfilters.rules:32:66",
                       "domainfilters.rules:48:49"} if players == 2
                      else {"domainfilters.rules:37:33"})


def test_domain_filters_are_used():
    """take walks open minus mine[p] and banned (its `g in open` dropped), trade folds one test
    per level, swap and give keep their tests (plan_domain_filters)."""
    src = compile_program(rulelang.check_file(DOMAIN_FILTERS))
    legal = src[src.index("def legal_take(s):"):src.index("def text_take(")]
    lines = [line.strip() for line in legal.splitlines()]
    assert "for v_g in SMALL_BITS[_v_open & ~_v_mine[_l_p] & ~_v_banned]:" in lines
    assert "_v_open) == 0)" not in legal
    assert "for v_g_2 in SMALL_BITS[_v_open]:" in lines
    assert "if (((1 << v_g_2) & _t2) != 0):" in lines
    assert "for v_g_3 in SMALL_BITS[_v_mine[_l_p] & ~(_v_mine[((_l_p) + 1) % s.n])]:" in lines
    assert "for v_h in SMALL_BITS[_v_open & ~_v_links[v_g_3]]:" in lines
    assert "for v_g_4 in SMALL_BITS[_v_mine[_l_p]]:" in lines
    assert "if (((1 << v_g_4) & _v_links[v_g_4]) != 0):" in lines


@pytest.mark.parametrize("players", [2, 3])
def test_none_facts_in_lockstep(players):
    ends = _ends(players, 60, NONE_FACTS)
    # games end normally, or at risk's `count[pick]` with no pick (after an `or` of
    # `pick != none`: the check stays, and the fault is the interpreter's)
    assert ends.get(None, 0) > 0
    assert {os.path.basename(w) for w in ends if w is not None} == {"nonefacts.rules:33:57"}


def test_none_facts_are_used():
    """The none checks of `pick` go where a test before them found it not none, and stay
    elsewhere (after an `or`, in an option's body)."""
    src = compile_program(rulelang.check_file(NONE_FACTS))
    assert "(_v_pick is not None) and (_v_count[_v_pick] < 3)" in src  # drop's when
    assert "((_v_pick is None) or (_v_count[_v_pick] > 0))" in src  # trim's when
    # the first statement of `if pick != none ...`
    assert "s.v_count[_v_pick] = _t1 = s.v_count[_v_pick] - 2" in src
    assert "(_v_count[not_none(_v_pick, AT_33_57)] > 5)" in src  # risk's: the check stays
    assert "s.v_count[not_none(s.v_pick, AT_24_15)] += 1" in src  # drop's body: not known


@pytest.mark.parametrize("players", [2, 3])
def test_pushdown_in_lockstep(players):
    ends = _ends(players, 60, PUSHDOWN)
    # games end normally, or at reach's worth(7) (in the domain's filter: the copy of reach in
    # can_take is dropped), at the last part of can_take (tested after the parts moved out of
    # the inner loops), or at the check of price's value in grow (k there is `grown`)
    assert ends.get(None, 0) > 0
    faults = {os.path.basename(w) for w in ends if w is not None}
    assert faults == {"pushdown.rules:25:41", "pushdown.rules:32:36", "pushdown.rules:53:20"}


def test_pushdown_is_used():
    """can_take's parts go where what they read is bound (c.v != 4 once per card, after
    cheap, which the range of k makes safe), open_for and reach (the domain's filter) are not
    tested again, and price's value is checked in grow only."""
    src = compile_program(rulelang.check_file(PUSHDOWN))
    legal = src[src.index("def legal_take(s):"):src.index("def text_take(")]
    lines = [line.strip() for line in legal.splitlines()]
    card = lines.index("for v_c in SMALL_BITS[_t2]:")
    assert lines[card + 1:card + 4] == ["if (FIELD_Card_v[v_c] == 4):", "continue",
                                        "for v_k in range(0, 3, 1):"]
    assert legal.count("_v_closed") == 2  # the domain's filter only
    assert legal.count("AT_25_41") == 1
    assert "bounded(" not in legal
    assert "(_v_cash[_l_p] * 100000) >= _t" in legal
    take = src[src.index("def step_take_then_take(s):"):src.index("def step_take_then_skip(")]
    grow = src[src.index("def step_grow_then_grow(s):"):src.index("def step_grow_then_rest(")]
    assert "s.l_paid = (((_l_k * FIELD_Card_v[_l_c]) * 100000) + (3 if s.l_extra else 0))" \
        in take and "s.l_paid <=" not in take
    assert "if not LIMIT_INT_MIN <= s.l_gain <= LIMIT_INT:" in grow


def test_pushdown_on_automobile():
    """Automobile's build(m in build_spaces(p), k: int in 0..2, parts: bool) when
    can_build(p, m, k, parts): the parts of can_build reading m only are tested once per m,
    the R&D reach (build_spaces' filter) is not tested again, and build_cost's value needs no
    check (k in 0..2)."""
    src = compile_program(rulelang.check_file(os.path.join(ROOT, "rules", "automobile.rules")))
    legal = src[src.index("def legal_build(s):"):src.index("def text_build(")]
    build = legal[legal.index("for v_action_turn__k in"):legal.index("out.append((0,")]
    assert "bounded(" not in build and "_v_frontier" not in build and "_v_closed" not in build
    assert "if ((_v_factories[v_action_turn__m] + v_action_turn__k) > 3):" in build


def test_a_kept_def_in_a_when_is_asked_not_expanded():
    """Acquire's `declare_end() when not ending and can_end()`: can_end() is kept on the state
    (plan_cached_defs), so plan_options does not split the `when` through its body; every
    listing of place and buy asks the kept value (expanded, it was computed again at
    each listing: 7% more instructions on 4p Acquire)."""
    src = compile_program(rulelang.check_file(os.path.join(ROOT, "rules", "acquire.rules")))
    for decision in ("place", "buy"):
        start = src.index(f"def legal_{decision}(s")
        legal = src[start:src.index("def text_", start)]
        assert "= s.c_can_end" in legal, decision
        assert legal.count("_v_size[0] >= 41 or _v_size[1] >= 41") == 1, decision


@pytest.mark.parametrize("players", [2, 3])
def test_path_rows_in_lockstep(players):
    ends = _ends(players, 60, PATH_ROWS)
    # games end normally, or at link's fail (F cut off once E is shut), raised by the legal
    # listing into which link is expanded
    assert ends.get(None, 0) > 10
    assert {os.path.basename(w) for w in ends if w is not None} == {"pathrows.rules:26:5"}


def test_path_rows_are_used():
    """link (a def with a fail) is expanded into claim's listing; the distances from held[p]
    are fetched once per listing (plan_path_rows), each city reads its entry."""
    src = compile_program(rulelang.check_file(PATH_ROWS))
    legal = src[src.index("def legal_claim(s):"):src.index("def text_claim(")]
    lines = [line.strip() for line in legal.splitlines()]
    # (the cities held are not walked: plan_domain_filters)
    loop = lines.index("for v_c in SMALL_BITS[_v_open & ~_v_held[_l_p]]:")
    row = next(line.split(" = ")[0] for line in lines[:loop]
               if line.endswith(" = path_row(GRAPH_Roads, _v_held[_l_p], _v_open)"))
    assert f"v_link__cost = {row}.get(v_c)" in lines[loop:]
    # link's `len(held[p]) == 0` reads only p: tested once, before the loop
    empty = next(line.split(" = ")[0] for line in lines[:loop]
                 if line.endswith(" = (_v_held[_l_p] == 0)"))
    assert f"if {empty}:" in lines[loop:] and "== 0" not in legal[legal.index("for v_c "):]
    assert "raise RulesRuntimeError('no road to the city', AT_26_5)" in lines[loop:]
    assert "def_link(" not in legal and "path_cost(" not in legal
    # after `if cost == none { fail ... }`, cost is not none: no check where it is returned
    assert "not_none(v_link__cost" not in src and "_t4 = v_link__cost" in lines[loop:]


def test_path_rows_on_power_grid():
    """Power Grid's build(c in in_play) when can_build(p, c) and house_cost(p, c) <= cash[p]:
    house_cost and connection are expanded, the distances from network[p] fetched once."""
    src = compile_program(rulelang.check_file(os.path.join(ROOT, "rules", "powergrid.rules")))
    legal = src[src.index("def legal_build(s):"):src.index("def text_build(")]
    assert legal.count("path_row(") == 1 and "path_cost(" not in legal
    assert "def_house_cost(" not in legal and "def_connection(" not in legal


@pytest.mark.parametrize("players", [2, 3])
def test_empty_tests_and_item_updates_in_lockstep(players):
    ends = _ends(players, 60, EMPTY_TESTS)
    # games end normally, at len(spare) of a none spare in take's `when`, or at the int limit
    # in boost's product
    assert ends.get(None, 0) > 5
    faults = {os.path.basename(w) for w in ends if w is not None}
    assert faults == {"emptytests.rules:26:61", "emptytests.rules:40:19"}
    assert sum(n for w, n in ends.items() if w is not None) > 5


def test_empty_tests_and_item_updates_are_used():
    """len(S) against 0 or 1 tests S's mask against 0, whichever side the literal is on; an
    array item updated by `+=`/`-=` is checked in a temporary, on one side for a literal."""
    src = compile_program(rulelang.check_file(EMPTY_TESTS))
    lines = [line.strip() for line in src.splitlines()]
    assert "if ((s.v_rounds < 14) and (s.v_bag != 0)):" in lines
    assert "if (_v_held[_l_p] != 0) and (_v_held[_l_p] != 0) and (_v_bag != 0):" in lines
    assert "if (not (_t1 or (not_none(_v_spare, AT_26_61) == 0))):" in lines
    assert "if (_v_held[_l_p] == 0):  # rules:35" in lines
    # (take's `remove g from bag` needs no temporary: g is one of bag's members)
    at = lines.index("s.v_pts[_l_p] = _t1 = s.v_pts[_l_p] + 1  # rules:29")
    assert lines[at + 1] == "if not _t1 <= LIMIT_INT:"
    at = lines.index("s.v_pts[_l_p] = _t1 = s.v_pts[_l_p] - 2  # rules:42")
    assert lines[at + 1] == "if not LIMIT_INT_MIN <= _t1:"
    at = lines.index("s.v_pts[_l_p] = _t1 = s.v_pts[_l_p] + _v_grow[_l_p]  # rules:41")
    assert lines[at + 1] == "if not LIMIT_INT_MIN <= _t1 <= LIMIT_INT:"
    assert ".bit_count() > 0" not in src and ".bit_count() == 0" not in src


def test_acquire_fetches_kept_lists_once():
    """The list of adjacent_chains' kept values (plan_keyed_defs) is fetched once before the
    loop over the hand in legal_place, and once before stuck()'s loops, not per tile."""
    src = compile_program(rulelang.check_file(os.path.join(ROOT, "rules", "acquire.rules")))
    body = src.split("def legal_place(s):")[1].split("\ndef ")[0]
    assert body.count("= s.c_adjacent_chains\n") == 1
    assert body.index("= s.c_adjacent_chains\n") < body.index("while ")
    assert ".bit_count() > 0" not in src


@pytest.mark.parametrize("players", [2, 3])
def test_aggregate_hoisting_in_lockstep(players):
    ends = _ends(players, 60, AGG_HOIST)
    # games end normally, or at worth(7) inside rich's `any` (the flow's while test)
    assert ends.get(None, 0) > 5
    assert {os.path.basename(w) for w in ends if w is not None} == {"agghoist.rules:19:63"}
    assert sum(n for w, n in ends.items() if w is not None) > 5


def test_aggregate_hoisting_is_used():
    """coins[p] * 2, coins[p] and coins[p] + rounds (p: rich's and spare's parameter, bound to
    the flow's p) are computed before the aggregates' loops; the parts reading g stay inside."""
    src = compile_program(rulelang.check_file(AGG_HOIST))
    body = src.split("def step_start(s):")[1].split("\ndef ")[0]
    lines = [line.strip() for line in body.splitlines()]
    loop = lines.index("for v_rich__g in ALL_Gem:")
    for code in ("(_v_coins[_l_p] * 2)", "_v_coins[_l_p]", "(_v_coins[_l_p] + _v_rounds)"):
        assert any(re.fullmatch(r"_t\d+ = " + re.escape(code), x) for x in lines[:loop]), code
    assert "_v_coins" not in " ".join(lines[loop:])
    acq = compile_program(rulelang.check_file(os.path.join(ROOT, "rules", "acquire.rules")))
    body = acq.split("def step_turn_while_2(s):")[1].split("\ndef ")[0]
    assert body.index("= _v_cash[_l_turn__p]\n") < body.index("for v_can_buy__c in ALL_Chain:")


@pytest.mark.parametrize("players", [2, 3])
def test_walks_kept_once_reached_in_lockstep(players):
    ends = _ends(players, 80, LAZY_HOIST)
    # games end normally, or at worth() inside deep(g) (grow's listing) or inside rare(p) (the
    # flow's while test, or fundable): where the kept walk is first reached
    assert ends.get(None, 0) > 20
    faults = {os.path.basename(w): n for w, n in ends.items() if w is not None}
    assert set(faults) == {"lazyhoist.rules:21:37", "lazyhoist.rules:23:34"}
    assert min(faults.values()) >= 4


def test_walks_kept_once_reached_are_used():
    """rare(p) in fundable's `any` and in the flow's `while` test, deep(g) in grow's `any`: a
    temporary set to None before the loop and computed under `if ... is None:` inside it."""
    src = compile_program(rulelang.check_file(LAZY_HOIST))

    def body(name: str) -> list[str]:
        return src.split(f"def {name}(")[1].split("\ndef ")[0].splitlines()

    for fn, inner in (("def_fundable", "for v_rare__x in ALL_Gem:"),
                      ("step_flow_while", "for v_rare__x in ALL_Gem:"),
                      ("legal_grow", "for v_deep__y in ALL_Gem:")):
        lines = body(fn)
        at = [i for i, x in enumerate(lines) if x.strip() == inner]
        assert len(at) == 1, fn
        guard = lines[at[0] - 2].strip()
        t = re.fullmatch(r"if (_t\d+) is None:", guard)
        assert t is not None, (fn, guard)
        loops = [i for i, x in enumerate(lines) if x.strip().startswith("for ")]
        sets = [i for i, x in enumerate(lines) if x.strip() == f"{t.group(1)} = None"]
        assert len(sets) == 1, fn
        if fn == "legal_grow":  # deep(g) reads the option's g: set per candidate
            assert loops[0] < sets[0] < loops[1], fn
        else:  # before every loop of the function
            assert sets[0] < loops[0], fn


@pytest.mark.parametrize("players", [2, 3])
def test_protocol_path_in_lockstep(players):
    """protopath.rules: a shared option listed after another and first, end declarations
    before and after it, draws from a set of 70 and of 5 members (snapshot compares
    end_action_index and the outcomes at every pause)."""
    ends, ended_by = {}, set()
    for seed in range(40):
        _steps, where = _play(players, seed, PROTO_PATH)
        ends[where] = ends.get(where, 0) + 1
    assert ends.get(None, 0) > 0
    faults = {os.path.basename(w) for w in ends if w is not None}
    assert faults == {"protopath.rules:33:49"}  # price(6) in can_buy's `any`, in the test
    for seed in range(40):
        s = rulelang.load(PROTO_PATH, backend="compiled").new_game(players)
        rng = random.Random(seed)
        try:
            while not s.is_terminal():
                k = s.end_action_index()
                if s.current_player >= 0 and k >= 0:
                    ended_by.add(s.legal_actions()[k])
                s.apply_index(rng.randrange(s.num_choices()) if k < 0 or seed % 2 else k)
        except rulelang.RulesRuntimeError:
            pass
    assert ended_by == {"quit()", "finish()"}  # each end declaration found first somewhere


def test_protocol_path_is_used():
    """The legal function reads what only its shared option needs when it lists it itself, and
    takes the test's list as its own when that option is the first; the draws find the k-th
    member in the apply function."""
    src = compile_program(rulelang.check_file(PROTO_PATH))
    quit_ = src.split("def legal_quit(s, known=None):")[1].split("\ndef ")[0]
    assert "    if known is not None:\n        out.extend(known)\n    else:\n        _t" in quit_
    assert "    endk = _t2 if len(out) > _t2 else -1\n" in quit_
    assert "    if endk < 0 and len(out) > " in quit_
    assert quit_.count("s._endk") == 1
    give = src.split("def legal_give(s, known=None):")[1].split("\ndef ")[0]
    assert give.startswith("  # rules:")
    assert "    if known is not None:\n        out = known\n    else:\n        out = []\n" in give
    assert "out = []" not in give.split("if known is not None")[0]
    assert "kth_bit" not in src
    draw = src.split("def apply_draw(s, acts, k):")[1].split("\ndef ")[0]
    assert "shift += 32" in draw and "v = shift + members[k]" in draw
    roll = src.split("def apply_roll(s, acts, k):")[1].split("\ndef ")[0]
    assert "    v = SMALL_BITS[acts][k]\n" in roll


@pytest.mark.parametrize("players", [2, 3])
def test_loop_reads_in_lockstep(players):
    """loopreads.rules: reads lifted out of `for` loops whose bodies write arrays item by item
    (read again after the writes), and left in loops that write the set walked or an array as
    a whole; a fault in grow's loop after some of its writes."""
    ends = _ends(players, 40, LOOP_READS)
    assert ends.get(None, 0) > 0
    assert {os.path.basename(w) for w in ends if w is not None} == {"loopreads.rules:42:25"}


def test_loop_reads_are_lifted():
    """What a `for` body reads per statement and does not change is read before the loop;
    what it changes (a set, an array as a whole, a kept list whose variables it writes) is
    read where it was."""
    src = compile_program(rulelang.check_file(LOOP_READS))

    def body(name):
        return src.split(f"def {name}(s):")[1].split("\ndef ")[0]
    def walk(code, var):  # (the lines before the loop over the pool, its body)
        head, loop = re.split(rf"\n    for {var} in _t\d+:\n", code)
        assert head.endswith(" = bits(s.v_pool)")  # the members kept beside the pool's mask
        return head, loop

    grow = body("step_claim_then_grow")
    head, loop = walk(grow, "v_t_2")
    assert "_v_owner = s.v_owner" in head
    # near's list: fetched by each statement (owner is written), owner's list once
    assert loop.count("= s.c_near = [None]") == 2 and "= s.v_owner" not in loop
    sweep = body("step_claim_then_sweep")
    head, loop = walk(sweep, "v_t_3")
    assert "= s.c_near" in head and "_v_owner = s.v_owner" in head and "_v_level" in head
    assert "= s.c_near" not in loop and "s.v_pool.bit_count()" in loop  # pool: written
    settle = body("step_claim_then_settle")
    head, loop = walk(settle, "v_t_4")
    assert "_v_level" not in head and loop.count("_v_level = s.v_level") == 2
    acq = compile_program(rulelang.check_file(os.path.join(ROOT, "rules", "acquire.rules")))
    turn = acq.split("def step_turn_while_2(s):")[1].split("\ndef ")[0]
    end = turn[turn.index("if (not s.v_ending):"):]
    assert end.index("= s.c_adjacent_chains") < end.index("while _t")


def test_static_phase():
    """The phase at each pause and at the end, when every path from the start reaches it in
    one phase (plan_phase_sets); None when a pause can be reached in two."""
    from rulelang.codegen.passes import _static_phase
    from rulelang.lower import ChooseAt, FinishAt, JumpIfNot, SetPhase

    def choose(*targets):
        return ChooseAt(None, (), (), targets=list(targets))
    one = [SetPhase("a"), choose(2), SetPhase(None), FinishAt()]
    assert _static_phase(one) == {1: "a", 3: None}
    # the decision is reached both in no phase (the jump) and in phase a
    two = [JumpIfNot(None, target=2), SetPhase("a"), choose(3), SetPhase(None), FinishAt()]
    assert _static_phase(two) is None
    # an option going back into the phase's loop: the same phase
    loop = [SetPhase("a"), choose(1, 2), SetPhase(None), FinishAt()]
    assert _static_phase(loop) == {1: "a", 3: None}


def test_phase_read_from_the_pc():
    """Every rules file fixes the phase at its pauses: the compiled State keeps none (no slot,
    no store) and reads it from the pc, equal to the interpreter's at every pause."""
    src = compile_program(rulelang.check_file(os.path.join(ROOT, "rules", "acquire.rules")))
    assert "s.phase =" not in src and '"phase"' not in src.split("__slots__")[1][:200]
    a = rulelang.load(os.path.join(ROOT, "rules", "acquire.rules"), backend="interpreter")
    b = rulelang.load(os.path.join(ROOT, "rules", "acquire.rules"), backend="compiled")
    seen = set()
    for seed in range(2):
        x, y = a.new_game(4), b.new_game(4)
        rng = random.Random(seed)
        while not x.is_terminal():
            assert x.phase == y.phase == y.clone().phase
            seen.add(y.phase)
            k = rng.randrange(x.num_choices())
            x.apply_index(k)
            y.apply_index(k)
        assert y.is_terminal() and x.phase == y.phase is None
    assert {"turn", "draw", None} <= seen


def test_chance_weights_of_set_draws():
    """A game whose chance nodes all draw from sets answers chance_weights() None at once;
    both back ends agree at every pause (decisions included). A game with weighted chance keeps
    the full method."""
    src = compile_program(rulelang.check_file(PROTO_PATH))
    assert "        return None  # (no chance node here weighs its outcomes" in src
    auto = compile_program(rulelang.check_file(os.path.join(ROOT, "rules", "automobile.rules")))
    assert "no chance node here weighs" not in auto and "ws = [w for" in auto
    a = rulelang.load(PROTO_PATH, backend="interpreter").new_game(2)
    b = rulelang.load(PROTO_PATH, backend="compiled").new_game(2)
    rng = random.Random(3)
    kinds = set()
    while not a.is_terminal():
        assert a.chance_weights() is None and b.chance_weights() is None
        kinds.add(a.current_player == rulelang.CHANCE)
        k = rng.randrange(a.num_choices())
        try:
            a.apply_index(k)
        except rulelang.RulesRuntimeError:
            break
        b.apply_index(k)
    assert kinds == {True, False}


def test_a_removal_run_twice_keeps_its_test():
    """A phase whose removal needs no test when it is run once, run twice by one option: the
    second copy of the statement faults on both back ends, at the same place, and the state
    is left as it was (plan_member_removes names the statement, so every copy must qualify)."""
    path = os.path.join(ROOT, "tests", "fixtures", "removedtwice.rules")
    states = [rulelang.load(path, backend=b).new_game(2) for b in ("interpreter", "compiled")]
    before = [s.digest() for s in states]
    assert _faults(states, "apply", "twice(B)") == [
        ("removing a value that is not in the set", f"{path}:16:3")] * 2
    assert [s.digest() for s in states] == before
    for s in states:
        s.apply("once(B)")
    assert states[0].digest() == states[1].digest()


def test_member_removes():
    """`remove c from deck` right after `chance draw(c: Cell in deck)`, and spend's removal of
    the token `use(g: Good in tokens[p])` passes it, have no membership test
    (plan_member_removes); `remove d from faces` inside an `if` and drop's removal after another
    statement keep it. After set_vars at the draw (a smaller deck) both back ends draw and
    remove the same member."""
    src = compile_program(rulelang.check_file(PROTO_PATH))
    assert "    s.v_deck ^= BIT_Cell[_l_c]  # rules:40\n" in src  # (a grid of 70 cells)
    assert "fault_not_in_set(AT_40_" not in src and "fault_not_in_set(AT_44_" in src
    # a token chosen by `use` and passed to spend(q, g): removed at once; `drop` tests it
    assert "    s.v_tokens[_l_spend__q] ^= 1 << s.l_spend__g  # rules:100\n" in src
    assert "fault_not_in_set(AT_100_" not in src and "fault_not_in_set(AT_90_" in src
    acq = compile_program(rulelang.check_file(os.path.join(ROOT, "rules", "acquire.rules")))
    assert "s.v_hand[s.l_place_tile__p] ^= BIT_Tile[_l_place_tile__t]  # rules:208\n" in acq
    deck = ["2B", "3C", "7D"]
    for k in range(3):
        states = [rulelang.load(PROTO_PATH, backend=b).new_game(2)
                  for b in ("interpreter", "compiled")]
        for s in states:
            assert s.current_player == rulelang.CHANCE and s.history == []
            s.set_vars({"deck": deck})
            s.apply_index(k)
        a, b = states
        assert a.history == b.history == [f"draw({deck[k]})"]
        assert a.digest() == b.digest() and a.to_json() == b.to_json()
        assert b.get_var("deck") == [x for x in deck if x != deck[k]]


@pytest.mark.parametrize("extra, fault", [(0, "loopreads.rules:69:19"), (1, None), (4, None)])
def test_statements_in_a_row(extra, fault):
    """mix's statements read p, k and level once before them (level written item by item in
    between: read again through the same list), extra and the let each time; with extra 0
    bonus(5) faults in the last statement. Both back ends, from the same set_vars."""
    out = []
    for backend in ("interpreter", "compiled"):
        s = rulelang.load(LOOP_READS, backend=backend).new_game(2)
        s.set_vars({"level": {"Red": 6, "Blue": 1, "Green": 0}, "extra": extra})
        before = s.digest()
        try:
            s.apply("mix(Red)")
            out.append((None, s.digest(), s.get_var("pts"), s.get_var("extra")))
        except rulelang.RulesRuntimeError as exc:
            assert s.digest() == before
            out.append((os.path.basename(exc.location), None, None, None))
    assert out[0] == out[1] and out[0][0] == fault
    src = compile_program(rulelang.check_file(LOOP_READS))
    mix = src.split("def step_claim_then_mix(s):")[1].split("\ndef ")[0]
    head = mix.split("s.l_a = ")[0]
    assert "_v_level = s.v_level" in head and "_l_p = s.l_p" in head and "extra" not in head
    assert mix.count("_v_extra = s.v_extra") == 1 and "s.l_a" in mix.split("# rules:68")[1]


def test_bounded_updates_in_lockstep():
    """bounds.rules in lock step (no fault in ordinary play)."""
    for seed in range(30):
        assert _play(2, seed, BOUNDS)[1] is None


def test_bounded_updates_are_used():
    """up's updates and down's first have no int limit check (a `when`, the flow test on a
    flow local bound them); down's second, dip's and nudge's keep theirs."""
    src = compile_program(rulelang.check_file(BOUNDS))

    def body(name):
        return src.split(f"def step_up_then_{name}(s):")[1].split("\ndef ")[0]
    assert "    s.v_x += 1  # rules:23\n    s.l_n += 1  # rules:24\n    if (" in body("up")
    down = body("down")
    # the second update's check and turns' (after the loop)
    assert "s.v_y[_l_p] -= 1  # rules:27\n" in down and down.count("fault_int_limit") == 2
    assert "fault_int_limit(LIMIT_INT, AT_28_" in down
    assert "fault_int_limit(LIMIT_INT, AT_31_" in body("dip")
    assert "fault_int_limit(LIMIT_INT, AT_34_" in body("nudge")


@pytest.mark.parametrize("x, action, fault", [
    (10 ** 100 - 1, "nudge()", "bounds.rules:34:11"),
    (-(10 ** 100 - 1), "dip()", "bounds.rules:31:11"),
    (-(10 ** 100 - 1), "up()", None), (4, "up()", None)])
def test_bounded_updates_at_the_limit(x, action, fault):
    """set_vars at the first pause: the flow test (x < 9) is not asked again, the `when`s are;
    the checks left in fault at the limit on both back ends, the ones left out cannot."""
    out = [(where, None if where else digest)
           for where, _message, digest in _after_set_vars(BOUNDS, {"x": x}, action)]
    assert out[0] == out[1] and out[0][0] == fault


@pytest.mark.parametrize("x, action, fault", [
    (10 ** 100 - 1, "raw()", "boundedtwice.rules:14:3"), (4, "safe()", None), (4, "raw()", None)])
def test_an_update_run_twice_keeps_its_check(x, action, fault):
    """A phase whose `x += 1` needs no int limit check when the option bounding x runs it, run
    by another option too: that copy faults at the limit on both back ends, at the same place,
    with the state kept (plan_bounded_updates names the statement, so every copy must
    qualify); below the limit both play the same."""
    out = [(where, None if where else digest)
           for where, _message, digest in _after_set_vars(BOUNDED_TWICE, {"x": x}, action)]
    assert out[0] == out[1] and out[0][0] == fault


def _after_set_vars(path: str, values: dict, action: str) -> list:
    """On each back end, a 2-player game of path given values by set_vars at its first pause,
    then action: (fault file:line:col or None, its message, the digest after), a fault
    leaving the state untouched."""
    out = []
    for backend in ("interpreter", "compiled"):
        s = rulelang.load(path, backend=backend).new_game(2)
        s.set_vars(values)
        before = s.digest()
        try:
            s.apply(action)
            out.append((None, None, s.digest()))
        except rulelang.RulesRuntimeError as exc:
            assert s.digest() == before
            out.append((os.path.basename(exc.location), exc.message, before))
    return out


@pytest.mark.parametrize("x", [10 ** 100 - 1, -(10 ** 100 - 1), 5])
@pytest.mark.parametrize("action, fault", [
    ("zero()", "argchecks.rules:25:26"), ("one()", "argchecks.rules:28:23"),
    ("two()", "argchecks.rules:31:26"), ("three()", "argchecks.rules:34:23"),
    ("four()", "argchecks.rules:37:23")])
def test_argument_checks_at_the_limit(x, action, fault):
    """x + x bound to an expanded def's int parameter faults at the int limit where it is
    written, before a sum of 7 // k (k = 0) after it, on both back ends, with the state
    untouched; a small x plays the same (three faults at 7 // 0 then)."""
    out = [(where, message if where else digest) for where, message, digest
           in _after_set_vars(ARG_CHECKS, {"x": x, "k": 0}, action)]
    small = "argchecks.rules:34:34" if action == "three()" else None
    assert out[0] == out[1] and out[0][0] == (fault if abs(x) > 5 else small)


def test_argument_checks_are_inline():
    """The checks of x + x are two comparisons where it is bound, except three's first
    argument (a sum of 7 // k after it may fault): a call of bounded there."""
    src = compile_program(rulelang.check_file(ARG_CHECKS))
    lines = [line.strip() for line in src.splitlines()]
    for at in ("25_26", "28_23", "31_26", "37_23"):
        i = lines.index(f"fault_int_limit(LIMIT_INT, AT_{at})")
        assert re.fullmatch(r"if not LIMIT_INT_MIN <= _t\d+ <= LIMIT_INT:", lines[i - 1])
    three = r"_t\d+ = bounded\(\(_v_x \+ _v_x\), LIMIT_INT, AT_34_23\)"
    assert sum(1 for line in lines if re.fullmatch(three, line)) == 1


def test_always_listed_option():
    """A decision with an option of no parameters and no `when` is never empty: no test for
    it after the listing (Acquire's buy, protopath's give); the others keep it."""
    acq = compile_program(rulelang.check_file(os.path.join(ROOT, "rules", "acquire.rules")))
    assert "acts = legal_buy(s, _t" in acq and "fault_no_choice(AT_172_5)" not in acq
    assert "fault_no_choice(AT_158_5)" in acq  # place: every option has a `when`
    src = compile_program(rulelang.check_file(PROTO_PATH))
    give = src.split("acts = legal_give(s")[1].split("return -1")[0]
    assert "if not acts" not in give


def test_inline_conditional_in_lockstep():
    """condinline.rules in lock step (picked() with and without a pick)."""
    for players_seed in range(30):
        assert _play(2, players_seed, COND_INLINE)[1] is None


@pytest.mark.parametrize("level, fault", [
    (4, "condinline.rules:21:6"), (9, "condinline.rules:22:12"), (2, "condinline.rules:24:10"),
    (5, None), (0, None)])
def test_inline_conditional_faults(level, fault):
    """price(k) expanded as `(X if C else Y)` faults in C, X or Y as the interpreter's does
    (set_vars lists lift's options again, and puts the old values back on a fault)."""
    out = []
    for backend in ("interpreter", "compiled"):
        s = rulelang.load(COND_INLINE, backend=backend).new_game(2)
        before = s.digest()
        try:
            s.set_vars({"level": {"Red": 0, "Blue": level, "Green": 1}, "pick": "Blue"})
            out.append((None, s.legal_actions(), s.digest()))
        except rulelang.RulesRuntimeError as exc:
            assert s.digest() == before
            out.append((os.path.basename(exc.location), exc.message, None))
    assert out[0] == out[1] and out[0][0] == fault
    src = compile_program(rulelang.check_file(COND_INLINE))
    # (cost read from its tuple, the row function where a key has no row: passes.py,
    # plan_dense_tables; compared without the spaces and line breaks of the layout)
    flat = "".join(src.split())
    assert re.search(r"elsetable_cost\((_t\d+),AT_22_12\)\)if\(\((_t\d+)if0<=\((_t\d+):="
                     r"_v_level\[v_k\]\)<=9and\(\2:=TABLE_cost\[\3\]\)isnotNoneelse"
                     r"table_cost\(\3,AT_21_6\)\)>1\)else", flat)
    assert "(0if(_v_pickisNone)else_v_level[_v_pick])" in flat  # pick: no none check


@pytest.mark.parametrize(("variant", "params"), [
    (None, None), ("wild", None), (None, {"mode": "Odd"}), (None, {"cap": 0}),
    (None, {"mode": "Wild", "cap": 1}), (None, {"mode": "Odd", "cap": 6}),
], ids=["calm3", "wild5", "odd3", "calm0", "wild1", "odd6"])
def test_ranks_and_folded_constants_in_lockstep(variant, params):
    ends: dict = {}
    for seed in range(30):
        for players in (2, 3):
            _steps, where = _play(players, seed, RANKS, params=params, variant=variant)
            ends[where] = ends.get(where, 0) + 1
    assert ends.get(None, 0) > 0
    # risk() compares with top while it is none: offered only in Calm mode, and only to a
    # player who took cards (none can be taken with cap 0); cash_in(Hearts) asks worth(7)
    # inside suit_worth's walk of the Hearts (a card was taken: lead is set)
    params = params or {}
    calm = params.get("mode", "Wild" if variant else "Calm") == "Calm"
    took = params.get("cap") != 0
    assert {os.path.basename(w) for w in ends if w is not None} == \
        ({"ranks.rules:53:45"} if calm and took else set()) | \
        ({"ranks.rules:58:38"} if took else set())


def test_ranks_and_folded_constants_are_used():
    """rank, above, at_most, at_least, lowest, beaten and few_below count or test the members of
    a mask below or above x at once; the filtered count, the test of y against itself and the
    comparison with top (which may be none) walk their members. With mode Calm and cap 3 the
    comparisons of constants are gone (folded into the tests around them)."""
    src = compile_program(rulelang.check_file(RANKS))
    assert src.count(".bit_count()") >= 4
    for name in ("rank", "above", "at_most", "at_least", "lowest", "beaten", "few_below"):
        assert f"v_{name}__y" not in src, name
    for name in ("filtered", "self_rank", "under_top"):
        assert f"v_{name}__y" in src, name
    assert not re.search(r"\(\d+ [=!<>]=? \d+\)", src)  # no test of two constants left
    legal = src[src.index("def legal_take(s):"):src.index("def text_take(")]
    assert "lowest" not in legal and "_v_deck & ((1 << v_x) - 1)).bit_count() < 3" in legal
    wild = compile_program(rulelang.check_file(RANKS, variant="wild"))
    legal = wild[wild.index("def legal_take(s):"):wild.index("def text_take(")]
    assert "bit_count" not in legal  # `mode == Wild` makes every member a candidate
    # the filtered walks (plan_field_walks); led()'s lead may be none: tested on every card
    for line in ("for v_suited__c in MEMBERS_Card_suit[_t1]:",
                 "for v_faces__c in MEMBERS_Card_face[True]:",
                 "for v_pips_held__c in MEMBERS_Card_pips.get(_t2, ()):",
                 "for v_suit_worth__c in MEMBERS_Card_suit[_l_s]:", "for v_led__c in ALL_Card:"):
        assert line in src, line
    assert "MEMBERS_Card_suit = ((0, 2, 5), (1, 4), (3,))" in src
    assert "MEMBERS_Card_pips = {1: (0,), 2: (1,), 3: (2,), 4: (3,), 5: (4,), 7: (5,)}" in src


@pytest.mark.parametrize("params", [None, {"faulty": True}, {"limit": 0}],
                         ids=["base", "faulty", "limit0"])
def test_listing_memo_in_lockstep(params):
    """One module, games of 2, 3 and 4 players in turn: the kept listings are shared."""
    ends: dict = {}
    for seed in range(10):
        for players in (2, 3, 4):
            _steps, where = _play(players, seed, LISTINGS, params=params)
            ends[where] = ends.get(where, 0) + 1
    game = rulelang.load(LISTINGS, params=params, backend="compiled")
    kept = game.new_game.__func__.__globals__
    if params == {"faulty": True}:  # paint's fee(10), found while listing
        assert {os.path.basename(w) for w in ends if w} == {"listings.rules:42:36"}
        assert ends.get(None, 0) == 0
        assert len(kept["LISTED_stack_paint"]) == 4  # tick % 5 is the key: 3 is never kept
    else:
        assert set(ends) == {None}
        assert len(kept["LISTED_stack_stack"]) == 256  # more values came than it keeps
        assert len(kept["LISTED_stack_paint"]) == 1  # (no key that varies: one listing)


def test_listing_memo_is_used():
    src = compile_program(rulelang.check_file(LISTINGS))
    legal = src[src.index("def legal_stack(s):"):src.index("def text_stack(")]
    for name in ("stack", "paint", "flag", "bump"):
        assert f"LISTED_stack_{name}.get(" in legal, name
    assert "LISTED_stack_take" not in src
    assert "_t3 = (_t2, _t1, s.n, )" in legal  # spent(p), the bound with tick, the players
    auto = compile_program(rulelang.check_file(os.path.join(ROOT, "rules", "automobile.rules")))
    assert "LISTED_build_place_dealers.get(" in auto


def test_dense_tables_are_flat_tuples():
    """Tables of enum, bool and int keys are read from one flat tuple, row-major, None where no
    row matches (plan_dense_tables); a table whose values may be none is not."""
    src = compile_program(rulelang.check_file(DENSE_TABLES))
    # rate: Kind x 0..6 (6 from the `6..` row): (Green, 2) and Red's 4 and 5 have no row
    assert ("TABLE_rate = (1, 1, 1, 1, None, None, 9, 2, 2, 3, 3, 3, 3, 9, 4, 4, None, 5, 5, 5, "
            "9,)") in src
    # bump: bool x 1..2, the `(_, _)` row filling (true, 2)
    assert "TABLE_bump = (20, 20, 10, 1,)" in src
    assert "TABLE_tint = (7, None, 8,)" in src
    assert "TABLE_pick" not in src
    flat = "".join(src.split())
    # keys bound in order by the tests that need them, the function given the bound names
    assert re.search(r"\((_t\d+)if0<=\((_t\d+):=_v_level\[v_k\]\)<=6and\(\1:=TABLE_rate\["
                     r"v_k\*7\+\2\]\)isnotNoneelsetable_rate\(v_k,\2,AT_37_27\)\)", flat)
    assert re.search(r"\(TABLE_bump\[_v_flag\*2\+(_t\d+)-1\]if1<=\(\1:=_v_level\[v_k\]-1\)"
                     r"<=2elsetable_bump\(_v_flag,\1,AT_37_47\)\)", flat)
    # constant keys: inside the box, the cell itself; outside it (7 > 6), the row function
    assert "(TABLE_bump[2]==10)" in flat
    assert re.search(r"\((_t\d+)if\(\1:=TABLE_rate\[9\]\)isnotNoneelsetable_rate\(1,2,"
                     r"AT_41_27\)\)", flat)
    assert "table_rate(_l_k_2,7,AT_42_29)" in flat


def test_dense_tables_in_lockstep():
    """densetables.rules in lock step, with levels and flags set at random: a cell with no row
    faults where the interpreter's lookup does (the listing's `when`, a body, a key out of the
    box going to the row function)."""
    ends: dict = {}
    for players in (2, 3):
        for seed in range(60):
            _steps, where = _play(players, seed, DENSE_TABLES, lambda rng, n: {
                "level": {k: rng.randrange(8) for k in ("Red", "Blue", "Green")},
                "flag": rng.random() < 0.5})
            ends[where] = ends.get(where, 0) + 1
    faults = {os.path.basename(w) for w in ends if w is not None}
    # rate(k, level[k]) in raise's `when` (Green at 2, Red at 4 or 5), rate(top(), ...) and
    # tint(Blue) in bodies, pick(rounds % 5) at 2 or 4, rate(Red, level[Red] + 1) at 3 or 4
    assert faults == {"densetables.rules:37:27", "densetables.rules:39:19",
                      "densetables.rules:42:19", "densetables.rules:46:12",
                      "densetables.rules:47:38"}
    assert ends.get(None, 0) > 0


def test_action_strings_from_tuples_in_lockstep():
    """actiontexts.rules: options of one int parameter over a constant range (negative bounds,
    steps, a bound from a parameter) take their strings from tuples made once, options of
    several parameters (int and bool, enum and int) from dicts keyed by the argument tuple;
    the legal actions and the history are those of the interpreter at every step."""
    for players in (2, 3):
        for seed in range(25):
            _steps, where = _play(players, seed, ACTION_TEXTS)
            assert where is None
    for params in ({"top": 0}, {"top": 9}):
        _steps, where = _play(2, 1, ACTION_TEXTS, params=params)
        assert where is None
    src = compile_program(rulelang.check_file(ACTION_TEXTS))
    assert "TEXTS_pick_pick = tuple('pick(' + str(v) + ')' for v in range(-3, 4, 2))" in src
    assert "TEXTS_pick_far = tuple('far(' + str(v) + ')' for v in range(-7, -4, 1))" in src
    assert "TEXTS_pick_scaled = tuple('scaled(' + str(v) + ')' for v in range(0, 41, 5))" in src
    flat = "".join(src.split())
    # the two-parameter option's strings in a dict keyed by the argument tuple
    assert ("TEXTS_pick_pair={(v0,v1):'pair('+str(v0)+','+('true'ifv1else'false')+')'forv0in"
            "range(1,3,1)forv1in(False,True)}") in flat
    # the listing's strings: tuples, the dict and fixed strings inline, no call
    assert ("return[TEXTS_pick_pick[(a[0]+3)//2]ifo==0elseTEXTS_pick_far[(a[0]+7)]ifo==1else"
            "TEXTS_pick_scaled[a[0]//5]ifo==2elseTEXTS_pick_paint[a[0]]ifo==3else"
            "TEXTS_pick_pair[a]ifo==4elseTEXTS_pick_mix[a]ifo==5else'pass()'foro,ainacts]") in flat
    assert ("TEXTS_pick_mix={(v0,v1):'mix('+NAMES_Hue[v0]+','+str(v1)+')'forv0in"
            "range(len(NAMES_Hue))forv1inrange(-1,2,2)}") in flat
    game = rulelang.load(ACTION_TEXTS, backend="compiled")
    s = game.new_game(2)
    assert s.legal_actions() == [
        "pick(-3)", "pick(-1)", "pick(1)", "pick(3)", "far(-7)", "far(-6)", "far(-5)",
        *(f"scaled({z})" for z in range(5, 41, 5)), "paint(Red)", "paint(Green)",
        "paint(Blue)", "pair(1, false)", "pair(1, true)", "pair(2, false)", "pair(2, true)",
        "pass()"]


FEW = ("Low", "Mid", "High")
MANY = tuple(f"M{i}" for i in range(10))


def _new_extremes(rng, players):
    return {"few": {f: rng.randrange(-4, 5) for f in FEW},
            "many": {m: rng.randrange(-2, 7) for m in MANY}, "cap": rng.randrange(-1, 5)}


@pytest.mark.parametrize("players", [2, 3])
def test_extremes_in_lockstep(players):
    assert _ends(players, 60, EXTREMES, _new_extremes) == {None: 60}


@pytest.mark.parametrize("goal", [1, 9])
def test_extremes_in_lockstep_with_goal(goal):
    for seed in range(20):
        a = rulelang.load(EXTREMES, params={"goal": goal}, backend="interpreter")
        b = rulelang.load(EXTREMES, params={"goal": goal}, backend="compiled")
        sa, sb = a.new_game(2), b.new_game(2)
        rng = random.Random(seed)
        while not sa.is_terminal():
            k = rng.randrange(sa.num_choices())
            sa.apply_index(k)
            sb.apply_index(k)
            assert snapshot(sa) == snapshot(sb)


def test_extremes_of_a_small_enum_are_unrolled():
    """`any/all(A[x] op K for x in E)` over every member of an enum of at most SMALL_ENUM
    members is one chain of `or` / `and` over the cells, the array and a bound that is not a
    name or a literal read once before it; over Many (10 members), and in an expression with
    no statements before it (the score), min() or max()."""
    src = compile_program(rulelang.check_file(EXTREMES))
    assert re.search(r"\(_v_few\[0\] < (_t\d+) or _v_few\[1\] < \1 or _v_few\[2\] < \1\)",
                     src)  # cap + 2, bound once
    assert re.search(r"(_t\d+) = _v_held\[_l_p\]  # rules:50\n +if \(\1\[0\] >= 1 and "
                     r"\1\[1\] >= 1 and \1\[2\] >= 1\):", src)  # held[p], read once
    assert "(_v_few[0] > 0 and _v_few[1] > 0 and _v_few[2] > 0)" in src  # all_up()
    assert "_v_few[3]" not in src and "min(_v_few)" not in src and "max(_v_few)" not in src
    assert "(max(_v_many) <= _v_cap)" in src and "(max(_v_many) < 6)" in src
    assert "_v_many[0]" not in src
    assert "(1 if (min(s.v_few) >= 0) else 0)" in src


@pytest.mark.parametrize("players, top", [(2, 4), (3, 4), (2, 0), (3, 1)])
def test_fixed_listings_in_lockstep(players, top):
    for seed in range(25):
        _steps, where = _play(players, seed, FIXED_LISTINGS, params={"top": top})
        assert where is None


@pytest.mark.parametrize("top, go_end", [(4, 6), (0, -1)])
def test_fixed_listings_are_made_once(top, go_end):
    """A decision whose pairs never change returns one tuple made once, with the index of its
    first legal end declaration fixed too (-1 when the only one ranges over nothing); one
    with a `when` lists afresh."""
    src = compile_program(rulelang.check_file(FIXED_LISTINGS, params={"top": top}))
    assert "PAIRS_bid = (*ARGS_bid_bid_ALL, (1, ()))\n" in src
    assert "PAIRS_pick = (*ARGS_pick_pick_ALL, (1, ()), (2, ()), (3, ()))\n" in src
    assert "PAIRS_go = (*ARGS_go_go_ALL, *ARGS_go_settle_ALL, (2, ()))\n" in src
    for name, endk in (("bid", -1), ("pick", 9), ("go", go_end)):
        assert re.search(rf"def legal_{name}\(s\):  # rules:\d+: the choices of this decision\n"
                         rf"    s\._endk = {endk}\n    return PAIRS_{name}\n", src), name
    assert "PAIRS_spend" not in src and re.search(r"def legal_spend\(s\):.*\n    out = \[\]", src)
    game = rulelang.load(FIXED_LISTINGS, params={"top": top}, backend="compiled")
    s = game.new_game(2)
    assert s.legal_actions() == [f"bid({a})" for a in range(1, top + 1)] + ["no_bid()"]
    s.apply_index(0)
    t = s.clone()
    t.apply_index(s.num_choices() - 1)  # quit() in the clone: the original's listing stays
    assert s.legal_actions()[-4:] == ["pick(Blue, 2)", "stop()", "wait()", "quit()"]
    assert s.end_action_index() == 9


@pytest.mark.parametrize("players, cap", [(2, 6), (3, 6), (4, 1), (3, 9)])
def test_range_slices_in_lockstep(players, cap):
    for seed in range(25):
        _steps, where = _play(players, seed, RANGE_SLICES, params={"cap": cap})
        assert where is None


def test_range_slices_are_used():
    """The passing values of a range form one run: its pairs are a slice of pairs made once,
    the run's ends found by binary search in the loop of the last parameter the tests read
    (before the colours' loop for pay, in the players' loop for lend, whose test reads none);
    a test that is not monotone (skip's) keeps the loop."""
    src = compile_program(rulelang.check_file(RANGE_SLICES))
    assert re.search(r"for v_q in s\._players:\n        (_t\d+) = _v_cash\[v_q\]\n"
                     r"        (_t\d+) = 0\n        (_t\d+) = 7\n        while \2 < \3:\n"
                     r"            (_t\d+) = \(\2 \+ \3\) // 2\n"
                     r"            v_amt = \4 \* 2 - 6\n"
                     r"            if \(\(-v_amt\) > \1\):\n", src)
    assert re.search(r"for v_c in SMALL_BITS\[_t\d+\]:\n.*\n.*\n"
                     r"            if (_t\d+) > (_t\d+):\n"
                     r"                (_t\d+) = ROWS_pay_pay\.get\(\(v_q, v_c, \)\)\n", src)
    assert re.search(r"out\.extend\(_t\d+\[_t\d+:_t\d+\]\)", src)
    assert "tuple((2, (v_q_3, v, )) for v in range(-7, 9, 3))" in src
    assert "tuple((3, (v_q_4, v_t, v, )) for v in range(0, 6, 1))" in src
    assert "tuple((4, (v_q_5, v, )) for v in range(1, 5, 1))" in src
    assert "ROWS_pay_skip" not in src and "out.append((5, (v_q_6, v_n_5, )))" in src
    assert "v_n_4 = 1 + _t" in src and "v_n = _t" in src and "v_n_2 = _t" in src
    # owe: the search, at the head of q's loop, computes wealth(q, 2) itself, before the
    # loop's own test of it
    owe = src[src.index("for v_q_2 in s._players:"):src.index("ROWS_pay_owe.get")]
    assert owe.index("while ") < owe.index("<= 1):\n            continue")
    assert owe.count("for v_wealth__c in ALL_Colour:") == 3
