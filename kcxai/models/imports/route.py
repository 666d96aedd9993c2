"""How what a user passes becomes a kcxai model: the one import the :class:`~kcxai.Explainer` and the
functional door (:func:`kcxai.from_sklearn`, :func:`kcxai.from_pipeline`) share.

:func:`import_model` takes a kcxai model, an :class:`~kcxai.models.ImportedPipeline`, a fitted scikit-learn
``Pipeline`` or a fitted scikit-learn-API classifier, and gives the kcxai model with the reader of its input
tables, its classes renamed if asked, under the distribution asked for (by default the product distribution
fitted on the training rows when there are any: :func:`~kcxai.models.imports._training.with_distribution`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kcxai._errors import InvalidTypeError
from kcxai._table import TableReader
from kcxai.models.classifier import Classifier
from kcxai.models.imports._training import Imported, relabel, with_distribution
from kcxai.models.imports.pipeline import ImportedPipeline, columns_missing_in, import_pipeline
from kcxai.models.imports.sklearn import import_estimator

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.data import DataLike

__all__ = ["Imported", "import_model"]


def _source(model: Classifier, X_train: DataLike) -> Imported:
    """The kcxai model of what the user passed (under its own distribution) and the reader of its tables."""
    if isinstance(model, Classifier):
        return Imported(model, TableReader.for_space(model.space))
    if isinstance(model, ImportedPipeline):  # e.g. from_pipeline(pipe).rounded(step): the pipeline's reader kept
        return Imported(model.model, model.reader)
    from sklearn.base import BaseEstimator  # scikit-learn loads on first import of an estimator, not with kcxai
    from sklearn.pipeline import Pipeline

    if isinstance(model, Pipeline):
        imported = import_pipeline(model, distribution=None, missing_columns=(),
                                   seen_missing=columns_missing_in(model, X_train))
        return Imported(imported.model, imported.reader)
    if isinstance(model, BaseEstimator):
        return import_estimator(model, X_train)
    raise InvalidTypeError(
        "'model' must be a kcxai model, a CompiledModel, a fitted scikit-learn classifier or Pipeline, or an "
        f"ImportedPipeline (kcxai.from_pipeline). Got {type(model).__name__} instead.")


def import_model(model: Any, X_train: DataLike = None, *, distribution: Any = "auto",
                 distribution_options: Mapping[str, Any] | None = None,
                 class_names: Mapping[Any, Any] | None = None) -> Imported:
    """The kcxai model of ``model`` and the reader of its input tables, as the :class:`~kcxai.Explainer` takes
    them (see its parameters).

    Parameters
    ----------
    model : Classifier, ImportedPipeline, sklearn Pipeline or fitted sklearn-API classifier
    X_train : table, optional
        Training rows: the distribution ``"auto"`` is fitted on, a linear model's domains, and the columns
        that may be missing.
    distribution, distribution_options
        See :func:`~kcxai.models.imports._training.with_distribution`.
    class_names : mapping, optional
        Printed names of the classes, ``{class: name}``.

    Returns
    -------
    Imported
        ``(model, reader)``.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> imported = import_model(tree, [[1, 1, 1, 1, 0, 0, 0, 0, 1]], class_names={1: "yes"})
    >>> imported.model.classes, imported.model.space.distribution.kind
    ((0, 'yes'), 'product')
    """
    imported, reader = _source(model, X_train)
    if class_names is not None:
        imported = relabel(imported, class_names)
    return Imported(with_distribution(imported, distribution, X_train, reader, distribution_options), reader)
