"""Tree ensembles at the end of a pipeline, composed with its preprocessing at the array level.

The library's trees (:class:`~kcxai.models.imports._trees.RawEnsemble`, read by the same importers as
``from_sklearn``) test the columns the preprocessing makes; each test is resolved here to a test on the
original column that column comes from (:class:`~kcxai.models.imports._trees.Splits`), all the nodes on one
column at once:

* a column of categories or bins (one-hot, ordinal, binned, possibly scaled): the values whose encoded value
  the test sends left, one boolean row per node (a value mask);
* a number passed through: the test's own threshold, a cut of the numeric feature, compared as the model
  reads (float32 for scikit-learn's trees and XGBoost);
* a scaled number: the cut in original units found by :func:`~kcxai.models.imports._pipeline_values.cuts_back`
  (a decreasing chain sends the values above the cut left);
* a missing-value indicator: all the intervals one way, the missing value as the indicator says.

A feature's missing value goes where the model sends what the preprocessing makes of NaN: the imputed
value's side, or the node's own NaN rule when NaN reaches the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kcxai._errors import InvalidInputError
from kcxai.models.imports._trees import (
    EnsembleParts,
    FlatNodes,
    Masked,
    Plan,
    Ranged,
    RawEnsemble,
    Splits,
    cut_positions,
    numeric_cuts,
    parts_from,
)
from kcxai.models.imports._pipeline_values import Preprocessing, cuts_back, read_as
from kcxai.space import Feature, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike

__all__ = ["composed_parts"]


def _route(values: np.ndarray, t: np.ndarray, missing_left: np.ndarray, float32: bool) -> np.ndarray:
    """Whether each encoded value goes left at each node: ``read(v) <= t``, NaN by the node's rule."""
    v = np.broadcast_to(values, np.broadcast_shapes(values.shape, t.shape))
    return np.where(np.isnan(v), missing_left, read_as(v, float32) <= t)


def composed_parts(raw: RawEnsemble, codings: Sequence[Any], pre: Preprocessing,
                   distribution: DistributionLike) -> EnsembleParts:
    """The parts of the ensemble over the original columns (``codings``: the used columns, in order, as made
    by :mod:`kcxai.models.imports.pipeline`)."""
    flat = FlatNodes.of(raw.trees, raw.float32)
    groups = flat.by_column()
    empty = np.empty(0, dtype=np.int64)
    # scaled numbers: the cuts in original units, all the columns' bisections together
    tasks, uniq = [], {}
    for c in codings:
        if c.kind == "number" and c.scaled:
            nodes = groups.get(c.number_z, empty)
            u, inv = np.unique(flat.threshold[nodes], return_inverse=True)
            uniq[c.column] = inv.ravel()
            tasks.append((c.column, c.number_z, u, c.sign))
    keys = dict(zip([t[0] for t in tasks], cuts_back(pre, tasks, raw.float32))) if tasks else {}
    features: list[Feature] = []
    plans: list[Plan] = []
    positions: dict[int, np.ndarray] = {}
    for c in codings:
        if c.kind != "number":
            features.append(c.feature())
            plans.append(Masked(features[-1].size))
            continue
        nodes = groups.get(c.number_z, empty)
        if c.scaled:
            x, status = (a[uniq[c.column]] for a in keys[c.column])
            cuts = np.unique(x[status == 0])
            pos = np.searchsorted(cuts, x, side="left") + 1
            positions[c.column] = np.where(status < 0, 0, np.where(status > 0, len(cuts) + 1, pos))
        else:
            cuts = numeric_cuts(flat.threshold[nodes])
            positions[c.column] = cut_positions(cuts, flat.threshold[nodes])
        features.append(Feature.numeric(c.name, cuts.tolist(), float32=raw.float32 and not c.scaled,
                                        missing=c.missing))
        plans.append(Ranged(len(cuts), c.missing))
    splits = Splits(len(flat.left), plans)
    for f, c in enumerate(codings):
        for z in c.outputs_z():
            if z not in groups:
                continue
            nodes = groups[z]
            _resolve(splits, f, c, z, nodes, flat, raw, plans[f], positions.get(c.column))
    space = FeatureSpace(features, distribution=distribution)
    return parts_from(raw, space, flat, splits)


def _resolve(splits: Splits, f: int, c: Any, z: int, nodes: np.ndarray, flat: FlatNodes, raw: RawEnsemble,
             plan: Plan, pos: np.ndarray | None) -> None:
    """Resolve the nodes testing output column ``z`` (from original column ``c``, feature ``f``)."""
    t = flat.threshold[nodes]
    ml = flat.missing_left[nodes]
    if isinstance(plan, Masked):
        vals = c.zvals[z]
        _check_rule(c, vals, raw)
        splits.masked(nodes, f, _route(vals[None, :], t[:, None], ml[:, None], raw.float32))
        return
    miss = np.full(len(nodes), False)
    if c.missing:
        v = np.asarray([c.nan_value[z]])
        _check_rule(c, v, raw)
        miss = _route(v, t, ml, raw.float32)
    if z == c.number_z and pos is not None:  # positions are set for every number column
        splits.ranged(nodes, f, pos, upper=c.sign < 0, missing_left=miss)
        return
    # a missing-value indicator: every interval goes where the indicator's "not missing" value goes
    known = _route(np.asarray([c.known_value[z]]), t, ml, raw.float32)
    splits.ranged(nodes, f, np.where(known, plan.n_intervals, 0), missing_left=miss)


def _check_rule(c: Any, values: np.ndarray, raw: RawEnsemble) -> None:
    if not raw.nan_rule and bool(np.isnan(values).any()):
        raise InvalidInputError(
            f"Column {c.name!r} may be missing, and its missing value reaches the classifier as NaN, which "
            f"{c.final} does not accept. Fill it in the pipeline (a SimpleImputer on {c.name!r}).")
