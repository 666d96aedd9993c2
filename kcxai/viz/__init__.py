"""Drawing decision trees with an explanation, and plots of many explanations.

:func:`tree_to_dot` returns the DOT source of a tree as a ``str`` (no
dependency); :func:`render` turns DOT source into SVG/PNG/PDF with the
Graphviz ``dot`` program when it is installed. Graphviz is never required:
:func:`plot_tree` draws the same picture with matplotlib, and a
:class:`TreeDrawing` shows itself (and saves PNG/SVG/PDF) with matplotlib
when Graphviz is missing. :func:`plot_feature_frequency` and
:func:`plot_size_and_bound` plot an :class:`~kcxai.ExplanationSet`.

In a drawing, the instance's root-to-leaf path is drawn in bold blue, and the
internal nodes that test a feature of the explanation are filled orange;
tests on the path of features the explanation frees are dashed.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from typing import TYPE_CHECKING, Any

from kcxai._errors import InvalidInputError, InvalidTypeError, MissingDependencyError
from kcxai._params import Options, check
from kcxai._types import InstanceLike
from kcxai.models.tree import DecisionTree
from kcxai.viz import _plot_set, _plot_tree
from kcxai.viz._tree_marks import _check_max_depth, _edge_label, check_tree, highlight

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.explain.explanation import Explanation

__all__ = ["tree_to_dot", "render", "graphviz_available", "TreeDrawing", "draw_tree", "plot_tree",
           "plot_feature_frequency", "plot_size_and_bound", "highlight"]

_PATH_COLOUR = "#1f5fbf"
_EXPL_FILL = "#ffcc80"
_FORMATS = ("svg", "png", "pdf")


def _quote(text: str) -> str:
    """A DOT double-quoted string."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def tree_to_dot(tree: object, explanation: Explanation | None = None, instance: InstanceLike | None = None, *,
                max_depth: int | None = None, title: str | None = None) -> str:
    """Graphviz DOT source of a decision tree, optionally with an explanation.

    Parameters
    ----------
    tree : DecisionTree
        The tree to draw.
    explanation : Explanation, optional
        Internal nodes testing one of its features are filled orange, and its
        rule is the graph's caption. Its instance is highlighted unless
        ``instance`` is given.
    instance : sequence or mapping, optional
        An instance (user values): its root-to-leaf path is drawn in bold.
    max_depth : int, optional
        Collapse subtrees below this depth into one ``...`` node, except along
        the highlighted path (useful for large trees).
    title : str, optional
        A caption; defaults to the explanation's rule.

    Returns
    -------
    str
        DOT source; pass it to :func:`render` or any Graphviz tool.

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.viz import tree_to_dot
    >>> tree = kcxai.datasets.running_example_tree()
    >>> v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
    >>> e = kcxai.min_idrs(tree, v, 0.03, start="path")
    >>> dot = tree_to_dot(tree, e)
    >>> dot.splitlines()[0]
    'digraph tree {'
    >>> sum('->' in line and 'penwidth=3' in line for line in dot.splitlines())  # v's path
    5
    >>> print([line for line in dot.splitlines() if 'fillcolor' in line][0])
      n0 [label="x1", shape=ellipse, style=filled, fillcolor="#ffcc80", color="#1f5fbf", penwidth=3];
    """
    _check_max_depth(max_depth)
    tree = check_tree(tree, "tree_to_dot")
    expl_features, on_path, path_edges = highlight(tree, explanation, instance)
    space = tree.space
    arrays = tree.arrays
    feat, label, branches, root = arrays.feature, arrays.label, arrays.branches, arrays.root

    lines = ["digraph tree {",
             '  graph [fontname="Helvetica", fontsize=12];',
             '  node [fontname="Helvetica", fontsize=11];',
             '  edge [fontname="Helvetica", fontsize=10];']
    caption = title if title is not None else (explanation.rule() if explanation is not None else None)
    if caption:
        lines.append(f'  labelloc="t"; label={_quote(caption)};')

    stack: list[tuple[int, int]] = [(root, 0)]
    while stack:
        nid, depth = stack.pop()
        f = feat[nid]
        if f < 0:
            attrs = [f"label={_quote(f'class {tree.classes[label[nid]]}')}", "shape=box", "style=rounded"]
        else:
            attrs = [f"label={_quote(space.features[f].name)}", "shape=ellipse"]
            if f in expl_features:
                attrs += ["style=filled", f'fillcolor="{_EXPL_FILL}"']
        if nid in on_path:
            attrs += [f'color="{_PATH_COLOUR}"', "penwidth=3"]
        lines.append(f"  n{nid} [{', '.join(attrs)}];")
        if f < 0:
            continue
        collapse = max_depth is not None and depth >= max_depth
        for mask, child in branches[nid]:
            eattrs = [f"label={_quote(_edge_label(space.features[f], mask))}"]
            if (nid, child) in path_edges:
                eattrs += [f'color="{_PATH_COLOUR}"', "penwidth=3"]
                if f not in expl_features and explanation is not None:
                    eattrs.append("style=dashed")
            if collapse and child not in on_path:
                lines.append(f'  c{child} [label="...", shape=plaintext];')
                lines.append(f"  n{nid} -> c{child} [{', '.join(eattrs)}];")
                continue
            lines.append(f"  n{nid} -> n{child} [{', '.join(eattrs)}];")
            stack.append((child, depth + 1))
    lines.append("}")
    return "\n".join(lines) + "\n"


