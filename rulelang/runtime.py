"""The one home of run-time helpers and run-time error messages, for both back ends.

The interpreter calls these functions; the code generator copies the source of exactly those a
generated module uses into it (`rulelang.codegen.helpers`), so a message or a rounding rule is
written once. Hence the rules for this file: standard library only, no import of rulelang, every
helper a top-level function, class or constant, and no name that starts like a name generated
from a rules file (`v_`, `def_`, `table_`, `phase_`, `k_`, `l_`, `it_`, `ix_`).

Values in generated engines: sets are int bit masks (bit i = member i), lists and arrays are
Python lists. The interpreter keeps sets as frozensets and lists as tuples.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import json
from dataclasses import dataclass

CHANCE = -1
TERMINAL = -2


class IllegalAction(Exception):
    """An action that is not among the legal actions; the state is left untouched."""


class RulesRuntimeError(Exception):
    """A fault inside the rules (e.g. a table lookup out of range), with its .rules location."""

    def __init__(self, message, location):
        self.message = message
        self.location = location
        super().__init__(f"{location}: {message}")

    def __reduce__(self):
        # (the notes too: a worker process's "in simulated game i (seed s)" reaches the parent)
        notes = getattr(self, "__notes__", None)
        return (type(self), (self.message, self.location), {"__notes__": notes} if notes else None)


@dataclass(frozen=True)
class Limits:
    """Guards against runaway rules, part of every loaded program (docs/language.md, "Limits").

    max_loop_steps: times a `while` body may start without a decision: in one execution of a
    `while` statement, and in all `while` loops of the flow together between two pauses.
    max_collection: elements of a range or of a list made by `+` or `push`.
    max_int_digits: digits of an int (its absolute value stays below 10 ** max_int_digits)."""

    max_loop_steps: int = 100_000
    max_collection: int = 1_000_000
    max_int_digits: int = 100

    def __post_init__(self):
        for name in ("max_loop_steps", "max_collection", "max_int_digits"):
            v = getattr(self, name)
            if type(v) is not int or v < 1:
                raise ValueError(f"limit {name} must be a positive int, not {v!r}")
        if self.max_int_digits > 1000:
            raise ValueError("limit max_int_digits must be at most 1000 (Python refuses to "
                             "print ints of more than 4300 digits)")
        if self.max_collection >= 10 ** self.max_int_digits:
            # a length or a count is an int, and must be one the int limit allows
            raise ValueError("limit max_collection must be below 10 ** max_int_digits")

    @property
    def int_max(self):
        """The largest int allowed."""
        return 10 ** self.max_int_digits - 1


# ---- faults: every run-time message of the language -------------------------------------------
def fault_none(where):
    raise RulesRuntimeError("value is none", where)


def no_none_in(v, levels, where):
    """v, a list or array kept where its elements at nesting level i may not be none when
    levels[i] (types.none_levels): the fault "value is none" at `where` if one is. (v itself
    may be none where its type allows it.)"""
    if v is None:
        return v
    must, rest = levels[0], levels[1:]
    for x in v:
        if x is None:
            if must:
                fault_none(where)
        elif rest:
            no_none_in(x, rest, where)
    return v


def fault_set_none(where):
    raise RulesRuntimeError("a set cannot hold none", where)


def fault_not_in_set(where):
    raise RulesRuntimeError("removing a value that is not in the set", where)


def fault_not_in_list(where):
    raise RulesRuntimeError("removing a value that is not in the list", where)


def fault_empty(name, where):
    raise RulesRuntimeError(f"{name}() of an empty collection", where)


def fault_no_choice(where):
    raise RulesRuntimeError("no legal action at this decision", where)


def fault_phase_depth(name, depth, where):
    raise RulesRuntimeError(f"phase '{name}' is already open {depth} time"
                            f"{'' if depth == 1 else 's'} (its depth)", where)


def fault_no_outcome(name, where):
    raise RulesRuntimeError(f"chance '{name}' has no outcome", where)


def fault_weight(where):
    raise RulesRuntimeError("negative chance weight", where)


def shown_int(v):
    """An int or bool for a message, as the rules write it: `true`/`false`, an int in full, or
    by its size when Python could not print it (an int only compared or used as an index is
    not checked against the int limit)."""
    if type(v) is bool:
        return "true" if v else "false"
    if type(v) is int and not -10 ** 60 < v < 10 ** 60:
        return f"<int of {abs(v).bit_length()} bits>"
    return str(v)


def fault_no_row(name, keys, where, members=()):
    # one key as it is (`4`), several in parentheses (`(4, 2)`); an enum key by its member's
    # name (members[i]: the member names of key i's enum, None for another key)
    shown = ", ".join(
        members[i][k] if i < len(members) and members[i] is not None else shown_int(k)
        for i, k in enumerate(keys))
    raise RulesRuntimeError(f"table '{name}' has no row for "
                            f"{shown if len(keys) == 1 else '(' + shown + ')'}", where)


def fault_index(i, size, where):
    raise RulesRuntimeError(f"index {shown_int(i)} out of range (size {size})", where)


def fault_not_found(where):
    raise RulesRuntimeError("index_of: the value is not in the list", where)


def fault_loop_limit(limit, where):
    raise RulesRuntimeError(f"loop went round more than {limit} times without a decision "
                            f"(limit max_loop_steps)", where)


def fault_size_limit(size, limit, where):
    raise RulesRuntimeError(f"collection of {size} elements is over the limit of {limit} "
                            f"(max_collection)", where)


def fault_int_limit(top, where):
    raise RulesRuntimeError(f"integer over the limit of {len(str(top))} digits "
                            f"(max_int_digits)", where)


# ---- integers -----------------------------------------------------------------------------------
def not_none(v, where):
    if v is None:
        fault_none(where)
    return v


def floor_div(a, b, where):
    if b == 0:
        raise RulesRuntimeError("division by zero", where)
    return a // b


def mod(a, b, where):
    if b == 0:
        raise RulesRuntimeError("modulo by zero", where)
    return a % b


def ceil_div(a, b, where):
    if b == 0:
        raise RulesRuntimeError("division by zero", where)
    return -((-a) // b)


def round_up(a, m, where):
    """a rounded up to the next multiple of m (Acquire's bonus splits)."""
    return ceil_div(a, m, where) * m


def round_down(a, m, where):
    return floor_div(a, m, where) * m


def bounded(v, top, where):
    """v (an int or none), checked against the int limit: -top <= v <= top."""
    if v is None or -top <= v <= top:
        return v
    return fault_int_limit(top, where)


def int_range(lo, hi, step, where, max_size):
    """lo..hi by step, both ends included, as a Python range of at most max_size elements."""
    if step <= 0:
        raise RulesRuntimeError("range step must be positive", where)
    if hi >= lo and (hi - lo) // step >= max_size:
        fault_size_limit((hi - lo) // step + 1, max_size, where)
    return range(lo, hi + 1, step)


def push(lst, v, max_size, where):
    """Append v to a Python list, in place, keeping it within max_size elements."""
    if len(lst) >= max_size:
        fault_size_limit(len(lst) + 1, max_size, where)
    lst.append(v)


def concat(a, b, max_size, where):
    """The list a + b, of at most max_size elements."""
    if len(a) + len(b) > max_size:
        fault_size_limit(len(a) + len(b), max_size, where)
    return a + b


def extreme(values, fn, name, where):
    """min or max (fn) of values, which must not be empty."""
    values = list(values)
    if not values:
        fault_empty(name, where)
    return fn(values)


# ---- lists --------------------------------------------------------------------------------------
def list_item(lst, i, where):
    if not 0 <= i < len(lst):
        fault_index(i, len(lst), where)
    return lst[i]


def list_index(lst, i, where):
    """i, checked as an index of lst (for an assignment to lst[i])."""
    if not 0 <= i < len(lst):
        fault_index(i, len(lst), where)
    return i


def list_remove(lst, v, where):
    """Remove the first element equal to v from a Python list, in place."""
    if v not in lst:
        fault_not_in_list(where)
    lst.remove(v)


def index_of(xs, x, where):
    """Position of the first element of the sequence xs equal to x."""
    for i, v in enumerate(xs):
        if v == x:
            return i
    return fault_not_found(where)


def deep_copy(v):
    """A copy of a list value (lists of lists included); other values are immutable."""
    if type(v) is list:
        return [deep_copy(x) for x in v]
    return v


def filled(v, sizes):
    """An array of the given sizes (outermost first) with every entry a copy of v."""
    if not sizes:
        return deep_copy(v)
    if len(sizes) == 1 and type(v) is not list:
        return [v] * sizes[0]
    return [filled(v, sizes[1:]) for _ in range(sizes[0])]


# ---- sets as bit masks (generated engines) ------------------------------------------------------
SMALL_BITS = tuple(tuple(i for i in range(8) if m >> i & 1) for m in range(256))


# BYTE_BITS[i][b]: the members of byte value b at byte i of a mask (8 * i + bit), rows added
# as larger masks are met.
BYTE_BITS = []


class BitsCache(dict):
    """Members of a bit-mask set in ascending order, as a shared tuple (never to be changed):
    the masks below 256 from the start (SMALL_BITS: a set of players, of a small enum), and a
    bounded cache for larger ones with few members, since the same set (a hand, a board region)
    is usually walked several times in a row. A hit is a plain dict lookup (no Python frame); a
    miss lands in `__missing__`."""
    __slots__ = ()

    def __init__(self):
        super().__init__(enumerate(SMALL_BITS))

    def __missing__(self, m):
        # byte by byte, each non-zero byte's members from a table (3x faster than peeling off
        # the lowest bit once a mask has a few dozen members, as a board does)
        data = m.to_bytes((m.bit_length() + 7) >> 3, "little")
        rows = BYTE_BITS
        while len(rows) < len(data):
            base = 8 * len(rows)
            rows.append(tuple(tuple(base + j for j in SMALL_BITS[b]) for b in range(256)))
        out = []
        for i, b in enumerate(data):
            if b:
                out.extend(rows[i][b])
        r = tuple(out)
        if len(r) <= 32:
            if len(self) >= 2048:
                self.clear()
                self.update(enumerate(SMALL_BITS))
            self[m] = r
        return r


BITS_CACHE = BitsCache()
bits = BITS_CACHE.__getitem__
# Where a member goes in a sorted tuple of members (sets kept as tuples beside their masks).
bisect_left = bisect.bisect_left
# Members of a set of bools (a two-bit mask) as bools, so they stay bools wherever they go.
BOOL_MEMBERS = ((), (False,), (True,), (False, True))


def kth_bit(m, k):
    """Index of the k-th (from 0) member of a bit-mask set: whole 32-bit words are skipped by
    their population count, then bytes, then a table finishes the job."""
    shift = 0
    word = m & 0xFFFFFFFF
    n = word.bit_count()
    while k >= n:
        k -= n
        shift += 32
        word = (m >> shift) & 0xFFFFFFFF
        n = word.bit_count()
    while True:
        members = SMALL_BITS[word & 0xFF]
        if k < len(members):
            return shift + members[k]
        k -= len(members)
        word >>= 8
        shift += 8


def mask_of_known(values):
    """A set of values known not to be none."""
    m = 0
    for v in values:
        m |= 1 << v
    return m


def mask_of(values, where):
    m = 0
    for v in values:
        if v is None:
            fault_set_none(where)
        m |= 1 << v
    return m


def mask_of_list(values):
    """The set of the values in a list that are not none (a parameter domain given as a list)."""
    m = 0
    for v in values:
        if v is not None:
            m |= 1 << v
    return m


def mask_remove(m, v, where):
    if not (m >> v) & 1:
        fault_not_in_set(where)
    return m ^ (1 << v)


def connected_mask(start, within, nbm):
    """Cells reachable from start through cells of the mask `within` (start included), given
    each cell's neighbour mask."""
    seen = 1 << start
    frontier = nbm[start] & within & ~seen
    if not frontier:
        # (most calls in Acquire: a tile placed with no loose tile next to it, 46 of 75 a
        # game, returned without the walk's big-int operations)
        return seen
    seen |= frontier
    while frontier:
        low = frontier & -frontier
        frontier ^= low
        new = nbm[low.bit_length() - 1] & within & ~seen
        seen |= new
        frontier |= new
    return seen


# ---- boards and seats ---------------------------------------------------------------------------
def grid_neighbors(cols, rows):
    """Orthogonal neighbours of every cell of a cols x rows grid, cell index = row*cols + col,
    each list in ascending cell order."""
    out = []
    for r in range(rows):
        for c in range(cols):
            ns = []
            if r > 0:
                ns.append((r - 1) * cols + c)
            if c > 0:
                ns.append(r * cols + c - 1)
            if c < cols - 1:
                ns.append(r * cols + c + 1)
            if r < rows - 1:
                ns.append((r + 1) * cols + c)
            out.append(tuple(ns))
    return tuple(out)


def connected(start, within, neighbors):
    """Cells reachable from start through cells of the set `within` (start always included)."""
    seen = {start}
    stack = [start]
    while stack:
        cur = stack.pop()
        for n in neighbors[cur]:
            if n not in seen and n in within:
                seen.add(n)
                stack.append(n)
    return frozenset(seen)


# Distances already searched, by (graph, start set, allowed set): every city of a build
# decision is priced from the same network, so one search serves them all. A pure cache: what
# it holds never changes a result; it is bounded, and each entry keeps its graph alive so that
# the graph's id cannot be reused while the entry exists.
PATH_CACHE = {}


def path_cost(adj, sources, target, allowed=None):
    """Cheapest total edge cost from any of `sources` to `target` (None if unreachable).

    adj[i] lists (neighbour, cost) pairs; `sources` is a tuple or list of node indices, or a
    bit mask of them (compiled engines pass a set as its mask); only nodes in `allowed` (if
    given: a set, or a bit mask of node indices) may be used, start nodes included. The
    distances from one start set are searched once (path_distances) and kept in PATH_CACHE."""
    if type(sources) is list:
        sources = tuple(sources)
    key = (id(adj), sources, allowed)
    hit = PATH_CACHE.get(key)
    if hit is None or hit[0] is not adj:
        if len(PATH_CACHE) >= 512:
            PATH_CACHE.clear()
        hit = PATH_CACHE[key] = (adj, grown_distances(adj, sources, allowed))
    return hit[1].get(target)


def path_row(adj, sources, allowed=None):
    """{node: cheapest total edge cost from any of `sources`}, the distances path_cost reads
    (same arguments, same cache): compiled engines fetch them once for a loop asking many
    targets from the same start set."""
    if type(sources) is list:
        sources = tuple(sources)
    key = (id(adj), sources, allowed)
    hit = PATH_CACHE.get(key)
    if hit is None or hit[0] is not adj:
        if len(PATH_CACHE) >= 512:
            PATH_CACHE.clear()
        hit = PATH_CACHE[key] = (adj, grown_distances(adj, sources, allowed))
    return hit[1]


def grown_distances(adj, sources, allowed):
    """path_distances(adj, sources, allowed), from the kept distances of the same start set
    less one node when PATH_CACHE has them (a network grows by one node at a time): only the
    nodes the new start node brings nearer are searched (path_extend)."""
    aid = id(adj)
    if type(sources) is int:
        mask = sources
        while mask:
            low = mask & -mask
            mask ^= low
            hit = PATH_CACHE.get((aid, sources ^ low, allowed))
            if hit is not None and hit[0] is adj:
                return path_extend(adj, hit[1], low.bit_length() - 1, allowed)
    else:
        for i in range(len(sources)):
            hit = PATH_CACHE.get((aid, sources[:i] + sources[i + 1:], allowed))
            if hit is not None and hit[0] is adj:
                return path_extend(adj, hit[1], sources[i], allowed)
    return path_distances(adj, sources, allowed)


def _node_mask(allowed):
    """The bit mask of the nodes `allowed` (a collection, a mask, or None: every node)."""
    if allowed is None:
        return -1
    if type(allowed) is int:
        return allowed
    inside = 0
    for v in allowed:
        inside |= 1 << v
    return inside


def _relax(adj, dist, heap, inside):
    """Dijkstra's search from the entries of `heap`, through nodes in the mask `inside`,
    lowering `dist` (changed in place and returned)."""
    pop, push, known = heapq.heappop, heapq.heappush, dist.get  # (looked up once per search)
    while heap:
        d, u = pop(heap)
        if d > dist[u]:
            continue  # u was reached more cheaply since this entry was pushed
        for v, w in adj[u]:
            if inside >> v & 1:
                nd = d + w
                if nd < known(v, nd + 1):
                    dist[v] = nd
                    push(heap, (nd, v))
    return dist


def path_extend(adj, dist, source, allowed=None):
    """The distances `dist` (from some start set, inside `allowed`) with `source` added to the
    start set: a search from `source` that goes on only through nodes it brings nearer. (A
    node the new start brings nearer is reached through nodes it also brings nearer, so
    nothing else can change.) A new dict: kept distances are never changed."""
    inside = _node_mask(allowed)
    dist = dict(dist)
    if not inside >> source & 1 or dist.get(source) == 0:
        return dist
    dist[source] = 0
    heap = [(0, source)]
    return _relax(adj, dist, heap, inside)


def path_distances(adj, sources, allowed=None):
    """{node: cheapest total edge cost from any of `sources`} over the nodes reachable inside
    `allowed` (None: all). `sources` and `allowed` are each a collection of node indices or a
    bit mask of them. Integer costs and Dijkstra's algorithm: the distances do not depend on
    tie order."""
    inside = _node_mask(allowed)
    if type(sources) is int:
        mask, sources = sources, []
        while mask:
            low = mask & -mask
            sources.append(low.bit_length() - 1)
            mask ^= low
    dist = {}
    heap = []
    for s in sources:
        if inside >> s & 1:
            dist[s] = 0
            heap.append((0, s))
    heapq.heapify(heap)
    return _relax(adj, dist, heap, inside)


def seats_from(p, n):
    return tuple((p + i) % n for i in range(n))


def weighted_index(r, weights):
    """The outcome index that an integer r in [0, sum(weights)) selects."""
    for i, w in enumerate(weights):
        if r < w:
            return i
        r -= w
    raise ValueError("r out of range")


# ---- history and JSON ---------------------------------------------------------------------------
def check_viewer(p, n):
    """p, checked as a viewer of a game of n players (observation, history_for): a player's
    index; CHANCE, TERMINAL and anything else would see what no player may."""
    if type(p) is not int or not 0 <= p < n:
        shown = ("CHANCE" if p == CHANCE else "TERMINAL" if p == TERMINAL else repr(p)) \
            if type(p) is int else repr(p)
        raise ValueError(f"the viewer must be a player, 0..{n - 1}, not {shown}")
    return p


def action_name(action):
    return action.split("(", 1)[0]


def reveal(seen, history, names, draws=(), hidden=None):
    """`reveal a, b`: the secret choices (marked -2 - player) of the actions `names` and the
    hidden draws (marked with their one viewer, or -1 for nobody) of the chance nodes `draws`
    made so far become public (None). hidden: lists of the indices of the entries this reveal
    may make public, where the caller keeps them (a compiled engine: codegen.passes.
    plan_hidden); they are brought up to date. Without them, every entry not yet public."""
    if hidden is None:
        hidden = ([i for i, w in enumerate(seen) if w is not None],)
    for listed in hidden:
        keep = []
        for i in listed:
            group = names if seen[i] <= -2 else draws
            if group and action_name(history[i]) in group:
                seen[i] = None
            else:
                keep.append(i)
        listed[:] = keep


def canonical_json(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# Type descriptors for JSON in generated engines: ("i",) int/player, ("b",) bool, ("e", names)
# enum member, ("s", names) bit-mask set, ("S",) set of players, ("l", elem) list,
# ("a", elem, names) enum-indexed array, ("p", elem) player-indexed array, ("g", names) graph.
def to_json_value(v, d):
    if v is None:
        return None
    k = d[0]
    if k == "i" or k == "b":
        return v
    if k == "e" or k == "g":
        return d[1][v]
    if k == "s":
        return [d[1][i] for i in bits(v)]
    if k == "S":
        return list(bits(v))
    e = d[1]
    if k == "l" or k == "p":
        if e[0] == "i" or e[0] == "b":  # (items written as they are: a copy)
            return list(v)
        return [to_json_value(x, e) for x in v]
    if k == "a":
        if e[0] == "i" or e[0] == "b":
            return dict(zip(d[2], v))
        if e[0] == "e":  # an enum member (or none) per key: its name
            names = e[1]
            return {n: None if x is None else names[x] for n, x in zip(d[2], v)}
        return {n: to_json_value(x, e) for n, x in zip(d[2], v)}
    raise AssertionError(d)


def from_json_value(j, d):
    if j is None:
        return None
    k = d[0]
    if k == "i":
        return int(j)
    if k == "b":
        return bool(j)
    if k == "e" or k == "g":
        return d[1].index(j)
    if k == "s":
        m = 0
        for n in j:
            m |= 1 << d[1].index(n)
        return m
    if k == "S":
        m = 0
        for p in j:
            m |= 1 << int(p)
        return m
    if k == "l" or k == "p":
        return [from_json_value(x, d[1]) for x in j]
    if k == "a":
        return [from_json_value(j[n], d[1]) for n in d[2]]
    raise AssertionError(d)
