"""The engine cache: a private folder, a key over every compiler input, verified entries,
atomic writes, locking, recovery from damage, LRU eviction and the `rulelang cache` command."""

from __future__ import annotations

import enum
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

import rulelang
from rulelang import cache
from rulelang.cli import cli

TINY = """\
game Tiny
players 2..2
param n: int = 0
param on: bool = true
state { s: int[player] = 0 }
flow {
  for p in players {
    choose p { take(k: int in 1..2) { s[p] += k + n } }
  }
}
score p => s[p]
"""

# The same game, with every score forced to 999: what a planted or edited module would do.
PLANT = "\nState.scores = lambda self: [999] * self.num_players\n"


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A private cache folder and an empty in-process table (restored afterwards)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("RULELANG_CACHE", str(folder))
    monkeypatch.delenv("RULELANG_CACHE_MAX_BYTES", raising=False)
    saved = dict(cache._LOADED)
    cache._LOADED.clear()
    yield folder
    cache._LOADED.clear()
    cache._LOADED.update(saved)


def forget() -> None:
    """Drop what this process loaded, as a new process would start."""
    cache._LOADED.clear()


def load(n: int = 0, text: str = TINY, name: str = "tiny.rules", **params):
    return rulelang.load_text(text, name, params={"n": n, **params}, backend="compiled")


def play(game) -> list[int]:
    s = game.new_game(2)
    s.apply("take(1)")
    s.apply("take(2)")
    return s.scores()


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"{cache.PREFIX}*.py"))


def test_folder_is_created_private_even_with_umask_zero(fresh):
    nested = fresh / "a" / "b"
    os.environ["RULELANG_CACHE"] = str(nested)
    old = os.umask(0)
    try:
        assert play(load(1)) == [2, 3]
    finally:
        os.umask(old)
    for d in (fresh, fresh / "a", nested):
        assert stat.S_IMODE(os.lstat(d).st_mode) == 0o700, d
    (entry,) = entries(nested)
    assert stat.S_IMODE(os.lstat(entry).st_mode) == 0o600
    assert [p.name for p in nested.iterdir() if p.name.startswith(".tmp-")] == []


def test_an_open_folder_of_ours_is_made_private(fresh):
    fresh.mkdir(mode=0o777)
    os.chmod(fresh, 0o777)
    assert play(load(2)) == [3, 4]
    assert stat.S_IMODE(os.lstat(fresh).st_mode) == 0o700


def test_a_shared_sticky_folder_is_neither_used_nor_changed(fresh):
    fresh.mkdir()
    os.chmod(fresh, 0o1777)  # like /tmp
    with pytest.warns(cache.CacheWarning, match="shared folder"):
        assert play(load(40)) == [41, 42]
    assert stat.S_IMODE(os.lstat(fresh).st_mode) == 0o1777
    assert entries(fresh) == []


def test_a_readable_folder_is_left_as_it_is(fresh):
    fresh.mkdir()
    os.chmod(fresh, 0o755)
    assert play(load(41)) == [42, 43]
    assert stat.S_IMODE(os.lstat(fresh).st_mode) == 0o755
    assert len(entries(fresh)) == 1


def test_clear_leaves_a_folder_of_another_user_alone(fresh, monkeypatch):
    play(load(42))
    monkeypatch.setattr(cache, "_uid", lambda: os.getuid() + 1)
    with pytest.warns(cache.CacheWarning, match="belongs to another user; nothing removed"):
        assert cache.clear() == 0
    assert len(entries(fresh)) == 1


