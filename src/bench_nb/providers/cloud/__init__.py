"""Cloud memory providers through their official SDKs: ``supermemory``, ``mem0`` (the hosted Mem0 Platform)
and ``zep`` (Zep Cloud).

    >>> from bench_nb.providers import get_provider
    >>> provider = get_provider("supermemory", run_dir="runs/r1")  # key from $SUPERMEMORY_API_KEY

Keys come from the environment only (``SUPERMEMORY_API_KEY``, ``MEM0_API_KEY``, ``ZEP_API_KEY``); base URLs
from the ``base_url`` setting or ``SUPERMEMORY_BASE_URL`` / ``MEM0_BASE_URL`` / ``ZEP_BASE_URL``. The SDKs
come with the optional ``cloud`` extra. See docs/cloud-providers.md.
"""

# mypy: implicit-reexport
from __future__ import annotations

from bench_nb.lazy import attach
from bench_nb.providers.cloud.adapter import CloudProvider
from bench_nb.providers.cloud.common import CloudCallError, container_name
from bench_nb.providers.cloud.mem0_platform import Mem0PlatformProvider
from bench_nb.providers.cloud.supermemory import SupermemoryProvider
from bench_nb.providers.cloud.zep import ZepProvider

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.providers.cloud.adapter": ["CloudProvider"],
        "bench_nb.providers.cloud.common": ["CloudCallError", "container_name"],
        "bench_nb.providers.cloud.mem0_platform": ["Mem0PlatformProvider"],
        "bench_nb.providers.cloud.supermemory": ["SupermemoryProvider"],
        "bench_nb.providers.cloud.zep": ["ZepProvider"],
    },
)
