"""Rule-based classifiers: decision lists and rule sets.

A *rule* is ``IF x_i in E_i AND ... THEN class``: a conjunction of feature
literals (a feature tested twice means the intersection of its value sets).

* A :class:`DecisionList` is an ordered list of rules and a default class;
  the first rule that matches decides (``IF .. THEN .. ELSE IF .. ELSE ..``).
* A :class:`RuleSet` is an unordered set of rules for one class and a default
  class: the class is predicted iff some rule matches (a DNF; what RIPPER-style
  learners produce).

Both read and write a readable text form::

    IF age in (30, 40] AND sex = F THEN 1
    ELSE IF sex = M THEN 0
    ELSE 1

Conditions are ``name = v``, ``name != v``, ``name in {v1, v2}``,
``name not in {...}``, ``name < t`` (also ``<=``, ``>``, ``>=``) and
``name in [a, b)`` (any of ``[ ( ] )``; ``inf`` and ``-inf`` allowed). On a
numeric feature (intervals ``(t_k, t_k+1]``) a condition must be a union of the
feature's intervals: ``age <= 30`` works with a threshold at 30, ``age < 30``
does not (it cuts the interval ending at 30) and raises an error saying so.
On a categorical feature with numeric values, comparisons and ranges select
the values they contain. Names and values that are not plain words are written
in double quotes. ``#`` starts a comment.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kcxai._errors import InvalidInputError, InvalidTypeError, ModelFormatError
from kcxai.models._base import Classifier
from kcxai.space import Feature, FeatureSpace, Interval

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.compilers._builder import FunctionBuilder

__all__ = ["Rule", "DecisionList", "RuleSet"]


@dataclass(frozen=True)
class Rule:
    """``IF conditions THEN label``.

    Parameters
    ----------
    conditions : mapping or sequence of pairs
        ``{feature: values}`` or ``[(feature, values), ...]``; a feature is a
        name or index; ``values`` is one domain value or a collection of them
        (for a numeric feature, :class:`~kcxai.Interval` objects, each a union
        of the feature's intervals). An empty mapping matches every point.
    label
        The class the rule concludes.

    Examples
    --------
    >>> from kcxai.models import Rule
    >>> Rule({"sex": "F", "age": [30, 40]}, 1)
    Rule(conditions={'sex': 'F', 'age': [30, 40]}, label=1)
    """

    conditions: Any
    label: Any


_Conds = tuple[tuple[int, int], ...]  # (feature, mask) sorted by feature, one entry per feature


def _full(size: int) -> int:
    return (1 << size) - 1


# -- value sets ---------------------------------------------------------------

@dataclass(frozen=True)
class _Range:
    """A set of reals between two bounds, each open or closed."""

    low: float
    high: float
    low_closed: bool
    high_closed: bool

    def __contains__(self, x: float) -> bool:
        lo_ok = x > self.low or (self.low_closed and x == self.low)
        hi_ok = x < self.high or (self.high_closed and x == self.high)
        return lo_ok and hi_ok


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _interval_vs_range(iv: Interval, r: _Range) -> str:
    """``"in"``, ``"out"`` or ``"cut"``: where the interval ``(low, high]`` stands with respect to ``r``."""
    hi_in = iv.high < r.high or (iv.high == r.high and (r.high_closed or r.high == math.inf))
    if iv.low >= r.low and hi_in:
        return "in"
    if iv.high < r.low or (iv.high == r.low and not r.low_closed) or iv.low >= r.high:
        return "out"
    return "cut"


def _range_mask(feature: Feature, r: _Range, shown: str) -> int:
    mask = 0
    if feature.is_numeric:
        for k, iv in enumerate(feature.values):
            where = _interval_vs_range(iv, r)
            if where == "cut":
                raise InvalidInputError(
                    f"The condition {shown!r} cuts the interval {iv} of numeric feature {feature.name!r}: "
                    "a condition must be a union of the feature's intervals (add a threshold, or use <= / >).")
            if where == "in":
                mask |= 1 << k
        return mask
    for k, v in enumerate(feature.values):
        if not _is_number(v):
            raise InvalidInputError(
                f"The condition {shown!r} compares numbers, but feature {feature.name!r} has the non-numeric "
                f"value {v!r}.")
        if v in r:
            mask |= 1 << k
    return mask


def _values_mask(feature: Feature, values: Any, where: str) -> int:
    """The mask of a value, a collection of values, or intervals (numeric features)."""
    if isinstance(values, (str, bytes, Interval)) or not isinstance(values, Iterable):
        values = [values]
    mask = 0
    for v in values:
        if feature.is_numeric:
            if not isinstance(v, Interval):
                raise InvalidInputError(
                    f"{where}: feature {feature.name!r} is numeric; give its values as Interval objects "
                    f"(unions of its intervals). Got {v!r} instead.")
            r = _Range(v.low, v.high, False, True)
            mask |= _range_mask(feature, r, f"{feature.name} in {v}")
        else:
            try:
                mask |= 1 << feature.index(v)
            except InvalidInputError as e:
                raise InvalidInputError(f"{where}: {e}") from None
    return mask


def _conditions(space: FeatureSpace, conditions: Any, where: str) -> _Conds:
    if isinstance(conditions, Mapping):
        items = list(conditions.items())
    elif isinstance(conditions, (str, bytes)) or not isinstance(conditions, Iterable):
        raise InvalidTypeError(
            f"{where}: conditions must be a mapping {{feature: values}} or (feature, values) pairs. "
            f"Got {conditions!r} instead.")
    else:
        items = []
        for item in conditions:
            if isinstance(item, (str, bytes)) or not isinstance(item, Sequence) or len(item) != 2:
                raise InvalidTypeError(f"{where}: each condition must be a (feature, values) pair. Got {item!r}.")
            items.append((item[0], item[1]))
    masks: dict[int, int] = {}
    for feat, values in items:
        i = space.feature_index(feat)
        m = _values_mask(space.features[i], values, where)
        masks[i] = masks.get(i, _full(space.features[i].size)) & m
    return tuple(sorted((i, m) for i, m in masks.items() if m != _full(space.features[i].size)))


def _matches(conds: _Conds, point: Sequence[int]) -> bool:
    return all(m >> point[i] & 1 for i, m in conds)


# -- text -------------------------------------------------------------------------

_KEYWORDS = {"if", "then", "and", "else", "in", "not", "default", "otherwise", "true"}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_NUMBER = re.compile(r"[+-]?(?:inf|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<op><=|>=|!=|==|=|<|>)
  | (?P<punct>[{}()\[\],])
  | (?P<atom>[^\s{}()\[\],"=<>!]+)
""", re.VERBOSE)


