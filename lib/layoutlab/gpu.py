"""Is there a usable CUDA GPU here, and which one? And the results recorded on one, for machines without.
Detection asks the CUDA driver API (``cuInit``, ``cuDeviceGetAttribute``) through ctypes, imports no GPU library
and never raises: without a GPU ``available()`` is False and ``reason()`` says why.  The array helpers at the end
answer the few questions the kernels ask of a torch or cupy array (which library, its strides, a new array or the
stream beside it) in one place."""

import ctypes
import datetime
import functools
import gzip
import importlib
import importlib.util
import json
import os
import platform
from pathlib import Path

__all__ = ["available", "compute_capability", "name", "reason", "is_hopper", "is_ampere_or_newer",
           "RESULTS_DIR", "load_result", "recorded_note", "live_or_recorded", "array_library", "array_info", "new_array", "current_stream",
           "device_index"]

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


def load_result(name):
    """A result recorded on a real GPU, ``<name>.json`` (or ``.json.gz``) in :data:`RESULTS_DIR`, as a dict.

    >>> bench = load_result("gemm_h100_bench")
    >>> bench["gpu"], sorted(bench["versions"])[:2]
    ('NVIDIA H100 80GB HBM3', ['cuda_runtime', 'cupy'])
    """
    path, packed = RESULTS_DIR / f"{name}.json", RESULTS_DIR / f"{name}.json.gz"
    if path.exists():
        return json.loads(path.read_text())
    if packed.exists():
        return json.loads(gzip.decompress(packed.read_bytes()))
    raise FileNotFoundError(f"no recorded result {path.name} under {RESULTS_DIR}")


def recorded_note(result):
    """One line to show above a recorded result, so a reader never mistakes it for a live measurement.

    >>> recorded_note(load_result("gemm_h100_bench"))
    'Recorded on NVIDIA H100 80GB HBM3 on 2026-11-... — not measured now...'
    """
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

# --------------------------------------------------------------------------- array libraries (torch, cupy, numpy)
# The kernels take a cupy array or a torch CUDA tensor. Which one it is comes from the package of the array's type,
# not from probing attributes (torch and cupy share many of their names), and importing neither.
ARRAY_LIBRARIES = ("torch", "cupy", "numpy")


def array_library(x):
    """``'torch'``, ``'cupy'`` or ``'numpy'``: the library whose type ``x`` has (None for lists, scalars, ...).

    >>> import numpy as np
    >>> array_library(np.zeros(3)), array_library([1.0, 2.0]), array_library(3)
    ('numpy', None, None)
    >>> Tensor = type("Tensor", (), {"__module__": "torch"})      # a stand-in: torch.Tensor lives in torch
    >>> array_library(Tensor())
    'torch'
    """
    lib = type(x).__module__.partition(".")[0]
    return lib if lib in ARRAY_LIBRARIES else None


def array_info(x):
    """``(dtype name, shape, strides in elements, on a GPU)`` of a torch, cupy or numpy array; anything else gives
    ``(its type's name, (), (), False)``.

    >>> import numpy as np
    >>> array_info(np.zeros((4, 6), dtype=np.int64)[:, ::2])
    ('int64', (4, 3), (6, 2), False)
    >>> array_info([0, 1])
    ('list', (), (), False)
    """
    lib = array_library(x)
    if lib == "torch":
        return str(x.dtype).replace("torch.", ""), tuple(x.shape), tuple(x.stride()), bool(x.is_cuda)
    if lib in ("cupy", "numpy"):
        return str(x.dtype), tuple(x.shape), tuple(s // x.itemsize for s in x.strides), lib == "cupy"
    return type(x).__name__, (), (), False


def new_array(like, shape, dtype=None, zeros=False):
    """A new array of ``shape`` from ``like``'s library, on ``like``'s device, of ``dtype`` (a name such as
    ``'float32'``; default: ``like``'s dtype), zero-filled when ``zeros`` (else uninitialised).

    >>> import numpy as np
    >>> new_array(np.ones(2, dtype=np.float16), (2, 3), zeros=True)
    array([[0., 0., 0.],
           [0., 0., 0.]], dtype=float16)
    >>> new_array(np.ones(2), (4,), dtype="int32", zeros=True).dtype
    dtype('int32')
    """
    lib = array_library(like)
    if lib == "torch":
        import torch
        dt = like.dtype if dtype is None else getattr(torch, dtype)
        return (like.new_zeros if zeros else like.new_empty)(shape, dtype=dt)
    if lib is None:
        from .errors import LayoutError
        raise LayoutError(f"new_array: like must be a torch, cupy or numpy array, got {type(like).__name__}")
    xp = importlib.import_module(lib)
    make = xp.zeros if zeros else xp.empty
    dt = like.dtype if dtype is None else dtype
    if lib == "cupy":
        with xp.cuda.Device(like.device.id):
            return make(shape, dtype=dt)
    return make(shape, dtype=dt)


def current_stream(like):
    """The handle (an int) of the CUDA stream that ``like``'s library is using now: torch's current stream for a
    torch tensor, cupy's for a cupy array; a host array has none.

    >>> import numpy as np
    >>> try:
    ...     current_stream(np.zeros(2))
    ... except Exception as err:
    ...     print(type(err).__name__, err)
    LayoutError current_stream: a numpy array has no CUDA stream; pass a cupy array or a torch CUDA tensor
    """
    lib = array_library(like)
    if lib == "torch":
        import torch
        return torch.cuda.current_stream().cuda_stream
    if lib == "cupy":
        import cupy
        return cupy.cuda.get_current_stream().ptr
    from .errors import LayoutError
    raise LayoutError(f"current_stream: a {lib or type(like).__name__} array has no CUDA stream; pass a cupy array "
                      f"or a torch CUDA tensor")


def device_index(x):
    """The index of the GPU holding ``x`` (torch or cupy), or None for a host array.

    >>> import numpy as np
    >>> device_index(np.zeros(2)) is None
    True
    """
    lib = array_library(x)
    if lib == "torch":
        return x.get_device() if x.is_cuda else None
    if lib == "cupy":
        return x.device.id
    return None
