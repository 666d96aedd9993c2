"""docs/explainer.md runs: its python blocks in order, then its commands, in one scratch directory."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pandas as pd
import pytest

import kcxai
from kcxai.cli import main
from tests._support.paths import REPO

DOC = REPO / "docs" / "explainer.md"


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.M | re.S)


def test_explainer_doc_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    text = DOC.read_text(encoding="utf-8")
    code = blocks(text, "python")
    assert len(code) >= 6
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "docs"}
    for k, block in enumerate(code):
        exec(compile(block, f"docs/explainer.md python block {k + 1}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "True" in out and "Astronaut" in out and "THEN class = " in out
    for picture in ("tree.png", "features.png", "sizes.png"):
        assert (tmp_path / picture).read_bytes().startswith(b"\x89PNG")
    for line in (ln[2:] for b in blocks(text, "console") for ln in b.splitlines() if ln.startswith("$ ")):
        assert main(shlex.split(line)[1:]) == 0, line
    table = pd.read_csv(tmp_path / "explanations.csv")
    assert len(table) == 20 and table["failure"].isna().all()
    frame = namespace["result"].to_frame()
    assert frame["rule"].str.startswith("IF ").all()


def test_explainer_doc_names_exist() -> None:
    text = DOC.read_text(encoding="utf-8")
    for dotted in set(re.findall(r"`kcxai\.([\w.]+)", text)):
        obj = kcxai
        for part in dotted.split("."):
            obj = getattr(obj, part)
