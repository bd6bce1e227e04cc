"""Reinforcement-learning adapters: the fixed action space, the observation vector, and the
PettingZoo, Gymnasium and OpenSpiel adapters passing their libraries' own API tests."""

from __future__ import annotations

import json
import random
import re
import warnings
from pathlib import Path

import pytest

import rulelang
from rulelang import sim
from rulelang.rl import NotNumbered, Table, action_space, chance_space

ROOT = Path(__file__).resolve().parent.parent
# every game in rules/; OpenSpiel cannot take Automobile, whose demand tiles are drawn from a
# bag held in a state variable (chance outcomes with no fixed numbering)
GAMES = [("acquire", 3), ("poder", 2), ("polanaftowe", 3), ("powergrid", 3), ("automobile", 3)]
SPIEL_GAMES = [g for g in GAMES if g[0] != "automobile"]


def rules(name: str) -> str:
    return str(ROOT / "rules" / f"{name}.rules")


def test_acquire_action_space_layout():
    space = action_space(rulelang.check_file(rules("acquire")))
    layout = [(k["action"], k["offset"], k["size"]) for k in space.describe()]
    assert layout == [("place", 0, 108), ("pass_place", 108, 1), ("declare_end", 109, 1),
                      ("buy", 110, 7), ("end_buy", 117, 1), ("found", 118, 7),
                      ("survivor", 125, 7), ("defunct", 132, 7), ("dispose", 139, 26 * 13)]
    assert len(space) == 477
    assert space.index("place(1A)") == 0 and space.index("place(12I)") == 107
    assert space.index("place(1B)") == 12
    assert space.index("buy(Imperial)") == 116
    # dispose(sell in 0..25, trade in 0..25 step 2): the last parameter varies fastest
    assert space.index("dispose(0, 0)") == 139 and space.index("dispose(0, 2)") == 140
    assert space.index("dispose(1, 0)") == 139 + 13
    assert space.action(139 + 13 * 3 + 2) == "dispose(3, 4)"
    with pytest.raises(KeyError):
        space.index("dispose(0, 1)")


def test_spaces_follow_parameters():
    # a house rule that changes a domain changes the space, deterministically
    base = action_space(rulelang.check_file(rules("poder")))
    small = action_space(rulelang.check_file(rules("poder"), params={"max_bid": 500}))
    assert base.by_name["bid"].size == 1000 and small.by_name["bid"].size == 500
    assert len(base) - len(small) == 1000
    assert small.index("no_bid()") == base.index("no_bid()") - 500
    pola = chance_space(rulelang.check_file(rules("polanaftowe")))
    assert [(k.name, k.size) for k in pola.kinds] == [
        ("draw_field", 8), ("tie_die", 6), ("demand_die", 6), ("event_roll", 11)]


@pytest.mark.parametrize("name, players", SPIEL_GAMES)
def test_every_action_and_outcome_has_a_stable_number(name, players):
    table = Table(rules(name), players)
    rng = random.Random(3)
    s = table.game.new_game(players)
    for _ in range(400):
        if s.is_terminal():
            break
        if s.current_player == sim.CHANCE:
            outs = [a for a, _ in s.chance_outcomes()]
            assert [table.chance.action(table.chance.index(a)) for a in outs] == outs
            s.apply_index(sim.pick_chance(rng, s))
        else:
            legal = s.legal_actions()
            idx = table.legal_indices(s)
            assert [table.actions.action(k) for k in idx] == legal
            assert len(set(idx)) == len(idx)
            s.apply_index(rng.randrange(len(legal)))
        for p in range(players):
            assert len(table.encoder.encode(s.observation(p))) == table.encoder.size


def test_observation_vector_layout_for_acquire():
    table = Table(rules("acquire"), 3)
    enc = table.encoder
    fields = {f["field"]: (f["offset"], f["size"]) for f in enc.describe()}
    assert fields["seat"] == (0, 3) and fields["to_move"] == (3, 5)
    assert "bag" not in fields  # hidden state has no place in the vector
    s = table.game.new_game(3)
    rng = random.Random(1)
    while s.current_player == sim.CHANCE:
        s.apply_index(sim.pick_chance(rng, s))
    vec = enc.encode(s.observation(1))
    off, size = fields["cash"]
    assert vec[off:off + size] == [6000, 6000, 6000]
    off, size = fields["hand"]  # set<Tile>[player] private: only seat 1's row is filled
    assert size == 3 * 108
    assert sum(vec[off:off + 108]) == 0 and sum(vec[off + 216:off + 324]) == 0
    assert sum(vec[off + 108:off + 216]) == 6
    assert vec[0:3] == [0, 1, 0]


