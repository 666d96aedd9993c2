"""docs/models.md says true things: its code runs and prints what its comments say."""

import re
from tests._support.paths import REPO

DOC = (REPO / "docs" / "models.md").read_text(encoding="utf-8")


def test_models_doc_python_blocks_run_and_print_what_they_claim(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"^```python\n(.*?)^```", DOC, flags=re.M | re.S)
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    for k, block in enumerate(blocks):
        namespace: dict = {"__name__": "models_doc"}
        exec(compile(block, f"docs/models.md python block {k + 1}", "exec"), namespace)
        out = capsys.readouterr().out.splitlines()
        claims = [c for c in re.findall(r"print\(.*\)\s*#\s*(.*)$", block, flags=re.M)]
        assert len(out) == len(claims), (k, out, claims)
        for got, claim in zip(out, claims):
            claim = claim.strip()
            if claim.endswith("..."):
                assert got.startswith(claim[:-3].rstrip()), (got, claim)
            else:
                assert got == claim, (got, claim)


def test_models_doc_names_the_real_json_types():
    import kcxai.models
    from kcxai.models.classifier import _MODEL_TYPES

    types = set(re.findall(r"^\| `(\w+)` \|", DOC, flags=re.M)) - {"type"}
    assert types == set(_MODEL_TYPES) - {"decision_tree"}
    assert kcxai.models.RandomForest.model_type in types