def graphviz_available() -> bool:
    """Whether the Graphviz ``dot`` program is on the ``PATH``."""
    return shutil.which("dot") is not None


def render(source: str, path: str | os.PathLike[str] | None = None, *, format: str = "svg") -> bytes:
    """Render DOT source with the Graphviz ``dot`` program.

    Parameters
    ----------
    source : str
        DOT source, e.g. from :func:`tree_to_dot`.
    path : str or path-like, optional
        Where to write the drawing. The bytes are returned either way.
    format : {"svg", "png", "pdf"}

    Returns
    -------
    bytes
        The drawing.

    Raises
    ------
    MissingDependencyError
        When ``dot`` is not installed (``apt-get install graphviz``,
        ``brew install graphviz`` or ``conda install graphviz``).

    Examples
    --------
    >>> from kcxai.viz import graphviz_available, render
    >>> svg = render("digraph { a -> b }") if graphviz_available() else b"<svg (Graphviz not installed)"
    >>> b"<svg" in svg
    True
    """
    if not isinstance(source, str):
        raise InvalidTypeError(f"'source' must be DOT source text (str). Got {type(source).__name__} instead.")
    check("format", format, Options(_FORMATS))
    dot = shutil.which("dot")
    if dot is None:
        raise MissingDependencyError(
            "Rendering needs the Graphviz 'dot' program, which is not on the PATH. Install Graphviz "
            "(apt-get install graphviz, brew install graphviz or conda install graphviz), or pass the "
            "DOT text from tree_to_dot() to any Graphviz viewer.")
    done = subprocess.run([dot, f"-T{format}"], input=source.encode("utf-8"), capture_output=True, check=False)
    if done.returncode != 0:
        msg = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InvalidInputError(f"Graphviz could not render the source: {msg[0] if msg else 'unknown error'}")
    if path is not None:
        with open(path, "wb") as fh:
            fh.write(done.stdout)
    return done.stdout


