"""Arguments kept in a public signature after they stopped changing anything: passing one warns.

``accuracy_intervals``' ``seed`` and ``resamples`` (and the ``seed`` of ``pareto_frontier`` and
``budget_curve``, which only passed it on) have changed nothing since the clustered interval became
deterministic (docs/statistics.md): a caller who passes one explicitly believes it matters, so it is told,
once per call site, with a ``DeprecationWarning``; the arguments stay accepted until they are removed.
"""

from __future__ import annotations

import warnings

UNSET = None  # the default of such an argument: anything else counts as passed
NO_RESAMPLING = "the accuracy interval is deterministic (no resampling: docs/statistics.md)"


def warn_unused(function: str, why: str, stacklevel: int = 3, **arguments: object) -> None:
    """Warn (``DeprecationWarning``) when any of ``arguments`` was passed, naming them, ``function`` and
    ``why`` they change nothing. ``stacklevel`` 3 points at the caller of the function that calls this."""
    passed = [name for name, value in arguments.items() if value is not UNSET]
    if passed:
        names = " and ".join(f"{name}=" for name in passed)
        warnings.warn(
            f"{function}({names}...) is deprecated and changes nothing: {why}; drop the argument",
            DeprecationWarning,
            stacklevel=stacklevel,
        )
