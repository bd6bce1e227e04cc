"""The grammar builds conflict-free in strict mode, its shipped tables are current, and a fresh
machine (empty temp folder, home and cache) parses without writing anything."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

from rulelang.grammar import transform

ROOT = Path(__file__).resolve().parent.parent


def test_grammar_builds_in_strict_mode():
    # strict mode refuses shift/reduce conflicts and terminals that can collide
    parser = transform.build_parser(strict=True)
    assert parser.options.parser == "lalr"


def test_shipped_tables_match_the_grammar():
    data = resources.files("rulelang.grammar").joinpath("rules.tables").read_bytes()
    head = data.split(b"\n", 1)[0].decode()
    assert head == transform.grammar_digest(transform.grammar_text()), (
        "rulelang/grammar/rules.tables is stale: run `python -m rulelang.grammar`")


def test_fresh_machine_loads_without_writing_temp_files(tmp_path):
    env = dict(os.environ)
    for name in ("TMPDIR", "HOME", "XDG_CACHE_HOME"):
        folder = tmp_path / name.lower()
        folder.mkdir()
        env[name] = str(folder)
    code = ("import rulelang; g = rulelang.load('rules/acquire.rules', backend='interpreter');"
            "s = g.new_game(4); print(s.current_player, s.num_choices())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["-1", "108"]
    assert list((tmp_path / "tmpdir").iterdir()) == []
