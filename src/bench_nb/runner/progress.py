"""Progress bars for a run: one per phase, with ``tqdm.auto`` (a widget in Jupyter, text in a terminal).

Shown when ``progress=True``; hidden when ``progress=False``. With ``progress=None`` (the default) they are
hidden when the environment variable ``BENCH_NB_QUIET`` is ``1`` (set it for papermill and CI, so executed
notebooks and logs carry no bars), and otherwise shown in a terminal (stderr is a TTY) or a Jupyter kernel.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from bench_nb.runformat.format import PHASES


def progress_enabled(progress: bool | None) -> bool:
    """Whether to show bars (see the module docstring)."""
    if progress is not None:
        return progress
    if os.environ.get("BENCH_NB_QUIET", "") not in ("", "0"):
        return False
    if "ipykernel" in sys.modules:
        return True
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


class PhaseBars:
    """One bar per phase, counting questions; updated from the scheduler thread only."""

    def __init__(self, total: int, done: dict[str, int], enabled: bool, label: str) -> None:
        self._bars: dict[str, Any] = {}
        if not enabled:
            return
        from tqdm.auto import tqdm

        for i, phase in enumerate(PHASES):
            self._bars[phase] = tqdm(
                total=total,
                initial=done.get(phase, 0),
                desc=f"{label} {phase}".strip(),
                position=i,
                leave=True,
                unit="q",
                dynamic_ncols=True,
            )

    def update(self, phase: str, n: int = 1, failed: bool = False) -> None:
        """Advance ``phase``'s bar by ``n``; ``failed`` marks the bar as having recorded failures."""
        bar = self._bars.get(phase)
        if bar is None:
            return
        bar.update(n)
        if failed:
            bar.set_postfix_str("failures recorded", refresh=False)

    def close(self) -> None:
        """Close every phase's bar."""
        for bar in self._bars.values():
            bar.close()
