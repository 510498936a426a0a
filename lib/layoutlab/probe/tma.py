"""Hardware truth for TMA: run :mod:`layoutlab.kernels.tma_copy` on a Hopper GPU and see where each byte lands.

Each case TMA-loads (``cp.async.bulk.tensor``) tiles of a coordinate-coded global tensor into shared memory and
copies the buffer out raw; :func:`expected_bytes` predicts it byte for byte from :mod:`layoutlab.nvgpu.tma` (zero fill
outside, ``0xFF`` where unwritten), :func:`compare` checks a record against it and the CuTe view.
``python -m layoutlab.probe.tma OUT.json`` (H100) writes the record; CI compares ``results/tma_probe_h100.json``.
"""

import base64
import datetime
import itertools
import json
import subprocess
import sys
import zlib

from ..errors import LayoutError

__all__ = ["CASES", "MULTICAST_CASES", "MISALIGNED_CASES", "REFUSED_CASES", "DSL_ABORT_CASE", "truncated_stride_bytes",
           "expected_bytes", "cute_view_bytes", "decode_chunks", "run", "compare", "main", "unpack"]


def _c(name, dtype, gmem, tile, smem, tiles, stages=1, offset=0, **more):
    """A case; ``smem`` a GMMA atom kind (tiled in mode order (0, 1, 2) if K-major, (1, 0, 2) if MN) or a spec."""
    if isinstance(smem, str):
        smem = ["atom", smem, [0, 1, 2] if smem.startswith("K") else [1, 0, 2]]
    return {"name": name, "dtype": dtype, "gmem": gmem, "tile": tile, "smem": smem, "stages": stages,
            "tiles": tiles, "offset": offset, **more}


CASES = [
    _c("K-major f16, no swizzle (K_INTER): 16-byte-wide boxes", "f16", [[64, 72], [72, 1]], [32, 32],
       "K_INTER", [[1, 1]]),
    _c("K-major f16, 32B swizzle", "f16", [[64, 64], [64, 1]], [32, 32], "K_SW32", [[1, 0]]),
    _c("K-major f16, 64B swizzle", "f16", [[64, 64], [64, 1]], [32, 32], "K_SW64", [[0, 1]]),
    _c("K-major f16, 128B swizzle, 2 stages, second tile partly outside (zero fill)", "f16",
       [[200, 136], [136, 1]], [64, 64], "K_SW128", [[0, 0], [3, 2]], stages=2),
    _c("MN-major f16, 128B swizzle, 2 stages, tile partly outside in M and K", "f16",
       [[136, 200], [1, 136]], [128, 64], "MN_SW128", [[0, 0], [1, 3]], stages=2),
    _c("MN-major f32, 64B swizzle", "f32", [[64, 48], [1, 64]], [32, 16], "MN_SW64", [[1, 2]]),
    _c("K-major f32, 128B swizzle, 3 stages", "f32", [[96, 64], [64, 1]], [32, 32],
       "K_SW128", [[0, 0], [1, 1], [2, 0]], stages=3),
    _c("no swizzle, 512-element rows: boxes cut to 256", "f16", [[16, 1024], [1024, 1]], [4, 512],
       ["plain", None, [4, 512], [512, 1]], [[1, 0]]),
]

#: A 128B-swizzled buffer starting inside a swizzle period (the model swizzles absolute address bits).
MISALIGNED_CASES = [
    _c("128B swizzle, buffer 512 bytes past a 1024-byte boundary", "f16", [[64, 64], [64, 1]], [16, 64],
       ["plain", 3, [16, 64], [64, 1]], [[1, 0]], offset=512),
]

#: Clusters: each CTA loads 1/n of every box with ``.multicast::cluster``; every CTA must end up with the tile.
MULTICAST_CASES = [
    _c("multicast to 2 CTAs: K-major f16, 128B swizzle, 2 stages, zero fill", "f16", [[200, 136], [136, 1]],
       [64, 64], "K_SW128", [[0, 0], [3, 2]], stages=2, multicast=2),
    _c("multicast to 4 CTAs: MN-major f16, 128B swizzle", "f16", [[136, 200], [1, 136]], [128, 64], "MN_SW128",
       [[1, 3]], multicast=4),
]

REFUSED_CASES = [
    _c("row stride 200 bytes (globalStrides not a multiple of 16)", "f16", [[64, 100], [100, 1]], [8, 64],
       ["plain", None, [8, 64], [64, 1]], [[0, 0]]),
    _c("smem layout transposed w.r.t. global memory", "f16", [[64, 64], [64, 1]], [64, 64],
       ["plain", None, [64, 64], [1, 64]], [[0, 0]]),
]

