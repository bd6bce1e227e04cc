"""The .rules grammar and the parse-tree-to-AST transform."""

from rulelang.grammar.transform import parse

__all__ = ["parse"]
