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
from concurrent.futures.process import BrokenProcessPool
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


# Steps (decisions and chance events) after which a simulated game that has not ended is an
# error: rules, or seats' policies, that can loop for ever (a greedy bot that buys and sells the
# same share back) would otherwise hang the run without a word. The longest games of the rules
# files in rules/ take under 1,000 steps; `simulate --max-steps N` sets it, -1 for no limit.
MAX_GAME_STEPS = 100_000


class GameTooLong(SimulationError):
    """A simulated game that had not ended after its run's step limit."""


class PolicyError(SimulationError):
    """A user policy (a `module:function` seat) that raised an exception while choosing: the
    message names the policy and the exception, and quotes the user's own frames."""


def _ended(state: Any, max_steps: int) -> None:
    """Raise GameTooLong unless the game played up to the limit has ended."""
    if state.current_player != TERMINAL:
        raise GameTooLong(
            f"the game had not ended after {max_steps:,} steps (decisions and chance events): "
            "the rules, or the seats' policies, may loop for ever; --max-steps sets the limit")


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
    # Designer statistics (play_game(track=True)): see GameStats.
    stats: GameStats | None = None
    # final value of the game's progress counter (progress_counter), when it has one
    progress: int | None = None


@dataclass(frozen=True, slots=True)
class GameStats:
    """What compare / sweep / tournament read besides scores: one game's course."""

    lead_changes: int
    margin: int
    # action name -> times taken, over all seats
    actions: tuple[tuple[str, int], ...]
    # per seat: action string -> times taken at decisions with more than one legal action
    seat_actions: tuple[tuple[tuple[str, int], ...], ...]
    # the file's declared metrics at the end, by name
    metrics: tuple[tuple[str, int], ...]


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
    digest_steps: list[int] | None = None,
    seats: Sequence[str] | None = None,
    final: bool = True,
    num_players: int | None = None,
) -> dict[str, Any]:
    """The JSON game record of `state` (see DESIGN.md section 4).

    `digests[j]` is the digest after action `digest_steps[j]`; without `digest_steps` there is
    one digest per action. `final=False` leaves the scores and winners null, as for a game
    that did not end (a game stopped by an error: partial_record). `state` None: a game whose
    `new_game` failed, of `num_players` players, without actions.
    """
    terminal = final and state is not None and state.is_terminal()
    extra: dict[str, Any] = {}
    if digest_steps is not None:
        extra["digest_steps"] = list(digest_steps)
    if seats is not None:
        extra["seats"] = list(seats)
    return extra | {
        "rulelang_record": RECORD_VERSION,
        "file": file,
        "rules_digest": game.source_digest,
        "variant": variant,
        "params": dict(params or {}),
        "players": state.num_players if state is not None else num_players,
        "seed": seed,
        "actions": list(state.history) if state is not None else [],
        "digests": list(digests),
        "scores": list(state.scores()) if terminal else None,
        "winners": list(state.winners()) if terminal else None,
    }


def partial_record(game: Any, state: Any, num_players: int, seed: int | None,
                   digests: list[str], digest_steps: list[int] | None = None,
                   **kw: Any) -> dict[str, Any]:
    """The record of a game stopped by an error (a fault in the rules, a failing policy, the
    step limit), as `play --record` writes a game that faulted: its actions up to the error
    (after a fault the state is the one before the faulty action), scores and winners null.
    `state` is None when `new_game` itself failed: no actions. `kw`: make_record's."""
    if state is None:
        return make_record(game, None, seed, [], digest_steps=None if digest_steps is None
                           else [], final=False, num_players=num_players, **kw)
    digests, steps = list(digests), None if digest_steps is None else list(digest_steps)
    last = len(state.history) - 1
    if steps is not None and last >= 0 and (not steps or steps[-1] != last):
        digests.append(state.digest())  # a strided record ends with its last action's digest
        steps.append(last)
    elif steps is None and len(digests) == last:
        # the error came after the last action was applied, before its digest was taken
        digests.append(state.digest())
    return make_record(game, state, seed, digests, digest_steps=steps, final=False, **kw)


def _keep_partial(err: BaseException, game: Any, state: Any, num_players: int, seed: int,
                  digests: list[str], digest_steps: list[int] | None, **kw: Any) -> None:
    """Attach the partial record of the game `err` stopped to it (`err.partial_record`), for
    the run to write it (simulate --records); never hides `err` behind an error of its own."""
    try:
        err.partial_record = partial_record(  # type: ignore[attr-defined]
            game, state, num_players, seed, digests, digest_steps, **kw)
    except Exception:
        pass


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


def digest_due(step: int, every: int) -> bool:
    """Whether a record keeps the digest after action `step` (0-based) at stride `every`; the
    last action's digest is always kept as well."""
    return every <= 1 or (step + 1) % every == 0


