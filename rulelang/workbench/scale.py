"""Scale-out on a Dask distributed cluster (the optional 'dask' extra).

The same batches of game indices as the local pool go to the cluster's workers; each worker
loads the game once per run and plays its batches with the same seeds, so results are identical
whatever the scheduler, the number of workers or the batch size. With the default loader the
rules text and the files it includes travel with the task, so workers need not see the rules
file or its folder; records (--records) are written by the workers, so their folder must be on a
file system the workers share.
"""

from __future__ import annotations

import hashlib
import pickle
from typing import Any

from rulelang import sim
from rulelang.sim import GameResult, RunSpec

# Per worker process: loaded games by run key (a worker may serve several runs).
_GAMES: dict[str, Any] = {}
_MAX_CACHED = 8


def load_text_rules(text: str, filename: str, variant: str | None = None,
                    params: dict | None = None, backend: str = "interpreter",
                    files: tuple[tuple[str, bytes], ...] = ()) -> Any:
    """rulelang.load_text with rulelang.load's signature order (a picklable loader); includes
    resolve against the file's folder, as rulelang.load resolves them, or, given `files` (each
    included file's path relative to that folder and its bytes: Program.included), against a
    temporary folder holding those, so that a worker needs neither the file nor its folder
    (Power Grid includes its maps). The folder is removed once the game is loaded: the files
    are read while loading only (their contents are in the program and its digest)."""
    import tempfile
    from pathlib import Path

    from rulelang import load_text

    if not files:
        return load_text(text, filename, variant=variant, params=params, backend=backend,
                         include_dir=Path(filename).parent)
    with tempfile.TemporaryDirectory(prefix="rulelang-include-") as tmp:
        _write_included(Path(tmp), files)
        return load_text(text, filename, variant=variant, params=params, backend=backend,
                         include_dir=Path(tmp))


def _write_included(folder: Any, files: tuple[tuple[str, bytes], ...]) -> None:
    import posixpath

    for rel, data in files:
        parts = posixpath.normpath(rel).split("/")
        if posixpath.isabs(rel) or ".." in parts:  # (the client's own include check)
            raise ValueError(f"included file {rel!r} is outside the rules file's folder")
        path = folder.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _run_key(spec: RunSpec, text: str | None, files: tuple = ()) -> str:
    h = hashlib.sha256(pickle.dumps((spec.loader, spec.path, spec.variant,
                                     sorted(spec.params.items()), spec.backend, files)))
    if text is not None:
        h.update(text.encode("utf-8"))
    return h.hexdigest()


def _dask_batch(spec: RunSpec, text: str | None, key: str, indices: range,
                files: tuple[tuple[str, bytes], ...] = ()) -> list[GameResult]:
    game = _GAMES.get(key)
    if game is None:
        if text is not None:
            game = load_text_rules(text, spec.path, spec.variant, dict(spec.params),
                                   spec.backend, files)
        else:
            game = sim._load(spec)
        if len(_GAMES) >= _MAX_CACHED:
            _GAMES.pop(next(iter(_GAMES)))
        _GAMES[key] = game
    try:
        return sim._run_games(game, spec, indices)
    except Exception as err:
        safe = sim._safe_error(err)
        if safe is err:
            raise
        raise safe from None


def dask_run(spec: RunSpec, games: int, address: str, batch: int | None = None,
             progress: sim.ProgressCallback | None = None) -> list[GameResult]:
    """Play games 0..games-1 of `spec` on the Dask scheduler at `address`, in game order."""
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("--scheduler needs Dask: pip install 'rulelang[dask]'") from None
    from rulelang import load

    text = None
    files: tuple[tuple[str, bytes], ...] = ()
    if spec.loader is load:
        from pathlib import Path

        from rulelang import _read, check_text

        text = _read(spec.path)
        if "include" in text:  # the files it includes go with it (a quick test before a check)
            files = tuple(check_text(text, spec.path, spec.variant, dict(spec.params),
                                     include_dir=Path(spec.path).parent).included)
    key = _run_key(spec, text, files)
    try:
        client = Client(address, set_as_default=False, timeout="20s")
    except OSError as err:
        raise ValueError(f"cannot reach the Dask scheduler at {address}: {err}") from None
    results: list[GameResult] = []
    futures: list[Any] = []
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        chunks = sim._chunks(games, workers, batch)
        if progress is not None:
            progress(0, games)
        futures = [client.submit(_dask_batch, spec, text, key, chunk, files, pure=False)
                   for chunk in chunks]
        # In submission order: the client is not the default one, and order costs nothing as
        # the results are sorted by game index anyway.
        for fut in futures:
            results.extend(fut.result())
            if progress is not None:
                progress(len(results), games)
    except BaseException:
        client.cancel(futures)
        raise
    finally:
        client.close()
    results.sort(key=lambda r: r.index)
    return results
