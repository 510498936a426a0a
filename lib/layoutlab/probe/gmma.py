"""Hardware truth for :mod:`layoutlab.nvgpu.gmma`: wgmma reads the swizzled layouts exactly as the descriptor says.

One kernel per majorness pair runs ``wgmma.mma_async.m64n128k16`` (f16, fp32 accumulate, K = 64) on A (64 x 64)
and B (128 x 64) laid out by the eight GMMA atoms and read through :func:`layoutlab.nvgpu.gmma.gmma_k_block_descs`;
integers in [-2, 2] make ``D = A B^T`` exact. Claims (:func:`cases`): the documented descriptors are exact; B's
LBO/SBO doubled or swapped, another swizzle or base offset 1 are wrong (but a K-major swizzled LBO is unused, PTX
ISA); a pattern ``128 j`` bytes past 1024 is exact with base offset ``(start >> 7) & 7``, wrong with 0.
``python -m layoutlab.probe.gmma OUT.json`` runs it on an H100; CI compares ``results/gmma_probe_h100.json``.
"""

import dataclasses
import datetime
import functools
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from ..errors import LayoutError

__all__ = ["KINDS", "N", "K", "cases", "simulate", "run", "record", "compare", "main"]

KINDS = ("K_INTER", "K_SW32", "K_SW64", "K_SW128", "MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128")
N, K = 128, 64
_REGION_A, _REGION_B = 12288, 32768      # bytes of shared memory per operand (each 1024-aligned)


def _tile(kind, mn):
    from ..nvgpu.warpgroup import make_smem_layout_atom
    return make_smem_layout_atom(kind, 16).tile_to_shape((mn, K), (0, 1) if kind.startswith("K") else (1, 0))