def test_home_unset_never_means_a_folder_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("RULELANG_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("HOME", raising=False)

    def no_entry(uid):
        raise KeyError(uid)

    # No HOME and no passwd entry: expanduser("~/.cache") stays relative.
    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    monkeypatch.chdir(tmp_path)
    assert cache.cache_dir() is None
    saved = dict(cache._LOADED)
    cache._LOADED.clear()
    try:
        assert play(load(3)) == [4, 5]
    finally:
        cache._LOADED.clear()
        cache._LOADED.update(saved)
    assert list(tmp_path.iterdir()) == []  # compiled in memory, nothing written here


def test_home_unset_with_a_passwd_entry_gives_an_absolute_folder(monkeypatch):
    monkeypatch.delenv("RULELANG_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("HOME", raising=False)
    folder = cache.cache_dir()
    assert folder is not None and folder.is_absolute()
    assert folder == Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "rulelang"


def test_entries_are_reused_across_processes_and_keyed_by_params(fresh):
    a = load(5)
    assert load(5) is a
    forget()
    b = load(5)  # read back from disk, as another process would
    assert b is not a and play(b) == [6, 7]
    assert play(load(6)) == [7, 8]
    assert len(entries(fresh)) == 2


def test_int_enum_parameter_is_stored_as_a_plain_int(fresh):
    class Lvl(enum.IntEnum):
        A = 5

    program = rulelang.check_text(TINY, "tiny.rules", params={"n": Lvl.A})
    assert type(program.param_values["n"]) is int
    game = load(Lvl.A)
    assert play(game) == [6, 7] and game.params["n"] == 5
    forget()
    assert play(load(5)) == [6, 7]  # the same entry, valid for later runs
    assert len(entries(fresh)) == 1
    meta = json.loads(entries(fresh)[0].read_text().splitlines()[-1][len(cache.TRAILER):])
    assert meta["meta"]["params"] == {"n": 5}
    assert cache.canonical({"n": Lvl.A, "b": True}) == {"n": 5, "b": True}
    assert json.dumps(cache.canonical(Lvl.A)) == "5"


def _planted(path: Path) -> None:
    """Rewrite an entry as an attacker who knows the format would: a body that cheats, and a
    trailer with the right description and a correct digest of the new body."""
    text = path.read_text()
    body, last = text[:-1].rsplit("\n", 1)
    meta = json.loads(last[len(cache.TRAILER):])["meta"]
    body = body + "\n" + PLANT
    path.write_text(body + cache._trailer(meta, body))


def test_planted_module_is_loaded_only_when_it_is_ours_and_private(fresh):
    play(load(7))
    (entry,) = entries(fresh)
    _planted(entry)
    os.chmod(entry, 0o600)
    forget()
    # A file we own, private, with a correct trailer: indistinguishable from our own entry.
    assert play(load(7)) == [999, 999]
    for mode in (0o620, 0o602, 0o666):
        _planted(entry)
        os.chmod(entry, mode)
        forget()
        with pytest.warns(cache.CacheWarning, match="writable by other users"):
            assert play(load(7)) == [8, 9]
        assert PLANT not in entry.read_text()
        assert stat.S_IMODE(os.lstat(entry).st_mode) == 0o600


def test_planted_module_of_another_user_is_refused(fresh, monkeypatch):
    play(load(8))
    (entry,) = entries(fresh)
    _planted(entry)
    os.chmod(entry, 0o644)
    forget()
    if os.getuid() == 0:
        os.chown(entry, 65534, 65534)  # really another owner
    else:  # pretend to be someone else: the file is then not ours
        monkeypatch.setattr(cache, "_uid", lambda: os.getuid() + 1)
        monkeypatch.setattr(cache, "_ready_dir", lambda: fresh)
    with pytest.warns(cache.CacheWarning, match="belongs to another user"):
        assert play(load(8)) == [9, 10]


def test_folder_of_another_user_is_not_used(fresh, monkeypatch):
    fresh.mkdir(mode=0o700)
    monkeypatch.setattr(cache, "_uid", lambda: os.getuid() + 1)
    with pytest.warns(cache.CacheWarning, match="belongs to another user"):
        assert play(load(9)) == [10, 11]
    assert entries(fresh) == []


def test_symlinked_entry_is_refused(fresh, tmp_path):
    play(load(10))
    (entry,) = entries(fresh)
    target = tmp_path / "elsewhere.py"
    shutil.copy(entry, target)
    _planted(target)
    entry.unlink()
    entry.symlink_to(target)
    forget()
    with pytest.warns(cache.CacheWarning, match="rebuilding"):
        assert play(load(10)) == [11, 12]
    assert not entry.is_symlink()


def test_module_for_another_program_at_this_path_is_refused(fresh):
    play(load(11))
    play(load(12))
    first, second = (e for e in entries(fresh))
    shutil.copy(second, first)  # a whole, valid entry, but made for other parameters
    forget()
    with pytest.warns(cache.CacheWarning, match="another compiler, program or parameter set"):
        games = {n: play(load(n)) for n in (11, 12)}
    assert games == {11: [12, 13], 12: [13, 14]}


@pytest.mark.parametrize("damage", ["empty", "truncated", "garbage", "no_trailer", "edited",
                                    "bad_trailer", "not_utf8"])
def test_corrupt_entry_is_rebuilt_with_a_warning(fresh, damage):
    play(load(13))
    (entry,) = entries(fresh)
    good = entry.read_bytes()
    damaged = {
        "empty": b"",
        "truncated": good[: len(good) // 2],
        "garbage": b"\x00\x01 not python (",
        "no_trailer": good[: good.rindex(b"# rulelang-cache")],
        "edited": good.replace(b"MIN_PLAYERS = 2", b"MIN_PLAYERS = 1"),
        "bad_trailer": good[: good.rindex(b"# rulelang-cache")] + b"# rulelang-cache {\n",
        "not_utf8": b"\xff\xfe" + good,
    }[damage]
    entry.write_bytes(damaged)
    forget()
    with pytest.warns(cache.CacheWarning, match="rebuilding it"):
        assert play(load(13)) == [14, 15]
    assert entry.read_bytes() == good
    forget()
    assert play(load(13)) == [14, 15]  # and no warning now: warnings are errors here


def test_fingerprint_covers_every_file_of_the_package(tmp_path):
    pkg = Path(cache.__file__).parent
    copy = tmp_path / "rulelang"
    shutil.copytree(pkg, copy, ignore=shutil.ignore_patterns("__pycache__"))
    base = cache.compiler_fingerprint(copy)
    assert base == cache.compiler_fingerprint(pkg)
    (copy / "__pycache__").mkdir()
    (copy / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"junk")
    assert cache.compiler_fingerprint(copy) == base  # bytecode is not source
    seen = {base}
    for rel in ("lower.py", "runtime.py", "check.py", "types.py", "codegen/emitter.py",
                "codegen/templates/engine.py.j2", "grammar/rules.lark", "interpreter/engine.py"):
        f = copy / rel
        old = f.read_bytes()
        f.write_bytes(old + b"\n# changed\n")
        seen.add(cache.compiler_fingerprint(copy))
        f.write_bytes(old)
    (copy / "new_module.py").write_text("x = 1\n")
    seen.add(cache.compiler_fingerprint(copy))
    assert len(seen) == 10


def test_stale_compiler_gets_a_new_entry(fresh, monkeypatch):
    play(load(14))
    (old,) = entries(fresh)
    forget()
    # The compiler changed (e.g. lower.py was edited): a new key, so the old module is not used.
    monkeypatch.setattr(cache, "_FINGERPRINT", ["0" * 64])
    assert play(load(14)) == [15, 16]
    new = [e for e in entries(fresh) if e != old]
    assert len(new) == 1
    # An old entry copied under the new name is refused: its trailer names the old compiler.
    shutil.copy(old, new[0])
    forget()
    with pytest.warns(cache.CacheWarning, match="another compiler"):
        assert play(load(14)) == [15, 16]


def test_python_version_is_part_of_the_key(fresh, monkeypatch):
    play(load(15))
    forget()
    monkeypatch.setattr(cache, "_python_tag", lambda: "cpython-9.9.9-cpython-399")
    play(load(15))
    assert len(entries(fresh)) == 2


def test_module_enters_sys_modules_only_after_it_ran(fresh):
    def broken(program):
        return "GAME = None\nraise RuntimeError('half-made')\n"

    program = rulelang.check_text(TINY, "tiny.rules", params={"n": 16})
    before = {m for m in sys.modules if m.startswith(cache.PREFIX)}
    with pytest.raises(RuntimeError, match="half-made"):
        cache.load_compiled(program, broken)
    assert {m for m in sys.modules if m.startswith(cache.PREFIX)} == before
    assert cache._LOADED == {}
    assert entries(fresh) == []  # never stored either
    game = load(16)
    mod = sys.modules[type(game).__module__]
    assert mod.GAME is game


def test_threads_loading_many_programs_all_succeed(fresh):
    programs = list(range(100, 130))
    errors: list[BaseException] = []
    results: dict[tuple[int, int], object] = {}
    barrier = threading.Barrier(8)

    def worker(t: int) -> None:
        barrier.wait()
        for i, n in enumerate(programs[t:] + programs[:t]):
            try:
                results[t, i] = (n, load(n))
            except BaseException as exc:  # noqa: BLE001 - every failure is counted
                errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert len(results) == 240
    by_n: dict[int, set[int]] = {}
    for n, game in results.values():
        by_n.setdefault(n, set()).add(id(game))
    assert all(len(ids) == 1 for ids in by_n.values())  # one Game per program
    assert len(entries(fresh)) == 30
    assert [p.name for p in fresh.iterdir() if p.name.startswith(".tmp-")] == []
    assert play(load(129)) == [130, 131]


def test_processes_loading_the_same_programs_all_succeed(fresh, tmp_path):
    rules = tmp_path / "tiny.rules"
    rules.write_text(TINY)
    script = (
        "import sys, rulelang\n"
        "for n in range(200, 206):\n"
        f"    g = rulelang.load({str(rules)!r}, params={{'n': n}}, backend='compiled')\n"
        "    s = g.new_game(2); s.apply('take(1)'); s.apply('take(1)')\n"
        "    assert s.scores() == [n + 1, n + 1], s.scores()\n"
        "print('ok')\n")
    env = dict(os.environ, RULELANG_CACHE=str(fresh))
    procs = [subprocess.Popen([sys.executable, "-W", "error", "-c", script], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [(p.returncode, o) for p, (o, _e) in zip(procs, outs)] == [(0, "ok\n")] * 4, outs
    assert len(entries(fresh)) == 6


def test_size_cap_evicts_least_recently_used(fresh, monkeypatch):
    play(load(20))
    (a,) = entries(fresh)
    size = a.stat().st_size
    monkeypatch.setenv("RULELANG_CACHE_MAX_BYTES", str(2 * size + size // 2))
    play(load(21))
    (b,) = [e for e in entries(fresh) if e != a]
    os.utime(a, (1000, 1000))
    os.utime(b, (2000, 2000))
    forget()
    play(load(20))  # a cache hit marks a as just used
    assert a.stat().st_mtime > 2000
    play(load(22))  # over the cap: b, the least recently used, goes
    left = entries(fresh)
    assert a in left and b not in left and len(left) == 2
    monkeypatch.setenv("RULELANG_CACHE_MAX_BYTES", "1")
    play(load(23))  # the entry just written always stays
    assert len(entries(fresh)) == 1


def test_zero_cap_disables_the_disk_cache(fresh, monkeypatch):
    monkeypatch.setenv("RULELANG_CACHE_MAX_BYTES", "0")
    assert play(load(24)) == [25, 26]
    assert not fresh.exists()


def test_non_utf8_file_name_on_the_compiled_back_end(fresh, tmp_path):
    name = os.fsdecode(b"caf\xe9.rules")
    path = tmp_path / name
    path.write_text(TINY)
    game = rulelang.load(path, backend="compiled")
    assert play(game) == [1, 2]
    forget()
    assert play(rulelang.load(path, backend="compiled")) == [1, 2]


def test_cache_command_info_and_clear(fresh, monkeypatch):
    monkeypatch.setenv("RULELANG_CACHE_MAX_BYTES", "1000000")
    play(load(30))
    play(load(31))
    total = sum(e.stat().st_size for e in entries(fresh))
    res = CliRunner().invoke(cli, ["cache", "info"])
    assert res.exit_code == 0, res.output
    assert res.output == (f"folder: {fresh}\nentries: 2\nsize: {total} bytes\n"
                          "limit: 1000000 bytes (RULELANG_CACHE_MAX_BYTES)\n")
    (fresh / ".tmp-left-over.py").write_text("x")
    res = CliRunner().invoke(cli, ["cache", "clear"])
    assert res.exit_code == 0
    assert res.output == f"removed 2 entries from {fresh}\n"
    assert entries(fresh) == [] and not (fresh / ".tmp-left-over.py").exists()
    res = CliRunner().invoke(cli, ["cache", "info"])
    assert res.output.splitlines()[1:3] == ["entries: 0", "size: 0 bytes"]


def test_cache_command_without_a_folder(monkeypatch):
    monkeypatch.setattr(cache, "cache_dir", lambda: None)
    res = CliRunner().invoke(cli, ["cache", "info"])
    assert res.exit_code == 0
    assert res.output.startswith("folder: none (engines are compiled in memory)\nentries: 0\n")
    res = CliRunner().invoke(cli, ["cache", "clear"])
    assert res.output == "removed 0 entries (no cache folder)\n"
