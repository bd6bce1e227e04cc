"""The reference interpreter back end."""

from rulelang.interpreter.engine import Game, State

__all__ = ["Game", "State"]
