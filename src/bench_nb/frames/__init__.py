"""The read side: run directories and run stores as polars (or pandas) frames.

Its modules are imported by name (``bench_nb.frames.questions``, ``.judgments``, ``.store``, ...); the public
names are re-exported by ``bench_nb``.
"""
