"""``kcxai explain-csv`` and the demo's labels."""

from __future__ import annotations

import io
import json
import os
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    columns = list(kcxai.Explainer(tree).explain([V]).to_frame().columns)
    assert list(frame.columns) == ["id", "line", *columns[1:]] and frame["line"].tolist() == [2, 3]
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


# -- volume: chunks, ids, resume, malformed lines, workers that fail ------------------------------------------


def _rows(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.integers(0, 2, size=(n, 9)), columns=[f"x{k}" for k in range(1, 10)])


def _run(*argv: str) -> int:
    return main(["explain-csv", *argv])


def _same_rows(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.drop(columns="seconds").reset_index(drop=True),
                                  b.drop(columns="seconds").reset_index(drop=True))


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_chunks_and_ids_give_the_rows_of_one_table(tmp_path: Path, suffix: str) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    rows = _rows(23).assign(key=[f"k{k}" for k in range(23)])
    data = tmp_path / f"rows{suffix}"
    rows.to_csv(data, index=False) if suffix == ".csv" else rows.to_parquet(data, index=False)
    for size in ("4", "23", "100"):
        assert _run("bundled:running_example", str(data), "--out", str(tmp_path / f"o{size}.csv"), "--delta",
                    "1/20", "--id", "key", "--chunk-rows", size) == 0
    got = [pd.read_csv(tmp_path / f"o{size}.csv") for size in ("4", "23", "100")]
    explainer = kcxai.Explainer(kcxai.datasets.running_example_tree())
    want = explainer.explain(rows.set_index("key"), method="min_idrs", delta=Fraction(1, 20)).to_frame()
    assert got[0]["id"].tolist() == [f"k{k}" for k in range(23)]
    if suffix == ".csv":
        assert got[0]["line"].tolist() == list(range(2, 25))
    want = pd.read_csv(io.StringIO(want.to_csv(index=False)))  # as a CSV file gives it back
    for frame in got:
        _same_rows(frame.drop(columns="line"), want)


def test_a_malformed_line_is_reported_with_its_number_and_the_rest_goes_on(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    text = _rows(6).to_csv(index=False).splitlines()
    text[3] = text[3] + ",7"  # line 4: one field too many
    text[5] = "1,0,x"  # line 6: too few fields, and not a value of x3
    data = tmp_path / "rows.csv"
    data.write_text("\n".join(text) + "\n")
    out = tmp_path / "o.jsonl"
    assert _run("bundled:running_example", str(data), "--out", str(out), "--delta", "1/20", "--chunk-rows", "2",
                "--on-error", "report") == 0
    frame = read_back(out)
    assert frame["line"].tolist() == [2, 3, 4, 5, 6, 7] and frame["id"].tolist() == [0, 1, 2, 3, 4, 5]
    failures = frame["failure"].tolist()
    assert failures[2].startswith("line 4: ") and "expected 9 fields, saw 10" in failures[2]
    assert failures[4].startswith("line 6: ") and "unknown category 'x'" in failures[4]
    assert [isinstance(f, str) for f in failures] == [False, False, True, False, True, False]
    assert "explained 4 of 6 rows" in capsys.readouterr().err
    assert _run("bundled:running_example", str(data), "--out", str(out), "--delta", "1/20") == 2
    assert "line 4: expected 9 fields, saw 10" in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_rerun_resumes_after_the_rows_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str], suffix: str) -> None:
    from kcxai import _batch

    data = tmp_path / "rows.csv"
    _rows(40, seed=5).to_csv(data, index=False)
    whole, out = tmp_path / f"whole{suffix}", tmp_path / f"o{suffix}"
    argv = ["bundled:running_example", str(data), "--delta", "1/20", "--chunk-rows", "8"]
    assert _run(*argv, "--out", str(whole)) == 0
    capsys.readouterr()
    real = _batch._explain
    explained: list[object] = []

    def dies_at_row_20(job: object, rows: list[tuple[object, object]]) -> object:
        if any(rid == 20 for rid, _ in rows):
            raise OSError("the worker's host went away")
        explained.extend(rid for rid, _ in rows)
        return real(job, rows)  # type: ignore[arg-type]

    monkeypatch.setattr(_batch, "_explain", dies_at_row_20)
    with joblib.parallel_config(backend="threading"):
        assert _run(*argv, "--out", str(out), "--n-jobs", "2") == 2
    err = capsys.readouterr().err
    assert "chunk 2 (rows 16 to 23, 8 rows) failed on joblib workers (Threading, 2): OSError: the worker's" in err
    assert "16 rows were written" in err and "--resume" in err
    assert len(read_back(out)) == 16
    with out.open("a") as fh:
        fh.write('16,18,1,min_idrs,0.05,,err' if suffix == ".csv" else '{"id": 16, "line": 18, "predic')  # half a line
    monkeypatch.setattr(_batch, "_explain", real)
    assert _run(*argv, "--out", str(out), "--resume") == 0
    assert "16 rows already written were kept" in capsys.readouterr().err
    _same_rows(read_back(out), read_back(whole))