def _layout_written_out(enc, obs: dict) -> list[int]:
    """docs/rl.md's observation layout, written out type by type with nothing precomputed:
    the oracle of the encoder, which builds fill functions once per type."""
    from rulelang import types as T

    def domain(t):
        if t.kind == "enum":
            return list(enc.program.enums[t.name].members)
        if t.kind == "player":
            return list(range(enc.n))
        return [False, True]

    def size(t):
        if t.kind == "opt":
            return 1 + size(t.elem)
        if t.kind in ("int", "bool"):
            return 1
        if t.kind in ("enum", "player"):
            return len(domain(t))
        if t.kind in ("set", "list"):
            e = T.strip(t.elem)
            return len(domain(e)) if T.is_discrete(e) else 2
        return len(domain(t.index)) * size(t.elem)

    def value(j, t, out):
        if t.kind == "opt":
            out.append(1 if j is None else 0)
            if j is None:
                out.extend([0] * size(t.elem))
            else:
                value(j, t.elem, out)
        elif j is None:  # another player's private entry
            out.extend([0] * size(t))
        elif t.kind == "int":
            out.append(int(j))
        elif t.kind == "bool":
            out.append(1 if j else 0)
        elif t.kind in ("enum", "player"):
            out.extend(1 if x == j else 0 for x in domain(t))
        elif t.kind == "set":
            out.extend(1 if x in j else 0 for x in domain(t.elem))
        elif t.kind == "list" and T.is_discrete(T.strip(t.elem)):
            out.extend(sum(1 for y in j if y == x) for x in domain(T.strip(t.elem)))
        elif t.kind == "list":
            out.extend([len(j), sum(int(y) for y in j if y is not None)])
        elif t.index.kind == "enum":
            for m in domain(t.index):
                value(j[m], t.elem, out)
        else:
            for x in j:
                value(x, t.elem, out)

    n = enc.n
    cur = obs["current_player"]
    slot = cur if cur >= 0 else n + (0 if cur == -1 else 1)
    phases = sorted(enc.program.phases)
    pos = phases.index(obs.get("phase")) if obs.get("phase") in phases else len(phases)
    out = [1 if q == obs["player"] else 0 for q in range(n)]
    out += [1 if i == slot else 0 for i in range(n + 2)]
    out += [1 if i == pos else 0 for i in range(len(phases) + 1)]
    for name, t in enc.vars:
        value(obs["vars"][name], t, out)
    return out


@pytest.mark.parametrize("name, variant, players", [
    ("acquire", None, 4), ("poder", None, 3), ("poder", "advanced", 4),
    ("polanaftowe", None, 5), ("powergrid", None, 3), ("powergrid", "central_europe", 5)])
def test_observation_vectors_follow_the_written_layout(name, variant, players):
    # every seat's vector at every step of whole random games, other players' private
    # entries and optional values included, against the layout written out in the test
    table = Table(rules(name), players, variant=variant)
    enc = table.encoder
    checked = 0
    for seed in range(20):  # whole games until 600 vectors are checked (Pola Naftowe's are short)
        if checked > 600:
            break
        rng = random.Random(seed)
        s = table.game.new_game(players)
        for _ in range(300):
            for p in range(players):
                obs = s.observation(p)
                vec = enc.encode(obs)
                assert vec == _layout_written_out(enc, obs)
                assert len(vec) == enc.size
                checked += 1
            if s.is_terminal():
                break
            if s.current_player == sim.CHANCE:
                s.apply_index(sim.pick_chance(rng, s))
            else:
                s.apply_index(rng.randrange(s.num_choices()))
    assert checked > 600


def _quiet_pettingzoo_advice():
    # api_test advises Box/Discrete observations, but PettingZoo documents a dict with an
    # action mask as the way to give masks (its own classic games do so).
    warnings.filterwarnings("ignore", message="Observation space for each agent probably")
    warnings.filterwarnings("ignore", message="Observation is not a NumPy array")


@pytest.mark.parametrize("name, players", GAMES)
def test_pettingzoo_api_test(name, players):
    from pettingzoo.test import api_test

    from rulelang.rl.aec import RulesAECEnv

    with warnings.catch_warnings():
        _quiet_pettingzoo_advice()
        api_test(RulesAECEnv(rules(name), players), num_cycles=300)


