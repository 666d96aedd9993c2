"""What a classifier is, for kcxai: a function from a finite feature space to classes."""

from __future__ import annotations

import abc
import json
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from kcxai._errors import InvalidInputError, InvalidTypeError, ModelFormatError
from kcxai.space import FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.compilers._builder import FunctionBuilder

__all__ = ["Classifier", "load_model", "model_from_dict", "FORMAT_NAME", "FORMAT_VERSION"]

#: The ``format`` field of kcxai's JSON model files.
FORMAT_NAME = "kcxai-model"
#: The current version of the JSON model format: 2 added mixture distributions. A model is written
#: as version 1 unless its distribution is a mixture, so that files older readers can read stay readable.
FORMAT_VERSION = 2
#: The versions this kcxai reads.
READABLE_VERSIONS = (1, 2)

_MODEL_TYPES: dict[str, type["Classifier"]] = {}


def _json_scalar(x: Any, what: str) -> Any:
    """A class label as a plain JSON scalar (numpy scalars become the Python ones they stand for)."""
    if isinstance(x, str):
        return str(x)
    if hasattr(x, "item") and callable(x.item):
        x = x.item()
    if not isinstance(x, (str, int, float, bool)):
        raise InvalidTypeError(f"{what} must be str, int, float or bool. Got {x!r} ({type(x).__name__}) instead.")
    return x


class Classifier(abc.ABC):
    """A classifier over a finite :class:`~kcxai.space.FeatureSpace`.

    Subclasses implement :meth:`predict_point` (on value indices) and the JSON
    round trip; :meth:`predict` validates user instances once and delegates.
    """

    #: The ``type`` tag of the model in JSON files.
    model_type: ClassVar[str] = ""

    space: FeatureSpace
    classes: tuple[Any, ...]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.model_type:
            _MODEL_TYPES[cls.model_type] = cls

    def _init_classes(self, classes: Sequence[Any]) -> None:
        classes = tuple(_json_scalar(c, "Class labels") for c in classes)
        if not classes:
            raise InvalidInputError("'classes' must contain at least one class label. Got none.")
        if len(set(classes)) != len(classes):
            raise InvalidInputError(f"'classes' must be distinct. Got {list(classes)} instead.")
        self.classes = classes
        self._class_index = {c: k for k, c in enumerate(classes)}

    # -- prediction --------------------------------------------------------

    @abc.abstractmethod
    def predict_point(self, point: Sequence[int]) -> int:
        """The class index predicted for a point (a tuple of value indices)."""

    def predict(self, instance: Any) -> Any:
        """The class label predicted for one instance given in user values."""
        return self.classes[self.predict_point(self.space.encode(instance))]

    def predict_many(self, instances: Iterable[Any]) -> list[Any]:
        """Class labels for many instances: rows of a 2-D array or of a pandas DataFrame (read by
        column name), or any iterable of instances."""
        if hasattr(instances, "iterrows"):
            return [self.predict(row) for _, row in instances.iterrows()]
        return [self.predict(x) for x in instances]

    def class_index(self, label: Any) -> int:
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

    @abc.abstractmethod
    def build(self, builder: "FunctionBuilder[Any]") -> list[Any]:
        """One Boolean function per class, ``kappa(x) = c``, built with ``builder``.

        The functions partition feature space (exactly one holds at each point).
        Compilers call this; see :mod:`kcxai.compilers._builder`.
        """

    @abc.abstractmethod
    def with_distribution(self, distribution: Any) -> "Classifier":
        """The same classifier over the same features with another distribution."""

    # -- JSON ------------------------------------------------------------

    @abc.abstractmethod
    def _body_to_dict(self) -> dict[str, Any]:
        """The type-specific part of the JSON description."""

    @classmethod
    @abc.abstractmethod
    def _from_body(cls, space: FeatureSpace, classes: list[Any], body: dict[str, Any]) -> "Classifier":
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
        """Write the model to a JSON file."""
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh)
            fh.write("\n")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "Classifier":
        """Read a model from a JSON file written by :meth:`save`."""
        model = load_model(path)
        if cls is not Classifier and not isinstance(model, cls):
            raise ModelFormatError(
                f"{os.fspath(path)!r} holds a {type(model).__name__}, not a {cls.__name__}.")
        return model


def model_from_dict(d: Any) -> Classifier:
    """Build a model from the dict form written by :meth:`Classifier.to_dict`."""
    if not isinstance(d, dict):
        raise ModelFormatError(f"A kcxai model must be a JSON object. Got {type(d).__name__} instead.")
    if d.get("format") != FORMAT_NAME:
        raise ModelFormatError(f"Not a kcxai model: 'format' must be {FORMAT_NAME!r}. Got {d.get('format')!r}.")
    if d.get("version") not in READABLE_VERSIONS or isinstance(d.get("version"), bool):
        raise ModelFormatError(
            f"Unsupported kcxai model version {d.get('version')!r}; this kcxai reads versions {list(READABLE_VERSIONS)}.")
    kind = d.get("type")
    if kind not in _MODEL_TYPES:
        import kcxai.models  # noqa: F401  (registers every model type)
    if kind not in _MODEL_TYPES:
        raise ModelFormatError(f"Unknown model type {kind!r}; known types are {sorted(_MODEL_TYPES)}.")
    space = FeatureSpace.from_dict(d.get("space", {}))
    classes = d.get("classes")
    if not isinstance(classes, list):
        raise ModelFormatError(f"A kcxai model needs a 'classes' list. Got {classes!r}.")
    body = {k: v for k, v in d.items() if k not in ("format", "version", "type", "space", "classes")}
    try:
        return _MODEL_TYPES[kind]._from_body(space, classes, body)
    except (KeyError, TypeError, IndexError) as e:
        raise ModelFormatError(f"Malformed {kind} model: {e!r}") from None


def load_model(path: str | os.PathLike[str]) -> Classifier:
    """Read any kcxai model from a JSON file.

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
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
    except json.JSONDecodeError as e:
        raise ModelFormatError(f"{os.fspath(path)!r} is not valid JSON: {e}") from None
    return model_from_dict(d)