def test_resume_is_refused_where_rows_cannot_be_appended(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "rows.csv"
    _rows(3).to_csv(data, index=False)
    assert _run("bundled:running_example", str(data), "--out", str(tmp_path / "o.json"), "--resume") == 2
    assert "'--resume' needs a .csv or .jsonl --out" in capsys.readouterr().err
    assert _run("bundled:running_example", str(data), "--out", str(tmp_path / "o.csv"), "--id", "nope") == 2
    assert "'--id' must name a column of DATA" in capsys.readouterr().err


def test_the_output_is_written_as_it_goes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kcxai.cli import _explain_csv

    data, out = tmp_path / "rows.csv", tmp_path / "o.csv"
    _rows(30).to_csv(data, index=False)
    seen: list[int] = []
    real = _explain_csv._Writer.write

    def write(self: object, frame: pd.DataFrame) -> None:
        seen.append(len(pd.read_csv(out)) if out.stat().st_size else 0)  # what the file holds before each chunk
        real(self, frame)  # type: ignore[arg-type]

    monkeypatch.setattr(_explain_csv._Writer, "write", write)
    assert _run("bundled:running_example", str(data), "--out", str(out), "--chunk-rows", "10") == 0
    assert seen == [0, 10, 20]


def test_a_dask_cluster_writes_the_serial_output(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    data = tmp_path / "rows.csv"
    _rows(30, seed=3).to_csv(data, index=False)
    argv = ["bundled:running_example", str(data), "--method", "local_cdrs", "--precision", "0.9", "--chunk-rows", "7"]
    assert _run(*argv, "--out", str(tmp_path / "serial.csv")) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
        assert _run(*argv, "--out", str(tmp_path / "dask.csv"), "--scheduler", c.scheduler_address) == 0
    _same_rows(pd.read_csv(tmp_path / "dask.csv"), pd.read_csv(tmp_path / "serial.csv"))


def test_the_progress_bar_counts_rows_per_second(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "rows.csv"
    _rows(12).to_csv(data, index=False)
    assert _run("bundled:running_example", str(data), "--out", str(tmp_path / "o.csv"), "--chunk-rows", "5",
                "--progress") == 0
    err = capsys.readouterr().err
    assert "12 row" in err and "row/s" in err


@pytest.mark.parametrize("suffix", [".csv", ".json", ".jsonl", ".parquet"])
def test_a_file_of_no_rows_gives_a_table_of_no_rows(tmp_path: Path, suffix: str) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    data, out = tmp_path / "rows.csv", tmp_path / f"o{suffix}"
    _rows(0).to_csv(data, index=False)
    assert _run("bundled:running_example", str(data), "--out", str(out)) == 0
    frame = read_back(out)
    assert len(frame) == 0 and (suffix == ".jsonl" or list(frame.columns)[:2] in (["id", "line"], []))


def test_two_worker_processes_write_the_serial_output(tmp_path: Path) -> None:
    data = tmp_path / "rows.csv"
    _rows(600, seed=8).assign(key=[f"k{k}" for k in range(600)]).to_csv(data, index=False)
    argv = ["bundled:running_example", str(data), "--delta", "1/20", "--id", "key", "--chunk-rows", "300"]
    assert _run(*argv, "--out", str(tmp_path / "serial.jsonl")) == 0
    assert _run(*argv, "--out", str(tmp_path / "two.jsonl"), "--n-jobs", "2") == 0
    _same_rows(read_back(tmp_path / "two.jsonl"), read_back(tmp_path / "serial.jsonl"))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 30), chunk=st.integers(1, 12), data=st.data())
def test_read_pieces_numbers_every_line_whatever_the_chunks(n: int, chunk: int, data: Any) -> None:
    """Each row that parses (short and blank lines too, with missing cells) keeps its own line and id, each line
    with too many fields is reported with its own number, whatever the chunk size and wherever those lines
    fall (first, last, one after another)."""
    from kcxai.cli._explain_csv import read_pieces

    values = data.draw(st.lists(st.lists(st.integers(0, 9), min_size=3, max_size=3), min_size=n, max_size=n))
    kinds = data.draw(st.lists(st.sampled_from(["ok", "ok", "long", "short", "blank"]), min_size=n, max_size=n))
    if kinds and kinds[-1] == "blank":
        kinds[-1] = "ok"  # a blank last line is the file's end, not a row
    bad = {k + 2 for k, kind in enumerate(kinds) if kind == "long"}
    text = {"ok": "{}", "long": "{},7", "short": "{}", "blank": ""}
    lines = ["a,b,c"] + [text[kind].format(",".join(map(str, v[:2] if kind == "short" else v)))
                         for kind, v in zip(kinds, values)]
    with tempfile.TemporaryDirectory() as where:
        path = os.path.join(where, "rows.csv")
        with open(path, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        pieces = list(read_pieces(path, chunk))
    got_lines = [k for p in pieces for k in p.lines]
    got_ids = [i for p in pieces for i in p.frame.index]
    got_rows = [list(r) for p in pieces for r in p.frame.itertuples(index=False)]
    assert got_lines == [k for k in range(2, n + 2) if k not in bad]
    assert got_ids == [k - 2 for k in got_lines]
    assert [r for r, k in zip(got_rows, got_lines) if kinds[k - 2] == "ok"] == [
        values[k - 2] for k in got_lines if kinds[k - 2] == "ok"]
    assert all(pd.isna(r[-1]) for r, k in zip(got_rows, got_lines) if kinds[k - 2] in ("short", "blank"))
    assert [b[1] for p in pieces for b in p.bad] == sorted(bad)
    assert all(b[0] == b[1] - 2 and "expected 3 fields, saw 4" in b[2] for p in pieces for b in p.bad)
