"""Compiled-engine throughput of this tree against another commit, measured in one run.

Usage: python bench/compare_commits.py REV [FILES...] [--games N] [--rounds R]
       [--callgrind | --inprocess [--own-driver]] [--backend interpreter] [--all | --variants]
       [--kernel]

REV (a commit, tag or branch) is exported into a temporary folder with `git archive`. For each
rules file (each tree plays its own copy of it, since the language may have grown), both trees
play the same seeds with the same policy (bench/playouts.py's: uniform
random, an end declaration taken at once), in fresh processes that alternate, R rounds each, so
that load on a shared machine hits both alike. Prints games/s per tree (best round) and the
ratio this/REV. With --callgrind, each tree's playouts are counted in CPU instructions under
`valgrind --tool=callgrind` instead (the same count whatever else the machine is doing; the
count of a run with no games is subtracted), and the ratio is instructions REV/this. With
--backend interpreter the reference interpreter is measured instead, in decisions/s (the same
games on both trees, so the ratio is that of games/s).
--all measures every variant and player count of each file (else the base rules at --players);
--variants every variant at --players.
--kernel plays this tree's games inside its compiled playout kernel (`Game.playout`, the same
games as the driver's) while REV keeps the protocol driver: the ratio is then kernel/REV.
--inprocess times the two trees' generated modules (each compiled by its own tree; they need
only the standard library) in one process, alternating R rounds (each round new seeds, the same
for both trees: games replayed let caches keyed by values answer from the round before, which
favoured the engine that used them more, up to 15%), and prints the median of the rounds'
ratios: on a busy machine the steadiest wall-clock ratio (fresh processes can differ by tens of
percent from one to the next; a change that saves instructions may still cost time, as
allocations do, which only a timing shows).
--own-driver (with --inprocess): each tree's games are played by that tree's own driver,
`play_random_game` of its rulelang/sim.py (through the engine protocol, not the kernel), instead
of DRIVE above for both. That is the protocol path as bench/playouts.py times it, and as the
issue's 470 games/s were measured: it counts what the simulator's driver saves per step
(6436d68's called `rng.randrange` and looked each method up at every step), which DRIVE, the
same for both trees, leaves out so as to compare the engines alone.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The same driver for both trees, through the engine protocol only: uniform random choices, an
# end declaration taken as soon as it is legal, chance drawn by weight (CHANCE is -1 in every
# tree). Returns the decisions taken.
DRIVE = r"""
def drive(s, rng):
    decisions = 0
    while not s.is_terminal():
        n = s.num_choices()
        if s.current_player == -1:
            ws = s.chance_weights()
            if ws is None:
                k = rng.randrange(n)
            else:
                r = rng.randrange(sum(ws))
                k = 0
                while r >= ws[k]:
                    r -= ws[k]
                    k += 1
        else:
            k = s.end_action_index()
            if k < 0:
                k = rng.randrange(n)
            decisions += 1
        s.apply_index(k)
    return decisions
"""

PROBE = r"""
import json, random, sys, time
sys.path.insert(0, sys.argv[1])
import rulelang
""" + DRIVE + r"""
def play(game, players, seed):
    global decisions
    s = game.new_game(players)
    decisions += drive(s, random.Random(seed))
    return s

game = rulelang.load(sys.argv[2], variant=sys.argv[7] or None, backend=sys.argv[5])
players, games = int(sys.argv[3]), int(sys.argv[4])
decisions = 0
if sys.argv[6] == "kernel":
    def play(game, players, seed):
        global decisions
        s = game.new_game(players)
        decisions += game.playout(s, random.Random(seed), "random_end")[0]
        return s
play(game, players, 0)
decisions = 0
t0 = time.perf_counter()
for seed in range(1, games + 1):
    play(game, players, seed)
el = time.perf_counter() - t0
print(json.dumps({"games_per_s": games / el, "decisions_per_s": decisions / el}))
"""


# Both trees' generated modules in one process, rounds alternating: the seconds of each round.
INPROC = r"""
import importlib.util, inspect, json, os, random, sys, time

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[name] = m  # (dataclasses look their module up)
    spec.loader.exec_module(m)
    return m
""" + DRIVE + r"""
def driver(m, players, seed):
    drive(m.new_game(players), random.Random(seed))

def kernel(m, players, seed):
    m.playout(m.new_game(players), random.Random(seed), "random_end")

