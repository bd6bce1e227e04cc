"""Weighted graphs: declarations, checks and the cheapest-path builtins on both back ends."""

from __future__ import annotations

import pytest

import rulelang

GAME = """game G
players 2..2
enum City {{ A, B, C, D, E }}
graph Map(City) {{ A - B: 10, B - C: 5, A - C: 20, C - D: 1 }}
state {{ n: int? = none }}
flow {{
  n = {expr}
}}
score p => if n == none then -1 else n
"""


@pytest.mark.parametrize(("expr", "value"), [
    ("path_cost(Map, {A}, D)", 16),            # A-B-C-D beats A-C-D (21)
    ("path_cost(Map, [A], D, {A, C, D})", 21),  # B left out
    ("path_cost(Map, {A, D}, D)", 0),
    ("path_cost(Map, {A}, E)", -1),             # E has no edge: none
    ("path_cost(Map, {}, B)", -1),
    ("edge_cost(Map, C, B)", 5),
    ("edge_cost(Map, A, D)", -1),
    ("len(graph_neighbors(Map, C))", 3),
    ("sum(edge_cost(Map, C, x) for x in graph_neighbors(Map, C))", 26),
])
def test_graph_builtins(backend, expr, value):
    game = rulelang.load_text(GAME.format(expr=expr), "g.rules", backend=backend)
    assert game.new_game(2).scores() == [value, value]


@pytest.mark.parametrize(("graph", "code", "where"), [
    ("graph Map(City) { A - Q: 1 }", "E010", (4, 19)),
    ("graph Map(City) { A - A: 1 }", "E012", (4, 19)),
    ("graph Map(City) { A - B: 1, B - A: 2 }", "E011", (4, 29)),
    ("graph Map(Town) { A - B: 1 }", "E010", (4, 7)),
])
def test_graph_declaration_errors(graph, code, where):
    text = GAME.format(expr="0").replace("graph Map(City) { A - B: 10, B - C: 5, A - C: 20, "
                                         "C - D: 1 }", graph)
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.check_text(text, "g.rules")
    d = err.value.diagnostics[0]
    assert (d.code, d.span.line, d.span.col) == (code, *where)


def test_graph_builtin_argument_errors():
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.check_text(GAME.format(expr="path_cost(City.A, {A}, D)"), "g.rules")
    assert err.value.diagnostics[0].code == "E012"
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.check_text(GAME.format(expr="path_cost(Map, {A})"), "g.rules")
    assert err.value.diagnostics[0].code == "E013"


# -- graphs as values (graph<E>) --------------------------------------------------------------
VALUES = """game V
players 2..2
enum City { A, B, C, D }
enum Maps { North, South }
param map: Maps = North
graph Benelux(City) { A - B: 5, B - C: 2, A - C: 9, C - D: 1 }
graph Central(City) { A - B: 1, B - D: 3, A - C: 4 }
const MAP: graph<City> = if map == North then Benelux else Central
const BOTH: list<graph<City>> = [Benelux, Central]
def cost(g: graph<City>, to: City) -> int = path_cost(g, {A}, to)
def pick(south: bool) -> graph<City> = if south then Central else Benelux
state { out: list<int?> = [] }
flow {
  let g = pick(map == South)
  out = [cost(MAP, D), cost(g, D), edge_cost(g, A, B), len(graph_neighbors(MAP, A)),
         cost(BOTH[1], C), edge_cost(pick(true), C, D)]
  out = out + [sum(cost(x, B) for x in BOTH), count(x == MAP for x in BOTH)]
  choose players[0] { done() { } }
}
score p => 0
"""


@pytest.mark.parametrize(("map_name", "expected"), [
    # Benelux: A-B-C-D = 5+2+1 = 8 beats A-C-D = 10; A-B edge 5; A's neighbours B, C;
    # Central: A-C = 4; no C-D edge. sum over both of A->B: 5 + 1. MAP is one of the two.
    ("North", [8, 8, 5, 2, 4, None, 6, 1]),
    # Central: A-B-D = 1+3 = 4; A-B edge 1; A's neighbours B, C.
    ("South", [4, 4, 1, 2, 4, None, 6, 1]),
])
def test_graph_values_select_and_pass_graphs(backend, map_name, expected):
    game = rulelang.load_text(VALUES, "v.rules", params={"map": map_name}, backend=backend)
    s = game.new_game(2)
    assert s.get_var("out") == expected
    # the flow local holding the selected graph shows as the graph's name
    assert s.to_json().count('"g":"' + ("Central" if map_name == "South" else "Benelux")) == 1


def test_a_graph_constant_folds_to_the_chosen_graph_in_compiled_code():
    from rulelang.codegen.module import compile_program

    program = rulelang.check_text(VALUES, "v.rules", params={"map": "South"})
    text = compile_program(program)
    # MAP is known at load: its calls use Central's own table, with no run-time selection.
    assert "path_cost(GRAPH_Central, " in text
    assert "len(GRAPH_NEIGHBORS_Central[0])" in text
    # g is chosen at run time: through the tuple of every graph's table.
    assert "EDGE_COSTS[" in text and "GRAPHS_GRAPH[" in text


def test_graph_types_print_their_node_type():
    text = VALUES.replace("def pick(south: bool) -> graph<City> = if south then Central else "
                          "Benelux", "def pick(south: bool) -> graph<City> = if south then "
                          "Central else 3")
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.check_text(text, "v.rules")
    assert err.value.diagnostics[0].message == "branches have different types: graph<City> and int"


