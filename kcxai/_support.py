"""The README's table of what is supported, generated from the two registries.

Rows are the model families registered as model types (every :class:`~kcxai.Classifier` subclass with a
``model_type``), columns the declared exact languages of :data:`kcxai.engines.LANGUAGES`; a cell says
whether the language takes the family (its ``accepts``) and "native" marks the language an explainer uses
when given the model itself (the first of :data:`~kcxai.engines.NATIVE_PREFERENCE` that takes it). Only
where a family's models come from is written here (:data:`SOURCES`), once. A test checks that the README
holds exactly :func:`support_markdown` and that every cell marked there is checked against enumeration;
``python -m kcxai._support`` prints the table.
"""

from __future__ import annotations

from typing import Any, cast

from kcxai.engines import LANGUAGES, NATIVE_PREFERENCE
from kcxai.models.classifier import _MODEL_TYPES

__all__ = ["SOURCES", "support_markdown"]

#: model_type -> where models of the family come from (shown beside the class in the table).
SOURCES: dict[str, str] = {
    "decision_tree": "hand-built, scikit-learn, `.dt`/`.map`, JSON",
    "decision_list": "rules, text, imodels",
    "rule_set": "rules, text, wittgenstein",
    "bdd": "node table, dd",
    "linear": "weights, scikit-learn linear models",
    "naive_bayes": "probabilities, scikit-learn `CategoricalNB`/`BernoulliNB`",
    "random_forest": "trees, scikit-learn forests; soft or hard voting",
    "boosted_trees": "trees and leaf values; scikit-learn gradient boosting, XGBoost and LightGBM with the "
                     "`boost` extra",
}


def model_types() -> dict[str, type[Any]]:
    """Every registered model type, in :data:`SOURCES` order then any other (which the table refuses)."""
    order = list(SOURCES) + sorted(set(_MODEL_TYPES) - set(SOURCES))
    return {t: _MODEL_TYPES[t] for t in order if t in _MODEL_TYPES}


def takes(language: Any, family: type[Any]) -> bool:
    """Whether a language takes the models of a family. ``accepts`` tests read static attributes
    (:func:`~kcxai.engines._registry.is_tree`), so the class answers for its instances; the test of the
    table checks the answer on random instances."""
    return language.accepts is None or bool(language.accepts(cast(Any, family)))


def support_markdown() -> str:
    """The support table between ``<!-- support-table -->`` and ``<!-- /support-table -->`` in README.md."""
    families = model_types()
    missing = [t for t in families if t not in SOURCES]
    if missing:
        raise KeyError(f"model types {missing} have no entry in kcxai._support.SOURCES")
    exact = [lang for lang in LANGUAGES.values() if lang.conformance]
    head = ["model"] + [f"`{lang.name}`" + (f" ({lang.package})" if lang.package else "") for lang in exact]
    rows = ["Models (rows) × knowledge-compilation languages (columns) that answer the counting queries exactly;",
            "every cell marked ✓ is checked against brute-force enumeration on random models. \"native\" marks the",
            "language tried first when a model is passed to an explainer itself, within the probe budget (see",
            "[docs/explainer.md](docs/explainer.md), \"How the engine is chosen\").",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head)]
    for model_type, cls in families.items():
        native = next((n for n in NATIVE_PREFERENCE if takes(LANGUAGES[n], cls)), None)
        cells = [("✓ (native)" if lang.name == native else "✓") if takes(lang, cls) else "—" for lang in exact]
        rows.append(f"| `kcxai.{cls.__name__}` ({SOURCES[model_type]}) | " + " | ".join(cells) + " |")
    others = [lang for lang in LANGUAGES.values() if not lang.conformance]
    said = {"estimates": "certified estimates", "decisions": "delta = 0 decisions, no counts"}
    if others:
        rows.append("")
        rows.append("Not in the table, as they do not count exactly:")
        rows.append("")
        for lang in others:
            fams = [cls.__name__ for cls in families.values() if takes(lang, cls)]
            who = "every model" if len(fams) == len(families) else ", ".join(f"`{f}`" for f in fams)
            rows.append(f"- `{lang.name}` ({said.get(lang.answers, lang.answers)}): {lang.summary}; it takes {who}.")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(support_markdown(), end="")
