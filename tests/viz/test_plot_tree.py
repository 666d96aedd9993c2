"""The tree pictures say what the tree does: every bold path edge (matplotlib and DOT) carries the label of
the branch the instance takes, read back from the drawing; no two labels overlap and nothing is cut, measured
from the rendered text; models that are not one tree are refused with a KcxaiError."""

from __future__ import annotations

import math
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import kcxai  # noqa: E402
from tests._support import strategies as kst  # noqa: E402
from kcxai import viz  # noqa: E402
from kcxai._cuts import float32_cut  # noqa: E402
from kcxai.viz._plot_tree import layout_tree  # noqa: E402

NUM = r"-?(?:inf|\d+(?:\.\d+)?(?:e[+-]\d+)?)"
NAME_CHARS = st.sampled_from("abcdefghijklmnopqrstuvwxyz-_ $%&{}()<>=,")
float32s = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-2.0**100, max_value=2.0**100)


def f32(x):
    return np.float32(x)


def parse_dot(dot):
    """Nodes {id: attrs-text} and edges {(a, b): attrs-text} of tree_to_dot's output."""
    nodes = dict(re.findall(r"^  (\w+) \[(label=.*)\];$", dot, flags=re.M))
    edges = {(a, b): attrs for a, b, attrs in re.findall(r"^  (\w+) -> (\w+) \[(.*)\];$", dot, flags=re.M)}
    return nodes, edges


def dot_label(attrs):
    """The label of a DOT node or edge, unquoted."""
    text = re.match(r'label="((?:[^"\\]|\\.)*)"', attrs).group(1)
    return re.sub(r"\\(.)", r"\1", text)


# -- reading a drawn branch label back ---------------------------------------------------------------


def read_as(feature):
    """How the feature reads a number (a value, or a printed bound)."""
    return (lambda v: float(f32(float(v)))) if feature.float32 else float


def in_interval(feature, x, text):
    """A printed bound or interval, its numbers read as the feature reads a value; brackets say which ends belong."""
    read = read_as(feature)
    m = re.fullmatch(rf"(<=|<|>=|>) ({NUM})|([\(\[])({NUM}), ({NUM})([\)\]])|\(-inf, inf\)", text)
    assert m, f"not an interval: {text!r}"
    op, d, lb, lo, hi, rb = m.groups()
    v = read(x)
    if op is not None:
        return {"<=": v <= read(d), "<": v < read(d), ">": v > read(d), ">=": v >= read(d)}[op]
    if lo is not None:
        return (v >= read(lo) if lb == "[" else v > read(lo)) and (v <= read(hi) if rb == "]" else v < read(hi))
    return True


def holds(feature, value, text):
    """Whether a user value satisfies a drawn branch label (lines broken after commas joined again)."""
    text = text.replace(",\n", ", ")
    if feature.is_numeric:
        if text.startswith("in {"):
            items = re.findall(rf"(?:<=|<|>=|>) {NUM}|[\(\[]{NUM}, {NUM}[\)\]]", text[4:-1])
            return any(in_interval(feature, value, item) for item in items)
        return in_interval(feature, value, text[3:] if text.startswith(("in (", "in [")) else text)
    shown = str(value)
    for prefix, inside in (("= ", True), ("!= ", False)):
        if text.startswith(prefix) and text[len(prefix):] in {str(v) for v in feature.values}:
            return (text[len(prefix):] == shown) == inside
    m = re.fullmatch(r"(not )?in \{(.*)\}", text)
    assert m, f"not a categorical branch label: {text!r}"
    values = {str(v) for v in feature.values if re.search(rf"(^|, ){re.escape(str(v))}(, |$)", m.group(2))}
    return (shown in values) != bool(m.group(1))


# -- random trees with float32 features, long names and values near the cuts --------------------------


