"""A model's class functions as a CNF whose models are exactly the points of feature space.

:class:`CnfBuilder` is a :class:`~kcxai.functions.FunctionBuilder` whose functions are literals
(DIMACS integers): every model family that describes itself to the diagram compilers (trees, decision
lists, rule sets, naive Bayes and linear models, forests and boosted trees through their threshold
functions, BDD-encoded models) gets a CNF with no code of its own. This is what the ``ddnnf`` language
(:mod:`kcxai.compilers.ddnnf`) hands to the d4 compiler.

Variables
---------
* Variable 1 is the constant true (a unit clause); ``-1`` is false.
* Each feature's block of :mod:`kcxai.compilers._encoding` variables follows, in feature order, with
  the *validity* clauses that the diagram compilers leave out: exactly one variable of a one-hot block
  (pairwise for up to :data:`PAIRWISE_MAX` values, else a ladder of auxiliary variables, each defined
  by clauses as "one of the first ``k`` values"); the chain ``x >= t+1 -> x >= t`` of the order encoding; no code
  ``>= d`` in the log encoding. So every model of the CNF encodes a point.
* One *selector* variable per class, exactly one of them true, tied to the model's class by the unit
  clause ``OR_c (selector_c and root_c)`` (:meth:`CnfBuilder.cnf`).
* Every other variable is a *gate* defined by an equivalence (Tseitin): ``g <-> AND(inputs)``, the
  inputs being literals (an OR is a negated AND of negated inputs). Gates are shared by their inputs
  (structural hashing), constants are folded, and a positive input used by one gate only is merged into
  it when the clauses are written (chains of ``conj`` / ``disj`` become one gate). Only the gates the
  class functions and the value indicators reach are written, and variables are numbered without gaps.

As every gate is determined by the feature variables, and every model is a valid encoding, each point
of feature space extends to exactly one model: model counts over all the variables are counts of
points. The weights of a product distribution sit on *value indicators*: per feature of three or more
values and per value ``k``, the literal equivalent to ``x_f = k`` (a one-hot variable, or a gate over
the order or log block) weighs ``w_f(k)`` and its negation 1; a binary feature's variable weighs
``w_f(1)`` and its negation ``w_f(0)``. Any other literal weighs 1. The weighted count of a set of models
is then the weight of the points it encodes (:mod:`kcxai.compilers._dnnf_count`).

References
----------
G. S. Tseitin. On the complexity of derivation in propositional calculus. 1968 (the gate definitions).
C. Sinz. Towards an optimal CNF encoding of Boolean cardinality constraints. CP 2005 (the ladder).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kcxai._errors import InvalidTypeError
from kcxai.compilers._encoding import Encoding, Literal, _prefix_cubes
from kcxai.compilers._limits import Guard, LimitHit
from kcxai.compilers._threshold import class_functions
from kcxai.compilers.builder import check_switch, encoded_literal
from kcxai.space import FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.models.classifier import Classifier

__all__ = ["CnfBuilder", "Cnf", "TRUE", "FALSE", "PAIRWISE_MAX", "model_cnf"]

#: The constant true and false literals.
TRUE = 1
FALSE = -1

#: One-hot blocks of at most this many values get pairwise at-most-one clauses; larger ones a ladder
#: (3 clauses per value instead of ``d (d - 1) / 2`` in all).
PAIRWISE_MAX = 8


@dataclass(frozen=True)
class Cnf:
    """A written CNF, as constraint clauses and gate definitions, with what counting on it needs.

    Attributes
    ----------
    n_vars : int
        Variables ``1 .. n_vars``; each occurs in some clause, except binary features' variables that
        no function reads.
    constraints : list of list of int
        The clauses that define nothing: the constant, the features' validity.
    gates : list of (bool, int, tuple of int)
        ``(is_or, output, inputs)``: the variable ``output`` is equivalent to the AND (or the OR) of the
        input literals.
    roots : tuple of int
        Per class, the literal equivalent to "the model predicts this class".
    indicators : tuple of tuple of int
        Per feature, per value, the literal equivalent to ``x_f = k`` (see the module docstring; empty
        for a feature of one value).
    selectors : tuple of int
        Per class, its *selector* variable: exactly one selector is true, and the constraint
        ``OR_c (selector_c and root_c)`` makes it the model's class (see :meth:`CnfBuilder.cnf`).
    """

    n_vars: int
    constraints: list[list[int]]
    gates: list[tuple[bool, int, tuple[int, ...]]]
    roots: tuple[int, ...]
    indicators: tuple[tuple[int, ...], ...]
    selectors: tuple[int, ...] = ()

    @property
    def n_clauses(self) -> int:
        """Number of clauses, the gates' Tseitin clauses included."""
        return len(self.constraints) + sum(len(ins) + 1 for _, _, ins in self.gates)

    @property
    def n_literals(self) -> int:
        """Number of literal occurrences in the clauses."""
        return sum(map(len, self.constraints)) + sum(3 * len(ins) + 1 for _, _, ins in self.gates)

    def clauses(self) -> Iterator[list[int]]:
        """Every clause: the constraints, then each gate's Tseitin clauses."""
        yield from self.constraints
        for is_or, out, ins in self.gates:
            yield from _tseitin(is_or, out, ins)

    def dimacs(self) -> str:
        """The CNF in DIMACS format."""
        lines = [f"p cnf {self.n_vars} {self.n_clauses}"]
        lines.extend(" ".join(map(str, cl)) + " 0" for cl in self.clauses())
        return "\n".join(lines) + "\n"

    def circuit(self) -> str:
        """The gates and constraints, one a line: ``a OUT IN ... 0``, ``o OUT IN ... 0``, ``c LIT ... 0``."""
        lines = [f"p {self.n_vars}"]
        lines.extend("c " + " ".join(map(str, cl)) + " 0" for cl in self.constraints)
        lines.extend(f"{'o' if is_or else 'a'} {out} " + " ".join(map(str, ins)) + " 0"
                     for is_or, out, ins in self.gates)
        return "\n".join(lines) + "\n"


