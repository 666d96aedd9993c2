"""Reading a rule back: the box of values (one mask per feature) and the class a rule's text or mapping names.

Every rule kcxai prints reads back to the box it was printed from (:meth:`kcxai.Explanation.rule`,
:attr:`kcxai.Condition.literal`, :meth:`kcxai.RuleScore.rule`), and so do rules people write in the same
words. A numeric bound is read as the split it denotes for the values the feature reads (float32 or
float64), its decimal read as the model reads the same decimal in an input row
(:meth:`kcxai.Feature.bound_position`): ``petal width <= 0.7`` on a scikit-learn tree whose threshold is
0.7000000029802322 is that threshold's cut, since ``float32(0.7)`` is the last float32 at or below it.

Grammar (one literal per feature and condition; several on one feature are intersected)::

    rule     := ["IF"] body ["THEN" ["class" "="] CLASS]
    body     := "TRUE" | literal ("AND" literal)*
    literal  := NAME "=" VALUE | NAME "!=" VALUE | NAME "in" "{" VALUE ("," VALUE)* "}"
              | NAME ("<=" | "<" | ">" | ">=") NUMBER | NAME ["in" | "="] INTERVAL
              | literal "or" NAME "=" "missing"
    INTERVAL := ("(" | "[") NUMBER "," NUMBER (")" | "]")

A VALUE of a categorical feature is one of its values or labels; of a numeric feature, one of its
printed intervals (``<= 0.7``, ``(0.7, 1.75]``), ``missing``, or in ``=`` a number (the interval holding it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai._feature import MISSING, Feature, Interval
from kcxai.oracle import Box, full_box
from kcxai.space import FeatureSpace

__all__ = ["parse_rule"]

_NUMBER = r"[-+]?(?:inf|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
_NUMBER_RE = re.compile(rf"^{_NUMBER}$")
_INTERVAL = re.compile(rf"^([\(\[])\s*({_NUMBER})\s*,\s*({_NUMBER})\s*([\)\]])$")
_BOUND = re.compile(rf"^(<=|>=|<|>)\s*({_NUMBER})$")
_OP = re.compile(r"^(?:(<=|>=|!=|=|<|>)\s*|(in)\s*(?=[\(\[\{]))(.*)$")


def _mask(ks: Iterable[int]) -> int:
    return sum(1 << k for k in set(ks))


def _number(text: str, where: str) -> float:
    """A printed number as a float (``inf`` / ``-inf`` too); bounds read it as the feature reads an input."""
    text = text.strip()
    if not _NUMBER_RE.match(text):
        raise InvalidInputError(f"{where}: {text!r} is not a number.")
    return float(text)


def _cells(feat: Feature, a: int, b: int, where: str) -> int:
    """Intervals ``a .. b - 1`` of a numeric feature, or an error when there are none."""
    if a >= b:
        raise InvalidInputError(f"{where}: no value of {feat.name!r} meets it (the interval is empty).")
    return _mask(range(a, b))


def _position(feat: Feature, number: float, strict: bool, where: str) -> int:
    try:
        return feat.bound_position(number, strict)
    except InvalidInputError as e:
        raise InvalidInputError(f"{where}: {e}") from None


def _n_intervals(feat: Feature) -> int:
    return len(feat.thresholds or ()) + 1


def _bound_mask(feat: Feature, op: str, number: float, where: str) -> int:
    """``x op number`` on a numeric feature: the intervals it holds (never the missing value)."""
    if op in ("<=", "<"):
        return _cells(feat, 0, _position(feat, number, op == "<", where), where)
    return _cells(feat, _position(feat, number, op == ">=", where), _n_intervals(feat), where)


def _interval_mask(feat: Feature, text: str, where: str) -> int | None:
    """An interval ``(a, b]`` / ``[a, b)`` / ... or a bound ``<= b`` / ``> a`` of a numeric feature, else ``None``."""
    m = _INTERVAL.match(text)
    if m is not None:
        lb, a, b, rb = m.groups()
        low = _position(feat, _number(a, where), lb == "[", where)
        high = _position(feat, _number(b, where), rb == ")", where)
        return _cells(feat, low, high, where)
    m = _BOUND.match(text)
    if m is not None:
        return _bound_mask(feat, m.group(1), _number(m.group(2), where), where)
    return None


def _normal(text: str) -> str:
    return " ".join(text.split())


def _category(feat: Feature, value: Any, where: str) -> int:
    """The value number of a domain value or, in text, of its label (spaces compared as one)."""
    if isinstance(value, str):
        for k in range(feat.size):
            if feat.label(k) == value or str(feat.values[k]) == value:
                return k
        loose = [k for k in range(feat.size) if _normal(feat.label(k)) == _normal(value)]
        if len(loose) == 1:
            return loose[0]
        shown = [feat.label(k) for k in range(min(feat.size, 10))] + (["..."] if feat.size > 10 else [])
        raise InvalidInputError(f"{where}: {value!r} is not a value of {feat.name!r}; its values are {shown}.")
    try:
        return feat.index(value)
    except (InvalidInputError, InvalidTypeError) as e:
        raise InvalidInputError(f"{where}: {e}") from None


def _member(feat: Feature, text: str, where: str) -> int:
    """The mask of one member of a set ``{...}``: a value or label; for a numeric feature also an interval's
    text or ``missing``."""
    if feat.is_numeric:
        for k in range(feat.size):
            if feat.label(k) == text:
                return 1 << k
        got = _interval_mask(feat, text, where)
        if got is not None:
            return got
    return 1 << _category(feat, text, where)


def _set(feat: Feature, text: str, where: str) -> int:
    """``{a, b, c}``: members may themselves hold ", ", so pieces are joined until they name a member."""
    if not (text.startswith("{") and text.endswith("}")):
        raise InvalidInputError(f"{where}: expected a set of values in braces, like {{a, b}}. Got {text!r}.")
    pieces = [p.strip() for p in text[1:-1].split(",")]
    mask, run, found = 0, "", False
    for p in pieces:
        run = p if not run else f"{run}, {p}"
        try:
            mask |= _member(feat, run, where)
            run, found = "", True
        except InvalidInputError:
            continue
    if run or not found:
        bad = run or text
        raise InvalidInputError(f"{where}: {bad!r} is not a value of {feat.name!r} (values: "
                                f"{[feat.label(k) for k in range(min(feat.size, 10))]}).")
    return mask


def _missing_bit(feat: Feature, where: str) -> int:
    k = feat.missing_index
    if k is None:
        raise InvalidInputError(f"{where}: {feat.name!r} has no missing value.")
    return 1 << k


def _numeric(feat: Feature, op: str, rest: str, where: str) -> int:
    """The mask of ``NAME op rest`` on a numeric feature."""
    if op == "in" and rest.startswith("{"):
        return _set(feat, rest, where)
    if op in ("in", "=") and _INTERVAL.match(rest):
        return _interval_mask(feat, rest, where) or 0
    if op == "in":
        raise InvalidInputError(f"{where}: expected an interval like (30, 52.5] or [30, 52]. Got {rest!r}.")
    if op == "!=":
        raise InvalidInputError(f"{where}: '!=' applies to categorical features; {feat.name!r} is numeric.")
    if op == "=" and rest == str(MISSING):
        return _missing_bit(feat, where)
    number = _number(rest, where)
    if op == "=":
        return 1 << _category(feat, number, where)
    return _bound_mask(feat, op, number, where)


def _feature_literal(feat: Feature, after: str, where: str) -> int | None:
    """The mask of a literal on ``feat`` given the text after its name, or ``None`` when no operator follows."""
    missing = 0
    tail = f" or {feat.name} = {MISSING}"
    if feat.missing_index is not None and after.endswith(tail):  # how set_literal adds the missing value
        after, missing = after[:-len(tail)], 1 << feat.missing_index
    m = _OP.match(after.lstrip())
    if m is None or (m.group(2) and not after[:1].isspace()):
        return None
    op = m.group(1) or m.group(2)
    value = m.group(3).strip()
    if not value:
        raise InvalidInputError(f"{where}: nothing after {op!r}.")
    if feat.is_numeric:
        return _numeric(feat, op, value, where) | missing
    if op == "=":
        return 1 << _category(feat, value, where)
    if op == "!=":
        return ((1 << feat.size) - 1) & ~(1 << _category(feat, value, where))
    if op == "in":
        return _set(feat, value, where)
    raise InvalidInputError(f"{where}: {op!r} compares numbers; {feat.name!r} is categorical.")


def _literal(space: FeatureSpace, text: str) -> tuple[int, int]:
    """``(feature, mask)`` of one literal of a rule's text."""
    where = f"condition {text!r}"
    for name in sorted(space.names, key=len, reverse=True):  # the longest name that starts the literal
        if not text.startswith(name):
            continue
        f = space.feature_index(name)
        mask = _feature_literal(space.features[f], text[len(name):], where)
        if mask is not None:
            return f, mask
    head = re.split(r"\s*(?:<=|>=|!=|=|<|>|\bin\b)", text, maxsplit=1)[0].strip()
    if head and head != text and head not in space.names:
        raise InvalidInputError(f"{where}: unknown column {head!r}; the columns are {list(space.names)}.")
    raise InvalidInputError(
        f"{where}: unparsable; expected 'NAME = value', 'NAME in {{a, b}}', 'NAME <= t', 'NAME > t' or "
        "'NAME in (a, b]'.")


