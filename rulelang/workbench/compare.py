"""Paired comparison of two rule variants, and seat-rotated tournaments between bots.

compare: both arms play game i with the same seed (common random numbers: the same chance
stream and the same bot seeds), so a difference in a measure is estimated from per-game paired
differences, with a t interval. tournament: one rules file, several bot kinds rotated through
the seats, with win rates, pairwise results and Elo-style ratings.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rulelang import sim
from rulelang.sim import GameResult, RunSpec, run_games
from rulelang.workbench.stats import (
    Interval,
    clamped,
    elo,
    mean_interval,
    paired,
    rate_estimate,
    sig,
)


@dataclass(frozen=True)
class Arm:
    """One side of a comparison: a variant and parameter overrides."""

    variant: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""

    def describe(self) -> str:
        if self.label:
            return self.label
        parts = [f"variant {self.variant}"] if self.variant else []
        parts += [f"{k}={value_text(v)}" for k, v in sorted(self.params.items())]
        return ", ".join(parts) or "base rules"


def value_text(v: Any) -> str:
    """A parameter value as the rules language writes it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def per_game_measures(results: Sequence[GameResult], players: int) -> dict[str, list[float]]:
    """Per-game values of every measure, keyed by measure name, in game order."""
    out: dict[str, list[float]] = {}
    for p in range(players):
        out[f"wins seat {p}"] = [
            (1.0 / len(r.winners) if p in r.winners else 0.0) for r in results]
    out["first-player edge"] = [v - 1.0 / players for v in out["wins seat 0"]]
    out["length (decisions)"] = [float(r.decisions) for r in results]
    if results and all(r.progress is not None for r in results):
        out["rounds played"] = [float(r.progress or 0) for r in results]
    tracked = [r.stats for r in results if r.stats is not None]
    if results and len(tracked) == len(results):
        out["winner's margin"] = [float(st.margin) for st in tracked]
        out["lead changes"] = [float(st.lead_changes) for st in tracked]
        for name in sorted({n for st in tracked for n, _c in st.actions}):
            out[f"took {name}"] = [float(dict(st.actions).get(name, 0)) for st in tracked]
        for name, _v in tracked[0].metrics:
            out[f"metric {name}"] = [float(dict(st.metrics)[name]) for st in tracked]
    return out


def compare(
    path: str | os.PathLike[str],
    players: int,
    games: int,
    seed: int,
    arm_a: Arm,
    arm_b: Arm,
    seats: Sequence[str] | None = None,
    jobs: int = 1,
    backend: str = "compiled",
    loader: Any = None,
    progress: sim.ProgressCallback | None = None,
    scheduler: str | None = None,
    batch: int | None = None,
) -> dict[str, Any]:
    """Play the same `games` seeds under both arms and report paired differences (b - a)."""
    if loader is None:
        from rulelang import load as loader
    if games < 2:
        raise ValueError(f"a comparison needs at least 2 games, got {games}")
    seat_kinds = list(seats) if seats else ["random"] * players
    sim.check_seats(seat_kinds, players)
    specs = []
    loaded = []
    for arm in (arm_a, arm_b):
        spec = RunSpec(loader=loader, path=str(path), variant=arm.variant,
                       params=dict(arm.params), backend=backend, players=players,
                       root_seed=seed, seats=tuple(seat_kinds), track=True)
        game = loader(spec.path, variant=spec.variant, params=dict(spec.params),
                      backend=backend)
        if not game.min_players <= players <= game.max_players:
            raise ValueError(f"{game.name} takes {game.min_players} to {game.max_players} "
                             f"players, not {players}")
        specs.append(spec)
        loaded.append(game)
    started = time.perf_counter()
    arms_results = []
    for k, (spec, game) in enumerate(zip(specs, loaded)):
        def arm_progress(done: int, total: int, k: int = k) -> None:
            if progress is not None:
                progress(k * games + done, 2 * games)

        try:
            arms_results.append(run_games(spec, games, jobs, arm_progress, game=game,
                                          scheduler=scheduler, batch=batch))
        except Exception as err:
            err.add_note(f"in arm {'AB'[k]} ({(arm_a, arm_b)[k].describe()})")
            raise
    elapsed = time.perf_counter() - started
    ma = per_game_measures(arms_results[0], players)
    mb = per_game_measures(arms_results[1], players)
    rows = []
    for name in _ordered(ma, mb):
        a = ma.get(name, [0.0] * games)
        b = mb.get(name, [0.0] * games)
        diff = paired(a, b)
        if is_rate(name):  # shares of the games: Wilson intervals, a difference within -1..1
            shift = -1.0 / players if name == "first-player edge" else 0.0
            est_a, est_b = rate_estimate(a, shift), rate_estimate(b, shift)
            diff = clamped(diff, -1.0, 1.0)
        else:
            est_a, est_b = mean_interval(a), mean_interval(b)
        rows.append({
            "measure": name,
            "a": est_a.as_json(),
            "b": est_b.as_json(),
            "difference": diff.as_json(),
        })
    significant = [r["measure"] for r in rows if r["difference"]["significant"]]
    warnings = {
        "a": sim.degenerate_warnings(loaded[0], arms_results[0], seat_kinds),
        "b": sim.degenerate_warnings(loaded[1], arms_results[1], seat_kinds),
    }
    return {
        "kind": "compare",
        "game": loaded[0].name,
        "file": str(path),
        "players": players,
        "games": games,
        "seed": seed,
        "backend": backend,
        "seats": seat_kinds,
        "arms": {"a": _arm_json(arm_a), "b": _arm_json(arm_b)},
        "rows": rows,
        "significant": significant,
        "warnings": warnings,
        "lengths": {"a": [r.decisions for r in arms_results[0]],
                    "b": [r.decisions for r in arms_results[1]]},
        "timing": {"elapsed_seconds": elapsed, "jobs": jobs},
    }


