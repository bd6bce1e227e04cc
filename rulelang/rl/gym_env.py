"""A Gymnasium single-agent environment: one seat learns, the other seats are played by a bot.

Needs the `rl` extra (gymnasium, numpy). Chance is drawn with the environment's seeded RNG.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from rulelang import sim
from rulelang.rl import LegalCache, Table, returns

OBS_LOW, OBS_HIGH = -(2**31), 2**31 - 1
Bot = Callable[[Any, random.Random], int]


def action_mask(table: Table, legal: list[str]) -> np.ndarray:
    """1 at the number of each legal action (the adapters' masks)."""
    mask = np.zeros(len(table.actions), dtype=np.int8)
    mask[table.actions.indices(legal)] = 1
    return mask


def random_bot(state: Any, rng: random.Random, end_actions=frozenset()) -> int:
    """The simulator's random player: an end declaration when legal, else uniform."""
    return sim.pick_random_action(rng, state, end_actions)


class RulesEnv(gymnasium.Env):
    """`seat` plays; every other seat is `opponent` (a function (state, rng) -> action index,
    or "random"). Observations are the flat vector of `Table.encoder`; the legal actions are in
    `info["action_mask"]` and `action_masks()`. An illegal action ends the episode with
    `illegal_reward` (so a policy that ignores the mask learns to respect it). Once an episode
    has ended, `step` raises gymnasium.error.ResetNeeded until `reset`."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, path: str, num_players: int = 2, seat: int = 0,
                 opponent: str | Bot = "random", variant: str | None = None,
                 params: dict | None = None, backend: str = "compiled",
                 render_mode: str | None = None, illegal_reward: float = -1.0) -> None:
        self.table = Table(path, num_players, variant=variant, params=params, backend=backend)
        if not 0 <= seat < num_players:
            raise ValueError(f"seat {seat} outside 0..{num_players - 1}")
        self.seat = seat
        if opponent == "random":
            ends = self.table.game.end_actions
            self.opponent: Bot = lambda s, rng: random_bot(s, rng, ends)
        elif callable(opponent):
            self.opponent = opponent
        elif isinstance(opponent, str):
            # a workbench bot spec (greedy, mcts@N, module:function), one bot per other seat
            from rulelang import bots

            seats = {p: bots.make_bot(opponent, self.table.game, p, sim.bot_seed(0, p))
                     for p in range(num_players) if p != seat}
            self.opponent = lambda s, rng: seats[s.current_player].choose(s)
        else:
            raise ValueError(f"unknown opponent {opponent!r}")
        self.render_mode = render_mode
        self.illegal_reward = illegal_reward
        self.observation_space = spaces.Box(OBS_LOW, OBS_HIGH, (self.table.encoder.size,),
                                            dtype=np.int64)
        self.action_space = spaces.Discrete(len(self.table.actions))
        self.state = None
        self._over = True  # no episode until reset
        self._legal = LegalCache()
        self._rng = random.Random(0)

    def _advance(self) -> None:
        s = self.state
        while not s.is_terminal() and s.current_player != self.seat:
            if s.current_player == sim.CHANCE:
                s.apply_index(sim.pick_chance(self._rng, s))
            else:
                s.apply_index(self.opponent(s, self._rng))

    def _obs(self) -> np.ndarray:
        seen = self.state.observation(self.seat, history=False)
        # the observation of the player to act lists the legal actions: kept for the mask
        # and for step (until the state changes)
        if "legal_actions" in seen:
            self._legal.put(self.state, seen["legal_actions"])
        return np.asarray(self.table.encoder.encode(seen), dtype=np.int64)

    def action_masks(self) -> np.ndarray:
        s = self.state
        return action_mask(self.table, self._legal.get(s) if s.current_player >= 0 else [])

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self.action_masks()}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._rng = random.Random(int(self.np_random.integers(2**62)))
        self.state = self.table.game.new_game(self.table.num_players)
        self._advance()
        self._over = self.state.is_terminal()
        return self._obs(), self._info()

    def step(self, action):
        if self._over:
            # after an illegal action the state is still mid-game: stepping on would play it
            raise gymnasium.error.ResetNeeded(
                "step after the episode has ended (or before the first reset): call reset()")
        s = self.state
        text = self.table.actions.action(int(action))
        legal = self._legal.get(s)
        if text not in legal:
            obs = self._obs()
            info = self._info()
            info["illegal_action"] = text
            self._over = True
            return obs, float(self.illegal_reward), True, False, info
        s.apply_index(legal.index(text))
        self._advance()
        done = self._over = s.is_terminal()
        reward = returns(s)[self.seat] if done else 0.0
        return self._obs(), reward, done, False, self._info()

    def render(self):
        if self.render_mode != "ansi" or self.state is None:
            return None
        from rulelang.play import text_view
        from rulelang.viewmodel import Viewer

        return text_view(Viewer(self.table.program).model(self.state.observation(self.seat)))


ENV_ID = "rulelang/Rules-v0"
if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="rulelang.rl.gym_env:RulesEnv")
