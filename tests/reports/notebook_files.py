"""Small notebooks written for the report tests: a tagged parameters cell, then the given code cells."""

from __future__ import annotations

from pathlib import Path

import nbformat


def write_notebook(path: Path, *cells: str, params: str = "") -> Path:
    """Write a ``python3`` notebook at ``path``: a ``parameters`` cell holding ``params``, then ``cells``."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    parameters = nbformat.v4.new_code_cell(params)
    parameters.metadata["tags"] = ["parameters"]
    nb.cells = [parameters, *(nbformat.v4.new_code_cell(source) for source in cells)]
    nbformat.write(nb, path)
    return path