@st.composite
def drawable(draw):
    """A random tree over features with random names, float32 or float64 thresholds (scikit-learn-like
    midpoints), and an instance whose numbers lie on either side of a cut."""
    base = draw(kst.trees(max_depth=4))
    features, values = [], []
    for i, f in enumerate(base.space.features):
        name = draw(st.text(NAME_CHARS, max_size=18)).strip() + f"#{i}"
        if f.is_numeric:
            mids = st.tuples(float32s, float32s).map(lambda ab: (float(ab[0]) + float(ab[1])) / 2)
            float32 = draw(st.booleans())
            # distinct cuts as the feature reads them (float32 thresholds in one float32 gap are refused)
            key = (lambda t: float32_cut(t)) if float32 else (lambda t: t)
            ts = sorted(draw(st.lists(mids, min_size=f.size - 1, max_size=f.size - 1, unique_by=key)))
            feature = kcxai.Feature.numeric(name, ts, float32=float32)
            near = [t for t in ts] + [float(v) for t in ts for v in (f32(t), np.nextafter(f32(t), f32(np.inf)),
                                                                     np.nextafter(f32(t), f32(-np.inf)))]
            values.append(draw(st.one_of(st.sampled_from(near), float32s)) if near else 0.0)
        else:
            long = draw(st.booleans())
            feature = kcxai.Feature.categorical(
                name, [f"value {k} of {name}" if long else f"v{k}" for k in range(f.size)])
            values.append(draw(st.sampled_from(feature.values)))
        features.append(feature)
    space = kcxai.FeatureSpace(features)
    a = base.arrays
    tree = kcxai.DecisionTree._from_arrays(space, base.classes, a.feature, a.label, a.branches, root=a.root)
    return tree, values


def expected_path(tree, values):
    """(feature name, next node) along the instance's path, walked from the thresholds directly."""
    a, space = tree.arrays, tree.space
    out, nid = [], a.root
    while a.feature[nid] >= 0:
        f = space.features[a.feature[nid]]
        x = values[a.feature[nid]]
        if f.is_numeric:
            read = float(f32(x)) if f.float32 else float(x)
            k = sum(read > t for t in f.thresholds)
        else:
            k = f.values.index(x)
        nid = next(c for m, c in a.branches[nid] if m >> k & 1)
        out.append(f.name)
    return out, tree.classes[a.label[nid]]


# -- the drawing read back -----------------------------------------------------------------------------


def rendered(ax):
    fig = ax.figure
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def drawn_path(ax):
    """[(node text, label on the bold edge's last drop, child text)] along the bold edges, root first; the
    label is found by where it is drawn (its extent meets the drop), not by its id."""
    r = rendered(ax)
    texts = [t for t in ax.texts if t.get_text()]
    at = {tuple(np.round(t.get_position(), 6)): t for t in texts if (t.get_gid() or "").startswith("node")}
    labels = [(t, t.get_bbox_patch().get_window_extent(r)) for t in texts if (t.get_gid() or "").startswith("label")]
    steps = {}
    for line in ax.lines:
        if line.get_linewidth() != 3:
            continue
        xs, ys = line.get_data()
        (dx, top), (_, bottom) = ax.transData.transform([(xs[-2], ys[-2]), (xs[-1], ys[-1])])
        on = [t for t, box in labels if box.x0 <= dx <= box.x1 and box.y0 < top and box.y1 > bottom]
        assert len(on) == 1, [t.get_text() for t in on]
        start, end = tuple(np.round((xs[0], ys[0]), 6)), tuple(np.round((xs[-1], ys[-1]), 6))
        steps[start] = (at[start].get_text(), on[0].get_text(), end)
    root = max(at, key=lambda p: p[1])
    out, node = [], root
    while node in steps:
        name, lab, node = steps[node]
        out.append((name, lab))
    assert len(out) == len(steps)  # one chain from the root
    return out, at[node].get_text()


def overlaps(boxes):
    """Pairs of boxes that overlap by more than half a pixel."""
    bad = []
    for i, (s, a) in enumerate(boxes):
        for t, b in boxes[i + 1:]:
            if min(a.x1, b.x1) - max(a.x0, b.x0) > 0.5 and min(a.y1, b.y1) - max(a.y0, b.y0) > 0.5:
                bad.append((s, t))
    return bad


def text_boxes(ax, *, title=True):
    r = rendered(ax)
    out = []
    for t in ax.texts + ([ax.title] if title else []):
        if t.get_text():
            patch = t.get_bbox_patch()
            out.append((t.get_text(), (patch or t).get_window_extent(r)))
    return out


