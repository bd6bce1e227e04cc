"""The grammar builds conflict-free in strict mode, its shipped tables are current, and a fresh
machine (empty temp folder, home and cache) parses without writing anything."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import lark
import pytest

from rulelang.grammar import transform

ROOT = Path(__file__).resolve().parent.parent


def test_grammar_builds_in_strict_mode():
    # strict mode refuses shift/reduce conflicts and terminals that can collide
    parser = transform.build_parser(strict=True)
    assert parser.options.parser == "lalr"


def test_shipped_tables_match_the_grammar(tmp_path):
    data = resources.files("rulelang.grammar").joinpath("rules.tables").read_bytes()
    head = data.split(b"\n", 1)[0].decode()
    grammar, _, version = head.partition(" lark ")
    assert head == transform.tables_header(transform.grammar_text(), version), (
        "rulelang/grammar/rules.tables is stale: run `python -m rulelang.grammar`")
    # Built by the installed Lark (otherwise the parser is built in memory, and a rebuild
    # here would only show that Lark's layout): the shipped bytes are exactly a fresh build's.
    if version == lark.__version__:
        assert Path(transform.write_tables(str(tmp_path / "t"))).read_bytes() == data
        lark.Lark.load(io.BytesIO(data.split(b"\n", 1)[1]))  # loads (no silent rebuild)


@pytest.mark.parametrize("no_limit", [2**32 - 1, 2**64])
def test_tables_are_the_same_bytes_on_every_python(tmp_path, monkeypatch, no_limit):
    """An unbounded regular expression's maximum width is Python's "no limit", 2**32 - 1 before
    3.11.7 and 2**64 since (Debian 12's python3 is 3.11.2): the shipped tables hold one value for
    it, so a rebuild on either gives the shipped bytes. Both are simulated here."""
    real = lark.lexer.get_regexp_width

    def width(expr):
        lo, hi = real(expr)
        return [lo, no_limit if hi >= 2**32 - 1 else hi]

    monkeypatch.setattr(lark.lexer, "get_regexp_width", width)
    data = resources.files("rulelang.grammar").joinpath("rules.tables").read_bytes()
    if data.split(b"\n", 1)[0].decode().partition(" lark ")[2] != lark.__version__:
        pytest.skip("the shipped tables were built by another Lark")
    assert Path(transform.write_tables(str(tmp_path / "t"))).read_bytes() == data


def test_tables_are_the_same_bytes_whatever_the_hash_seed(tmp_path):
    """Lark numbers states and terminals in an order that varies between runs; write_tables
    numbers them canonically, so a rebuild changes the file only when the grammar changes."""
    outs = []
    for seed in ("1", "2"):
        target = tmp_path / f"tables{seed}"
        code = f"from rulelang.grammar.transform import write_tables; write_tables({str(target)!r})"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, timeout=120)
        outs.append(target.read_bytes())
    assert outs[0] == outs[1]


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
