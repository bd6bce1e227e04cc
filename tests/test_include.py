"""`include`: data files resolved against the including file, checked, and covered by the
program digest (engine cache, records, compiled headers)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import rulelang
from rulelang import cache
from rulelang.codegen.module import compile_program

FIXTURE = Path(__file__).parent / "fixtures" / "include"
MAIN = FIXTURE / "main.rules"


def test_included_data_plays_on_both_back_ends(backend):
    game = rulelang.load(MAIN, backend=backend)
    s = game.new_game(2)
    # 24 coal at 1 + 18 oil at 3, plus the path Essen-Duisburg-Dortmund (0 + 6, not 10)
    assert s.scores() == [24 + 54 + 6] * 2
    s.apply("buy(Oil)")
    assert s.scores() == [24 + 51 + 6] * 2


def test_each_file_is_read_once_in_include_order():
    program = rulelang.check_file(MAIN)
    # named relative to the main file's folder: the digest does not depend on how the main
    # file was named
    assert [name for name, _data in program.included] == ["data/market.rules",
                                                          "data/cities.rules"]
    assert list(program.enums) == ["Res", "City"]
    assert list(program.included_texts) == [str(FIXTURE / "data" / "market.rules"),
                                            str(FIXTURE / "data" / "cities.rules")]


def test_the_digest_does_not_depend_on_how_the_main_file_is_named(monkeypatch):
    absolute = rulelang.check_file(MAIN.resolve()).digest
    monkeypatch.chdir(FIXTURE.parent)
    assert rulelang.check_file(Path("include") / "main.rules").digest == absolute
    monkeypatch.chdir(FIXTURE)
    assert rulelang.check_file("main.rules").digest == absolute


def _tree(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    for name, body in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body, encoding="utf-8")
    return tmp_path / "game.rules"


GAME = """game G
players 2..2
include "{path}"
state {{ n: int = K }}
flow {{ choose players[0] {{ done() {{ }} }} }}
score p => n
"""


def _error(path: Path) -> rulelang.RulesError:
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.check_file(path)
    return err.value


@pytest.mark.parametrize(("include", "files", "message"), [
    ("/etc/passwd", {}, "include path '/etc/passwd' must be relative"),
    ("../outside.rules", {"../outside.rules": "const K: int = 1\n"}, "leads outside"),
    ("data/../../x.rules", {}, "leads outside"),
    ("missing.rules", {}, "cannot include 'missing.rules': no such file"),
    ("data", {"data/k.rules": "const K: int = 1\n"}, "it is a folder"),
    ("latin1.rules", {"latin1.rules": "# \xe9\nconst K: int = 1\n".encode("latin-1")},
     "not UTF-8 text (byte 2)"),
    ("", {}, "must be relative"),
])
def test_bad_include_paths_point_at_the_include(tmp_path, include, files, message):
    work = tmp_path / "work"
    path = _tree(work, {"game.rules": GAME.format(path=include), **files})
    err = _error(path)
    (d,) = err.diagnostics
    assert (d.code, d.span.file, d.span.line, d.span.col) == ("E045", str(path), 3, 1)
    assert message in d.message
    assert f"{path}:3:1: error[E045]" in str(err)


def test_a_symbolic_link_out_of_the_folder_is_refused(tmp_path):
    (tmp_path / "secret.rules").write_text("const K: int = 1\n", encoding="utf-8")
    path = _tree(tmp_path / "work", {"game.rules": GAME.format(path="link.rules")})
    os.symlink(tmp_path / "secret.rules", tmp_path / "work" / "link.rules")
    (d,) = _error(path).diagnostics
    assert d.code == "E045" and "leads outside" in d.message


def test_an_include_cycle_is_reported_at_the_include_that_closes_it(tmp_path):
    path = _tree(tmp_path, {
        "game.rules": GAME.format(path="a.rules"),
        "a.rules": 'const K: int = 1\ninclude "b.rules"\n',
        "b.rules": '# b\ninclude "a.rules"\n',
    })
    (d,) = _error(path).diagnostics
    assert (d.code, d.span.file, d.span.line, d.span.col) == ("E045", str(tmp_path / "b.rules"),
                                                              2, 1)
    a, b = tmp_path / "a.rules", tmp_path / "b.rules"
    assert d.message == f"include cycle: {a} -> {b} -> {a}"


def test_a_file_including_itself_is_a_cycle(tmp_path):
    path = _tree(tmp_path, {"game.rules": GAME.format(path="game.rules")})
    (d,) = _error(path).diagnostics
    assert d.code == "E045" and d.message == f"include cycle: {path} -> {path}"


def test_an_included_file_holds_only_data(tmp_path):
    path = _tree(tmp_path, {
        "game.rules": GAME.format(path="data/k.rules"),
        "data/k.rules": "const K: int = 1\nstate { m: int = 0 }\n\ndef f() -> int = 1\n",
    })
    err = _error(path)
    where = str(tmp_path / "data" / "k.rules")
    assert [(d.code, d.span.file, d.span.line, d.span.col) for d in err.diagnostics] == [
        ("E046", where, 2, 1), ("E046", where, 4, 5)]
    assert "not 'state'" in err.diagnostics[0].message
    assert err.diagnostics[0].notes == (f"included from {tmp_path / 'game.rules'}:3:1",)
    # the quoted line is the included file's own
    assert "    2 | state { m: int = 0 }" in str(err)


def test_errors_inside_an_included_file_name_that_file(tmp_path):
    path = _tree(tmp_path, {
        "game.rules": GAME.format(path="k.rules"),
        "k.rules": "# constants\nconst K: int = 1 + cahs\n",
    })
    err = _error(path)
    (d,) = err.diagnostics
    assert (d.code, d.span.file, d.span.line, d.span.col) == (
        "E010", str(tmp_path / "k.rules"), 2, 20)
    assert "    2 | const K: int = 1 + cahs" in str(err)


def test_a_syntax_error_inside_an_included_file_names_it_and_the_include(tmp_path):
    path = _tree(tmp_path, {"game.rules": GAME.format(path="k.rules"),
                            "k.rules": "const K: int = = 1\n"})
    (d,) = _error(path).diagnostics
    assert (d.code, d.span.file, d.span.line, d.span.col) == (
        "E001", str(tmp_path / "k.rules"), 1, 16)
    assert d.notes[-1] == f"included from {path}:3:1"


def test_text_without_a_folder_refuses_includes_and_include_dir_resolves_them():
    text = MAIN.read_text(encoding="utf-8")
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.load_text(text, "main.rules")
    assert [(d.code, d.span.line) for d in err.value.diagnostics] == [("E045", 4), ("E045", 5)]
    assert "not read from a file" in err.value.diagnostics[0].message
    game = rulelang.load_text(text, "main.rules", include_dir=FIXTURE)
    assert game.new_game(2).scores() == [84, 84]


def test_the_digest_covers_included_bytes_and_the_cache_does_not_serve_a_stale_engine(
        tmp_path, monkeypatch):
    monkeypatch.setenv("RULELANG_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("RULELANG_CACHE_MAX_BYTES", raising=False)
    saved = dict(cache._LOADED)
    cache._LOADED.clear()
    try:
        work = tmp_path / "game"
        shutil.copytree(FIXTURE, work)
        first = rulelang.load(work / "main.rules", backend="compiled")
        assert first.new_game(2).scores() == [84, 84]
        market = work / "data" / "market.rules"
        market.write_text(market.read_text(encoding="utf-8").replace("Coal => 24", "Coal => 30"),
                          encoding="utf-8")
        cache._LOADED.clear()  # as a new process would start
        second = rulelang.load(work / "main.rules", backend="compiled")
        assert second.source_digest != first.source_digest
        assert second.new_game(2).scores() == [90, 90]
        assert rulelang.load(work / "main.rules").source_digest == second.source_digest
        assert len(list((tmp_path / "cache").glob(f"{cache.PREFIX}*.py"))) == 2
    finally:
        cache._LOADED.clear()
        cache._LOADED.update(saved)


def test_the_main_text_alone_keeps_its_old_digest():
    import hashlib

    text = "game G\nplayers 2..2\nflow { finish }\nscore p => 0\n"
    program = rulelang.check_text(text, "g.rules")
    assert program.digest == hashlib.sha256(text.encode()).hexdigest()


def test_compiled_output_is_standalone_and_names_the_included_files(tmp_path):
    program = rulelang.check_file(MAIN)
    text = compile_program(program)
    header = text.split('"""')[1]
    assert "Included data (folded into this module):\n    data/market.rules\n" \
           "    data/cities.rules\n" in header
    assert f"Source sha256 (with includes): {program.digest}" in header
    # run from elsewhere, with the data folder gone: nothing is read at run time
    module = tmp_path / "engine.py"
    module.write_text(text, encoding="utf-8")
    namespace: dict = {"__name__": "engine"}
    exec(compile(text, str(module), "exec"), namespace)  # noqa: S102 - our own output
    s = namespace["Game"]().new_game(2)
    assert s.scores() == [84, 84]


def test_records_carry_the_digest_with_includes_and_replay_warns_after_a_data_edit(tmp_path):
    import json

    from click.testing import CliRunner

    from rulelang.cli import cli

    work = tmp_path / "game"
    shutil.copytree(FIXTURE, work)
    main, records = work / "main.rules", tmp_path / "records"
    runner = CliRunner()
    res = runner.invoke(cli, ["simulate", str(main), "-p", "2", "-n", "1", "--records",
                              str(records), "--backend", "interpreter"])
    assert res.exit_code == 0, res.output
    (record,) = sorted(records.glob("*.json"))
    assert json.loads(record.read_text())["rules_digest"] == rulelang.check_file(main).digest
    res = runner.invoke(cli, ["replay", str(main), str(record)])
    assert res.exit_code == 0 and "warning" not in res.stderr
    cities = work / "data" / "cities.rules"
    cities.write_text(cities.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    res = runner.invoke(cli, ["replay", str(main), str(record)])
    assert res.exit_code == 0
    assert "differs from the rules file the record was made with" in res.stderr
