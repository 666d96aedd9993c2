"""Explanation algorithms. They only talk to an oracle through one query object (:class:`~kcxai.explain._query.Query`),
through one door (:func:`~kcxai.explain._door.explain_with`) for every method of the table
(:data:`~kcxai.explain._methods.METHODS`): exact counts, certified estimates or delta = 0 decisions, as each
method's entry allows; the SAT searches for C-delta-relevant sets of decision trees also read the tree's
paths (``_treesat``)."""

from kcxai.explain.explanation import Explanation
from kcxai.explain.cdrs import is_cdrs, is_min_cdrs, local_cdrs, min_cdrs
from kcxai.explain.ensemble_sat import (ensemble_axp, ensemble_cxp, is_ensemble_axp, is_ensemble_cxp,
                                        smallest_ensemble_axp, smallest_ensemble_cxp)
from kcxai.explain.duality import enumerate_idrs, is_dual_idrs, is_min_dual_idrs, min_dual_idrs, smallest_dual_idrs
from kcxai.explain.idrs import idrs_error, is_idrs, is_min_idrs, min_idrs, precision
from kcxai.explain.inflate import inflate, is_inflated
from kcxai.explain.smallest import is_smallest_drs, is_smallest_idrs, smallest_drs, smallest_idrs

__all__ = ["Explanation", "min_idrs", "idrs_error", "is_idrs", "is_min_idrs", "precision",
           "local_cdrs", "min_cdrs", "is_cdrs", "is_min_cdrs", "smallest_drs", "is_smallest_drs",
           "smallest_idrs", "is_smallest_idrs", "min_dual_idrs", "is_dual_idrs", "is_min_dual_idrs",
           "smallest_dual_idrs", "enumerate_idrs", "ensemble_axp", "ensemble_cxp", "smallest_ensemble_axp",
           "smallest_ensemble_cxp", "is_ensemble_axp", "is_ensemble_cxp", "inflate", "is_inflated"]
