"""``python -m bench_nb``: the ``bench-nb`` command line."""

from bench_nb.cli import main

main()
