"""Subset-minimal sufficient sets over a monotone predicate, with fewer oracle calls than plain deletion.

``sufficient(S)`` is monotone (a superset of a sufficient set is sufficient).
Plain deletion (pysat's MUSX) asks once per candidate. :func:`minimal_sufficient`
returns the *same* set as deletion in the same order, with fewer calls:

* **Chunks** (the dichotomic step of QuickXplain and of "progression"): the
  next ``k`` candidates of the order are dropped together when the rest is
  still sufficient; deletion in order would have dropped each of them (each
  intermediate set contains the rest). After a success ``k`` doubles, after a
  failure it halves, down to one candidate, which is then decided alone.
* **Cores**: after a sufficient answer the set shrinks to the oracle's core,
  as in MUSX.
* **Witnesses**: after an insufficient answer the oracle's counterexample,
  moved back towards the instance, tells which dropped candidates it needs; if
  it needs only one, that candidate is necessary for every subset of the
  current set (the counterexample agrees with the instance on all the others),
  so deletion would keep it: it is kept without a call of its own.

References
----------
U. Junker. QuickXplain: Preferred Explanations and Relaxations for Over-Constrained Problems. AAAI 2004.
J. Marques-Silva, M. Janota and A. Belov. Minimal Sets over Monotone Predicates in Boolean Formulae.
CAV 2013 (deletion, progression, dichotomic search, and their use of cores and witnesses).
A. Belov and J. Marques-Silva. Accelerating MUS Extraction with Recursive Model Rotation. FMCAD 2011.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

__all__ = ["minimal_sufficient", "moved_features", "deletion_order"]

#: Largest chunk tried at once.
MAX_CHUNK = 8


def minimal_sufficient(sufficient: Callable[[set[int]], bool], candidates: Iterable[int], order: Sequence[int], *,
                       core: Callable[[set[int]], set[int]] | None = None,
                       needed: Callable[[set[int], set[int]], set[int]] | None = None,
                       chunks: bool = True) -> set[int]:
    """A subset-minimal sufficient subset of ``candidates`` (itself sufficient): deletion in ``order``.

    Parameters
    ----------
    sufficient : callable
        ``sufficient(S)``: whether the set ``S`` is sufficient (monotone).
    candidates : iterable of int
        A sufficient set.
    order : sequence of int
        The order in which candidates are tried for deletion (candidates missing from it are kept).
    core : callable, optional
        Right after ``sufficient(S)`` returned True: a sufficient subset of ``S`` (the oracle's core).
    needed : callable, optional
        Right after ``sufficient(S)`` returned False, ``needed(S, dropped)``: the members of
        ``dropped`` on which some counterexample agreeing with the instance on ``S`` differs from the
        instance (every counterexample differs on one at least).
    chunks : bool, default True
        Try several candidates at once (False: one call per candidate, as plain deletion).

    Returns
    -------
    set of int

    Examples
    --------
    >>> need = {1, 4}  # sufficient: contains 1 and 4
    >>> sorted(minimal_sufficient(lambda s: need <= s, range(6), range(6)))
    [1, 4]
    """
    keep = set(candidates)
    todo = [i for i in order if i in keep]
    k = 1
    while todo:
        chunk = todo[:k] if chunks else todo[:1]
        rest = keep.difference(chunk)
        if sufficient(rest):
            if core is not None:
                rest &= core(rest)
            keep = rest
            todo = [i for i in todo[len(chunk):] if i in keep]
            k = min(2 * k, MAX_CHUNK)
            continue
        if len(chunk) == 1:
            todo = todo[1:]
            k = 1
            continue
        moved = needed(rest, set(chunk)) if needed is not None else set(chunk)
        if len(moved) == 1:  # necessary: a counterexample agrees with the instance on keep - moved
            todo.remove(next(iter(moved)))
        else:
            k = max(1, len(chunk) // 2)
    return keep


def moved_features(predict: Callable[[Sequence[int]], int], point: Sequence[int], label: int,
                   witness: Sequence[int], features: Iterable[int]) -> set[int]:
    """The members of ``features`` on which a counterexample still differs from ``point`` after each of them
    was moved back to ``point``'s value whenever the class stayed other than ``label`` (one prediction each).

    Examples
    --------
    >>> predict = lambda p: int(p[0] + p[2] >= 2)  # class 1 needs both
    >>> sorted(moved_features(predict, (0, 0, 0), 0, (1, 1, 1), [0, 1, 2]))
    [0, 2]
    """
    w = list(witness)
    out = set()
    for i in features:
        if w[i] == point[i]:
            continue
        saved, w[i] = w[i], point[i]
        if predict(w) == label:
            w[i] = saved
            out.add(i)
    return out


def deletion_order(sizes: Sequence[int]) -> list[int]:
    """The default order in which an AXp search tries to drop features: fewer values first (ties by index).

    A feature's values are the intervals between the model's thresholds on it, so a feature with many
    values is one the trees cut often: freed, it multiplies the boxes a search must look at and the
    branches a SAT solver must close. Trying it last keeps it fixed while the others are decided: the
    default of ``axp`` over a decision engine (:data:`kcxai.explain._methods.DEFAULT_ORDER`; its figures
    are in ``docs/results.md``, "Tree ensembles against PyXAI", deletion order).

    Examples
    --------
    >>> deletion_order([5, 2, 9, 2])
    [1, 3, 0, 2]
    """
    return sorted(range(len(sizes)), key=lambda i: (sizes[i], i))
