"""benchmarks/bench_ensemble_compile.py in its smoke mode: it runs end to end and its checks pass."""

import importlib.util
import os
import subprocess
import sys
from tests._support.paths import REPO

ROOT = REPO


def test_smoke_mode_runs_and_agrees():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_ensemble_compile.py"), "--smoke"],
                         capture_output=True, text=True, timeout=600, env=env, check=True).stdout
    lines = [line for line in out.splitlines() if " new: " in line]
    # the four scikit-learn families, and XGBoost / LightGBM where the 'boost' extra is installed
    kinds = 4 + sum(importlib.util.find_spec(m) is not None for m in ("xgboost", "lightgbm"))
    assert len(lines) >= kinds + 1 and all("agree yes" in line for line in lines), out
    assert out.count("builder: ") >= kinds and "load " in out and out.splitlines()[-1].startswith("done; load")