def own_driver(tree, m, i):
    # The tree's own rulelang/sim.py (it imports only the standard library when loaded) plays
    # the module's games through the engine protocol, as bench/playouts.py's protocol row does
    sim = load(os.path.join(tree, "rulelang", "sim.py"), "sim%d" % i)
    game = m.Game()
    play = sim.play_random_game
    kw = {"kernel": False} if "kernel" in inspect.signature(play).parameters else {}
    return lambda _m, players, seed: play(game, players, seed, **kw)

mods = [load(p, "tree%d" % i) for i, p in enumerate(sys.argv[1:3])]
players, games, rounds = map(int, sys.argv[5:8])
trees = sys.argv[8:10]
modes = [kernel if x == "kernel" else own_driver(trees[i], mods[i], i) if x == "sim"
         else driver for i, x in enumerate(sys.argv[3:5])]
times = [[], []]
for i in (0, 1):
    modes[i](mods[i], players, 0)
for r in range(rounds):
    # each round new games (seeds never played before in this process), the same for both
    # trees: replaying a round's games lets caches keyed by values (bits' members of a mask)
    # answer from the round before, which a run of distinct games does not get
    seeds = range(1 + r * games, 1 + (r + 1) * games)
    for i in ((0, 1) if r % 2 == 0 else (1, 0)):
        t0 = time.perf_counter()
        for seed in seeds:
            modes[i](mods[i], players, seed)
        times[i].append(time.perf_counter() - t0)
print(json.dumps(times))
"""


def compile_module(tree: str, path: str, variant: str | None, out: str) -> None:
    """The module of `path` generated by the rulelang of `tree`."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import rulelang; "
            "from rulelang.codegen import compile_program; "
            "open(sys.argv[3], 'w').write(compile_program("
            "rulelang.check_file(sys.argv[2], sys.argv[4] or None)))")
    subprocess.run([sys.executable, "-c", code, tree, path, out, variant or ""], check=True,
                   env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))


def in_process(old_mod: str, new_mod: str, modes: tuple[str, str], players: int, games: int,
               rounds: int, trees: tuple[str, str] = ("", "")) -> tuple[float, float, float]:
    """(games/s of REV, games/s of this tree, the median of the rounds' ratios this/REV).
    A mode is "protocol" (DRIVE), "kernel" (the module's playout kernel) or "sim" (the tree's
    own rulelang/sim.py play_random_game through the protocol: `trees` gives REV's and this
    tree's folders)."""
    out = subprocess.run([sys.executable, "-c", INPROC, old_mod, new_mod, *modes, str(players),
                          str(games), str(rounds), *trees], capture_output=True, text=True,
                         check=True)
    old_t, new_t = json.loads(out.stdout)
    median = statistics.median(o / n for o, n in zip(old_t, new_t))
    return games / min(old_t), games / min(new_t), median


def instructions(tree: str, path: str, players: int, games: int, cache: str,
                 backend: str = "compiled", mode: str = "protocol",
                 variant: str | None = None) -> int:
    """CPU instructions of `games` playouts (the same run with 0 games subtracted)."""
    counts = []
    for n in (games, 0):
        # one hash seed for both runs: the load before the games (parse, check, the cached
        # module) varies by a few million instructions with it, which the subtraction of the
        # run with no games would not remove (Acquire's 3 games measured 0.978x and 1.066x of
        # the same baseline in two runs without it)
        env = dict(os.environ, RULELANG_CACHE=cache, PYTHONDONTWRITEBYTECODE="1",
                   PYTHONHASHSEED="0")
        with tempfile.NamedTemporaryFile() as out:
            cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}",
                   sys.executable, "-c", PROBE, tree, path, str(players), str(n), backend,
                   mode, variant or ""]
            res = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
        counts.append(int(re.search(r"refs:\s+([\d,]+)", res.stderr).group(1).replace(",", "")))
    return counts[0] - counts[1]


def measure(tree: str, path: str, players: int, games: int, cache: str,
            backend: str = "compiled", mode: str = "protocol",
            variant: str | None = None) -> float:
    """games/s (compiled) or decisions/s (interpreter) of one fresh process."""
    env = dict(os.environ, RULELANG_CACHE=cache, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", PROBE, tree, path, str(players), str(games),
                          backend, mode, variant or ""],
                         capture_output=True, text=True, env=env, check=True)
    res = json.loads(out.stdout)
    return res["games_per_s"] if backend == "compiled" else res["decisions_per_s"]