#: The DSL's atom accepts it (box cut to 60 elements), but compiling a copy with it aborts (SIGABRT) in DSL 4.8.1.
DSL_ABORT_CASE = _c("120-wide swizzled rows: the DSL cuts the box to 60 elements (120 bytes)", "f16",
                    [[64, 128], [128, 1]], [8, 120], ["plain", 3, [8, 120], [120, 1]], [[0, 0]])


def _code_bytes(case, g):
    """The bytes of global element ``g``: its coordinate code, or zeros (the TMA's fill) outside the tensor."""
    from ..kernels.tma_copy import ELEMENT_BYTES
    (rows, cols), _ = case["gmem"]
    esize = ELEMENT_BYTES[case["dtype"]]
    if g[0] >= rows or g[1] >= cols:
        return bytes(esize)
    code = 1 + g[0] + rows * g[1]
    if esize == 2:
        code = 1 + (code - 1) % 65534
    return code.to_bytes(esize, "little")


def _atom(case):
    from ..cute.layout import Layout
    from ..cute.swizzle import ComposedLayout
    from ..nvgpu.tma import make_tiled_tma_atom
    from ..kernels.tma_copy import smem_layout
    sl = smem_layout(case)
    stage0 = ComposedLayout(sl.inner, 0, Layout(tuple(sl.outer.shape[:2]), tuple(sl.outer.stride[:2])))
    (shape, stride) = case["gmem"]
    return sl, make_tiled_tma_atom("G2S", Layout(tuple(shape), tuple(stride)), stage0, tuple(case["tile"]),
                                   case["dtype"])


def expected_bytes(case) -> bytes:
    """The shared-memory buffer after the case's TMA copies, predicted by :mod:`layoutlab.nvgpu.tma`.

    >>> buf = expected_bytes(CASES[0])
    >>> len(buf), decode_chunks(CASES[0], buf, rows=1)[0][:4]
    (2048, ['32,32', '33,32', '34,32', '35,32'])
    """
    from ..kernels.tma_copy import ELEMENT_BYTES, case_bytes, check_case
    from ..nvgpu.tma import tile_placement
    check_case(case, "expected_bytes")
    if case.get("multicast", 1) > 1:        # every CTA of the cluster receives the whole tile
        return expected_bytes(dict(case, multicast=1)) * case["multicast"]
    sl, atom = _atom(case)
    esize = ELEMENT_BYTES[case["dtype"]]
    buf = bytearray([0xFF]) * case_bytes(case)
    for s, tc in enumerate(case["tiles"]):
        base = case.get("offset", 0) + sl.outer((0, 0, s)) * esize
        for addr, (g, b) in tile_placement(atom, tuple(tc), smem_base=base).items():
            buf[base + addr] = 0 if g is None else _code_bytes(case, g)[b]
    return bytes(buf)


def cute_view_bytes(case) -> bytes:
    """The same buffer as the CuTe layout sees it: element ``(m, k)`` of stage ``s`` at
    ``sl.byte_address((m, k, s), element_bytes, base=offset)`` (the swizzle on absolute byte addresses).

    >>> cute_view_bytes(CASES[0]) == expected_bytes(CASES[0])     # the TMA model and the CuTe view agree
    True
    """
    from ..kernels.tma_copy import ELEMENT_BYTES, case_bytes, check_case
    check_case(case, "cute_view_bytes")
    if case.get("multicast", 1) > 1:
        return cute_view_bytes(dict(case, multicast=1)) * case["multicast"]
    sl, _ = _atom(case)
    esize, (bm, bk) = ELEMENT_BYTES[case["dtype"]], case["tile"]
    buf = bytearray([0xFF]) * case_bytes(case)
    for s, (tm, tk) in enumerate(case["tiles"]):
        for m, k in itertools.product(range(bm), range(bk)):
            addr = sl.byte_address((m, k, s), esize, base=case.get("offset", 0))
            buf[addr:addr + esize] = _code_bytes(case, (tm * bm + m, tk * bk + k))
    return bytes(buf)


