"""Random-playout throughput of every rules file, variant and player count, measured in one run.

Usage: python bench/playouts.py [FILES...] [--games N] [--interp-games M] [--players P ...]
           [--rounds R] [--peer CMD [--peer-rules FILE] [--peer-players P]]
           [--jobs-games G] [--json OUT]

Rows: one per (rules file, variant, player count), the files found in rules/*.rules unless
FILES are given, every variant a file declares and every player count it allows (or those of
--players). Each row plays the same seeds on
- `protocol`: the compiled engine through the engine protocol (rulelang.sim's driver, one
  `apply_index` per step),
- `kernel`: the same games played inside the compiled engine's playout kernel (`playout`), which
  makes the same choices and draws, so both play exactly the same games (the digests of the
  final states are compared, and a difference stops the run),
- `interpreter`: the reference interpreter on M seeds after those (new ones each round, the
  protocol row's engine playing them too for the ratio),
and prints games/s and decisions/s, the ratios kernel/protocol and protocol/interpreter, the
peak memory of one game (tracemalloc, KiB) on each and the time to clone a mid-game state.
Policy: uniform random legal choices, an end declaration taken as soon as it is legal, chance
drawn from Random(seed) by weight. With --rounds R each timing is the best of R runs, taken in
turn, so that load on a shared machine hits every engine alike. Round r plays seeds
r*N..(r+1)*N-1, and the kernel plays them on a module of its own: no timing replays games its
module has played (caches kept by value, such as bits' members of a mask, answer a replayed
game from the games before, which distinct games do not get: up to 7% on Acquire).

`--peer CMD` runs an external engine in the same run and prints its games/s and the ratios
kernel/peer and protocol/peer, on the row of --peer-rules (default rules/acquire.rules, no
variant) and --peer-players (default 4). The peer protocol: CMD (split like a shell line) is run
with `--games N --seed S --players P` appended; it plays N games with the same policy (its own
random numbers, seeded from S) and prints, as the last line of its output, one JSON object with
at least "games" (N) and "seconds" (the time of the games alone, not of the process start).
bench/peers/acquire_fast.py and bench/peers/acquire_tuned.py (about twice as fast) are such peers:
hand-tuned stdlib Acquire engines.

`--jobs-games G` also times `rulelang simulate`'s library call on G games of the peer row with
--jobs 1 and --jobs 2 and prints the ratio (only meaningful on a quiet machine with 2 cores),
and next to it what the machine itself gives two busy processes: bench/peers/acquire_fast.py
playing G games alone, then two copies of it at once (no pool, no messages between them), and
the games/s of the pair over the games/s of one. `--jobs 2` cannot beat that ratio.

`--baseline REV` also measures each row on commit REV (exported with `git archive`) and prints
this tree's ratio to it for the protocol path (each tree's own simulator driver over its own
engine, as the protocol row plays), the engine alone (both engines under compare_commits' one
driver), the kernel (against REV's protocol path) and the interpreter, measured in one run. The
compiled rows time both trees' generated modules in one process, rounds alternating (at least
6), and take the median of the rounds' ratios (bench/compare_commits.py --inprocess
[--own-driver]: within about 1.5% between runs on a busy machine); the
interpreter row runs compare_commits' probe in fresh processes that alternate, R rounds each
(--rounds). For instruction counts that do not depend on the machine's load use
bench/compare_commits.py --callgrind.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import compare_commits  # noqa: E402  (bench/ is this script's folder, first on sys.path)

import rulelang  # noqa: E402
from rulelang.sim import random_playout  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(game, players: int, seeds: range, kernel: bool = False) -> dict:
    """Play the seeds; games/s, decisions/s and the digest of every final state."""
    finals = []
    decisions = 0
    t0 = time.perf_counter()
    for seed in seeds:
        state, d, _c = random_playout(game, players, seed, kernel)
        decisions += d
        finals.append(state)
    el = time.perf_counter() - t0
    n = max(len(seeds), 1)
    return {"games": len(seeds), "seconds": el, "games_per_s": len(seeds) / el if el else 0.0,
            "decisions_per_s": decisions / el if el else 0.0, "decisions_per_game": decisions / n,
            "digests": [s.digest() for s in finals]}


def engine_instance(path: str, variant: str | None, name: str):
    """A Game of its own generated module, loaded apart from rulelang.load's: the kernel row
    plays the protocol row's seeds on it, so that neither replays games the other's module has
    seen (caches kept by value, such as bits' members of a mask, would answer from the games
    before, which a run of distinct games does not get)."""
    from rulelang.codegen import compile_program

    text = compile_program(rulelang.check_file(path, variant))
    module = types.ModuleType(name)
    sys.modules[name] = module  # (dataclasses look their module up)
    exec(compile(text, f"<{name}>", "exec"), module.__dict__)
    return module.GAME


def best(runs: list[dict]) -> dict:
    out = min(runs, key=lambda r: r["seconds"])
    return {k: v for k, v in out.items() if k != "digests"}


def mid_game(game, players: int, seed: int = 1):
    rng = random.Random(seed)
    s = game.new_game(players)
    for _ in range(150):
        if s.is_terminal():
            break
        s.apply_index(rng.randrange(s.num_choices()))
    return s


def clone_us(state, reps: int = 2000) -> float:
    best_us = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            state.clone()
        best_us = min(best_us, (time.perf_counter() - t0) / reps * 1e6)
    return best_us


def peak_kib(game, players: int, kernel: bool = False) -> float:
    tracemalloc.start()
    random_playout(game, players, 12345, kernel)
    _cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1024


def run_peer(cmd: str, games: int, seed: int, players: int) -> dict:
    argv = shlex.split(cmd) + ["--games", str(games), "--seed", str(seed),
                               "--players", str(players)]
    out = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    if data.get("games") != games:
        raise SystemExit(f"peer played {data.get('games')} games, not {games}: {cmd}")
    return {"games": games, "seconds": data["seconds"],
            "games_per_s": games / data["seconds"]}


def jobs_ratio(path: str, players: int, games: int) -> dict:
    from rulelang.sim import simulate

    out = {}
    for jobs in (1, 2):
        # the games/s simulate prints: its games, not the load of the file before them (which
        # both runs pay alike, so it would pull the ratio towards 1)
        summary = simulate(path, players, games, seed=1, jobs=jobs, backend="compiled")
        out[jobs] = summary["timing"]["games_per_sec"]
    return {"games": games, "jobs1_games_per_s": out[1], "jobs2_games_per_s": out[2],
            "ratio": out[2] / out[1]}


def pair_ratio(games: int, players: int) -> dict:
    """The machine's own two-process ratio: the hand-tuned peer alone, then two copies at once."""
    cmd = [sys.executable, os.path.join(ROOT, "bench", "peers", "acquire_fast.py"),
           "--games", str(games), "--players", str(players)]

    def seconds(out: str) -> float:
        return json.loads(out.strip().splitlines()[-1])["seconds"]

    alone = seconds(subprocess.run(cmd + ["--seed", "1"], capture_output=True, text=True,
                                   check=True).stdout)
    pair = [subprocess.Popen(cmd + ["--seed", str(1 + i * games)], stdout=subprocess.PIPE,
                             text=True) for i in range(2)]
    both = [seconds(proc.communicate()[0]) for proc in pair]
    # the pair's games/s (2 G games in the time of the slower) over one's (G games alone)
    return {"games": games, "alone_s": alone, "pair_s": both, "ratio": 2 * alone / max(both)}


