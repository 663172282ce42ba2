"""The one rule for null, NaN and unscored verdicts, which every metric applies first: ``with_verdicts``.

The rule lives in the frames layer (``bench_nb.frames.verdicts``) so that the frames' own statistics
(``disputed_questions``, ``split_verdicts``) apply the same function the metrics do; it is imported here
under the name every metric uses. docs/statistics.md ("Null, NaN and unscored verdicts").
"""

from __future__ import annotations

from bench_nb.frames.verdicts import with_verdicts

__all__ = ["with_verdicts"]