def truncated_stride_bytes(case) -> bytes:
    """The buffer of a 2-D, unswizzled, K-major case whose row stride is not a multiple of 16 bytes: the tensor map
    keeps strides in 16-byte units, so rows are read ``floor(stride/16)*16`` bytes apart (the H100 reads
    ``REFUSED_CASES[0]``'s 200-byte stride as 192).

    >>> print(REFUSED_CASES[0]["name"])
    row stride 200 bytes (globalStrides not a multiple of 16)
    >>> decode_chunks(REFUSED_CASES[0], truncated_stride_bytes(REFUSED_CASES[0]), rows=2)[1][:3]
    ['0,96', '1,4', '1,12']
    """
    from ..kernels.tma_copy import ELEMENT_BYTES, case_bytes, check_case
    check_case(case, "truncated_stride_bytes")
    esize = ELEMENT_BYTES[case["dtype"]]
    _, (s0, s1) = case["gmem"]
    if s1 != 1 or case["smem"][0] != "plain" or case["smem"][1]:
        raise ValueError("truncated_stride_bytes: a row-major global tensor and an unswizzled plain smem tile")
    step = (s0 * esize) // 16 * 16 // esize            # the stride the TMA uses, in elements
    bm, bk = case["tile"]
    tm, tk = case["tiles"][0]
    buf = bytearray([0xFF]) * case_bytes(case)
    for r, c in itertools.product(range(bm), range(bk)):
        flat = (tm * bm + r) * step + tk * bk + c     # the element the TMA reads for box (c, r)
        at = (r * bk + c) * esize
        buf[at:at + esize] = _code_bytes(case, divmod(flat, s0))
    return bytes(buf)


def _describe_refused(case, got: bytes) -> str:
    """One line on what a refused configuration did on the GPU."""
    from ..kernels.tma_copy import ELEMENT_BYTES
    if got == expected_or_none(case):
        return "as if legal"
    esize, s0 = ELEMENT_BYTES[case["dtype"]], case["gmem"][1][0]
    try:
        if got == truncated_stride_bytes(case):
            return (f"no error, wrong data: rows read {s0 * esize // 16 * 16} bytes apart instead of {s0 * esize} "
                    f"(the stride truncated to 16-byte units)")
    except ValueError:
        pass
    rows = decode_chunks(case, got, 0, len(got) // 128)
    per_row = case["tile"][1] * esize // 128 or 1
    tile_rows = [tuple(sum(rows[k:k + per_row], [])) for k in range(0, len(rows), per_row)]
    if len(set(tile_rows)) == 1:
        return (f"no error, wrong data: all {len(tile_rows)} rows of the tile hold the same "
                f"{len(tile_rows[0]) * 16 // esize} elements, starting at global {tile_rows[0][0]}")
    return "no error, data that neither model explains"


def expected_or_none(case):
    try:
        return expected_bytes(case)
    except Exception:
        return None


def _pack(b: bytes) -> str:
    return base64.b64encode(zlib.compress(b, 9)).decode()


def unpack(s: str) -> bytes:
    """The bytes of a buffer as a record stores them (zlib-compressed, base64 text).

    >>> import base64, zlib
    >>> unpack(base64.b64encode(zlib.compress(b"TMA")).decode())
    b'TMA'
    """
    try:
        return zlib.decompress(base64.b64decode(s, validate=True))
    except (TypeError, ValueError, zlib.error) as err:      # binascii.Error is a ValueError
        raise LayoutError(f"unpack: s must be a buffer as a record stores it (zlib-compressed, base64 text), "
                          f"got {str(s)[:40]!r}: {err}") from None


def decode_chunks(case, buf: bytes, first: int = 0, rows: int = 8):
    """``rows`` rows of 128 bytes from byte ``first``, one label per 16-byte chunk: ``"r,c"`` = the global coordinate
    of its first element, ``"fill"`` = zeros (out-of-bounds fill), ``"-"`` = untouched (0xFF bytes).

    >>> decode_chunks(CASES[0], expected_bytes(CASES[0]), rows=2)[1][:3]
    ['40,32', '41,32', '42,32']
    """
    from ..kernels.tma_copy import ELEMENT_BYTES, check_case
    check_case(case, "decode_chunks")
    if not isinstance(buf, (bytes, bytearray)) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (first, rows)):
        raise LayoutError(f"decode_chunks: buf is the buffer's bytes and first, rows ints >= 0, got "
                          f"{type(buf).__name__}, {first!r}, {rows!r}")
    esize, nrows = ELEMENT_BYTES[case["dtype"]], case["gmem"][0][0]

    def label(chunk):
        if len(chunk) < 16:
            return ""
        if chunk == bytes(16):
            return "fill"
        if chunk == b"\xff" * 16:
            return "-"
        code = int.from_bytes(chunk[:esize], "little") - 1
        return f"{code % nrows},{code // nrows}"
    return [[label(buf[at:at + 16]) for at in range(first + 128 * r, first + 128 * r + 128, 16)] for r in range(rows)]


def _run_one(case):
    from ..kernels.tma_copy import run_tma_copy
    return bytes(run_tma_copy(case))


