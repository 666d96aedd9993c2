"""No import circle between kcxai's modules, read from the source: every ``import`` counts, also those inside
functions and under ``TYPE_CHECKING`` (a circle hidden from the interpreter is still two modules that cannot be
read, tested or moved apart). A type both sides need goes where both can import it (a small protocol)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__import__("kcxai").__file__).parent

#: Circles known and not yet broken (none): a circle listed here must still exist.
KNOWN: set[frozenset[str]] = set()


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module name -> the package's modules it imports. ``from a import b`` points at module ``a.b`` when that
    is a module, else at ``a``; relative imports are resolved."""
    paths = {_module_name(p, root): p for p in root.rglob("*.py")}
    top = root.name
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    module = f"{base}.{node.module}" if node.module else base
                else:
                    module = node.module or ""
                if module == top or module.startswith(top + "."):
                    targets |= {f"{module}.{a.name}" if f"{module}.{a.name}" in paths else module for a in node.names}
            elif isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name == top or a.name.startswith(top + ".")}
        graph[name] = {t for t in targets if t in paths and t != name}
    return graph


def circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.add(frozenset(component))
    return found


def _describe(found: set[frozenset[str]], graph: dict[str, set[str]]) -> str:
    return "\n".join(" <-> ".join(sorted(c)) + ": " + "; ".join(f"{m} -> {t}" for m in sorted(c)
                                                               for t in sorted(graph[m] & c))
                     for c in sorted(found, key=sorted))


def test_no_import_circle() -> None:
    graph = module_graph()
    assert len(graph) > 100 and "kcxai.explain._sessions" in graph["kcxai.explain._query"]
    new = circles(graph) - KNOWN
    assert not new, "import circles:\n" + _describe(new, graph)


def test_the_known_circle_is_listed_while_it_lasts() -> None:
    """``KNOWN`` holds only circles that still exist: once one is broken, it leaves the list."""
    assert KNOWN <= circles(module_graph())


def test_a_circle_under_type_checking_is_caught(tmp_path: Path) -> None:
    """The kind of circle issue 29 removed (explain/_query <-> explain/_sessions), planted in a small package:
    one side imports the other only under ``TYPE_CHECKING``, a third module closes a longer circle through a
    relative import inside a function, and a fourth module only points into a circle."""
    pkg = tmp_path / "kcxai"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "query.py").write_text("from kcxai.sub import sessions\n")
    (pkg / "sub" / "sessions.py").write_text("from typing import TYPE_CHECKING\n"
                                             "if TYPE_CHECKING:\n    from kcxai.sub.query import Query\n")
    (pkg / "a.py").write_text("import kcxai.b\n")
    (pkg / "b.py").write_text("from kcxai.sub import c\n")
    (pkg / "sub" / "c.py").write_text("def f():\n    from .. import a\n")
    (pkg / "d.py").write_text("from kcxai.a import x\nfrom kcxai.sub.query import Query\n")
    graph = module_graph(pkg)
    assert graph["kcxai.sub.c"] == {"kcxai.a"}
    assert circles(graph) == {frozenset({"kcxai.sub.query", "kcxai.sub.sessions"}),
                              frozenset({"kcxai.a", "kcxai.b", "kcxai.sub.c"})}
    (pkg / "sub" / "sessions.py").write_text("from typing import Protocol\nclass Host(Protocol): ...\n")
    assert circles(module_graph(pkg)) == {frozenset({"kcxai.a", "kcxai.b", "kcxai.sub.c"})}
