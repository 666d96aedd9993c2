"""Naive Bayes and linear classifiers at the end of a pipeline, composed with its encoders.

Each original column's contribution to a class score is the sum, over the encoded columns it feeds,
of the classifier's term for the encoded value each category (or bin) produces, taken as the exact
rationals scikit-learn stores. See :mod:`kcxai.models.imports.pipeline` for the encoders.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from kcxai._errors import InvalidInputError
from kcxai.models.linear import LinearClassifier, NaiveBayes

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike
    from kcxai.space import FeatureSpace

__all__ = ["score_model", "linear_terms", "finite_only"]


def finite_only(codings: list[Any], final: Any) -> None:
    numeric = [c.name for c in codings if c.kind == "number"]
    if numeric:
        name = type(final).__name__
        shown = repr(numeric) if len(numeric) <= 6 else f"[{', '.join(map(repr, numeric[:3]))}, ..., {numeric[-1]!r}]"
        raise InvalidInputError(
            f"{name} needs finite feature domains, but {len(numeric)} column(s) reach it as numbers: {shown}. Bin "
            "them in the pipeline and refit, e.g. make_pipeline(ColumnTransformer([('bins', KBinsDiscretizer("
            f"n_bins=3, encode='onehot-dense'), NUMERIC), ...]), {name}(...)) with NUMERIC those columns "
            "(see 'Linear models on numeric columns' in docs/models.md).")
    for c in codings:
        if any(np.isnan(v).any() for v in c.zvals.values()):
            raise InvalidInputError(
                f"Column {c.name!r} may be missing, and its missing value reaches {type(final).__name__} as NaN, "
                f"which it does not accept. Fill it in the pipeline (a SimpleImputer on {c.name!r}).")


def linear_terms(codings: list[Any], coef_rows: list[list[Fraction]]) -> list[list[list[Fraction]]]:
    """Per feature, per row of coefficients, the summed contribution of each domain value."""
    out = []
    for c in codings:
        rows = []
        for coef in coef_rows:
            vals = [Fraction(0)] * len(c.domain)
            for z, zvals in c.outputs:
                for k, zv in enumerate(zvals):
                    vals[k] += coef[z] * Fraction(zv)
            rows.append(vals)
        out.append(rows)
    return out


def score_model(final: Any, codings: list[Any], labels: list[Any], distribution: DistributionLike,
                space: FeatureSpace) -> LinearClassifier | NaiveBayes:
    """Naive Bayes and linear classifiers: each feature's contribution is the sum over its encoded
    columns, taken as the exact rationals scikit-learn stores."""
    # scikit-learn (heavy) loads on first import of an estimator, not with kcxai
    from sklearn.naive_bayes import BernoulliNB, CategoricalNB

    k = len(labels)
    if isinstance(final, CategoricalNB):
        tables = []
        for c in codings:
            if len(c.outputs) != 1:
                raise InvalidInputError(
                    f"CategoricalNB reads each column as one category code; column {c.name!r} is one-hot "
                    "encoded: use OrdinalEncoder (or KBinsDiscretizer(encode='ordinal')).")
            z, zvals = c.outputs[0]
            flp = final.feature_log_prob_[z]
            tables.append([[Fraction(float(flp[cl, int(v)])) for v in zvals] for cl in range(k)])
        priors = [Fraction(float(x)) for x in final.class_log_prior_]
        nb = NaiveBayes(space, labels, priors, tables, log=True)
        nb.weights_from_floats = True
        return nb
    if isinstance(final, BernoulliNB):
        flp = np.asarray(final.feature_log_prob_)
        neg = np.log(1 - np.exp(flp))  # as BernoulliNB._joint_log_likelihood computes it
        thr = final.binarize
        tables = []
        for c in codings:
            rows = []
            for cl in range(k):
                vals = [Fraction(0)] * len(c.domain)
                for z, zvals in c.outputs:
                    n_, p_ = Fraction(float(neg[cl, z])), Fraction(float(flp[cl, z]))
                    for q, zv in enumerate(zvals):
                        b = Fraction(int(zv > thr)) if thr is not None else Fraction(zv)
                        vals[q] += n_ + b * (p_ - n_)
                rows.append(vals)
            tables.append(rows)
        priors = [Fraction(float(x)) for x in final.class_log_prior_]
        nb = NaiveBayes(space, labels, priors, tables, log=True)
        nb.weights_from_floats = True
        return nb
    coef = [[Fraction(float(x)) for x in row] for row in np.atleast_2d(final.coef_)]
    intercepts = [Fraction(float(x)) for x in np.atleast_1d(final.intercept_)]
    terms = linear_terms(codings, coef)
    if len(coef) == 1:  # two classes: the second iff coef . x + intercept > 0
        weights = [[[Fraction(0)] * len(t[0]), t[0]] for t in terms]
        intercepts = [Fraction(0), intercepts[0]]
    else:
        weights = terms
    out = LinearClassifier(space, labels, weights, intercepts)
    out.weights_from_floats = True
    return out
