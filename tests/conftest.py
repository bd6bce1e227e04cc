"""Shared pytest setup: tests marked slow run only when RULELANG_SLOW=1."""

from __future__ import annotations

import os
import signal

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("RULELANG_SLOW") == "1":
        return
    skip_slow = pytest.mark.skip(reason="slow test: set RULELANG_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = os.path.join(ROOT, "rules")

BACKENDS = ["interpreter", "compiled"]


def _compiled_available() -> bool:
    try:
        import rulelang.codegen  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Runs a behavioural test once per back end (the compiled one once it exists)."""
    if request.param == "compiled" and not _compiled_available():
        pytest.skip("compiled back end not built yet")
    return request.param


_GAMES: dict = {}


@pytest.fixture
def load_rules(backend: str):
    """load_rules("acquire", variant=None, params=None) -> Game on the current back end.

    Memoised per back end, file, variant and parameters: a Game never changes once loaded, and
    loading takes a few tenths of a second."""
    import rulelang

    def _load(name: str, variant: str | None = None, params: dict | None = None):
        key = (backend, name, variant, tuple(sorted((params or {}).items())))
        if key not in _GAMES:
            _GAMES[key] = rulelang.load(os.path.join(RULES, f"{name}.rules"), variant=variant,
                                        params=params, backend=backend)
        return _GAMES[key]

    return _load


def sigint_as_in_a_terminal() -> None:
    """preexec_fn for a child that a test interrupts with SIGINT, as Ctrl-C at a terminal would.

    A process started in the background by a non-interactive shell (`pytest ... &` in a script)
    inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler in its
    children: the signal would do nothing and the test would fail for a reason outside the code
    under test. A foreground program at a terminal starts with the default disposition."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
