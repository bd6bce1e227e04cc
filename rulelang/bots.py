"""Bots that play through the engine protocol: random, greedy, MCTS / ISMCTS and user policies.

Every bot answers `choose(state) -> int`, the index of the action it takes in
`state.legal_actions()`, for the seat it was made for. Bots draw random numbers only from their
own `random.Random`, seeded when they are made, so a game between bots is a pure function of the
seeds. They use only the public engine protocol (clone, apply_index, legal_actions,
chance_weights, history_for, get_var / set_vars, scores, winners), so they run on both back ends
and are fastest on the compiled one.
"""

from __future__ import annotations

import importlib
import json
import math
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

CHANCE = -1
TERMINAL = -2

BOT_KINDS = ("random", "greedy", "mcts")
# Iterations per MCTS decision when no budget is given (see docs/workbench.md for timings).
MCTS_DEFAULT_ITERATIONS = 200
# MCTS playouts stop after this many steps and score the position on the heuristic (who leads
# wins the playout): uniformly random play far ahead says little (Pola Naftowe's random players
# all go bankrupt), and short playouts buy more iterations. Measured in docs/workbench.md.
ROLLOUT_DEPTH = 8
# Chance outcomes a greedy bot averages over after its action (all of them when there are fewer).
GREEDY_CHANCE_SAMPLES = 6

_SPEC_RE = re.compile(r"(random|greedy|mcts)(?:@(\d+)(s|ms)?)?")


class BotError(ValueError):
    """A bad bot specification (unknown kind, bad budget, a user policy that cannot be loaded)."""


class Bot:
    """Base class: a policy for one seat. Subclasses implement choose()."""

    kind = "bot"

    def __init__(self, game: Any, seat: int, seed: int) -> None:
        self.game = game
        self.seat = seat
        self.rng = random.Random(seed)

    def choose(self, state: Any) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seat={self.seat})"


# ---------------------------------------------------------------------------- random


def end_index(state: Any, end_actions: frozenset[str]) -> int:
    """Index of the first legal `@end` declaration, or -1."""
    if not end_actions:
        return -1
    fast = getattr(state, "end_action_index", None)
    if fast is not None:
        return fast()
    for k, action in enumerate(state.legal_actions()):
        if action.split("(", 1)[0] in end_actions:
            return k
    return -1


def chance_index(rng: random.Random, state: Any) -> int:
    """A chance outcome drawn by weight, integers only (the same rule as sim.pick_chance)."""
    weights = state.chance_weights()
    if weights is None:
        return rng.randrange(state.num_choices())
    return _by_weight(rng, weights)


def _by_weight(rng: random.Random, weights: Sequence[int]) -> int:
    r = rng.randrange(sum(weights))
    acc = 0
    for k, w in enumerate(weights):
        acc += w
        if r < acc:
            return k
    raise AssertionError("unreachable")


class RandomBot(Bot):
    """Uniformly random legal actions; takes an end declaration as soon as one is legal."""

    kind = "random"

    def choose(self, state: Any) -> int:
        k = end_index(state, self.game.end_actions)
        return k if k >= 0 else self.rng.randrange(state.num_choices())


# ---------------------------------------------------------------------------- heuristics


Heuristic = Callable[[Any], Sequence[int]]


def heuristic_for(game: Any) -> Heuristic:
    """The rules file's `heuristic p => ...` when it declares one, else its score.

    A declared heuristic is exposed by the engines as `state.heuristics()` when the back end
    supports it; otherwise it is evaluated by the workbench's own evaluator on the state's JSON
    (rulelang.workbench.heuristics), which works for both back ends.
    """
    from rulelang.heuristics import declared_heuristic

    h = declared_heuristic(game)
    if h is not None:
        return h
    return lambda state: state.scores()


def relative_value(values: Sequence[int], seat: int) -> int:
    """A seat's value minus the best other seat's: what a player wants to maximise."""
    others = [v for q, v in enumerate(values) if q != seat]
    return values[seat] - (max(others) if others else 0)


# ---------------------------------------------------------------------------- determinisation