class TreeDrawing:
    """DOT source that shows itself in notebooks: with Graphviz when installed, else with matplotlib.

    ``str(drawing)`` and :attr:`source` are the DOT text. Without Graphviz, a drawing made by
    :func:`draw_tree` shows (and :meth:`save` writes) the matplotlib picture of :func:`plot_tree`;
    only without both does a notebook show the DOT text.
    """

    __slots__ = ("source", "_args")

    def __init__(self, source: str, *, tree: DecisionTree | None = None, explanation: Explanation | None = None,
                 instance: InstanceLike | None = None, max_depth: int | None = None,
                 title: str | None = None) -> None:
        self.source = source
        self._args = None if tree is None else (tree, explanation, instance, max_depth, title)

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return f"TreeDrawing({self.source.count(' -> ')} edges; .source is the DOT text)"

    def _matplotlib(self, format: str) -> bytes | None:
        if self._args is None:
            return None
        try:
            # matplotlib (optional extra 'plot', heavy) loads only when something is drawn
            import matplotlib  # noqa: F401
        except ImportError:
            return None
        # matplotlib (optional extra 'plot', heavy) loads only when something is drawn
        import matplotlib.pyplot as plt

        tree, explanation, instance, max_depth, title = self._args
        ax = _plot_tree.plot_tree(tree, explanation, instance, max_depth=max_depth, title=title)
        buf = io.BytesIO()
        ax.figure.savefig(buf, format=format, bbox_inches="tight")
        plt.close(ax.figure)
        return buf.getvalue()

    def _repr_svg_(self) -> str | None:
        if graphviz_available():
            return render(self.source, format="svg").decode("utf-8")
        svg = self._matplotlib("svg")
        return None if svg is None else svg.decode("utf-8")

    def _repr_markdown_(self) -> str | None:
        if graphviz_available() or self._args is not None:
            return None
        return "Graphviz is not installed; DOT source:\n\n```dot\n" + self.source + "```\n"

    def save(self, path: str | os.PathLike[str], *, format: str | None = None) -> None:
        """Write the DOT text (``.dot``/``.gv``) or a drawing (``.svg``/``.png``/``.pdf``): with Graphviz
        when installed, else with matplotlib."""
        ext = os.fspath(path).rsplit(".", 1)[-1].lower()
        fmt = format or ext
        if fmt in ("dot", "gv"):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(self.source)
            return
        if graphviz_available() or fmt not in _FORMATS:
            render(self.source, path, format=fmt)
            return
        data = self._matplotlib(fmt)
        if data is None:
            render(self.source, path, format=fmt)  # raises: neither Graphviz nor matplotlib
            return
        with open(path, "wb") as fh:
            fh.write(data)


def draw_tree(tree: object, explanation: Explanation | None = None, instance: InstanceLike | None = None, *,
              max_depth: int | None = None, title: str | None = None) -> TreeDrawing:
    """:func:`tree_to_dot` wrapped in a :class:`TreeDrawing` (displays in notebooks, with or without
    Graphviz).

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.viz import draw_tree
    >>> drawing = draw_tree(kcxai.datasets.running_example_tree(), instance=(1, 1, 1, 1, 0, 0, 0, 0, 1))
    >>> drawing
    TreeDrawing(34 edges; .source is the DOT text)
    """
    tree = check_tree(tree, "draw_tree")
    return TreeDrawing(tree_to_dot(tree, explanation, instance, max_depth=max_depth, title=title), tree=tree,
                       explanation=explanation, instance=instance, max_depth=max_depth, title=title)


def plot_tree(tree: object, explanation: Explanation | None = None, instance: InstanceLike | None = None, *,
              max_depth: int | None = None, title: str | None = None, ax: Any = None,
              fontsize: float = 8) -> Any:
    """Draw a tree with matplotlib (see :func:`kcxai.viz._plot_tree.plot_tree`); returns the Axes.

    Every node gets room for its label, each branch's label stands on its own edge, and a figure made here
    holds the whole tree and its wrapped title. A model that is not a decision tree (a forest, boosted
    trees, rules) raises :class:`~kcxai.InvalidTypeError` saying what to draw instead.
    """
    tree = check_tree(tree, "plot_tree")
    _check_max_depth(max_depth)
    return _plot_tree.plot_tree(tree, explanation, instance, max_depth=max_depth, title=title, ax=ax,
                               fontsize=fontsize)


def plot_feature_frequency(result: Any, *, top: int = 20, ax: Any = None) -> Any:
    """How often each feature appears in the explanations of an ExplanationSet (see
    :mod:`kcxai.viz._plot_set`); returns the Axes."""
    return _plot_set.plot_feature_frequency(result, top=top, ax=ax)


def plot_size_and_bound(result: Any, *, axes: Any = None) -> Any:
    """Explanation sizes, and precision (or error) against the bound, of an ExplanationSet (see
    :mod:`kcxai.viz._plot_set`); returns the two Axes."""
    return _plot_set.plot_size_and_bound(result, axes=axes)
