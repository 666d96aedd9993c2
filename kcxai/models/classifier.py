"""What a classifier is, for kcxai: a function from a finite feature space to classes."""

from __future__ import annotations

import abc
import json
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError, KcxaiError, ModelFormatError
from kcxai._files import read_text, write_text
from kcxai._untrusted import loads, parse_exact, shorten
from kcxai.space import FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.functions import FunctionBuilder
    from kcxai.distribution import DistributionLike
    from kcxai._types import InstanceLike, Label

__all__ = ["Classifier", "load_model", "model_from_dict", "FORMAT_NAME", "FORMAT_VERSION"]

#: A function handle of the builder a model describes itself with.
F = TypeVar("F")

#: The ``format`` field of kcxai's JSON model files.
FORMAT_NAME = "kcxai-model"
#: The current version of the JSON model format: 2 added mixture distributions. A model is written
#: as version 1 unless its distribution is a mixture, so that files older readers can read stay readable.
FORMAT_VERSION = 2
#: The versions this kcxai reads.
READABLE_VERSIONS = (1, 2)

_MODEL_TYPES: dict[str, type["Classifier"]] = {}


def _json_scalar(x: object, what: str) -> Label:
    """A class label as a plain JSON scalar (numpy scalars become the Python ones they stand for)."""
    if isinstance(x, str):
        return str(x)
    item = getattr(x, "item", None)
    if callable(item):
        x = item()
    if not isinstance(x, (str, int, float, bool)):
        raise InvalidTypeError(f"{what} must be str, int, float or bool. Got {x!r} ({type(x).__name__}) instead.")
    return x


_C = TypeVar("_C", bound="Classifier")