@dataclass
class _Layout:
    """Where a game hides things: exchangeable pools of set-valued variables, by element type."""

    # element universe -> [(var name, "hidden" | "private")]
    pools: dict[tuple, list[tuple[str, str]]] = field(default_factory=dict)
    # hidden or private variables that are not sets (a card kept in a private `Col?`, a hidden
    # list): what they hold cannot be dealt out again, so a sample draws again the hidden
    # chance outcomes that may have put it there
    unpooled: tuple[str, ...] = ()


def _layout(game: Any) -> _Layout:
    cached = getattr(game, "_rulelang_bot_layout", None)
    if cached is not None:
        return cached
    out = _Layout()
    entries: list[tuple[str, str, tuple | None]] = []
    program = getattr(game, "program", None)
    if program is not None:
        from rulelang import types as T

        for v in program.state_vars:
            if v.visibility not in ("hidden", "private"):
                continue
            t = T.strip(program.state_types[v.name])
            if v.visibility == "private" and t.kind == "array":
                t = T.strip(t.elem)
            universe = None
            if t.kind == "set":
                elem = T.strip(t.elem)
                universe = (("enum", tuple(program.enums[elem.name].members))
                            if elem.kind == "enum" else (elem.kind,))
            entries.append((v.name, v.visibility, universe))
    else:
        module = sys.modules.get(type(game).__module__)
        for name, _attr, desc, vis in getattr(module, "_VARS", ()):
            if vis not in ("hidden", "private"):
                continue
            d = desc[1] if vis == "private" and desc[0] in ("p", "a") else desc
            universe = None
            if d[0] == "s":
                universe = ("enum", tuple(d[1]))
            elif d[0] == "S":
                universe = ("int",)
            entries.append((name, vis, universe))
    for name, vis, universe in entries:
        if universe is not None:
            out.pools.setdefault(universe, []).append((name, vis))
    out.unpooled = tuple(name for name, _vis, universe in entries if universe is None)
    try:
        game._rulelang_bot_layout = out
    except AttributeError:  # a game object with slots: recompute each time
        pass
    return out


