"""Environment steps per second through the RL adapters against the bare compiled engine.

One step is one decision by a seat (chance outcomes are drawn inside, as in the adapters, or
by the loop from OpenSpiel's chance outcomes). All four loops pick uniformly among the legal
actions with a seeded RNG and play whole games:

    python bench/rl_throughput.py [--games N]
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import numpy as np

from rulelang import sim
from rulelang.rl import Table
from rulelang.rl.aec import RulesAECEnv
from rulelang.rl.gym_env import RulesEnv

ROOT = Path(__file__).resolve().parent.parent
GAMES = [("acquire", 4), ("poder", 3), ("polanaftowe", 4)]


def bare(path: str, players: int, games: int) -> tuple[int, float]:
    game = Table(path, players).game
    rng = random.Random(0)
    steps, t = 0, time.perf_counter()
    for _ in range(games):
        s = game.new_game(players)
        while not s.is_terminal():
            if s.current_player == sim.CHANCE:
                s.apply_index(sim.pick_chance(rng, s))
            else:
                s.apply_index(rng.randrange(s.num_choices()))
                steps += 1
    return steps, time.perf_counter() - t


def aec(path: str, players: int, games: int) -> tuple[int, float]:
    env = RulesAECEnv(path, players)
    rng = np.random.default_rng(0)
    steps, t = 0, time.perf_counter()
    for g in range(games):
        env.reset(seed=g)
        for _agent in env.agent_iter():
            obs, _r, term, trunc, _i = env.last()
            if term or trunc:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
    return steps, time.perf_counter() - t


def gym(path: str, players: int, games: int) -> tuple[int, float]:
    # one learning seat; the others are random bots inside env.step, so count every decision
    env = RulesEnv(path, players, seat=0)
    rng = np.random.default_rng(0)
    steps, t = 0, time.perf_counter()
    for g in range(games):
        _obs, info = env.reset(seed=g)
        done = False
        while not done:
            _obs, _r, done, _t, info = env.step(int(rng.choice(np.flatnonzero(
                info["action_mask"]))))
        # every decision of the game, the bots' included (chance outcomes are not steps)
        steps += sum(1 for a in env.state.history if a.split("(", 1)[0] not in _CHANCE_NAMES)
    return steps, time.perf_counter() - t


def spiel(path: str, players: int, games: int) -> tuple[int, float]:
    # OpenSpiel's own loop: legal_actions() at a decision, chance_outcomes() at a chance node
    import pyspiel

    from rulelang.rl.spiel import register

    name = register(path, short_name=f"rulelang_bench_{Path(path).stem}")
    game = pyspiel.load_game(name, {"players": players})
    rng = random.Random(0)
    steps, t = 0, time.perf_counter()
    for _ in range(games):
        s = game.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                actions, probs = zip(*s.chance_outcomes())
                s.apply_action(rng.choices(actions, probs)[0])
            else:
                s.apply_action(rng.choice(s.legal_actions()))
                steps += 1
    return steps, time.perf_counter() - t


_CHANCE_NAMES: set[str] = set()


def main() -> None:
    games = int(sys.argv[sys.argv.index("--games") + 1]) if "--games" in sys.argv else 5
    print(f"{'game':<14}{'bare steps/s':>14}{'PettingZoo':>14}{'ratio':>8}"
          f"{'Gymnasium':>14}{'ratio':>8}{'OpenSpiel':>14}{'ratio':>8}")
    for name, players in GAMES:
        path = str(ROOT / "rules" / f"{name}.rules")
        table = Table(path, players)
        _CHANCE_NAMES.clear()
        _CHANCE_NAMES.update(k.name for k in table.chance.kinds)
        b = bare(path, players, games)
        a = aec(path, players, games)
        g = gym(path, players, games)
        o = spiel(path, players, games)
        rate = [n / t for n, t in (b, a, g, o)]
        print(f"{name:<14}{rate[0]:>14,.0f}{rate[1]:>14,.0f}{rate[1] / rate[0]:>8.3f}"
              f"{rate[2]:>14,.0f}{rate[2] / rate[0]:>8.3f}"
              f"{rate[3]:>14,.0f}{rate[3] / rate[0]:>8.3f}")


if __name__ == "__main__":
    main()
