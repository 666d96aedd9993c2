"""Reader for the plain-text ``.dt`` / ``.map`` tree format of the authors' tools.

Tree file (``#`` starts a comment line)::

    <total number of nodes>
    <root id>
    I <internal node ids>
    T <terminal node ids>
    <leaf id> T <class>                  one line per terminal
    <node id> f<k> <value> <child id>     one line per (node, value) edge

Map file: a line ``Categorical``, the number of features, then lines
``f<k> <tree value> =<original value>`` (entries written ``!=`` are ignored).
The domain of feature ``k`` is its tree values listed in the map, sorted.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from kcxai._errors import ModelFormatError
from kcxai._files import read_text
from kcxai._untrusted import shorten
from kcxai.models._tree_data import TreeArrays, TreeParts
from kcxai.space import Feature, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike

__all__ = ["read_dt", "read_map"]


#: Longest integer token read (node ids and values); longer ones are refused before they are converted.
_MAX_INT_CHARS = 18
_INT = re.compile(r"[+-]?[0-9]{1,%d}" % _MAX_INT_CHARS)
_FEATURE = re.compile(r"f(0|[1-9][0-9]{0,%d})" % (_MAX_INT_CHARS - 1))


def _lines(path: str | os.PathLike[str]) -> list[tuple[int, list[str]]]:
    text = read_text(path, what="tree file")
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s and not s.startswith("#"):
            out.append((no, s.split()))
    return out


def _int(tok: str, path: Any, no: int, what: str) -> int:
    if _INT.fullmatch(tok) is None:
        raise ModelFormatError(
            f"{os.fspath(path)}:{no}: {what} must be an integer of at most {_MAX_INT_CHARS} digits. "
            f"Got {shorten(repr(tok), 60)}.")
    return int(tok)


def _feature_number(tok: str, path: Any, no: int) -> int:
    if _FEATURE.fullmatch(tok) is None:
        raise ModelFormatError(f"{os.fspath(path)}:{no}: expected a feature like 'f3'. Got {shorten(repr(tok), 60)}.")
    return int(tok[1:])


def _class_key(c: str) -> tuple[int, int, str]:
    """Classes sort as numbers when they are integers, then as text."""
    return (0, int(c), c) if _INT.fullmatch(c) else (1, 0, c)


def read_map(map_path: str | os.PathLike[str]) -> list[tuple[list[int], list[str]]]:
    """Per feature: the sorted tree values and their original values."""
    lines = _lines(map_path)
    if not lines:
        raise ModelFormatError(f"{os.fspath(map_path)!r} is empty; expected a 'Categorical' map.")
    no, head = lines[0]
    if head != ["Categorical"]:
        raise ModelFormatError(
            f"{os.fspath(map_path)}:{no}: only 'Categorical' maps are supported. "
            f"Got {shorten(repr(' '.join(head)), 80)}.")
    if len(lines) < 2 or len(lines[1][1]) != 1:
        raise ModelFormatError(f"{os.fspath(map_path)}: the second line must be the number of features.")
    n = _int(lines[1][1][0], map_path, lines[1][0], "the number of features")
    if n < 1:
        raise ModelFormatError(
            f"{os.fspath(map_path)}:{lines[1][0]}: the number of features must be positive. Got {n}.")
    if n > len(lines) - 2:  # checked before anything is allocated per feature
        raise ModelFormatError(
            f"{os.fspath(map_path)}:{lines[1][0]}: the map declares {n} features but has only "
            f"{len(lines) - 2} value lines (each feature needs at least one).")
    doms: list[dict[int, str]] = [{} for _ in range(n)]
    for no, toks in lines[2:]:
        if len(toks) < 3:
            raise ModelFormatError(
                f"{os.fspath(map_path)}:{no}: expected 'f<k> <tree value> =<value>'. "
                f"Got {shorten(repr(' '.join(toks)), 80)}.")
        k = _feature_number(toks[0], map_path, no)
        if k >= n:
            raise ModelFormatError(f"{os.fspath(map_path)}:{no}: feature f{k} but the map declares {n} features.")
        val = _int(toks[1], map_path, no, "a tree value")
        orig = " ".join(toks[2:])
        if orig.startswith("!="):
            continue
        if not orig.startswith("="):
            raise ModelFormatError(
                f"{os.fspath(map_path)}:{no}: the original value must start with '=' or '!='. "
                f"Got {shorten(repr(orig), 80)}.")
        if val in doms[k]:
            raise ModelFormatError(f"{os.fspath(map_path)}:{no}: f{k} lists the tree value {val} twice.")
        doms[k][val] = orig[1:]
    out = []
    for k, d in enumerate(doms):
        if not d:
            raise ModelFormatError(f"{os.fspath(map_path)}: feature f{k} has no values in the map.")
        vals = sorted(d)
        out.append((vals, [d[v] for v in vals]))
    return out


def read_dt(tree_path: str | os.PathLike[str], map_path: str | os.PathLike[str], *,
            distribution: DistributionLike = None) -> TreeParts:
    """Read a ``.dt`` tree and its ``.map`` (the parts of :meth:`kcxai.DecisionTree.from_dt`)."""
    doms = read_map(map_path)
    space = FeatureSpace([Feature.categorical(f"f{k}", vals, labels=labels)
                          for k, (vals, labels) in enumerate(doms)], distribution=distribution)
    where = os.fspath(tree_path)
    lines = _lines(tree_path)
    if len(lines) < 4:
        raise ModelFormatError(f"{where!r} is too short for a .dt tree (needs node count, root, I and T lines).")
    for no, toks in lines[:2]:
        if len(toks) != 1:
            raise ModelFormatError(f"{where}:{no}: expected a single integer. Got {shorten(repr(' '.join(toks)), 80)}.")
    n_nodes = _int(lines[0][1][0], where, lines[0][0], "the number of nodes")
    root = _int(lines[1][1][0], where, lines[1][0], "the root id")
    no, toks = lines[2]
    if toks[0] != "I":
        raise ModelFormatError(
            f"{where}:{no}: expected the line of internal nodes 'I ...'. Got {shorten(repr(toks[0]), 40)}.")
    internal = [_int(t, where, no, "a node id") for t in toks[1:]]
    no, toks = lines[3]
    if toks[0] != "T":
        raise ModelFormatError(
            f"{where}:{no}: expected the line of terminal nodes 'T ...'. Got {shorten(repr(toks[0]), 40)}.")
    terminal = [_int(t, where, no, "a node id") for t in toks[1:]]
    ids = internal + terminal
    if len(set(ids)) != len(ids):
        raise ModelFormatError(f"{where}: a node id appears twice in the I and T lines.")
    if len(ids) != n_nodes:
        raise ModelFormatError(
            f"{where}: the header says {n_nodes} nodes but the I and T lines list {len(ids)}.")
    if root not in ids:
        raise ModelFormatError(f"{where}: the root {root} is not among the listed nodes.")
    index = {nid: k for k, nid in enumerate(ids)}
    is_terminal = set(terminal)
    classes: list[str] = []
    label: dict[int, str] = {}
    edges: dict[int, dict[int, int]] = {nid: {} for nid in internal}  # node -> child -> value mask
    feature_of: dict[int, int] = {}
    for no, toks in lines[4:]:
        if len(toks) == 3 and toks[1] == "T":
            nid = _int(toks[0], where, no, "a leaf id")
            if nid not in is_terminal:
                raise ModelFormatError(f"{where}:{no}: {nid} is given a class but is not in the T line.")
            if nid in label:
                raise ModelFormatError(f"{where}:{no}: leaf {nid} is given a class twice.")
            label[nid] = toks[2]
            if toks[2] not in classes:
                classes.append(toks[2])
            continue
        if len(toks) != 4:
            raise ModelFormatError(
                f"{where}:{no}: expected '<node> f<k> <value> <child>' or '<leaf> T <class>'. "
                f"Got {shorten(repr(' '.join(toks)), 80)}.")
        nid = _int(toks[0], where, no, "a node id")
        k = _feature_number(toks[1], where, no)
        val = _int(toks[2], where, no, "a value")
        child = _int(toks[3], where, no, "a child id")
        if nid not in edges:
            raise ModelFormatError(f"{where}:{no}: {nid} has an edge but is not in the I line.")
        if child not in index:
            raise ModelFormatError(f"{where}:{no}: child {child} is not among the listed nodes.")
        if k >= space.n_features:
            raise ModelFormatError(f"{where}:{no}: f{k} but the map has {space.n_features} features.")
        if feature_of.setdefault(nid, k) != k:
            raise ModelFormatError(f"{where}:{no}: node {nid} tests both f{feature_of[nid]} and f{k}.")
        feat = space.features[k]
        if val not in feat.values:
            raise ModelFormatError(
                f"{where}:{no}: value {val} of f{k} is not in its domain {list(feat.values)} (from the map).")
        edges[nid][child] = edges[nid].get(child, 0) | (1 << feat.index(val))
    for nid in terminal:
        if nid not in label:
            raise ModelFormatError(f"{where}: leaf {nid} has no class line '<id> T <class>'.")
    for nid in internal:
        if not edges[nid]:
            raise ModelFormatError(f"{where}: internal node {nid} has no edges.")
    classes.sort(key=_class_key)
    cls_index = {c: i for i, c in enumerate(classes)}
    feat_arr: list[int] = []
    lab_arr: list[int] = []
    br_arr: list[tuple[tuple[int, int], ...]] = []
    for nid in ids:
        if nid in is_terminal:
            feat_arr.append(-1)
            lab_arr.append(cls_index[label[nid]])
            br_arr.append(())
        else:
            feat_arr.append(feature_of[nid])
            lab_arr.append(-1)
            br_arr.append(tuple((mask, index[child]) for child, mask in edges[nid].items()))
    return TreeParts(space, classes, TreeArrays(tuple(feat_arr), tuple(lab_arr), tuple(br_arr), index[root]), names=ids)
