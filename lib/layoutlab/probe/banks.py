"""The GPU half of the bank model (:mod:`layoutlab.nvgpu.banks`): shared-memory loads timed with ``clock64`` on a
GPU (cupy), and the record of every classic pattern predicted vs measured (the H100 record is
``banks_h100.json`` among the recorded results, :func:`layoutlab.gpu.load_result`).
"""

from __future__ import annotations

import functools
import json

from ..errors import LayoutError
from ..nvgpu.banks import bank_conflicts, classic_patterns

__all__ = ["measure_shared_load_cycles", "record_bank_measurements"]


# ----------------------------------------------------------------------------- GPU check
_KERNEL = r'''
extern "C" __global__ void smem_probe(const unsigned* __restrict__ offsets, int iters, int zero,
                                      long long* __restrict__ cycles, unsigned* __restrict__ sink) {
    __shared__ __align__(16) unsigned smem[12288];               // 48 KiB
    for (int i = threadIdx.x; i < 12288; i += blockDim.x) smem[i] = i;
    __syncthreads();
    unsigned lane = threadIdx.x & 31;
    unsigned base;
    asm volatile("{ .reg .u64 g; cvta.to.shared.u64 g, %1; cvt.u32.u64 %0, g; }" : "=r"(base) : "l"(smem));
    unsigned addr = base + offsets[lane];
    unsigned acc = 0;
    __syncthreads();
    long long t0 = clock64();
    for (int it = 0; it < iters; ++it) {
        unsigned a = addr + (unsigned)(it & zero);               // zero == 0 at run time: same address
        #pragma unroll
        for (int u = 0; u < 16; ++u) {
            unsigned x0, x1, x2, x3;
#if BYTES == 4
            asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(x0) : "r"(a)); x1 = x2 = x3 = 0;
#elif BYTES == 8
            asm volatile("ld.volatile.shared.v2.u32 {%0,%1}, [%2];" : "=r"(x0), "=r"(x1) : "r"(a)); x2 = x3 = 0;
#else
            asm volatile("ld.volatile.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                         : "=r"(x0), "=r"(x1), "=r"(x2), "=r"(x3) : "r"(a));
#endif
            acc += x0 ^ x1 ^ x2 ^ x3;
        }
    }
    __syncthreads();
    long long t1 = clock64();
    if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
'''


def measure_shared_load_cycles(addresses, bytes_per_access: int, warps: int = 16, iters: int = 256,
                               repeats: int = 5) -> float:
    """Measured shared-memory cycles per warp-wide load of the given pattern (needs a GPU and cupy).

    One block of ``warps`` warps, each issuing ``16 * iters`` volatile ``ld.shared`` of the per-lane addresses;
    ``clock64`` cycles per load of all warps, median of ``repeats`` launches. The pipe serves one wavefront per
    cycle, so this tracks the predicted ``wavefronts`` once enough warps keep it busy. Arguments are checked first::

        >>> measure_shared_load_cycles([0] * 32, 2)
        Traceback (most recent call last):
        ...
        layoutlab.errors.LayoutError: measure_shared_load_cycles: bytes_per_access=2 must be 4, 8 or 16
    """
    if bytes_per_access not in (4, 8, 16):
        raise LayoutError(f"measure_shared_load_cycles: bytes_per_access={bytes_per_access} must be 4, 8 or 16")
    offs = [int(a) for a in addresses]
    if len(offs) != 32 or max(offs) + bytes_per_access > 48 * 1024:
        raise LayoutError("measure_shared_load_cycles: need 32 addresses inside the 48 KiB probe buffer")
    import cupy as cp  # GPU-only dependency
    kern = _probe_kernel(bytes_per_access)
    d_off = cp.asarray(offs, dtype=cp.uint32)
    cycles = cp.zeros(1, dtype=cp.int64)
    sink = cp.zeros(32 * warps, dtype=cp.uint32)

    def launch(n_iters):
        kern((1,), (32 * warps,), (d_off, cp.int32(n_iters), cp.int32(0), cycles, sink))
        cp.cuda.Device().synchronize()
    launch(2)  # warm-up / compile
    vals = []
    for _ in range(repeats):
        launch(iters)
        vals.append(int(cycles.get()[0]) / (iters * 16 * warps))
    return sorted(vals)[len(vals) // 2]


@functools.cache
def _probe_kernel(bytes_per_access: int):
    import cupy as cp
    return cp.RawKernel(_KERNEL, "smem_probe", options=(f"-DBYTES={bytes_per_access}",))


def record_bank_measurements(path: str | None = None, warps: int = 16) -> dict:
    """Measure every :func:`classic_patterns` entry on this GPU: the record of predicted vs measured, also written
    as JSON to ``path`` when given (chapter 5 measures without writing)."""
    import datetime
    import platform

    import cupy as cp
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    rows = []
    for name, (addrs, nbytes) in classic_patterns().items():
        pred = bank_conflicts(addrs, nbytes)
        meas = measure_shared_load_cycles(addrs, nbytes, warps=warps)
        rows.append({"pattern": name, "bytes_per_access": nbytes, "addresses": addrs,
                     "predicted_wavefronts": pred.wavefronts, "predicted_conflict_degree": pred.conflict_degree,
                     "measured_cycles_per_warp_load": round(meas, 3)})
    base = next(r["measured_cycles_per_warp_load"] for r in rows if r["pattern"] == "4B 1-way")
    for r in rows:
        r["measured_over_1way"] = round(r["measured_cycles_per_warp_load"] / base, 3)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    try:
        import subprocess
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception:  # noqa: BLE001 - informational only
        driver = "unknown"
    rec = {
        "gpu": name,
        "compute_capability": f"{props['major']}.{props['minor']}",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "driver": driver,
        "versions": {"nvidia_driver": driver, "cuda_driver_api": cp.cuda.runtime.driverGetVersion(),
                     "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(), "cupy": cp.__version__,
                     "python": platform.python_version()},
        "method": f"1 block x {warps} warps, 16x unrolled volatile ld.shared per iteration, clock64 between "
                  f"barriers / (loads x warps), median of 5",
        "patterns": rows,
    }
    if path is not None:
        with open(path, "w") as f:
            json.dump(rec, f, indent=1)
    return rec
