"""Reading numbers against the usual bands.

Accuracy: 80% and above ``excellent``, 70% to under 80% ``good``, 60% to under 70% ``adequate``, under 60%
``investigate``. Search latency (mean, ms): under 100 ``excellent``, 100 to under 300 ``good``, 300 to 500
``adequate``, over 500 ``slow``. A boundary value belongs to the better band (80% is excellent, 100 ms is
good, 500 ms is adequate).
"""

from __future__ import annotations

import math
from typing import Literal

AccuracyBand = Literal["excellent", "good", "adequate", "investigate"]
LatencyBand = Literal["excellent", "good", "adequate", "slow"]


def accuracy_band(accuracy: float | None) -> AccuracyBand | None:
    """The band of an accuracy in [0, 1]; None when there is no accuracy."""
    if accuracy is None or math.isnan(accuracy):
        return None
    if accuracy >= 0.80:
        return "excellent"
    if accuracy >= 0.70:
        return "good"
    if accuracy >= 0.60:
        return "adequate"
    return "investigate"


def latency_band(ms: float | None) -> LatencyBand | None:
    """The band of a search latency in milliseconds; None when there is none."""
    if ms is None or math.isnan(ms):
        return None
    if ms < 100:
        return "excellent"
    if ms < 300:
        return "good"
    if ms <= 500:
        return "adequate"
    return "slow"
