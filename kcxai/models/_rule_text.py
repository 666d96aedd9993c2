"""The readable text form of rules: a reader and a writer.

The grammar is the one documented in :mod:`kcxai.models.rules`. The reader
gives each rule's conditions as :data:`~kcxai.models._rule_conditions.Conds`
and its class as a :class:`Token`; :func:`resolve_labels` turns the tokens into
class indices. The writer gives the shortest form the reader reads back.

Examples
--------
>>> from kcxai import Feature, FeatureSpace
>>> space = FeatureSpace([Feature.numeric("age", [30, 40]), Feature.categorical("sex", ["F", "M"])])
>>> rules, default = parse_rules("IF age > 30 AND sex != M THEN yes  # a comment\\nELSE no", space)
>>> rules[0][0], format_conditions(space, rules[0][0])
(((0, 6), (1, 1)), 'age > 30 AND sex = F')
>>> resolve_labels([rules[0][1], default], None)
(['no', 'yes'], [1, 0])
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai._params import check
from kcxai.models._rule_conditions import Conds, ValueRange, conds_from_masks, full_mask, is_number, range_mask
from kcxai.space import SPACE, Feature, FeatureSpace, Interval

__all__ = ["Token", "parse_rules", "resolve_labels", "format_value", "format_condition", "format_conditions"]

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
class Token:
    """A word of a rule line: its kind, its text and its value (a number, a string's content, the text)."""

    kind: str  # "string", "number", "word", "op", "punct"
    text: str
    value: str | int | float


def _tokenize(line: str, lineno: int) -> list[Token]:
    out: list[Token] = []
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
            out.append(Token("string", text, json.loads(text)))
        elif kind == "atom":
            if _NUMBER.fullmatch(text):
                v: int | float = float(text) if any(c in text.lower() for c in ".ei") else int(text)
                out.append(Token("number", text, v))
            else:
                out.append(Token("word", text, text))
        else:
            out.append(Token(kind or "", text, text))
    return out


def _quote(s: str) -> str:
    if _WORD.fullmatch(s) and s.lower() not in _KEYWORDS and not _NUMBER.fullmatch(s):
        return s
    return json.dumps(s)


def format_value(v: Any) -> str:
    """A value or class label as the reader reads it back (quoted unless a plain word or a number)."""
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


def format_condition(feature: Feature, mask: int) -> str:
    """The condition ``x in {values of mask}`` in its shortest readable form."""
    name = _quote(feature.name)
    ks = [k for k in range(feature.size) if mask >> k & 1]
    miss = feature.missing_index
    if feature.is_numeric and miss is not None and len(ks) == miss and miss not in ks:  # every interval
        return f"{name} != missing"
    if feature.is_numeric and miss is not None and ks and ks[-1] == miss:  # the missing value in a set
        if len(ks) == 1:
            return f"{name} = missing"
        rest = format_condition(feature, mask & ~(1 << miss))
        inner = rest[rest.index("{") + 1:-1] if rest.endswith("}") else _as_interval_text(rest, name)
        return f"{name} in {{{inner}, missing}}"
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
        return f"{name} = {format_value(feature.values[ks[0]])}"
    if len(ks) == feature.size - 1 and feature.size > 2:
        (k,) = [k for k in range(feature.size) if not mask >> k & 1]
        return f"{name} != {format_value(feature.values[k])}"
    return f"{name} in {{{', '.join(format_value(feature.values[k]) for k in ks)}}}"


def _as_interval_text(condition: str, name: str) -> str:
    """``age <= 3`` -> ``(-inf, 3]``, ``age > 3`` -> ``(3, inf)``, ``age in (1, 3]`` -> ``(1, 3]``."""
    body = condition[len(name) + 1:]
    if body.startswith("<= "):
        return f"(-inf, {body[3:]}]"
    if body.startswith("> "):
        return f"({body[2:]}, inf)"
    return body[len("in "):]


def format_conditions(space: FeatureSpace, conds: Conds) -> str:
    """A rule's conditions joined by ``AND`` (``TRUE`` for none)."""
    if not conds:
        return "TRUE"
    return " AND ".join(format_condition(space.features[i], m) for i, m in conds)


class _Parser:
    """A recursive-descent reader of one rule line."""

    def __init__(self, toks: list[Token], lineno: int, space: FeatureSpace) -> None:
        self.toks = toks
        self.pos = 0
        self.lineno = lineno
        self.space = space

    def error(self, msg: str) -> InvalidInputError:
        return InvalidInputError(f"Line {self.lineno}: {msg}")

    def peek(self) -> Token | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def next(self, what: str) -> Token:
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
        if t.kind != "number" or isinstance(t.value, str):
            raise self.error(f"expected a number, got {t.text!r}.")
        return t.value

    def conditions(self) -> Conds:
        if self.keyword("true"):
            return ()
        masks: dict[int, int] = {}
        while True:
            i, m = self.condition()
            masks[i] = masks.get(i, full_mask(self.space.features[i].size)) & m
            if not self.keyword("and"):
                break
        return conds_from_masks(self.space, masks)

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
        full = full_mask(feature.size)
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
        if kind in ("=", "==", "!=") and self.missing_next(feature):
            self.pos += 1
            mask = 1 << (feature.size - 1)
            return i, (full & ~mask) if kind == "!=" else mask
        if kind in ("=", "==", "!="):
            if feature.is_numeric:
                x = self.number()
                raise self.error(
                    f"feature {feature.name!r} is numeric: use a range such as '{feature.name} <= {x}' or "
                    f"'{feature.name} in (a, b]' instead of {kind!r}.")
            mask = 1 << self.value_index(feature, self.next("a value"))
            return i, (full & ~mask) if kind == "!=" else mask
        x = self.number()
        r = {"<": ValueRange(-math.inf, x, False, False), "<=": ValueRange(-math.inf, x, False, True),
             ">": ValueRange(x, math.inf, False, False), ">=": ValueRange(x, math.inf, True, False)}[kind]
        return i, range_mask(feature, r, self.shown(start))

    def shown(self, start: int) -> str:
        return " ".join(t.text for t in self.toks[start:self.pos])

    def missing_next(self, feature: Feature) -> bool:
        """Whether the next token is the word ``missing`` and the feature has the missing value."""
        t = self.peek()
        return (t is not None and t.kind == "word" and t.text == "missing" and feature.missing_index is not None
                and not any(isinstance(v, str) and v == "missing" for v in feature.values))

    def item(self, feature: Feature, start: int) -> int:
        if self.missing_next(feature):
            self.pos += 1
            return 1 << (feature.size - 1)
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
        r = ValueRange(float(a), float(b), left == "[", right == "]")
        return range_mask(feature, r, self.shown(start))

    def value_index(self, feature: Feature, t: Token) -> int:
        k = _resolve(feature.values, t)
        if k is None:
            shown = list(feature.values[:10]) + (["..."] if feature.size > 10 else [])
            raise self.error(f"feature {feature.name!r} has no value {t.text}; its values are {shown}.")
        return k

    def label(self) -> Token:
        t = self.next("a class label")
        if t.kind not in ("word", "string", "number"):
            raise self.error(f"expected a class label, got {t.text!r}.")
        return t

    def end(self) -> None:
        t = self.peek()
        if t is not None:
            raise self.error(f"unexpected {t.text!r} after the class label.")


def _resolve(values: Sequence[Any], t: Token) -> int | None:
    """The index of the value a token names: numbers by value, words by text, strings exactly."""
    if t.kind == "number":
        for k, v in enumerate(values):
            if is_number(v) and v == t.value:
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


def _label_value(t: Token) -> Any:
    return t.value


def _read_lines(text: str) -> list[tuple[int, list[Token]]]:
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


def parse_rules(text: str, space: FeatureSpace) -> tuple[list[tuple[Conds, Token]], Token | None]:
    """Read the text form: every rule (conditions, label token) and the default's label token (or ``None``)."""
    check("space", space, SPACE)
    rules: list[tuple[Conds, Token]] = []
    default: Token | None = None
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


def resolve_labels(toks: Sequence[Token], classes: Sequence[object] | None) -> tuple[list[Any], list[int]]:
    """Class labels (``classes``, or the labels met: sorted if comparable) and each token's class index."""
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