def _literal_start(space: FeatureSpace, text: str) -> str | None:
    """The longest feature name that starts ``text`` followed by an operator, or ``None``."""
    for name in sorted(space.names, key=len, reverse=True):
        if text.startswith(name) and _OP.match(text[len(name):].lstrip()):
            return name
    return None


def _split_literals(space: FeatureSpace, body: str) -> list[str]:
    """The literals of a rule's body, split at `` AND `` where a literal starts next: a feature's name may hold
    "AND" (its pieces stay together), and so may a category's label (a piece that starts no literal goes with
    the one before)."""
    pieces = body.split(" AND ")
    out: list[str] = []
    i = 0
    while i < len(pieces):
        name = _literal_start(space, " AND ".join(pieces[i:]).strip())
        if name is None and out:
            out[-1] = f"{out[-1]} AND {pieces[i]}"
            i += 1
            continue
        k = name.count(" AND ") + 1 if name is not None else 1
        out.append(" AND ".join(pieces[i:i + k]))
        i += k
    return [p.strip() for p in out]


def _text_value(space: FeatureSpace, f: int, value: str, where: str) -> int:
    """A mapping's text condition: a value or label; a literal on the column (``"age <= 0.7"``, as
    :attr:`Condition.literal` prints); or the text after the name (``"<= 0.7"``, ``"in {a, b}"``)."""
    feat = space.features[f]
    if not feat.is_numeric:
        try:
            return 1 << _category(feat, value, where)
        except InvalidInputError:
            pass
    text = value.strip()
    if text.startswith(feat.name):
        got = _feature_literal(feat, text[len(feat.name):], where)
        if got is not None:
            return got
    got = _feature_literal(feat, " " + text, where)
    if got is not None:
        return got
    if feat.is_numeric:
        if text == str(MISSING):
            return _missing_bit(feat, where)
        raise InvalidInputError(
            f"{where}: a numeric condition as text is like '> 37.5', '<= 40' or 'in (30, 52.5]'. Got {value!r}.")
    return 1 << _category(feat, value, where)