# random.Random.randrange(n), for an int n > 0, is _randbelow_with_getrandbits(n) in this Python:
# getrandbits(n.bit_length()) until below n (3.11 to 3.13). The drivers draw it inline then; any
# other rng class, or a Python that draws otherwise, goes through its randrange.
PLAIN_RANDBELOW = getattr(random.Random, "_randbelow", None) is getattr(
    random.Random, "_randbelow_with_getrandbits", 0)


# The playout policies: what `drive` plays and what the compiled playout kernel inlines.
# random: uniform legal choices; random_end: the same, an end declaration taken as soon as one
# is legal (the simulator's and the benchmarks' policy); greedy: an end declaration at once,
# else the choice whose resulting state is best for the mover on the rules file's `heuristic`
# (its value minus the best other seat's), ties drawn at random (files with a heuristic only).
# Chance outcomes are drawn by weight (pick_chance) in every policy.
PLAYOUT_POLICIES = ("random", "random_end", "greedy")


def drive(state: Any, rng: random.Random, policy: str = "random_end",
          max_steps: int = -1) -> tuple[int, int]:
    """The protocol driver of the playout policies: plays `state` on, in place, through the
    engine protocol only (one apply_index per step), to the end or for `max_steps` steps
    (-1: no limit). Returns (decisions, chance events). The compiled playout kernel must make
    exactly these choices and draws with the same rng (tests/test_kernel.py)."""
    if policy not in PLAYOUT_POLICIES:
        raise ValueError(f"unknown playout policy {policy!r} (known: {PLAYOUT_POLICIES})")
    randrange = rng.randrange
    ends, greedy = policy != "random", policy == "greedy"
    decisions = steps = 0
    # (pick_chance written in: the same calls of the rng, one Python frame less per step)
    while steps != max_steps:
        player = state.current_player
        if player == TERMINAL:
            break
        if player == CHANCE:
            weights = state.chance_weights()
            k = (randrange(state.num_choices()) if weights is None
                 else weighted_index(rng, weights))
        else:
            k = state.end_action_index() if ends else -1
            if k < 0:
                n = state.num_choices()
                if greedy and n > 1:
                    k = _greedy_index(state, player, n, randrange)
                else:
                    k = randrange(n)
            decisions += 1
        state.apply_index(k)
        steps += 1
    return decisions, steps - decisions


def _greedy_index(state: Any, me: int, n: int, randrange: Callable[[int], int]) -> int:
    """The greedy policy's choice among n > 1 legal actions (see PLAYOUT_POLICIES)."""
    best: list[int] = []
    best_value = 0
    for k in range(n):
        child = state.clone()
        child.apply_index(k)
        h = child.heuristic()
        if h is None:
            raise ValueError("the greedy playout policy needs a `heuristic` in the rules file")
        others = [v for q, v in enumerate(h) if q != me]
        value = h[me] - max(others) if others else h[me]
        if not best or value > best_value:
            best, best_value = [k], value
        elif value == best_value:
            best.append(k)
    return best[0] if len(best) == 1 else best[randrange(len(best))]


def kernel_of(game: Any) -> Callable[..., tuple[int, int]] | None:
    """The engine's playout kernel (`game.playout(state, rng, policy, max_steps)`, compiled
    engines), or None: it plays whole games with the driver's policy inlined, making the same
    choices and draws as the protocol driver below with the same rng."""
    return getattr(game, "playout", None)


