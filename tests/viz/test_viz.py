"""Tree drawings: the DOT text says what it should; rendering only where Graphviz exists."""

import re

import pytest
from hypothesis import given, settings

import kcxai
from tests._support import strategies as kst
from kcxai import viz

V = (1, 1, 1, 1, 0, 0, 0, 0, 1)
needs_dot = pytest.mark.skipif(not viz.graphviz_available(), reason="Graphviz 'dot' is not installed")


def parse(dot):
    """Nodes {id: attrs-text} and edges {(a, b): attrs-text} of tree_to_dot's output."""
    nodes = dict(re.findall(r"^  (\w+) \[(label=.*)\];$", dot, flags=re.M))
    edges = {(a, b): attrs for a, b, attrs in re.findall(r"^  (\w+) -> (\w+) \[(.*)\];$", dot, flags=re.M)}
    return nodes, edges


def label(attrs):
    return re.match(r'label="((?:[^"\\]|\\.)*)"', attrs).group(1)


def path_nodes(nodes, edges):
    """Nodes reached from the root along bold edges."""
    bold = {a: b for (a, b), attrs in edges.items() if "penwidth=3" in attrs}
    assert len(bold) == len(set(bold.values()))  # one bold edge out of each node
    node, out = "n0", ["n0"]
    while node in bold:
        node = bold[node]
        out.append(node)
    return out


def test_running_example_drawing():
    tree = kcxai.datasets.running_example_tree()
    e = kcxai.min_idrs(tree, V, 0.03, start="path")
    dot = viz.tree_to_dot(tree, e)
    assert dot.startswith("digraph tree {") and dot.rstrip().endswith("}")
    nodes, edges = parse(dot)
    assert len(nodes) == tree.n_nodes and len(edges) == tree.n_nodes - 1
    # v's path is 1-3-5-9-15 then leaf P13: x1, x2, x3, x4, x9, class 1
    path = path_nodes(nodes, edges)
    assert [label(nodes[n]) for n in path] == ["x1", "x2", "x3", "x4", "x9", "class 1"]
    assert all("penwidth=3" in nodes[n] for n in path)
    assert sum("penwidth=3" in a for a in nodes.values()) == 6
    # explanation features are filled wherever they are tested; nothing else is
    filled = {label(a) for a in nodes.values() if "fillcolor" in a}
    assert filled == {"x1", "x9"}
    # path tests of freed features (x2, x3, x4) are dashed, of kept ones (x1, x9) not
    dashed = [label(nodes[a]) for (a, b), attrs in edges.items() if "dashed" in attrs]
    assert sorted(dashed) == ["x2", "x3", "x4"]
    assert 'label="IF x1 = 1 AND x9 = 1 THEN class = 1"' in dot


def test_other_axp_fills_off_path_nodes():
    tree = kcxai.datasets.running_example_tree()
    e = kcxai.min_idrs(tree, V, 0)  # {x1, x2, x3, x8, x9}: x8 is not on v's path
    nodes, _ = parse(viz.tree_to_dot(tree, e))
    filled = [label(a) for a in nodes.values() if "fillcolor" in a]
    assert sorted(set(filled)) == ["x1", "x2", "x3", "x8", "x9"]
    assert filled.count("x8") == 1 and filled.count("x3") == 2


def test_plain_tree_and_instance_only():
    tree = kcxai.datasets.running_example_tree()
    dot = viz.tree_to_dot(tree)
    assert "penwidth" not in dot and "fillcolor" not in dot and "label=\"IF" not in dot
    nodes, edges = parse(viz.tree_to_dot(tree, instance=(0,) * 9))
    assert [label(nodes[n]) for n in path_nodes(nodes, edges)] == ["x1", "class 0"]
    assert "dashed" not in "".join(edges.values())


def test_numeric_edge_labels_and_escaping():
    space = kcxai.FeatureSpace([kcxai.Feature.numeric("age", [30.5]),
                                kcxai.Feature.categorical('say "hi"', ["a\\b", "c"])])
    tree = kcxai.DecisionTree(space, ["no", "yes"], kcxai.Split.threshold(
        "age", 30.5, kcxai.Leaf("no"), kcxai.Split('say "hi"', {"a\\b": kcxai.Leaf("yes"), "c": kcxai.Leaf("no")})))
    dot = viz.tree_to_dot(tree, instance=[40, "a\\b"], title="t")
    nodes, edges = parse(dot)
    assert sorted(label(a) for a in edges.values()) == ["<= 30.5", "= a\\\\b", "= c", "> 30.5"]
    assert 'label="say \\"hi\\""' in dot
    assert [label(nodes[n]) for n in path_nodes(nodes, edges)] == ["age", 'say \\"hi\\"', "class yes"]


def test_max_depth_keeps_the_path():
    tree = kcxai.datasets.reference_tree("IAI12")
    inst = kcxai.datasets.reference_instances("IAI12")[0].tolist()
    full = viz.tree_to_dot(tree, instance=inst)
    small = viz.tree_to_dot(tree, instance=inst, max_depth=2)
    n_full, _ = parse(full)
    n_small, e_small = parse(small)
    assert len(n_full) == tree.n_nodes and len(n_small) < 40
    names, leaf = walk(tree, tree.space.decode(tree.space.encode(inst)))
    assert len(names) > 2  # the path goes below the cut
    path = path_nodes(n_small, e_small)
    assert [label(n_small[n]) for n in path] == [*names, f"class {leaf}"]
    assert path == path_nodes(n_full, parse(full)[1])
    assert '[label="...", shape=plaintext]' in small


def walk(tree, instance):
    """Feature names tested and the class reached, from the public nested form of the tree."""
    node, names = tree.to_root(), []
    while isinstance(node, kcxai.Split):
        names.append(node.feature)
        f = tree.space.feature_index(node.feature)
        node = next(child for values, child in node.branches if instance[f] in values)
    return names, node.label


