"""Additive tree ensembles compiled feature by feature into a reduced ordered multi-valued diagram.

A random forest or a boosted model that describes itself as an
:class:`~kcxai.functions.AdditiveTrees` (class scores are sums of leaf scores)
is compiled here without the :class:`~kcxai.functions.FunctionBuilder`: the
diagram is built top-down, one feature at a time, in one feature order, and
every query then counts on it (:class:`~kcxai.compilers._tables.level.LevelTable`,
the reduced ordered multi-valued diagram both diagram languages count on).

Construction
------------
Each comparison of two class scores, ``score_c(x) - score_d(x) >= 0`` (``> 0``
when ``d`` wins ties), is a threshold test on a sum of trees. With every leaf
difference scaled to an integer, it reads ``s0 + sum_t v_t(x) >= 0``.

1. Every tree becomes a reduced ordered multi-valued diagram in the order,
   whose terminals are its integer leaf values (equal values share a
   terminal); all trees share one table, so each tree's *residual* (what is
   left of it once the features above a level are fixed) is a canonical node
   (:mod:`.sources`).
2. A *state* at a level is the sorted tuple ``R`` of the residuals still
   undecided and the partial sum ``s`` of the decided trees. Branching on the
   level's feature moves the residuals testing it to their children (values
   with equal children branch together) and adds the trees that reach a leaf
   to ``s`` (:mod:`.threshold`).
3. Pruning by the interval of reachable remaining scores: the remaining trees
   add between ``lo(R)`` and ``hi(R)``, so a state with ``s + lo(R) >= 0`` is
   TRUE and one with ``s + hi(R) < 0`` is FALSE.
4. Interval caching (Chan and Darwiche's construction for threshold tests):
   the function of ``(R, s)`` is monotone in ``s``, so the partial sums giving
   one node form an interval, the intersection of the children's intervals
   shifted back by what each branch added. Each ``R`` keeps its disjoint
   intervals.
5. The last levels, spanning at most :data:`~.bottom.BOTTOM_POINTS` points,
   are decided from the remaining trees' value vectors (:mod:`.bottom`):
   exact ranges, the widest intervals, and no state-by-state branching where
   the states outnumber the nodes most.
6. Nodes are made through a unique table (:mod:`.diagram`: equal children,
   the same node; a node whose branches all agree is its child), so the
   result is the reduced diagram of the test in this order.

Two classes need one test (the other class is its complement, a negated
root). ``K > 2`` classes need one test per pair; class ``c`` is the
conjunction of its tests, so that ties go to the class first in the
ensemble's ``priority`` (:mod:`.build`).

A *bounded* construction (:mod:`.bounded`) runs the same construction in
rounds that send the states of least probability mass to a third terminal,
UNKNOWN, so that it fits a budget; counting on its diagram gives exact lower
and upper bounds. A *conditioned* one (:mod:`.conditioned`) builds only the
points agreeing with an instance on a set of features, exactly.

Order
-----
``ensemble_order`` ranks features by where the trees test them: each test
weighs ``2**-depth`` (a root test weighs 1), summed over all trees, heaviest
first. Features tested near the roots of many trees decide the most trees
early and let the interval pruning stop whole subtrees. Measured on adult
(<= 10 quantile bins, 14 features): see ``benchmarks/bench_ensemble_compile.py``.

Limits
------
One :class:`~kcxai.compilers._limits.Guard` ticks at every tree node, every
state expanded and every ``apply`` step; its node count is the diagram's nodes
plus the trees' own. The cached states are no nodes: their memory is what
``max_memory`` bounds (about 400 bytes each; a 100-tree boosted model held
700,000 of them).

References
----------
Chan, H. and Darwiche, A. (2003). Reasoning about Bayesian network classifiers. UAI 2003 (the symbolic
compilation of a threshold test on a sum, with the partial sums' intervals).
Shih, A., Choi, A. and Darwiche, A. (2018). A symbolic approach to explaining Bayesian network classifiers.
IJCAI 2018 (that compiler used to explain classifiers).
Srinivasan, A., Kam, T., Malik, S. and Brayton, R. (1990). Algorithms for discrete function manipulation.
ICCAD 1990 (multi-valued decision diagrams, their reduction and ``apply``).
Gossen, F. and Steffen, B. (2019). Large random forests: optimisation for rapid evaluation.
arXiv:1912.10934 (random forests aggregated into one decision diagram).
"""

from kcxai.compilers._ensemble.build import (BuiltEnsemble, build_ensemble, compile_additive, conditioned_order,
                                             ensemble_order, is_additive)
from kcxai.compilers._ensemble.diagram import UNKNOWN, EnsembleDiagram, obdd_nodes

__all__ = ["ensemble_order", "EnsembleDiagram", "compile_additive", "is_additive", "obdd_nodes", "BuiltEnsemble",
           "build_ensemble", "conditioned_order", "UNKNOWN"]