@dataclass
class _Tok:
    kind: str  # "string", "number", "word", "op", "punct"
    text: str
    value: Any


def _tokenize(line: str, lineno: int) -> list[_Tok]:
    out: list[_Tok] = []
    pos = 0
    while pos < len(line):
        m = _TOKEN.match(line, pos)
        if m is None:
            raise InvalidInputError(f"Line {lineno}: cannot read {line[pos:]!r}.")
        pos = m.end()
        kind = m.lastgroup
        text = m.group()
        if kind == "space":
            continue
        if kind == "string":
            out.append(_Tok("string", text, json.loads(text)))
        elif kind == "atom":
            if _NUMBER.fullmatch(text):
                v: Any = float(text) if any(c in text.lower() for c in ".ei") else int(text)
                out.append(_Tok("number", text, v))
            else:
                out.append(_Tok("word", text, text))
        else:
            out.append(_Tok(kind or "", text, text))
    return out


def _quote(s: str) -> str:
    if _WORD.fullmatch(s) and s.lower() not in _KEYWORDS and not _NUMBER.fullmatch(s):
        return s
    return json.dumps(s)


def _fmt_value(v: Any) -> str:
    if isinstance(v, str):
        return _quote(v)
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _fmt_bound(x: float) -> str:
    if x == math.inf:
        return "inf"
    if x == -math.inf:
        return "-inf"
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _fmt_condition(feature: Feature, mask: int) -> str:
    name = _quote(feature.name)
    ks = [k for k in range(feature.size) if mask >> k & 1]
    if feature.is_numeric:
        runs: list[tuple[int, int]] = []
        for k in ks:
            if runs and runs[-1][1] == k - 1:
                runs[-1] = (runs[-1][0], k)
            else:
                runs.append((k, k))
        ivs = [Interval(feature.values[a].low, feature.values[b].high) for a, b in runs]
        if len(ivs) == 1:
            iv = ivs[0]
            if iv.low == -math.inf:
                return f"{name} <= {_fmt_bound(iv.high)}"
            if iv.high == math.inf:
                return f"{name} > {_fmt_bound(iv.low)}"
            return f"{name} in ({_fmt_bound(iv.low)}, {_fmt_bound(iv.high)}]"
        parts = [f"({_fmt_bound(iv.low)}, {_fmt_bound(iv.high)}" + (")" if iv.high == math.inf else "]")
                 for iv in ivs]
        return f"{name} in {{{', '.join(parts)}}}"
    if not ks:
        return f"{name} in {{}}"
    if len(ks) == 1:
        return f"{name} = {_fmt_value(feature.values[ks[0]])}"
    if len(ks) == feature.size - 1 and feature.size > 2:
        (k,) = [k for k in range(feature.size) if not mask >> k & 1]
        return f"{name} != {_fmt_value(feature.values[k])}"
    return f"{name} in {{{', '.join(_fmt_value(feature.values[k]) for k in ks)}}}"


