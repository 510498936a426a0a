"""Is there a usable CUDA GPU here, and which one? And the results recorded on one, for machines without.
Detection asks the CUDA driver API (``cuInit``, ``cuDeviceGetAttribute``) through ctypes, imports no GPU library
and never raises: without a GPU ``available()`` is False and ``reason()`` says why."""

import ctypes
import datetime
import functools
import gzip
import importlib.util
import json
import os
import platform
from pathlib import Path

from .errors import LayoutError

__all__ = ["available", "compute_capability", "name", "reason", "is_hopper", "is_ampere_or_newer",
           "RESULTS_DIR", "load_result", "recorded_note", "live_or_recorded"]

# The recorded results are package data (lib/layoutlab/results/, in a wheel too: pyproject.toml), so a checkout and
# an install read the same place; the setting LAYOUTLAB_RESULTS points elsewhere (e.g. a fresh GPU run's output).
RESULTS_DIR = Path(os.environ.get("LAYOUTLAB_RESULTS") or Path(__file__).resolve().parent / "results")


@functools.lru_cache(maxsize=None)
def _probe():
    """(cc, name, reason) from the CUDA driver API; cc is None when no GPU can be used."""
    if os.environ.get("LAYOUTLAB_NO_GPU"):
        return None, None, "disabled by LAYOUTLAB_NO_GPU"
    try:
        cuda = ctypes.CDLL("libcuda.so.1" if platform.system() == "Linux" else "nvcuda.dll")
    except OSError:
        return None, None, "no CUDA driver found (libcuda.so could not be loaded)"
    if cuda.cuInit(0) != 0:
        return None, None, "the CUDA driver is present but cuInit failed (no usable GPU)"
    count, dev, major, minor = (ctypes.c_int(0) for _ in range(4))
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return None, None, "the CUDA driver found no GPU"
    cuda.cuDeviceGet(ctypes.byref(dev), 0)
    cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
    buf = ctypes.create_string_buffer(256)
    cuda.cuDeviceGetName(buf, 256, dev)
    return (major.value, minor.value), buf.value.decode(), ""


def available(min_cc=None):
    """True when a CUDA GPU can be used (and, given ``min_cc=(major, minor)``, is at least that).

    >>> available(min_cc=(99, 0))              # no GPU is that new
    False
    """
    cc = _probe()[0]
    return cc is not None and (min_cc is None or cc >= tuple(min_cc))


def compute_capability():
    """``(major, minor)`` of GPU 0, e.g. ``(9, 0)`` for an H100, or None.

    >>> (compute_capability() is None) == (not available())
    True
    """
    return _probe()[0]


def name():
    """The GPU's name (e.g. ``'NVIDIA H100 80GB HBM3'``) or None.

    >>> (name() is None) == (not available())
    True
    """
    return _probe()[1]


def reason():
    """Why :func:`available` is False ('' when a GPU is there).

    >>> (reason() == "") == available()          # a reason exactly when there is no GPU
    True
    """
    return _probe()[2]


def is_hopper():
    """A GPU with the sm_90a features (wgmma, TMA) is present.

    >>> is_hopper() == (compute_capability() == (9, 0))
    True
    """
    return compute_capability() == (9, 0)


def is_ampere_or_newer():
    """A GPU with mma.sync m16n8k16, ldmatrix and cp.async (sm_80+) is present.

    >>> is_ampere_or_newer() == available(min_cc=(8, 0))
    True
    """
    return available(min_cc=(8, 0))


class RecordNotFound(LayoutError, FileNotFoundError):
    """No record of that name: a :class:`LayoutError`, and the ``FileNotFoundError`` a missing file is."""


def load_result(name):
    """A result recorded on a real GPU, ``<name>.json`` (or ``.json.gz``) in :data:`RESULTS_DIR`, as a dict.

    >>> bench = load_result("gemm_h100_bench")
    >>> bench["gpu"], sorted(bench["versions"])[:2]
    ('NVIDIA H100 80GB HBM3', ['cuda_runtime', 'cupy'])
    """
    if not isinstance(name, str):
        raise LayoutError(f"load_result: name must be a record's name, the file name without .json (e.g. "
                          f"'gemm_h100_bench'), got {type(name).__name__} {str(name)[:60]!r}")
    path, packed = RESULTS_DIR / f"{name}.json", RESULTS_DIR / f"{name}.json.gz"
    if path.exists():
        return json.loads(path.read_text())
    if packed.exists():
        return json.loads(gzip.decompress(packed.read_bytes()))
    raise RecordNotFound(f"no recorded result {path.name} under {RESULTS_DIR}")


def recorded_note(result):
    """One line to show above a recorded result, so a reader never mistakes it for a live measurement.

    >>> recorded_note(load_result("gemm_h100_bench"))
    'Recorded on NVIDIA H100 80GB HBM3 on 2026-11-... — not measured now...'
    """
    if not isinstance(result, dict):
        raise LayoutError(f"recorded_note: result must be a record (the dict load_result returns), got "
                          f"{type(result).__name__}")
    when = result.get("date", "unknown date")
    try:
        when = datetime.date.fromisoformat(str(when)[:10]).isoformat()
    except ValueError:
        pass
    return (f"Recorded on {result.get('gpu', 'an unknown GPU')} on {when} — not measured now"
            + ("" if available() else f" ({reason()})") + ".")



def live_or_recorded(recorded, measure=None, *, hopper=True, needs=("cupy",), missing=None):
    """A GPU measurement for a chapter: ``measure()`` run now where this machine can (a Hopper GPU, or with
    ``hopper=False`` any CUDA GPU, and the ``needs`` packages installed), else the result recorded as ``recorded``
    (:func:`load_result`). Prints one line saying which it is (:func:`recorded_note` for a recording), and returns
    the record, or None when there is neither: then it prints ``missing`` (or a line naming the missing file).

    >>> rec = live_or_recorded("gemm_h100_bench", lambda: 1 / 0, needs=("no such package",))
    Recorded on NVIDIA H100 80GB HBM3 on 2026-11-... — not measured now...
    >>> rec["gpu"]
    'NVIDIA H100 80GB HBM3'
    >>> live_or_recorded("no_such_record", missing="No H100 recording yet: the model's prediction only.")
    No H100 recording yet: the model's prediction only.
    """
    can = is_hopper() if hopper else available()
    if measure is not None and can and all(importlib.util.find_spec(m) for m in needs):
        record = measure()
        print(f"Measured now on {record.get('gpu') or name()}"
              + (f", {record['date']}" if record.get("date") else "") + ".")
        return record
    try:
        record = load_result(recorded)
    except FileNotFoundError:
        print(missing or f"No GPU measurement here and no recorded {recorded}.json under {RESULTS_DIR}.")
        return None
    print(recorded_note(record))
    return record
