"""docs/api.md shows the real signatures: every ``name(parameters)`` it documents is checked against
``inspect.signature`` of the object it names (names, order, positional or keyword-only, defaults, and no
parameter left out)."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from typing import Any

import pytest
from tests._support.paths import REPO

API = REPO / "docs" / "api.md"
#: Short names the page uses for instances of a class.
ALIASES = {"Explainer": "kcxai.Explainer", "space": "kcxai.FeatureSpace", "tree": "kcxai.DecisionTree"}
SPAN = re.compile(r"`([^`]+)`")
CALL = re.compile(r"^(\.?[A-Za-z_][\w.]*)\((.*)\)$")


def resolve(dotted: str) -> Any:
    head, _, rest = dotted.partition(".")
    if head in ALIASES:
        dotted = ALIASES[head] + ("." + rest if rest else "")
    parts = dotted.split(".")
    obj: Any = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        obj = getattr(obj, part) if hasattr(obj, part) else importlib.import_module(".".join(parts[: i + 1]))
    return obj


def split_params(text: str) -> list[str]:
    out, depth, current = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    return out + [current.strip()] if current.strip() else out


def documented_calls(text: str) -> list[tuple[int, str, str]]:
    """(line, dotted name, parameter text) of every documented call. In a table row whose first cell is a
    class, a bare ``method(...)`` or ``.method(...)`` is that class's method; elsewhere only names starting
    with ``kcxai.`` or an alias are calls of the API."""
    found = []
    for lineno, line in enumerate(text.splitlines(), 1):
        spans = SPAN.findall(line)
        owner = None
        if line.startswith("| `") and spans and not CALL.match(spans[0]):
            try:
                owner = spans[0] if inspect.isclass(resolve(spans[0])) else None
            except (ImportError, AttributeError):
                owner = None
        for span in spans:
            m = CALL.match(span)
            if not m:
                continue
            name, params = m.groups()
            if "." not in name.lstrip("."):
                if owner is None:
                    continue  # prose about another library (solve_limited(...)) or a builtin (help(...))
                name = owner + "." + name.lstrip(".")
            if name.startswith("kcxai.") or name.split(".")[0] in ALIASES:
                found.append((lineno, name, params))
    return found


def _same_default(doc: str, real: Any) -> bool:
    try:
        value = ast.literal_eval(doc)
    except (ValueError, SyntaxError):
        return doc == repr(real)
    return bool(value == real) and isinstance(value, bool) == isinstance(real, bool) and value is not ...


def problems(obj: Any, params: str) -> list[str]:
    """How a documented parameter list differs from the code's signature."""
    real = list(inspect.signature(obj).parameters.values())
    if real and real[0].name == "self" and inspect.isfunction(obj):
        real = real[1:]  # a method documented on its class
    out: list[str] = []
    keyword_only = False
    i = 0
    for tok in split_params(params):
        if tok == "*":
            keyword_only = True
            continue
        if tok == "...":
            out.append("'...' hides parameters: write them out")
            continue
        p = real[i] if i < len(real) else None
        i += 1
        if tok.startswith("**"):
            if p is None or p.kind != p.VAR_KEYWORD or p.name != tok[2:]:
                out.append(f"{tok}: the code has {p}")
            continue
        name, _, default = tok.partition("=")
        if p is None or p.name != name:
            out.append(f"{name}: the code's parameter here is {p}")
            continue
        kinds = (p.KEYWORD_ONLY,) if keyword_only else (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY)
        if p.kind not in kinds:
            out.append(f"{name}: documented {'keyword-only' if keyword_only else 'positional'}, "
                       f"the code's is {p.kind.description}")
        if p.default is p.empty and default:
            out.append(f"{name}: documented default {default}, the code has none")
        elif p.default is not p.empty and not default:
            out.append(f"{name}: documented without its default {p.default!r}")
        elif default and not _same_default(default, p.default):
            out.append(f"{name}: documented default {default}, the code's is {p.default!r}")
    if i < len(real):
        out.append(f"not documented: {', '.join(str(p) for p in real[i:])}")
    return out


def test_api_md_signatures_are_the_code_signatures():
    calls = documented_calls(API.read_text(encoding="utf-8"))
    assert len(calls) > 60
    wrong = []
    for lineno, name, params in calls:
        try:
            obj = resolve(name)
        except (ImportError, AttributeError) as e:
            wrong.append(f"docs/api.md:{lineno}: {name} does not exist ({e})")
            continue
        wrong += [f"docs/api.md:{lineno}: {name}({params}): {p}" for p in problems(obj, params)]
    assert not wrong, "\n".join(wrong)


def f(a, b=2, *, c="auto", **options):  # a function to check the checker against
    """For the checker's own test."""


@pytest.mark.parametrize("doc, complaint", [
    ('a, b=2, *, c="auto", **options', None),
    ('a, b=2, *, c=None, **options', "documented default None, the code's is 'auto'"),
    ("a, b=2, *, c='auto'", "not documented: **options"),
    ('a, b, *, c="auto", **options', "documented without its default 2"),
    ('a, *, b=2, c="auto", **options', "b: documented keyword-only"),
    ('a, b=2, *, d="auto", **options', "d: the code's parameter here is c"),
    ("a, ...", "'...' hides parameters"),
])
def test_the_checker_finds_each_kind_of_drift(doc, complaint):
    found = problems(f, doc)
    assert (not found) if complaint is None else any(complaint in p for p in found), found
