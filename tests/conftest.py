"""Shared pytest setup: tests marked slow run only when RULELANG_SLOW=1."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("RULELANG_SLOW") == "1":
        return
    skip_slow = pytest.mark.skip(reason="slow test: set RULELANG_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
