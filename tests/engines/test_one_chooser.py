"""The engine is chosen in one function: no module but the chooser (``kcxai.engines.choose``) builds an engine,
compiles a language or applies the rule that picks a decision engine.

Read from the package's source (its AST), so that a new door that builds its own engine fails here:

* an *engine builder* is a class of the package that answers queries (an oracle class, named ``...Oracle``,
  or a decision engine: a class with ``changes`` and ``core_features``), or a function that builds one
  (:data:`BUILDER_FUNCTIONS`); it may be called only by the chooser, by the module that defines it, by a
  language's own module (the registry's ``Language.module``) and by the few modules that assemble engines
  from engines (:data:`ASSEMBLERS`);
* a language compiles (``<something>.compile(...)``, other than ``re.compile``) only in the chooser and in
  :class:`~kcxai.compilers.Language` itself;
* the registry's rule ``decision_engine`` is applied only by the chooser.
"""

from __future__ import annotations

import ast
from pathlib import Path

from kcxai.engines import LANGUAGES

PACKAGE = Path(__import__("kcxai").__file__).parent

#: The chooser.
CHOOSER = "kcxai.engines.choose"

#: Functions that build an engine (besides the engine classes, found in the source).
BUILDER_FUNCTIONS = {"compile_engine", "engine_oracle"}

#: Modules that assemble an engine from engines: the decision engines' oracles and construction, the
#: portfolio (SAT and search side by side), the search (which asks a SAT solver first on small soft
#: forests), the diagrams' oracles (one per mixture component).
ASSEMBLERS = {"kcxai.engines._decision", "kcxai.engines._portfolio", "kcxai.engines._ensemble_box",
              "kcxai.compilers._tables.diagram", "kcxai.oracle"}

#: Where a language's ``compile`` may be called.
#: Modules that call a ``compile``: the chooser, the language table, and d4's own ``Solver.compile`` (the backend,
#: run in its child process by the ddnnf language).
COMPILES = {CHOOSER, "kcxai.compilers.language", "kcxai.compilers._d4_child"}


def _modules(root: Path = PACKAGE) -> dict[str, str]:
    out = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path.read_text(encoding="utf-8")
    return out


def engine_classes(sources: dict[str, str]) -> dict[str, str]:
    """Engine class name -> the module defining it."""
    out = {}
    for module, source in sources.items():
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
            methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            if "Protocol" in bases:
                continue
            if node.name.endswith("Oracle") or {"changes", "core_features"} <= methods:
                out[node.name] = module
    return out


def _called(node: ast.Call) -> tuple[str | None, ast.expr | None]:
    """The name called and, for an attribute, its receiver."""
    if isinstance(node.func, ast.Name):
        return node.func.id, None
    if isinstance(node.func, ast.Attribute):
        return node.func.attr, node.func.value
    return None, None


def violations(sources: dict[str, str]) -> list[str]:
    """Every call of an engine builder, a language's compile or the decision rule outside where it belongs."""
    classes = engine_classes(_modules()) | engine_classes(sources)
    languages = {lang.module for lang in LANGUAGES.values()}
    found = []
    for module, source in sorted(sources.items()):
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Call):
                continue
            name, receiver = _called(node)
            where = f"{module}:{node.lineno} calls {name}"
            if name in classes or name in BUILDER_FUNCTIONS:
                home = classes.get(name)
                if module not in {CHOOSER, home} | languages | ASSEMBLERS:
                    found.append(where + " (an engine is built by the chooser)")
            elif name == "compile" and receiver is not None and not (
                    isinstance(receiver, ast.Name) and receiver.id == "re"):
                if module not in COMPILES:
                    found.append(where + " (a language compiles in the chooser only)")
            elif name == "decision_engine" and module != CHOOSER:
                found.append(where + " (the chooser applies the rule)")
    return found


def test_no_module_but_the_chooser_builds_an_engine() -> None:
    sources = _modules()
    classes = engine_classes(sources)
    # the test is not vacuous: it knows the engines
    assert {"TreeOracle", "EngineOracle", "EnsembleCnf", "EnsembleBox", "EnsemblePortfolio", "SamplingOracle",
            "BruteForceOracle", "DiagramOracle"} <= set(classes), classes
    assert CHOOSER in sources and not violations(sources), "\n".join(violations(sources))


def test_a_door_that_builds_its_own_engine_is_caught() -> None:
    """A planted violation: an explainer that builds a box engine, compiles a language and picks an engine."""
    planted = {"kcxai.explain.planted": (
        "from kcxai.engines import LANGUAGES\n"
        "from kcxai.engines._ensemble_box import EnsembleBox\n"
        "from kcxai.engines._registry import decision_engine\n"
        "import re\n"
        "def explain(model):\n"
        "    re.compile('x')\n"
        "    engine = EnsembleBox(model)\n"
        "    compiled = LANGUAGES[decision_engine(model)].compile(model)\n"
        "    return engine, compiled\n")}
    found = violations(planted)
    assert len(found) == 3, found
    assert any("EnsembleBox" in v for v in found) and any("calls compile" in v for v in found)
    assert any("decision_engine" in v for v in found)
