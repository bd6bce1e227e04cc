"""Self-contained HTML reports with matplotlib plots (the optional 'report' extra)."""

from __future__ import annotations

from typing import Any

import click


def require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise click.UsageError(
            "--report needs matplotlib: pip install 'rulelang[report]'") from None


def simulate_report(summary: dict[str, Any]) -> str:
    raise NotImplementedError
