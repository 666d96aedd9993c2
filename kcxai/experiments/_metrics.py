"""Anchor's sampled precision metric, on data."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from kcxai._errors import InvalidInputError
from kcxai._params import Range, check

if TYPE_CHECKING:  # pragma: no cover
    from kcxai._types import InstanceLike

__all__ = ["sampled_precision"]


def sampled_precision(predict: Callable[[Any], Any], data: Any, instance: InstanceLike, features: Iterable[int], *,
                      n_samples: int = 1000, rng: np.random.Generator | None = None) -> float:
    """Precision of a feature set estimated the way Anchor samples, on data.

    This is the metric the paper assesses both methods with (Anchor's
    precision, Ribeiro et al. 2018): draw ``n_samples`` rows of ``data``
    uniformly with replacement, set the features of the set to the
    instance's values, and return the fraction of samples classified like
    the instance. For an anchor made of equalities on categorical features it
    is the distribution alibi's ``AnchorTabular`` samples from (its
    ``TabularSampler`` keeps the anchor's values and takes the other features
    from training rows). It is a random estimate, unlike
    :func:`kcxai.precision`, which counts exactly over feature space.

    Parameters
    ----------
    predict : callable
        Maps an ``(n, m)`` array to ``n`` labels (e.g. ``clf.predict``).
    data : array of shape (N, m)
        The rows to sample from (the training data).
    instance : array of shape (m,)
    features : iterable of int
        The explanation's features.
    n_samples : int, default 1000
    rng : numpy.random.Generator or int, optional

    Examples
    --------
    >>> import numpy as np
    >>> data = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> predict = lambda X: X[:, 0] & X[:, 1]          # AND
    >>> sampled_precision(predict, data, np.array([1, 1]), [0, 1], rng=0)
    1.0
    >>> round(sampled_precision(predict, data, np.array([1, 1]), [0], n_samples=4000, rng=0), 1)
    0.5
    """
    check("n_samples", n_samples, Range(numbers.Integral, 1))
    data = np.asarray(data)
    x = np.asarray(instance).reshape(1, -1)
    if data.ndim != 2 or data.shape[1] != x.shape[1]:
        raise InvalidInputError(
            f"'data' must be a 2-d array with {x.shape[1]} columns (one per feature of the instance). "
            f"Got shape {data.shape} instead.")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    cols = sorted(int(i) for i in features)
    samples = data[gen.integers(0, data.shape[0], size=int(n_samples))]
    if cols:
        samples[:, cols] = x[0, cols]
    label = np.asarray(predict(x))[0]
    return float(np.mean(np.asarray(predict(samples)) == label))
