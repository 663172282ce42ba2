"""The run format: MemoryBench's run directories read and written, and the settings a run is run under.

Its modules are imported by name (``bench_nb.runformat.load``, ``.spec``, ``.journal``, ...); the public names
are re-exported by ``bench_nb``.
"""