def _tseitin(is_or: bool, out: int, ins: Sequence[int]) -> list[list[int]]:
    """The clauses of ``out <-> AND(ins)`` (an OR is the negated AND of the negated inputs)."""
    sign = -1 if is_or else 1
    return [*([-sign * out, sign * x] for x in ins), [sign * out, *(-sign * x for x in ins)]]


class CnfBuilder:
    """A :class:`~kcxai.functions.FunctionBuilder` whose functions are literals over gates (see the module).

    Parameters
    ----------
    space : FeatureSpace
    encoding : {"auto", "onehot", "order", "log"}
        The Boolean encoding of features of three or more values (:mod:`kcxai.compilers._encoding`;
        ``"auto"`` here is one-hot).
    guard : Guard, optional
        The compilation's time and memory limits, ticked once per operation.
    max_variables : int, optional
        Limit on the gate variables created (checked as they are made).
    what : str
        The model, for messages.

    Examples
    --------
    >>> from kcxai.space import Feature, FeatureSpace
    >>> space = FeatureSpace([Feature.categorical("a", [0, 1]), Feature.categorical("b", [0, 1, 2])])
    >>> b = CnfBuilder(space)
    >>> f = b.conj(b.value_in(0, 0b10), b.value_in(1, 0b011))
    >>> cnf = b.cnf([f, b.neg(f)])
    >>> cnf.n_vars, cnf.indicators  # the 4 value variables, then the 2 class selectors and the gates
    (11, ((-2, 2), (3, 4, 5)))
    """

    def __init__(self, space: FeatureSpace, encoding: str = "auto", guard: Guard | None = None,
                 max_variables: int | None = None, what: str = "the model") -> None:
        self.space = space
        self.enc = Encoding(space, "onehot" if encoding == "auto" else encoding)
        self.guard = guard
        self.max_variables = max_variables
        self.what = what
        self.n_vars = 1 + self.enc.n_vars
        self._gates: dict[tuple[int, ...], int] = {}
        self._inputs: dict[int, tuple[int, ...]] = {}
        self._lits: dict[tuple[int, int], int] = {}

    # -- the FunctionBuilder protocol ------------------------------------------------------

    def true(self) -> int:
        return TRUE

    def false(self) -> int:
        return FALSE

    def variable(self, var: int) -> int:
        """The DIMACS variable of the encoding's variable ``var``."""
        return var + 2

    def _cube(self, cube: Sequence[Literal]) -> int:
        return self._and([self.variable(v) if pol else -self.variable(v) for v, pol in cube])

    def value_in(self, feature: int, mask: int) -> int:
        key = (feature, mask)
        # True and 1.0 hash like 1: only plain ints may be looked up; others are checked (and refused) below
        got = self._lits.get(key) if type(feature) is int and type(mask) is int else None
        if got is None:
            got = self._lits[key] = encoded_literal(self.enc, feature, mask, false=FALSE, cube=self._cube,
                                                    either=self.disj, negate=self.neg)
        return got

    def conj(self, a: int, b: int) -> int:
        return self._and((a, b))

    def disj(self, a: int, b: int) -> int:
        return -self._and((-a, -b))

    def neg(self, a: int) -> int:
        return -a

    def switch(self, feature: int, cases: Sequence[int]) -> int:
        check_switch(self.space, feature, cases)
        groups: dict[int, int] = {}
        for k, c in enumerate(cases):
            groups[c] = groups.get(c, 0) | 1 << k
        out = FALSE
        for c, mask in groups.items():
            out = self.disj(out, self.conj(self.value_in(feature, mask), c))
        return out

    # -- gates ------------------------------------------------------------------------------

    def _and(self, inputs: Iterable[int]) -> int:
        """The literal of ``AND(inputs)``: constants folded, a repeated input once, a complementary pair false."""
        if self.guard is not None:
            self.guard.tick()
        seen: set[int] = set()
        for x in inputs:
            if x == FALSE or -x in seen:
                return FALSE
            if x != TRUE:
                seen.add(x)
        if not seen:
            return TRUE
        if len(seen) == 1:
            return next(iter(seen))
        key = tuple(sorted(seen))
        got = self._gates.get(key)
        if got is None:
            self.n_vars += 1
            got = self._gates[key] = self.n_vars
            self._inputs[got] = key
            if self.max_variables is not None and self.n_vars > self.max_variables:
                raise LimitHit(
                    f"The CNF of {self.what} for 'ddnnf' exceeded max_variables={self.max_variables:,} "
                    f"({len(self._inputs):,} gates while building the model's functions). Raise "
                    "'max_variables', or use another language ('obdd', 'sdd').", "max_variables")
        return got

    # -- writing ------------------------------------------------------------------------------

    def indicators(self) -> list[list[int]]:
        """Per feature, per value, the literal equivalent to ``x_f = k`` (see the module docstring)."""
        out: list[list[int]] = []
        for f, feat in enumerate(self.space.features):
            if feat.size == 1:
                out.append([])
            elif feat.size == 2:
                x = self.variable(self.enc.blocks[f][0])
                out.append([-x, x])
            else:
                out.append([self.value_in(f, 1 << k) for k in range(feat.size)])
        return out

    def cnf(self, roots: Sequence[int], max_clauses: int | None = None) -> Cnf:
        """The clauses defining ``roots`` (one literal per class) and the value indicators, with one selector
        variable per class: exactly one selector holds (pairwise clauses), and the unit clause
        ``OR_c (selector_c and root_c)`` ties it to the class, so each point is still one model, whose selector
        is its class. A count with the other classes' selectors weighing 0 is a count of a set of classes, and
        every class is counted on one compiled form.

        Raises
        ------
        LimitHit
            When the clauses would exceed ``max_clauses``.
        """
        roots = [self._check_root(r) for r in roots]
        indicators = self.indicators()
        _check_indicators(indicators)
        selectors = []
        for _ in roots:
            self.n_vars += 1
            selectors.append(self.n_vars)
        top = FALSE
        for s, r in zip(selectors, roots):
            top = self.disj(top, self.conj(s, r))
        tops = [top, *roots, *(x for ind in indicators for x in ind if len(ind) > 2)]
        gates = self._reachable(tops)
        flat = self._flatten(gates, self._uses(gates, tops), set(abs(t) for t in tops))
        out = _Writer(1 + self.enc.n_vars, max_clauses, self.what)
        for v in selectors:
            out.rename[v] = out.fresh()
        for g in gates:
            if g in flat:
                out.rename[g] = out.fresh()
        out.add([TRUE])
        out.add([out.lit(top)])
        sel = [out.rename[v] for v in selectors]
        _exactly_one(sel, out, pairwise=True)
        self._validity(out)
        for g in gates:
            if g in flat:
                out.gate(False, out.rename[g], tuple(out.lit(x) for x in flat[g]))
                if self.guard is not None:
                    self.guard.tick()
        return Cnf(out.n_vars, out.clauses, out.gates, tuple(out.lit(r) for r in roots),
                   tuple(tuple(out.lit(x) for x in ind) for ind in indicators), tuple(sel))

    def _check_root(self, r: object) -> int:
        if isinstance(r, bool) or not isinstance(r, int) or r == 0 or abs(r) > self.n_vars:
            raise InvalidTypeError(f"A model's build() must return functions of the builder it was given. "
                                   f"Got {r!r} instead.")
        return r

    def _reachable(self, tops: Sequence[int]) -> list[int]:
        """The gates ``tops`` reach, inputs before the gates using them."""
        order: list[int] = []
        done: set[int] = set()
        for top in tops:
            stack = [(abs(top), False)]
            while stack:
                g, expanded = stack.pop()
                if g in done or g not in self._inputs:
                    continue
                if expanded:
                    done.add(g)
                    order.append(g)
                    continue
                stack.append((g, True))
                stack.extend((abs(x), False) for x in self._inputs[g] if abs(x) not in done)
        return order

    def _uses(self, gates: Sequence[int], tops: Sequence[int]) -> dict[int, int]:
        """How many times each gate is read, by the written gates and as a top."""
        uses: dict[int, int] = {}
        for g in gates:
            for x in self._inputs[g]:
                uses[abs(x)] = uses.get(abs(x), 0) + 1
        for t in tops:
            uses[abs(t)] = uses.get(abs(t), 0) + 1
        return uses

    def _flatten(self, gates: Sequence[int], uses: dict[int, int], tops: set[int]) -> dict[int, list[int]]:
        """Per written gate, its inputs with each positive input gate read only there merged in (that gate
        is then not written)."""
        flat: dict[int, list[int]] = {}
        merged: set[int] = set()
        for g in gates:  # inputs come first: their flattened inputs are ready
            ins: list[int] = []
            for x in self._inputs[g]:
                if x > 0 and x in flat and uses.get(x) == 1 and x not in tops:
                    ins.extend(flat[x])
                    merged.add(x)
                else:
                    ins.append(x)
            flat[g] = list(dict.fromkeys(ins))
        for x in merged:
            del flat[x]
        return flat

    def _validity(self, out: "_Writer") -> None:
        """The clauses saying each feature's block encodes one of its values."""
        for f, feat in enumerate(self.space.features):
            vs = [self.variable(v) for v in self.enc.blocks[f]]
            kind = self.enc.kinds[f]
            if kind == "onehot":
                _exactly_one(vs, out)
            elif kind == "order":
                for a, b in zip(vs, vs[1:]):
                    out.add([-b, a])
            elif kind == "log":
                top = (1 << len(vs)) - 1
                if feat.size <= top:
                    for cube in _prefix_cubes(vs, feat.size, top):
                        out.add([-v if pol else v for v, pol in cube])


