"""Every benchmark in ``benchmarks/`` runs in its smoke mode (tiny sizes, seconds): a benchmark nobody runs rots.

Each ``benchmarks/*.py`` that is not a helper script (:data:`HELPERS`) is a benchmark: it has ``main(argv)``
and takes ``--smoke``, which exercises its real code path on tiny inputs and prints its figures as a full
run does. A new benchmark without a smoke mode fails here. Nothing checks a time (speed is read from the
printed figures, never asserted); what is checked is what the benchmarks check themselves and print
(explanations identical to a baseline's, sets verified against the source library, no limit case that
ends in an error), listed in :data:`PRINTS`.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests._support.paths import REPO

BENCHMARKS = REPO / "benchmarks"

#: Scripts in ``benchmarks/`` that are not benchmarks, with what they are.
HELPERS = {"pyxai_side.py": "PyXAI's side of bench_ensembles.py, run by the Python of a separate venv"}

#: Benchmarks whose smoke mode another branch brings: expected to fail for want of one until then (strict,
#: and only that failure: the entry must go once the smoke mode arrives).
PENDING: dict[str, str] = {}


def _prints(*phrases: str) -> Callable[[str], None]:
    """A check that the output holds each of ``phrases``."""
    def check(out: str) -> None:
        missing = [p for p in phrases if p not in out]
        assert not missing, f"{missing} not printed:\n{out}"
    return check


def _same_counts(out: str) -> None:
    """bench_min_idrs: the baseline's explanations are the fast ones (``same`` column ``k/k``)."""
    pairs = re.findall(r" (\d+)/(\d+)\s*$", out, flags=re.M)
    assert pairs and all(a == b for a, b in pairs), out


def _ensemble_sets_checked(out: str) -> None:
    """bench_ensembles: every model's AXps checked against the source library, none wrong."""
    lines = [line for line in out.splitlines() if "kcxai ensemble_axp" in line]
    assert len(lines) >= 2 and all(re.search(r"wrong 0 of [1-9]\d* checked", line) for line in lines), out
    assert "forest: " in out and "depth8: " in out and "load average" in out


def _agree_with_dt(out: str) -> None:
    """bench_languages: every language's explanations equal the tree oracle's (``agree`` column ``k/k``)."""
    pairs = re.findall(r" (\d+)/(\d+)$", out, flags=re.M)
    assert len(pairs) >= 6 and all(a == b for a, b in pairs), out


def _soft_vote(out: str) -> None:
    """bench_soft_vote: its figures, and no disagreement with scikit-learn outside ``float_margin``."""
    _prints("rows predicted otherwise than scikit-learn", "within float_margin", "load average")(out)
    assert "ERROR" not in out, out


def _no_false(out: str) -> None:
    """Benchmarks that print ``same True`` / ``... predict_point: True``: never False."""
    assert "True" in out and "False" not in out, out


def _sampling(out: str) -> None:
    """bench_sampling: every model's figures, and the batched walk's classes those of ``predict_point``."""
    _no_false(out)
    for figure in ("predict_points, 256 points", "same classes as predict_point: True", "local_cdrs 0.95: median",
                   "min_idrs 1/20: median"):
        assert out.count(figure) >= 6, (figure, out)  # three models at least (XGBoost is optional), two distributions


def _limit_cases(out: str) -> None:
    """bench_limits: every case ends at its limit or done; ``error`` (a bug) or ``crashed`` never."""
    outcomes = re.findall(r"\s(?:time|nodes|memory)\s+(?:obdd|sdd)\s+(\w+)\s", out)
    assert outcomes and set(outcomes) <= {"limit", "done", "killed"}, out
    assert "worst ratio" in out


def _tree_load(out: str) -> None:
    """bench_tree_load: the chain loaded from both files, and no difference between old and new JSON."""
    assert re.search(r"\s50\s+dt\s+new\s", out) and "!!" not in out, out


def _hard_problems(out: str) -> None:
    """bench_hard_problems: every tree's smallest_drs met the baseline's size (a mismatch exits) with a ratio."""
    rows = [line.split() for line in out.splitlines() if " smallest_drs " in line]
    assert len(rows) == 2 and all(float(r[-1]) > 0 and float(r[-2]) > 0 for r in rows), out


def _seam_json(out: str) -> None:
    """bench_seam: its JSON line holds one row per language."""
    line = next(line for line in out.splitlines() if line.startswith('{"bench_seam"'))
    assert sorted(r["lang"] for r in json.loads(line)["bench_seam"]) == ["dt", "obdd", "sdd"]