def test_a_graph_named_like_a_member_is_the_member_where_that_enum_is_wanted(backend):
    text = """game M
players 2..2
enum City { A, B, C }
enum Maps { Benelux, Central }
param map: Maps = Central
graph Benelux(City) { A - B: 1 }
graph Central(City) { A - B: 2, B - C: 2 }
const MAP: graph<City> = if map == Benelux then Benelux else Central
state { n: int = 0 }
flow { n = path_cost(MAP, {A}, B)
  choose players[0] { done() { } } }
score p => n
"""
    for value, cost in (("Benelux", 1), ("Central", 2)):
        game = rulelang.load_text(text, "m.rules", params={"map": value}, backend=backend)
        assert game.new_game(2).scores() == [cost, cost]
    assert rulelang.load_text(text, "m.rules", backend=backend).new_game(2).scores() == [2, 2]


def _floyd(adj, sources, target, allowed):
    """Cheapest cost by relaxing every edge until nothing changes (no cache, no heap)."""
    inf = 10 ** 9
    dist = [inf] * len(adj)
    for s in sources:
        if allowed is None or s in allowed:
            dist[s] = 0
    changed = True
    while changed:
        changed = False
        for u, edges in enumerate(adj):
            for v, w in edges:
                if dist[u] < inf and (allowed is None or v in allowed) and dist[u] + w < dist[v]:
                    dist[v] = dist[u] + w
                    changed = True
    return None if dist[target] == inf else dist[target]


def test_path_cost_cache_never_changes_a_result():
    """runtime.path_cost keeps each start set's distances (PATH_CACHE); whatever the cache
    holds, in whatever order the calls come, every answer equals a cache-free search, with
    start and allowed sets given as sets or as bit masks, and for two graphs asked
    alternately."""
    import random

    from rulelang import runtime

    rng = random.Random(7)
    graphs = []
    for _ in range(2):
        n = 9
        adj = [[] for _ in range(n)]
        for _e in range(14):
            a, b, w = rng.randrange(n), rng.randrange(n), rng.randrange(0, 12)
            if a != b:
                adj[a].append((b, w))
                adj[b].append((a, w))
        graphs.append(tuple(tuple(e) for e in adj))
    runtime.PATH_CACHE.clear()
    checked = 0
    for _ in range(3000):
        adj = graphs[rng.randrange(2)]
        sources = tuple(sorted(rng.sample(range(9), rng.randrange(0, 3))))
        target = rng.randrange(9)
        allowed = None if rng.random() < 0.3 else frozenset(rng.sample(range(9), 6))
        expected = _floyd(adj, sources, target, allowed)
        assert runtime.path_cost(adj, sources, target, allowed) == expected
        if allowed is not None:
            mask = sum(1 << m for m in allowed)
            assert runtime.path_cost(adj, list(sources), target, mask) == expected
            # compiled engines pass a set of sources as its bit mask
            smask = sum(1 << m for m in sources)
            assert runtime.path_cost(adj, smask, target, mask) == expected
            assert runtime.path_cost(adj, smask, target, allowed) == expected
        checked += expected is not None
    assert checked > 1000  # most questions have a path: the comparison is not all-None
    assert 0 < len(runtime.PATH_CACHE) <= 512


def test_growing_start_sets_extend_kept_distances():
    """A start set that grows by one node at a time (a network) is searched from the kept
    distances of the set before it (runtime.path_extend): every answer still equals a
    cache-free search, for masks and tuples, with and without allowed nodes."""
    import random

    from rulelang import runtime

    rng = random.Random(3)
    n = 12
    adj = [[] for _ in range(n)]
    for _e in range(24):
        a, b, w = rng.randrange(n), rng.randrange(n), rng.randrange(0, 9)
        if a != b:
            adj[a].append((b, w))
            adj[b].append((a, w))
    adj = tuple(tuple(e) for e in adj)
    runtime.PATH_CACHE.clear()
    extended = []
    real = runtime.path_extend

    def spy(*args):
        extended.append(args[2])
        return real(*args)
    checked = 0
    try:
        runtime.path_extend = spy
        for game in range(60):
            allowed = sum(1 << v for v in rng.sample(range(n), 9)) if game % 2 else None
            members = None if allowed is None else frozenset(
                v for v in range(n) if allowed >> v & 1)
            start = 0
            for _step in range(6):
                start |= 1 << rng.randrange(n)
                nodes = tuple(v for v in range(n) if start >> v & 1)
                for target in range(n):
                    expected = _floyd(adj, nodes, target, members)
                    assert runtime.path_cost(adj, start, target, allowed) == expected
                    assert runtime.path_cost(adj, nodes, target, members) == expected
                    checked += expected is not None
    finally:
        runtime.path_extend = real
    assert checked > 2000 and len(extended) > 300


def test_connected_mask_is_connected_on_masks():
    """The compiled engines' connected_mask (bit masks, an isolated start returned at once)
    gives the cells of the interpreter's connected, on random regions of a 12 x 9 grid, the
    start in the region or not, with or without neighbours in it."""
    import random

    from rulelang.runtime import connected, connected_mask, grid_neighbors

    nbs = grid_neighbors(12, 9)
    masks = tuple(sum(1 << n for n in ns) for ns in nbs)
    rng = random.Random(5)
    isolated = 0
    for _ in range(600):
        density = rng.choice((0.05, 0.3, 0.6, 0.9))
        within = {t for t in range(108) if rng.random() < density}
        start = rng.randrange(108)
        got = connected_mask(start, sum(1 << t for t in within), masks)
        want = connected(start, within, nbs)
        assert got == sum(1 << t for t in want), (start, sorted(within))
        isolated += got == 1 << start
    assert 50 < isolated < 550  # both paths taken