@pytest.mark.parametrize("name, players", GAMES)
def test_gymnasium_check_env(name, players):
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    from rulelang.rl.gym_env import ENV_ID

    env = gymnasium.make(ENV_ID, path=rules(name), num_players=players,
                         disable_env_checker=True)
    check_env(env.unwrapped)


@pytest.mark.parametrize("name, players", SPIEL_GAMES)
def test_openspiel_random_simulation(name, players):
    import pyspiel

    from rulelang.rl.spiel import register

    short = register(rules(name), short_name=f"rulelang_test_{name}")
    game = pyspiel.load_game(short, {"players": players})
    assert game.num_players() == players
    assert game.num_distinct_actions() == len(Table(rules(name), players).actions)
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)


def test_openspiel_chance_nodes_carry_the_engine_probabilities():
    import pyspiel

    from rulelang.rl.spiel import register

    short = register(rules("polanaftowe"), short_name="rulelang_test_pola_chance")
    state = pyspiel.load_game(short, {"players": 3}).new_initial_state()
    assert state.is_chance_node()
    outcomes = state.chance_outcomes()
    assert [a for a, _ in outcomes] == list(range(8))  # draw_field over 8 fields
    assert [p for _, p in outcomes] == [0.125] * 8
    state.apply_action(outcomes[2][0])
    assert state.history_str() == "2"


def test_gymnasium_episode_against_random_bots():
    import numpy as np

    from rulelang.rl.gym_env import RulesEnv

    env = RulesEnv(rules("acquire"), num_players=3, seat=1)
    obs, info = env.reset(seed=5)
    rng = np.random.default_rng(0)
    total, steps, done = 0.0, 0, False
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, done, truncated, info = env.step(int(rng.choice(legal)))
        total += reward
        steps += 1
    assert env.state.is_terminal() and steps > 10
    assert total == (1.0 if 1 in env.state.winners() else -1.0)
    # an illegal action ends the episode with the penalty
    env.reset(seed=5)
    mask = env.action_masks()
    bad = int(np.flatnonzero(mask == 0)[0])
    _obs, reward, done, _t, info = env.step(bad)
    assert (reward, done) == (-1.0, True) and info["illegal_action"] == env.table.actions.action(
        bad)


def test_gymnasium_step_after_the_episode_ended_needs_a_reset():
    # a step after an ended episode carried on the game (terminated=False), even after an
    # illegal action had ended it
    import numpy as np
    from gymnasium.error import ResetNeeded

    from rulelang.rl.gym_env import RulesEnv

    env = RulesEnv(rules("polanaftowe"), num_players=3, seat=0)
    with pytest.raises(ResetNeeded, match=re.escape("call reset()")):
        env.step(0)  # before the first reset
    _obs, info = env.reset(seed=4)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    good = int(np.flatnonzero(info["action_mask"])[0])
    n = len(env.state.history)
    _obs, reward, done, _t, info = env.step(bad)
    assert (reward, done, info["illegal_action"]) == (-1.0, True, env.table.actions.action(bad))
    with pytest.raises(ResetNeeded, match=re.escape(
            "step after the episode has ended (or before the first reset): call reset()")):
        env.step(good)
    assert len(env.state.history) == n  # nothing was played
    # a game played to its end: no step after the last one
    _obs, info = env.reset(seed=4)
    rng = np.random.default_rng(0)
    done, steps = False, 0
    while not done:
        _obs, reward, done, _t, info = env.step(int(rng.choice(np.flatnonzero(
            info["action_mask"]))))
        steps += 1
    assert env.state.is_terminal() and steps > 5
    assert reward == (1.0 if 0 in env.state.winners() else -1.0)
    with pytest.raises(ResetNeeded):
        env.step(good)
    _obs, info = env.reset(seed=4)  # a reset starts a new episode that steps again
    _obs, reward, done, _t, info = env.step(good)
    assert (reward, done, "illegal_action" in info) == (0.0, False, False)


AUTOMOBILE_BAG = ("rules/automobile.rules:379:32: an int domain must be constant, or depend "
                  "only on earlier parameters, to be numbered; it names state variable 'bag', "
                  "whose values change during the game")