def rows_of(path: str, counts: list[int] | None) -> list[tuple[str | None, int]]:
    g = rulelang.load(path, backend="interpreter")
    allowed = range(g.min_players, g.max_players + 1)
    players = [p for p in counts if p in allowed] if counts else list(allowed)
    return [(v, p) for v in [None, *g.variants] for p in players]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--games", type=int, default=100, help="compiled games per row")
    ap.add_argument("--interp-games", type=int, default=2, help="interpreter games per row")
    ap.add_argument("--players", type=int, nargs="*", help="player counts (default: all)")
    ap.add_argument("--rounds", type=int, default=1, help="best of R timings per engine")
    ap.add_argument("--peer", help="external engine command (see the module docstring)")
    ap.add_argument("--peer-rules", default=os.path.join("rules", "acquire.rules"))
    ap.add_argument("--peer-players", type=int, default=4)
    ap.add_argument("--jobs-games", type=int, default=0)
    ap.add_argument("--baseline", metavar="REV",
                    help="also measure each row on commit REV and print the ratios to it")
    ap.add_argument("--json", dest="json_out")
    args = ap.parse_args()
    files = args.files or sorted(glob.glob(os.path.join(ROOT, "rules", "*.rules")))
    out_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = compare_commits.export_tree(args.baseline, tmp) if args.baseline else None
        table(files, args, out_rows, base, tmp)
    if args.jobs_games:
        path = os.path.join(ROOT, args.peer_rules)
        jr = jobs_ratio(path, args.peer_players, args.jobs_games)
        print(f"simulate {args.peer_rules} {args.peer_players}p, {args.jobs_games} games: "
              f"--jobs 1 {jr['jobs1_games_per_s']:.0f} games/s, --jobs 2 "
              f"{jr['jobs2_games_per_s']:.0f} games/s, ratio {jr['ratio']:.2f}x")
        pr = pair_ratio(args.jobs_games, args.peer_players)
        print(f"the machine: two busy processes at once (bench/peers/acquire_fast.py, "
              f"{args.jobs_games} games each) play {pr['ratio']:.2f}x the games/s of one "
              f"({pr['alone_s']:.2f} s alone, {max(pr['pair_s']):.2f} s as a pair)")
        out_rows.append({"jobs": jr, "machine_pair": pr})
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(out_rows, f, indent=1)


