"""Reading what a user types on the command line: an instance (``--instance``) and a feature list.

One rule for the vocabulary of an instance (``--values tree|original|auto``):
see :func:`parse_instance`. Errors are :class:`~kcxai.InvalidInputError` with
the option's name, what was expected and what was got.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kcxai._errors import InvalidInputError, KcxaiError, ModelFormatError, name_mismatch
from kcxai._untrusted import loads

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.space import FeatureSpace

__all__ = ["parse_instance", "parse_features", "show_values"]


def show_values(values: Sequence[Any], limit: int = 12) -> str:
    out = [str(v) for v in values[:limit]]
    if len(values) > limit:
        out.append(f"... ({len(values)} values)")
    return ", ".join(out)


def _number(token: str) -> float | None:
    try:
        x = float(token)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _as_text(token: Any) -> str:
    return token.strip() if isinstance(token, str) else json.dumps(token)


def _tree_reading(feature: Any, token: str) -> list[Any]:
    """The domain values (tree values for a .dt tree) that ``token`` names: as printed, or numerically."""
    hits = [v for v in feature.values if str(v) == token]
    if hits:
        return hits[:1]
    x = _number(token)
    if x is None:
        return []
    return [v for v in feature.values if isinstance(v, (int, float)) and not isinstance(v, bool) and v == x][:1]


def _original_reading(feature: Any, token: str) -> list[Any]:
    """The domain values whose label (an original value of a .map file) is ``token``, as text or numerically."""
    hits = [v for v, lab in zip(feature.values, feature.labels) if lab == token]
    if not hits:
        x = _number(token)
        if x is not None:
            hits = [v for v, lab in zip(feature.values, feature.labels) if _number(lab) == x]
    return hits


def _value(feature: Any, token: Any, where: str, values: str = "auto") -> Any:
    """The domain value of ``feature`` that ``token`` (text, or a JSON scalar) names; see :func:`parse_instance`."""
    if feature.is_numeric:
        if isinstance(token, (int, float)) and not isinstance(token, bool):
            return token
        x = _number(str(token)) if isinstance(token, str) else None
        if x is None or math.isnan(x):
            raise InvalidInputError(
                f"{where}: feature {feature.name!r} is numeric: give a finite number. Got {_cut(token)}.")
        return x
    if feature.labels is None:
        if not isinstance(token, str):
            try:
                feature.index(token)
                return token
            except KcxaiError:
                pass
        hits = _tree_reading(feature, _as_text(token))
        if hits:
            return hits[0]
        raise InvalidInputError(
            f"{where}: feature {feature.name!r} takes one of the values {show_values(list(feature.values))}. "
            f"Got {_cut(token)}.")
    text = _as_text(token)
    tree = _tree_reading(feature, text) if values in ("auto", "tree") else []
    orig = _original_reading(feature, text) if values in ("auto", "original") else []
    if len(set(orig)) > 1:
        raise InvalidInputError(
            f"{where}: feature {feature.name!r}: the original value {_cut(text)} stands for several tree values "
            f"{show_values(orig)}; give the tree value (--values tree).")
    if tree and orig and tree[0] != orig[0]:
        t, o = tree[0], orig[0]
        raise InvalidInputError(
            f"{where}: feature {feature.name!r}: {_cut(text)} is ambiguous: as a tree value it is {t} "
            f"(original value {feature.label(feature.index(t))}), as an original value it is tree value {o}. "
            "Choose with --values tree or --values original.")
    if tree or orig:
        return (tree or orig)[0]
    if values == "tree":
        shown = show_values(list(feature.values))
    elif values == "original":
        shown = show_values(list(feature.labels)) + " (original values)"
    else:
        shown = (show_values(list(feature.values)) + " (tree values) or "
                 + show_values(list(feature.labels)) + " (original values)")
    raise InvalidInputError(f"{where}: feature {feature.name!r} takes one of the values {shown}. Got {_cut(token)}.")


def _cut(token: Any) -> str:
    text = repr(token) if isinstance(token, str) else _as_text(token)
    return text if len(text) <= 60 else text[:45] + f"... ({len(text)} characters)"


def parse_instance(space: FeatureSpace, text: str, *, where: str = "--instance", values: str = "auto") -> list[Any]:
    """An instance in user values from command-line text.

    ``text`` is comma-separated values in feature order, or a JSON list, or a
    JSON object mapping every feature name to its value. Numeric features
    take finite numbers; categorical features take one of their domain values
    (matched as printed, or numerically: ``1`` matches ``1.0``).

    Features read from a ``.map`` file have two vocabularies: the tree values
    (the codes in the ``.dt`` file, which are the domain values of the Python
    API) and the original values (after ``=`` in the map). ``values`` chooses:
    ``"tree"`` or ``"original"`` reads every token in that vocabulary only;
    ``"auto"`` (the default) reads a token in both and takes the value it names
    if both readings agree or only one exists, and raises
    :class:`~kcxai.InvalidInputError` when they name different values (the
    token is ambiguous), never guessing.

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace
    >>> space = FeatureSpace([Feature.categorical("colour", ["red", "green"]),
    ...                       Feature.numeric("age", [30]), Feature.categorical("n", [0, 1])])
    >>> parse_instance(space, "green, 35, 1.0")
    ['green', 35.0, 1]
    >>> parse_instance(space, '{"age": 20, "colour": "red", "n": 0}')
    ['red', 20, 0]
    >>> coded = FeatureSpace([Feature.categorical("f0", [1, 3, 5, 7], labels=["0", "2", "3", "1"])])
    >>> parse_instance(coded, "7"), parse_instance(coded, "2"), parse_instance(coded, "3", values="original")
    ([7], [3], [5])
    >>> parse_instance(coded, "3")
    Traceback (most recent call last):
    ...
    kcxai._errors.InvalidInputError: --instance: feature 'f0': '3' is ambiguous: as a tree value it is 3 (original value 2), as an original value it is tree value 5. Choose with --values tree or --values original.
    """  # noqa: E501 (a doctest's one-line error message)
    if values not in ("auto", "tree", "original"):
        raise InvalidInputError(f"'values' must be 'auto', 'tree' or 'original'. Got {values!r}.")
    names = space.names
    text = text.strip()
    if text[:1] in ("[", "{"):
        try:
            parsed = loads(text, where)
        except ModelFormatError as e:
            raise InvalidInputError(str(e)) from None
        if isinstance(parsed, dict):
            wrong = name_mismatch(parsed, names)
            if wrong:
                raise InvalidInputError(f"{where}: a JSON object must give exactly the features {list(names)}. {wrong}")
            tokens = [parsed[n] for n in names]
        elif isinstance(parsed, list):
            tokens = parsed
        else:
            raise InvalidInputError(f"{where}: JSON must be a list or an object. Got {type(parsed).__name__}.")
    else:
        tokens = [t.strip() for t in text.split(",")] if text else []
    if len(tokens) != len(names):
        raise InvalidInputError(
            f"{where}: expected {len(names)} values, one per feature ({show_values(list(names))}). "
            f"Got {len(tokens)}.")
    return [_value(f, t, where, values) for f, t in zip(space.features, tokens)]


def parse_features(space: FeatureSpace, text: str, where: str) -> list[int | str]:
    """Features given by name or 0-based index, comma-separated."""
    out: list[int | str] = []
    for tok in (t.strip() for t in text.split(",")):
        if not tok:
            continue
        if tok in space.names:
            out.append(tok)
        elif tok.isascii() and tok.isdigit() and len(tok) < 10 and int(tok) < space.n_features:
            out.append(int(tok))
        else:
            raise InvalidInputError(
                f"{where}: unknown feature {_cut(tok)}; give names ({show_values(list(space.names))}) "
                f"or 0-based indices below {space.n_features}.")
    return out
