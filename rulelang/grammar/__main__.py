"""Rewrite the prebuilt parser tables after a grammar edit: `python -m rulelang.grammar`."""

from rulelang.grammar.transform import write_tables

print("wrote", write_tables())
