"""Helpers whose meaning both back ends share: integer rounding, grids, seats, JSON, digests.

Generated modules carry their own copy of these functions (see codegen); keep them stdlib-only
and free of rulelang imports.
"""

from __future__ import annotations

import hashlib
import json

CHANCE = -1
TERMINAL = -2


def floor_div(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("division by zero")
    return a // b


def mod(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("modulo by zero")
    return a % b


def ceil_div(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("division by zero")
    return -((-a) // b)


def round_up(a: int, m: int) -> int:
    """a rounded up to the next multiple of m (Acquire's bonus splits)."""
    return ceil_div(a, m) * m


def round_down(a: int, m: int) -> int:
    return floor_div(a, m) * m


def grid_neighbors(cols: int, rows: int) -> tuple[tuple[int, ...], ...]:
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


def connected(start: int, within, neighbors) -> frozenset:
    """Cells reachable from start through cells of `within` (start itself always included)."""
    seen = {start}
    stack = [start]
    while stack:
        cur = stack.pop()
        for n in neighbors[cur]:
            if n not in seen and n in within:
                seen.add(n)
                stack.append(n)
    return frozenset(seen)


def path_cost(adj, sources, target, allowed=None):
    """Cheapest total edge cost from any of `sources` to `target` (None if unreachable).

    adj[i] lists (neighbour, cost) pairs; only nodes in `allowed` (if given) may be used.
    Integer costs and Dijkstra's algorithm: the result does not depend on tie order.
    """
    import heapq

    dist = {}
    heap = []
    for s in sources:
        if allowed is None or s in allowed:
            dist[s] = 0
            heap.append((0, s))
    heapq.heapify(heap)
    while heap:
        d, u = heapq.heappop(heap)
        if u == target:
            return d
        if d > dist.get(u, d):
            continue
        for v, w in adj[u]:
            if allowed is not None and v not in allowed:
                continue
            nd = d + w
            if nd < dist.get(v, nd + 1):
                dist[v] = nd
                heapq.heappush(heap, (nd, v))
    return None


def seats_from(p: int, n: int) -> tuple[int, ...]:
    return tuple((p + i) % n for i in range(n))


def weighted_index(r: int, weights) -> int:
    """The outcome index that an integer r in [0, sum(weights)) selects."""
    for i, w in enumerate(weights):
        if r < w:
            return i
        r -= w
    raise ValueError("r out of range")


def canonical_json(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def action_name(action: str) -> str:
    return action.split("(", 1)[0]