def _run_isolated(case):
    """A case that may break the CUDA context runs in its own process; returns its outcome dict."""
    code = ("import json,sys;from layoutlab.probe.tma import _run_one,_pack;"
            "print('@@' + _pack(_run_one(json.loads(sys.argv[1]))))")
    try:
        p = subprocess.run([sys.executable, "-c", code, json.dumps(case)], capture_output=True, text=True,
                           timeout=60)
    except subprocess.TimeoutExpired:       # e.g. a TMA that never completes leaves the mbarrier waiting
        return {"status": "timeout", "message": "no result within 60 s (the kernel hung or the launch stalled)"}
    out = [ln for ln in p.stdout.splitlines() if ln.startswith("@@")]
    if p.returncode == 0 and out:
        return {"status": "ran", "bytes": out[-1][2:]}
    tail = (p.stderr or p.stdout).strip().splitlines()[-6:]
    return {"status": "error", "returncode": p.returncode, "message": "\n".join(tail)[-1500:]}


def _versions():
    import importlib.metadata as md

    from .atoms import _driver_version
    v = {}
    for pkg in ("nvidia-cutlass-dsl", "cupy-cuda12x", "cupy-cuda13x", "cuda-python", "cuda-bindings"):
        try:
            v[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    try:
        v["driver"] = _driver_version()
    except OSError:
        pass
    return v


def run() -> dict:
    """Run every case on this GPU; returns the JSON-able record (raw buffers zlib+base64 packed)."""
    import cupy
    props = cupy.cuda.runtime.getDeviceProperties(0)
    rec = {"gpu": props["name"].decode() if isinstance(props["name"], bytes) else props["name"],
           "compute_capability": f"{props['major']}.{props['minor']}",
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "versions": _versions()}
    # one process per case: a sticky CUDA error cannot spoil the others
    for key, cases in (("cases", CASES), ("multicast_cases", MULTICAST_CASES),
                       ("misaligned_cases", MISALIGNED_CASES), ("refused_cases", REFUSED_CASES)):
        rec[key] = [{"case": case, **_run_isolated(case)} for case in cases]
    return rec


def compare(record: dict) -> dict:
    """Check a record against the model: ``{"checked": n, "bytes": total, "mismatches": [...], "cute_view_mismatches":
    [...], "refused": [(name, what happened)]}``. A mismatch names the case and the first differing bytes.

    >>> from layoutlab import gpu
    >>> recorded = gpu.load_result("tma_probe_h100")
    >>> result = compare({"cases": recorded["cases"][:1]})        # the first case of the H100 record
    >>> result["checked"], result["bytes"], result["mismatches"], result["cute_view_mismatches"]
    (1, 2048, [], [])
    """
    if not isinstance(record, dict) or not isinstance(record.get("cases"), list):
        raise LayoutError(f"compare: record must be a TMA probe record (a dict with a list of cases, e.g. "
                          f"gpu.load_result('tma_probe_h100')), got {type(record).__name__}")
    out = {"checked": 0, "bytes": 0, "mismatches": [], "cute_view_mismatches": [], "refused": [],
           "multicast": [], "misaligned": []}
    for key, as_modelled in (("misaligned", "as the model says: the swizzle follows absolute address bits"),
                             ("multicast", "every CTA holds the whole tile")):
        for entry in record.get(f"{key}_cases", []):
            name = entry["case"]["name"]
            if entry["status"] != "ran":
                out[key].append((name, entry["status"], entry.get("message", "")[-300:]))
                continue
            got, want = unpack(entry["bytes"]), expected_bytes(entry["case"])
            out[key].append((name, "ran", as_modelled if got == want else
                             f"{sum(a != b for a, b in zip(got, want))} bytes differ from the model"))
            if got != want and key == "multicast":
                out["mismatches"].append({"case": name, "differing_bytes": -1, "first": []})
    for entry in record["cases"]:
        if entry.get("status", "ran") != "ran":
            out["mismatches"].append({"case": entry["case"]["name"], "status": entry["status"],
                                      "message": entry.get("message", "")[-300:]})
            continue
        case, got = entry["case"], unpack(entry["bytes"])
        for key, want in (("mismatches", expected_bytes(case)), ("cute_view_mismatches", cute_view_bytes(case))):
            if got != want:
                diff = [i for i in range(max(len(got), len(want))) if got[i:i + 1] != want[i:i + 1]]
                out[key].append({"case": case["name"], "differing_bytes": len(diff), "first": diff[:8]})
        out["checked"] += 1
        out["bytes"] += len(got)
    for entry in record.get("refused_cases", []):
        what = (_describe_refused(entry["case"], unpack(entry["bytes"])) if entry["status"] == "ran"
                else entry.get("message", "")[-300:])
        out["refused"].append((entry["case"]["name"], entry["status"], what))
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m layoutlab.probe.tma OUT.json", file=sys.stderr)
        return 2
    rec = run()
    with open(argv[0], "w") as fh:
        json.dump(rec, fh, indent=1)
    res = compare(rec)
    print(json.dumps(res, indent=1))
    return 0 if not res["mismatches"] else 1


if __name__ == "__main__":
    sys.exit(main())