def _value_mask(space: FeatureSpace, f: int, value: Any, where: str) -> int:
    """The mask of one mapping entry's condition."""
    feat = space.features[f]
    if isinstance(value, Interval):
        if not feat.is_numeric:
            raise InvalidInputError(f"{where}: an Interval applies to numeric features; {feat.name!r} is categorical.")
        if value in feat.values:
            return 1 << feat.values.index(value)
        low = _position(feat, value.low, False, where)
        return _cells(feat, low, _position(feat, value.high, False, where), where)
    if isinstance(value, (set, frozenset, list, tuple)):
        if not value:
            raise InvalidInputError(f"{where}: the set of values is empty.")
        mask = 0
        for v in value:
            mask |= _text_value(space, f, v, where) if isinstance(v, str) else 1 << _category(feat, v, where)
        return mask
    if isinstance(value, str):
        return _text_value(space, f, value, where)
    return 1 << _category(feat, value, where)


def _class_of(classes: Sequence[Any], head: str) -> int:
    m = re.match(r"^(?:class\s*=\s*)?(.+)$", head)
    name = m.group(1).strip() if m else head
    for k, c in enumerate(classes):
        if str(c) == name:
            return k
    loose = [k for k, c in enumerate(classes) if _normal(str(c)) == _normal(name)]
    if len(loose) == 1:
        return loose[0]
    raise InvalidInputError(f"the rule's class {name!r} is not a class of the model; its classes are "
                            f"{[str(c) for c in classes]}.")


