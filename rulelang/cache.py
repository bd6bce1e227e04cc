"""The per-user cache of compiled engine modules: keyed, verified, locked and size-capped.

A compiled engine is Python code that the loader runs, so an entry is trusted only when it is
exactly what this compiler would write for this program: the key covers every input that shapes
the generated text (the whole package source, the rules text, file name, variant, parameters and
the Python version), the entry carries a trailer with that description and the sha256 of its
body, and the file must be a regular file owned by the current user that no one else may write.
Anything else is rebuilt (with a warning) or, when the folder itself is unsafe, compiled in
memory. See docs/protocol.md, "The engine cache".
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import stat
import sys
import tempfile
import threading
import time
import types
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["CacheWarning", "cache_dir", "cache_info", "clear", "compiler_fingerprint",
           "entry_meta", "load_compiled", "max_bytes"]

FORMAT = 1
PREFIX = "rulelang_engine_"
TRAILER = "# rulelang-cache "
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
# Temporary files older than this are left-overs of a killed writer.
_STALE_TMP_SECONDS = 600
# An entry larger than this is not a module this compiler wrote.
_MAX_ENTRY_BYTES = 64 * 1024 * 1024


class CacheWarning(UserWarning):
    """A cache entry or folder was refused (corrupt, stale, foreign or unsafe)."""


# One lock for every load in this process: compiling holds the GIL anyway, and one lock makes
# "look up, build, write, run, register" a single step for each key.
_LOCK = threading.RLock()
_LOADED: dict[str, types.ModuleType] = {}
_FINGERPRINT: list[str] = []


# ---------------------------------------------------------------------------- the key


def compiler_fingerprint(root: Path | None = None) -> str:
    """sha256 of every file of the rulelang package (relative path and bytes, in sorted order).

    Whatever module the code generator reads (lower.py, runtime.py, check.py, templates...) is
    covered, so no hand-kept list can miss one. Computed once per process for the package."""
    if root is None and _FINGERPRINT:
        return _FINGERPRINT[0]
    base = root if root is not None else Path(__file__).resolve().parent
    h = hashlib.sha256()
    files = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            if name.endswith((".pyc", ".pyo")):
                continue
            full = Path(dirpath, name)
            files.append((full.relative_to(base).as_posix(), full))
    for rel, full in sorted(files):
        data = full.read_bytes()
        rel_bytes = rel.encode("utf-8", "surrogateescape")
        h.update(b"%d:%s\x00%d:" % (len(rel_bytes), rel_bytes, len(data)))
        h.update(data)
    digest = h.hexdigest()
    if root is None:
        _FINGERPRINT.append(digest)
    return digest


def canonical(value: Any) -> Any:
    """Plain JSON data for a parameter value: bool, int (an IntEnum becomes its int), str."""
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if value is None:
        return None
    raise TypeError(f"parameter value of type {type(value).__name__} has no canonical form")


def _python_tag() -> str:
    impl = sys.implementation
    return f"{impl.name}-{'.'.join(map(str, sys.version_info[:3]))}-{impl.cache_tag}"


def entry_meta(program: Any) -> dict[str, Any]:
    """Everything that shapes the generated module for one checked program."""
    return {
        "format": FORMAT,
        "compiler": compiler_fingerprint(),
        "python": _python_tag(),
        "source": program.digest,
        "file": program.filename,
        "variant": program.variant,
        "params": canonical(dict(program.param_values)),
        "limits": canonical(dataclasses.asdict(program.limits)),
    }


def _dumps(data: Any) -> str:
    # ensure_ascii: file names may hold lone surrogates (non-UTF-8 bytes) or newlines.
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _key(meta: dict[str, Any]) -> str:
    return hashlib.sha256(_dumps(meta).encode("ascii")).hexdigest()


# ---------------------------------------------------------------------------- the folder


def max_bytes() -> int:
    """The size cap (RULELANG_CACHE_MAX_BYTES, default 256 MiB); 0 disables the disk cache."""
    raw = os.environ.get("RULELANG_CACHE_MAX_BYTES", "").strip()
    if not raw:
        return DEFAULT_MAX_BYTES
    try:
        return max(int(raw), 0)
    except ValueError:
        _warn(f"RULELANG_CACHE_MAX_BYTES={raw!r} is not a number of bytes; using the default")
        return DEFAULT_MAX_BYTES


def cache_dir() -> Path | None:
    """The cache folder: RULELANG_CACHE, else the per-user cache folder (platformdirs).

    None when there is no absolute per-user location (e.g. HOME unset and no passwd entry):
    engines are then compiled in memory rather than into a folder relative to the working
    directory."""
    env = os.environ.get("RULELANG_CACHE")
    if env:
        return Path(os.path.abspath(env))
    try:
        import platformdirs

        base = platformdirs.user_cache_dir("rulelang", appauthor=False)
    except Exception:  # noqa: BLE001 - any failure here only means "no disk cache"
        return None
    if not base or not os.path.isabs(base) or base.startswith("~"):
        return None
    return Path(base)


def _uid() -> int | None:
    getuid = getattr(os, "getuid", None)
    return getuid() if getuid is not None else None


def _make_private_dirs(path: Path) -> None:
    """Create path and any missing parents, each 0700 whatever the umask."""
    missing = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(d, 0o700)
            os.chmod(d, 0o700)  # mkdir's mode is masked by the umask; this is not


def _ready_dir() -> Path | None:
    """The cache folder, created 0700 and checked: ours, a real folder, private. Else None."""
    folder = cache_dir()
    if folder is None or max_bytes() == 0:
        return None
    try:
        _make_private_dirs(folder)
        st = os.lstat(folder)
    except OSError as err:
        _warn(f"cannot use the engine cache folder {folder}: {err.strerror or err}; "
              "compiling in memory")
        return None
    if not stat.S_ISDIR(st.st_mode):
        _warn(f"engine cache {folder} is not a folder (or is a symbolic link); "
              "compiling in memory")
        return None
    uid = _uid()
    if uid is not None and st.st_uid != uid:
        _warn(f"engine cache folder {folder} belongs to another user (uid {st.st_uid}); "
              "compiling in memory")
        return None
    if st.st_mode & 0o022:
        if st.st_mode & stat.S_ISVTX:
            # A shared folder such as /tmp (RULELANG_CACHE=/tmp): never change its mode.
            _warn(f"engine cache folder {folder} is a shared folder others may write to; "
                  "compiling in memory")
            return None
        try:
            os.chmod(folder, 0o700)  # e.g. made under umask 0 by an older rulelang
        except OSError as err:
            _warn(f"engine cache folder {folder} is writable by other users and cannot be "
                  f"made private ({err.strerror or err}); compiling in memory")
            return None
    return folder


@contextlib.contextmanager
def _process_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on the folder across processes (flock), where the platform has one."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): atomic replace alone keeps entries whole
        yield
        return
    try:
        fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _warn(message: str) -> None:
    warnings.warn(message, CacheWarning, stacklevel=3)


# ---------------------------------------------------------------------------- entries


def _trailer(meta: dict[str, Any], body: str) -> str:
    digest = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()
    return TRAILER + _dumps({"meta": meta, "sha256": digest}) + "\n"


def _read_entry(path: Path, meta: dict[str, Any]) -> tuple[str | None, str | None]:
    """(module text, None) for a trustworthy entry, (None, why) for a refused one, or
    (None, None) when there is none."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None, None
    except OSError as err:
        return None, f"cannot be opened ({err.strerror or err})"
    try:
        st = os.fstat(fd)  # the checks and the read see the same file
        uid = _uid()
        if not stat.S_ISREG(st.st_mode):
            return None, "is not a regular file"
        if uid is not None and st.st_uid != uid:
            return None, f"belongs to another user (uid {st.st_uid})"
        if st.st_mode & 0o022:
            return None, f"is writable by other users (mode {stat.S_IMODE(st.st_mode):03o})"
        if st.st_size > _MAX_ENTRY_BYTES:
            return None, "is too large"
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(fd)
    try:
        text = b"".join(chunks).decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None, "is not UTF-8 text"
    body, sep, last = text[:-1].rpartition("\n")
    if not text.endswith("\n") or not sep or not last.startswith(TRAILER):
        return None, "has no rulelang trailer (truncated or not written by rulelang)"
    try:
        trailer = json.loads(last[len(TRAILER):])
    except ValueError:
        return None, "has a damaged trailer"
    if not isinstance(trailer, dict) or trailer.get("meta") != meta:
        return None, "was made for another compiler, program or parameter set"
    body += "\n"
    if hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest() != trailer.get("sha256"):
        return None, "does not match its digest (edited or damaged)"
    return body, None