class Determiniser:
    """Samples states consistent with what `seat` has seen (for ISMCTS and greedy).

    - What the seat has not seen ("?" entries of `history_for(seat)`) is replayed from the
      state before the first of them: each unrevealed secret choice of another player replaced
      by a random legal choice, each hidden chance outcome drawn again by weight, less the
      outcomes the seat sees drawn later in that stretch (its own cards cannot have gone to
      somebody else). The stretch starts at the first unrevealed secret choice when every hidden
      and private variable is a set, and at the first "?" of any kind when one is not (a card
      kept in a private `Col?` or a hidden list: it cannot be dealt out again, below).
    - Then the elements of every hidden set and of the other players' private sets are pooled per
      element type and dealt out again at random, each keeping its size (cards in unseen places
      are exchangeable from the seat's point of view).
    A sample whose replay meets an action that is not legal any more is drawn again (at most a
    few times); after that the sample keeps the true hidden entries (`fallbacks` counts those).
    Locals of the flow (a card drawn and being decided on) are kept as they are unless the
    replay draws them again.
    """

    TRIES = 8
    # A replay from the first hidden chance outcome meets, in some games, what the seat saw
    # later and the redrawn outcomes contradict (O Jogo do Poder: a company offered from a hand
    # dealt otherwise) every time: fewer tries there before the next start.
    WIDE_TRIES = 3

    def __init__(self, game: Any, state: Any, seat: int) -> None:
        self.game = game
        self.state = state
        self.seat = seat
        self.layout = _layout(game)
        self.fallbacks = 0
        seen = state.history_for(seat)
        # where replays may start, widest first: (first index, state there); a start whose
        # replays all fail (the seat saw later what the redrawn entries contradict: a card
        # played from a hand dealt otherwise) is given up for the next one, for good
        starts = []
        if self.layout.unpooled and "?" in seen:
            starts.append(seen.index("?"))
        secret = _first_secret(game, state, seen)
        if secret is not None and secret not in starts:
            starts.append(secret)
        self._starts = starts
        self._replays = bool(starts)
        self._secret = secret
        self._pinned: frozenset | None = None  # the true state's locals' values (_redeal)
        self._narrow = True
        self._seen = seen
        self.base = None
        self.suffix: list[str] = []
        self._next_start()
        self.hidden = bool(self.layout.pools) or self.base is not None

    def _next_start(self) -> bool:
        """Replay from the next start in the list; False when none is left."""
        if not self._starts:
            self.base, self.suffix = None, []
            return False
        first = self._starts.pop(0)
        self._narrow = first == self._secret
        base = self.game.new_game(num_players=self.state.num_players)
        for action in self.state.history[:first]:
            base.apply(action)
        self.base = base
        self.suffix = self._seen[first:]
        return True

    def sample(self, rng: random.Random) -> Any:
        if not self.hidden:
            return self.state.clone()
        d = None
        tried = self._replays  # a sample that keeps the truth where a replay was due
        while self.base is not None:
            for _ in range(self.TRIES if self._narrow else self.WIDE_TRIES):
                d = self._replay(rng)
                if d is not None:
                    break
            if d is not None or not self._next_start():
                break
        if d is None:
            self.fallbacks += tried
            d = self.state.clone()
            if self._pinned is None:
                self._pinned = _local_values(d)
            self._redeal(d, rng, self._pinned)
        else:
            self._redeal(d, rng)
        return d

    def _replay(self, rng: random.Random) -> Any:
        d = self.base.clone()
        # the entries the seat sees from here on, counted: a hidden draw is not one of those
        # (a multiset: a bag of tiles may hold the same value more than once)
        later: dict[str, int] = {}
        for entry in self.suffix:
            if entry != "?":
                later[entry] = later.get(entry, 0) + 1
        for entry in self.suffix:
            if d.current_player == TERMINAL:
                return None
            if entry == "?":
                if d.current_player == CHANCE:
                    d.apply_index(_unseen_chance_index(rng, d, later))
                else:
                    d.apply_index(rng.randrange(d.num_choices()))
                continue
            later[entry] -= 1
            try:
                d.apply(entry)
            except Exception:  # IllegalAction: this sample contradicts what the seat saw
                return None
        return d

    def _redeal(self, d: Any, rng: random.Random, pinned: frozenset | None = None) -> None:
        """Deal the pooled sets out again. `pinned`: the values the flow's locals hold (a
        card offered in a pending trade, a tile being placed); those stay where they are, since
        the flow goes on with them there (dealt to another hand, the card could not be given)."""
        seat = self.seat
        if pinned is None:
            pinned = _local_values(d)
        for slots in self.layout.pools.values():
            pool: list = []
            plan: list[tuple[str, int | None, list, int]] = []
            current: dict[str, Any] = {}
            for name, vis in slots:
                value = d.get_var(name)
                current[name] = value
                parts = ([(None, value)] if vis == "hidden" else
                         [(q, part) for q, part in enumerate(value) if q != seat])
                for q, part in parts:
                    if part is None:
                        continue
                    kept = [x for x in part if x in pinned]
                    pool.extend(x for x in part if x not in pinned)
                    plan.append((name, q, kept, len(part) - len(kept)))
            if len(pool) < 2:
                continue
            # The pool comes out in a fixed order (variable order, then each set's own order), so
            # the shuffle is reproducible; sorting needs one key type.
            rng.shuffle(pool)
            at = 0
            for name, q, kept, size in plan:
                part = _canonical_set(kept + pool[at:at + size])
                at += size
                if q is None:
                    current[name] = part
                else:
                    current[name][q] = part
            d.set_vars({name: current[name] for name, _vis in slots})


def _local_values(d: Any) -> frozenset:
    """Every value (enum member name, int, ...) that the state's flow locals and open loops
    hold, lists walked: what a redeal must leave in place."""
    found: set = set()
    j = json.loads(d.to_json())
    todo = [j.get("locals"), j.get("loops")]
    while todo:
        v = todo.pop()
        if isinstance(v, dict):
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
        elif isinstance(v, (str, int)) and not isinstance(v, bool):
            found.add(v)
    return frozenset(found)


def _unseen_chance_index(rng: random.Random, d: Any, later: dict[str, int]) -> int:
    """A hidden chance outcome drawn again by weight, each outcome's weight less the times the
    seat sees that outcome drawn later (so that the replay can still make those draws); by the
    weights alone when nothing would be left."""
    if not later:
        return chance_index(rng, d)
    weights = d.chance_weights()
    texts = d.legal_actions()
    if weights is None:
        weights = [1] * len(texts)
    left = [max(0, w - later.get(t, 0)) for w, t in zip(weights, texts)]
    if not any(left):
        return chance_index(rng, d)
    return _by_weight(rng, left)


