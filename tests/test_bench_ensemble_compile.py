"""benchmarks/bench_ensemble_compile.py in its smoke mode: it runs end to end and its checks pass."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_smoke_mode_runs_and_agrees():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_ensemble_compile.py"), "--smoke"],
                         capture_output=True, text=True, timeout=600, env=env, check=True).stdout
    lines = [line for line in out.splitlines() if " new: " in line]
    assert len(lines) >= 8 and all("agree yes" in line for line in lines), out
    assert out.count("builder: ") >= 6 and "load " in out and out.splitlines()[-1].startswith("done; load")
