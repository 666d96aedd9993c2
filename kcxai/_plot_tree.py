"""Drawing a decision tree with matplotlib (no system package): the instance's path and the explanation.

The same conventions as the Graphviz drawing of :mod:`kcxai.viz`: the instance's root-to-leaf path in
bold blue, internal nodes testing a feature of the explanation filled orange, tests on the path of
features the explanation frees dashed. Leaves are laid out left to right in depth-first order and each
internal node sits above the middle of its children.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kcxai._errors import MissingDependencyError

__all__ = ["TreeLayout", "layout_tree", "plot_tree"]

PATH_COLOUR = "#1f5fbf"
EXPL_FILL = "#ffcc80"


@dataclass(frozen=True)
class TreeLayout:
    """Node positions of a drawing: ``x`` and ``depth`` per shown node, the shown edges, and the
    collapsed subtrees (``(parent, child)`` drawn as ``...``)."""

    x: dict[int, float]
    depth: dict[int, int]
    edges: tuple[tuple[int, int, int], ...]  # (parent, child, mask)
    collapsed: tuple[tuple[int, int, int], ...]


def layout_tree(arrays: Any, *, max_depth: int | None = None, keep: frozenset[int] = frozenset()) -> TreeLayout:
    """Positions for the nodes of ``arrays`` (a :class:`~kcxai.models.tree.TreeArrays`), collapsing
    subtrees below ``max_depth`` except those holding a node of ``keep``."""
    feat, branches = arrays.feature, arrays.branches
    x: dict[int, float] = {}
    depth: dict[int, int] = {arrays.root: 0}
    edges: list[tuple[int, int, int]] = []
    collapsed: list[tuple[int, int, int]] = []
    order: list[int] = []
    stack = [arrays.root]
    while stack:  # pre-order, first branch first
        nid = stack.pop()
        order.append(nid)
        if feat[nid] < 0:
            continue
        children = []
        for mask, child in branches[nid]:
            depth[child] = depth[nid] + 1
            if max_depth is not None and depth[nid] >= max_depth and child not in keep:
                collapsed.append((nid, child, mask))
                continue
            edges.append((nid, child, mask))
            children.append(child)
        stack.extend(reversed(children))
    slots = 0.0
    kids: dict[int, list[int]] = {}
    for a, b, _ in edges:
        kids.setdefault(a, []).append(b)
    stubs: dict[int, list[int]] = {}
    for a, b, _ in collapsed:
        stubs.setdefault(a, []).append(b)
    for nid in order:  # leaves and stubs take the next slot, left to right
        if not kids.get(nid):
            if nid in stubs:
                continue
            x[nid] = slots
            slots += 1
    for nid in reversed(order):
        below = kids.get(nid, [])
        stub = stubs.get(nid, [])
        if not below:
            if stub:
                x[nid] = slots
                slots += 1
            continue
        x[nid] = (min(x[c] for c in below) + max(x[c] for c in below)) / 2
    for a, b, _ in collapsed:
        x[b] = x[a] + 0.3 * (stubs[a].index(b) - (len(stubs[a]) - 1) / 2)
    return TreeLayout(x, depth, tuple(edges), tuple(collapsed))


def plot_tree(tree: Any, explanation: Any = None, instance: Any = None, *, max_depth: int | None = None,
              title: str | None = None, ax: Any = None, fontsize: float = 8) -> Any:
    """Draw a decision tree with matplotlib, optionally with an instance's path and an explanation.

    Parameters
    ----------
    tree : DecisionTree
    explanation : Explanation, optional
        Nodes testing its features are filled orange; its rule is the title. Its instance is drawn
        unless ``instance`` is given.
    instance : sequence or mapping, optional
        Its root-to-leaf path is drawn in bold blue.
    max_depth : int, optional
        Collapse subtrees below this depth into ``...`` (never the highlighted path).
    title : str, optional
        Defaults to the explanation's rule.
    ax : matplotlib Axes, optional
        Drawn into a new figure otherwise.
    fontsize : float, default 8

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import kcxai
    >>> from kcxai.viz import plot_tree
    >>> tree = kcxai.datasets.running_example_tree()
    >>> e = kcxai.min_idrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0.03, start="path")
    >>> ax = plot_tree(tree, e)
    >>> ax.get_title()
    'IF x1 = 1 AND x9 = 1 THEN class = 1'
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError("Drawing with matplotlib needs it installed: pip install 'kcxai[plot]'.") from None
    from kcxai._tree_marks import _edge_label, highlight

    arrays = tree.arrays
    space = tree.space
    expl, on_path, path_edges = highlight(tree, explanation, instance)
    lay = layout_tree(arrays, max_depth=max_depth, keep=frozenset(on_path))
    if ax is None:
        width = max(4.0, 0.9 * (max(lay.x.values(), default=0) + 1))
        height = max(3.0, 1.1 * (max(lay.depth[n] for n in lay.x) + 1))
        _, ax = plt.subplots(figsize=(min(width, 60), min(height, 40)))
    def pos(n: int) -> tuple[float, float]:
        return lay.x[n], -float(lay.depth[n])

    for a, b, mask in lay.edges + lay.collapsed:
        (x0, y0), (x1, y1) = pos(a), pos(b)
        bold = (a, b) in path_edges
        dashed = bold and explanation is not None and arrays.feature[a] not in expl
        ax.plot([x0, x1], [y0, y1], color=PATH_COLOUR if bold else "#888888", linewidth=3 if bold else 1,
                linestyle="--" if dashed else "-", zorder=1)
        ax.text((x0 + x1) / 2, (y0 + y1) / 2, _edge_label(space.features[arrays.feature[a]], mask),
                fontsize=fontsize * 0.85, ha="center", va="center", zorder=3,
                bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8})
    for n in lay.x:
        if any(b == n for _, b, _ in lay.collapsed):
            ax.text(*pos(n), "...", ha="center", va="center", fontsize=fontsize, zorder=4)
            continue
        f = arrays.feature[n]
        text = space.features[f].name if f >= 0 else f"class {tree.classes[arrays.label[n]]}"
        fill = EXPL_FILL if f >= 0 and f in expl else "white"
        edge = PATH_COLOUR if n in on_path else "#444444"
        ax.text(*pos(n), text, ha="center", va="center", fontsize=fontsize, zorder=4,
                bbox={"boxstyle": "round,pad=0.3" if f < 0 else "ellipse,pad=0.3", "fc": fill, "ec": edge,
                      "lw": 2.5 if n in on_path else 1})
    caption = title if title is not None else (explanation.rule() if explanation is not None else None)
    if caption:
        ax.set_title(caption, fontsize=fontsize + 2)
    xs = list(lay.x.values())
    ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
    ax.set_ylim(-max(lay.depth[n] for n in lay.x) - 0.6, 0.6)
    ax.set_axis_off()
    return ax