def against_baseline(base: str, tmp: str, path: str, variant: str | None, players: int,
                     args) -> dict:
    """This tree's ratio to the baseline tree for the protocol path, the kernel and the
    interpreter on one row: the compiled rows in one process (compare_commits.in_process), the
    interpreter's in fresh processes taken in turn (compare_commits' probe)."""
    own = os.path.join(base, os.path.relpath(path, ROOT))
    if not os.path.exists(own):
        return {}  # the file is newer than the baseline
    mods = {}
    for name, tree, p in (("old", base, own), ("new", ROOT, path)):
        mods[name] = os.path.join(tmp, f"{name}_engine.py")
        compare_commits.compile_module(tree, p, variant, mods[name])
    out = {}
    # protocol: each tree's own simulator driver (rulelang/sim.py) over its own engine, as the
    # protocol row times it; engine: both engines under one driver (compare_commits' DRIVE), the
    # engines' share alone; kernel: this tree's kernel against REV's own driver
    for label, modes in (("protocol", ("sim", "sim")), ("engine", ("protocol", "protocol")),
                         ("kernel", ("sim", "kernel"))):
        out[label] = compare_commits.in_process(mods["old"], mods["new"], modes, players,
                                                args.games, max(args.rounds, 6),
                                                (base, ROOT))[2]
    if args.interp_games > 0:
        best = {"old": 0.0, "new": 0.0}
        for _ in range(max(args.rounds, 1)):
            for name, tree, p in (("old", base, own), ("new", ROOT, path)):
                cache = os.path.join(tmp, "cache-" + name)
                best[name] = max(best[name], compare_commits.measure(
                    tree, p, players, args.interp_games, cache, "interpreter", "protocol",
                    variant))
        out["interpreter"] = best["new"] / best["old"]
    return out


