"""Explanation algorithms. They only talk to a :class:`~kcxai.oracle.CountingOracle`."""

from kcxai.explain._result import Explanation
from kcxai.explain.idrs import idrs_error, is_idrs, is_min_idrs, min_idrs, precision

__all__ = ["Explanation", "min_idrs", "idrs_error", "is_idrs", "is_min_idrs", "precision"]
