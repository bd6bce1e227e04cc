"""The architecture is enforced: the import-linter contract in pyproject.toml (the pipeline's
layers; interpreter and compiler independent; a runtime that imports nothing of the package)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def test_import_contract_holds():
    lint = Path(sys.executable).parent / "lint-imports"
    out = subprocess.run([str(lint), "--config", str(Path(ROOT) / "pyproject.toml")], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Contracts: 2 kept, 0 broken." in out.stdout


def test_the_code_generator_does_not_import_the_interpreter():
    """Also checked by the contract; here as plain import statements, lazy ones included."""
    for path in (Path(ROOT) / "rulelang" / "codegen").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            assert not any(n.startswith("rulelang.interpreter") for n in names), path.name
