"""``gc_paused``: the garbage collector paused around a burst of allocation that makes no cyclic garbage.

Decoding a large run (msgspec structs, dicts of JSON) or importing a report kernel's libraries allocates many
containers at once; a full collection over them finds nothing to free and costs more than the work itself
(BENCHMARKS.md). The run format's readers and writers, the frames and the report kernel's setup use it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """The garbage collector paused while a large file is decoded and read: it would otherwise walk the many
    containers decoding allocates at once (none of them cyclic garbage) and dominate the time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
