"""The designer's workbench: bots, compare, tournament, describe, parameter ranges, records."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import rulelang
from rulelang import bots, sim
from rulelang import exitcodes as X
from rulelang.cli import cli
from rulelang.workbench import stats
from rulelang.workbench.compare import Arm, compare, tournament
from tests.conftest import sigint_as_in_a_terminal

HERE = Path(__file__).parent
NIM = str(HERE / "fixtures" / "workbench" / "nim.rules")
CARDS = str(HERE / "fixtures" / "workbench" / "cards.rules")
ROOT = HERE.parent
POLA = str(ROOT / "rules" / "polanaftowe.rules")
ACQUIRE = str(ROOT / "rules" / "acquire.rules")


def run(args: list[str]) -> object:
    return CliRunner().invoke(cli, [str(a) for a in args])


# ---------------------------------------------------------------------------- bot specs


def test_bot_specs_parse_and_refuse() -> None:
    assert bots.parse_spec("MCTS") == bots.BotSpec("mcts")
    assert bots.parse_spec("mcts@400").iterations == 400
    assert bots.parse_spec("mcts@2s").seconds == 2.0
    assert bots.parse_spec("mcts@250ms").seconds == 0.25
    assert bots.parse_spec("mine:policy") == bots.BotSpec("policy", policy="mine:policy")
    assert bots.parse_spec("human", allow_human=True).kind == "human"
    with pytest.raises(bots.BotError, match="only possible in `rulelang play`"):
        bots.parse_spec("human")
    with pytest.raises(bots.BotError, match="unknown player kind 'smart'"):
        bots.parse_spec("smart")
    with pytest.raises(bots.BotError, match="only mcts takes a budget"):
        bots.parse_spec("greedy@3")
    with pytest.raises(bots.BotError, match="must be positive"):
        bots.parse_spec("mcts@0")


# ---------------------------------------------------------------------------- bots


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_mcts_is_deterministic_for_a_seed_and_budget(backend: str) -> None:
    game = rulelang.load(CARDS, backend=backend)
    one = sim.play_game(game, 3, seed=5, seats=["mcts@30", "greedy", "random"], record=True)
    two = sim.play_game(game, 3, seed=5, seats=["mcts@30", "greedy", "random"], record=True)
    assert one.record["actions"] == two.record["actions"]
    assert one.scores == two.scores


def test_bots_play_the_same_game_on_both_back_ends() -> None:
    seats = ["mcts@20", "greedy", "random"]
    games = [rulelang.load(CARDS, backend=b) for b in ("interpreter", "compiled")]
    records = [sim.play_game(g, 3, seed=8, seats=seats, record=True).record for g in games]
    assert records[0]["actions"] == records[1]["actions"]
    assert records[0]["digests"] == records[1]["digests"]


def test_all_random_seats_play_the_simulators_game() -> None:
    game = rulelang.load(ACQUIRE, backend="compiled")
    plain = sim.play_random_game(game, 3, seed=4)
    seated = sim.play_game(game, 3, seed=4, seats=["random"] * 3, track=True)
    assert (plain.scores, plain.decisions) == (seated.scores, seated.decisions)


def test_mcts_plays_nim_perfectly_from_a_winning_position() -> None:
    # 10 tokens: the first player wins by leaving a multiple of 4 each time.
    game = rulelang.load(NIM, backend="compiled")
    for seed in range(6):
        res = sim.play_game(game, 2, seed=seed, seats=["mcts@200", "random"], record=True)
        assert res.winners == (0,), seed
        assert res.record["actions"][0] == "take(2)"


def test_greedy_follows_the_declared_heuristic() -> None:
    # Cards: grab() scores 2 - bid, pass() scores 1; with bid 0 greedy grabs, with bid 3 passes.
    game = rulelang.load(CARDS, backend="compiled")
    state = game.new_game(2)
    while state.current_player == rulelang.CHANCE:
        state.apply_index(0)
    state.apply("offer(0)")
    state.apply("offer(3)")
    bot0 = bots.GreedyBot(game, 0, seed=1)
    assert state.legal_actions()[bot0.choose(state)] == "grab()"
    state.apply("grab()")
    bot1 = bots.GreedyBot(game, 1, seed=1)
    assert state.legal_actions()[bot1.choose(state)] == "pass()"


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_declared_heuristic_and_metrics_on_both_back_ends(backend: str) -> None:
    from rulelang.heuristics import declared_heuristic, declared_metrics

    game = rulelang.load(CARDS, backend=backend, variant="rich")
    state = game.new_game(2)
    for action in ["deal(C1)", "deal(C2)", "deal(C3)", "deal(C4)", "offer(1)", "offer(2)",
                   "grab()", "pass()"]:
        state.apply(action)
    assert declared_heuristic(game)(state) == [60 - 1, 10 - 2]
    nim = rulelang.load(NIM, backend=backend)
    s = nim.new_game(2)
    s.apply("take(3)")
    assert declared_metrics(nim, s) == [("tokens_taken", 3)]


def test_determinisation_keeps_what_the_seat_saw_and_resamples_the_rest() -> None:
    game = rulelang.load(CARDS, backend="compiled")
    state = game.new_game(3)
    for action in ["deal(C1)", "deal(C2)", "deal(C3)", "deal(C4)", "deal(C5)", "deal(C6)",
                   "offer(3)"]:
        state.apply(action)
    # Seat 1 decides now; seat 0's bid of 3 is a secret it has not seen.
    det = bots.Determiniser(game, state, 1)
    import random

    rng = random.Random(0)
    bids, hands0 = set(), set()
    for _ in range(40):
        d = det.sample(rng)
        assert d.get_var("held")[1] == ["C3", "C4"]
        assert d.current_player == 1
        assert sorted(d.get_var("deck") + d.get_var("held")[0] + d.get_var("held")[2]) == [
            "C1", "C2", "C5", "C6", "C7", "C8"]
        assert len(d.get_var("held")[0]) == 2 and len(d.get_var("deck")) == 2
        bids.add(d.get_var("bid")[0])
        hands0.add(tuple(d.get_var("held")[0]))
    assert bids == {0, 1, 2, 3}
    assert len(hands0) > 5
    assert det.fallbacks == 0


def test_user_policy_from_module_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    (tmp_path / "mybots.py").write_text(textwrap.dedent("""
        def take_one(state, seat, rng):
            return "take(1)"

        def bad(state, seat, rng):
            return 99
    """))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    game = rulelang.load(NIM, backend="compiled")
    res = sim.play_game(game, 2, seed=1, seats=["mybots:take_one", "mybots:take_one"],
                        record=True)
    assert res.record["actions"] == ["take(1)"] * 10 and res.winners == (1,)
    out = run(["simulate", NIM, "-p", "me,random", "--bot", "me=mybots:take_one", "-n", "4",
               "--json", "-"])
    assert out.exit_code == 0, out.output
    summary = json.loads(out.stdout)
    assert summary["seat_kinds"] == ["mybots:take_one", "random"]
    with pytest.raises(bots.BotError, match="index 99 out of range"):
        sim.play_game(game, 2, seed=1, seats=["mybots:bad", "random"])
    out = run(["simulate", NIM, "-p", "nope:f,random", "-n", "2"])
    assert out.exit_code == X.USAGE and "cannot import 'nope'" in out.stderr


def test_simulate_takes_bots_as_the_workbench_commands_do() -> None:
    """`simulate --bots greedy -p 3` (as compare, sweep and tournament take seats) plays what
    `-p greedy,greedy,greedy` plays; it was 'No such option'."""
    def played(*args: str) -> dict:
        out = run(["simulate", CARDS, "-n", "4", "--json", "-", *args])
        assert out.exit_code == 0, out.output
        return {k: v for k, v in json.loads(out.stdout).items() if k != "timing"}

    every = played("-p", "greedy,greedy,greedy")
    assert every["seat_kinds"] == ["greedy"] * 3
    assert played("--bots", "greedy", "-p", "3") == every
    assert played("--bots", "greedy,greedy,greedy") == every
    for args, message in (
            (["--bots", "greedy", "-p", "random,random"],
             "give the seat kinds with --players or with --bots, not both"),
            (["--bots", "greedy,random", "-p", "3"], "--bots names 2 seats but --players is 3"),
            (["--bots", "greedy"], "one bot kind given: say how many players with --players"),
            ([], "give --players N (or one kind per seat), and/or --bots")):
        out = run(["simulate", CARDS, "-n", "2", *args])
        assert out.exit_code == X.USAGE and message in out.stderr, args


def test_compare_and_sweep_take_seat_kinds_in_players_as_simulate_does() -> None:
    """`-p greedy,random` (simulate's form) is `--bots greedy,random` in compare and sweep; it
    was refused as not a number."""
    for cmd in (["compare", CARDS, "-B", "bonus=5"], ["sweep", CARDS, "--param", "bonus=0,5"]):
        def played(*args: str, cmd: list[str] = cmd) -> dict:
            out = run([*cmd, "-n", "3", "--json", "-", *args])
            assert out.exit_code == 0, out.output
            return {k: v for k, v in json.loads(out.stdout).items() if k != "timing"}

        assert played("-p", "greedy,random") == played("--bots", "greedy,random")
        for args, message in ((["-p", "greedy,random", "--bots", "random"],
                               "give the seat kinds with --players or with --bots, not both"),
                              (["-p", "0"], "--players must be at least 1, not 0")):
            out = run([*cmd, "-n", "2", *args])
            assert out.exit_code == X.USAGE and message in out.stderr, (cmd, args)


def test_simulate_with_bots_is_the_same_for_any_jobs() -> None:
    kwargs = dict(seats=["mcts@10", "greedy", "random"], backend="compiled")
    one = sim.simulate(CARDS, 3, 12, seed=2, jobs=1, **kwargs)
    two = sim.simulate(CARDS, 3, 12, seed=2, jobs=2, batch=5, **kwargs)
    strip = lambda s: {k: v for k, v in s.items() if k != "timing"}  # noqa: E731
    assert strip(one) == strip(two)


# ---------------------------------------------------------------------------- statistics


def test_t_quantiles_and_paired_intervals() -> None:
    assert stats.t95(1) == pytest.approx(12.706204736)
    assert stats.t95(30) == pytest.approx(2.042272456)
    assert stats.t95(60) == pytest.approx(2.000297822, abs=1e-6)
    assert stats.t95(1000) == pytest.approx(1.962339, abs=1e-5)
    iv = stats.paired([1, 2, 3, 4], [2, 4, 4, 6])  # differences 1, 2, 1, 2
    assert iv.mean == 1.5
    half = 3.182446305 * (1 / 3) ** 0.5 / 2
    assert (iv.low, iv.high) == pytest.approx((1.5 - half, 1.5 + half))
    assert iv.significant
    assert not stats.paired([1, 2], [1, 2]).significant


def test_a_share_of_the_games_has_a_wilson_interval() -> None:
    # A t interval over 2 games read "50.0% ± 635.3", and "0.0% ± 0.0" for no win.
    from rulelang.workbench.commands import pm_cell

    half = stats.rate_estimate([1.0, 0.0])
    assert half.mean == 0.5 and (half.low, half.high) == pytest.approx((0.0945312, 0.9054688))
    assert pm_cell(half.as_json(), True) == "50.0% (9.5–90.5%)"
    none = stats.rate_estimate([0.0, 0.0])
    assert pm_cell(none.as_json(), True) == "0.0% (0.0–65.8%)"
    # shared wins count in part; a shift keeps the interval around the shifted mean
    edge = stats.rate_estimate([0.5 - 0.25, 0.0 - 0.25, 1.0 - 0.25, 1.0 - 0.25], -0.25)
    plain = stats.rate_estimate([0.5, 0.0, 1.0, 1.0])
    assert edge.mean == pytest.approx(plain.mean - 0.25)
    assert (edge.low, edge.high) == pytest.approx((plain.low - 0.25, plain.high - 0.25))
    # a difference of shares is cut to -1..1, where a t interval at 2 games overshoots
    wide = stats.paired([0.0, 1.0], [1.0, 1.0])
    assert wide.low < -1 and wide.high > 1
    cut = stats.clamped(wide, -1.0, 1.0)
    assert (cut.mean, cut.low, cut.high, cut.n) == (0.5, -1.0, 1.0, 2)


def test_figures_are_written_out_to_significant_digits() -> None:
    # Measures such as a winner's margin in money read in full (".4g" wrote 1.083e+04).
    sig = stats.sig
    assert sig(10832.5, 4) == "10,830" and sig(720.3, 2) == "720" and sig(1200.0, 2) == "1,200"
    assert sig(6.855, 4) == "6.855" and sig(28.0, 4) == "28" and sig(151.66, 4) == "151.7"
    assert sig(0.0012345, 4) == "0.001234" and sig(1e-7, 4) == "0.0000001"
    assert sig(9999.6, 4) == "10,000" and sig(-1234.5, 4, True) == "-1,234"
    assert sig(12.5, 4, True) == "+12.5" and sig(0.0, 4, True) == "+0" and sig(0.0, 4) == "0"
    assert sig(float("inf"), 2, True) == "+inf" and sig(float("-inf"), 2) == "-inf"


def test_verdicts_give_win_rates_in_percentage_points() -> None:
    from rulelang.workbench.compare import verdict_lines

    row = {"measure": "wins seat 2", "difference": {"mean": -0.0733, "ci95": [-0.139, -0.008],
                                                    "significant": True}}
    money = {"measure": "winner's margin", "difference": {
        "mean": 2549.3, "ci95": [1270.4, 3828.2], "significant": True}}
    result = {"arms": {"a": {"label": "base rules"}, "b": {"label": "max_buy=5"}},
              "rows": [row, money], "games": 300}
    assert verdict_lines(result) == [
        "wins seat 2: lower with max_buy=5 than with base rules by 7.3 points "
        "(95% interval -13.9 to -0.8).",
        "winner's margin: higher with max_buy=5 than with base rules by 2,550 "
        "(95% interval 1,270 to 3,830)."]


def test_compare_cells_give_rates_in_points_and_figures_in_full() -> None:
    from rulelang.workbench.compare import compare_cells

    rate = {"measure": "wins seat 2", "a": {"mean": 0.272}, "b": {"mean": 0.198},
            "difference": {"mean": -0.0733, "ci95": [-0.139, -0.008]}}
    money = {"measure": "winner's margin", "a": {"mean": 8191.2}, "b": {"mean": 10740.5},
             "difference": {"mean": 2549.3, "ci95": [1270.4, 3828.2]}}
    assert compare_cells(rate) == ("27.2%", "19.8%", "-7.3 pts", "-13.9 … -0.8")
    assert compare_cells(money) == ("8,191", "10,740", "+2,549", "+1,270 … +3,830")


def test_elo_ratings() -> None:
    even = stats.elo([(0, 1, 1.0), (0, 1, 0.0)] * 5, 2)
    assert even == pytest.approx([0.0, 0.0])
    ranked = stats.elo([(0, 1, 1.0)] * 9 + [(0, 1, 0.0)], 2, anchor=1)
    assert ranked[1] == 0.0 and ranked[0] > 300


# ---------------------------------------------------------------------------- compare


def test_compare_pairs_the_seeds_and_finds_the_real_difference() -> None:
    result = compare(NIM, 2, 30, 3, Arm(), Arm(params={"tokens": 11}),
                     seats=["mcts@50", "random"])
    rows = {r["measure"]: r["difference"] for r in result["rows"]}
    assert rows["metric tokens_taken"]["mean"] == 1.0
    assert rows["metric tokens_taken"]["ci95"] == [1.0, 1.0]
    assert result["significant"] == ["metric tokens_taken"]
    assert rows["wins seat 0"]["significant"] is False
    # 10 and 11 tokens are both wins for a perfect first player; 50 iterations miss one game.
    wins0 = [r for r in result["rows"] if r["measure"] == "wins seat 0"][0]
    assert (wins0["a"]["mean"], wins0["b"]["mean"]) == (29 / 30, 29 / 30)


def test_compare_cli(tmp_path: Path) -> None:
    out = run(["compare", CARDS, "--bots", "greedy", "-p", "2", "-n", "20", "--b-variant",
               "rich", "--json", tmp_path / "c.json"])
    assert out.exit_code == 0, out.output
    assert "Paired differences (B - A)" in out.stdout
    result = json.loads((tmp_path / "c.json").read_text())
    assert result["arms"]["b"]["label"] == "variant rich"
    assert result["seats"] == ["greedy", "greedy"]
    same = run(["compare", CARDS, "-p", "2", "-n", "20"])
    assert same.exit_code == X.USAGE and "the two arms are the same" in same.stderr


def test_tournament_ranks_mcts_first_on_nim() -> None:
    result = tournament(NIM, 2, 40, 1, ["mcts@100", "greedy", "random"])
    rows = {r["bot"]: r for r in result["rows"]}
    assert rows["mcts@100"]["win_rate"] == 1.0 and rows["mcts@100"]["seat_games"] == 27
    assert rows["random"]["elo"] == 0.0
    assert rows["mcts@100"]["elo"] > rows["greedy"]["elo"]
    better = {(p["a"], p["b"]): p["better"] for p in result["pairs"]}
    assert better[("mcts@100", "random")] == "mcts@100"
    assert better[("mcts@100", "greedy")] == "mcts@100"
    out = run(["tournament", NIM, "--bots", "mcts@20,random", "-n", "6"])
    assert out.exit_code == 0, out.output
    assert "Head to head" in out.stdout


def test_tournament_intervals_count_games_not_seats_when_a_kind_holds_two() -> None:
    # 3 seats, 2 kinds: each game seats one kind twice. Its 18 seat-games (and the 24
    # pairings) of 12 games were counted as independent trials: greedy's interval was Wilson's
    # over 18 seat-games, 0.2031-0.6138, where its 12 games give 0.1381-0.6094
    result = tournament(NIM, 3, 12, 1, ["greedy", "random"])
    rows = {r["bot"]: r for r in result["rows"]}
    assert (rows["greedy"]["seat_games"], rows["greedy"]["games"]) == (18, 12)
    assert rows["greedy"]["win_rate"] == pytest.approx(7 / 18)
    assert [round(x, 4) for x in sim.wilson_interval(7, 18)] == [0.2031, 0.6138]
    assert [round(x, 4) for x in rows["greedy"]["win_ci95"]] == [0.1381, 0.6094]
    pair = result["pairs"][0]
    assert (pair["games"], pair["pairings"], pair["a_score"]) == (12, 24, 0.5625)
    assert [round(x, 4) for x in sim.wilson_interval(13.5, 24)] == [0.3694, 0.7383]
    assert [round(x, 4) for x in pair["ci95"]] == [0.3026, 0.7921]


def test_head_to_head_intervals_stay_within_0_and_1_and_need_more_than_two_games() -> None:
    # greedy lost both pairings: Student's t gave the interval 0 to 0, "random is stronger";
    # over three it gave -1.1 to 1.8. Wilson's interval on the score counted as wins.
    two = tournament(NIM, 2, 2, 1, ["greedy", "random"])["pairs"][0]
    assert two["a_score"] == 0.0 and two["better"] is None and not two["significant"]
    assert [round(x, 4) for x in two["ci95"]] == [0.0, 0.6576]
    three = tournament(NIM, 2, 3, 1, ["greedy", "random"])["pairs"][0]
    assert [round(x, 4) for x in three["ci95"]] == [0.0615, 0.7923]
    forty = tournament(NIM, 2, 40, 1, ["greedy", "random"])["pairs"][0]
    assert forty["a_score"] == 0.675 and forty["better"] == "greedy"
    assert [round(x, 4) for x in forty["ci95"]] == [0.5202, 0.7992]


# ---------------------------------------------------------------------------- warnings


def test_random_pola_naftowe_games_are_flagged_as_degenerate() -> None:
    summary = sim.simulate(POLA, 4, 30, seed=0, backend="compiled")
    assert len(summary["warnings"]) == 1
    assert summary["warnings"][0].startswith(
        "30 of 30 games ended before the last round (rounds = 5): ")
    out = run(["simulate", POLA, "-p", "4", "-n", "30"])
    assert "warning: 30 of 30 games ended before the last round" in out.stderr


def test_a_bot_that_always_does_the_same_is_flagged(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "lazy.py").write_text("def one(state, seat, rng):\n    return 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    summary = sim.simulate(NIM, 2, 30, seed=0, seats=["lazy:one", "random"],
                           backend="compiled", params={"tokens": 40})
    assert any(w.startswith("seat 0 (lazy:one) took take(1) at ") for w in summary["warnings"])
    assert not any(w.startswith("seat 1") for w in summary["warnings"])


# ---------------------------------------------------------------------------- describe, ranges


def test_describe_lists_parameters_variants_decisions() -> None:
    out = run(["describe", CARDS])
    assert out.exit_code == 0, out.output
    text = out.stdout
    assert "| `hand` | int | 1..3 | `2` | `2` |  |" in text
    assert "| `rich` | `bonus = 5` |  |" in text
    assert "| `offer(b: int in 0..3)` | `q` (secret) | flow |  |  | line 32 |" in text
    assert "| `held` | `set<Card>[player]` | its owner only | `{}` |  |" in text
    assert "| `deal(c: Card in deck)` | uniform | `p` | flow | line 25 |" in text
    assert "Bots' heuristic of player `p`: `points[p] * 10 - shown[p]`" in text
    html_out = run(["describe", NIM, "--html"])
    assert html_out.stdout.startswith("<!DOCTYPE html>")
    assert "<td><code>tokens</code></td><td>int</td><td>1..40</td>" in html_out.stdout
    assert "tokens on the table at the start" in html_out.stdout


def test_describe_shows_every_parameter_value_in_this_run(tmp_path: Path) -> None:
    """A derived parameter (`a = b + K`) had a blank "in this run" with -D b=10 (it is 32)."""
    path = tmp_path / "derived.rules"
    path.write_text(textwrap.dedent("""\
        game Derived
        players 2..2
        const K: int = 22
        param b: int = 5
        param a: int = b + K  # derived
        param on: bool = true
        state { x: int[player] = a }
        flow {
          for p in players {
            choose p { take(k: int in 1..2) { x[p] += k } }
          }
        }
        score p => x[p]
        """), encoding="utf-8")
    rows = ["| `b` | int |  | `5` | `{}` |  |", "| `a` | int |  | `b + K` | `{}` | derived |",
            "| `on` | bool |  | `true` | `{}` |  |"]
    out = run(["describe", path, "-D", "b=10", "-D", "on=false"])
    assert out.exit_code == 0, out.output
    assert "\n".join(r.format(v) for r, v in zip(rows, ["10", "32", "false"])) in out.stdout
    out = run(["describe", path])
    assert "\n".join(r.format(v) for r, v in zip(rows, ["5", "27", "true"])) in out.stdout
    path.write_text(path.read_text().replace("b + K", "K // (b - 5)"))
    out = run(["describe", path])
    assert out.exit_code == 0, out.output
    assert "| `a` | int |  | `K // (b - 5)` |  | derived |" in out.stdout
    assert (f"Loading the rules faults, so the values in this run are not shown: "
            f"`{path}:5:16`: division by zero.") in out.stdout


def test_parameter_ranges_are_enforced(tmp_path: Path) -> None:
    with pytest.raises(rulelang.RulesError, match=r"E040.*'hand' must be in 1..3; -D 0"):
        rulelang.load(CARDS, params={"hand": 0})
    out = run(["simulate", ACQUIRE, "-p", "4", "-n", "2", "-D", "hand_size=0"])
    assert out.exit_code == 2
    assert "parameter 'hand_size' must be in 1..12; -D 0 is outside" in out.stderr
    out = run(["simulate", POLA, "-p", "4", "-n", "2", "-D", "start_cash=-5"])
    assert out.exit_code == 2 and "must be in 0..48000" in out.stderr
    bad = tmp_path / "bad.rules"
    text = Path(NIM).read_text()
    bad.write_text(text.replace("in 1..40 = 10", "in 1..40 = 50"))
    with pytest.raises(rulelang.RulesError, match=r"bad.rules:5:30: error\[E040\]"):
        rulelang.check_file(bad)
    bad.write_text(text.replace("int in 1..40", "bool in 1..40").replace("= 10", "= true"))
    with pytest.raises(rulelang.RulesError, match="E041"):
        rulelang.check_file(bad)
    bad.write_text(text.replace("in 1..40 = 10", "in 1..40 = 10\nvariant big {\n  tokens = 41\n}"))
    with pytest.raises(rulelang.RulesError, match="E040"):
        rulelang.check_file(bad, variant="big")
    unknown = run(["simulate", NIM, "-p", "2", "-D", "tokenz=3"])
    assert "parameters: tokens" in unknown.stderr


# ---------------------------------------------------------------------------- records, --json


def test_strided_records_replay_and_are_checked(tmp_path: Path) -> None:
    out = run(["simulate", ACQUIRE, "-p", "3", "-n", "2", "--records", tmp_path / "r",
               "--digest-every", "50"])
    assert out.exit_code == 0, out.output
    path = tmp_path / "r" / "game-000001.json"
    rec = json.loads(path.read_text())
    n = len(rec["actions"])
    assert rec["digest_steps"] == [*range(49, n, 50), n - 1][: len(rec["digests"])]
    assert rec["digest_steps"][-1] == n - 1
    good = run(["replay", ACQUIRE, path])
    assert good.exit_code == 0, good.output
    assert f"replayed {n} actions; {len(rec['digests'])} digests match" in good.stdout
    rec["digests"][1] = "0" * 64
    path.write_text(json.dumps(rec))
    bad = run(["replay", ACQUIRE, path])
    assert bad.exit_code == X.RECORD and "digest mismatch at step 99" in bad.stderr


def test_json_dash_writes_stdout_and_bad_paths_fail_first(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.chdir(tmp_path)
    out = run(["simulate", NIM, "-p", "2", "-n", "3", "--json", "-"])
    assert out.exit_code == 0
    assert json.loads(out.stdout)["games"] == 3
    assert not (tmp_path / "-").exists()
    out = run(["simulate", NIM, "-p", "2", "-n", "3", "--json", tmp_path / "no" / "s.json",
               "--records", tmp_path / "recs"])
    assert out.exit_code == X.FAILURE  # an output that cannot be written (exitcodes.py)
    assert "cannot write the summary to" in out.stderr
    assert not (tmp_path / "recs").exists()  # failed before any game was played


# ---------------------------------------------------------------------------- interrupts

ENDLESS = """
game Endless
players 2..2
state {
  r: int = 0
}
flow {
  while r < 1000000000 {
    chance roll(d: int in 1..6)
    r += 1
  }
}
score p => r
"""


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        out += [int(x) for x in text]
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _start_endless(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    rules = tmp_path / "endless.rules"
    rules.write_text(ENDLESS)
    env = dict(os.environ, HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "rulelang.cli", "simulate", str(rules), "-p", "2", "-n", "4",
         "--jobs", "2", "--backend", "interpreter"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, start_new_session=True,
        preexec_fn=sigint_as_in_a_terminal)
    workers: list[int] = []
    for _ in range(200):  # wait until both workers run
        workers = _children(proc.pid)
        if len(workers) >= 2:
            break
        time.sleep(0.05)
    if len(workers) < 2:
        proc.kill()
        _out, err = proc.communicate()
        raise AssertionError(f"no workers: {err.decode()}")
    time.sleep(0.5)
    return proc, workers


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_ctrl_c_stops_parallel_simulate_at_once(tmp_path: Path) -> None:
    proc, workers = _start_endless(tmp_path)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    try:
        _out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    assert proc.returncode == X.INTERRUPTED
    assert "interrupted" in err.decode()
    assert not any(_alive(w) for w in workers)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_workers_die_with_their_parent(tmp_path: Path) -> None:
    proc, workers = _start_endless(tmp_path)
    proc.kill()
    proc.communicate()
    for _ in range(200):
        if not any(_alive(w) for w in workers):
            break
        time.sleep(0.05)
    alive = [w for w in workers if _alive(w)]
    for w in alive:
        os.kill(w, signal.SIGKILL)
    assert alive == []


# ---------------------------------------------------------------------------- sweep


def test_sweep_axes_parse() -> None:
    from rulelang.workbench.sweep import parse_axis

    assert parse_axis("tokens=5..9:2") == ("tokens", [5, 7, 9])
    assert parse_axis("x=true,false") == ("x", [True, False])
    with pytest.raises(ValueError, match="empty sweep range '5..3' for tokens: 5 > 3"):
        parse_axis("tokens=5..3")
    with pytest.raises(ValueError, match="the step of '1..3:0' for tokens must be at least 1"):
        parse_axis("tokens=1..3:0")
    with pytest.raises(ValueError, match="expected NAME="):
        parse_axis("tokens")


def test_a_bool_sweep_writes_its_values_as_the_rules_do() -> None:
    out = run(["sweep", POLA, "-p", "3", "--param", "leader_breaks_final_tie=true,false",
               "-n", "2"])
    assert out.exit_code == 0, out.output
    cells = [line.split("│")[1].strip() for line in out.stdout.splitlines()
             if line.startswith("│")]
    assert [c for c in cells if c] == ["true", "false"]
    assert "True" not in out.stdout and "False" not in out.stdout


def test_tables_on_a_pipe_keep_one_line_per_row(monkeypatch) -> None:
    # Rich folds a table at 80 columns when it does not write to a terminal: a sweep's win-rate
    # cells, `40.0% (21.9-61.3%)`, went on two lines each in a log file
    monkeypatch.delenv("COLUMNS", raising=False)
    out = run(["sweep", ACQUIRE, "-p", "4", "--param", "start_cash=4000..8000:2000", "-n", "4"])
    assert out.exit_code == 0, out.output
    rows = [line for line in out.stdout.splitlines() if line.startswith("│")]
    assert [r.split("│")[1].strip() for r in rows] == ["4000", "6000", "8000"]
    assert all("%)" in r.split("│")[2] for r in rows)
    assert max(len(line) for line in out.stdout.splitlines()) > 80


def test_sweep_uses_the_same_seeds_at_every_point() -> None:
    from rulelang.workbench.sweep import sweep

    result = sweep(NIM, 2, 8, 4, [("tokens", [4, 5, 8])], seats=["mcts@200", "random"])
    taken = [p["measures"]["metric tokens_taken"]["mean"] for p in result["points"]]
    assert taken == [4.0, 5.0, 8.0]
    # A multiple of 4 is a loss for the first player against perfect play; the others are wins.
    wins = [p["measures"]["wins seat 0"]["mean"] for p in result["points"]]
    assert wins[1] == 1.0
    # a share of the games: its interval is Wilson's (8 of 8 won), not a zero-width t interval
    won = result["points"][1]["measures"]["wins seat 0"]
    assert won["ci95"] == pytest.approx([0.6755924, 1.0])
    from rulelang.workbench.commands import pm_cell

    assert pm_cell(won, True) == "100.0% (67.6–100.0%)"
    out = run(["sweep", CARDS, "-p", "2", "--param", "hand=1..3", "--param", "bonus=0,5",
               "-n", "4", "--json", "-"])
    assert out.exit_code == 0, out.output
    grid = json.loads(out.stdout)
    assert [p["point"] for p in grid["points"]] == [
        {"hand": h, "bonus": b} for h in (1, 2, 3) for b in (0, 5)]
    bad = run(["sweep", CARDS, "-p", "2", "--param", "hand=0..3", "-n", "4"])
    assert bad.exit_code == X.USAGE and "E040" in bad.stderr


# ---------------------------------------------------------------------------- reports


def _chromium() -> str | None:
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _render(browser: str, page: Path) -> str:
    out = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120)
    return out.stdout


def test_reports_are_written_for_every_command(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    jobs = {
        "simulate": ["simulate", CARDS, "-p", "2", "-n", "10"],
        "compare": ["compare", CARDS, "-p", "2", "-n", "10", "--b-variant", "rich", "--json",
                    tmp_path / "compare.json"],
        "sweep": ["sweep", NIM, "-p", "2", "--param", "tokens=3..6", "-n", "4", "--json",
                  tmp_path / "sweep.json"],
        "tournament": ["tournament", NIM, "--bots", "greedy,random", "-n", "4"],
    }
    for name, args in jobs.items():
        page = tmp_path / f"{name}.html"
        out = run([*args, "--report", page])
        assert out.exit_code == 0, out.output
        text = page.read_text()
        assert text.startswith("<!DOCTYPE html>")
        assert text.count('src="data:image/png;base64,') >= 1, name
        assert "http://" not in text and "https://" not in text  # self-contained
    assert "Paired differences" in (tmp_path / "compare.html").read_text()
    # the reports' tables write figures as the terminal's do (win rates in percent)
    from rulelang.workbench.commands import pm_cell
    from rulelang.workbench.compare import compare_cells

    compared = json.loads((tmp_path / "compare.json").read_text())
    wins = next(r for r in compared["rows"] if r["measure"] == "wins seat 0")
    html = (tmp_path / "compare.html").read_text()
    assert all(f"<td>{cell}</td>" in html for cell in compare_cells(wins))
    assert compare_cells(wins)[0].endswith("%")
    swept = json.loads((tmp_path / "sweep.json").read_text())
    cell = pm_cell(swept["points"][0]["measures"]["wins seat 0"], True)
    assert "%" in cell and f"<td>{cell}</td>" in (tmp_path / "sweep.html").read_text()
    bad = run(["simulate", CARDS, "-p", "2", "-n", "3", "--report", tmp_path / "no" / "r.html"])
    assert bad.exit_code == X.FAILURE and "cannot write the report" in bad.stderr


@pytest.mark.skipif(_chromium() is None, reason="needs a headless Chromium (apt install chromium)")
def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    page = tmp_path / "compare.html"
    out = run(["compare", CARDS, "-p", "2", "-n", "10", "--b-variant", "rich", "--report",
               page])
    assert out.exit_code == 0, out.output
    dom = _render(_chromium(), page)
    assert '<body data-images="ok" data-image-count="2">' in dom
    assert "<h2>Paired differences</h2>" in dom


# ---------------------------------------------------------------------------- Dask


DASK_SCRIPT = """
import json, sys
from click.testing import CliRunner
from distributed import LocalCluster
from rulelang import sim
from rulelang.cli import cli

ACQUIRE, CARDS, NIM = sys.argv[1:4]
strip = lambda s: {k: v for k, v in s.items() if k != "timing"}
out = {}
with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                  dashboard_address=None) as cluster:
    address = cluster.scheduler_address
    local = sim.simulate(ACQUIRE, 3, 24, seed=6, backend="compiled")
    out["acquire"] = [strip(sim.simulate(ACQUIRE, 3, 24, seed=6, backend="compiled",
                                         scheduler=address, batch=batch)) == strip(local)
                      for batch in (None, 5)]
    seats = ["mcts@10", "greedy", "random"]
    out["bots"] = strip(sim.simulate(CARDS, 3, 10, seed=1, seats=seats)) == strip(
        sim.simulate(CARDS, 3, 10, seed=1, seats=seats, scheduler=address, batch=3))
    args = ["compare", NIM, "-p", "2", "-n", "6", "-B", "tokens=11", "--json", "-"]
    there = CliRunner().invoke(cli, [*args, "--scheduler", address])
    here = CliRunner().invoke(cli, args)
    out["compare_exit"] = there.exit_code
    out["compare"] = json.loads(there.stdout)["rows"] == json.loads(here.stdout)["rows"]
