"""pytest plugin (loaded by `-p layoutlab_pytest` in pyproject.toml, so it also covers the notebooks in
chapters/ and exercises/): GPU gating for tests and notebooks."""

import json
from pathlib import Path

import pytest



def _notebook_needs_gpu(path):
    try:
        meta = json.loads(Path(path).read_text()).get("metadata", {})
    except (OSError, ValueError):
        return False
    return bool(meta.get("layoutlab", {}).get("gpu"))


def pytest_collection_modifyitems(config, items):
    """Notebooks whose metadata says ``{"layoutlab": {"gpu": true}}`` get the ``gpu`` marker; ``gpu`` tests
    are skipped with a reason when no usable CUDA GPU is present."""
    from layoutlab import gpu

    have_gpu = gpu.available()
    for item in items:
        if str(item.fspath).endswith(".ipynb") and _notebook_needs_gpu(item.fspath):
            item.add_marker(pytest.mark.gpu)
        if "gpu" in item.keywords and not have_gpu:
            item.add_marker(pytest.mark.skip(reason=f"needs a CUDA GPU: {gpu.reason()}"))