def _box_bounds_checked(out: str) -> None:
    """bench_box_bounds: every model's figures, and every decision checked against exact counts agrees."""
    assert out.count("proven within 0.05 s") >= 3 and "load average" in out, out
    pairs = re.findall(r"exact counts of the compiled model: (\d+) of (\d+) agree", out)
    assert len(pairs) >= 2 and all(a == b and int(b) > 0 for a, b in pairs), out


#: What a benchmark's smoke run must print, beyond something (checked by the benchmark itself).
def _pipelines(out: str) -> None:
    """Every pipeline imported and predicted as scikit-learn does (on adult and scikit-learn's own data)."""
    assert "load average" in out and "RandomForest (default)" in out and " NO" not in out, out


def _scale(out: str) -> None:
    """bench_scale: every run gives the first run's rows (``rows differ`` 0, the LocalCluster's CSV the serial one)."""
    runs = re.findall(r"^   (?:1 \(this|n_jobs=2|LocalCluster).*\s(\d+)\s+[\d.]+$", out, flags=re.M)
    assert len(runs) == 4 and set(runs) == {"0"}, out
    assert "differs from the serial run's (times aside): 0 " in out, out
    assert "projection, 100,000 rows on 64" in out or "XGBoost: not installed" in out, out
    assert "load" in out and "peak memory" in out, out


#: Benchmarks whose smoke run takes more than ``--smoke`` (the rest of their arguments).
SMOKE_ARGS = {"bench_pipelines.py": ["--sklearn-data"]}

def _bounded(out: str) -> None:
    """bench_bounded: every target printed, both front-door models' loops, and every decision from the bounds
    that was checked exactly confirmed."""
    assert out.count(" exact yes ") + out.count(" exact NO ") >= 6 and "Part 2" in out, out
    checks = re.findall(r"bounds decisions confirmed exactly (\d+)/(\d+)", out)
    assert len(checks) == 2 and all(a == b for a, b in checks), out


def _budget(out: str) -> None:
    """bench_budget: every model's work against its budget, and the same diagram under the slow clock."""
    _prints("work units per second of budget", "units per CPU s", "Explainer(fit_budget=", "load")(out)
    lines = re.findall(r"same diagram under a 2x slower clock: (\d+) of (\d+) models", out)
    assert lines and lines[0][0] == lines[0][1] != "0", out


PRINTS: dict[str, Callable[[str], None]] = {
    "bench_bounded.py": _bounded,
    "bench_budget.py": _budget,
    "bench_pipelines.py": _pipelines,
    "bench_soft_vote.py": _soft_vote,
    "bench_functional.py": _prints("same sets: True", "speed-up over the baseline", "load average",
                                   "kcxai.ensemble_axp(model, x) in a loop", "fewer values first (the default)"),
    "bench_front_door.py": _prints("RandomForest 5x3", "axp via", "0 rows with a completion predicted otherwise"),
    "bench_probe.py": _prints("RandomForest 3x2", "counted: exact", "| clock: ", "load average at the end"),
    "bench_ensembles.py": _ensemble_sets_checked,
    "bench_soft_voting.py": _prints("soft before", "soft after", "same before and after 3/3", "wrong 0 of 3 checked",
                                    "load average at the end"),
    "bench_min_idrs.py": _same_counts,
    "bench_explainer.py": _no_false,
    "bench_scale.py": _scale,
    "bench_sampling.py": _sampling,
    "bench_models.py": _prints("points where a model without rounding differs from scikit-learn: 0 "),
    "bench_limits.py": _limit_cases,
    "bench_seam.py": _seam_json,
    "bench_hard_problems.py": _hard_problems,
    "bench_tree_load.py": _tree_load,
    "bench_box_bounds.py": _box_bounds_checked,
    "bench_languages.py": _agree_with_dt,
    "bench_counting.py": _prints("Targets (issue 22)", "local_cdrs 0.95: median", "min_idrs 0.01: median",
                                 "rows/s", "load", "now (one walk with K weights per node) vs per comp.",
                                 f"{'adult-forest:3x3 K=2':30} sdd  local_cdrs 0.95"),
}


