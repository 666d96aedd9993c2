"""``kcxai explain-csv`` and the demo's labels."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pandas as pd
import pytest

import kcxai
from kcxai.cli import main

V = (1, 1, 1, 1, 0, 0, 0, 0, 1)


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    tree = kcxai.datasets.running_example_tree()
    model = tmp_path / "tree.json"
    tree.save(model)
    data = tmp_path / "rows.csv"
    pd.DataFrame([V, (0, 1, 1, 0, 1, 0, 1, 1, 0)], columns=tree.space.names).to_csv(data, index=False)
    return model, data


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_explain_csv_writes_one_row_per_row(files: tuple[Path, Path], tmp_path: Path, suffix: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    model, data = files
    out = tmp_path / f"out{suffix}"
    assert main(["explain-csv", str(model), str(data), "--out", str(out), "--delta", "3/100"]) == 0
    frame = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    tree = kcxai.load_model(model)
    assert len(frame) == 2
    e = kcxai.min_idrs(tree, V, Fraction(3, 100))
    assert frame["rule"][0] == e.rule() and Fraction(frame["error_exact"][0]) == e.error
    assert "explained 2 of 2 rows" in capsys.readouterr().err


def test_explain_csv_errors(files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model, data = files
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"x1": [1]}).to_csv(bad, index=False)
    assert main(["explain-csv", str(model), str(bad), "--out", str(tmp_path / "o.csv")]) == 2
    assert "Missing ['x2'" in capsys.readouterr().err
    assert main(["explain-csv", str(model), str(tmp_path / "none.csv"), "--out", str(tmp_path / "o.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["explain-csv", str(model), str(data), "--out", str(tmp_path / "o.csv"),
                 "--method", "local_cdrs", "--delta", "0.05"]) == 2
    assert "takes 'precision'" in capsys.readouterr().err
    wrong = tmp_path / "wrong.csv"
    rows = pd.read_csv(data)
    rows.loc[1, "x4"] = 5
    rows.to_csv(wrong, index=False)
    assert main(["explain-csv", str(model), str(wrong), "--out", str(tmp_path / "o.csv"), "--on-error", "report"]) == 0
    frame = pd.read_csv(tmp_path / "o.csv")
    assert frame["failure"].isna().tolist() == [True, False] and "'x4'" in frame["failure"][1]


def test_demo_prints_labels(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--instances", "1", "--max-depth", "4"]) == 0
    out = capsys.readouterr().out
    assert "THEN class = <=50K" in out or "THEN class = >50K" in out
    assert "class = 1" not in out and "class = 0" not in out


def test_parquet_without_pyarrow_says_how_to_install(files: tuple[Path, Path], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import builtins

    real = builtins.__import__

    def no_pyarrow(name: str, *args: object, **kwargs: object) -> object:
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError("no pyarrow")
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    model, data = files
    assert main(["explain-csv", str(model), str(data), "--out", str(tmp_path / "o.parquet")]) == 2
    assert "pip install 'kcxai[parquet]'" in capsys.readouterr().err
