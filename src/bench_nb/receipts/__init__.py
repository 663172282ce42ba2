"""Receipts and the regression gate: results anyone can check, and a CI check that a change did not make
a run worse.

- ``receipt``: ``make_receipt`` writes a canonical, hash-bound summary of a run (optionally Ed25519-signed,
  ``signing``); ``verify_receipt`` recomputes every number in it from the run and names the first difference.
- ``gate``: ``gate(BASE, NEW)``, a non-inferiority check of NEW against BASE (run directories, run store ids or
  receipts) with the clustered paired test (``metrics.gate``), its Markdown summary and exit code.

docs/gate.md shows both in a CI workflow.
"""

# mypy: implicit-reexport
from __future__ import annotations

from typing import TYPE_CHECKING

from bench_nb.lazy import attach

if TYPE_CHECKING:
    from bench_nb.receipts.gate import Gate
    from bench_nb.receipts.receipt import Receipt, ReceiptCheck, make_receipt, verify_receipt

# ``gate`` itself is ``bench_nb.gate`` (the name of its module here).
__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.receipts.gate": ["Gate"],
        "bench_nb.receipts.receipt": ["Receipt", "ReceiptCheck", "make_receipt", "verify_receipt"],
    },
)