def _canonical_set(items: list) -> list:
    return sorted(items, key=lambda x: (isinstance(x, str), x))


def _first_secret(game: Any, state: Any, seen: list[str]) -> int | None:
    """Index of the first history entry that is another player's unrevealed secret choice."""
    if "?" not in seen:
        return None
    marks = getattr(state, "_seen", None)
    if isinstance(marks, list) and len(marks) == len(seen):
        # Both engines keep, per entry, -2 - p for a secret choice of p not yet revealed.
        for i, (h, w) in enumerate(zip(seen, marks)):
            if h == "?" and w is not None and w <= -2:
                return i
        return None
    probe = game.new_game(num_players=state.num_players)
    for i, action in enumerate(state.history):
        if seen[i] == "?" and probe.current_player >= 0:
            return i
        probe.apply(action)
    return None


# ---------------------------------------------------------------------------- greedy


class GreedyBot(Bot):
    """One-step lookahead: the action whose result maximises heuristic(me) - best other's.

    When the action leads to a chance node, the value is averaged over the outcomes (a sample of
    them when there are many). Ties are broken at random, so equal options are not always the
    first one listed.
    """

    kind = "greedy"

    def __init__(self, game: Any, seat: int, seed: int,
                 heuristic: Heuristic | None = None) -> None:
        super().__init__(game, seat, seed)
        self.heuristic = heuristic or heuristic_for(game)

    def choose(self, state: Any) -> int:
        n = state.num_choices()
        if n == 1:
            return 0
        base = Determiniser(self.game, state, self.seat).sample(self.rng)
        actions = state.legal_actions()
        mine = base.legal_actions()
        if mine != actions and sorted(mine) != sorted(actions):  # (equal lists: no sorting)
            # The seat's own options never depend on what it cannot see; if a rules file makes
            # them do so, judge on the true state rather than fail.
            base, mine = state.clone(), actions
        best: list[int] = []
        best_value: float | None = None
        for k in range(n):
            child = base.clone()
            if mine == actions:
                child.apply_index(k)
            else:
                child.apply(actions[k])
            value = self._value(child)
            if best_value is None or value > best_value:
                best, best_value = [k], value
            elif value == best_value:
                best.append(k)
        return best[0] if len(best) == 1 else best[self.rng.randrange(len(best))]

    def _value(self, state: Any) -> float:
        if state.current_player != CHANCE:
            return relative_value(self.heuristic(state), self.seat)
        n = state.num_choices()
        if n <= GREEDY_CHANCE_SAMPLES and state.chance_weights() is None:
            picks = list(range(n))
        else:
            picks = [chance_index(self.rng, state) for _ in range(GREEDY_CHANCE_SAMPLES)]
        total = 0
        for k in picks:
            child = state.clone()
            child.apply_index(k)
            total += relative_value(self.heuristic(child), self.seat)
        return total / len(picks)


# ---------------------------------------------------------------------------- MCTS


class _Node:
    __slots__ = ("children", "visits", "avail", "reward")

    def __init__(self, players: int) -> None:
        self.children: dict[str, _Node] = {}
        self.visits = 0
        self.avail = 0
        self.reward = [0.0] * players


