"""Plots of many explanations (an :class:`~kcxai.ExplanationSet`) with matplotlib.

:func:`plot_feature_frequency`: the share of explanations that contain each feature.
:func:`plot_size_and_bound`: how many features explanations have, and where their exact precision (for
C-delta sets) or error (for I-delta sets) lies against the bound they were computed for.
"""

from __future__ import annotations

from typing import Any

from kcxai._errors import InvalidInputError, InvalidTypeError, MissingDependencyError
from kcxai._params import POSITIVE_INT, validate_params
from kcxai.explanation_set import ExplanationSet

__all__ = ["plot_feature_frequency", "plot_size_and_bound"]


def _pyplot() -> Any:
    try:
        # matplotlib (optional extra 'plot', heavy) loads only when something is drawn
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError("Plotting needs matplotlib: pip install 'kcxai[plot]'.") from None
    return plt


def _explanations(result: Any) -> list[Any]:
    if not isinstance(result, ExplanationSet):
        raise InvalidTypeError(f"'result' must be an ExplanationSet (Explainer.explain). Got {type(result).__name__}.")
    out = result.explanations
    if not out:
        raise InvalidInputError("'result' has no explanation to plot (every row failed).")
    return out


@validate_params(top=POSITIVE_INT)
def plot_feature_frequency(result: Any, *, top: int = 20, ax: Any = None) -> Any:
    """A horizontal bar per feature: the share of explanations containing it (most frequent on top).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import kcxai
    >>> from kcxai.viz import plot_feature_frequency
    >>> result = kcxai.Explainer(kcxai.datasets.running_example_tree()).explain(
    ...     [(1, 1, 1, 1, 0, 0, 0, 0, 1), (0, 0, 0, 0, 0, 0, 0, 0, 0)], delta=0.03)
    >>> ax = plot_feature_frequency(result)
    >>> result.feature_counts()
    {'x6': 2, 'x7': 2, 'x8': 2, 'x9': 2, 'x5': 1}
    >>> [t.get_text() for t in ax.get_yticklabels()][-1], float(ax.patches[-1].get_width())
    ('x6', 1.0)
    """
    n = len(_explanations(result))
    counts = list(result.feature_counts().items())[:top]
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 0.35 * max(len(counts), 3) + 1))
    names = [c[0] for c in reversed(counts)]
    shares = [c[1] / n for c in reversed(counts)]
    ax.barh(names, shares, color="#1f5fbf")
    ax.set_xlim(0, 1.05)
    ax.set_xlabel(f"share of the {n} explanations containing the feature")
    ax.set_title("Features in the explanations")
    return ax


def plot_size_and_bound(result: Any, *, axes: Any = None) -> Any:
    """Two panels: a histogram of explanation sizes; exact precision (C-delta methods) or error
    (I-delta methods) of each explanation against its size, with the bound as a line.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import kcxai
    >>> from kcxai.viz import plot_size_and_bound
    >>> result = kcxai.Explainer(kcxai.datasets.running_example_tree()).explain(
    ...     [(1, 1, 1, 1, 0, 0, 0, 0, 1), (0, 0, 0, 0, 0, 0, 0, 0, 0)], method="local_cdrs", precision=0.9)
    >>> left, right = plot_size_and_bound(result)
    >>> right.get_ylabel()
    'exact precision'
    """
    expl = _explanations(result)
    plt = _pyplot()
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    left, right = axes
    sizes = [len(e) for e in expl]
    left.hist(sizes, bins=range(0, max(sizes) + 2), align="left", rwidth=0.8, color="#1f5fbf")
    left.set_xlabel("features in the explanation")
    left.set_ylabel("explanations")
    left.set_title("Explanation size")
    precision = result.bounds == "precision"
    marks = {"exact": ("o", "#1f5fbf", "exact"),
             "proven": ("s", "#2ca02c", "proven (the bound's side of its interval)"),
             "sampled": ("x", "#ff7f0e", "sampled (the certified bound)")}
    decided = [e.decided for e in expl]
    for how, (marker, color, label) in marks.items():
        pts = [(size, _shown(e, precision)) for size, e, d in zip(sizes, expl, decided) if d == how]
        pts = [(size, v) for size, v in pts if v is not None]
        if pts:
            right.scatter([p[0] for p in pts], [p[1] for p in pts], s=14, alpha=0.6, color=color, marker=marker,
                          label=label if len(set(decided)) > 1 or how != "exact" else "explanations")
    name = "precision bound" if precision else "delta"
    bounds = sorted({float(b) for e in expl for b in [e.precision_bound if precision else e.delta] if b is not None})
    for d in bounds:
        right.axhline(d, color="#d62728", linestyle="--", label=f"{name} = {d:g}")
    right.set_xlabel("features in the explanation")
    exact = all(d == "exact" for d in decided)
    right.set_ylabel(("exact " if exact else "") + ("precision" if precision else "error"))
    right.set_title(("precision (at least the bound)" if precision else "error (at most delta)") + " vs size")
    right.legend(loc="best", fontsize=8)
    return left, right


def _shown(e: Any, precision: bool) -> float | None:
    """The value a result is plotted at: its exact measure; for a sampled one what it certified; for bounds
    only, the end of the interval nearer the bound's wrong side (the least precision, the largest error)."""
    if e.decided == "sampled" and e.certified is not None:
        return float(e.certified)
    exact = e.precision if precision else e.error
    if exact is not None:
        return float(exact)
    if e.error_bounds is None:
        return None
    low, high = e.error_bounds
    if not precision:
        return float(high)
    return 1 - float(high) / float(e.coverage) if e.coverage else None
