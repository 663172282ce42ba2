"""Receipts and the regression gate: results anyone can check, and a CI check that a change did not make
a run worse.

- ``receipt``: ``make_receipt`` writes a canonical, hash-bound summary of a run (optionally Ed25519-signed,
  ``signing``); ``verify_receipt`` recomputes every number in it from the run and names the first difference.
- ``gate``: ``gate(BASE, NEW)``, a non-inferiority check of NEW against BASE (run directories, run store ids or
  receipts) with the clustered paired test (``metrics.gate``), its Markdown summary and exit code.

docs/gate.md shows both in a CI workflow.
"""