def load(path: Path, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The benchmark at ``path`` as a module (in ``sys.modules`` for the test's duration: dataclasses need it)."""
    name = f"_benchmark_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def run_smoke(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``main(["--smoke"])`` of the benchmark at ``path``; a clear failure when it has no smoke mode."""
    module = load(path, monkeypatch)
    main = getattr(module, "main", None)
    if not callable(main) or not inspect.signature(main).parameters:
        pytest.fail(f"benchmarks/{path.name} has no main(argv): give it one that takes --smoke (tiny sizes, "
                    "seconds), so that this test can run it")
    try:
        main(["--smoke", *SMOKE_ARGS.get(path.name, [])])
    except SystemExit as exit:
        if exit.code not in (None, 0):
            pytest.fail(f"benchmarks/{path.name} --smoke exited with {exit.code!r}: it has no smoke mode, or it "
                        "failed (see the captured output)")


def _benchmarks() -> list[Any]:
    names = sorted(p.name for p in BENCHMARKS.glob("*.py") if p.name not in HELPERS)
    pending = {n: pytest.mark.xfail(strict=True, raises=pytest.fail.Exception, reason=r) for n, r in PENDING.items()}
    return [pytest.param(n, marks=pending[n]) if n in pending else n for n in names]


@pytest.mark.parametrize("name", _benchmarks())
def test_smoke_mode_runs_and_prints_its_figures(name: str, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    run_smoke(BENCHMARKS / name, monkeypatch)
    out = capsys.readouterr().out
    assert len(out.splitlines()) >= 3, f"benchmarks/{name} --smoke printed almost nothing:\n{out}"
    if name in PRINTS:
        PRINTS[name](out)


def test_the_lists_name_files_that_exist() -> None:
    for name in (*HELPERS, *PENDING, *PRINTS, *SMOKE_ARGS):
        assert (BENCHMARKS / name).is_file(), name


@pytest.mark.parametrize("source, says", [
    ("def main():\n    print('figures')\n", "has no main"),
    ("x = 1\n", "has no main"),
    ("import argparse\n\ndef main(argv=None):\n    argparse.ArgumentParser().parse_args(argv)\n", "no smoke mode"),
])
def test_a_benchmark_without_a_smoke_mode_fails(source: str, says: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "bench_new.py"
    path.write_text(source)
    with pytest.raises(pytest.fail.Exception, match=says):
        run_smoke(path, monkeypatch)


def _no_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """``git`` cannot be started (as on a machine without it)."""
    real = subprocess.run

    def run(args: Any, *a: Any, **kw: Any) -> Any:
        if args and args[0] == "git":
            raise FileNotFoundError(2, "No such file or directory", "git")
        return real(args, *a, **kw)

    monkeypatch.setattr(subprocess, "run", run)


def test_sampling_skips_the_old_walk_without_git_or_the_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load(BENCHMARKS / "bench_sampling.py", monkeypatch)
    monkeypatch.setattr(bench, "BEFORE", "0" * 40)  # a commit the repository does not have
    assert bench.old_walk_module() is None
    monkeypatch.undo()
    bench = load(BENCHMARKS / "bench_sampling.py", monkeypatch)
    _no_git(monkeypatch)
    assert bench.old_walk_module() is None


def test_tree_load_skips_the_baseline_without_git_or_the_commit(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load(BENCHMARKS / "bench_tree_load.py", monkeypatch)
    assert bench.baseline_source("0" * 40, str(tmp_path)) is None
    _no_git(monkeypatch)
    assert bench.baseline_source(bench.DEFAULT_BASELINE, str(tmp_path)) is None


def test_the_ensemble_check_catches_a_set_that_is_not_minimal_or_not_sufficient(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """bench_ensembles' own check fails a set with a droppable feature and one too small ("wrong 0" means
    something)."""
    import kcxai

    bench = load(BENCHMARKS / "bench_ensembles.py", monkeypatch)
    Xtr, ytr, Xte = bench.load(smoke=True)
    clf = bench.train("depth8", Xtr, ytr, smoke=True)
    model = kcxai.models.RandomForest.from_sklearn(clf, voting="hard")
    engine = kcxai.engines.choose.decision_compiled(model)
    try:
        x = Xte[0]
        axp = kcxai.ensemble_axp(engine, x).features
        extra = next(i for i in range(model.space.n_features) if i not in axp)
        rng = np.random.default_rng(0)
        assert bench.check(engine, model, bench.hard_votes(clf), x, axp, rng) == 0
        assert bench.check(engine, model, bench.hard_votes(clf), x, tuple(sorted({*axp, extra})), rng) >= 1
        assert bench.check(engine, model, bench.hard_votes(clf), x, axp[1:], rng) >= 1
    finally:
        engine.close()
