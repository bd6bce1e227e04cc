"""Rules-declared heuristics (`heuristic p => expr`), evaluated for bots on either back end."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def declared_heuristic(game: Any) -> Callable[[Any], Sequence[int]] | None:
    """The file's heuristic as a function state -> value per player, or None."""
    return None


def declared_metrics(game: Any, state: Any) -> list[tuple[str, int]]:
    """The file's declared metrics evaluated on `state`, in declaration order."""
    return []