class _Parser:
    """A recursive-descent reader of one rule line."""

    def __init__(self, toks: list[_Tok], lineno: int, space: FeatureSpace) -> None:
        self.toks = toks
        self.pos = 0
        self.lineno = lineno
        self.space = space

    def error(self, msg: str) -> InvalidInputError:
        return InvalidInputError(f"Line {self.lineno}: {msg}")

    def peek(self) -> _Tok | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def next(self, what: str) -> _Tok:
        t = self.peek()
        if t is None:
            raise self.error(f"expected {what}, got the end of the line.")
        self.pos += 1
        return t

    def keyword(self, *words: str) -> bool:
        t = self.peek()
        if t is not None and t.kind == "word" and t.text.lower() in words:
            self.pos += 1
            return True
        return False

    def expect_punct(self, chars: str) -> str:
        t = self.next(f"one of {list(chars)}")
        if t.kind != "punct" or t.text not in chars:
            raise self.error(f"expected one of {list(chars)}, got {t.text!r}.")
        return t.text

    def number(self) -> float:
        t = self.next("a number")
        if t.kind != "number":
            raise self.error(f"expected a number, got {t.text!r}.")
        return t.value

    def conditions(self) -> _Conds:
        if self.keyword("true"):
            return ()
        masks: dict[int, int] = {}
        while True:
            i, m = self.condition()
            masks[i] = masks.get(i, _full(self.space.features[i].size)) & m
            if not self.keyword("and"):
                break
        return tuple(sorted((i, m) for i, m in masks.items() if m != _full(self.space.features[i].size)))

    def condition(self) -> tuple[int, int]:
        start = self.pos
        t = self.next("a feature name")
        if t.kind not in ("word", "string"):
            raise self.error(f"expected a feature name, got {t.text!r}.")
        try:
            i = self.space.feature_index(str(t.value))
        except InvalidInputError as e:
            raise self.error(str(e)) from None
        feature = self.space.features[i]
        full = _full(feature.size)
        op = self.next("an operator (=, !=, <, <=, >, >=, in, not in)")
        negate = False
        if op.kind == "word" and op.text.lower() == "not":
            if not self.keyword("in"):
                raise self.error("expected 'in' after 'not'.")
            negate, kind = True, "in"
        elif op.kind == "word" and op.text.lower() == "in":
            kind = "in"
        elif op.kind == "op":
            kind = op.text
        else:
            raise self.error(f"expected an operator after {feature.name!r}, got {op.text!r}.")
        if kind == "in":
            t2 = self.peek()
            if t2 is not None and t2.kind == "punct" and t2.text == "{":
                self.pos += 1
                mask = 0
                first = True
                while True:
                    t3 = self.peek()
                    if t3 is not None and t3.kind == "punct" and t3.text == "}":
                        self.pos += 1
                        break
                    if not first:
                        self.expect_punct(",")
                    first = False
                    mask |= self.item(feature, start)
            else:
                mask = self.range_mask(feature, start)
            return i, (full & ~mask) if negate else mask
        if kind in ("=", "==", "!="):
            if feature.is_numeric:
                x = self.number()
                raise self.error(
                    f"feature {feature.name!r} is numeric: use a range such as '{feature.name} <= {x}' or "
                    f"'{feature.name} in (a, b]' instead of {kind!r}.")
            mask = 1 << self.value_index(feature, self.next("a value"))
            return i, (full & ~mask) if kind == "!=" else mask
        x = self.number()
        r = {"<": _Range(-math.inf, x, False, False), "<=": _Range(-math.inf, x, False, True),
             ">": _Range(x, math.inf, False, False), ">=": _Range(x, math.inf, True, False)}[kind]
        return i, _range_mask(feature, r, self.shown(start))

    def shown(self, start: int) -> str:
        return " ".join(t.text for t in self.toks[start:self.pos])

    def item(self, feature: Feature, start: int) -> int:
        t = self.peek()
        if t is not None and t.kind == "punct" and t.text in "[(":
            return self.range_mask(feature, start)
        if feature.is_numeric:
            raise self.error(f"the values of numeric feature {feature.name!r} are ranges like (a, b].")
        return 1 << self.value_index(feature, self.next("a value"))

    def range_mask(self, feature: Feature, start: int) -> int:
        left = self.expect_punct("[(")
        a = self.number()
        self.expect_punct(",")
        b = self.number()
        right = self.expect_punct("])")
        r = _Range(float(a), float(b), left == "[", right == "]")
        return _range_mask(feature, r, self.shown(start))

    def value_index(self, feature: Feature, t: _Tok) -> int:
        k = _resolve(feature.values, t)
        if k is None:
            shown = list(feature.values[:10]) + (["..."] if feature.size > 10 else [])
            raise self.error(f"feature {feature.name!r} has no value {t.text}; its values are {shown}.")
        return k

    def label(self) -> _Tok:
        t = self.next("a class label")
        if t.kind not in ("word", "string", "number"):
            raise self.error(f"expected a class label, got {t.text!r}.")
        return t

    def end(self) -> None:
        t = self.peek()
        if t is not None:
            raise self.error(f"unexpected {t.text!r} after the class label.")


