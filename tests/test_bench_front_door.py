"""The front-door benchmark runs (smoke mode): a benchmark nobody runs rots."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest


def test_front_door_benchmark_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    bench = runpy.run_path(str(Path(__file__).resolve().parent.parent / "benchmarks" / "bench_front_door.py"))
    bench["main"](["--smoke"])
    out = capsys.readouterr().out
    assert "RandomForest 5x3" in out and "axp via" in out and "0 rows with a completion predicted otherwise" in out
