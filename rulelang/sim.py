"""Random-playout simulation: seeded drivers, parallel runs and summary statistics."""

from __future__ import annotations

import hashlib
import json
import math
import os
import pickle
import random
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Engine constants, repeated here so this module never imports the package at load time
# (rulelang.CHANCE / rulelang.TERMINAL must keep these values).
CHANCE = -1
TERMINAL = -2

RECORD_VERSION = 1
# Two-sided 95% normal quantile, to full double precision.
Z95 = 1.959963984540054

Loader = Callable[..., Any]
ProgressCallback = Callable[[int, int], None]


class SimulationError(RuntimeError):
    """A failure inside a worker process whose own exception could not cross the process gap."""


@dataclass(frozen=True, slots=True)
class GameResult:
    """Outcome of one random playout."""

    index: int
    seed: int
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    decisions: int
    chance_events: int
    record: dict[str, Any] | None = None


def game_seed(root_seed: int, index: int) -> int:
    """Seed of game `index` in a run, independent of how games are split between workers."""
    digest = hashlib.sha256(f"{root_seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def weighted_index(rng: random.Random, weights: Sequence[int]) -> int:
    """Pick an index with probability weight/sum(weights), using integers only."""
    total = sum(weights)
    if total <= 0:
        raise ValueError("chance weights must have a positive sum")
    r = rng.randrange(total)
    acc = 0
    for k, w in enumerate(weights):
        if w < 0:
            raise ValueError(f"negative chance weight {w} at index {k}")
        acc += w
        if r < acc:
            return k
    raise AssertionError("unreachable: r < total")


def action_name(action: str) -> str:
    """The action name of a canonical action string: the text before '('."""
    return action.split("(", 1)[0]


def pick_chance(rng: random.Random, state: Any) -> int:
    """Index of the chance outcome to apply, drawn with the driver's RNG."""
    weights = state.chance_weights()
    if weights is None:
        return rng.randrange(state.num_choices())
    return weighted_index(rng, weights)


def pick_random_action(rng: random.Random, state: Any, end_actions: Iterable[str]) -> int:
    """Index of the legal action a random player takes; end declarations win when available.

    Taking an end declaration as soon as it is legal keeps random games finite; it consumes no
    random number, so the RNG stream stays aligned across back ends.
    """
    if end_actions:
        fast = getattr(state, "end_action_index", None)
        if fast is not None:
            k = fast()
            if k >= 0:
                return k
        else:
            ends = frozenset(end_actions)
            for k, action in enumerate(state.legal_actions()):
                if action_name(action) in ends:
                    return k
    return rng.randrange(state.num_choices())


def make_record(
    game: Any,
    state: Any,
    seed: int | None,
    digests: list[str],
    *,
    file: str | None = None,
    variant: str | None = None,
    params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON game record of `state` (see DESIGN.md section 4)."""
    terminal = state.is_terminal()
    return {
        "rulelang_record": RECORD_VERSION,
        "file": file,
        "rules_digest": game.source_digest,
        "variant": variant,
        "params": dict(params or {}),
        "players": state.num_players,
        "seed": seed,
        "actions": list(state.history),
        "digests": list(digests),
        "scores": list(state.scores()) if terminal else None,
        "winners": list(state.winners()) if terminal else None,
    }


def player_record(game: Any, state: Any, viewer: int) -> dict[str, Any]:
    """The game record as player `viewer` may be shown it: others' secret choices and private
    draws are "?" until revealed, and no state digests (they would fingerprint hidden state)."""
    return {
        "rulelang_record": RECORD_VERSION,
        "viewer": viewer,
        "rules_digest": game.source_digest,
        "players": state.num_players,
        "actions": list(state.history_for(viewer)),
        "observation": state.observation(viewer),
    }


def play_random_game(
    game: Any,
    num_players: int,
    seed: int,
    record: bool = False,
    *,
    index: int = 0,
    file: str | None = None,
    variant: str | None = None,
    params: Mapping[str, Any] | None = None,
) -> GameResult:
    """Play one game with random legal choices and sampled chance, all from Random(seed).

    `file`, `variant` and `params` only fill in the record (params = the overrides given).
    """
    rng = random.Random(seed)
    state = game.new_game(num_players=num_players)
    end_actions = game.end_actions
    decisions = 0
    chance_events = 0
    digests: list[str] = []
    if not hasattr(state, "end_action_index"):
        # Engines without the fast paths: the general, string-based policy.
        while True:
            player = state.current_player
            if player == TERMINAL:
                break
            if player == CHANCE:
                k = pick_chance(rng, state)
                chance_events += 1
            else:
                k = pick_random_action(rng, state, end_actions)
                decisions += 1
            state.apply_index(k)
            if record:
                digests.append(state.digest())
    else:
        # The same policy and the same random numbers as pick_chance / pick_random_action,
        # with the per-step lookups hoisted: this loop is what the benchmarks time.
        randrange = rng.randrange
        while True:
            player = state.current_player
            if player == TERMINAL:
                break
            if player == CHANCE:
                weights = state.chance_weights()
                k = (randrange(state.num_choices()) if weights is None
                     else weighted_index(rng, weights))
                chance_events += 1
            else:
                k = state.end_action_index() if end_actions else -1
                if k < 0:
                    k = randrange(state.num_choices())
                decisions += 1
            state.apply_index(k)
            if record:
                digests.append(state.digest())
    rec = None
    if record:
        rec = make_record(game, state, seed, digests, file=file, variant=variant, params=params)
    return GameResult(
        index=index,
        seed=seed,
        scores=tuple(state.scores()),
        winners=tuple(state.winners()),
        decisions=decisions,
        chance_events=chance_events,
        record=rec,
    )


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion; successes may be fractional (shared wins)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def describe(values: Sequence[float]) -> dict[str, float]:
    """Mean, sample standard deviation, min and max (zeros for an empty sequence)."""
    if not values:
        return {"mean": 0.0, "stdev": 0.0, "min": 0, "max": 0}
    return {
        "mean": statistics.fmean(values),
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
    }


def summarize(results: Sequence[GameResult], num_players: int) -> dict[str, Any]:
    """Aggregate per-game results (in game-index order) into the deterministic summary."""
    n = len(results)
    wins = [0.0] * num_players
    for res in results:
        if res.winners:
            # A win shared by k players counts 1/k to each, so the seat shares sum to 1 per game.
            share = 1.0 / len(res.winners)
            for p in res.winners:
                wins[p] += share
    seats = []
    for p in range(num_players):
        low, high = wilson_interval(wins[p], n)
        seats.append(
            {
                "seat": p,
                "wins": wins[p],
                "win_rate": wins[p] / n if n else 0.0,
                "win_ci95": [low, high],
                "score": describe([res.scores[p] for res in results]),
            }
        )
    return {
        "games": n,
        "length": describe([res.decisions for res in results]),
        "chance_events": describe([res.chance_events for res in results]),
        "decisions_total": sum(res.decisions for res in results),
        "seats": seats,
    }


@dataclass(frozen=True, slots=True)
class _RunSpec:
    """What a worker needs to load the game and play its share of games."""

    loader: Loader
    path: str
    variant: str | None
    params: dict[str, Any]
    backend: str
    players: int
    root_seed: int
    records_dir: str | None


def _load(spec: _RunSpec) -> Any:
    return spec.loader(
        spec.path, variant=spec.variant, params=dict(spec.params), backend=spec.backend
    )


def _record_path(records_dir: str, index: int) -> Path:
    return Path(records_dir) / f"game-{index:06d}.json"


def _run_games(game: Any, spec: _RunSpec, indices: Iterable[int]) -> list[GameResult]:
    out = []
    for i in indices:
        seed = game_seed(spec.root_seed, i)
        try:
            res = play_random_game(
                game,
                spec.players,
                seed,
                record=spec.records_dir is not None,
                index=i,
                file=spec.path,
                variant=spec.variant,
                params=spec.params,
            )
        except Exception as err:
            # Say which game failed, so it can be rerun alone with its seed.
            err.add_note(f"in simulated game {i} (seed {seed})")
            raise
        if spec.records_dir is not None and res.record is not None:
            text = json.dumps(res.record, separators=(",", ":")) + "\n"
            _record_path(spec.records_dir, i).write_text(text, encoding="utf-8")
            # The record is on disk; do not ship it back through the pool.
            res = GameResult(
                res.index, res.seed, res.scores, res.winners, res.decisions, res.chance_events
            )
        out.append(res)
    return out


# Per-worker-process state: the game is loaded once per process by the pool initializer.
_WORKER: dict[str, Any] = {}


def _worker_init(spec: _RunSpec) -> None:
    _WORKER["spec"] = spec
    _WORKER["game"] = _load(spec)


def _worker_chunk(indices: range) -> list[GameResult]:
    try:
        return _run_games(_WORKER["game"], _WORKER["spec"], indices)
    except Exception as err:
        # Some exception classes cannot be rebuilt from their pickled args; a failure to
        # unpickle would surface as an opaque broken pool, so send a plain error instead.
        try:
            pickle.loads(pickle.dumps(err))
        except Exception:
            wrapped = SimulationError(f"{type(err).__name__}: {err}")
            for note in getattr(err, "__notes__", ()):
                wrapped.add_note(note)
            raise wrapped from None
        raise


def _chunks(games: int, jobs: int) -> list[range]:
    # Several chunks per worker balance uneven game lengths; a cap keeps progress updates flowing.
    size = max(1, min(64, math.ceil(games / (jobs * 8))))
    return [range(start, min(start + size, games)) for start in range(0, games, size)]


def simulate(
    path: str | os.PathLike[str],
    players: int,
    games: int,
    seed: int,
    variant: str | None = None,
    params: Mapping[str, Any] | None = None,
    jobs: int = 1,
    backend: str = "interpreter",
    records_dir: str | os.PathLike[str] | None = None,
    progress: ProgressCallback | None = None,
    loader: Loader | None = None,
) -> dict[str, Any]:
    """Play `games` random games and summarise them; identical results for any `jobs`.

    `loader` defaults to rulelang.load; with jobs > 1 it must be a picklable top-level function.
    `progress(done, total)` is called as games finish. Raises the loader's errors (RulesError)
    and ValueError for a bad player, game or job count.
    """
    if loader is None:
        from rulelang import load as loader
    if games < 0:
        raise ValueError(f"number of games must be >= 0, got {games}")
    if jobs < 1:
        raise ValueError(f"number of jobs must be >= 1, got {jobs}")
    spec = _RunSpec(
        loader=loader,
        path=str(path),
        variant=variant,
        params=dict(params or {}),
        backend=backend,
        players=players,
        root_seed=seed,
        records_dir=None if records_dir is None else str(records_dir),
    )
    # Load in this process too: bad files, variants, params and player counts fail here, once.
    game = _load(spec)
    if not game.min_players <= players <= game.max_players:
        raise ValueError(
            f"{game.name} takes {game.min_players} to {game.max_players} players, not {players}"
        )
    if spec.records_dir is not None:
        Path(spec.records_dir).mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    results: list[GameResult] = []
    if progress is not None:
        progress(0, games)
    if jobs == 1 or games <= 1:
        for i in range(games):
            results.extend(_run_games(game, spec, (i,)))
            if progress is not None:
                progress(i + 1, games)
    else:
        chunks = _chunks(games, jobs)
        with ProcessPoolExecutor(
            max_workers=min(jobs, len(chunks)),
            initializer=_worker_init,
            initargs=(spec,),
        ) as pool:
            pending = {pool.submit(_worker_chunk, chunk) for chunk in chunks}
            done_games = 0
            try:
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in finished:
                        chunk_results = fut.result()
                        results.extend(chunk_results)
                        done_games += len(chunk_results)
                    if progress is not None:
                        progress(done_games, games)
            except BaseException:
                for fut in pending:
                    fut.cancel()
                raise
        # Completion order varies with scheduling; aggregate in game order.
        results.sort(key=lambda r: r.index)
    elapsed = time.perf_counter() - started

    summary: dict[str, Any] = {
        "game": game.name,
        "file": spec.path,
        "rules_digest": game.source_digest,
        "variant": variant,
        "params": dict(spec.params),
        "backend": backend,
        "players": players,
        "seed": seed,
    }
    summary.update(summarize(results, players))
    summary["timing"] = {
        "jobs": jobs,
        "elapsed_seconds": elapsed,
        "games_per_sec": games / elapsed if elapsed > 0 else 0.0,
        "decisions_per_sec": summary["decisions_total"] / elapsed if elapsed > 0 else 0.0,
    }
    return summary