def random_playout(game: Any, num_players: int, seed: int, kernel: bool | None = None,
                   max_steps: int = -1) -> tuple[Any, int, int]:
    """One random game (play_random_game's policy) from Random(seed), without a record:
    (final state, decisions, chance events). `kernel`: None uses the engine's playout kernel
    when it has one, True requires it, False plays through the engine protocol. With
    `max_steps` (-1: no limit), a game that has not ended after that many steps raises
    GameTooLong."""
    rng = random.Random(seed)
    state = game.new_game(num_players=num_players)
    fast = kernel_of(game) if kernel is not False else None
    if kernel and fast is None:
        raise ValueError(f"the {getattr(game, 'backend', '?')} engine has no playout kernel")
    if fast is not None:
        decisions, chance_events = fast(state, rng, "random_end", max_steps)
    else:
        decisions, chance_events = _drive_random(game, state, rng, None, max_steps)
    if max_steps >= 0:
        _ended(state, max_steps)
    return state, decisions, chance_events


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
    digest_every: int = 1,
    kernel: bool | None = None,
    max_steps: int = -1,
) -> GameResult:
    """Play one game with random legal choices and sampled chance, all from Random(seed).

    `file`, `variant` and `params` only fill in the record (params = the overrides given).
    With `digest_every` k > 1 the record keeps the digest after every k-th action and after the
    last one (listed in its `digest_steps`), which is most of the cost of a record.
    Without a record the game is played by the engine's playout kernel when it has one
    (`kernel`: see random_playout); it is the same game. `max_steps`: see random_playout.
    """
    if not record:
        state, decisions, chance_events = random_playout(game, num_players, seed, kernel,
                                                         max_steps)
        return GameResult(index=index, seed=seed, scores=tuple(state.scores()),
                          winners=tuple(state.winners()), decisions=decisions,
                          chance_events=chance_events,
                          progress=game_progress(game, state))
    rng = random.Random(seed)
    digests: list[str] = []
    steps: list[int] | None = [] if digest_every > 1 else None
    state = None
    try:
        state = game.new_game(num_players=num_players)
        if steps is not None:
            return _play_random_strided(game, state, rng, seed, index, file, variant, params,
                                        digest_every, max_steps, digests, steps)
        decisions, chance_events = _drive_random(game, state, rng, digests, max_steps)
        if max_steps >= 0:
            _ended(state, max_steps)
        rec = make_record(game, state, seed, digests, file=file, variant=variant, params=params)
        return GameResult(
            index=index,
            seed=seed,
            scores=tuple(state.scores()),
            winners=tuple(state.winners()),
            decisions=decisions,
            chance_events=chance_events,
            record=rec,
            progress=game_progress(game, state),
        )
    except Exception as err:
        _keep_partial(err, game, state, num_players, seed, digests, steps, file=file,
                      variant=variant, params=params)
        raise


def _drive_random(game: Any, state: Any, rng: random.Random,
                  digests: list[str] | None, max_steps: int = -1) -> tuple[int, int]:
    """The protocol driver of play_random_game: plays `state` to the end (or for `max_steps`
    steps; -1: no limit), one apply_index per step, appending the digest after every step to
    `digests` when given. Returns (decisions, chance events)."""
    end_actions = game.end_actions
    decisions = 0
    chance_events = 0
    left = max_steps  # steps left before the limit (below 0: none)
    record = digests is not None
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
            left -= 1
            if not left:
                break
    else:
        # The same policy and the same random numbers as pick_chance / pick_random_action,
        # with the per-step lookups hoisted (bound methods): this loop is what the benchmarks
        # time on the protocol path.
        randrange = rng.randrange
        # randrange(n) drawn inline from a plain random.Random, as it draws it (see
        # PLAIN_RANDBELOW): the same numbers without its two Python frames per step
        bits_of = rng.getrandbits if type(rng) is random.Random and PLAIN_RANDBELOW else None
        chance_weights = state.chance_weights
        num_choices = state.num_choices
        end_index = state.end_action_index if end_actions else None
        apply_index = state.apply_index
        while True:  # decisions tested first: most steps are decisions
            player = state.current_player
            if player >= 0:
                k = end_index() if end_index is not None else -1
                decisions += 1
            elif player == CHANCE:
                weights = chance_weights()
                k = weighted_index(rng, weights) if weights is not None else -1
                chance_events += 1
            else:
                break
            if k < 0:  # uniform over the choices or outcomes
                n = num_choices()
                if bits_of is not None and n:
                    b = n.bit_length()
                    k = bits_of(b)
                    while k >= n:
                        k = bits_of(b)
                else:
                    k = randrange(n)
            apply_index(k)
            if record:
                digests.append(state.digest())
            left -= 1
            if not left:
                break
    return decisions, chance_events


def _play_random_strided(game: Any, state: Any, rng: random.Random, seed: int, index: int,
                         file: str | None, variant: str | None,
                         params: Mapping[str, Any] | None, every: int,
                         max_steps: int, digests: list[str], steps: list[int]) -> GameResult:
    """play_random_game with a record that keeps every `every`-th digest (same policy, same
    random numbers: pick_chance and pick_random_action), kept in `digests` after the steps
    listed in `steps` (the caller's lists: a game stopped by an error keeps what it had)."""
    end_actions = game.end_actions
    decisions = chance_events = 0
    step = 0
    randrange = rng.randrange
    fast_end = getattr(state, "end_action_index", None)
    while step != max_steps:
        player = state.current_player
        if player == TERMINAL:
            break
        if player == CHANCE:
            weights = state.chance_weights()
            k = (randrange(state.num_choices()) if weights is None
                 else weighted_index(rng, weights))
            chance_events += 1
        else:
            if fast_end is not None:
                k = state.end_action_index() if end_actions else -1
                if k < 0:
                    k = randrange(state.num_choices())
            else:
                k = pick_random_action(rng, state, end_actions)
            decisions += 1
        state.apply_index(k)
        if (step + 1) % every == 0:
            digests.append(state.digest())
            steps.append(step)
        step += 1
    if max_steps >= 0:
        _ended(state, max_steps)
    if step and (not steps or steps[-1] != step - 1):
        digests.append(state.digest())
        steps.append(step - 1)
    rec = make_record(game, state, seed, digests, file=file, variant=variant, params=params,
                      digest_steps=steps)
    return GameResult(index=index, seed=seed, scores=tuple(state.scores()),
                      winners=tuple(state.winners()), decisions=decisions,
                      chance_events=chance_events, record=rec,
                      progress=game_progress(game, state))