@settings(max_examples=25)
@given(kst.tree_and_instance())
def test_random_trees_path_is_the_instance_path(tree_instance):
    tree, instance = tree_instance
    nodes, edges = parse(viz.tree_to_dot(tree, instance=instance))
    assert len(nodes) == tree.n_nodes and len(edges) == tree.n_nodes - 1
    path = path_nodes(nodes, edges)
    names, leaf = walk(tree, tree.space.decode(tree.space.encode(instance)))
    assert [label(nodes[n]) for n in path] == [*names, f"class {leaf}"]
    assert leaf == tree.predict(instance)


def test_bad_arguments():
    tree = kcxai.datasets.running_example_tree()
    with pytest.raises(kcxai.InvalidTypeError, match="'tree' must be a DecisionTree"):
        viz.tree_to_dot("tree")
    with pytest.raises(kcxai.InvalidTypeError, match="'explanation' must be an Explanation"):
        viz.tree_to_dot(tree, explanation={"features": [0]})
    with pytest.raises(kcxai.InvalidInputError, match="'max_depth'"):
        viz.tree_to_dot(tree, max_depth=-1)
    with pytest.raises(kcxai.InvalidInputError, match="'instance'"):
        viz.tree_to_dot(tree, instance=(1, 2))
    other = kcxai.datasets.reference_tree("IAI12")
    inst = kcxai.datasets.reference_instances("IAI12")[0].tolist()
    e = kcxai.min_idrs(other, inst, 0, start="path")
    with pytest.raises(kcxai.InvalidInputError, match="not features of this tree"):
        viz.tree_to_dot(tree, e)
    with pytest.raises(kcxai.InvalidInputError, match="'format'"):
        viz.render("digraph {}", format="jpeg-2000")


def test_render_without_dot_says_how_to_install(monkeypatch):
    monkeypatch.setattr(viz.shutil, "which", lambda name: None)
    assert not viz.graphviz_available()
    with pytest.raises(kcxai.MissingDependencyError, match="apt-get install graphviz"):
        viz.render("digraph { a -> b }")
    text_only = viz.TreeDrawing("digraph { a -> b }")
    assert text_only._repr_svg_() is None and "```dot" in text_only._repr_markdown_()


def test_drawing_without_dot_uses_matplotlib(monkeypatch, tmp_path):
    """No Graphviz: draw_tree's drawing shows and saves the matplotlib picture."""
    monkeypatch.setattr(viz.shutil, "which", lambda name: None)
    tree = kcxai.datasets.running_example_tree()
    e = kcxai.min_idrs(tree, V, 0.03, start="path")
    d = viz.draw_tree(tree, e)
    svg = d._repr_svg_()
    assert "<svg" in svg and d._repr_markdown_() is None
    assert "IF x1 = 1 AND x9 = 1 THEN class = 1" in svg
    d.save(tmp_path / "t.png")
    assert (tmp_path / "t.png").read_bytes().startswith(b"\x89PNG")


def test_drawing_saves_dot_text(tmp_path):
    d = viz.draw_tree(kcxai.datasets.running_example_tree(), instance=V)
    d.save(tmp_path / "t.dot")
    assert (tmp_path / "t.dot").read_text() == d.source == str(d)


@needs_dot
def test_render_svg_and_png(tmp_path):
    tree = kcxai.datasets.running_example_tree()
    e = kcxai.min_idrs(tree, V, 0.03, start="path")
    svg = viz.render(viz.tree_to_dot(tree, e), tmp_path / "t.svg")
    assert svg.lstrip().startswith(b"<?xml") and b"<svg" in svg and (tmp_path / "t.svg").read_bytes() == svg
    assert b"x9" in svg
    png = viz.render(viz.tree_to_dot(tree, e), format="png")
    assert png.startswith(b"\x89PNG")
    d = viz.draw_tree(tree, e)
    assert "<svg" in d._repr_svg_() and d._repr_markdown_() is None
    d.save(tmp_path / "t.pdf")
    assert (tmp_path / "t.pdf").read_bytes().startswith(b"%PDF")


@needs_dot
def test_render_reports_graphviz_errors():
    with pytest.raises(kcxai.InvalidInputError, match="Graphviz could not render"):
        viz.render("digraph { a -> }")


def test_explanation_html():
    space = kcxai.FeatureSpace([kcxai.Feature.numeric("age", [30]), kcxai.Feature.categorical("<b>", ["a&b", "c"])])
    tree = kcxai.DecisionTree(space, ["no", "yes"], kcxai.Split.threshold(
        "age", 30, kcxai.Leaf("no"), kcxai.Split("<b>", {"a&b": kcxai.Leaf("yes"), "c": kcxai.Leaf("no")})))
    e = kcxai.min_idrs(tree, [40, "a&b"], 0, inflate=False)
    html = e._repr_html_()
    assert "<code>age &gt; 30</code>" in html and "<code>&lt;b&gt; = a&amp;b</code>" in html
    assert "<b>yes</b>" in html and "(2 features)" in html
    assert f"<td>{e.error}</td>" in html and "<th>delta (error bound)</th><td>0</td>" in html
    assert "<th>precision</th><td>1</td>" in html and "via dt" in html
    assert "<b>" not in html.replace("<b>Relevant set</b>", "").replace("<b>yes</b>", "")
    e_running = kcxai.min_idrs(kcxai.datasets.running_example_tree(), V, 0.03, start="path")
    html = e_running._repr_html_()
    assert "<td>7/512 (~0.01367)</td>" in html and "<td>121/128 (~0.9453)</td>" in html and "3/100" in html
