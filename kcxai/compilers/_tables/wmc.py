"""Exact weighted model counting over valid encodings, with conditioning, for the SDD and OBDD oracles.

The pieces live in one module each: :mod:`.base` (what both tables share: the
walk's driver and its memo of units), :mod:`.vectors` (the weight columns),
:mod:`.level` and :mod:`.level_arrays` (OBDD), :mod:`.vtree` (SDD) and
:mod:`.diagram` (the oracle and its session); this module documents the method
and re-exports them.

Both compilers export their diagram once into a node table at the level of
*features* (see :mod:`kcxai.compilers._encoding`): each feature's block of
Boolean variables is read as one multi-valued test. Counting then never
touches the backend again, never uses its 64-bit or floating-point counters,
and conditions by weights instead of building new diagrams.

Weights
-------
For a point ``v`` and a fixed set ``S``, every feature ``f`` has a factor
``fac_f = w_f(v_f)`` if ``f`` is fixed and ``Z_f`` (the feature's total
weight) if it is free; a free feature contributes ``w_f(E) = sum_{k in E}
w_f(k)`` where a node sends the values ``E`` one way, a fixed one the single
branch of ``v_f``. With the space's integer weights every number is a Python
``int``; with float weights, a ``float``.

OBDD table (:class:`LevelTable`): a reduced ordered multi-valued diagram.
Node ``n`` at level ``l`` (its feature's position in the block order) has
edges ``(E, child)``; its value counts the features at levels ``>= l``:

    V(n) = sum_e w(E_e) * skip(l, child_e) * V(child_e)   (free feature)
    V(n) = w(v_f) * skip(l, c) * V(c), c the child of v_f  (fixed feature)

with ``skip(l, l')`` the product of ``fac`` over the levels strictly between
(features not tested on that edge), ``V(TRUE) = 1`` and ``V(FALSE) = 0``.

SDD table (:class:`VtreeTable`): decision nodes over vtree nodes whose leaves
are whole feature blocks; a node normalised for a vtree node inside one block
is a *leaf*, the set ``E`` of values where it holds. For a decision node over
vtree node ``x`` (children ``xl``, ``xr``) with elements ``(p_i, s_i)``:

    V(n) = sum_i sm(xl, p_i) * V(p_i) * sm(xr, s_i) * V(s_i)

where ``sm(x, u)`` (smoothing) is the product of ``fac`` over the features
below ``x`` but not below ``u``'s vtree node. Primes partition the Boolean
assignments of ``xl``, hence its valid ones, so the sum is exact.

Distributions: a distribution shows itself to the tables only as its components ``(c_k, P_k)``
(:mod:`kcxai.distribution`), and counting is linear in it: the weight of a set is ``sum_k c_k P_k(set)``.
So every weight above is a *vector* of ``K`` weights, one per component (a plain number for a uniform or
product distribution, ``K = 1``; :mod:`kcxai.compilers._tables.vectors`), the recursions are computed
once for all components, and the coefficients are applied once, to the ``K`` counts of the roots. A box
query counts the same way, with every value outside the box weighing 0.

In both, ``count_c = top * V(root_c)`` is the weight of ``{x : kappa(x) = c,
x_S = v_S}``. In exact spaces ``disagree_weight = consistent_weight(v, S) -
count_c``, an exact ``int``. In float spaces it is the sum of ``count_c'`` over
the other classes instead (no cancellation: an empty set weighs exactly 0.0);
each count is a sum of products of the space's float weights, with the
rounding error of that many float operations (relative error about the number
of feature levels times 2**-53 on each count).

Terminals: ``V(TRUE) = 1`` and ``V(FALSE) = 0`` are parameters of the walk
(:class:`~kcxai.compilers._tables.base.Counter`), given per terminal node and
column, so a diagram with another terminal is counted by the same walk with that
terminal's values (0 for a lower bound, 1 for an upper one, say).

Sessions
--------
A node's value only depends on the factors of the features below it: the
levels at or below its own (OBDD) or the features below its vtree node (SDD).
A deletion-loop session keeps the values computed for the current ``S``,
grouped by *unit* (a level, or a vtree node); asking about freeing feature
``i`` recomputes only the units above ``i`` and reuses the rest, and
committing the removal keeps what was just computed.
"""
from kcxai.compilers._tables.base import FALSE, TRUE, Counter, Table, UnitValues, recursion
from kcxai.compilers._tables.diagram import DiagramOracle, DiagramSession, check_partition, diagram_oracle
from kcxai.compilers._tables.level import LevelCounter, LevelTable
from kcxai.compilers._tables.vectors import Columns
from kcxai.compilers._tables.vtree import VtreeCounter, VtreeTable

__all__ = ["LevelTable", "VtreeTable", "LevelCounter", "VtreeCounter", "Counter", "Columns", "UnitValues",
           "DiagramOracle", "DiagramSession", "check_partition", "diagram_oracle", "FALSE", "TRUE", "Table",
           "recursion"]
