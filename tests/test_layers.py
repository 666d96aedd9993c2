"""Imports point one way: ``models`` -> ``compilers`` -> ``engines`` -> the oracle <- ``explain`` <- the doors
(``explainer``, ``_batch``, ``cli``, ``experiments``, ``viz``). Read from the source (every ``import``, also inside
functions and under ``TYPE_CHECKING``), so that an arrow running back up fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__import__("kcxai").__file__).parent

#: What a layer never imports (prefixes of module names).
NEVER = {
    "kcxai.models": ("kcxai.compilers", "kcxai.engines", "kcxai.explain", "kcxai.explainer", "kcxai._batch",
                     "kcxai.cli", "kcxai.experiments", "kcxai.viz"),
    "kcxai.compilers": ("kcxai.engines", "kcxai.explain", "kcxai.explainer", "kcxai._batch", "kcxai.cli",
                        "kcxai.experiments", "kcxai.viz"),
    "kcxai.oracle": ("kcxai.compilers", "kcxai.engines", "kcxai.explain", "kcxai.explainer", "kcxai._batch"),
    "kcxai.engines": ("kcxai.explain", "kcxai.explainer", "kcxai._batch", "kcxai.cli", "kcxai.experiments",
                      "kcxai.viz"),
    "kcxai.explain": ("kcxai.explainer", "kcxai._batch", "kcxai.cli", "kcxai.experiments", "kcxai.viz"),
    "kcxai.experiments": ("kcxai.cli",),
}


def imports(root: Path = PACKAGE) -> dict[str, set[tuple[str, int]]]:
    """Module name -> the kcxai modules it imports, with the line."""
    out: dict[str, set[tuple[str, int]]] = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kcxai"):
                found.add((node.module, node.lineno))
            elif isinstance(node, ast.Import):
                found |= {(a.name, node.lineno) for a in node.names if a.name.startswith("kcxai")}
        out[name] = found
    return out


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def arrows_back_up(graph: dict[str, set[tuple[str, int]]]) -> list[str]:
    return [f"{module}:{line} imports {target}"
            for module, targets in sorted(graph.items()) for layer, banned in NEVER.items() if _within(module, layer)
            for target, line in sorted(targets) if any(_within(target, b) for b in banned)]


def test_no_arrow_runs_back_up() -> None:
    graph = imports()
    assert len(graph) > 100 and "kcxai.engines.choose" in graph
    assert not arrows_back_up(graph), "\n".join(arrows_back_up(graph))


@pytest.mark.parametrize("module, target", [("kcxai.engines._tree_batch", "kcxai.explain._query"),
                                            ("kcxai.compilers", "kcxai.engines._registry"),
                                            ("kcxai.experiments.cli", "kcxai.cli._args")])
def test_the_arrows_that_ran_back_up_are_caught(module: str, target: str) -> None:
    """The three arrows issue 29 removed, planted again."""
    assert arrows_back_up({module: {(target, 1)}}) == [f"{module}:1 imports {target}"]