def _resolve(values: Sequence[Any], t: _Tok) -> int | None:
    """The index of the value a token names: numbers by value, words by text, strings exactly."""
    if t.kind == "number":
        for k, v in enumerate(values):
            if _is_number(v) and v == t.value:
                return k
    if t.kind == "string":
        for k, v in enumerate(values):
            if isinstance(v, str) and v == t.value:
                return k
        return None
    for k, v in enumerate(values):
        if isinstance(v, str) and v == t.text:
            return k
    return None


def _label_value(t: _Tok) -> Any:
    return t.value


def _read_lines(text: str) -> list[tuple[int, list[_Tok]]]:
    if not isinstance(text, str):
        raise InvalidTypeError(f"'text' must be a str. Got {type(text).__name__} instead.")
    out = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0] if '"' not in raw else _strip_comment(raw)
        if line.strip():
            out.append((lineno, _tokenize(line, lineno)))
    return out


def _strip_comment(raw: str) -> str:
    in_str = False
    esc = False
    for k, ch in enumerate(raw):
        if esc:
            esc = False
        elif ch == "\\" and in_str:
            esc = True
        elif ch == '"':
            in_str = not in_str
        elif ch == "#" and not in_str:
            return raw[:k]
    return raw


def _parse_rules(text: str, space: FeatureSpace) -> tuple[list[tuple[_Conds, _Tok]], _Tok | None]:
    """Rules (conditions, label token) and the default label token."""
    if not isinstance(space, FeatureSpace):
        raise InvalidTypeError(f"'space' must be a FeatureSpace. Got {type(space).__name__} instead.")
    rules: list[tuple[_Conds, _Tok]] = []
    default: _Tok | None = None
    for lineno, toks in _read_lines(text):
        p = _Parser(toks, lineno, space)
        if default is not None:
            raise p.error("nothing may follow the default (ELSE) line.")
        if p.keyword("else"):
            if p.keyword("if"):
                conds = p.conditions()
                if not p.keyword("then"):
                    raise p.error("expected THEN after the conditions.")
                rules.append((conds, p.label()))
            else:
                default = p.label()
        elif p.keyword("default", "otherwise"):
            default = p.label()
        elif p.keyword("if"):
            conds = p.conditions()
            if not p.keyword("then"):
                raise p.error("expected THEN after the conditions.")
            rules.append((conds, p.label()))
        else:
            t = p.peek()
            raise p.error(f"a rule starts with IF, ELSE IF or ELSE. Got {t.text if t else ''!r}.")
        p.end()
    return rules, default


def _classes_from_tokens(toks: Sequence[_Tok], classes: Sequence[Any] | None) -> tuple[list[Any], list[int]]:
    """Class labels (given, or the labels met: sorted if comparable) and each token's class index."""
    if classes is not None:
        classes = list(classes)
        idx = []
        for t in toks:
            k = _resolve(classes, t)
            if k is None:
                raise InvalidInputError(f"Unknown class {t.text}; the classes are {classes}.")
            idx.append(k)
        return classes, idx
    labels: list[Any] = []
    for t in toks:
        v = _label_value(t)
        if v not in labels:
            labels.append(v)
    try:
        labels = sorted(labels)
    except TypeError:
        pass
    return labels, [labels.index(_label_value(t)) for t in toks]


# -- models ---------------------------------------------------------------------

