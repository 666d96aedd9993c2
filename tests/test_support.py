"""The README's support table is generated from the registries (model types x declared exact languages),
every cell it marks is checked here against brute-force enumeration on random models of the family, and
the README's install lines name every extra of pyproject.toml."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from tests._support import reference as ref
from kcxai._support import SOURCES, model_types, support_markdown, takes
from kcxai.engines import LANGUAGES, NATIVE_PREFERENCE
from tests._support.model_strategies import (bdd_models, decision_lists, forests, linear_models, naive_bayes_models,
    rule_sets)
from tests._support.strategies import DISTRIBUTIONS, instance_of, points, trees
from tests._support.model_strategies import boosted_models
from tests._support.paths import REPO
from tests._support.languages import MISSING_OPTIONAL

ROOT = REPO
README = (ROOT / "README.md").read_text(encoding="utf-8")
EXACT = [name for name, lang in LANGUAGES.items() if lang.conformance and name not in MISSING_OPTIONAL]
#: model_type -> random models of the family.
FAMILIES = {
    "decision_tree": trees(distributions=DISTRIBUTIONS),
    "decision_list": decision_lists(distributions=DISTRIBUTIONS),
    "rule_set": rule_sets(distributions=DISTRIBUTIONS),
    "bdd": bdd_models(distributions=DISTRIBUTIONS),
    "linear": linear_models(distributions=DISTRIBUTIONS),
    "naive_bayes": naive_bayes_models(distributions=DISTRIBUTIONS),
    "random_forest": forests(distributions=DISTRIBUTIONS),
    "boosted_trees": boosted_models(),
}


def test_readme_holds_the_generated_table():
    block = README.split("<!-- support-table -->\n", 1)[1].split("<!-- /support-table -->", 1)[0]
    assert block == support_markdown(), "README.md's support table is stale: regenerate with `python -m kcxai._support`"


def test_every_registered_family_is_a_row():
    registered = model_types()
    assert set(registered) == set(SOURCES) == set(FAMILIES)
    for model_type, cls in registered.items():
        assert f"| `kcxai.{cls.__name__}` ({SOURCES[model_type]}) |" in README
        assert getattr(kcxai, cls.__name__) is cls


def test_a_family_without_a_source_is_refused(monkeypatch):
    from kcxai.models.classifier import _MODEL_TYPES

    monkeypatch.setitem(_MODEL_TYPES, "new_family", kcxai.DecisionTree)
    with pytest.raises(KeyError, match="new_family"):
        support_markdown()


@pytest.mark.parametrize("model_type", list(FAMILIES))
@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_each_cell_is_what_the_languages_do(model_type, data):
    """A ✓ cell: the language takes random models of the family and counts exactly as enumeration does;
    a — cell: it refuses them; "native" is what an explainer given the model itself uses."""
    cls = model_types()[model_type]
    model = data.draw(FAMILIES[model_type])
    assert isinstance(model, cls)
    space = model.space
    table = [(x, model.predict_point(x), ref.point_probability(space, x)) for x in ref.all_points(space)]
    point = data.draw(points(space))
    label = data.draw(st.integers(0, len(model.classes) - 1))
    fixed = frozenset(data.draw(st.sets(st.integers(0, space.n_features - 1))))
    want = sum(pr for x, c, pr in table if c != label and all(x[i] == point[i] for i in fixed))
    for name in EXACT:
        lang = LANGUAGES[name]
        assert (lang.accepts is None or lang.accepts(model)) == takes(lang, cls)
        if not takes(lang, cls):
            with pytest.raises(kcxai.KcxaiError):
                kcxai.compile_model(model, name)
            continue
        oracle = kcxai.compile_model(model, name).oracle
        assert ref.close(space.probability(oracle.disagree_weight(point, label, fixed)), want), name
    native = next(n for n in NATIVE_PREFERENCE if takes(LANGUAGES[n], cls))
    assert kcxai.min_idrs(model, instance_of(space, point), 0).language == native


def test_readme_installs_every_extra():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = pyproject.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    extras = re.findall(r"^([\w-]+) = \[", section, flags=re.M)
    assert "boost" in extras
    install = README[README.index("## Install"):README.index("## Quickstart")]
    for extra in extras:
        assert f'pip install -e ".[{extra}]"' in install, extra