def _write_entry(folder: Path, path: Path, text: str) -> bool:
    """Write text to path atomically (unique temporary file, then rename); False on failure."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".py", dir=folder)
    except OSError as err:
        _warn(f"cannot write to the engine cache {folder}: {err.strerror or err}")
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8", "surrogatepass"))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _warn(f"cannot write the engine cache entry {path}: {err.strerror or err}")
        return False
    return True


def _entries(folder: Path) -> list[tuple[float, str, int, Path]]:
    """(last use, name, size, path) of every entry, oldest first."""
    out = []
    with contextlib.suppress(OSError), os.scandir(folder) as it:
        for e in it:
            if e.name.startswith(PREFIX) and e.name.endswith(".py"):
                with contextlib.suppress(OSError):
                    st = e.stat(follow_symlinks=False)
                    out.append((st.st_mtime, e.name, st.st_size, Path(e.path)))
    return sorted(out)


def _evict(folder: Path, keep: Path, cap: int) -> None:
    """Delete least recently used entries until the folder is within the cap (keep `keep`)."""
    now = time.time()
    with contextlib.suppress(OSError), os.scandir(folder) as it:
        for e in it:
            if e.name.startswith(".tmp-"):
                with contextlib.suppress(OSError):
                    if now - e.stat(follow_symlinks=False).st_mtime > _STALE_TMP_SECONDS:
                        os.unlink(e.path)
    entries = _entries(folder)
    total = sum(size for _t, _n, size, _p in entries)
    for _t, _n, size, p in entries:
        if total <= cap:
            break
        if p == keep:
            continue
        with contextlib.suppress(OSError):
            os.unlink(p)
            total -= size


def _run_module(text: str, modname: str, filename: str) -> types.ModuleType:
    """Run module text in a fresh module; it goes into sys.modules only once it ran."""
    from rulelang.errors import IllegalAction, RulesRuntimeError

    code = compile(text, filename, "exec", dont_inherit=True)
    module = types.ModuleType(modname)
    module.__file__ = filename
    module._RULELANG_ERRORS = (IllegalAction, RulesRuntimeError)
    exec(code, module.__dict__)
    sys.modules[modname] = module  # after it ran: no thread ever sees a half-made module
    return module


# ---------------------------------------------------------------------------- entry points


def load_compiled(program: Any, compile_program: Callable[[Any], str]) -> Any:
    """The Game object of the engine for a checked program: from this process, from the disk
    cache when the entry is trustworthy, else compiled (and stored) now."""
    meta = entry_meta(program)
    key = _key(meta)
    module = _LOADED.get(key)
    if module is not None:
        return module.GAME
    modname = f"{PREFIX}{key[:32]}"
    with _LOCK:
        module = _LOADED.get(key)
        if module is not None:
            return module.GAME
        folder = _ready_dir()
        if folder is None:
            text = compile_program(program)
            module = _run_module(text, modname, f"<rulelang engine {key[:12]}>")
        else:
            path = folder / f"{modname}.py"
            with _process_lock(folder):
                text, why = _read_entry(path, meta)
                if text is not None:
                    with contextlib.suppress(OSError):
                        os.utime(path)  # last use, for least-recently-used eviction
                    module = _run_module(text, modname, str(path))
                else:
                    if why is not None:
                        _warn(f"engine cache entry {path} {why}; rebuilding it")
                    body = compile_program(program)
                    text = body if body.endswith("\n") else body + "\n"
                    # Stored only once it ran: a module that fails is never kept.
                    module = _run_module(text, modname, str(path))
                    if _write_entry(folder, path, text + _trailer(meta, text)):
                        _evict(folder, path, max_bytes())
        _LOADED[key] = module
        return module.GAME


def cache_info() -> dict[str, Any]:
    """The folder, its entries and their total size, and the cap (for `rulelang cache info`)."""
    folder = cache_dir()
    entries = _entries(folder) if folder is not None and folder.is_dir() else []
    return {"folder": None if folder is None else str(folder),
            "entries": len(entries),
            "bytes": sum(size for _t, _n, size, _p in entries),
            "max_bytes": max_bytes()}


def clear() -> int:
    """Delete every entry (and left-over temporary file); returns the number of entries."""
    folder = cache_dir()
    if folder is None or not folder.is_dir():
        return 0
    uid = _uid()
    if uid is not None and os.lstat(folder).st_uid != uid:
        _warn(f"engine cache folder {folder} belongs to another user; nothing removed")
        return 0
    removed = 0
    with _LOCK, _process_lock(folder):
        for _t, _n, _size, p in _entries(folder):
            with contextlib.suppress(OSError):
                os.unlink(p)
                removed += 1
        with contextlib.suppress(OSError), os.scandir(folder) as it:
            for e in it:
                if e.name.startswith(".tmp-"):
                    with contextlib.suppress(OSError):
                        os.unlink(e.path)
    return removed
