"""``kcxai explain-csv`` and the demo's labels."""

from __future__ import annotations

import json
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


def read_back(out: Path) -> pd.DataFrame:
    suffix = out.suffix.lower()
    if suffix == ".csv":
        return pd.read_csv(out)
    if suffix == ".parquet":
        return pd.read_parquet(out)
    text = out.read_text(encoding="utf-8")
    rows = json.loads(text) if suffix == ".json" else [json.loads(line) for line in text.splitlines()]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".json", ".jsonl", ".JSONL"])
def test_explain_csv_writes_one_row_per_row(files: tuple[Path, Path], tmp_path: Path, suffix: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    model, data = files
    out = tmp_path / f"out{suffix}"
    assert main(["explain-csv", str(model), str(data), "--out", str(out), "--delta", "3/100"]) == 0
    frame = read_back(out)
    tree = kcxai.load_model(model)
    assert len(frame) == 2
    e = kcxai.min_idrs(tree, V, Fraction(3, 100))
    assert frame["rule"][0] == e.rule() and Fraction(frame["error_exact"][0]) == e.error
    err = capsys.readouterr().err
    assert "explained 2 of 2 rows with min_idrs via dt (the decision tree's own paths" in err
    assert f"; wrote {out} ({suffix[1:].lower()})" in err
    assert list(frame.columns) == list(kcxai.Explainer(tree).explain([V]).to_frame().columns)
    assert frame["error"][0] == float(e.error)  # floats kept exactly in every format


@pytest.mark.parametrize("name", ["m.xlsx", "m", "m.csv.gz", "m.txt"])
def test_explain_csv_refuses_other_formats_before_any_work(files: tuple[Path, Path], tmp_path: Path, name: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    _, data = files
    out = tmp_path / name
    # the model does not exist: the output name is refused first, and nothing is written
    assert main(["explain-csv", str(tmp_path / "no-model.json"), str(data), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "must name a .csv, .parquet, .json or .jsonl file" in err and f"{name}'" in err  # a long path keeps its name
    assert not out.exists()


def test_explain_csv_keeps_the_old_output_when_a_write_fails(files: tuple[Path, Path], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    model, data = files
    out = tmp_path / "o.json"
    out.write_text("old")

    def broken(*args: object, **kwargs: object) -> str:
        raise ValueError("cannot serialise")

    monkeypatch.setattr("kcxai.cli._explain_csv.json.dumps", broken)
    with pytest.raises(ValueError, match="cannot serialise"):
        main(["explain-csv", str(model), str(data), "--out", str(out)])
    assert out.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["tree.json", "rows.csv", "o.json"])


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
