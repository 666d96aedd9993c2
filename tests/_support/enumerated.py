"""The ground truth of the one-walk tests: a model under a distribution of exactly K components, and every
point's probability and class enumerated once (from the distribution's parameters as given, see
:mod:`tests._support.reference`)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from tests._support import reference as ref
from tests._support.model_strategies import boosted_models, forests
from tests._support.strategies import components, trees

#: The numbers of components every one-walk test draws from.
KS = (1, 2, 5)


@st.composite
def models_with_k(draw: Any, *, ensembles: bool = True, exact: bool | None = None) -> Any:
    """A tree (multi-valued features, 2-3 classes), forest or boosted model under a distribution of exactly
    K = 1, 2 or 5 product components, exact or float."""
    kinds = [trees(distributions=("uniform",))]
    if ensembles:
        kinds += [forests(distributions=("uniform",)), boosted_models(distributions=("uniform",))]
    model = draw(st.one_of(*kinds))
    k = draw(st.sampled_from(KS))
    exact = draw(st.booleans()) if exact is None else exact
    dist = draw(components([f.size for f in model.space.features], k, exact=exact))
    model = model.with_distribution(dist)
    if model.space.distribution.n_components != k:  # pragma: no cover - the strategy draws exactly k
        raise AssertionError(f"drew {model.space.distribution.n_components} components, not {k}")
    return model


class Enumerated:
    """Every point's probability and class under a model, enumerated once (the ground truth)."""

    def __init__(self, model: Any) -> None:
        self.space = model.space
        self.rows = [(x, ref.point_probability(model.space, x), model.predict_point(x))
                     for x in ref.all_points(model.space)]

    def weight(self, inside: Any, label: int | None = None) -> Any:
        """Pr(x inside and kappa(x) != label) (any class when ``label`` is None)."""
        zero: Any = Fraction(0) if self.space.is_exact else 0.0
        return sum((p for x, p, c in self.rows if inside(x) and (label is None or c != label)), zero)

    def agreeing(self, point: Any, fixed: Any, label: int) -> Any:
        """Pr(kappa(x) != label and x_S = v_S)."""
        return self.weight(lambda x: all(x[i] == point[i] for i in fixed), label)


def in_box(box: Any) -> Any:
    """The test of membership in ``box`` (per feature, the bitmask of the values it allows)."""
    return lambda x: all(box[i] >> x[i] & 1 for i in range(len(box)))


def same(weight: Any, total: Any, probability: Any) -> bool:
    """Whether an oracle's weight (relative to ``total``) is the enumerated probability: exactly for integer
    weights, within 1e-9 for floats."""
    if isinstance(weight, int) and isinstance(total, int):
        return Fraction(weight, total) == probability
    return abs(float(weight) / float(total) - float(probability)) <= 1e-9
