"""Front-end diagnostics: fixture files declare the errors they must produce, plus API checks.

Each tests/fixtures/errors/**/*.rules file starts with comment lines such as
    # expect: E010 12:5 undefined name 'cahs'
    # expect-note: did you mean 'cash'?
An `expect` gives the code, line:col and a substring of the message; an `expect-note` that
follows it gives a substring of one of that diagnostic's notes. The multiset of (code, line, col)
reported must equal the expected one exactly, so a fixture also proves nothing else is reported.
A fixture may include the data files of tests/fixtures/errors/included/ (not fixtures
themselves); an error in one is expected as `# expect: E012 included/k.rules:1:16 ...`.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

import rulelang
from rulelang.errors import Diagnostic, RulesError

FIXTURES = Path(__file__).parent / "fixtures" / "errors"
INCLUDED = FIXTURES / "included"  # data files the fixtures include
FIXTURE_FILES = sorted(p for p in FIXTURES.rglob("*.rules") if INCLUDED not in p.parents)
EXPECT = re.compile(r"#\s*expect:\s*(E\d{3})\s+(?:(\S+):)?(\d+):(\d+)\s+(.*?)\s*$")
EXPECT_NOTE = re.compile(r"#\s*expect-note:\s*(.*?)\s*$")

# A small valid program the API tests bend one way or another.
MINI = """\
game Mini
players 2..4
param start: int = 10
param open_hand: bool = false
enum Color { Red, Green, Blue }
param first_color: Color = Red
variant rich { start = 20 }
variant richer { start = 40 }
state { cash: int[player] = start }
flow {
  for p in players {
    cash[p] += 1
  }
}
score p => cash[p]
"""


class Expected:
    def __init__(self, code: str, file: str, line: int, col: int, text: str) -> None:
        self.code, self.file, self.line, self.col, self.text = code, file, line, col, text
        self.notes: list[str] = []

    @property
    def key(self) -> tuple[str, str, int, int]:
        return (self.code, self.file, self.line, self.col)

    def matches(self, d: Diagnostic) -> bool:
        return (self.key == _file_key(d) and self.text in d.message
                and all(any(n in dn for dn in d.notes) for n in self.notes))

    def __repr__(self) -> str:
        notes = "".join(f" [note: {n}]" for n in self.notes)
        return f"{self.code} {self.file}:{self.line}:{self.col} {self.text}{notes}"


def _key(d: Diagnostic) -> tuple[str, int, int]:
    return (d.code, d.span.line, d.span.col)


def _file_key(d: Diagnostic) -> tuple[str, str, int, int]:
    return (d.code, d.span.file, d.span.line, d.span.col)


def read_expectations(path: Path) -> list[Expected]:
    """The expect lines of the leading comment block of a fixture."""
    out: list[Expected] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line.startswith("#"):
            break
        if m := EXPECT.match(line):
            out.append(Expected(m[1], m[2] or path.name, int(m[3]), int(m[4]), m[5]))
        elif m := EXPECT_NOTE.match(line):
            assert out, f"{path.name}: expect-note before any expect"
            out[-1].notes.append(m[1])
        else:
            assert "expect" not in line, f"{path.name}: malformed directive {line!r}"
    return out


def test_fixtures_exist() -> None:
    assert len(FIXTURE_FILES) >= 15
    codes = {e.code for f in FIXTURE_FILES for e in read_expectations(f)}
    wanted = {"E001", "E010", "E011", "E012", "E013", "E015", "E016", "E017", "E020", "E021",
              "E022", "E023", "E024", "E025", "E027", "E028", "E029", "E030", "E031",
              "E034", "E035", "E036", "E037", "E038"}
    assert wanted <= codes, f"no fixture covers {sorted(wanted - codes)}"


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture(path: Path) -> None:
    expected = read_expectations(path)
    assert expected, f"{path.name} declares no '# expect:' line"
    with pytest.raises(RulesError) as info:
        # The bare file name keeps the "first defined at FILE:L:C" notes independent of cwd
        # (and names included files relative to the fixture's folder).
        rulelang.check_text(path.read_text(encoding="utf-8"), path.name,
                            include_dir=path.parent)
    got = info.value.diagnostics
    shown = "\n".join(f"  {d.code} {d.span} {d.message} {list(d.notes)}" for d in got)
    assert Counter(_file_key(d) for d in got) == Counter(e.key for e in expected), (
        f"reported:\n{shown}\nexpected:\n" + "\n".join(f"  {e}" for e in expected))
    unused = list(got)
    for e in expected:
        hit = next((d for d in unused if e.matches(d)), None)
        assert hit is not None, f"no diagnostic matches {e}; reported:\n{shown}"
        unused.remove(hit)
    # Every diagnostic is rendered with its location, code and message.
    text = str(info.value)
    for d in got:
        assert f"{d.span.file}:{d.span.line}:{d.span.col}: error[{d.code}]: {d.message}" in text


def test_fixture_directives_are_parsed() -> None:
    path = FIXTURES / "undefined_names.rules"
    exp = read_expectations(path)
    assert any(e.code == "E010" and e.notes == ["did you mean 'cash'?"] for e in exp)


# -- rendering -------------------------------------------------------------------------------

def _error(text: str, filename: str = "game.rules", **kw) -> RulesError:
    with pytest.raises(RulesError) as info:
        rulelang.check_text(text, filename, **kw)
    return info.value


def _caret_col(rendered_lines: list[str], source_line: str) -> int:
    """1-based column the caret under the quoted source line points at."""
    i = next(k for k, ln in enumerate(rendered_lines) if ln.endswith("| " + source_line))
    gutter = rendered_lines[i].index("| ") + 2
    caret = rendered_lines[i + 1]
    assert caret.strip() == "^"
    return caret.index("^") - gutter + 1


def test_render_format_line_and_caret() -> None:
    src = MINI.replace("cash[p] += 1", "cash[p] += cahs")
    err = _error(src)
    (d,) = err.diagnostics
    assert (d.code, d.span.line, d.span.col) == ("E010", 12, 16)
    lines = str(err).splitlines()
    assert lines[0] == "game.rules:12:16: error[E010]: undefined name 'cahs'"
    assert lines[1] == "   12 |     cash[p] += cahs"
    assert _caret_col(lines, "    cash[p] += cahs") == 16
    assert lines[3] == "  note: did you mean 'cash'?"
    assert str(err) == err.render()


def test_render_caret_with_tabs() -> None:
    # Columns count a tab as one character, and the quoted line shows it as one space.
    src = MINI.replace("    cash[p] += 1", "\t\tcash[p] += true")
    err = _error(src)
    (d,) = err.diagnostics
    assert (d.span.line, d.span.col) == (12, 14)
    lines = str(err).splitlines()
    assert _caret_col(lines, "  cash[p] += true") == 14
    assert lines[1][lines[1].index("| ") + 2:][13:17] == "true"


def test_render_long_line_shows_a_window_around_the_column() -> None:
    # A 40,000-character line is quoted as the 100 characters around the column, each cut
    # marked "...", with the caret under the character the column names.
    pad, note = " " * 20_000, "  # " + "x" * 20_000
    err = _error(MINI.replace("cash[p] += 1", f"cash[p] += {pad}cahs{note}"))
    (d,) = err.diagnostics
    assert (d.code, d.span.line, d.span.col) == ("E010", 12, 20_016)
    lines = str(err).splitlines()
    gutter = lines[1].index("| ") + 2
    quoted = lines[1][gutter:]
    assert quoted.startswith("...") and quoted.endswith("...") and len(quoted) == 106
    at = lines[2].index("^") - gutter
    assert quoted[at:at + 4] == "cahs" and at == 53
    # near one end of the line the window is the line's start (or end), cut on one side only
    err = _error(MINI.replace("cash[p] += 1", f"cash[p] += cahs{note}"))
    lines = str(err).splitlines()
    quoted = lines[1].split("| ", 1)[1]
    assert quoted == f"    cash[p] += cahs{note}"[:100] + "..."
    assert _caret_col(lines, quoted) == 16


def test_render_syntax_error_lists_expected_tokens() -> None:
    err = _error(MINI.replace("for p in players", "for p players"))
    (d,) = err.diagnostics
    assert d.code == "E001" and (d.span.line, d.span.col) == (11, 9)
    assert d.message == "unexpected 'players'; expected 'in'"
    assert str(err).splitlines()[0] == (
        "game.rules:11:9: error[E001]: unexpected 'players'; expected 'in'")


def test_several_errors_in_one_run_sorted_by_position() -> None:
    src = MINI.replace("cash[p] += 1", "cahs[p] += true\n    let q: bool = 3\n    run nothing()")
    err = _error(src)
    assert [_key(d) for d in err.diagnostics] == [
        ("E010", 12, 5), ("E012", 12, 16), ("E012", 13, 19), ("E010", 14, 5)]
    assert str(err).count("error[E0") == 4


def test_cascades_are_capped() -> None:
    body = "\n".join("    cash[p] += nope" for _ in range(300))
    err = _error(MINI.replace("    cash[p] += 1", body))
    assert len(err.diagnostics) == 100
    assert err.diagnostics[-1].notes[-1] == "200 more errors not shown"


def test_error_survives_pickling() -> None:
    import pickle

    err = _error(MINI.replace("cash[p] += 1", "cash[p] += cahs"))
    back = pickle.loads(pickle.dumps(err))
    assert back.diagnostics == err.diagnostics and str(back) == str(err)


# -- parameters, overrides and variants (not expressible as fixtures) ------------------------

@pytest.fixture
def mini_path(tmp_path: Path) -> Path:
    path = tmp_path / "mini.rules"
    path.write_text(MINI, encoding="utf-8")
    return path


def _load_error(path: Path, **kw) -> RulesError:
    with pytest.raises(RulesError) as info:
        rulelang.load(path, **kw)
    return info.value


def test_params_and_variants_that_fit_load(mini_path: Path) -> None:
    game = rulelang.load(mini_path, variant="rich", params={"start": 7, "open_hand": True,
                                                            "first_color": "Blue"})
    state = game.new_game(num_players=2)
    assert state.get_var("cash") == [8, 8]
    assert rulelang.load(mini_path, variant="richer").new_game(2).get_var("cash") == [41, 41]


def test_unknown_parameter_override(mini_path: Path) -> None:
    err = _load_error(mini_path, params={"strat": 5})
    (d,) = err.diagnostics
    assert d.code == "E018" and d.message == "unknown parameter 'strat'"
    assert d.notes == ("did you mean 'start'?", "parameters: start, open_hand, first_color")
    # Not about a place in the file, so no line, column or caret.
    assert str(err) == ("<command line>: error[E018]: unknown parameter 'strat'\n"
                        "  note: did you mean 'start'?\n"
                        "  note: parameters: start, open_hand, first_color")


@pytest.mark.parametrize("name,value", [
    ("start", "5"), ("start", True), ("start", 2.5), ("start", None),
    ("open_hand", 1), ("open_hand", "true"),
    ("first_color", "Purple"), ("first_color", 0),
])
def test_bad_override_type(mini_path: Path, name: str, value: object) -> None:
    err = _load_error(mini_path, params={name: value})
    (d,) = err.diagnostics
    assert d.code == "E019"
    assert d.message.startswith(f"parameter '{name}' is ") and repr(value) in d.message


def test_several_override_errors_reported_together(mini_path: Path) -> None:
    err = _load_error(mini_path, params={"strat": 1, "start": "x", "open_hand": 3})
    assert sorted(d.code for d in err.diagnostics) == ["E018", "E019", "E019"]


def test_unknown_variant(mini_path: Path) -> None:
    err = _load_error(mini_path, variant="ritch")
    (d,) = err.diagnostics
    assert d.code == "E026" and d.message == "unknown variant 'ritch'"
    assert d.notes[0] == "did you mean 'rich'?"
    assert d.notes[-1] == "variants: rich, richer"
    assert d.span.file == str(mini_path) and d.span.line == 0
    assert str(err).startswith(f"{mini_path}: error[E026]: unknown variant 'ritch'")


def test_unknown_variant_in_file_without_variants() -> None:
    src = MINI.replace("variant rich { start = 20 }\nvariant richer { start = 40 }\n", "")
    err = _error(src, variant="rich")
    (d,) = err.diagnostics
    assert d.code == "E026" and d.notes == ("variants: (none)",)


def test_unreadable_file_is_a_rules_error(tmp_path: Path) -> None:
    err = _load_error(tmp_path / "missing.rules")
    (d,) = err.diagnostics
    assert d.code == "E000" and "cannot read file" in d.message


def test_non_string_names_from_python_callers(mini_path: Path) -> None:
    assert [d.code for d in _load_error(mini_path, params={1: 2}).diagnostics] == ["E018"]
    assert [d.code for d in _load_error(mini_path, variant=123).diagnostics] == ["E026"]
