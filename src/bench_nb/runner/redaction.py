"""Moved to ``bench_nb.redaction`` (layer 0), so that every place that records an error (the runner, rejudge,
the judge audit, the ROI store, the run store, the command line) redacts it with the same function; kept here
for existing imports."""

from bench_nb.redaction import REDACTED, error_text, redact

__all__ = ["REDACTED", "error_text", "redact"]
