"""The declared heuristic and metrics come from the program a game was loaded from, never from
its rules file read again: Dask workers, another working directory, `load_text` under a name
that is no file, a file edited since loading all play as a local run does."""

from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import rulelang
from rulelang import sim
from rulelang.cli import cli
from rulelang.heuristics import declared_heuristic, declared_metrics
from rulelang.workbench import scale

HERE = Path(__file__).parent
NIM = HERE / "fixtures" / "workbench" / "nim.rules"
ROOT = HERE.parent
POLA = ROOT / "rules" / "polanaftowe.rules"


def _greedy_games(game, games: int = 4) -> list[tuple]:
    out = []
    for seed in range(games):
        res = sim.play_game(game, 3, seed, ["greedy"] * 3, track=True)
        out.append((res.scores, res.winners, res.decisions, res.stats.metrics))
    return out


def _walk(game, steps: int = 12) -> list:
    """The heuristic along one fixed game (the first legal choice each time)."""
    h = declared_heuristic(game)
    state = game.new_game(3)
    values = []
    for _ in range(steps):
        if state.is_terminal():
            break
        state.apply_index(0)
        values.append(h(state))
    return values


@pytest.fixture(scope="module")
def reference():
    game = rulelang.load(POLA, backend="compiled")
    return _walk(game), _greedy_games(game)


def test_load_text_under_a_name_that_is_no_file_keeps_the_heuristic(reference) -> None:
    game = rulelang.load_text(POLA.read_text(encoding="utf-8"), "no/such/folder/pola.rules",
                              backend="compiled")
    assert declared_heuristic(game) is not None
    assert _walk(game) == reference[0]
    assert _greedy_games(game) == reference[1]


def test_metrics_of_a_game_loaded_under_a_name_that_is_no_file() -> None:
    for backend in ("interpreter", "compiled"):
        game = rulelang.load_text(NIM.read_text(encoding="utf-8"), "no/such/folder/nim.rules",
                                  backend=backend)
        state = game.new_game(2)
        state.apply("take(3)")
        assert declared_metrics(game, state) == [("tokens_taken", 3)], backend


def test_another_working_directory_or_an_edited_file_changes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference) -> None:
    (tmp_path / "a").mkdir()
    shutil.copy(POLA, tmp_path / "a" / "pola.rules")
    monkeypatch.chdir(tmp_path)
    game = rulelang.load("a/pola.rules", backend="compiled")
    elsewhere = tmp_path / "b"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # "a/pola.rules" names no file from here
    (tmp_path / "a" / "pola.rules").write_text("game Edited\n", encoding="utf-8")
    assert _walk(game) == reference[0]
    assert _greedy_games(game) == reference[1]


def test_the_dask_worker_loader_plays_as_a_local_run_from_another_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # What a Dask worker does (scale._dask_batch), without a cluster: the rules text travels
    # with the task, the file name is relative to the client's folder, not the worker's.
    text = POLA.read_text(encoding="utf-8")
    spec = sim.RunSpec(loader=rulelang.load, path="rules/polanaftowe.rules", variant=None,
                       params={}, backend="compiled", players=3, root_seed=5,
                       seats=("greedy", "greedy", "greedy"), track=True)
    local = sim._run_games(rulelang.load(POLA, backend="compiled"), spec, range(4))
    monkeypatch.chdir(tmp_path)
    game = scale.load_text_rules(text, spec.path, None, {}, "compiled")
    assert declared_heuristic(game) is not None
    key = scale._run_key(spec, text) + tmp_path.name  # a key of its own: no cached game
    remote = scale._dask_batch(spec, text, key, range(4))
    scale._GAMES.pop(key, None)
    strip = [(r.index, r.seed, r.scores, r.winners, r.decisions, r.stats) for r in local]
    assert [(r.index, r.seed, r.scores, r.winners, r.decisions, r.stats)
            for r in remote] == strip


def test_a_standalone_engine_without_its_rules_file_is_an_error(tmp_path: Path) -> None:
    # `rulelang compile` output imported without rulelang's loader has no program: its rules
    # file is checked again, and when it is gone that is an error, not a silent "no heuristic".
    rules = tmp_path / "cards.rules"
    shutil.copy(HERE / "fixtures" / "workbench" / "cards.rules", rules)
    out = tmp_path / "cards_engine.py"
    res = CliRunner().invoke(cli, ["compile", str(rules), "-o", str(out)])
    assert res.exit_code == 0, res.output

    def engine(name: str):
        spec = importlib.util.spec_from_file_location(name, out)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module.GAME

    try:
        assert declared_heuristic(engine("cards_engine_with_file")) is not None
        rules.unlink()
        with pytest.raises(ValueError, match="cannot be checked"):
            declared_heuristic(engine("cards_engine_without_file"))
    finally:
        sys.modules.pop("cards_engine_with_file", None)
        sys.modules.pop("cards_engine_without_file", None)


def test_the_dask_worker_loader_takes_the_included_files_with_the_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Power Grid includes its maps: a worker in another folder could not find them (E045,
    # "cannot include 'maps/germany.rules': no such file") and the run failed
    path = "rules/powergrid.rules"
    text = (ROOT / path).read_text(encoding="utf-8")
    files = tuple(rulelang.check_text(text, path, include_dir=ROOT / "rules").included)
    assert files and all(not rel.startswith(("/", "..")) for rel, _data in files)
    spec = sim.RunSpec(loader=rulelang.load, path=path, variant=None, params={},
                       backend="compiled", players=3, root_seed=2, seats=(), track=False)
    local = sim._run_games(rulelang.load(ROOT / path, backend="compiled"), spec, range(2))
    monkeypatch.chdir(tmp_path)
    # the worker's temporary folders go to a folder of the test's own, to be counted
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    key = scale._run_key(spec, text, files) + tmp_path.name
    with pytest.raises(rulelang.RulesError, match="E045"):
        scale._dask_batch(spec, text, key + "-bare", range(2))
    remote = scale._dask_batch(spec, text, key, range(2), files)
    scale._GAMES.pop(key, None)
    assert [(r.index, r.seed, r.scores, r.decisions) for r in remote] == [
        (r.index, r.seed, r.scores, r.decisions) for r in local]
    # the included files were written for the load and removed after it
    assert list(temp.iterdir()) == []