def _image(X, kind):
    """uint16 image of X (mn x K) placed by the swizzled tile layout (byte addresses relative to 0)."""
    from .atoms import _f16_bits
    mn = X.shape[0]
    tile = _tile(kind, mn)
    idx = np.arange(mn * K)                       # colexicographic: (r, c) -> r + mn * c
    addr = tile.inner((tile.offset + np.asarray(tile.outer.evaluate_indices(idx), dtype=np.int64)) * 2)
    img = np.zeros(tile.cosize(), dtype=np.uint16)
    img[addr // 2] = _f16_bits(X.reshape(-1, order="F"), "f16")
    return img


@functools.lru_cache(maxsize=None)
def _base_descs(kind, mn, smem_base):
    from ..nvgpu.gmma import gmma_k_block_descs
    return tuple(gmma_k_block_descs(kind.split("_")[0], _tile(kind, mn), 16, smem_base))


def _descs(kind, mn, smem_base=0, **change):
    """The k-block descriptors (64-bit ints) of an operand; ``change`` overrides fields (encoded units)."""
    return [dataclasses.replace(d, **change).desc for d in _base_descs(kind, mn, smem_base)]


def _reach(desc, major, mn):
    """Highest byte (exclusive) the canonical layout of this descriptor reaches from its start address."""
    from ..nvgpu.gmma import decode_gmma_desc, pattern_bytes
    d = decode_gmma_desc(desc)
    T, W = 8, pattern_bytes(d.layout_type) // 128           # the pattern's width in 16-byte chunks
    lbo, sbo = d.leading_byte_offset_bytes, d.stride_byte_offset_bytes
    if major == "K":
        lead = lbo if d.layout_type == 0 else 16
        top = 7 * 16 * W + (mn // 8 - 1) * sbo + lead + 16
    elif d.layout_type == 0:
        top = (mn // T - 1) * sbo + 7 * 16 + lbo + 16
    else:
        top = (mn // (T * W) - 1) * lbo + 7 * 16 * W + sbo + 16 * W
    return d.start_address_bytes + top + 1024      # + the swizzle's reach within one pattern


def cases():
    """Every probe case: ``(name, a_kind, b_kind, a_shift, b_shift, descs_a, descs_b, expect)``; ``expect``:
    ``"exact"``, ``"wrong"`` (claims) or ``"observe"``; a shift: where the image starts past 1024 bytes.

    >>> all_cases = cases()
    >>> len(all_cases), all_cases[0][0], all_cases[0][-1]
    (117, 'documented K_INTER x K_INTER', 'exact')
    """
    from ..nvgpu.gmma import LayoutType, decode_gmma_desc
    out = [(f"documented {a} x {b}", a, b, 0, 0, _descs(a, 64), _descs(b, N), "exact") for a in KINDS for b in KINDS]
    a = "K_SW128"
    da = _descs(a, 64)
    for b in KINDS:
        d0 = decode_gmma_desc(_descs(b, N)[0])
        lt, lbo, sbo = d0.layout_type, d0.leading_byte_offset, d0.stride_byte_offset
        k_swizzled = b.startswith("K") and lt != LayoutType.INTERLEAVE
        variants = []
        if lbo:
            variants.append(("lbo_x2", dict(leading_byte_offset=2 * lbo), "exact" if k_swizzled else "wrong"))
        if sbo:
            variants.append(("sbo_x2", dict(stride_byte_offset=2 * sbo), "wrong"))
        if lbo and sbo and lbo != sbo and not k_swizzled:
            variants.append(("lbo_sbo_swapped", dict(leading_byte_offset=sbo, stride_byte_offset=lbo), "wrong"))
        other = {LayoutType.INTERLEAVE: LayoutType.B32, LayoutType.B32: LayoutType.B64,
                 LayoutType.B64: LayoutType.B128, LayoutType.B128: LayoutType.B64}[lt]
        variants.append((f"swizzle_{other.name}", dict(layout_type=other), "wrong"))
        if lt != LayoutType.INTERLEAVE:
            variants.append(("base_offset_1", dict(base_offset=1), "wrong"))
        for name, change, expect in variants:
            db = _descs(b, N, **change)
            if max(_reach(x, b.split("_")[0], N) for x in db) > _REGION_B:
                continue          # would read past the buffer: skip rather than fault
            out.append((f"{name} {a} x {b}", a, b, 0, 0, da, db, expect))
        if lt != LayoutType.INTERLEAVE:
            for j in (1, 2) if lt != LayoutType.B32 else (1,):
                shift = 128 * j
                out.append((f"pattern_shift_{j} formula {a} x {b}", a, b, 0, shift, da, _descs(b, N, shift),
                            "exact"))
                out.append((f"pattern_shift_{j} base0 {a} x {b}", a, b, 0, shift, da,
                            _descs(b, N, shift, base_offset=0), "wrong"))
    return out


_SRC = r"""
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned long long u64;

extern "C" __global__ void __launch_bounds__(128, 1)
gmma_probe_a{TA}_b{TB}(const u16* imgA, int nA, const u16* imgB, int nB, int shiftA, int shiftB,
                       const u64* descA, const u64* descB, int kblocks, float* out) {
    __shared__ __align__(1024) u16 sA[REGION_A / 2];
    __shared__ __align__(1024) u16 sB[REGION_B / 2];
    int t = threadIdx.x;
    for (int i = t; i < REGION_A / 2; i += 128) sA[i] = 0;
    for (int i = t; i < REGION_B / 2; i += 128) sB[i] = 0;
    __syncthreads();
    for (int i = t; i < nA; i += 128) sA[shiftA / 2 + i] = imgA[i];
    for (int i = t; i < nB; i += 128) sB[shiftB / 2 + i] = imgB[i];
    // ordinary stores that the tensor cores read next: make them visible to the async proxy
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    u64 baseA = (u64)((u32)__cvta_generic_to_shared(sA) >> 4);
    u64 baseB = (u64)((u32)__cvta_generic_to_shared(sB) >> 4);
    float d[64];
    #pragma unroll
    for (int j = 0; j < 64; ++j) d[j] = 0.f;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    for (int kb = 0; kb < kblocks; ++kb) {
        u64 da = descA[kb] + baseA, db = descB[kb] + baseB;
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {DLIST}, %64, %65, p, 1, 1, {TA}, {TB};\n}\n"
                     : OUTS : "l"(da), "l"(db), "r"(kb));
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    #pragma unroll
    for (int j = 0; j < 64; ++j) out[t * 64 + j] = d[j];
}
"""


def simulate(case, A, B):
    """D (64, N) as the PTX ISA says one case computes it: each k-block's A and B read through
    :func:`layoutlab.nvgpu.gmma.gmma_read_addresses` from the kernel's images, in float64 (claims only, base offset 0).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> A, B = rng.integers(-2, 3, (64, K)).astype(float), rng.integers(-2, 3, (N, K)).astype(float)
    >>> documented, wrong = cases()[0], [c for c in cases() if c[-1] == "wrong"][0]
    >>> np.array_equal(simulate(documented, A, B), A @ B.T), np.array_equal(simulate(wrong, A, B), A @ B.T)
    (True, False)
    """
    from ..nvgpu.gmma import gmma_read_addresses
    if not (isinstance(case, tuple) and len(case) == 8):
        raise LayoutError(f"simulate: case must be one of cases() (a tuple of 8), got {str(case)[:60]}")
    try:
        A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    except (TypeError, ValueError):
        A = B = None
    if A is None or A.shape != (64, K) or B.shape != (N, K):
        raise LayoutError(f"simulate: A must be a (64, {K}) and B an ({N}, {K}) array of numbers")
    name, a, b, sa, sb, da, db, expect = case
    blocks = []
    for kind, X, shift, descs, mn, region in ((a, A, sa, da, 64, _REGION_A), (b, B, sb, db, N, _REGION_B)):
        mem = np.zeros(region // 2 + 8192, dtype=np.uint16)
        img = _image(X, kind)
        mem[shift // 2: shift // 2 + img.size] = img
        addrs = [gmma_read_addresses(x, kind.split("_")[0], 16, mn) // 2 for x in descs]
        blocks.append([mem[np.clip(addr, 0, mem.size - 1)].view(np.float16).astype(np.float64) for addr in addrs])
    return sum((ak @ bk.T for ak, bk in zip(*blocks)), np.zeros((64, N)))


def source():
    """The CUDA source: one kernel per (imm-trans-a, imm-trans-b)."""
    dlist = "{" + ", ".join(f"%{j}" for j in range(64)) + "}"
    outs = ", ".join(f'"+f"(d[{j}])' for j in range(64))
    body = _SRC.replace("REGION_A", str(_REGION_A)).replace("REGION_B", str(_REGION_B))
    head, kernel = body.replace("{DLIST}", dlist).replace("OUTS", outs).split('extern "C"', 1)
    return head + "".join('extern "C"' + kernel.replace("{TA}", str(ta)).replace("{TB}", str(tb))
                          for ta in (0, 1) for tb in (0, 1))


def run(seed=0):
    """Run every case on GPU 0 (an sm_90a GPU, nvcc and CuPy needed); returns the JSON-able record."""
    import cupy as cp

    from .. import gpu
    from .sources import _compile
    from .atoms import _versions

    if not gpu.is_hopper():
        raise RuntimeError(f"probe.gmma needs an sm_90a GPU (H100/H200); found {gpu.name() or gpu.reason()}")
    with tempfile.TemporaryDirectory() as tmp:     # CuPy may load the cubin lazily: keep it until done
        mods, errors = _compile([source()], tmp)
        rec = record(mods[0], cp, seed=seed, gpu_name=gpu.name(), versions=_versions())
        rec["errors"].update({f"nvcc {k}": v for k, v in errors.items()})
        return rec


def _hex(descs):
    return [f"0x{x:016x}" for x in descs]


def record(mod, cp, seed=0, gpu_name=None, versions=None):
    """Launch every case through ``mod`` (the compiled :func:`source`, or ``None``) with the array module ``cp``
    (CuPy, or the tests' PTX-model stand-in); returns the record."""
    from .atoms import _gather, _wgmma_tv

    rng = np.random.default_rng(seed)
    A = rng.integers(-2, 3, (64, K)).astype(np.float64)
    B = rng.integers(-2, 3, (N, K)).astype(np.float64)
    want = _gather(A @ B.T, _wgmma_tv(N))             # what thread t holds in register j, if all is right
    rec = {"what": "layoutlab.probe.gmma: wgmma m64n128k16 over K=64 with descriptors from layoutlab.nvgpu.gmma",
           "gpu": gpu_name, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "versions": versions or {}, "seed": seed, "errors": {}, "cases": {}}
    if mod is None:
        rec["errors"]["build"] = "the probe kernels did not compile"
        return rec
    images = {}
    for name, a, b, sa, sb, da, db, expect in cases():
        try:
            for which, X, kind in (("A", A, a), ("B", B, b)):
                if (which, kind) not in images:
                    images[(which, kind)] = cp.asarray(_image(X, kind))
            ia, ib = images[("A", a)], images[("B", b)]
            out = cp.zeros(128 * 64, dtype=cp.float32)
            fn = mod.get_function(f"gmma_probe_a{int(a.startswith('MN'))}_b{int(b.startswith('MN'))}")
            fn((1,), (128,), (ia, np.int32(ia.size), ib, np.int32(ib.size), np.int32(sa), np.int32(sb),
                              cp.asarray(np.array(da, dtype=np.uint64)), cp.asarray(np.array(db, dtype=np.uint64)),
                              np.int32(K // 16), out))
            d = cp.asnumpy(out).reshape(128, 64).astype(np.float64)
            err = float(np.max(np.abs(d - want))) if np.all(np.isfinite(d)) else float("inf")
            rec["cases"][name] = {"a_kind": a, "b_kind": b, "a_shift": sa, "b_shift": sb,
                                  "desc_a": _hex(da), "desc_b": _hex(db),
                                  "expect": expect, "exact": bool(err == 0.0), "max_abs_err": err}
        except Exception as e:  # noqa: BLE001 - a faulting case poisons the context: record and stop
            rec["errors"][name] = f"{type(e).__name__}: {e}"[:2000]
            print(f"probe.gmma: {name} failed: {e!r}", file=sys.stderr)
            break
    return rec


def compare(rec):
    """Check a record: the claims hold and the recorded descriptors are what layoutlab.nvgpu.gmma encodes now;
    returns ``{"checked": [...], "mismatches": [...], "observed": {name: exact}}``.

    >>> from layoutlab import gpu
    >>> result = compare(gpu.load_result("gmma_probe_h100"))
    >>> len(result["checked"]), result["mismatches"]
    (117, [])
    """
    if not isinstance(rec, dict):
        raise LayoutError(f"compare: rec must be a wgmma probe record (a dict, e.g. "
                          f"gpu.load_result('gmma_probe_h100')), got {type(rec).__name__}")
    checked, bad, observed = [], [], {}
    for where, err in (rec.get("errors") or {}).items():
        checked.append(f"ran: {where}")
        bad.append(f"ran: {where}: {err.splitlines()[0] if err else 'failed'}")
    recorded = rec.get("cases", {})
    for name, a, b, sa, sb, da, db, expect in cases():
        label = f"gmma {name}"
        r = recorded.get(name)
        checked.append(label)
        if r is None:
            bad.append(f"{label}: not recorded")
            continue
        if (r["desc_a"], r["desc_b"]) != (_hex(da), _hex(db)):
            bad.append(f"{label}: recorded descriptors differ from what layoutlab.nvgpu.gmma encodes now")
        if expect == "observe":
            observed[name] = r["exact"]
        elif (expect == "exact") != r["exact"]:
            bad.append(f"{label}: expected {'exact' if expect == 'exact' else 'a wrong product'}, got "
                       f"{'exact' if r['exact'] else 'max error ' + str(r['max_abs_err'])}")
    return {"checked": checked, "mismatches": bad, "observed": observed}


def main(argv=None):
    """``python -m layoutlab.probe.gmma OUT.json``: run, write the record, print the comparison."""
    from .atoms import _report
    argv = sys.argv[1:] if argv is None else argv
    path = Path(argv[0]) if argv else Path("gmma_probe.json")
    rec = run()
    path.write_text(json.dumps(rec, indent=1))
    res = compare(rec)
    _report("probe.gmma", res)
    for name, exact in res["observed"].items():
        print(f"  observed {name}: {'exact' if exact else 'wrong'}")
    return 1 if res["mismatches"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
