"""The side-by-side ensemble benchmark (benchmarks/bench_ensembles.py) runs, in its smoke mode, and checks its sets."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_ensembles.py"


def _module() -> Any:
    spec = importlib.util.spec_from_file_location("bench_ensembles", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_ensembles"] = module
    spec.loader.exec_module(module)
    return module


def test_smoke_mode_runs_and_every_set_checks(capsys: Any) -> None:
    _module().main(["--smoke"])
    out = capsys.readouterr().out
    for name in ("forest", "depth8", "xgboost"):
        assert f"{name}: " in out
    lines = [line for line in out.splitlines() if "kcxai ensemble_axp" in line]
    assert len(lines) == 3 and all("wrong 0 of 3 checked" in line for line in lines)
    assert "target: median <= 0.05 s" in out and "load average" in out


def test_the_check_catches_a_set_that_is_not_minimal(capsys: Any) -> None:
    """The benchmark's own check fails a set with a droppable feature (so "wrong 0" means something)."""
    import numpy as np

    import kcxai

    bench = _module()
    Xtr, ytr, Xte = bench.load(smoke=True)
    clf = bench.train("depth8", Xtr, ytr, smoke=True)
    model = kcxai.models.RandomForest.from_sklearn(clf, voting="hard")
    engine = kcxai.explain.prepare_ensemble(model)
    try:
        x = Xte[0]
        axp = kcxai.ensemble_axp(engine, x).features
        extra = next(i for i in range(model.space.n_features) if i not in axp)
        rng = np.random.default_rng(0)
        assert bench.check(engine, model, bench.hard_votes(clf), x, axp, rng) == 0
        assert bench.check(engine, model, bench.hard_votes(clf), x, tuple(sorted({*axp, extra})), rng) >= 1
        too_small = axp[1:]
        assert bench.check(engine, model, bench.hard_votes(clf), x, too_small, rng) >= 1
    finally:
        engine.close()
