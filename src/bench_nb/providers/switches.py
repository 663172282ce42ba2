"""The process-wide switches bench_nb sets in the environment: the only ``os.environ`` writes in its code.

Each is one helper, and each is set before the library that reads it is imported (they read the variable at
import):

- ``go_offline``: the Hugging Face libraries never reach the hub (the ``mem0`` extra's local embedder reads its
  weights from an installed package);
- ``mem0_telemetry_off``: mem0 sends no telemetry (its local ``Memory`` and its platform client alike); the
  module flags are switched off too, in case mem0 was imported before.

Nothing else in bench_nb writes the environment (``tests/runformat/test_one_spec.py`` checks it); what a run
is run under is passed as options (the LLM response cache: ``ClientSettings.cache_path``).
"""

from __future__ import annotations

import os
import sys

OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def go_offline() -> None:
    """Tell the Hugging Face libraries never to reach the hub (process-wide: set before they are imported)."""
    os.environ.update(OFFLINE_ENV)


def mem0_telemetry_off() -> None:
    """Switch mem0's telemetry off: ``MEM0_TELEMETRY=False`` before mem0 is imported, and its module flags
    (and its platform client's open PostHog session) if it already was."""
    os.environ["MEM0_TELEMETRY"] = "False"  # read when mem0 is first imported
    for name in ("mem0.memory.telemetry", "mem0.memory.main"):
        module = sys.modules.get(name)
        if module is not None:
            module.MEM0_TELEMETRY = False  # type: ignore[attr-defined]
    telemetry = sys.modules.get("mem0.memory.telemetry")
    client = getattr(telemetry, "client_telemetry", None)
    if getattr(client, "posthog", None) is not None:
        client.close()  # type: ignore[union-attr]