# -- tests ---------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@settings(max_examples=30, deadline=None)
@given(drawn=drawable(), max_depth=st.one_of(st.none(), st.integers(0, 3)))
def test_every_path_edge_carries_the_branch_taken(drawn, max_depth):
    plt.close("all")  # the previous example's
    tree, values = drawn
    names, leaf = expected_path(tree, values)
    assert leaf == tree.predict(values)
    by_name = {f.name: f for f in tree.space.features}
    ax = viz.plot_tree(tree, instance=values, max_depth=max_depth)
    steps, end = drawn_path(ax)
    assert [name for name, _ in steps] == names and end == f"class {leaf}"
    for (name, lab), x in zip(steps, [values[tree.space.feature_index(n)] for n in names]):
        assert holds(by_name[name], x, lab), (name, x, lab)
    nodes, edges = parse_dot(viz.tree_to_dot(tree, instance=values, max_depth=max_depth))
    bold = {a: (b, dot_label(attrs)) for (a, b), attrs in edges.items() if "penwidth=3" in attrs}
    node, dot_steps = f"n{tree.arrays.root}", []
    while node in bold:
        nxt, lab = bold[node]
        dot_steps.append((dot_label(nodes[node]), lab))
        node = nxt
    assert [name for name, _ in dot_steps] == names and dot_label(nodes[node]) == f"class {leaf}"
    for name, lab in dot_steps:
        assert holds(by_name[name], values[tree.space.feature_index(name)], lab), (name, lab)


@settings(max_examples=20, deadline=None)
@given(drawn=drawable(), max_depth=st.one_of(st.none(), st.integers(0, 3)), dpi=st.sampled_from([50, 100, 150]))
def test_no_label_overlaps_and_nothing_is_cut(drawn, max_depth, dpi):
    plt.close("all")  # the previous example's
    tree, values = drawn
    e = kcxai.min_idrs(tree, values, 0)
    ax = viz.plot_tree(tree, e, max_depth=max_depth)
    fig = ax.figure
    fig.set_dpi(dpi)
    boxes = text_boxes(ax)
    assert not overlaps(boxes)
    page = fig.bbox
    for text, box in boxes:
        assert page.x0 - 0.5 <= box.x0 and box.x1 <= page.x1 + 0.5, text
        assert page.y0 - 0.5 <= box.y0 and box.y1 <= page.y1 + 0.5, text


@settings(max_examples=10, deadline=None)
@given(drawn=drawable(), size=st.sampled_from([(3, 2), (6, 4), (12, 3)]))
def test_in_a_given_axes_the_tree_fits_without_overlaps(drawn, size):
    """The font shrinks until the tree fits the Axes; a tree that does not fit even in 1-point text is
    refused (an error naming 'ax'), never drawn over itself or outside the Axes."""
    plt.close("all")  # the previous example's
    tree, values = drawn
    fig, ax = plt.subplots(figsize=size)
    try:
        assert viz.plot_tree(tree, instance=values, ax=ax) is ax
    except kcxai.InvalidInputError as e:
        assert "'ax' is too small for this tree" in str(e) and "max_depth=" in str(e)
        assert not ax.texts  # nothing half drawn
        return
    boxes = text_boxes(ax, title=False)
    assert not overlaps(boxes)
    frame = ax.get_window_extent(rendered(ax))
    for text, box in boxes:
        assert frame.x0 - 0.5 <= box.x0 and box.x1 <= frame.x1 + 0.5, text
        assert frame.y0 - 0.5 <= box.y0 and box.y1 <= frame.y1 + 0.5, text


def test_a_tree_too_wide_for_the_axes_is_refused():
    tree = kcxai.datasets.reference_tree("IAI12")
    fig, ax = plt.subplots(figsize=(1, 1))
    with pytest.raises(kcxai.InvalidInputError, match=r"'ax' is too small for this tree: the Axes is .* inches"):
        viz.plot_tree(tree, ax=ax)
    assert not ax.texts  # nothing half drawn
    ax = viz.plot_tree(tree, instance=kcxai.datasets.reference_instances("IAI12")[0].tolist(), max_depth=1)
    assert not overlaps(text_boxes(ax))


