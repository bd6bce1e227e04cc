"""The documentation stays true: every rulelang sketch in docs/language.md parses, complete games
also check and play on each back end, quotations match the rules files, and the error list
matches the checker."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

import rulelang
from rulelang import ast
from rulelang.grammar import parse

ROOT = Path(__file__).resolve().parent.parent
LANGUAGE = ROOT / "docs" / "language.md"
QUOTE_MARK = "# quoted from "
FENCE = re.compile(r"^```rules[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def _blocks() -> list[tuple[int, str]]:
    """(first line, text) of every ```rules block in docs/language.md, the text padded with
    blank lines so that diagnostics point at the line of the document itself."""
    text = LANGUAGE.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 2
        out.append((line, "\n" * (line - 1) + m.group(1)))
    return out


DOC = "docs/language.md"
BLOCKS = _blocks()
IDS = [f"line{line}" for line, _ in BLOCKS]


def _is_complete(text: str) -> bool:
    try:
        module = parse(text, DOC)
    except rulelang.RulesError:
        return False  # reported by test_sketch_parses
    kinds = {type(d) for d in module.decls}
    return {ast.GameDecl, ast.PlayersDecl, ast.FlowDecl, ast.ScoreDecl} <= kinds


def _complete_blocks() -> list[tuple[int, str]]:
    return [(line, text) for line, text in BLOCKS if _is_complete(text)]


def test_there_are_sketches() -> None:
    # Guards the extraction itself: a broken fence pattern would make every test below vacuous.
    assert len(BLOCKS) >= 20
    assert len(_complete_blocks()) >= 4


@pytest.mark.parametrize(("line", "text"), BLOCKS, ids=IDS)
def test_sketch_parses(line: int, text: str) -> None:
    parse(text, DOC)


COMPLETE = _complete_blocks()


@pytest.mark.parametrize(("line", "text"), COMPLETE, ids=[f"line{n}" for n, _ in COMPLETE])
def test_complete_sketch_checks_and_plays(line: int, text: str, backend: str) -> None:
    rulelang.check_text(text, DOC)
    game = rulelang.load_text(text, DOC, backend=backend)
    # A short random playout at both ends of the player range catches sketches that check but
    # fault at run time (a decision with no legal action, a missing table row).
    for n in sorted({game.min_players, game.max_players}):
        rng = random.Random(n)
        state = game.new_game(num_players=n)
        for _ in range(3000):
            if state.is_terminal():
                break
            if state.current_player == rulelang.CHANCE:
                weights = state.chance_weights()
                k = (rng.randrange(state.num_choices()) if weights is None
                     else rng.choices(range(len(weights)), weights)[0])
            else:
                k = rng.randrange(state.num_choices())
            state.apply_index(k)
        assert state.is_terminal(), f"sketch at line {line} did not finish with {n} players"


def _normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


QUOTES = [(line, text) for line, text in BLOCKS if text.lstrip().startswith(QUOTE_MARK)]


@pytest.mark.parametrize(("line", "text"), QUOTES, ids=[f"line{n}" for n, _ in QUOTES])
def test_quotation_matches_rules_file(line: int, text: str) -> None:
    first, _, body = text.lstrip().partition("\n")
    source = ROOT / first[len(QUOTE_MARK):].strip()
    assert source.is_file(), f"{source} named at language.md:{line} does not exist"
    assert _normalise(body) in _normalise(source.read_text(encoding="utf-8")), (
        f"the quotation at language.md:{line} no longer matches {source.name}; re-copy it")


def test_quotations_exist() -> None:
    assert any("rules/acquire.rules" in text.lstrip().partition("\n")[0] for _, text in QUOTES)


def test_error_codes_are_all_documented() -> None:
    # Every diagnostic code the pipeline can emit has a line in the reference, and vice versa.
    sources = [ROOT / "rulelang" / name
               for name in ("check.py", "__init__.py", "view.py", "include.py", "errors.py")]
    sources.append(ROOT / "rulelang" / "grammar" / "transform.py")
    emitted = set()
    for path in sources:
        emitted |= set(re.findall(r'"(E\d{3})"', path.read_text(encoding="utf-8")))
    doc = LANGUAGE.read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `(E\d{3})` \|", doc, re.MULTILINE))
    assert emitted - documented == set(), "undocumented error codes"
    assert documented - emitted == set(), "documented codes the pipeline never emits"


def test_readme_has_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install -e . && rulelang simulate rules/acquire.rules --players 4 --games 200" \
        in readme
    assert "pip install -e '.[test]' && pytest" in readme


def test_readings_has_every_game_section() -> None:
    readings = (ROOT / "docs" / "readings.md").read_text(encoding="utf-8")
    for heading in ("## Acquire", "## Pola Naftowe", "## O Jogo do Poder", "## Automobile",
                    "## Errata"):
        assert heading in readings


def test_performance_lists_every_pass() -> None:
    """docs/performance.md's table of the code generator's passes names each pass in
    codegen.passes.PASSES, and nothing else."""
    from rulelang.codegen.passes import PASSES

    text = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `plan_")]
    listed = {name for row in rows for name in re.findall(r"`(plan_\w+)`", row.split("|")[1])}
    assert listed == {p.__name__ for p in PASSES}