def test_chance_drawn_from_a_state_variable_has_no_numbering(monkeypatch):
    """Automobile's `chance demand_tile(v: int in bag)` draws from a hidden list: the tables
    of PettingZoo and Gymnasium load it (they draw chance themselves, unnumbered), OpenSpiel
    refuses it with the chance's position. Table built the chance space eagerly and no adapter
    could load the file."""
    monkeypatch.chdir(ROOT)  # relative paths, as the messages give them
    program = rulelang.check_file("rules/automobile.rules")
    with pytest.raises(NotNumbered, match=re.escape(AUTOMOBILE_BAG)) as err:
        chance_space(program)
    assert (err.value.span.line, err.value.span.col) == (379, 32)
    table = Table("rules/automobile.rules", 3)
    assert (len(table.actions), table.encoder.size) == (530, 489)
    with pytest.raises(ValueError, match=re.escape(AUTOMOBILE_BAG)):
        _ = table.chance
    from rulelang.rl.spiel import register

    with pytest.raises(ValueError, match=re.escape(
            "rules/automobile.rules:379:32: OpenSpiel cannot take Automobile: it numbers every "
            "chance outcome before the game, and these outcomes cannot be numbered (an int "
            "domain must be constant")):
        register("rules/automobile.rules", short_name="rulelang_test_automobile")


def test_the_games_tested_are_every_game_in_rules():
    assert sorted(name for name, _ in GAMES) == sorted(
        p.stem for p in (ROOT / "rules").glob("*.rules"))


def _moved_on(s, seat: int, before: list[str], rng: random.Random) -> list[str]:
    """Plays s on outside any adapter until `seat` is to act with other legal actions than
    `before`; returns an action legal now that was not legal then."""
    while True:
        if s.current_player == sim.CHANCE:
            s.apply_index(sim.pick_chance(rng, s))
        else:
            s.apply_index(rng.randrange(s.num_choices()))
        assert not s.is_terminal()
        if s.current_player == seat:
            fresh = [a for a in s.legal_actions() if a not in before]
            if fresh:
                return fresh


def test_adapters_list_the_legal_actions_again_once_the_state_changes():
    # the adapters keep the legal actions of the position they last listed; a state moved on
    # behind their back (or another state object) lists them again
    import numpy as np

    from rulelang.rl import LegalCache
    from rulelang.rl.aec import RulesAECEnv
    from rulelang.rl.gym_env import RulesEnv

    env = RulesEnv(rules("acquire"), num_players=3, seat=0)
    env.reset(seed=2)  # (its observation lists the seat's legal actions)
    fresh = _moved_on(env.state, 0, env.state.legal_actions(), random.Random(1))
    mask = env.action_masks()
    assert np.flatnonzero(mask).tolist() == sorted(env.table.legal_indices(env.state))
    _obs, _r, _done, _t, info = env.step(env.table.actions.index(fresh[0]))
    assert "illegal_action" not in info

    aec = RulesAECEnv(rules("acquire"), 3)
    aec.reset(seed=2)
    agent = aec.agent_selection
    seat = aec.possible_agents.index(agent)
    aec.observe(agent)
    fresh = _moved_on(aec.state, seat, aec.state.legal_actions(), random.Random(1))
    n = len(aec.state.history)
    aec.step(aec.table.actions.index(fresh[0]))  # legal now: no ValueError
    assert aec.state.history[n] == fresh[0]

    cache = LegalCache()
    s = env.table.game.new_game(3)
    while s.current_player == sim.CHANCE:
        s.apply_index(sim.pick_chance(random.Random(1), s))
    assert cache.get(s) == s.legal_actions()
    twin = s.clone()
    assert cache.put(s, ["x()"]) == ["x()"] and cache.get(s) == ["x()"]  # kept for s
    assert cache.get(twin) == twin.legal_actions()  # another state object: listed again


DOCS = (ROOT / "docs" / "rl.md").read_text(encoding="utf-8")
EXAMPLES = re.findall(r"^```python\n(.*?)^```", DOCS, re.MULTILINE | re.DOTALL)


def test_docs_have_the_examples():
    assert len(EXAMPLES) == 4


