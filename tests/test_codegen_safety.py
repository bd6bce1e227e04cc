"""Compiling a rules file never runs code from it: hostile names and strings stay data."""

from __future__ import annotations

import ast as pyast
import glob
import os
import subprocess
import sys

import pytest

import rulelang
from rulelang import ast as rast
from rulelang.codegen import compile_program
from rulelang.codegen.emitter import Emitter
from rulelang.interpreter.engine import _Evaluator

MARK = "/tmp/rulelang-pwned-marker"

HOSTILE = r'''
game __import__
players 2..2

param __class__: int = 3
param lambda_: int = 1
enum None_(__dict__: int) { True_(1), __builtins__(2), exec(3) }
const __globals__: list<int> = [1, 2, 3]
table __getattr__(k: int) -> int { 1 => 5, _ => 7 }
state {
  import_: int = 0
  __init__: int[player] = 0
  LONGNAME: int = 0
  eval: set<None_> = {}
}
def os(x: int) -> int = x + __getattr__(x)
phase system(__reduce__: player) {
  choose __reduce__ {
    __subclasses__(self: None_) when self != exec { add self to eval }
    pass_() {
      fail "\"\"\" + __import__('os').system('touch MARKPATH') + \"\"\" ' \\ \n end"
    }
  }
}
flow {
  for p in players {
    run system(p)
  }
  import_ = os(1) + __class__ + len(__globals__)
}
score p => import_ + __init__[p]
'''.replace("LONGNAME", "x" * 3000).replace("MARKPATH", MARK)


def _clean_marker():
    if os.path.exists(MARK):
        os.remove(MARK)


def test_hostile_names_and_strings_compile_to_valid_inert_code(tmp_path):
    _clean_marker()
    prog = rulelang.check_text(HOSTILE, 'evil"""\nimport os; os.system("touch /tmp/x")#.rules')
    src = compile_program(prog)
    pyast.parse(src)
    compile(src, "engine.py", "exec")
    assert not os.path.exists(MARK)
    # The docstring header did not let the file name out.
    tree = pyast.parse(src)
    assert isinstance(tree.body[0], pyast.Expr)
    assert not any(isinstance(n, pyast.Import) and any(a.name == "os" for a in n.names)
                   for n in pyast.walk(tree))
    path = tmp_path / "engine.py"
    path.write_text(src, encoding="utf-8")
    # Run it standalone (rulelang not importable) and play the game, hitting the fail message.
    code = (
        "import sys, random\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "import engine\n"
        "s = engine.new_game(2)\n"
        "while not s.is_terminal():\n"
        "    acts = s.legal_actions()\n"
        "    s.apply([a for a in acts if a.startswith('__sub')][0])\n"
        "print(s.scores())\n"
        "s2 = engine.new_game(2)\n"
        "try:\n"
        "    s2.apply('pass_()')\n"
        "except engine.RulesRuntimeError as e:\n"
        "    print('fault', e.message[:20])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True,
                         env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "[15, 15]" in out.stdout or "fault" in out.stdout
    assert "fault" in out.stdout
    assert not os.path.exists(MARK)


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_hostile_rules_run_the_same_on_both_back_ends(backend):
    _clean_marker()
    g = rulelang.load_text(HOSTILE, "hostile.rules", backend=backend)
    s = g.new_game(2)
    s.apply("__subclasses__(True_)")
    s.apply("__subclasses__(__builtins__)")
    assert s.is_terminal()
    # import_ = os(1) + 3 + 3 where os(1) = 1 + __getattr__(1) = 6
    assert s.scores() == [12, 12]
    s2 = g.new_game(2)
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        s2.apply("pass_()")
    assert err.value.location == "hostile.rules:21:7"
    assert "__import__('os')" in err.value.message
    assert not os.path.exists(MARK)


def test_every_node_kind_has_an_evaluator_and_an_emitter():
    expr_kinds = [rast.IntLit, rast.BoolLit, rast.NoneLit, rast.Name, rast.CondExpr, rast.BinOp,
                  rast.Not, rast.Neg, rast.Range, rast.Index, rast.Attr, rast.Call, rast.Agg,
                  rast.Sort, rast.ListLit, rast.SetLit, rast.Comp, rast.ArrayLit]
    stmt_kinds = [rast.Let, rast.Assign, rast.AugAssign, rast.Add, rast.Remove, rast.Push,
                  rast.If, rast.For, rast.While, rast.Return, rast.Break, rast.Fail, rast.Reveal]
    for k in expr_kinds:
        assert hasattr(_Evaluator, f"fn_{k.__name__}"), k
        assert hasattr(Emitter, f"emit_{k.__name__}"), k
    for k in stmt_kinds:
        assert hasattr(_Evaluator, f"exec_{k.__name__}"), k
        assert hasattr(Emitter, f"emit_{k.__name__}"), k
    # The Expr / Stmt unions name exactly these kinds (flow statements are lowered instead).
    assert set(rast.Expr.__args__) == set(expr_kinds)
    flow_only = {rast.Run, rast.Choose, rast.Chance, rast.Finish}
    assert set(rast.Stmt.__args__) == set(stmt_kinds) | flow_only


def test_generated_modules_are_ruff_clean_under_the_project_config(tmp_path):
    """Every generated module passes the project's own ruff rules, with no `noqa` anywhere."""
    pytest.importorskip("ruff")
    root = os.path.join(os.path.dirname(__file__), "..")
    for path in sorted(glob.glob(os.path.join(root, "rules", "*.rules"))):
        for variant in [None, *rulelang.check_file(path).variants]:
            src = compile_program(rulelang.check_file(path, variant=variant))
            assert "noqa" not in src
            name = f"{os.path.basename(path)[:-6]}_{variant or 'base'}.py"
            (tmp_path / name).write_text(src, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--config",
                          os.path.join(root, "pyproject.toml"), "--no-cache", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
