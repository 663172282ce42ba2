"""Serve a GGUF model with llama.cpp's own HTTP server, for ``local:<name>`` answerers and judges.

The ``local-llm`` extra installs ``xllamacpp``, whose wheel embeds llama.cpp's server (no compiler needed)::

    pip install 'bench_nb[local-llm]'
    python -m bench_nb.models.llamacpp my-model.gguf --port 8080
    export BENCH_NB_LOCAL_BASE_URL=http://127.0.0.1:8080/v1
    bench-nb run -p sqlite -b sample -m local:my-model -j local:my-model

The server answers OpenAI's Chat Completions (``/v1/chat/completions``) with the usage bench_nb records;
it serves its one model whatever name a request gives. It listens on ``host`` only (default 127.0.0.1) until
the process is stopped (Ctrl-C or SIGTERM). See docs/models.md, "Your own model file".
"""

from __future__ import annotations

import contextlib
import signal
import threading
from pathlib import Path
from typing import Any

import click

DEFAULT_PORT = 8080
DEFAULT_CONTEXT = 4096


def serve(
    model: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    context: int = DEFAULT_CONTEXT,
    threads: int | None = None,
) -> tuple[Any, str]:
    """Start llama.cpp's server on ``model`` in this process: ``(server, base_url)``, the base URL ending in
    ``/v1`` (what ``BENCH_NB_LOCAL_BASE_URL`` takes). It serves until the process ends.

    Args:
        model: the GGUF file.
        host: the address to listen on.
        port: the port; 0 picks a free one (the base URL says which).
        context: the context window in tokens (prompt and reply together).
        threads: CPU threads for generation and prompt processing; None lets llama.cpp choose.

    Raises:
        FileNotFoundError: no such model file.
        ImportError: the ``local-llm`` extra (``xllamacpp``) is not installed.
    """
    path = Path(model)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such GGUF file")
    try:
        import xllamacpp
    except ImportError as err:
        raise ImportError(
            "serving a GGUF file needs the local-llm extra: pip install 'bench_nb[local-llm]'"
        ) from err
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = {path.stem}
    params.hostnames = [host]
    params.port = port
    params.n_ctx = context
    if threads is not None:
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
    params.endpoint_metrics = True  # /metrics: the tokens it has processed, so a cached rerun shows none
    server = xllamacpp.Server(params)
    return server, f"{server.listening_address}/v1"


@click.command()
@click.argument("model", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=int, default=DEFAULT_PORT, show_default=True, help="Port (0: any free one).")
@click.option(
    "--context", type=int, default=DEFAULT_CONTEXT, show_default=True, help="Context window (tokens)."
)
@click.option("--threads", type=int, help="CPU threads (default: llama.cpp's choice).")
def main(model: Path, host: str, port: int, context: int, threads: int | None) -> None:
    """Serve MODEL (a GGUF file) over OpenAI's Chat Completions API until stopped (Ctrl-C)."""
    try:
        _, base_url = serve(model, host=host, port=port, context=context, threads=threads)
    except ImportError as err:
        raise click.ClickException(str(err)) from err
    click.echo(f"serving {model.name} at {base_url}")
    click.echo(f"  export BENCH_NB_LOCAL_BASE_URL={base_url}")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with contextlib.suppress(KeyboardInterrupt):
        stop.wait()


if __name__ == "__main__":
    main()
