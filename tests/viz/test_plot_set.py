"""Matplotlib pictures: the tree with the path and the explanation, and plots of many explanations."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import kcxai  # noqa: E402
from kcxai import viz  # noqa: E402
from kcxai.viz._plot_tree import EXPL_FILL, PATH_COLOUR  # noqa: E402

V = (1, 1, 1, 1, 0, 0, 0, 0, 1)


def boxes(ax):
    """Node texts with their box colours."""
    out = {}
    for t in ax.texts:
        patch = t.get_bbox_patch()
        if patch is not None and patch.get_boxstyle().__class__.__name__ in ("Ellipse", "Round"):
            out.setdefault(t.get_text(), []).append((matplotlib.colors.to_hex(patch.get_facecolor()),
                                                     matplotlib.colors.to_hex(patch.get_edgecolor())))
    return out


def test_plot_tree_marks_path_and_explanation() -> None:
    tree = kcxai.datasets.running_example_tree()
    e = kcxai.min_idrs(tree, V, 0.03, start="path")
    ax = viz.plot_tree(tree, e)
    drawn = boxes(ax)
    # x1 and x9 are filled wherever tested; the path's nodes have blue edges
    for name, styles in drawn.items():
        for fill, _ in styles:
            assert (fill == EXPL_FILL) == (name in ("x1", "x9"))
    on_path = [name for name, styles in drawn.items() for _, edge in styles if edge == PATH_COLOUR]
    assert sorted(on_path) == sorted(["x1", "x2", "x3", "x4", "x9", "class 1"])
    bold = [line for line in ax.lines if line.get_linewidth() == 3]
    assert len(bold) == 5 and sum(line.get_linestyle() == "--" for line in bold) == 3  # x2, x3, x4 freed
    plt.close("all")


def test_set_plots() -> None:
    tree = kcxai.datasets.running_example_tree()
    rows = [V, (0, 1, 1, 0, 1, 0, 1, 1, 0), (1, 0, 1, 0, 0, 1, 1, 0, 1)]
    result = kcxai.Explainer(tree).explain(rows, delta=0.03)
    ax = viz.plot_feature_frequency(result)
    counts = result.feature_counts()
    widths = {t.get_text(): bar.get_width() for t, bar in zip(ax.get_yticklabels(), ax.patches)}
    assert widths == {k: v / 3 for k, v in counts.items()}
    left, right = viz.plot_size_and_bound(result)
    assert right.get_ylabel() == "exact error"
    offsets = right.collections[0].get_offsets()
    assert sorted(map(tuple, offsets.tolist())) == sorted((len(e), float(e.error)) for e in result)
    with pytest.raises(kcxai.InvalidTypeError, match="ExplanationSet"):
        viz.plot_feature_frequency([1, 2])
    with pytest.raises(kcxai.InvalidInputError, match="'top'"):
        viz.plot_feature_frequency(result, top=0)
    plt.close("all")
