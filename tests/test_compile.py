"""`rulelang compile` output plays whole games without rulelang; load() caches engines."""

from __future__ import annotations

import os
import subprocess
import sys

from click.testing import CliRunner

import rulelang
from rulelang.cli import cli
from tests.conftest import RULES

PLAY = """
import random, sys
sys.path.insert(0, {folder!r})
try:
    import rulelang  # noqa: F401
    print("rulelang importable")
except ImportError:
    pass
import acquire_engine as E
for seed in range(3):
    rng = random.Random(seed)
    s = E.new_game(4)
    while not s.is_terminal():
        k = s.end_action_index()
        s.apply_index(k if k >= 0 else rng.randrange(s.num_choices()))
    print(seed, s.scores(), s.winners(), s.digest())
"""


def test_compiled_module_plays_with_rulelang_absent(tmp_path):
    out = tmp_path / "acquire_engine.py"
    res = CliRunner().invoke(cli, ["compile", os.path.join(RULES, "acquire.rules"), "-o",
                                   str(out)])
    assert res.exit_code == 0, res.output
    assert "wrote" in res.output
    # -S: no site-packages, so rulelang (installed there) cannot be imported.
    run = subprocess.run([sys.executable, "-I", "-S", "-c", PLAY.format(folder=str(tmp_path))],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "rulelang importable" not in run.stdout
    lines = run.stdout.strip().splitlines()
    assert len(lines) == 3
    # The same games on the interpreter end in the same states.
    interp = rulelang.load(os.path.join(RULES, "acquire.rules"))
    import random

    for line in lines:
        seed = int(line.split()[0])
        rng = random.Random(seed)
        s = interp.new_game(4)
        while not s.is_terminal():
            k = s.end_action_index()
            s.apply_index(k if k >= 0 else rng.randrange(s.num_choices()))
        assert line.endswith(s.digest())


def test_compile_reports_rules_errors(tmp_path):
    bad = tmp_path / "bad.rules"
    bad.write_text("game X\nplayers 2..2\nflow { n = 1 }\nscore p => 0\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["compile", str(bad), "-o", str(tmp_path / "x.py")])
    assert res.exit_code == 3  # exitcodes.RULES
    assert "bad.rules:3:8: error[E010]" in res.output
    assert not (tmp_path / "x.py").exists()


def test_load_compiled_uses_a_cache_keyed_by_variant_and_params(tmp_path, monkeypatch):
    monkeypatch.setenv("RULELANG_CACHE", str(tmp_path))
    path = os.path.join(RULES, "acquire.rules")
    # Parameter values no other test uses, so nothing is loaded yet.
    a = rulelang.load(path, params={"start_cash": 5001}, backend="compiled")
    b = rulelang.load(path, params={"start_cash": 5001}, backend="compiled")
    assert a is b
    c = rulelang.load(path, params={"start_cash": 5002}, backend="compiled")
    assert c is not a and c.params["start_cash"] == 5002
    assert len(list(tmp_path.glob("*.py"))) == 2
    assert c.new_game(3).get_var("cash") == [5002, 5002, 5002]
