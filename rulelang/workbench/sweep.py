"""Parameter sweeps: the same statistics at every point of a range, or of a grid of two.

Every point plays games 0..n-1 with the same seeds (common random numbers across the points),
so neighbouring points differ by the rule change and not by luck alone.
"""

from __future__ import annotations

import itertools
import os
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from rulelang import sim
from rulelang.sim import RunSpec, run_games
from rulelang.workbench.compare import is_rate, per_game_measures, value_text
from rulelang.workbench.stats import Interval, mean_interval, rate_estimate

_RANGE = re.compile(r"\s*([+-]?\d+)\s*\.\.\s*([+-]?\d+)\s*(?::\s*(\d+)\s*)?")
MAX_POINTS = 400


def parse_axis(text: str) -> tuple[str, list[Any]]:
    """'NAME=LO..HI', 'NAME=LO..HI:STEP' or 'NAME=v1,v2,...' -> (name, values)."""
    from rulelang.cli import parse_value

    name, sep, spec = text.partition("=")
    name = name.strip()
    if not sep or not name or not spec.strip():
        raise ValueError(f"expected NAME=LO..HI[:STEP] or NAME=v1,v2,..., got {text!r}")
    m = _RANGE.fullmatch(spec)
    if m:
        lo, hi, step = int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)
        if step <= 0:
            raise ValueError(f"the step of {spec.strip()!r} for {name} must be at least 1")
        if lo > hi:
            raise ValueError(f"empty sweep range {spec.strip()!r} for {name}: {lo} > {hi}")
        values: list[Any] = list(range(lo, hi + 1, step))
    else:
        values = [parse_value(v) for v in spec.split(",")]
    if len(values) > MAX_POINTS:
        raise ValueError(f"{len(values)} values for {name}: at most {MAX_POINTS}")
    return name, values


def sweep(
    path: str | os.PathLike[str],
    players: int,
    games: int,
    seed: int,
    axes: Sequence[tuple[str, Sequence[Any]]],
    seats: Sequence[str] | None = None,
    variant: str | None = None,
    params: Mapping[str, Any] | None = None,
    jobs: int = 1,
    backend: str = "compiled",
    loader: Any = None,
    progress: sim.ProgressCallback | None = None,
    scheduler: str | None = None,
    batch: int | None = None,
) -> dict[str, Any]:
    """Play `games` seeds at every point of one axis, or of the grid of two axes."""
    if loader is None:
        from rulelang import load as loader
    if not 1 <= len(axes) <= 2:
        raise ValueError("a sweep takes one parameter, or two for a grid")
    if len(axes) == 2 and axes[0][0] == axes[1][0]:
        raise ValueError(f"the two sweep axes are the same parameter {axes[0][0]!r}")
    if games < 2:
        raise ValueError(f"a sweep needs at least 2 games per point, got {games}")
    seat_kinds = list(seats) if seats else ["random"] * players
    sim.check_seats(seat_kinds, players)
    names = [a[0] for a in axes]
    points = list(itertools.product(*[a[1] for a in axes]))
    if len(points) > MAX_POINTS:
        raise ValueError(f"{len(points)} sweep points: at most {MAX_POINTS}")
    # Load every point first: a bad value fails before any game is played.
    loaded = []
    for point in points:
        values = {**dict(params or {}), **dict(zip(names, point))}
        game = loader(str(path), variant=variant, params=dict(values), backend=backend)
        if not game.min_players <= players <= game.max_players:
            raise ValueError(f"{game.name} takes {game.min_players} to {game.max_players} "
                             f"players, not {players}")
        loaded.append((values, game))
    started = time.perf_counter()
    rows = []
    total = games * len(points)
    for k, (values, game) in enumerate(loaded):
        spec = RunSpec(loader=loader, path=str(path), variant=variant, params=values,
                       backend=backend, players=players, root_seed=seed,
                       seats=tuple(seat_kinds), track=True)

        def point_progress(done: int, _total: int, k: int = k) -> None:
            if progress is not None:
                progress(k * games + done, total)

        try:
            results = run_games(spec, games, jobs, point_progress, game=game,
                                scheduler=scheduler, batch=batch)
        except Exception as err:
            where = ", ".join(f"{n}={value_text(v)}" for n, v in zip(names, points[k]))
            err.add_note(f"at sweep point {where}")
            raise
        measures = per_game_measures(results, players)
        rows.append({
            "point": dict(zip(names, points[k])),
            "measures": {name: _estimate(name, vals, players).as_json()
                         for name, vals in measures.items()},
            "warnings": sim.degenerate_warnings(game, results, seat_kinds),
            "lengths": [r.decisions for r in results],
        })
    elapsed = time.perf_counter() - started
    return {
        "kind": "sweep",
        "game": loaded[0][1].name,
        "file": str(path),
        "players": players,
        "games": games,
        "seed": seed,
        "backend": backend,
        "variant": variant,
        "params": dict(params or {}),
        "seats": seat_kinds,
        "axes": [{"name": n, "values": list(v)} for n, v in axes],
        "points": rows,
        "timing": {"elapsed_seconds": elapsed, "jobs": jobs},
    }


def _estimate(name: str, values: list[float], players: int) -> Interval:
    """A measure's mean and 95% interval at one point: Wilson for a share of the games (a
    seat's wins, the first player's edge), Student's t for the rest."""
    if is_rate(name):
        return rate_estimate(values, -1.0 / players if name == "first-player edge" else 0.0)
    return mean_interval(values)
