"""Run-time helpers copied verbatim into every generated engine (stdlib only, no rulelang).

Sets are int bit masks (bit i = member i), lists and arrays are Python lists.
"""

from __future__ import annotations

import hashlib
import json

CHANCE = -1
TERMINAL = -2


class IllegalAction(Exception):
    """An action that is not among the legal actions; the state is left untouched."""


class RulesRuntimeError(Exception):
    """A fault inside the rules, with its .rules location."""

    def __init__(self, message, location):
        self.message = message
        self.location = location
        super().__init__(f"{location}: {message}")

    def __reduce__(self):
        return (type(self), (self.message, self.location))


# Loaded through rulelang, the module raises rulelang's own error classes (rulelang puts them
# here before running the module); standalone, it uses the two classes above.
if "_RULELANG_ERRORS" in globals():
    IllegalAction, RulesRuntimeError = globals()["_RULELANG_ERRORS"]


def _nn(v, where):
    if v is None:
        raise RulesRuntimeError("value is none", where)
    return v


class _BitsCache(dict):
    """Members of a bit-mask set in ascending order, as a shared tuple (never to be changed):
    a table for masks below 256, a bounded cache for larger ones with few members, since the
    same set (a hand, a board region) is usually walked several times in a row. A hit is a
    plain dict lookup (no Python frame); a miss lands in `__missing__`."""
    __slots__ = ()

    def __missing__(self, m):
        if m < 256:
            return _SMALL_BITS[m]
        out = []
        x = m
        while x:
            low = x & -x
            out.append(low.bit_length() - 1)
            x ^= low
        r = tuple(out)
        if len(r) <= 32:
            if len(self) >= 2048:
                self.clear()
            self[m] = r
        return r


_BITS_CACHE = _BitsCache()
_bits = _BITS_CACHE.__getitem__


_SMALL_BITS = tuple(tuple(i for i in range(8) if m >> i & 1) for m in range(256))


def _kth_bit(m, k):
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
        bits = _SMALL_BITS[word & 0xFF]
        if k < len(bits):
            return shift + bits[k]
        k -= len(bits)
        word >>= 8
        shift += 8


def _setof_nn(values):
    """A set of values known not to be none."""
    m = 0
    for v in values:
        m |= 1 << v
    return m


def _listdom(values):
    """The set of the values in a list that are not none (a parameter domain given as a list)."""
    m = 0
    for v in values:
        if v is not None:
            m |= 1 << v
    return m


def _setof(values, where):
    m = 0
    for v in values:
        if v is None:
            raise RulesRuntimeError("a set cannot hold none", where)
        m |= 1 << v
    return m


def _lix(lst, i, where):
    if not 0 <= i < len(lst):
        raise RulesRuntimeError(f"index {i} out of range (size {len(lst)})", where)
    return lst[i]


def _div(a, b, where):
    if b == 0:
        raise RulesRuntimeError("division by zero", where)
    return a // b


def _mod(a, b, where):
    if b == 0:
        raise RulesRuntimeError("modulo by zero", where)
    return a % b


def _cdiv(a, b, where):
    if b == 0:
        raise RulesRuntimeError("division by zero", where)
    return -((-a) // b)


def _agg(values, fn, name, where):
    values = list(values)
    if not values:
        raise RulesRuntimeError(f"{name}() of an empty collection", where)
    return fn(values)


def _range(lo, hi, step, where):
    if step <= 0:
        raise RulesRuntimeError("range step must be positive", where)
    return list(range(lo, hi + 1, step))


def _set_remove(m, v, where):
    if not (m >> v) & 1:
        raise RulesRuntimeError("removing a value that is not in the set", where)
    return m ^ (1 << v)


def _list_remove(lst, v, where):
    if v not in lst:
        raise RulesRuntimeError("removing a value that is not in the list", where)
    lst.remove(v)


def _connected(start, within, nbm):
    seen = 1 << start
    frontier = seen
    while frontier:
        low = frontier & -frontier
        frontier ^= low
        new = nbm[low.bit_length() - 1] & within & ~seen
        seen |= new
        frontier |= new
    return seen


def _reveal(seen, history, names):
    """`reveal names`: those secret choices (marked -2 - player) become public (None)."""
    for i, w in enumerate(seen):
        if w is not None and w <= -2 and history[i].split("(", 1)[0] in names:
            seen[i] = None


def _deep(v):
    """A copy of a list value (lists of lists included); other values are immutable."""
    if type(v) is list:
        return [_deep(x) for x in v]
    return v


# Type descriptors for JSON: ("i",) int/player, ("b",) bool, ("e", names) enum member,
# ("s", names) bit-mask set, ("S", elem) set of players, ("l", elem) list,
# ("a", elem, names) enum-indexed array, ("p", elem) player-indexed array.
def _fmt(v, d):
    if v is None:
        return None
    k = d[0]
    if k == "i" or k == "b":
        return v
    if k == "e":
        return d[1][v]
    if k == "s":
        return [d[1][i] for i in _bits(v)]
    if k == "S":
        return list(_bits(v))
    if k == "l" or k == "p":
        return [_fmt(x, d[1]) for x in v]
    if k == "a":
        return {n: _fmt(x, d[1]) for n, x in zip(d[2], v)}
    raise AssertionError(d)


def _parse(j, d):
    if j is None:
        return None
    k = d[0]
    if k == "i":
        return int(j)
    if k == "b":
        return bool(j)
    if k == "e":
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
        return [_parse(x, d[1]) for x in j]
    if k == "a":
        return [_parse(j[n], d[1]) for n in d[2]]
    raise AssertionError(d)


def _canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _round_up(a, m, where):
    return _cdiv(a, m, where) * m


def _round_down(a, m, where):
    return _div(a, m, where) * m


def _li(lst, i, where):
    if not 0 <= i < len(lst):
        raise RulesRuntimeError(f"index {i} out of range (size {len(lst)})", where)
    return i


def _fill(v, sizes):
    """An array of the given sizes (outermost first) with every entry a copy of v."""
    if not sizes:
        return _deep(v)
    if len(sizes) == 1 and type(v) is not list:
        return [v] * sizes[0]
    return [_fill(v, sizes[1:]) for _ in range(sizes[0])]
