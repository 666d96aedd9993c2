"""Fuzzing the command line: mutated arguments end with status 0, or 2 and one line on stderr.

Valid command lines of every subcommand are mutated (values replaced by nasty tokens or damaged,
arguments dropped, duplicated or swapped; see :mod:`fuzz_mutations`) and run in-process with
``kcxai.cli.main``. Whatever the input: no exception escapes, the status is 0 or 2, and a 2 comes
with exactly one ``kcxai...: error: ...`` line on stderr (or the help on stdout). ``demo`` and
``experiment`` run stubs after their arguments are parsed, so that a mutant that happens to be
valid does not train trees for minutes: what is fuzzed there is the checking of the options.
"""

from __future__ import annotations

import contextlib
import io
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kcxai
import kcxai.cli
import kcxai.cli._experiment
from tests._support.fuzz_mutations import EXAMPLES, MUTANTS, SMALL_DT, SMALL_MAP, Tally, mutate_argv, run_one

TALLY = Tally("command line (every main() call returns; the counts by exit status)")
V_TEXT = "1,1,1,1,0,0,0,0,1"


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    print("\n" + TALLY.line())


def _base_commands(tmp) -> list[list[str]]:
    (tmp / "t.dt").write_text(SMALL_DT)
    (tmp / "t.map").write_text(SMALL_MAP)
    space = kcxai.FeatureSpace([kcxai.Feature.categorical("colour", ["red", "green"]),
                                kcxai.Feature.numeric("age", [30, 40]), kcxai.Feature.categorical("n", [0, 1, 2])],
                               distribution=[[1, 2], None, [0.5, 0.25, 0.25]])
    model = kcxai.DecisionList.from_text("IF age in (30, 40] AND colour = red THEN yes\nELSE IF n = 2 THEN no\n"
                                         "ELSE yes", space)
    model.save(tmp / "dl.json")
    iai = kcxai.datasets.reference_instances("IAI12")[0].tolist()
    names = kcxai.datasets.running_example_tree().space.names
    return [
        ["explain", "bundled:running_example", "-i", V_TEXT, "--delta", "0.03", "--start", "path"],
        ["explain", "bundled:running_example", "-i", json.dumps(dict(zip(names, map(int, V_TEXT.split(","))))),
         "--json", "--order", "x9,x1,2"],
        ["explain", str(tmp / "t.dt"), str(tmp / "t.map"), "-i", "Public,Male", "--values", "auto"],
        ["explain", "bundled:IAI12", "-i", ",".join(map(str, iai)), "--values", "tree", "--order", "f0,f3",
         "-d", "1/100"],
        ["explain", str(tmp / "dl.json"), "-i", "red,35,2", "--language", "brute", "--start", "colour,age,n"],
        ["explain", str(tmp / "dl.json"), "-i", '["green", 50.5, 0]', "-d", "1e-2", "--json"],
        ["compile", "bundled:running_example", "--language", "dt", "brute", "--json"],
        ["compile", str(tmp / "t.dt"), str(tmp / "t.map")],
        ["demo", "--instances", "2", "--delta", "0.01", "--precision", "0.9", "--max-depth", "3", "--seed", "1"],
        ["experiment", "paper-table", "--datasets", "adult", "--delta", "0.01", "1/50", "--seed", "0", "--bins", "10",
         "--out", str(tmp / "out"), "--max-instances", "3", "--threshold", "0.9", "--samples", "10", "--n-jobs", "1"],
        ["experiment", "languages", "--languages", "dt", "--instances", "3", "--max-seconds", "5",
         "--out", str(tmp / "out2"), "--quick"],
    ]


def _run(argv: list[str]) -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = kcxai.cli.main(argv)
    assert code in (0, 2), (argv, code, err.getvalue()[:300])
    TALLY.errors[f"exit {code}"] = TALLY.errors.get(f"exit {code}", 0) + 1
    if code == 2:
        lines = err.getvalue().strip().splitlines()
        if not lines:  # no command: the help is printed
            assert out.getvalue().startswith("usage: kcxai"), argv
        else:
            assert len(lines) == 1 and lines[0].startswith("kcxai") and ": error: " in lines[0], (argv, lines[:3])
            assert len(lines[0]) < 2000, lines[0][:200]
    assert "Traceback" not in err.getvalue()


def test_base_commands_succeed(tmp_path, monkeypatch):
    monkeypatch.setattr(kcxai.cli, "_demo", lambda args: 0)
    monkeypatch.setattr(kcxai.cli._experiment, "_paper_table", lambda args: 0)
    monkeypatch.setattr(kcxai.cli._experiment, "_languages", lambda args: 0)
    for argv in _base_commands(tmp_path):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            assert kcxai.cli.main(argv) == 0, (argv, err.getvalue())


def test_mutated_command_lines_exit_0_or_2_with_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(kcxai.cli, "_demo", lambda args: 0)
    monkeypatch.setattr(kcxai.cli._experiment, "_paper_table", lambda args: 0)
    monkeypatch.setattr(kcxai.cli._experiment, "_languages", lambda args: 0)
    bases = _base_commands(tmp_path)

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(k=st.integers(0, len(bases) - 1), seed=st.integers(0, 2**32 - 1))
    def check(k: int, seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(MUTANTS):
            argv = mutate_argv(bases[k], rng)
            run_one(TALLY, f"argv {argv!r}"[:400], lambda: _run(argv))

    check()
    assert TALLY.tries >= EXAMPLES * MUTANTS * 0.9 and TALLY.errors.get("exit 2", 0) > 0