def parse_rule(space: FeatureSpace, classes: Sequence[Any], rule: Any) -> tuple[Box, int | None]:
    """A rule's box and class index (``None`` when it names no class).

    Parameters
    ----------
    space : FeatureSpace
    classes : sequence
        The model's classes (a ``THEN`` class is matched against them, also by its printed form).
    rule : mapping or str
        ``{column: condition}``, a condition being a value (a numeric value stands for its interval),
        an :class:`~kcxai.Interval`, a set/list of values, or text: a literal as kcxai prints it
        (``Condition.literal``, with or without the column's name: ``"age > 37.5"``, ``"> 37.5"``,
        ``"in (30, 52.5]"``, ``"in {a, b}"``); or the text of a rule, ``IF lit AND ... [THEN class = c]``,
        with literals as kcxai prints them (``x = v``, ``x in {a, b}``, ``x <= t``, ``x > t``, ``x < t``,
        ``x >= t``, ``x in (a, b]``, ``... or x = missing``; also ``[a, b]`` and ``!=`` for categories).
        A numeric bound is read as the split it denotes for the values the feature reads (see the
        module). Several conditions on one column are intersected.

    Raises
    ------
    InvalidInputError
        Naming the part at fault: an unknown column, a value outside the column's domain, an empty
        condition, a bound that cuts an interval of a numeric feature, an unknown class, unparsable text.

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace
    >>> space = FeatureSpace([Feature.numeric("age", [30, 40, 50]), Feature.categorical("job", ["a", "b", "c"])])
    >>> parse_rule(space, [0, 1], "IF age in (30, 50] AND job in {a, c} THEN class = 1")
    ((6, 5), 1)
    >>> parse_rule(space, [0, 1], {"age": "> 40"}), parse_rule(space, [0, 1], {"age": "age > 40"})
    (((12, 7), None), ((12, 7), None))
    """
    box = list(full_box(space))
    if isinstance(rule, Mapping):
        for key, value in rule.items():
            where = f"condition on {key!r}"
            if not isinstance(key, str) or key not in space.names:
                raise InvalidInputError(f"{where}: unknown column {key!r}; the columns are {list(space.names)}.")
            f = space.feature_index(key)
            box[f] &= _value_mask(space, f, value, where)
            if not box[f]:
                raise InvalidInputError(f"{where}: no value of {key!r} meets it (empty).")
        return tuple(box), None
    if not isinstance(rule, str):
        raise InvalidTypeError(f"'rule' must be a mapping {{column: condition}} or a rule's text. Got "
                               f"{type(rule).__name__} instead.")
    text = " ".join(rule.split())
    if text.upper().startswith("CHANGE "):
        raise InvalidInputError(
            f"'rule' {rule!r} is a dual set's statement (freeing its features may change the class), not a rule "
            "with conditions: a dual set has no rule of its own to score.")
    if text.upper().startswith("IF "):
        text = text[3:]
    then = re.match(r"^(.*?)(?:^|\s)THEN\s+(.*)$", text)
    body, label = text, None
    if then is not None:
        body = then.group(1)
        label = _class_of(classes, then.group(2).strip())
    body = body.strip()
    if not body:
        raise InvalidInputError(f"'rule' {rule!r} is unparsable: it has no conditions (write TRUE for none).")
    if body.upper() != "TRUE":
        for lit in _split_literals(space, body):
            f, m = _literal(space, lit)
            box[f] &= m
            if not box[f]:
                raise InvalidInputError(f"condition {lit!r}: with the rule's other conditions on "
                                        f"{space.names[f]!r}, no value meets it (empty).")
    return tuple(box), label