class Classifier(abc.ABC):
    """A classifier over a finite :class:`~kcxai.space.FeatureSpace`.

    Subclasses implement :meth:`predict_point` (on value indices) and the JSON
    round trip; :meth:`predict` validates user instances once and delegates.
    """

    #: The ``type`` tag of the model in JSON files.
    model_type: ClassVar[str] = ""

    space: FeatureSpace
    classes: tuple[Label, ...]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.model_type:
            _MODEL_TYPES[cls.model_type] = cls

    def _init_classes(self, classes: Sequence[object]) -> None:
        labels = tuple(_json_scalar(c, "Class labels") for c in classes)
        if not labels:
            raise InvalidInputError("'classes' must contain at least one class label. Got none.")
        if len(set(labels)) != len(labels):
            raise InvalidInputError(f"'classes' must be distinct. Got {list(labels)} instead.")
        self.classes = labels
        self._class_index: dict[object, int] = {c: k for k, c in enumerate(labels)}

    # -- prediction --------------------------------------------------------

    @abc.abstractmethod
    def predict_point(self, point: Sequence[int]) -> int:
        """The class index predicted for a point (a tuple of value indices)."""

    def predict_points(self, points: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
        """The class indices predicted for many encoded points at once (exact, as :meth:`predict_point`).

        ``points`` is a 2-D integer array, one row of value indices per point; the result is a 1-D
        ``int64`` array. This base version loops over :meth:`predict_point`, so every model has it;
        trees, forests and boosted trees override it with a vectorised walk (the ``sampling``
        language classifies its samples through it). Points are not validated (as
        :meth:`predict_point`).

        Examples
        --------
        >>> import numpy as np, kcxai
        >>> tree = kcxai.datasets.running_example_tree()
        >>> pts = np.array([[1, 1, 1, 1, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0, 0, 0, 0]])
        >>> tree.predict_points(pts).tolist() == [tree.predict_point(tuple(p)) for p in pts.tolist()]
        True
        """
        rows = np.asarray(points).tolist()
        return np.fromiter((self.predict_point(tuple(r)) for r in rows), dtype=np.int64, count=len(rows))

    def predict(self, instance: InstanceLike) -> Label:
        """The class label predicted for one instance given in user values."""
        return self.classes[self.predict_point(self.space.encode(instance))]

    def predict_many(self, instances: Iterable[InstanceLike]) -> list[Label]:
        """Class labels for many instances: rows of a 2-D array or of a pandas DataFrame (read by
        column name), or any iterable of instances."""
        if hasattr(instances, "iterrows"):
            return [self.predict(row) for _, row in instances.iterrows()]
        return [self.predict(x) for x in instances]

    def class_index(self, label: object) -> int:
        """The index of a class label in :attr:`classes`."""
        try:
            k = self._class_index[label]
            if isinstance(label, bool) != isinstance(self.classes[k], bool):
                raise KeyError(label)  # True is not the class 1
            return k
        except (KeyError, TypeError):
            raise InvalidInputError(f"Unknown class {label!r}; the classes are {list(self.classes)}.") from None

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return len(self.classes)

    # -- explanation support --------------------------------------------

    def build(self, builder: "FunctionBuilder[F]") -> list[F]:
        """One Boolean function per class, ``kappa(x) = c``, built with ``builder``.

        The functions partition feature space (exactly one holds at each point).
        Compilers call this (through :func:`kcxai.compilers._threshold.class_functions`); a model that
        describes its scores as data instead (``additive_scores()`` or ``additive_trees()``, see
        :mod:`kcxai.functions`) leaves its functions to the compilers and does not implement it.
        """
        raise InvalidTypeError(
            f"{type(self).__name__} has no build(): a model describes its class functions with build(builder) or "
            "its scores as data (additive_scores() or additive_trees()), and the compilers build them "
            "(kcxai.compilers._threshold.class_functions(model, builder)).")

    @abc.abstractmethod
    def with_distribution(self, distribution: DistributionLike) -> "Classifier":
        """The same classifier over the same features with another distribution."""

    def _copy_with_space(self: _C, space: FeatureSpace) -> _C:
        """A shallow copy over ``space``: for models whose other state does not depend on the distribution."""
        out = self._shallow_copy()
        out.space = space
        return out

    def _shallow_copy(self: _C) -> _C:
        """A shallow copy of the model's state, without the compiled forms it keeps
        (:class:`kcxai.engines.choose.EngineCache`: they belong to this model, not to a changed copy)."""
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.__dict__.pop("_engine_cache", None)
        out.__dict__.pop("_box_bounds", None)  # the branch and bound's tables weigh boxes by the distribution
        return out

    def with_classes(self: _C, classes: Sequence[object]) -> _C:
        """The same model with its class labels renamed (``classes[k]`` for class ``k``), nothing recomputed.

        >>> import kcxai
        >>> tree = kcxai.datasets.running_example_tree().with_classes(["no", "yes"])
        >>> tree.predict((1, 1, 1, 1, 0, 0, 0, 0, 1))
        'yes'
        """
        out = self._shallow_copy()
        out._init_classes(classes)
        if len(out.classes) != len(self.classes):
            raise InvalidInputError(
                f"'classes' must name the model's {len(self.classes)} classes. Got {len(out.classes)} instead.")
        trees = self.__dict__.get("trees")
        if trees is not None:  # the members of an ensemble carry the labels too
            out.__dict__["trees"] = tuple(t.with_classes(classes) for t in trees)
        return out

    def __getstate__(self) -> dict[str, Any]:
        """The state pickled (joblib workers): the model without its compiled forms (which hold
        native SDD / BDD / SAT objects; a worker compiles its own)."""
        state = dict(self.__dict__)
        state.pop("_engine_cache", None)
        state.pop("_box_bounds", None)  # rebuilt by a worker that needs it
        return state

    # -- JSON ------------------------------------------------------------

    @abc.abstractmethod
    def _body_to_dict(self) -> dict[str, Any]:
        """The type-specific part of the JSON description."""

    @classmethod
    @abc.abstractmethod
    def _from_body(cls, space: FeatureSpace, classes: list[Label], body: dict[str, Any]) -> "Classifier":
        """Inverse of :meth:`_body_to_dict`."""

    def to_dict(self) -> dict[str, Any]:
        """The model as a JSON-ready dict (see ``docs/model-format.md``)."""
        version = FORMAT_VERSION if self.space.distribution.kind == "mixture" else 1
        return {"format": FORMAT_NAME, "version": version, "type": self.model_type,
                "space": self.space.to_dict(), "classes": list(self.classes), **self._body_to_dict()}

    def to_json(self) -> str:
        """The model as a JSON string."""
        return json.dumps(self.to_dict())

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model to a JSON file.

        The write is atomic: the JSON is built first and written to a temporary file
        next to ``path``, which then replaces it; if anything fails, an existing
        file at ``path`` is left as it was. An unwritable place raises
        :class:`~kcxai.FileAccessError` naming the path.
        """
        write_text(path, json.dumps(self.to_dict()) + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "Classifier":
        """Read a model from a JSON file written by :meth:`save`."""
        model = load_model(path)
        if cls is not Classifier and not isinstance(model, cls):
            raise ModelFormatError(
                f"{os.fspath(path)!r} holds a {type(model).__name__}, not a {cls.__name__}.")
        return model


def _checked_space(d: object) -> FeatureSpace:
    """The feature space of a model dict, its shape and exact weights checked before it is built."""
    if not isinstance(d, dict) or not isinstance(d.get("features"), list):
        raise ModelFormatError(f"A kcxai model needs a 'space' object with a 'features' list. Got {_short(d)}.")
    for k, f in enumerate(d["features"]):
        if not isinstance(f, dict):
            raise ModelFormatError(f"space.features[{k}] must be an object. Got {_short(f)}.")
    dist = d.get("distribution")
    if isinstance(dist, dict) and dist.get("kind") == "mixture":
        pass  # distribution_from_dict checks it, with bounded numbers (no exponents, short strings)
    elif dist is not None:
        if not isinstance(dist, list):
            raise ModelFormatError(
                f"space.distribution must be null, a list or a mixture object. Got {_short(dist)}.")
        for i, ws in enumerate(dist):
            if ws is None:
                continue
            if not isinstance(ws, list):
                raise ModelFormatError(f"space.distribution[{i}] must be null or a list of weights. Got {_short(ws)}.")
            for j, w in enumerate(ws):
                if isinstance(w, str):
                    parse_exact(w, f"space.distribution[{i}][{j}]")
    try:
        return FeatureSpace.from_dict(d)
    except KcxaiError:
        raise
    except (KeyError, TypeError, IndexError, ValueError, AttributeError, OverflowError) as e:
        raise ModelFormatError(f"Malformed 'space': {_short(e)}") from None


def _short_text(x: str, limit: int) -> str:
    return shorten(x, limit)


def _short(x: object, limit: int = 120) -> str:
    return shorten(repr(x), limit)


def model_from_dict(d: object) -> Classifier:
    """Build a model from the dict form written by :meth:`Classifier.to_dict`.

    Every field is checked before it is used; a malformed description raises
    :class:`~kcxai.ModelFormatError` (or another :class:`~kcxai.KcxaiError`)
    naming the field, never a bare ``KeyError`` or ``TypeError``.
    """
    try:
        return _model_from_dict(d)
    except KcxaiError as e:
        if len(str(e)) <= 500:
            raise
        raise type(e)(_short_text(str(e), 500)) from None  # a message quoting a huge value


def _model_from_dict(d: object) -> Classifier:
    if not isinstance(d, dict):
        raise ModelFormatError(f"A kcxai model must be a JSON object. Got {type(d).__name__} instead.")
    if d.get("format") != FORMAT_NAME:
        raise ModelFormatError(f"Not a kcxai model: 'format' must be {FORMAT_NAME!r}. Got {_short(d.get('format'))}.")
    if d.get("version") not in READABLE_VERSIONS or isinstance(d.get("version"), bool):
        raise ModelFormatError(
            f"Unsupported kcxai model version {_short(d.get('version'))}; this kcxai reads versions "
            f"{list(READABLE_VERSIONS)}.")
    kind = d.get("type")
    if not isinstance(kind, str):
        raise ModelFormatError(f"A kcxai model's 'type' must be a string. Got {_short(kind)}.")
    if kind not in _MODEL_TYPES:
        raise ModelFormatError(f"Unknown model type {_short(kind)}; known types are {sorted(_MODEL_TYPES)}.")
    space = _checked_space(d.get("space"))
    classes = d.get("classes")
    if not isinstance(classes, list):
        raise ModelFormatError(f"A kcxai model needs a 'classes' list. Got {_short(classes)}.")
    for k, c in enumerate(classes):
        if not isinstance(c, (str, int, float)):
            raise ModelFormatError(f"classes[{k}] must be a string or a number. Got {_short(c)}.")
    body = {k: v for k, v in d.items() if k not in ("format", "version", "type", "space", "classes")}
    try:
        return _MODEL_TYPES[kind]._from_body(space, classes, body)
    except KcxaiError:
        raise
    except KeyError as e:
        raise ModelFormatError(f"Malformed {kind} model: missing field {_short(e.args[0] if e.args else e)}.") from None
    except (TypeError, IndexError, ValueError, AttributeError, OverflowError) as e:
        # the last net: a family's checks missed a shape (a number where a list was expected, ...)
        raise ModelFormatError(f"Malformed {kind} model: {_short(e, 200)}") from None


def load_model(path: str | os.PathLike[str]) -> Classifier:
    """Read any kcxai model from a JSON file.

    The file is checked before anything is built from it (JSON nesting, number
    sizes, every field; see :mod:`kcxai._untrusted`): a malformed file raises
    :class:`~kcxai.ModelFormatError` naming the file and the place, and a file
    that cannot be read raises :class:`~kcxai.FileAccessError` naming the path.

    Examples
    --------
    >>> import os, tempfile
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> path = os.path.join(tempfile.mkdtemp(), "tree.json")
    >>> tree.save(path)
    >>> again = kcxai.load_model(path)
    >>> type(again).__name__, again.predict((1, 1, 1, 1, 0, 0, 0, 0, 1)), again.n_nodes
    ('DecisionTree', 1, 35)
    """
    where = os.fspath(path) if isinstance(path, (str, os.PathLike)) else repr(path)
    d = loads(read_text(path, what="JSON model"), repr(where))
    try:
        return model_from_dict(d)
    except KcxaiError as e:
        raise type(e)(f"{where!r}: {e}") from None
