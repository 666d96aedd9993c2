"""The pipeline benchmark runs in its smoke mode (tiny sizes): every pipeline imports and predicts as
scikit-learn does."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest


def test_bench_pipelines_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    path = pathlib.Path(__file__).parent.parent / "benchmarks" / "bench_pipelines.py"
    spec = importlib.util.spec_from_file_location("bench_pipelines", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = bench.main(["--smoke", "--sklearn-data"])
    assert len(rows) >= 3 * 5 + 3 * 5 and all(row["same"] for row in rows)
    out = capsys.readouterr().out
    assert "load average" in out and "RandomForest (default)" in out and " NO" not in out
