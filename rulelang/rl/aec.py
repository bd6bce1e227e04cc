"""A PettingZoo AEC environment for any rules file and player count (needs the `rl` extra).

Agents are "player_0" ... ; each observation is {"observation": the flat vector of
`Table.encoder`, "action_mask": 1 for each legal action of the agent to move}. Chance nodes are
resolved inside the environment with its seeded RNG, so only seats ever act.
"""

from __future__ import annotations

import random

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from rulelang import sim
from rulelang.rl import LegalCache, Table, returns
from rulelang.rl.gym_env import OBS_HIGH, OBS_LOW, action_mask


class RulesAECEnv(AECEnv):
    metadata = {"render_modes": ["ansi"], "name": "rulelang_v0", "is_parallelizable": False}

    def __init__(self, path: str, num_players: int = 2, variant: str | None = None,
                 params: dict | None = None, backend: str = "compiled",
                 render_mode: str | None = None) -> None:
        super().__init__()
        self.table = Table(path, num_players, variant=variant, params=params, backend=backend)
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.agents = []
        n_actions = len(self.table.actions)
        obs_space = spaces.Dict({
            "observation": spaces.Box(OBS_LOW, OBS_HIGH, (self.table.encoder.size,),
                                      dtype=np.int64),
            "action_mask": spaces.Box(0, 1, (n_actions,), dtype=np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(n_actions) for a in self.possible_agents}
        self._rng = random.Random(0)
        self.state = None
        self._legal = LegalCache()

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def _chance(self) -> None:
        s = self.state
        while s.current_player == sim.CHANCE:
            s.apply_index(sim.pick_chance(self._rng, s))

    def observe(self, agent):
        p = self.possible_agents.index(agent)
        s = self.state
        seen = s.observation(p, history=False)
        obs = np.asarray(self.table.encoder.encode(seen), dtype=np.int64)
        # the observation of the player to act lists the legal actions: kept for step
        legal = self._legal.put(s, seen["legal_actions"]) if s.current_player == p else []
        return {"observation": obs, "action_mask": action_mask(self.table, legal)}

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self._rng = random.Random(seed)
        self.state = self.table.game.new_game(self.table.num_players)
        self._chance()
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._select()

    def _select(self) -> None:
        p = self.state.current_player
        if p >= 0:
            self.agent_selection = self.possible_agents[p]
        else:  # game over: hand the turn to the first agent still listed
            self.agent_selection = self.agents[0]

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        s = self.state
        text = self.table.actions.action(int(action))
        legal = self._legal.get(s)
        if text not in legal:
            raise ValueError(f"{agent}: action {int(action)} ({text}) is not legal now")
        self._cumulative_rewards[agent] = 0.0
        s.apply_index(legal.index(text))
        self._chance()
        if s.is_terminal():
            for a, r in zip(self.possible_agents, returns(s)):
                self.rewards[a] = r
                self.terminations[a] = True
        else:
            self.rewards = {a: 0.0 for a in self.agents}
        self._accumulate_rewards()
        self._select()

    def render(self):
        if self.render_mode != "ansi" or self.state is None:
            return None
        return self.state.to_json()

    def close(self) -> None:
        pass
