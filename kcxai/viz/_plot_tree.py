"""Drawing a decision tree with matplotlib (no system package): the instance's path and the explanation.

The same conventions as the Graphviz drawing of :mod:`kcxai.viz`: the instance's root-to-leaf path in
bold blue, internal nodes testing a feature of the explanation filled orange, tests on the path of
features the explanation frees dashed.

The layout gives every node the room its label needs: each shown subtree gets a horizontal band as wide as
its widest need (a node's box, or the label of the branch into it, measured from the text at the font
size used) or the sum of its children's bands, and sibling bands never overlap. An edge runs down from its
parent, along a bar, and down into its child; the branch's label sits on that last drop, just above the
child, so each label stands on its own edge. Sizes are in points: a figure made here is sized to hold the
whole tree and its wrapped title at the font size asked (shrunk only past 60 inches); drawn into a given
``ax``, the font shrinks until the tree fits the Axes.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kcxai._errors import InvalidInputError, MissingDependencyError
from kcxai._params import Range, check
from kcxai.explain.explanation import Explanation
from kcxai.models._tree_data import TreeArrays
from kcxai.models.tree import DecisionTree
from kcxai.viz._tree_marks import _edge_label, check_tree, highlight

if TYPE_CHECKING:  # pragma: no cover
    from kcxai._types import InstanceLike

__all__ = ["TreeLayout", "layout_tree", "plot_tree"]

#: The rule of ``fontsize``.
FONTSIZE = Range(numbers.Real, 0, 1000, closed="neither", description="a positive number of points")

PATH_COLOUR = "#1f5fbf"
EXPL_FILL = "#ffcc80"

_NODE_PAD = 0.3      # box padding, in font sizes (matplotlib's bbox ``pad``)
_EDGE_FONT = 0.85    # edge labels' font, relative to the nodes'
_EDGE_PAD = 0.15     # edge label box padding, in edge-label font sizes
_GAP = 0.8           # room between neighbouring bands, in font sizes
_MARGIN = 0.5        # margin around the drawing, in font sizes
_MAX_INCHES = 60.0   # the largest figure side made here, unless the font is already the smallest
_MIN_FONT = 1.0      # matplotlib's (FreeType's) smallest font size, in points
_TITLE_PAD = 6.0     # points between the title and the drawing
_LABEL_WIDTH = 22.0  # longer branch labels (value sets) break after commas, in edge-label font sizes


@dataclass(frozen=True)
class TreeLayout:
    """Node positions of a drawing: ``x`` (centre) and ``depth`` per shown node, the shown edges, the
    collapsed subtrees (``(parent, child, mask)`` drawn as ``...``), the band ``(left, right)`` each shown
    node's subtree takes, and the drawing's total width (in the unit of the widths given)."""

    x: dict[int, float]
    depth: dict[int, int]
    edges: tuple[tuple[int, int, int], ...]  # (parent, child, mask)
    collapsed: tuple[tuple[int, int, int], ...]
    band: dict[int, tuple[float, float]]
    width: float


def _children(arrays: TreeArrays, nid: int) -> list[tuple[int, int]]:
    """``(mask, child)`` of a node, lowest values first (``<= t`` left of ``> t``)."""
    return sorted(arrays.branches[nid], key=lambda mc: (mc[0] & -mc[0]).bit_length())


def layout_tree(arrays: TreeArrays, *, max_depth: int | None = None, keep: frozenset[int] = frozenset(),
                need: Callable[[int], float] | None = None, gap: float = 0.2) -> TreeLayout:
    """Positions for the nodes of ``arrays`` (a :class:`~kcxai.models.tree.TreeArrays`), collapsing
    subtrees below ``max_depth`` except those holding a node of ``keep``.

    ``need(n)`` is the width node ``n`` needs (its box, or its incoming edge's label); 1 by default.
    A subtree's band is as wide as its root's need or its children's bands side by side, ``gap`` apart;
    a node is centred over its children, within its band.
    """
    need = need or (lambda n: 1.0)
    root = arrays.root
    depth: dict[int, int] = {root: 0}
    edges: list[tuple[int, int, int]] = []
    collapsed: list[tuple[int, int, int]] = []
    kids: dict[int, list[int]] = {}
    stubs: set[int] = set()
    order: list[int] = []
    stack = [root]
    while stack:  # pre-order; "..." stubs are leaves of the drawing
        nid = stack.pop()
        order.append(nid)
        if nid in stubs or arrays.feature[nid] < 0:
            continue
        out = kids[nid] = []
        for mask, child in _children(arrays, nid):
            depth[child] = depth[nid] + 1
            if max_depth is not None and depth[nid] >= max_depth and child not in keep:
                collapsed.append((nid, child, mask))
                stubs.add(child)
            else:
                edges.append((nid, child, mask))
            out.append(child)
        stack.extend(reversed(out))
    width: dict[int, float] = {}
    for nid in reversed(order):  # children before parents
        below = kids.get(nid, [])
        inner = sum(width[c] for c in below) + gap * max(len(below) - 1, 0)
        width[nid] = max(need(nid), inner)
    x: dict[int, float] = {}
    band: dict[int, tuple[float, float]] = {root: (0.0, width[root])}
    for nid in order:  # parents before children
        left, right = band[nid]
        below = kids.get(nid, [])
        inner = sum(width[c] for c in below) + gap * max(len(below) - 1, 0)
        cursor = left + (right - left - inner) / 2
        for c in below:
            band[c] = (cursor, cursor + width[c])
            cursor += width[c] + gap
    for nid in reversed(order):
        left, right = band[nid]
        below = kids.get(nid, [])
        if not below:
            x[nid] = (left + right) / 2
            continue
        half = need(nid) / 2
        x[nid] = min(max((x[below[0]] + x[below[-1]]) / 2, left + half), right - half)
    return TreeLayout(x, depth, tuple(edges), tuple(collapsed), band, width[root])


class _Measure:
    """Text extents in points at a font size (cached), from matplotlib's own layout of the text.

    Hinted text is a few percent wider or narrower with the resolution (the same label measured 52-55
    points between 50 and 600 dpi), and much wider at a few pixels a glyph: each text is measured at the
    figure's resolution, at 50 dpi (a figure shown small, or saved at a low resolution after it was drawn)
    and at 144 dpi, and the largest extent, widened by 6%, is kept.
    """

    _SLACK = 1.06

    def __init__(self, dpi: float) -> None:
        # matplotlib (optional extra 'plot', heavy) loads only when something is drawn
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # matplotlib: optional, loaded to draw
        from matplotlib.figure import Figure

        self._figures = [Figure(dpi=d) for d in sorted({float(dpi), 50.0, 144.0})]
        self._renderers = [FigureCanvasAgg(f).get_renderer() for f in self._figures]
        self._cache: dict[tuple[str, float], tuple[float, float]] = {}

    def _extent(self, text: str, size: float) -> tuple[float, float]:
        key = (text, size)
        if key not in self._cache:
            w = h = 0.0
            for figure, renderer in zip(self._figures, self._renderers):
                artist = figure.text(0, 0, text, fontsize=size, parse_math=False, ha="center", va="center")
                box = artist.get_window_extent(renderer)
                artist.remove()
                scale = 72 / figure.dpi * self._SLACK
                w, h = max(w, float(box.width) * scale), max(h, float(box.height) * scale)
            self._cache[key] = (w, h)
        return self._cache[key]

    def width(self, text: str, size: float) -> float:
        """The width of ``text`` (its widest line)."""
        return self._extent(text, size)[0]

    def height(self, text: str, size: float) -> float:
        """The height of ``text`` (all its lines)."""
        return self._extent(text, size)[1]


@dataclass(frozen=True)
class _Geometry:
    """Everything placed at one font size, in points."""

    fontsize: float
    layout: TreeLayout
    node_h: float                 # the tallest node box
    labels: dict[int, str]        # the label on the edge into each node, long ones broken into lines
    label_h: dict[int, float]     # its box's height
    gap: float                    # vertical room between a box and a bar or a label
    ys: tuple[float, ...]         # the centre line of each depth
    width: float                  # content, margins included
    height: float

    def y(self, depth: int) -> float:
        return self.ys[depth]


def _edge_lines(text: str, most: float, measure: _Measure, size: float) -> str:
    """A long branch label (a set of values) broken after commas into lines at most ``most`` points wide."""
    if measure.width(text, size) <= most or ", " not in text:
        return text
    parts = text.split(", ")
    lines = [parts[0]]
    for part in parts[1:]:
        trial = lines[-1] + ", " + part
        if measure.width(trial, size) <= most:
            lines[-1] = trial
        else:
            lines[-1] += ","
            lines.append(part)
    return "\n".join(lines)


@dataclass(frozen=True)
class _Scene:
    """What is drawn, independent of the font size: node texts (``names``; "..." stubs have none), branch
    texts by child, and which subtrees collapse."""

    tree: DecisionTree
    names: dict[int, str]
    edge_text: dict[int, str]
    measure: _Measure
    max_depth: int | None
    keep: frozenset[int]

    @classmethod
    def of(cls, tree: DecisionTree, measure: _Measure, *, max_depth: int | None, keep: frozenset[int]) -> "_Scene":
        arrays, space = tree.arrays, tree.space
        shown = layout_tree(arrays, max_depth=max_depth, keep=keep)
        stubs = {b for _, b, _ in shown.collapsed}
        names = {n: (space.features[arrays.feature[n]].name if arrays.feature[n] >= 0
                     else f"class {tree.classes[arrays.label[n]]}") for n in shown.x if n not in stubs}
        edge_text = {b: _edge_label(space.features[arrays.feature[a]], mask)
                     for a, b, mask in shown.edges + shown.collapsed}
        return cls(tree, names, edge_text, measure, max_depth, keep)

    def box(self, n: int, fs: float) -> float:
        """The width of node ``n``'s box: an ellipse around the padded text of an internal node."""
        w = self.measure.width(self.names.get(n, "..."), fs) + 2 * _NODE_PAD * fs
        return w * math.sqrt(2) if n in self.names and self.tree.arrays.feature[n] >= 0 else w

    def geometry(self, fontsize: float) -> _Geometry:
        """Every position at ``fontsize`` (at least the smallest font matplotlib draws)."""
        fs = max(fontsize, _MIN_FONT)
        efs, measure = max(fs * _EDGE_FONT, _MIN_FONT), self.measure
        labels = {n: _edge_lines(t, _LABEL_WIDTH * efs, measure, efs) for n, t in self.edge_text.items()}
        label_w = {n: measure.width(t, efs) + 2 * _EDGE_PAD * efs for n, t in labels.items()}
        lay = layout_tree(self.tree.arrays, max_depth=self.max_depth, keep=self.keep, gap=_GAP * fs,
                          need=lambda n: max(self.box(n, fs), label_w.get(n, 0.0)))
        node_h = (measure.height("lp", fs) + 2 * _NODE_PAD * fs) * math.sqrt(2)
        label_h = {n: measure.height(t, efs) + 2 * _EDGE_PAD * efs for n, t in labels.items()}
        gap = 0.4 * fs
        tallest = [0.0] * (max(lay.depth[n] for n in lay.x) + 1)  # the tallest branch label into each depth
        for n, h in label_h.items():
            tallest[lay.depth[n]] = max(tallest[lay.depth[n]], h)
        ys = [0.0]
        for d in range(1, len(tallest)):
            ys.append(ys[-1] - (node_h + tallest[d] + 3 * gap))
        margin = _MARGIN * fs
        return _Geometry(fs, lay, node_h, labels, label_h, gap, tuple(ys), lay.width + 2 * margin,
                         -ys[-1] + node_h + 2 * margin)

    def shrunk(self, geo: _Geometry, width: float, height: float, *, tries: int = 8) -> _Geometry:
        """``geo``, or the geometry at the font size that fits ``width`` x ``height`` points (text does not
        scale quite linearly, hinting: shrink until it fits), stopping at the smallest font."""
        for _ in range(tries):
            scale = min(1.0, width / geo.width, height / geo.height)
            if scale >= 1 or geo.fontsize <= _MIN_FONT:
                break
            geo = self.geometry(geo.fontsize * scale * 0.97)
        return geo


def _wrap(text: str, width: float, measure: _Measure, size: float) -> list[str]:
    """Greedy word wrap of ``text`` to lines at most ``width`` points wide (a longer word keeps its line)."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        current = ""
        for word in paragraph.split(" "):
            trial = word if not current else current + " " + word
            if current and measure.width(trial, size) > width:
                lines.append(current)
                current = word
            else:
                current = trial
        lines.append(current)
    return lines


def plot_tree(tree: object, explanation: Explanation | None = None, instance: InstanceLike | None = None, *,
              max_depth: int | None = None, title: str | None = None, ax: Any = None, fontsize: float = 8) -> Any:
    """Draw a decision tree with matplotlib, optionally with an instance's path and an explanation.

    Parameters
    ----------
    tree : DecisionTree
    explanation : Explanation, optional
        Nodes testing its features are filled orange; its rule is the title. Its instance is drawn
        unless ``instance`` is given.
    instance : sequence or mapping, optional
        Its root-to-leaf path is drawn in bold blue; each branch's label stands on its own edge.
    max_depth : int, optional
        Collapse subtrees below this depth into ``...`` (never the highlighted path).
    title : str, optional
        Defaults to the explanation's rule; wrapped to the drawing's width.
    ax : matplotlib Axes, optional
        Drawn into a new figure sized to hold the whole tree otherwise. In a given Axes the font shrinks
        until the tree fits.
    fontsize : float, default 8
        The nodes' font size (edge labels are a little smaller).

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    InvalidTypeError
        When ``tree`` is not a :class:`~kcxai.DecisionTree` (a forest, boosted trees, rules): the message
        names the model and what to draw instead.

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
    tree = check_tree(tree, "plot_tree")
    check("fontsize", fontsize, FONTSIZE)
    try:
        # matplotlib (optional extra 'plot', heavy) loads only when something is drawn
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError("Drawing with matplotlib needs it installed: pip install 'kcxai[plot]'.") from None
    expl, on_path, path_edges = highlight(tree, explanation, instance)
    measure = _Measure(plt.rcParams["figure.dpi"] if ax is None else ax.figure.dpi)
    scene = _Scene.of(tree, measure, max_depth=max_depth, keep=frozenset(on_path))
    caption = title if title is not None else (explanation.rule() if explanation is not None else None)
    if ax is None:
        geo, lines, (fig_w, fig_h) = _own_figure(scene, scene.geometry(float(fontsize)), caption)
        if max(fig_w, fig_h) / 72 * plt.rcParams["figure.dpi"] >= 1 << 16:  # matplotlib's Agg limit
            raise InvalidInputError(
                f"The tree is too large to draw in one figure: {len(geo.layout.x)} nodes need "
                f"{fig_w / 72:.0f} x {fig_h / 72:.0f} inches in {geo.fontsize:g}-point text. Pass max_depth= "
                "to collapse the subtrees off the path.")
        fig = plt.figure(figsize=(fig_w / 72, fig_h / 72))
        ax = fig.add_axes(((fig_w - geo.width) / 2 / fig_w, 0, geo.width / fig_w, geo.height / fig_h))
        room = (geo.width, geo.height)
    else:
        bbox = ax.get_position()
        fig_w, fig_h = ax.figure.get_size_inches() * 72
        room = (bbox.width * fig_w, bbox.height * fig_h)
        geo = scene.shrunk(scene.geometry(float(fontsize)), *room)
        if geo.width > room[0] + 0.5 or geo.height > room[1] + 0.5:
            raise InvalidInputError(
                f"'ax' is too small for this tree: the Axes is {room[0] / 72:.2f} x {room[1] / 72:.2f} inches, and "
                f"the tree needs {geo.width / 72:.2f} x {geo.height / 72:.2f} even in {_MIN_FONT:g}-point text. "
                "Omit ax= (plot_tree makes a figure sized to the tree), give a larger Axes, or pass max_depth= "
                "to collapse the subtrees off the path.")
        lines = _wrap(caption, room[0], measure, geo.fontsize + 2) if caption else []
    _draw(ax, scene, geo, expl, on_path, path_edges, dashed_free=explanation is not None)
    if lines:
        ax.set_title("\n".join(lines), fontsize=geo.fontsize + 2, pad=_TITLE_PAD, parse_math=False)
    _frame(ax, geo, *room)
    return ax


def _frame(ax: Any, geo: _Geometry, width: float, height: float) -> None:
    """Data limits making one data unit one point on an Axes ``width`` x ``height`` points, the drawing
    centred across and at the top."""
    margin = _MARGIN * geo.fontsize
    left = -margin - (width - geo.width) / 2
    top = geo.node_h / 2 + margin
    ax.set_xlim(left, left + width)
    ax.set_ylim(top - height, top)
    ax.set_axis_off()


def _own_figure(scene: _Scene, geo: _Geometry, caption: str | None
                ) -> tuple[_Geometry, list[str], tuple[float, float]]:
    """The geometry, title lines and size (points) of a figure made for the drawing: wide enough for the
    tree and for the title up to 7 inches (wrapped past that), the font shrunk only past 60 inches."""
    most, measure = _MAX_INCHES * 72, scene.measure
    for _ in range(3):
        tsize = geo.fontsize + 2
        pad = 2 * _MARGIN * geo.fontsize
        title_room = min(measure.width(caption, tsize), 7 * 72) if caption else 0.0
        fig_w = max(geo.width, title_room + pad, 3 * 72)
        lines = _wrap(caption, fig_w - pad, measure, tsize) if caption else []
        fig_w = max([fig_w] + [measure.width(line, tsize) + pad for line in lines])
        title_h = measure.height("\n".join(lines), tsize) + _TITLE_PAD + pad / 2 if lines else 0.0
        fig_h = geo.height + title_h
        scale = min(1.0, most / fig_w, most / fig_h)
        if scale >= 1 or geo.fontsize <= _MIN_FONT:
            break
        geo = scene.geometry(geo.fontsize * scale * 0.98)
    return geo, lines, (fig_w, fig_h)


def _draw(ax: Any, scene: _Scene, geo: _Geometry, expl: frozenset[int], on_path: set[int],
          path_edges: set[tuple[int, int]], *, dashed_free: bool) -> None:
    """Edges (down, along a bar, down into the child, the branch label on that last drop), then nodes."""
    arrays, lay, fs, names = scene.tree.arrays, geo.layout, geo.fontsize, scene.names
    efs = fs * _EDGE_FONT
    for a, b, _ in lay.edges + lay.collapsed:
        xa, ya, xb, yb = lay.x[a], geo.y(lay.depth[a]), lay.x[b], geo.y(lay.depth[b])
        bar = ya - geo.node_h / 2 - geo.gap
        bold = (a, b) in path_edges
        dashed = bold and dashed_free and arrays.feature[a] not in expl
        ax.plot([xa, xa, xb, xb], [ya, bar, bar, yb], color=PATH_COLOUR if bold else "#888888",
                linewidth=3 if bold else 1, linestyle="--" if dashed else "-", zorder=2 if bold else 1,
                solid_joinstyle="miter", gid=f"edge {a} {b}")
        ax.text(xb, yb + geo.node_h / 2 + geo.gap + geo.label_h[b] / 2, geo.labels[b], fontsize=efs, ha="center",
                va="center", zorder=3, parse_math=False, gid=f"label {a} {b}",
                bbox={"boxstyle": f"round,pad={_EDGE_PAD}", "fc": "white", "ec": "none", "alpha": 0.9})
    for n, x in lay.x.items():
        y = geo.y(lay.depth[n])
        if n not in names:
            ax.text(x, y, "...", ha="center", va="center", fontsize=fs, zorder=4, gid=f"node {n}")
            continue
        f = arrays.feature[n]
        ax.text(x, y, names[n], ha="center", va="center", fontsize=fs, zorder=4, parse_math=False, gid=f"node {n}",
                bbox={"boxstyle": f"{'round' if f < 0 else 'ellipse'},pad={_NODE_PAD}",
                      "fc": EXPL_FILL if f >= 0 and f in expl else "white",
                      "ec": PATH_COLOUR if n in on_path else "#444444", "lw": 2.5 if n in on_path else 1})