class MCTSBot(Bot):
    """Monte Carlo tree search with chance nodes; information-set MCTS under hidden information.

    Each iteration samples a determinisation (Determiniser: a state consistent with the seat's
    observation, the same state when nothing is hidden), then walks one shared tree keyed by
    action strings: UCB1 with availability counts at decision nodes (single-observer ISMCTS),
    chance outcomes drawn by weight. A new node is added per iteration and the game is played
    out by random bots (end declarations taken at once, like the simulator's random players).
    The reward is the win share (1/k to each of k winners); a playout stops after ROLLOUT_DEPTH
    steps and is then scored by who leads on the heuristic. The move chosen is the most visited
    root child.
    Deterministic for a given seed and iteration budget; a time budget is not.
    """

    kind = "mcts"

    def __init__(self, game: Any, seat: int, seed: int, iterations: int | None = None,
                 seconds: float | None = None, exploration: float = 0.7,
                 heuristic: Heuristic | None = None, rollout_depth: int | None = None) -> None:
        super().__init__(game, seat, seed)
        if iterations is None and seconds is None:
            iterations = MCTS_DEFAULT_ITERATIONS
        self.iterations = iterations
        self.seconds = seconds
        self.c = exploration
        self.heuristic = heuristic or heuristic_for(game)
        self.last_iterations = 0
        self.rollout_depth = ROLLOUT_DEPTH if rollout_depth is None else rollout_depth

    def choose(self, state: Any) -> int:
        n = state.num_choices()
        if n == 1:
            return 0
        det = Determiniser(self.game, state, self.seat)
        root = _Node(state.num_players)
        deadline = None if self.seconds is None else time.perf_counter() + self.seconds
        done = 0
        while True:
            if self.iterations is not None and done >= self.iterations:
                break
            if deadline is not None and done > 0 and time.perf_counter() >= deadline:
                break
            self._iterate(root, det.sample(self.rng))
            done += 1
        self.last_iterations = done
        actions = state.legal_actions()
        best_k, best_visits = 0, -1
        for k, action in enumerate(actions):
            child = root.children.get(action)
            visits = child.visits if child is not None else 0
            if visits > best_visits:
                best_k, best_visits = k, visits
        return best_k

    def _iterate(self, root: _Node, d: Any) -> None:
        rng = self.rng
        node = root
        path = [(root, None)]
        players = d.num_players
        # Selection and expansion.
        while True:
            player = d.current_player
            if player == TERMINAL:
                break
            if player == CHANCE:
                d.apply_index(chance_index(rng, d))
                key = d.history[-1]
                child = node.children.get(key)
                if child is None:
                    child = node.children[key] = _Node(players)
                    path.append((child, None))
                    break
                node = child
                path.append((node, None))
                continue
            actions = d.legal_actions()
            if node.children:
                untried = [k for k, a in enumerate(actions) if a not in node.children]
                for a in actions:
                    c = node.children.get(a)
                    if c is not None:
                        c.avail += 1
            else:  # (a new node: every action untried, none to count; a bid lists a thousand)
                untried = range(len(actions))
            if untried:
                k = untried[rng.randrange(len(untried))]
                d.apply_index(k)
                child = node.children[actions[k]] = _Node(players)
                child.avail = 1
                path.append((child, player))
                break
            best_k, best_score = 0, -math.inf
            c = self.c
            for k, a in enumerate(actions):
                ch = node.children[a]
                score = ch.reward[player] / ch.visits + c * math.sqrt(
                    math.log(ch.avail) / ch.visits)
                if score > best_score:
                    best_k, best_score = k, score
            d.apply_index(best_k)
            node = node.children[actions[best_k]]
            path.append((node, player))
        reward = self._rollout(d)
        for nd, _mover in path:
            nd.visits += 1
            r = nd.reward
            for q in range(players):
                r[q] += reward[q]

    def _rollout(self, d: Any) -> list[float]:
        rng = self.rng
        end_actions = self.game.end_actions
        steps = 0
        kernel = getattr(self.game, "playout", None)
        if kernel is not None:
            # The compiled playout kernel: the same steps and random numbers as the loop below
            # (rulelang.sim.drive's "random_end" policy), inside the engine.
            steps = max(self.rollout_depth, 0)
            kernel(d, rng, "random_end", steps)
        while True:
            player = d.current_player
            if player == TERMINAL:
                winners = d.winners()
                break
            if steps >= self.rollout_depth:
                values = list(self.heuristic(d))
                top = max(values)
                winners = [q for q, v in enumerate(values) if v == top]
                break
            if player == CHANCE:
                d.apply_index(chance_index(rng, d))
            else:
                k = end_index(d, end_actions)
                d.apply_index(k if k >= 0 else rng.randrange(d.num_choices()))
            steps += 1
        out = [0.0] * d.num_players
        for w in winners:
            out[w] = 1.0 / len(winners)
        return out


# ---------------------------------------------------------------------------- user policies