def _arm_json(arm: Arm) -> dict[str, Any]:
    return {"variant": arm.variant, "params": dict(arm.params), "label": arm.describe()}


def _ordered(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    names = list(a)
    names += [n for n in b if n not in a]
    return names


def is_rate(measure: str) -> bool:
    """A measure that is a share of the games (a seat's wins, the first player's edge), which
    tables and sentences show in percent and percentage points."""
    return measure.startswith(("wins seat", "first-player"))


def compare_cells(row: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """A compare row's A, B, B - A and 95% interval as the terminal table and the HTML report
    show them: rates in percent and percentage points, other figures to 4 significant digits
    and the interval's ends to 3, as the verdicts give them."""
    d = row["difference"]
    (lo, hi), a, b = d["ci95"], row["a"]["mean"], row["b"]["mean"]
    if is_rate(row["measure"]):
        return (f"{100 * a:.1f}%", f"{100 * b:.1f}%", f"{100 * d['mean']:+.1f} pts",
                f"{100 * lo:+.1f} … {100 * hi:+.1f}")
    return sig(a, 4), sig(b, 4), sig(d["mean"], 4, True), f"{sig(lo, 3, True)} … {sig(hi, 3, True)}"


def verdict_lines(result: Mapping[str, Any]) -> list[str]:
    """Plain sentences: which differences are significant (95%), and which are not."""
    a = result["arms"]["a"]["label"]
    b = result["arms"]["b"]["label"]
    lines = []
    found = [r for r in result["rows"] if r["difference"]["significant"]]
    if not found:
        lines.append(f"No measured difference between {a} and {b} is significant at 95% "
                     f"over {result['games']} paired games.")
    for r in found:
        d = r["difference"]
        direction = "higher" if d["mean"] > 0 else "lower"
        (lo, hi), by = d["ci95"], abs(d["mean"])
        if is_rate(r["measure"]):  # as the table shows them: percentage points
            by = f"{100 * by:.1f} points (95% interval {100 * lo:+.1f} to {100 * hi:+.1f})"
        else:
            by = f"{sig(by, 3)} (95% interval {sig(lo, 3)} to {sig(hi, 3)})"
        lines.append(f"{r['measure']}: {direction} with {b} than with {a} by {by}.")
    tested = [r for r in result["rows"] if r["difference"]["ci95"][0] != r["difference"]["ci95"][1]]
    if len(tested) >= 10:
        lines.append(f"{len(tested)} measures varied between games: at 95%, about "
                     f"{0.05 * len(tested):.1f} of them would look significant by chance alone, "
                     "so treat a lone borderline one with care.")
    return lines


# ---------------------------------------------------------------------------- tournament


def tournament(
    path: str | os.PathLike[str],
    players: int | None,
    games: int,
    seed: int,
    bots: Sequence[str],
    variant: str | None = None,
    params: Mapping[str, Any] | None = None,
    jobs: int = 1,
    backend: str = "compiled",
    loader: Any = None,
    progress: sim.ProgressCallback | None = None,
    scheduler: str | None = None,
    batch: int | None = None,
) -> dict[str, Any]:
    """Seat-rotated games between bot kinds: game i seats lineup(bots, players, i);
    `players` None is one seat per kind."""
    if loader is None:
        from rulelang import load as loader
    if len(bots) < 2:
        raise ValueError("a tournament needs at least two bot kinds")
    if len(set(bots)) != len(bots):
        raise ValueError(f"bot kinds must differ, got {', '.join(bots)}")
    given, players = players, players or len(bots)
    for kind in bots:
        sim.check_seats([kind] * players, players)
    spec = RunSpec(loader=loader, path=str(path), variant=variant, params=dict(params or {}),
                   backend=backend, players=players, root_seed=seed, seats=tuple(bots),
                   track=True, rotate=True)
    game = loader(spec.path, variant=variant, params=dict(spec.params), backend=backend)
    if not game.min_players <= players <= game.max_players:
        why = ""
        if given is None:  # the count nobody typed: say where it came from
            fit = min(max(players, game.min_players), game.max_players)
            why = f" (the number of --bots kinds; give -p {fit})"
        raise ValueError(f"{game.name} takes {game.min_players} to {game.max_players} players, "
                         f"not {players}{why}")
    started = time.perf_counter()
    results = run_games(spec, games, jobs, progress, game=game, scheduler=scheduler,
                        batch=batch)
    elapsed = time.perf_counter() - started
    index = {b: k for k, b in enumerate(bots)}
    shares: list[list[float]] = [[] for _ in bots]
    # One value per game for the intervals: a kind's mean share over its seats in the game,
    # a pair's mean score over its pairings in the game. Seat-games and pairings of one game
    # are not independent (two seats of one kind cannot both win alone; the pairings of a game
    # share its result), so counting them as trials made the intervals too narrow whenever a
    # kind held more than one seat. With one seat per kind the values are the same.
    per_game: list[list[float]] = [[] for _ in bots]
    pair_results: list[tuple[int, int, float]] = []
    pair_table: dict[tuple[int, int], list[float]] = {}
    pair_games: dict[tuple[int, int], list[float]] = {}
    for r in results:
        seats = sim.lineup(list(bots), players, r.index)
        share = [(1.0 / len(r.winners) if p in r.winners else 0.0) for p in range(players)]
        mine: dict[int, list[float]] = {}
        for p, kind in enumerate(seats):
            shares[index[kind]].append(share[p])
            mine.setdefault(index[kind], []).append(share[p])
        for k, vals in mine.items():
            per_game[k].append(statistics.fmean(vals))
        here: dict[tuple[int, int], list[float]] = {}
        for p in range(players):
            for q in range(p + 1, players):
                a, b = index[seats[p]], index[seats[q]]
                if a == b:
                    continue
                score = 0.5 if share[p] == share[q] else (1.0 if share[p] > share[q] else 0.0)
                pair_results.append((a, b, score))
                key, val = ((a, b), score) if a < b else ((b, a), 1.0 - score)
                pair_table.setdefault(key, []).append(val)
                here.setdefault(key, []).append(val)
        for key, vals in here.items():
            pair_games.setdefault(key, []).append(statistics.fmean(vals))
    anchor = index.get("random")
    ratings = elo(pair_results, len(bots), anchor=anchor)
    rows = []
    for k, kind in enumerate(bots):
        wi = sim.wilson_interval(sum(per_game[k]), len(per_game[k]))
        rows.append({"bot": kind, "seat_games": len(shares[k]), "games": len(per_game[k]),
                     "win_rate": sum(shares[k]) / len(shares[k]) if shares[k] else 0.0,
                     "win_ci95": list(wi), "elo": ratings[k]})
    pairs = []
    for (a, b), vals in sorted(pair_table.items()):
        # A's score counted as wins (a tie as half a win), with Wilson's interval, over one
        # value per game (above): it stays within 0..1 and is never a point. Student's t over
        # the scores gave -1.101 to 1.768 over three pairings, and 0 to 0 over two lost ones, a
        # "significant" verdict; with ties a score varies less than a win does, so this
        # interval errs on the wide side.
        g = pair_games[(a, b)]
        lo, hi = sim.wilson_interval(sum(g), len(g))
        pairs.append({"a": bots[a], "b": bots[b], "games": len(g), "pairings": len(vals),
                      "a_score": statistics.fmean(vals), "ci95": [lo, hi],
                      "significant": lo > 0.5 or hi < 0.5,
                      "better": bots[a] if lo > 0.5 else bots[b] if hi < 0.5 else None})
    return {
        "kind": "tournament",
        "game": game.name,
        "file": str(path),
        "players": players,
        "games": games,
        "seed": seed,
        "backend": backend,
        "variant": variant,
        "params": dict(spec.params),
        "bots": list(bots),
        "fair_share": 1.0 / players,
        "rows": rows,
        "pairs": pairs,
        # Seats rotate, so the warnings cannot name a seat's bot.
        "warnings": sim.degenerate_warnings(game, results, None,
                                            random_only=all(b == "random" for b in bots)),
        "lengths": [r.decisions for r in results],
        "timing": {"elapsed_seconds": elapsed, "jobs": jobs},
    }


__all__ = ["Arm", "Interval", "compare", "tournament", "verdict_lines", "per_game_measures"]