def policy_choice(bot: Any, state: Any) -> int:
    """The choice of a user policy's seat. An exception the policy raises becomes a
    PolicyError naming it; its bad answers (BotError) and the rules' faults pass as they are."""
    from rulelang.bots import BotError
    from rulelang.errors import RulesRuntimeError

    try:
        return bot.choose(state)
    except (BotError, RulesRuntimeError):
        raise
    except Exception as err:
        raise policy_error(bot.name, bot.function, err) from err


def policy_error(name: str, function: Any, err: BaseException) -> PolicyError:
    """`policy NAME raised TYPE: MESSAGE`, then the frames of the traceback in the user's own
    code (see _own_frames); a policy that could not even be called (the wrong signature: no
    frame of its own) gets a note on how policies are called."""
    what = type(err).__name__ + (f": {err}" if str(err) else "")
    frames = _own_frames(err, function)
    out = PolicyError("\n".join([f"policy {name} raised {what}", *frames]))
    if not frames and isinstance(err, TypeError):
        out.add_note("a policy is called as function(state, seat, rng) and returns an index "
                     "into state.legal_actions() or an action string")
    return out


def _own_frames(err: BaseException, function: Any) -> list[str]:
    """The frames of `err`'s traceback in the user's own code, as Python prints them: those in
    the policy function's file, and those outside rulelang (its package and the engines it
    compiles), Python's library and installed packages (click's, say)."""
    import sysconfig
    import traceback

    from rulelang.cache import PREFIX

    code = getattr(function, "__code__", None)
    own = os.path.realpath(code.co_filename) if code is not None else None
    paths = sysconfig.get_paths()
    skip = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")
            if k in paths}

    def users(frame: Any) -> bool:
        module = str(frame.f_globals.get("__name__", ""))
        filename = frame.f_code.co_filename
        if (module.partition(".")[0] == "rulelang" or module.startswith(PREFIX)
                or filename.startswith("<")):  # <frozen ...>, <string>
            return False
        where = os.path.realpath(filename)
        return where == own or not any(where.startswith(d + os.sep) for d in skip)

    frames = traceback.StackSummary.extract(
        (f, n) for f, n in traceback.walk_tb(err.__traceback__) if users(f))
    return [line.rstrip("\n") for line in frames.format()]


