"""Lock-step comparison of the interpreter and a compiled engine on one game."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import rulelang

REPRO_DIR = Path(os.environ.get("RULELANG_REPRO_DIR", "differential-failures"))


class Mismatch(AssertionError):
    pass


def snapshot(state) -> dict:
    """Everything both back ends must agree on at one step."""
    snap = {
        "player": state.current_player,
        "json": state.to_json(),
        "terminal": state.is_terminal(),
        # at every pause and at the end (the compiled engine keeps both from the listing)
        "count": state.num_choices(),
        "end": state.end_action_index(),
    }
    if state.current_player == rulelang.CHANCE:
        snap["outcomes"] = [(a, str(p)) for a, p in state.chance_outcomes()]
        snap["weights"] = state.chance_weights()
    elif state.current_player >= 0:
        snap["legal"] = state.legal_actions()
    if state.is_terminal():
        snap["scores"] = state.scores()
        snap["winners"] = state.winners()
    return snap


def write_reproducer(path: str, variant, params, players: int, actions: list[str],
                     detail: str) -> Path:
    REPRO_DIR.mkdir(parents=True, exist_ok=True)
    name = Path(path).stem
    out = REPRO_DIR / f"{name}-{variant or 'base'}-{len(actions)}.json"
    out.write_text(json.dumps({"file": path, "variant": variant, "params": params,
                               "players": players, "actions": actions, "detail": detail},
                              indent=1), encoding="utf-8")
    return out


_LOADED: dict = {}


def load(path: str, variant, params, backend: str):
    """rulelang.load, once per file (as it is on disk), variant, parameters and back end: a Game
    never changes once loaded, and loading (parse, check, views) costs more than a short game."""
    with open(path, "rb") as f:
        key = (path, f.read(), variant, tuple(sorted((params or {}).items())), backend)
    if key not in _LOADED:
        _LOADED[key] = rulelang.load(path, variant=variant, params=params, backend=backend)
    return _LOADED[key]


def lockstep(path: str, players: int, seed: int, variant=None, params=None,
             max_steps: int = 20000, choices: list[int] | None = None) -> int:
    """Play one game on both back ends in lock step; raise Mismatch with a reproducer.

    Choices come from `choices` (indexes, taken modulo the number of options) while they last,
    then from Random(seed). Returns the number of steps played.
    """
    interp = load(path, variant, params, "interpreter")
    comp = load(path, variant, params, "compiled")
    a, b = interp.new_game(players), comp.new_game(players)
    rng = random.Random(seed)
    script = list(choices or [])
    for step in range(max_steps):
        sa, sb = snapshot(a), snapshot(b)
        if sa != sb:
            diff = [k for k in sa if sa.get(k) != sb.get(k)]
            where = write_reproducer(path, variant, params, players, list(a.history),
                                     f"step {step}: differs in {diff}")
            raise Mismatch(f"{path} {variant} step {step}: {diff} differ; reproducer {where}")
        if a.is_terminal():
            return step
        n = a.num_choices()
        if script:
            k = script.pop(0) % n
        elif a.current_player == rulelang.CHANCE and a.chance_weights() is not None:
            k = _weighted(rng, a.chance_weights())
        else:
            k = rng.randrange(n)
        if step % 7 == 0:  # the same action given as a string must mean the same thing
            text = (a.legal_actions() if a.current_player >= 0
                    else [x for x, _p in a.chance_outcomes()])[k]
            a.apply(text)
            b.apply(text)
        else:
            a.apply_index(k)
            b.apply_index(k)
        if step % 50 == 0:
            ca, cb = a.clone(), b.clone()
            if ca.digest() != a.digest() or cb.digest() != b.digest():
                raise Mismatch(f"clone changed the digest at step {step}")
    raise Mismatch(f"{path}: no end after {max_steps} steps")


def _weighted(rng: random.Random, weights: list[int]) -> int:
    r = rng.randrange(sum(weights))
    for i, w in enumerate(weights):
        if r < w:
            return i
        r -= w
    raise AssertionError("unreachable")
