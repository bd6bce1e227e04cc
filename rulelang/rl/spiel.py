"""OpenSpiel registration of a rules file as a Python game (needs the `rl` extra).

    from rulelang.rl.spiel import register
    name = register("rules/acquire.rules")          # "rulelang_acquire"
    game = pyspiel.load_game(name, {"players": 3})

Chance nodes are OpenSpiel chance nodes: their outcomes are numbered by `chance_space`, with the
engine's exact probabilities as floats. Decisions are numbered by `action_space`. Rewards are
terminal: +1 for each winner, -1 for the others. A file whose chance outcomes cannot be
numbered (`chance demand_tile(v: int in bag)`, bag a state variable) is refused.
"""

from __future__ import annotations

import json

import numpy as np
import pyspiel

from rulelang.rl import LegalCache, NotNumbered, Table, chance_space, returns

# OpenSpiel needs a bound on the number of moves; no game in rules/ comes near it.
MAX_GAME_LENGTH = 100_000


def register(path: str, *, variant: str | None = None, params: dict | None = None,
             short_name: str | None = None, backend: str = "compiled") -> str:
    """Register the rules file with pyspiel; returns the short name to `load_game` it with.
    The game parameter `players` picks the player count (default: the file's minimum).
    Raises ValueError, at the chance's position, for a file whose chance outcomes cannot be
    numbered: OpenSpiel fixes the number of chance outcomes before any game is played."""
    import rulelang

    program = rulelang.check_file(path, variant=variant, params=params)
    try:
        chance_space(program)
    except NotNumbered as err:
        raise ValueError(f"{err.span}: OpenSpiel cannot take {program.name}: it numbers every "
                         "chance outcome before the game, and these outcomes cannot be "
                         f"numbered ({err.reason})") from None
    name = short_name or f"rulelang_{program.name.lower()}"
    tables: dict[int, Table] = {}

    def table(n: int) -> Table:
        if n not in tables:
            tables[n] = Table(path, n, variant=variant, params=params, backend=backend)
        return tables[n]

    game_type = pyspiel.GameType(
        short_name=name,
        long_name=f"rulelang {program.name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=program.max_players,
        min_num_players=program.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={"players": program.min_players},
    )

    class RulesGame(pyspiel.Game):
        def __init__(self, params=None):
            params = dict(params or {})
            n = int(params.get("players", program.min_players))
            self.table = table(n)
            info = pyspiel.GameInfo(
                num_distinct_actions=len(self.table.actions),
                max_chance_outcomes=len(self.table.chance),
                num_players=n,
                min_utility=-1.0,
                max_utility=1.0,
                max_game_length=MAX_GAME_LENGTH,
            )
            super().__init__(game_type, info, params)

        def new_initial_state(self):
            return RulesState(self, self.table)

        def make_py_observer(self, iig_obs_type=None, params=None):
            return RulesObserver(self.table, iig_obs_type, params)

    pyspiel.register_game(game_type, RulesGame)
    return name


class _Shared:
    """Holds the table; OpenSpiel deep-copies a state's attributes to clone it, and the table
    (engine, program) must be shared, not copied."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def __deepcopy__(self, memo):
        return self


class _Engine:
    """Holds the engine state; deep-copied with the engine's own fast clone(). Its legal
    actions are listed once per position (OpenSpiel asks for them, then applies one)."""

    def __init__(self, state) -> None:
        self.state = state
        self.legal = LegalCache()

    def __deepcopy__(self, memo):
        return _Engine(self.state.clone())


class RulesState(pyspiel.State):
    def __init__(self, game, table: Table) -> None:
        super().__init__(game)
        self._shared = _Shared(table)
        self._engine = _Engine(table.game.new_game(table.num_players))

    @property
    def _table(self) -> Table:
        return self._shared.table

    @property
    def _s(self):
        return self._engine.state

    def current_player(self):
        p = self._s.current_player
        if p == -1:
            return pyspiel.PlayerId.CHANCE
        if p == -2:
            return pyspiel.PlayerId.TERMINAL
        return p

    def _legal_actions(self, player):
        return sorted(self._table.actions.indices(self._engine.legal.get(self._s)))

    def chance_outcomes(self):
        sp = self._table.chance
        return sorted((sp.index(a), float(p)) for a, p in self._s.chance_outcomes())

    def _apply_action(self, action):
        s = self._s
        if s.current_player == -1:
            s.apply(self._table.chance.action(int(action)))
            return
        text = self._table.actions.action(int(action))
        legal = self._engine.legal.get(s)
        if text in legal:
            s.apply_index(legal.index(text))
        else:
            s.apply(text)  # (raises IllegalAction, naming the legal actions)

    def _action_to_string(self, player, action):
        sp = self._table.chance if player == pyspiel.PlayerId.CHANCE else self._table.actions
        return sp.action(int(action))

    def is_terminal(self):
        return self._s.is_terminal()

    def returns(self):
        return returns(self._s)

    def __str__(self):
        return self._s.to_json()


class RulesObserver:
    """Observation tensor: `Table.encoder`; strings: the player's observation as JSON
    (observation) or the history the player may see (information state)."""

    def __init__(self, table: Table, iig_obs_type, params) -> None:
        if params:
            raise ValueError(f"observation parameters not supported: {params}")
        self.table = table
        self.perfect_recall = bool(iig_obs_type and iig_obs_type.perfect_recall)
        self.tensor = np.zeros(table.encoder.size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state, player):
        self.tensor[:] = self.table.encoder.encode(state._s.observation(player, history=False))

    def string_from(self, state, player):
        if self.perfect_recall:
            return " ".join(state._s.history_for(player))
        obs = state._s.observation(player, history=False)
        return json.dumps(obs, sort_keys=True, separators=(",", ":"))
