"""The metadata of the bundled PMLB datasets (YAML): column types and the value maps of coded columns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kcxai._errors import InvalidInputError, MissingDependencyError

__all__ = ["Metadata", "parse_metadata", "parse_code"]

_ENTRY = re.compile(r"'((?:[^']|'')*)'\s*=\s*(-?\d+)")


def parse_code(code: Any) -> dict[int, str]:
    """A PMLB ``code`` field (``"'<=50K' = 1, '>50K' = 0"``) as ``{code: label}``; empty when it gives none.

    Examples
    --------
    >>> from kcxai.datasets._metadata import parse_code
    >>> parse_code("'<=50K' = 1, \\n'>50K' = 0\\n")
    {1: '<=50K', 0: '>50K'}
    >>> parse_code("None yet. See our contributing guide to help us add one.")
    {}
    """
    if not isinstance(code, str):
        return {}
    return {int(k): label.replace("''", "'") for label, k in _ENTRY.findall(code)}


@dataclass(frozen=True)
class Metadata:
    """What a dataset's metadata says about its columns.

    Attributes
    ----------
    types : dict
        Column name -> PMLB type (``"continuous"``, ``"categorical"``, ``"ordinal"``, ``"binary"``).
    value_maps : dict
        Column name -> ``{code: label}`` for the columns whose codes the metadata names.
    target_map : dict
        ``{code: label}`` of the target, or empty.
    """

    types: dict[str, str]
    value_maps: dict[str, dict[int, str]]
    target_map: dict[int, str]


def parse_metadata(text: str, *, name: str = "dataset") -> Metadata:
    """Read a PMLB ``metadata.yaml`` text with a YAML parser (PyYAML)."""
    try:
        # pyyaml (about 0.01 s) loads only when a dataset's metadata is read, not with kcxai
        import yaml
    except ImportError:  # pragma: no cover - pyyaml is a dependency
        raise MissingDependencyError("Reading dataset metadata needs PyYAML: pip install pyyaml") from None
    doc = yaml.safe_load(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("features"), list):
        raise InvalidInputError(f"Dataset {name!r}: the metadata has no 'features' list.")
    types: dict[str, str] = {}
    maps: dict[str, dict[int, str]] = {}
    for entry in doc["features"]:
        if not isinstance(entry, dict) or "name" not in entry:
            raise InvalidInputError(f"Dataset {name!r}: malformed feature entry {entry!r} in the metadata.")
        col = str(entry["name"])
        types[col] = str(entry.get("type"))
        m = parse_code(entry.get("code"))
        if m:
            maps[col] = m
    target = doc.get("target")
    return Metadata(types, maps, parse_code(target.get("code")) if isinstance(target, dict) else {})