class _Writer:
    """The written CNF: the clauses, and the builder's variables renumbered without gaps."""

    def __init__(self, n_kept: int, max_clauses: int | None, what: str) -> None:
        #: builder variable -> written variable (the constant and the features' variables keep theirs)
        self.rename = {v: v for v in range(1, n_kept + 1)}
        self.n_vars = n_kept
        self.clauses: list[list[int]] = []
        self.gates: list[tuple[bool, int, tuple[int, ...]]] = []
        self.n_clauses = 0
        self.max_clauses = max_clauses
        self.what = what

    def fresh(self) -> int:
        """A new written variable."""
        self.n_vars += 1
        return self.n_vars

    def lit(self, x: int) -> int:
        """A builder literal as written."""
        return self.rename[x] if x > 0 else -self.rename[-x]

    def add(self, clause: list[int]) -> None:
        """A constraint clause."""
        self.clauses.append(clause)
        self._count(1)

    def gate(self, is_or: bool, out: int, ins: tuple[int, ...]) -> None:
        """``out <-> AND(ins)`` (or OR)."""
        self.gates.append((is_or, out, ins))
        self._count(len(ins) + 1)

    def _count(self, more: int) -> None:
        self.n_clauses += more
        if self.max_clauses is not None and self.n_clauses > self.max_clauses:
            raise LimitHit(
                f"The CNF of {self.what} for 'ddnnf' exceeded max_clauses={self.max_clauses:,} "
                f"({self.n_clauses:,} clauses written). Raise 'max_clauses', or use another language "
                "('obdd', 'sdd').", "max_clauses")