def export_tree(rev: str, tmp: str) -> str:
    """The rulelang package and rules folder of commit `rev`, exported into tmp/old."""
    old = os.path.join(tmp, "old")
    os.mkdir(old)
    archive = subprocess.run(["git", "-C", HERE, "archive", rev, "rulelang", "rules"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", old], input=archive, check=True)
    return old


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev")
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--callgrind", action="store_true",
                    help="count instructions under valgrind instead of timing")
    ap.add_argument("--backend", choices=("compiled", "interpreter"), default="compiled")
    ap.add_argument("--variants", action="store_true",
                    help="every variant of each file, at --players")
    ap.add_argument("--all", action="store_true",
                    help="every variant and player count of each file")
    ap.add_argument("--kernel", action="store_true",
                    help="this tree plays inside its playout kernel (compiled)")
    ap.add_argument("--inprocess", action="store_true",
                    help="time both trees' modules in one process, rounds alternating")
    ap.add_argument("--own-driver", action="store_true",
                    help="with --inprocess: each tree's protocol path is its own sim driver")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    if args.inprocess and (args.callgrind or args.backend != "compiled"):
        ap.error("--inprocess times compiled modules (not with --callgrind or the interpreter)")
    if args.own_driver and not args.inprocess:
        ap.error("--own-driver goes with --inprocess")
    protocol = "sim" if args.own_driver else "protocol"
    mode = {"old": protocol, "new": "kernel" if args.kernel else protocol}
    files = args.files or sorted(glob.glob(os.path.join(HERE, "rules", "*.rules")))
    with tempfile.TemporaryDirectory() as tmp:
        old = export_tree(args.rev, tmp)
        unit = "decisions/s" if args.backend == "interpreter" else "games/s"
        print(f"{args.backend}, {'instructions' if args.callgrind else unit}")
        print(f"{'rules file':<36} {args.rev[:12]:>14} {'this tree':>14} {'ratio':>7}")
        for path in files:
            import rulelang

            g = rulelang.load(path)
            if args.all:
                rows = [(v, p) for v in [None, *g.variants]
                        for p in range(g.min_players, g.max_players + 1)]
            elif args.variants:
                rows = [(v, min(max(args.players, g.min_players), g.max_players))
                        for v in [None, *g.variants]]
            else:
                rows = [(None, min(max(args.players, g.min_players), g.max_players))]
            if not os.path.exists(os.path.join(old, os.path.relpath(path, HERE))):
                print(f"{os.path.basename(path):<36} (not in {args.rev[:12]})", flush=True)
                continue
            for variant, players in rows:
                label = f"{os.path.basename(path)} {variant or ''} {players}p"
                if args.inprocess:
                    mods = {}
                    for name, tree in (("old", old), ("new", HERE)):
                        own = os.path.join(tree, os.path.relpath(path, HERE))
                        mods[name] = os.path.join(tmp, f"{name}_engine.py")
                        compile_module(tree, own, variant, mods[name])
                    old_gs, new_gs, ratio = in_process(
                        mods["old"], mods["new"], (mode["old"], mode["new"]), players,
                        args.games, max(args.rounds, 2), (old, HERE))
                    print(f"{label:<36} {old_gs:>14.1f} {new_gs:>14.1f} {ratio:>7.3f}",
                          flush=True)
                    continue
                if args.callgrind:
                    n = {}
                    for name, tree in (("old", old), ("new", HERE)):
                        own = os.path.join(tree, os.path.relpath(path, HERE))
                        cache = os.path.join(tmp, "cache-" + name)
                        measure(tree, own, players, 1, cache, "compiled", mode[name],
                                variant)  # compile
                        n[name] = instructions(tree, own, players, args.games, cache,
                                               args.backend, mode[name], variant)
                    print(f"{label:<36} {n['old']:>14,} {n['new']:>14,} "
                          f"{n['old'] / n['new']:>7.3f}", flush=True)
                    continue
                best = {"old": 0.0, "new": 0.0}
                for _ in range(args.rounds):
                    for name, tree in (("old", old), ("new", HERE)):
                        cache = os.path.join(tmp, "cache-" + name)
                        own = os.path.join(tree, os.path.relpath(path, HERE))
                        best[name] = max(best[name], measure(
                            tree, own, players, args.games, cache, args.backend, mode[name],
                            variant))
                print(f"{label:<36} {best['old']:>14.1f} {best['new']:>14.1f} "
                      f"{best['new'] / best['old']:>7.3f}", flush=True)


if __name__ == "__main__":
    main()