def test_readme_tree_picture_is_whole():
    """The README's picture: an adult pipeline tree, cut at depth 3, its rule as the title."""
    adult = kcxai.datasets.load_dataset("adult")
    from sklearn.tree import DecisionTreeClassifier

    clf = DecisionTreeClassifier(max_depth=6, random_state=0).fit(adult.X[:2000], adult.y[:2000])
    tree = kcxai.DecisionTree.from_sklearn(clf, feature_names=adult.feature_names)
    e = kcxai.min_idrs(tree, adult.X[0], 0)
    ax = viz.plot_tree(tree, e, max_depth=3)
    assert ax.get_title().replace("\n", " ") == e.rule()
    boxes = text_boxes(ax)
    assert not overlaps(boxes)
    page = ax.figure.bbox
    assert all(page.x0 <= b.x0 and b.x1 <= page.x1 and page.y0 <= b.y0 and b.y1 <= page.y1 for _, b in boxes)
    steps, end = drawn_path(ax)
    assert end == f"class {tree.predict(adult.X[0])}"
    for name, lab in steps:
        f = tree.space.features[tree.space.feature_index(name)]
        assert holds(f, adult.X[0][tree.space.feature_index(name)], lab), (name, lab)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_layout_bands_nest_and_never_overlap(data):
    tree = data.draw(kst.trees())
    depth = data.draw(st.one_of(st.none(), st.integers(0, 3)))
    point = data.draw(kst.points(tree.space))
    keep = frozenset(viz.highlight(tree, instance=kst.instance_of(tree.space, point))[1])  # the path's nodes
    need = data.draw(st.dictionaries(st.integers(0, tree.n_nodes), st.floats(0.1, 9), max_size=tree.n_nodes))
    lay = layout_tree(tree.arrays, max_depth=depth, keep=keep, need=lambda n: need.get(n, 1.0), gap=0.25)
    shown = {b for _, b, _ in lay.edges + lay.collapsed} | {tree.arrays.root}
    assert keep <= shown and set(lay.x) == shown == set(lay.band)
    for n in shown:
        left, right = lay.band[n]
        assert right - left >= need.get(n, 1.0) - 1e-9
        assert left + need.get(n, 1.0) / 2 - 1e-9 <= lay.x[n] <= right - need.get(n, 1.0) / 2 + 1e-9
    for a, b, _ in lay.edges + lay.collapsed:
        assert lay.depth[b] == lay.depth[a] + 1
        assert lay.band[a][0] - 1e-9 <= lay.band[b][0] <= lay.band[b][1] <= lay.band[a][1] + 1e-9
    for d in set(lay.depth[n] for n in shown):
        row = sorted(lay.band[n] for n in shown if lay.depth[n] == d)
        assert all(p[1] <= q[0] + 1e-9 for p, q in zip(row, row[1:]))  # bands of one depth are disjoint
    assert not any(b in keep for _, b, _ in lay.collapsed)


@pytest.mark.parametrize("kind", ["forest", "boosted", "rules", "sklearn", "explainer"])
def test_models_it_does_not_draw_are_refused(kind):
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(60, 3)).astype(float)
    y = (X[:, 0] + X[:, 1] > 2).astype(int)
    if kind == "forest":
        model, want = kcxai.from_sklearn(RandomForestClassifier(3, max_depth=2, random_state=0).fit(X, y)), \
            r"Got a RandomForest \(random_forest\).*model\.trees\[i\]"
    elif kind == "boosted":
        model, want = kcxai.from_sklearn(GradientBoostingClassifier(n_estimators=3, max_depth=2).fit(X, y)), \
            r"Got a BoostedTrees \(boosted_trees\).*scores"
    elif kind == "rules":
        space = kcxai.FeatureSpace([kcxai.Feature.categorical("a", [0, 1])])
        model, want = kcxai.DecisionList.from_text("IF a = 1 THEN yes\nELSE no", space), \
            r"Got a DecisionList \(decision_list\).*to_text"
    elif kind == "sklearn":
        model, want = DecisionTreeClassifier(max_depth=2).fit(X, y), r"from_sklearn"
    else:
        model, want = kcxai.Explainer(kcxai.datasets.running_example_tree()), r"explainer\.model_"
    for draw in (viz.plot_tree, viz.tree_to_dot, viz.draw_tree):
        with pytest.raises(kcxai.InvalidTypeError, match=r"'tree' must be a DecisionTree: .*" + want):
            draw(model)


def test_fontsize_is_checked():
    with pytest.raises(kcxai.InvalidInputError, match="'fontsize'"):
        viz.plot_tree(kcxai.datasets.running_example_tree(), fontsize=0)
    assert math.isfinite(viz.plot_tree(kcxai.datasets.running_example_tree(), fontsize=3).figure.dpi)