def _exactly_one(xs: list[int], out: _Writer, pairwise: bool = False) -> None:
    """Exactly one of ``xs`` (written variables): pairwise, or a ladder ``s_k <-> (x_0 or ... or x_k)`` with
    ``x_k -> not s_{k-1}``. The ladder's definitions are written as clauses, not gates: d4's gate removal
    miscounted circuits whose clauses read a gate's output (see :mod:`kcxai.compilers.ddnnf`)."""
    out.add(list(xs))
    if pairwise or len(xs) <= PAIRWISE_MAX:
        for i, a in enumerate(xs):
            for b in xs[i + 1:]:
                out.add([-a, -b])
        return
    prev = xs[0]
    for x in xs[1:]:
        s = out.fresh()
        out.add([-x, -prev])  # x -> not (x_0 or ... or x_{k-1})
        for clause in _tseitin(True, s, (prev, x)):
            out.add(clause)
        prev = s


def _check_indicators(indicators: Sequence[Sequence[int]]) -> None:
    """Every feature's value indicators (three or more values) on distinct variables, and no variable carrying
    two features' indicators: the weights go on them."""
    owner: dict[int, int] = {}
    for f, ind in enumerate(indicators):
        if len(ind) <= 2:
            continue
        for x in ind:
            if abs(x) in owner or abs(x) == TRUE:
                raise RuntimeError(f"internal error: value indicator {x} of feature {f} is not a variable of its own")
            owner[abs(x)] = f


def model_cnf(model: Classifier, builder: CnfBuilder, max_clauses: int | None = None) -> Cnf:
    """The CNF of ``model``'s class functions (:func:`~kcxai.compilers._threshold.class_functions`) on ``builder``."""
    fns = class_functions(model, builder)
    if not isinstance(fns, (list, tuple)) or len(fns) != len(model.classes):
        raise InvalidTypeError(
            f"{type(model).__name__}.build() must return one function per class ({len(model.classes)}). "
            f"Got {fns!r} instead.")
    return builder.cnf(list(fns), max_clauses)