def bot_seed(seed: int, seat: int) -> int:
    """Seed of the bot in `seat` for a game played with `seed` (independent of the chance RNG)."""
    digest = hashlib.sha256(f"{seed}:bot:{seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def progress_counter(game: Any) -> tuple[str, str] | None:
    """(state variable, parameter) of the game's progress counter, if it has one; see
    _progress_counter. Cached on the game object."""
    try:
        return game.__dict__["_rulelang_progress"]
    except (KeyError, AttributeError):
        pass
    found = _progress_counter(game)
    try:
        game.__dict__["_rulelang_progress"] = found
    except AttributeError:
        pass
    return found


def game_progress(game: Any, state: Any) -> int | None:
    """How far a game got on its progress counter (see _progress_counter), or None without
    one: the counter's value, at most its parameter. A loop `while round <= rounds { ...;
    round += 1 }` (docs/language.md 16.6) leaves round at rounds + 1 after the last round, a
    loop that counts at the start of each round leaves it at rounds; both played `rounds`."""
    counter = progress_counter(game)
    if counter is None:
        return None
    value = state.get_var(counter[0])
    last = (getattr(game, "params", None) or {}).get(counter[1])
    if isinstance(value, int) and isinstance(last, int) and not isinstance(last, bool):
        return min(value, last)
    return value


def _progress_counter(game: Any) -> tuple[str, str] | None:
    """(state variable, parameter) of the game's progress counter, if it has one: an int state
    variable `round` / `year` / `turn` / ... with an int parameter of the same name plus "s"
    giving its last value (Pola Naftowe: round / rounds; Poder: year / years)."""
    params = getattr(game, "params", {}) or {}
    try:
        state_vars = _state_var_names(game)
    except Exception:
        return None
    for var in state_vars:
        plural = var + "s"
        if isinstance(params.get(plural), int) and not isinstance(params.get(plural), bool):
            return var, plural
    return None


def _state_var_names(game: Any) -> list[str]:
    program = getattr(game, "program", None)
    if program is not None:
        return [v.name for v in program.state_vars]
    import sys

    module = sys.modules.get(type(game).__module__)
    return [entry[0] for entry in getattr(module, "_VARS", ())]


def play_game(
    game: Any,
    num_players: int,
    seed: int,
    seats: Sequence[Any] | None = None,
    record: bool = False,
    *,
    track: bool = False,
    index: int = 0,
    file: str | None = None,
    variant: str | None = None,
    params: Mapping[str, Any] | None = None,
    digest_every: int = 1,
    max_steps: int = -1,
) -> GameResult:
    """Play one game with the given seats (bot specs or names; None = all random).

    Chance and random seats draw from Random(seed), exactly as play_random_game does, so an
    all-random game is the same game; every other bot has its own RNG seeded by
    bot_seed(seed, seat). With `track`, the result carries GameStats. A game that has not
    ended after `max_steps` steps (-1: no limit) raises GameTooLong.
    """
    from rulelang import bots as B

    specs = [B.parse_spec(s) if isinstance(s, str) else s for s in (seats or ())]
    if specs and len(specs) != num_players:
        raise ValueError(f"{len(specs)} seats given for {num_players} players")
    all_random = not specs or all(sp.kind == "random" for sp in specs)
    if all_random and not track:
        return play_random_game(game, num_players, seed, record, index=index, file=file,
                                variant=variant, params=params, digest_every=digest_every,
                                max_steps=max_steps)
    rng = random.Random(seed)
    digests: list[str] = []
    steps: list[int] = []
    labels = [sp.label for sp in specs] if specs else None
    state = None
    try:
        state = game.new_game(num_players=num_players)
        end_actions = game.end_actions
        players: list[Any] = [None] * num_players
        for p, sp in enumerate(specs):
            if sp.kind != "random":
                players[p] = B.make_bot(sp, game, p, bot_seed(seed, p))
        decisions = chance_events = 0
        step = 0
        leader: int | None = None
        lead_changes = 0
        actions: dict[str, int] = {}
        seat_actions: list[dict[str, int]] = [{} for _ in range(num_players)]
        while step != max_steps:
            player = state.current_player
            if player == TERMINAL:
                break
            if player == CHANCE:
                k = pick_chance(rng, state)
                chance_events += 1
                state.apply_index(k)
            else:
                bot = players[player]
                n = state.num_choices() if track else 0
                if bot is None:
                    k = pick_random_action(rng, state, end_actions)
                elif bot.kind == "policy":
                    k = policy_choice(bot, state)
                else:
                    k = bot.choose(state)
                decisions += 1
                state.apply_index(k)
                if track:
                    taken = state.history[-1]
                    name = action_name(taken)
                    actions[name] = actions.get(name, 0) + 1
                    if n > 1:
                        mine = seat_actions[player]
                        mine[taken] = mine.get(taken, 0) + 1
                    values = state.scores()
                    top = max(values)
                    lead = [q for q, v in enumerate(values) if v == top]
                    if len(lead) == 1:
                        if leader is not None and lead[0] != leader:
                            lead_changes += 1
                        leader = lead[0]
            if record and digest_due(step, digest_every):
                digests.append(state.digest())
                steps.append(step)
            step += 1
        if max_steps >= 0:
            _ended(state, max_steps)
        if record and digest_every > 1 and step and (not steps or steps[-1] != step - 1):
            digests.append(state.digest())
            steps.append(step - 1)
        scores = tuple(state.scores())
        winners = tuple(state.winners())
        stats = None
        if track:
            rest = [v for q, v in enumerate(scores) if q not in winners]
            margin = (scores[winners[0]] - max(rest)) if winners and rest else 0
            from rulelang.heuristics import declared_metrics

            stats = GameStats(
                lead_changes=lead_changes,
                margin=margin,
                actions=tuple(sorted(actions.items())),
                seat_actions=tuple(tuple(sorted(m.items())) for m in seat_actions),
                metrics=tuple(declared_metrics(game, state)),
            )
        rec = None
        if record:
            rec = make_record(game, state, seed, digests, file=file, variant=variant,
                              params=params, digest_steps=steps if digest_every > 1 else None,
                              seats=labels)
        return GameResult(index=index, seed=seed, scores=scores, winners=winners,
                          decisions=decisions, chance_events=chance_events, record=rec,
                          stats=stats, progress=game_progress(game, state))
    except Exception as err:
        if record:
            _keep_partial(err, game, state, num_players, seed, digests,
                          steps if digest_every > 1 else None, file=file, variant=variant,
                          params=params, seats=labels)
        raise


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


def histogram(values: Sequence[int], max_bins: int = 20) -> dict[str, list[int]]:
    """Counts of integer values in at most `max_bins` equal integer-width bins: `edges[k]` <=
    v < `edges[k + 1]` (integers only, so the same on every platform)."""
    if not values:
        return {"edges": [], "counts": []}
    lo, hi = min(values), max(values)
    width = -(-(hi - lo + 1) // max_bins)
    bins = -(-(hi - lo + 1) // width)
    counts = [0] * bins
    for v in values:
        counts[(v - lo) // width] += 1
    return {"edges": [lo + k * width for k in range(bins + 1)], "counts": counts}


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
        "length_histogram": histogram([res.decisions for res in results]),
        "chance_events": describe([res.chance_events for res in results]),
        "decisions_total": sum(res.decisions for res in results),
        "seats": seats,
    }


# Records made by `simulate --records` keep the digest after every k-th action and after the
# last one: a digest per action made records 19x slower (the digest is most of the cost).
RECORD_DIGEST_EVERY = 64


@dataclass(frozen=True, slots=True)
class RunSpec:
    """What a worker needs to load the game and play its share of games."""

    loader: Loader
    path: str
    variant: str | None
    params: dict[str, Any]
    backend: str
    players: int
    root_seed: int
    records_dir: str | None = None
    # seat kinds (bot spec strings); None = all random
    seats: tuple[str, ...] | None = None
    track: bool = False
    digest_every: int = RECORD_DIGEST_EVERY
    # Tournament mode: game i seats lineup(seats, players, i) (every kind visits every seat).
    rotate: bool = False
    # a game not ended after this many steps is an error (GameTooLong); -1: no limit
    max_steps: int = MAX_GAME_STEPS


def lineup(kinds: Sequence[str], players: int, index: int) -> list[str]:
    """Seat kinds of game `index` in a rotated run: seat j gets kinds[(j + index) % len]."""
    return [kinds[(j + index) % len(kinds)] for j in range(players)]


_RunSpec = RunSpec  # the earlier name


def _load(spec: RunSpec) -> Any:
    return spec.loader(
        spec.path, variant=spec.variant, params=dict(spec.params), backend=spec.backend
    )


def _record_path(records_dir: str, index: int) -> Path:
    return Path(records_dir) / f"game-{index:06d}.json"


def _run_games(game: Any, spec: RunSpec, indices: Iterable[int]) -> list[GameResult]:
    out = []
    for i in indices:
        seed = game_seed(spec.root_seed, i)
        try:
            res = play_game(
                game,
                spec.players,
                seed,
                lineup(spec.seats, spec.players, i) if spec.rotate and spec.seats else spec.seats,
                record=spec.records_dir is not None,
                track=spec.track,
                index=i,
                file=spec.path,
                variant=spec.variant,
                params=spec.params,
                digest_every=spec.digest_every,
                max_steps=spec.max_steps,
            )
        except Exception as err:
            # Say which game failed, so it can be rerun alone with its seed; with --records,
            # keep the game up to the error, as `play --record` does (replay steps through it).
            err.add_note(f"in simulated game {i} (seed {seed})")
            partial = err.__dict__.pop("partial_record", None)
            if spec.records_dir is not None and partial is not None:
                path = _record_path(spec.records_dir, i)
                try:
                    path.write_text(json.dumps(partial, separators=(",", ":")) + "\n",
                                    encoding="utf-8")
                except OSError:
                    pass
                else:
                    from rulelang.errors import RulesRuntimeError

                    what = "fault" if isinstance(err, RulesRuntimeError) else "error"
                    err.add_note(f"record: {path} (the game up to the {what})")
            raise
        if spec.records_dir is not None and res.record is not None:
            text = json.dumps(res.record, separators=(",", ":")) + "\n"
            _record_path(spec.records_dir, i).write_text(text, encoding="utf-8")
            # The record is on disk; do not ship it back through the pool.
            res = GameResult(res.index, res.seed, res.scores, res.winners, res.decisions,
                             res.chance_events, None, res.stats, res.progress)
        out.append(res)
    return out


# Per-worker-process state: the game is loaded once per process by the pool initializer.
_WORKER: dict[str, Any] = {}
# The spec and game run_games was given, while its pool runs: a worker forked from this process
# finds them here and plays that game, instead of parsing, checking and loading the file again
# (a third of a second for Acquire, paid by every worker while the games wait). Workers started
# another way (spawn, forkserver) see an empty dict and load the game themselves.
_INHERITED: dict[str, tuple] = {}


def _watch_parent(parent: int) -> None:
    # A worker whose parent died (killed, not interrupted) would play on unseen: leave at once.
    while True:
        time.sleep(0.25)
        if os.getppid() != parent:
            os._exit(3)


def _worker_init(spec: RunSpec, parent: int | None = None) -> None:
    import signal
    import threading

    # Ctrl-C reaches the whole process group; only the parent acts on it (it stops the pool),
    # so a worker never half-finishes a chunk and picks up the next one.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if parent is not None:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    _WORKER["spec"] = spec
    # A failing initializer makes multiprocessing.Pool start a new worker, forever: keep the
    # error and raise it from the first chunk instead, so it reaches the parent.
    try:
        inherited = _INHERITED.get("run")
        _WORKER["game"] = inherited[1] if inherited and inherited[0] == spec else _load(spec)
        _WORKER.pop("error", None)
    except Exception as err:
        _WORKER["error"] = _safe_error(err)


def _safe_error(err: BaseException) -> BaseException:
    # Some exception classes cannot be rebuilt from their pickled args; a failure to unpickle
    # would surface as an opaque broken pool, so send a plain error instead.
    try:
        pickle.loads(pickle.dumps(err))
    except Exception:
        wrapped = SimulationError(f"{type(err).__name__}: {err}")
        for note in getattr(err, "__notes__", ()):
            wrapped.add_note(note)
        return wrapped
    return err


def _worker_chunk(indices: range) -> list[GameResult]:
    if "error" in _WORKER:
        raise _WORKER["error"]
    try:
        return _run_games(_WORKER["game"], _WORKER["spec"], indices)
    except Exception as err:
        safe = _safe_error(err)
        if safe is err:
            raise
        raise safe from None


def _chunks(games: int, jobs: int, batch: int | None = None) -> list[range]:
    # Several chunks per worker balance uneven game lengths; a cap keeps progress updates flowing.
    size = batch or max(1, min(64, math.ceil(games / (jobs * 8))))
    return [range(start, min(start + size, games)) for start in range(0, games, size)]


def _first_failure(failed: list, pending: set, starts: dict) -> BaseException:
    """The error of the first game that fails, as one job would have met it: the chunks after
    the earliest failed one are cancelled, those before it (already running: the pool starts
    chunks in order) are waited for, and the error of the earliest chunk that failed is the
    one raised. So `--jobs 2` names the same game and fault as `--jobs 1`, not whichever
    worker failed first."""
    first = min(failed, key=starts.__getitem__)
    earlier = {f for f in pending if starts[f] < starts[first]}
    for fut in pending - earlier:
        fut.cancel()
    if earlier:
        done, _ = wait(earlier)
        failed = [f for f in done if f.exception() is not None] + [first]
        first = min(failed, key=starts.__getitem__)
    return first.exception()


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and terminate the workers at once (a worker may be deep in
    a long game; ProcessPoolExecutor only has public terminate_workers() from Python 3.14)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    for proc in processes:
        proc.join(timeout=5)


def resolve_jobs(jobs: int | str) -> int:
    """A --jobs value: a positive count, or "auto" for every core this process may use."""
    if isinstance(jobs, str):
        if jobs.strip().lower() == "auto":
            try:
                return max(1, len(os.sched_getaffinity(0)))
            except AttributeError:  # not on Linux
                return max(1, os.cpu_count() or 1)
        if not jobs.strip().isdigit():
            raise ValueError(f"--jobs takes a positive count or 'auto', not {jobs!r}")
        jobs = int(jobs)
    if jobs < 1:
        raise ValueError(f"number of jobs must be >= 1, got {jobs}")
    return jobs


def run_games(
    spec: RunSpec,
    games: int,
    jobs: int = 1,
    progress: ProgressCallback | None = None,
    game: Any = None,
    scheduler: str | None = None,
    batch: int | None = None,
) -> list[GameResult]:
    """Play games 0..games-1 of `spec`, in game order whatever the jobs, scheduler and batch.

    jobs == 1 plays here; jobs > 1 uses a local process pool; `scheduler` (a Dask scheduler
    address) sends the batches to a Dask cluster instead (rulelang.workbench.scale).
    Ctrl-C stops the pool at once: the workers ignore SIGINT and the parent terminates them.
    """
    if scheduler is not None:
        from rulelang.workbench.scale import dask_run

        return dask_run(spec, games, scheduler, batch=batch, progress=progress)
    results: list[GameResult] = []
    if progress is not None:
        progress(0, games)
    if jobs == 1 or games <= 1:
        if game is None:
            game = _load(spec)
        chunks = _chunks(games, 1, batch) if batch else [range(i, i + 1) for i in range(games)]
        for chunk in chunks:
            results.extend(_run_games(game, spec, chunk))
            if progress is not None:
                progress(len(results), games)
        return results
    chunks = _chunks(games, jobs, batch)
    if game is not None:
        _INHERITED["run"] = (spec, game)
    # A process pool that reports a worker killed from outside (BrokenProcessPool) instead of
    # waiting for its lost task forever, as multiprocessing.Pool would.
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(chunks)), initializer=_worker_init,
                               initargs=(spec, os.getpid()))
    try:
        starts = {pool.submit(_worker_chunk, chunk): chunk.start for chunk in chunks}
        pending = set(starts)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            failed = [f for f in finished if f.exception() is not None]
            if failed:
                raise _first_failure(failed, pending, starts)
            for fut in finished:
                results.extend(fut.result())
            if progress is not None:
                progress(len(results), games)
    except BrokenProcessPool:
        _stop_pool(pool)
        raise SimulationError("a worker process died (killed from outside, or out of memory)"
                              ) from None
    except BaseException:
        # Interrupted, or a game failed: stop every worker now rather than after its chunk.
        _stop_pool(pool)
        raise
    finally:
        _INHERITED.pop("run", None)
    pool.shutdown(wait=True)
    # Completion order varies with scheduling; aggregate in game order.
    results.sort(key=lambda r: r.index)
    return results


def simulate(
    path: str | os.PathLike[str],
    players: int,
    games: int,
    seed: int,
    variant: str | None = None,
    params: Mapping[str, Any] | None = None,
    jobs: int | str = 1,
    backend: str = "interpreter",
    records_dir: str | os.PathLike[str] | None = None,
    progress: ProgressCallback | None = None,
    loader: Loader | None = None,
    seats: Sequence[str] | None = None,
    scheduler: str | None = None,
    batch: int | None = None,
    digest_every: int = RECORD_DIGEST_EVERY,
    max_steps: int = MAX_GAME_STEPS,
) -> dict[str, Any]:
    """Play `games` games and summarise them; identical results for any jobs, scheduler, batch.

    `seats` are bot specs per seat (rulelang.bots.parse_spec; default all random).
    `loader` defaults to rulelang.load; with jobs > 1 it must be a picklable top-level function.
    `progress(done, total)` is called as games finish. Raises the loader's errors (RulesError)
    and ValueError for a bad player, game or job count or bot.
    """
    if loader is None:
        from rulelang import load as loader
    if games < 0:
        raise ValueError(f"number of games must be >= 0, got {games}")
    jobs = resolve_jobs(jobs)
    if digest_every < 1:
        raise ValueError(f"digest_every must be >= 1, got {digest_every}")
    if max_steps < 1 and max_steps != -1:
        raise ValueError(f"max_steps must be >= 1, or -1 for no limit, got {max_steps}")
    seat_specs = check_seats(seats, players)
    spec = RunSpec(
        loader=loader,
        path=str(path),
        variant=variant,
        params=dict(params or {}),
        backend=backend,
        players=players,
        root_seed=seed,
        records_dir=None if records_dir is None else str(records_dir),
        seats=seat_specs,
        track=seat_specs is not None,
        digest_every=digest_every,
        max_steps=max_steps,
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
    results = run_games(spec, games, jobs, progress, game=game, scheduler=scheduler, batch=batch)
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
    if seat_specs is not None:
        summary["seat_kinds"] = list(seat_specs)
    summary.update(summarize(results, players))
    summary["warnings"] = degenerate_warnings(game, results, seat_specs)
    summary["timing"] = {
        "jobs": jobs,
        "elapsed_seconds": elapsed,
        "games_per_sec": games / elapsed if elapsed > 0 else 0.0,
        "decisions_per_sec": summary["decisions_total"] / elapsed if elapsed > 0 else 0.0,
    }
    return summary


def check_seats(seats: Sequence[str] | None, players: int) -> tuple[str, ...] | None:
    """Validated seat kinds (labels), or None when every seat is random (the fast path)."""
    if seats is None:
        return None
    from rulelang import bots as B

    try:
        specs = [B.parse_spec(s) if isinstance(s, str) else s for s in seats]
    except B.BotError as err:
        raise ValueError(str(err)) from None
    if len(specs) != players:
        raise ValueError(f"{len(specs)} player kinds given for {players} players")
    for sp in specs:
        if sp.kind == "policy":
            try:
                B.load_policy(sp.policy)
            except B.BotError as err:
                raise ValueError(str(err)) from None
    if all(sp.kind == "random" for sp in specs):
        return None
    return tuple(sp.label for sp in specs)


def degenerate_warnings(game: Any, results: Sequence[GameResult],
                        seats: Sequence[str] | None = None,
                        random_only: bool | None = None) -> list[str]:
    """Plain-language warnings when the games say little: most games ending early, or a seat
    that always takes the same action."""
    from rulelang.workbench.warnings import warnings_for

    return warnings_for(game, results, seats, random_only)