@pytest.mark.parametrize("code", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_docs_example_runs(code, monkeypatch):
    monkeypatch.chdir(ROOT)
    with warnings.catch_warnings():
        _quiet_pettingzoo_advice()
        exec(compile(code, "docs/rl.md", "exec"), {})


def test_gymnasium_opponent_can_be_a_workbench_bot():
    from rulelang.rl.gym_env import RulesEnv

    env = RulesEnv(rules("polanaftowe"), num_players=3, opponent="greedy")
    _obs, info = env.reset(seed=2)
    assert env.state.current_player == 0 and info["action_mask"].sum() > 0


def test_spaces_command(monkeypatch):
    from click.testing import CliRunner

    from rulelang.cli import cli

    res = CliRunner().invoke(cli, ["spaces", rules("acquire"), "--players", "3"])
    assert res.exit_code == 0, res.output
    assert "  dispose(sell, trade)              139 ..    476  (338)" in res.output
    # ... surviving_chain at 1576, a one-hot Chain? of 8
    assert "observation (3 players): 1584" in res.output
    res = CliRunner().invoke(cli, ["spaces", rules("acquire"), "--json"])
    data = json.loads(res.output)
    assert data["players"] == 2 and data["chance_error"] is None
    assert [k["action"] for k in data["chance"]] == ["draw_opening", "draw_tile"]
    assert data["actions"][0]["params"][0]["values"][:3] == ["1A", "2A", "3A"]
    assert [k["action"] for k in data["actions"]][:2] == ["place", "pass_place"]
    # a chance space with no numbering is reported, and the rest printed (it exited 3)
    monkeypatch.chdir(ROOT)
    res = CliRunner().invoke(cli, ["spaces", "rules/automobile.rules"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == "actions: 530"
    at = lines.index("chance outcomes: not numberable (OpenSpiel cannot take this file)")
    assert lines[at + 1:at + 3] == [f"  {AUTOMOBILE_BAG}", "observation (3 players): 489"]
    res = CliRunner().invoke(cli, ["spaces", "rules/automobile.rules", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert (data["chance"], data["chance_error"]) == (None, AUTOMOBILE_BAG)
    assert len(data["actions"]) == 16 and data["players"] == 3


def test_standing_options_are_in_the_action_space():
    """tests/fixtures/flow.rules: a decision's legal actions may end with standing ones; the
    space numbers them once, after every decision's options."""
    flow = str(ROOT / "tests" / "fixtures" / "flow.rules")
    space = action_space(rulelang.check_file(flow))
    assert [(k["action"], k["offset"], k["size"]) for k in space.describe()] == [
        ("ack", 0, 1), ("bid", 1, 8), ("hold", 9, 1), ("seal", 10, 3), ("look", 13, 1),
        ("take_loan", 14, 1), ("repay", 15, 2)]
    s = rulelang.load(flow).new_game(2)
    s.apply("take_loan()")
    assert s.legal_actions()[-2:] == ["take_loan()", "repay(1)"]
    assert [space.index(a) for a in s.legal_actions()] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 14, 15]


DEPENDENT = """\
game Dependent
players 2..2
param top: int = 5
state { t: int[player] = 0 }
flow {
  for r in 1..2 {
    for p in players {
      choose p {
        take(n: int in 1..3, m: int in n..top step n) { t[p] += n * m }
        keep(c: int in 1..2, k: int in 0..r) { t[p] += k }
      }
    }
  }
}
score p => t[p]
"""


def test_an_int_domain_may_depend_on_earlier_parameters(tmp_path):
    """`m: int in n..top step n` is numbered over the union of its ranges for n = 1, 2, 3
    (1..5, 2 and 4, 3); it was refused as not constant. A domain that names a loop variable
    still is, with its position."""
    path = tmp_path / "dependent.rules"
    path.write_text(DEPENDENT.replace("        keep(c: int in 1..2, k: int in 0..r) "
                                      "{ t[p] += k }\n", ""), encoding="utf-8")
    space = action_space(rulelang.check_file(str(path)))
    assert space.by_name["take"].params[1].values == ("1", "2", "3", "4", "5")
    assert len(space) == 15 and space.index("take(3, 3)") == 12
    table = Table(str(path), 2)
    s = table.game.new_game(2)
    assert [table.actions.action(k) for k in table.legal_indices(s)] == s.legal_actions() == [
        "take(1, 1)", "take(1, 2)", "take(1, 3)", "take(1, 4)", "take(1, 5)",
        "take(2, 2)", "take(2, 4)", "take(3, 3)"]
    path.write_text(DEPENDENT, encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(
            f"{path}:10:40: an int domain must be constant, or depend only on earlier "
            "parameters, to be numbered; it names 'r'")):
        action_space(rulelang.check_file(str(path)))