class PolicyBot(Bot):
    """A user's policy `function(state, seat, rng) -> index or action string`."""

    kind = "policy"

    def __init__(self, game: Any, seat: int, seed: int, function: Callable[..., Any],
                 name: str) -> None:
        super().__init__(game, seat, seed)
        self.function = function
        self.name = name

    def choose(self, state: Any) -> int:
        answer = self.function(state, self.seat, self.rng)
        if isinstance(answer, bool) or not isinstance(answer, int | str):
            raise BotError(f"policy {self.name} returned {answer!r}, not an index or an action")
        if isinstance(answer, str):
            actions = state.legal_actions()
            if answer not in actions:
                raise BotError(f"policy {self.name} chose {answer!r}, which is not legal")
            return actions.index(answer)
        if not 0 <= answer < state.num_choices():
            raise BotError(f"policy {self.name} returned index {answer} out of range")
        return answer


def load_policy(spec: str) -> Callable[..., Any]:
    """The function named by 'module:function' (the module is imported; the working directory
    is searched too, as with `python -m`)."""
    module_name, sep, func_name = spec.partition(":")
    if not sep or not module_name or not func_name:
        raise BotError(f"expected module:function, got {spec!r}")
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except Exception as err:
        raise BotError(f"cannot import {module_name!r} for bot {spec!r}: {err}") from None
    function = getattr(module, func_name, None)
    if not callable(function):
        raise BotError(f"{module_name!r} has no function {func_name!r}")
    return function


# ---------------------------------------------------------------------------- specs


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A parsed seat kind: 'random', 'greedy', 'mcts', 'mcts@400' (iterations),
    'mcts@2s' / 'mcts@500ms' (time), 'human', or 'module:function'."""

    kind: str
    iterations: int | None = None
    seconds: float | None = None
    policy: str | None = None

    @property
    def label(self) -> str:
        if self.policy is not None:
            return self.policy
        if self.iterations is not None:
            return f"{self.kind}@{self.iterations}"
        if self.seconds is not None:
            return f"{self.kind}@{self.seconds:g}s"
        return self.kind


def parse_spec(text: str, allow_human: bool = False) -> BotSpec:
    """Parse one seat kind; raises BotError with the accepted forms."""
    raw = text.strip()
    low = raw.lower()
    if low == "human":
        if not allow_human:
            raise BotError("a human seat is only possible in `rulelang play`")
        return BotSpec("human")
    if ":" in raw:
        return BotSpec("policy", policy=raw)
    m = _SPEC_RE.fullmatch(low)
    if not m:
        raise BotError(
            f"unknown player kind {raw!r}: expected random, greedy, mcts, mcts@ITERATIONS, "
            f"mcts@SECONDSs, {'human, ' if allow_human else ''}or module:function")
    kind, number, unit = m.groups()
    if number is None:
        return BotSpec(kind)
    if kind != "mcts":
        raise BotError(f"only mcts takes a budget, not {kind!r}")
    value = int(number)
    if value <= 0:
        raise BotError(f"the MCTS budget must be positive, got {raw!r}")
    if unit == "s":
        return BotSpec(kind, seconds=float(value))
    if unit == "ms":
        return BotSpec(kind, seconds=value / 1000)
    return BotSpec(kind, iterations=value)


def parse_specs(text: str, allow_human: bool = False) -> list[BotSpec]:
    parts = [p for p in text.split(",")]
    if not parts or any(not p.strip() for p in parts):
        raise BotError(f"expected a comma-separated list of player kinds, got {text!r}")
    return [parse_spec(p, allow_human) for p in parts]


def make_bot(spec: BotSpec | str, game: Any, seat: int, seed: int) -> Bot:
    """A bot for `seat` of `game`, seeded with `seed`."""
    if isinstance(spec, str):
        spec = parse_spec(spec)
    if spec.kind == "random":
        return RandomBot(game, seat, seed)
    if spec.kind == "greedy":
        return GreedyBot(game, seat, seed)
    if spec.kind == "mcts":
        return MCTSBot(game, seat, seed, iterations=spec.iterations, seconds=spec.seconds)
    if spec.kind == "policy":
        assert spec.policy is not None
        return PolicyBot(game, seat, seed, load_policy(spec.policy), spec.policy)
    raise BotError(f"no bot for {spec.kind!r}")