print("RESULT " + json.dumps(out))
"""


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="needs the 'dask' extra")
def test_dask_gives_the_same_results_as_the_local_pool(tmp_path: Path) -> None:
    # In a child process: distributed changes process-wide state (it makes every exception
    # picklable, starts threads), which other tests must not inherit.
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", DASK_SCRIPT, ACQUIRE, CARDS, NIM],
                          capture_output=True, text=True, timeout=600, env=env)
    lines = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    result = json.loads(lines[-1][len("RESULT "):])
    assert result == {"acquire": [True, True], "bots": True, "compare_exit": 0,
                      "compare": True}


def test_a_def_heuristic_runs_compiled_and_agrees_with_the_interpreter() -> None:
    from rulelang.heuristics import _evaluator, declared_heuristic

    compiled = rulelang.load(POLA, backend="compiled")
    interp = rulelang.load(POLA, backend="interpreter")
    assert _evaluator(compiled).compiled_def is not None  # heuristic p => standing(p)
    hc, hi = declared_heuristic(compiled), declared_heuristic(interp)
    import random

    rng = random.Random(2)
    sc, si = compiled.new_game(3), interp.new_game(3)
    seen = set()
    while not sc.is_terminal():
        k = (bots.chance_index(rng, sc) if sc.current_player == rulelang.CHANCE
             else rng.randrange(sc.num_choices()))
        sc.apply_index(k)
        si.apply_index(k)
        assert hc(sc) == hi(si)
        seen.update(hc(sc))
    assert -100000 in seen and len(seen) > 5


@pytest.mark.slow
@pytest.mark.parametrize("name", ["polanaftowe", "acquire", "poder"])
def test_default_mcts_beats_greedy_and_random_with_significance(name: str) -> None:
    # About 1 (Pola Naftowe) to 10 (Acquire, Poder) minutes on 2 cores.
    result = tournament(str(ROOT / "rules" / f"{name}.rules"), 3, 60, 0,
                        ["mcts", "greedy", "random"], jobs=2)
    better = {(p["a"], p["b"]): p["better"] for p in result["pairs"]}
    assert better[("mcts", "greedy")] == "mcts"
    assert better[("mcts", "random")] == "mcts"


def _load_fails_in_workers(path, variant=None, params=None, backend="interpreter"):
    """Loads in the parent process, fails in pool workers (whose parent pid differs)."""
    if os.getpid() != params.pop("parent"):
        raise RuntimeError("cannot load here")
    return rulelang.load(path, variant=variant, params=params, backend=backend)


def test_a_worker_that_cannot_load_the_game_fails_the_run() -> None:
    # multiprocessing.Pool restarts a worker whose initializer raises, forever; the error must
    # reach the parent instead. (run_games is given no game here: a forked worker would play the
    # one simulate loads, and a spawned one loads it as every worker does here.)
    spec = sim.RunSpec(loader=_load_fails_in_workers, path=str(NIM), variant=None,
                       params={"parent": os.getpid()}, backend="interpreter", players=2,
                       root_seed=0)
    with pytest.raises(RuntimeError, match="cannot load here"):
        sim.run_games(spec, 8, jobs=2)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_a_killed_worker_fails_the_run_instead_of_hanging(tmp_path: Path) -> None:
    proc, workers = _start_endless(tmp_path)
    os.kill(workers[0], signal.SIGKILL)
    try:
        _out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    assert proc.returncode == X.FAILURE
    assert "a worker process died" in err.decode()
    assert not any(_alive(w) for w in workers)


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_acquire_stalemate_round_reading(backend: str) -> None:
    # With no end declaration possible (no chain can reach 200 or be safe), games end in the
    # stalemate of U7. The decision ends at once; the alternative plays one more round in which
    # nobody can place (players still take their turns), then ends.
    base = {"end_size": 200, "safe_size": 200}
    now = rulelang.load(ACQUIRE, backend=backend, params=base)
    later = rulelang.load(ACQUIRE, backend=backend, params={**base, "stalemate_round": True})
    a = sim.play_random_game(now, 3, 0, record=True).record["actions"]
    b = sim.play_random_game(later, 3, 0, record=True).record["actions"]
    assert len(a) == 387 and b[:387] == a
    assert b[387:] == ["pass_place()"] * 3