class _RuleModel(Classifier):
    _rules: tuple[tuple[_Conds, int], ...]
    default: Any
    _default: int

    def _rule_conditions(self, rule: Any, where: str) -> tuple[_Conds, Any]:
        if isinstance(rule, Rule):
            return _conditions(self.space, rule.conditions, where), rule.label
        if isinstance(rule, Sequence) and not isinstance(rule, (str, bytes)) and len(rule) == 2:
            return _conditions(self.space, rule[0], where), rule[1]
        raise InvalidTypeError(f"{where} must be a Rule or a (conditions, label) pair. Got {rule!r} instead.")

    @property
    def n_rules(self) -> int:
        """Number of rules (the default not counted)."""
        return len(self._rules)

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rules, with conditions as ``{feature name: tuple of domain values}``."""
        out = []
        for conds, c in self._rules:
            d = {self.space.features[i].name: tuple(self.space.features[i].values[k]
                                                   for k in range(self.space.features[i].size) if m >> k & 1)
                 for i, m in conds}
            out.append(Rule(d, self.classes[c]))
        return tuple(out)

    def _conds_text(self, conds: _Conds) -> str:
        if not conds:
            return "TRUE"
        return " AND ".join(_fmt_condition(self.space.features[i], m) for i, m in conds)

    def _conj(self, builder: "FunctionBuilder[Any]", conds: _Conds) -> Any:
        f = builder.true()
        for i, m in conds:
            f = builder.conj(f, builder.value_in(i, m))
        return f

    def _conds_json(self, conds: _Conds) -> list[list[Any]]:
        return [[i, [k for k in range(self.space.features[i].size) if m >> k & 1]] for i, m in conds]

    @staticmethod
    def _conds_from_json(space: FeatureSpace, raw: Any, where: str) -> _Conds:
        if not isinstance(raw, list):
            raise ModelFormatError(f"{where}: 'conditions' must be a list of [feature, [value indices]].")
        masks: dict[int, int] = {}
        for item in raw:
            if not isinstance(item, list) or len(item) != 2 or not isinstance(item[1], list):
                raise ModelFormatError(f"{where}: a condition must be [feature index, [value indices]]. "
                                       f"Got {str(item)[:80]}.")
            i, ks = item
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < space.n_features:
                raise ModelFormatError(f"{where}: {i!r} is not a feature index.")
            m = 0
            for k in ks:
                if not isinstance(k, int) or not 0 <= k < space.features[i].size:
                    raise ModelFormatError(f"{where}: value index {k!r} is outside feature {i}'s domain.")
                m |= 1 << k
            masks[i] = masks.get(i, _full(space.features[i].size)) & m
        return tuple(sorted((i, m) for i, m in masks.items() if m != _full(space.features[i].size)))

    def _copy_with_space(self, space: FeatureSpace) -> Any:
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.space = space
        return out

    def with_distribution(self, distribution: Any) -> Any:
        return self._copy_with_space(self.space.with_distribution(distribution))

    def __str__(self) -> str:
        return self.to_text()

    def to_text(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError


class DecisionList(_RuleModel):
    """An ordered list of rules and a default class: the first matching rule decides.

    Parameters
    ----------
    space : FeatureSpace
    classes : sequence
        The class labels.
    rules : sequence of Rule or (conditions, label) pairs
        In order; see :class:`Rule` for conditions.
    default
        The class when no rule matches.

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace
    >>> from kcxai.models import DecisionList
    >>> space = FeatureSpace([Feature.numeric("age", [30, 40]), Feature.categorical("sex", ["F", "M"])])
    >>> dl = DecisionList.from_text('''
    ...     IF age in (30, 40] AND sex = F THEN 1
    ...     ELSE IF sex = M THEN 0
    ...     ELSE 1''', space)
    >>> dl.predict([35, "F"]), dl.predict([35, "M"]), dl.predict([50, "F"])
    (1, 0, 1)
    >>> print(dl)
    IF age in (30, 40] AND sex = F THEN 1
    ELSE IF sex = M THEN 0
    ELSE 1
    """

    model_type = "decision_list"

    def __init__(self, space: FeatureSpace, classes: Sequence[Any], rules: Sequence[Any], default: Any) -> None:
        if not isinstance(space, FeatureSpace):
            raise InvalidTypeError(f"'space' must be a FeatureSpace. Got {type(space).__name__} instead.")
        self.space = space
        self._init_classes(classes)
        if isinstance(rules, (str, bytes)) or not isinstance(rules, Sequence):
            raise InvalidTypeError(f"'rules' must be a sequence of rules. Got {type(rules).__name__} instead.")
        out = []
        for r, rule in enumerate(rules):
            conds, label = self._rule_conditions(rule, f"'rules[{r}]'")
            out.append((conds, self.class_index(label)))
        self._rules = tuple(out)
        self._default = self.class_index(default)
        self.default = self.classes[self._default]

    @classmethod
    def from_text(cls, text: str, space: FeatureSpace, *, classes: Sequence[Any] | None = None) -> "DecisionList":
        """Read a decision list from its text form (see the module docstring).

        Lines are ``IF ... THEN c``, then ``ELSE IF ... THEN c``, and a last
        ``ELSE c`` (the default, required). Without ``classes`` the classes are
        the labels used, sorted (numbers as numbers).
        """
        rules, default = _parse_rules(text, space)
        if default is None:
            raise InvalidInputError("A decision list needs a default: end it with a line 'ELSE <class>'.")
        classes, idx = _classes_from_tokens([t for _, t in rules] + [default], classes)
        dl = object.__new__(cls)
        dl.space = space
        dl._init_classes(classes)
        dl._rules = tuple((conds, k) for (conds, _), k in zip(rules, idx))
        dl._default = idx[-1]
        dl.default = dl.classes[dl._default]
        return dl

    @classmethod
    def from_imodels(cls, clf: Any, *, domains: Sequence[Sequence[Any]], feature_names: Sequence[str] | None = None,
                     distribution: Any = None) -> "DecisionList":
        """Import a fitted ``imodels.GreedyRuleListClassifier`` (optional extra ``kcxai[rules]``).

        Each of its rules tests one feature, ``x >= cutoff`` (or ``x < cutoff``
        when flipped), and gives a probability ``p`` of the second class; the
        rule's class is ``argmax([1 - p, p])`` computed as imodels does, in
        float64. ``domains`` (required) gives each feature's values; a rule
        becomes the set of values that satisfy its test.

        Parameters
        ----------
        clf : imodels.GreedyRuleListClassifier
        domains : sequence
            One list of real values per feature.
        feature_names : sequence of str, optional
            Defaults to the names imodels recorded (``clf.feature_names_``).
        distribution : optional
            Passed to :class:`~kcxai.FeatureSpace`.
        """
        return _from_imodels(cls, clf, domains, feature_names, distribution)

    def predict_point(self, point: Sequence[int]) -> int:
        for conds, c in self._rules:
            if _matches(conds, point):
                return c
        return self._default

    def rule_of(self, instance: Any) -> int | None:
        """The index of the rule that decides an instance (``None``: the default)."""
        point = self.space.encode(instance)
        for r, (conds, _) in enumerate(self._rules):
            if _matches(conds, point):
                return r
        return None

    def build(self, builder: "FunctionBuilder[Any]") -> list[Any]:
        """One function per class, from the last rule up: ``rule_r ? [c = c_r] : rest``."""
        k = len(self.classes)
        out = [builder.true() if c == self._default else builder.false() for c in range(k)]
        for conds, label in reversed(self._rules):
            cond = self._conj(builder, conds)
            not_cond = builder.neg(cond)
            for c in range(k):
                rest = builder.conj(not_cond, out[c])
                out[c] = builder.disj(cond, rest) if c == label else rest
        return out

    def to_text(self) -> str:
        """The readable form, which :meth:`from_text` reads back."""
        lines = []
        for r, (conds, c) in enumerate(self._rules):
            head = "IF" if r == 0 else "ELSE IF"
            lines.append(f"{head} {self._conds_text(conds)} THEN {_fmt_value(self.classes[c])}")
        lines.append(f"ELSE {_fmt_value(self.default)}" if self._rules else f"DEFAULT {_fmt_value(self.default)}")
        return "\n".join(lines)

    def _body_to_dict(self) -> dict[str, Any]:
        return {"rules": [{"conditions": self._conds_json(conds), "class": c} for conds, c in self._rules],
                "default": self._default}

    @classmethod
    def _from_body(cls, space: FeatureSpace, classes: list[Any], body: dict[str, Any]) -> "DecisionList":
        dl = object.__new__(cls)
        dl.space = space
        dl._init_classes(classes)
        rules = []
        for r, rule in enumerate(body["rules"]):
            c = rule["class"]
            if not isinstance(c, int) or not 0 <= c < len(dl.classes):
                raise ModelFormatError(f"rules[{r}]: 'class' must be a class index. Got {c!r}.")
            rules.append((cls._conds_from_json(space, rule["conditions"], f"rules[{r}]"), c))
        d = body["default"]
        if not isinstance(d, int) or not 0 <= d < len(dl.classes):
            raise ModelFormatError(f"'default' must be a class index. Got {d!r}.")
        dl._rules = tuple(rules)
        dl._default = d
        dl.default = dl.classes[d]
        return dl

    def __repr__(self) -> str:
        return f"DecisionList({len(self._rules)} rules, {self.space.n_features} features, {len(self.classes)} classes)"


class RuleSet(_RuleModel):
    """Unordered rules for one class and a default: the class iff some rule matches.

    Parameters
    ----------
    space : FeatureSpace
    classes : sequence
        The class labels.
    rules : sequence of Rule or (conditions, label) pairs
        All with the same label (the rule set's :attr:`label`).
    default
        The class when no rule matches.
    label : optional
        The class of the rules; required when ``rules`` is empty, checked otherwise.

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace
    >>> from kcxai.models import RuleSet
    >>> space = FeatureSpace([Feature.categorical(n, [0, 1, 2]) for n in ("a", "b")])
    >>> rs = RuleSet.from_text('''
    ...     IF a = 2 THEN yes
    ...     IF a = 1 AND b != 0 THEN yes
    ...     ELSE no''', space)
    >>> rs.predict([1, 2]), rs.predict([1, 0]), rs.classes
    ('yes', 'no', ('no', 'yes'))
    """

    model_type = "rule_set"

    def __init__(self, space: FeatureSpace, classes: Sequence[Any], rules: Sequence[Any], default: Any, *,
                 label: Any = None) -> None:
        if not isinstance(space, FeatureSpace):
            raise InvalidTypeError(f"'space' must be a FeatureSpace. Got {type(space).__name__} instead.")
        self.space = space
        self._init_classes(classes)
        if isinstance(rules, (str, bytes)) or not isinstance(rules, Sequence):
            raise InvalidTypeError(f"'rules' must be a sequence of rules. Got {type(rules).__name__} instead.")
        conds_list = []
        labels = set()
        for r, rule in enumerate(rules):
            conds, lab = self._rule_conditions(rule, f"'rules[{r}]'")
            conds_list.append(conds)
            labels.add(self.class_index(lab))
        if label is not None:
            labels.add(self.class_index(label))
        if len(labels) != 1:
            raise InvalidInputError(
                "A RuleSet's rules must all conclude one class (give 'label' when there are no rules). "
                f"Got the classes {[self.classes[c] for c in sorted(labels)]}.")
        (lab_index,) = labels
        self._set(tuple(conds_list), lab_index, self.class_index(default))

    def _set(self, conds: tuple[_Conds, ...], label: int, default: int) -> None:
        self._rules = tuple((c, label) for c in conds)
        self._label = label
        self.label = self.classes[label]
        self._default = default
        self.default = self.classes[default]

    @classmethod
    def from_text(cls, text: str, space: FeatureSpace, *, classes: Sequence[Any] | None = None) -> "RuleSet":
        """Read a rule set: lines ``IF ... THEN c`` (one class ``c``) and ``ELSE d`` (the default, required)."""
        rules, default = _parse_rules(text, space)
        if default is None:
            raise InvalidInputError("A rule set needs a default: end it with a line 'ELSE <class>'.")
        classes, idx = _classes_from_tokens([t for _, t in rules] + [default], classes)
        if len(set(idx[:-1])) > 1:
            raise InvalidInputError(
                f"A rule set's rules must all conclude one class. Got {sorted({classes[k] for k in idx[:-1]}, key=str)}; "
                "use a DecisionList for rules with different classes.")
        if not rules:
            raise InvalidInputError("A rule set read from text needs at least one rule (IF ... THEN c).")
        rs = object.__new__(cls)
        rs.space = space
        rs._init_classes(classes)
        rs._set(tuple(c for c, _ in rules), idx[0], idx[-1])
        return rs

    @classmethod
    def from_wittgenstein(cls, clf: Any, space: FeatureSpace | Mapping[str, Sequence[Any]], *,
                          classes: Sequence[Any] = (0, 1)) -> "RuleSet":
        """Import a fitted ``wittgenstein`` RIPPER or IREP classifier (optional extra ``kcxai[rules]``).

        Parameters
        ----------
        clf : wittgenstein.RIPPER or wittgenstein.IREP
            Fitted on discrete features (``n_discretize_bins=None`` or features
            with few values): conditions must be ``feature = value``.
        space : FeatureSpace or mapping
            The features (names as in the training data), or a mapping
            ``{name: domain values}`` in feature order.
        classes : pair, default (0, 1)
            Labels for "not positive" and "positive": wittgenstein predicts
            ``True`` for the positive class, and ``clf.classes_`` is ``[0, 1]``.
        """
        return _from_wittgenstein(cls, clf, space, classes)

    def predict_point(self, point: Sequence[int]) -> int:
        for conds, _ in self._rules:
            if _matches(conds, point):
                return self._label
        return self._default

    def build(self, builder: "FunctionBuilder[Any]") -> list[Any]:
        """The class function is the disjunction of the rules; the default its negation."""
        k = len(self.classes)
        pos = builder.false()
        for conds, _ in self._rules:
            pos = builder.disj(pos, self._conj(builder, conds))
        out = [builder.false()] * k
        if self._label == self._default:
            out[self._label] = builder.true()
            return out
        out[self._label] = pos
        out[self._default] = builder.neg(pos)
        return out

    def to_text(self) -> str:
        """The readable form, which :meth:`from_text` reads back."""
        lines = [f"IF {self._conds_text(conds)} THEN {_fmt_value(self.label)}" for conds, _ in self._rules]
        lines.append(f"ELSE {_fmt_value(self.default)}")
        return "\n".join(lines)

    def _body_to_dict(self) -> dict[str, Any]:
        return {"rules": [self._conds_json(conds) for conds, _ in self._rules], "label": self._label,
                "default": self._default}

    @classmethod
    def _from_body(cls, space: FeatureSpace, classes: list[Any], body: dict[str, Any]) -> "RuleSet":
        rs = object.__new__(cls)
        rs.space = space
        rs._init_classes(classes)
        for key in ("label", "default"):
            v = body[key]
            if not isinstance(v, int) or not 0 <= v < len(rs.classes):
                raise ModelFormatError(f"'{key}' must be a class index. Got {v!r}.")
        conds = tuple(cls._conds_from_json(space, r, f"rules[{k}]") for k, r in enumerate(body["rules"]))
        rs._set(conds, body["label"], body["default"])
        return rs

    def __repr__(self) -> str:
        return (f"RuleSet({len(self._rules)} rules for class {self.label!r}, default {self.default!r}, "
                f"{self.space.n_features} features)")


def _from_wittgenstein(cls: type[RuleSet], clf: Any, space: Any, classes: Sequence[Any]) -> RuleSet:
    ruleset = getattr(clf, "ruleset_", None)
    if ruleset is None or not hasattr(ruleset, "rules"):
        raise InvalidTypeError(
            f"'clf' must be a fitted wittgenstein RIPPER or IREP classifier. Got {type(clf).__name__} instead.")
    if isinstance(space, Mapping):
        space = FeatureSpace([Feature.categorical(str(n), list(vs)) for n, vs in space.items()])
    if not isinstance(space, FeatureSpace):
        raise InvalidTypeError(f"'space' must be a FeatureSpace or a mapping name -> values. Got {space!r}.")
    classes = list(classes)
    if len(classes) != 2:
        raise InvalidInputError(f"'classes' must be a pair (not positive, positive). Got {classes!r}.")
    binned = getattr(getattr(clf, "bin_transformer_", None), "bins_", None) or {}
    rules = []
    for r, rule in enumerate(ruleset.rules):
        conds = []
        for cond in rule.conds:
            name = str(cond.feature)
            if name in binned:
                raise InvalidInputError(
                    f"Rule {r} tests the discretised feature {name!r} ({cond}); kcxai imports equality "
                    "conditions only: fit with n_discretize_bins=None on discrete features, or discretise first.")
            val = cond.val.item() if hasattr(cond.val, "item") else cond.val
            conds.append((name, val))
        rules.append(Rule(conds, classes[1]))
    return cls(space, classes, rules, classes[0], label=classes[1])


def _from_imodels(cls: type[DecisionList], clf: Any, domains: Any, feature_names: Any,
                  distribution: Any) -> DecisionList:
    import numpy as np

    from kcxai.models._sklearn import check_domains, sklearn_feature_names

    rules = getattr(clf, "rules_", None)
    if type(clf).__name__ != "GreedyRuleListClassifier" or not isinstance(rules, list) or not rules:
        raise InvalidTypeError(
            f"'clf' must be a fitted imodels GreedyRuleListClassifier. Got {type(clf).__name__} instead.")
    n = int(clf.n_features_in_)
    if feature_names is None and getattr(clf, "feature_names_", None) is not None:
        feature_names = [str(x) for x in clf.feature_names_]
    names = sklearn_feature_names(clf, n, feature_names)
    doms = check_domains(domains, n)
    if any(d is None for d in doms):
        raise InvalidInputError("'domains' must give the values of every feature (the rules compare them "
                                "with cutoffs). Got None for some.")
    space = FeatureSpace([Feature.categorical(names[i], doms[i]) for i in range(n)], distribution=distribution)
    classes = list(clf.classes_)
    if len(classes) != 2:
        raise InvalidInputError(f"A greedy rule list has two classes. Got {classes!r}.")

    def label(p: Any) -> Any:  # imodels: argmax of the row (1 - p, p) in float64; ties to the first
        return classes[int(np.argmax(np.array([1.0 - float(p), float(p)])))]

    out = []
    for rule in rules[:-1]:
        i, cut = int(rule["index_col"]), float(rule["cutoff"])
        values = [v for v in doms[i] if ((float(v) < cut) if rule["flip"] else (float(v) >= cut))]
        out.append(Rule([(i, values)], label(rule["val_right"])))
    return cls(space, classes, out, label(rules[-1]["val"]))