def table(files: list[str], args, out_rows: list, base: str | None, tmp: str) -> None:
    for path in files:
        rel = os.path.relpath(path, ROOT)
        t0 = time.perf_counter()
        rulelang.check_file(path)
        check_ms = (time.perf_counter() - t0) * 1000
        print(f"{rel}  (parse+check {check_ms:.0f} ms)")
        for variant, players in rows_of(path, args.players):
            interp = rulelang.load(path, variant=variant, backend="interpreter")
            comp = rulelang.load(path, variant=variant, backend="compiled")
            kern = engine_instance(path, variant, f"kernel_{len(out_rows)}")
            has_kernel = hasattr(kern, "playout")
            peer_here = (args.peer and variant is None and players == args.peer_players
                         and os.path.samefile(path, os.path.join(ROOT, args.peer_rules)))
            timings: dict[str, list[dict]] = {"protocol": [], "kernel": [], "peer": []}
            for r in range(max(args.rounds, 1)):
                # each round new games: a module that plays its games again gets answers from
                # its caches that a run of distinct games does not (engine_instance)
                seeds = range(r * args.games, (r + 1) * args.games)
                timings["protocol"].append(run(comp, players, seeds))
                if has_kernel:
                    timings["kernel"].append(run(kern, players, seeds, kernel=True))
                if peer_here:
                    timings["peer"].append(run_peer(args.peer, args.games, r * args.games,
                                                    players))
            prot = best(timings["protocol"])
            row = {"file": rel, "variant": variant, "players": players,
                   "parse_check_ms": check_ms, "protocol": prot}
            if has_kernel:
                if timings["kernel"][0]["digests"] != timings["protocol"][0]["digests"]:
                    raise SystemExit(f"{rel} {variant} {players}p: the kernel's games differ "
                                     "from the protocol driver's")
                row["kernel"] = best(timings["kernel"])
                row["ratio_kernel_protocol"] = row["kernel"]["games_per_s"] / prot["games_per_s"]
            if args.interp_games > 0:
                # best of R like the other rows (the first round also pays the loaded game's
                # one-off work: functions made, memo trials decided), each round new seeds,
                # past those of the rows above, played by both engines; the ratio is the
                # median of the rounds' ratios
                m, start = args.interp_games, max(args.rounds, 1) * args.games
                pairs = [(run(interp, players, range(start + r * m, start + (r + 1) * m)),
                          run(comp, players, range(start + r * m, start + (r + 1) * m)))
                         for r in range(max(args.rounds, 1))]
                row["interpreter"] = best([ri for ri, _same in pairs])
                row["ratio_protocol_interpreter"] = statistics.median(
                    ri["seconds"] / same["seconds"] for ri, same in pairs)
            row["clone_us_compiled"] = clone_us(mid_game(comp, players))
            row["clone_us_interpreter"] = clone_us(mid_game(interp, players), 100)
            row["peak_kib_protocol"] = peak_kib(comp, players)
            if has_kernel:
                row["peak_kib_kernel"] = peak_kib(kern, players, kernel=True)
            row["peak_kib_interpreter"] = peak_kib(interp, players)
            if peer_here:
                row["peer"] = min(timings["peer"], key=lambda r: r["seconds"])
                row["peer_command"] = args.peer
                row["ratio_protocol_peer"] = prot["games_per_s"] / row["peer"]["games_per_s"]
                if has_kernel:
                    row["ratio_kernel_peer"] = (row["kernel"]["games_per_s"]
                                                / row["peer"]["games_per_s"])
            if base is not None:
                row["baseline"] = args.baseline
                row["ratio_to_baseline"] = against_baseline(base, tmp, path, variant, players,
                                                            args)
            out_rows.append(row)
            print_row(row, args)


def print_row(row: dict, args) -> None:
    name = f"{row['variant'] or '(base)'}, {row['players']} players"
    print(f"  {name}")

    def line(label: str, r: dict, extra: str = "") -> None:
        dps = r.get("decisions_per_s")
        d = f" {dps:11.0f} decisions/s" if dps is not None else " " * 24
        print(f"    {label:<12} {r['games_per_s']:9.1f} games/s{d}  ({r['games']} games){extra}")

    prot = row["protocol"]
    line("protocol", prot, f"  {prot['decisions_per_game']:.0f} decisions/game, clone "
         f"{row['clone_us_compiled']:.1f} us, peak {row['peak_kib_protocol']:.0f} KiB")
    if "kernel" in row:
        line("kernel", row["kernel"], f"  peak {row['peak_kib_kernel']:.0f} KiB; "
             f"kernel/protocol {row['ratio_kernel_protocol']:.2f}x")
    if "interpreter" in row:
        line("interpreter", row["interpreter"],
             f"  clone {row['clone_us_interpreter']:.0f} us, peak "
             f"{row['peak_kib_interpreter']:.0f} KiB; protocol/interpreter "
             f"{row['ratio_protocol_interpreter']:.0f}x (same seeds)")
    if "peer" in row:
        extra = f"  protocol/peer {row['ratio_protocol_peer']:.2f}x"
        if "ratio_kernel_peer" in row:
            extra += f", kernel/peer {row['ratio_kernel_peer']:.2f}x"
        line("peer", row["peer"], extra)
    if "ratio_to_baseline" in row:
        r = row["ratio_to_baseline"]
        print(f"    vs {row['baseline'][:12]:<9} " + (", ".join(
            f"{k} {v:.2f}x" for k, v in r.items()) + "  (this tree / baseline, same run)"
            if r else "(the file is not in the baseline)"))


if __name__ == "__main__":
    main()
