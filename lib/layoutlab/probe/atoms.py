"""Hardware truth for the MMA and copy atoms: run the real instructions on the GPU and see where data lands.

Every TV layout of :mod:`layoutlab.cute.atom` is checked on an sm_90a GPU with coordinate-coded data and random integer
operands (exact products): ``ldmatrix``/``stmatrix`` x1/x2/x4 (``.trans`` too), ``mma.sync`` f16/bf16/tf32 (fixed
only up to a shared relabelling of m, n, k), ``wgmma`` m64nNk16 for every N, A and B in the PTX ISA's no-swizzle
canonical layouts (LBO/SBO also exchanged) or A from registers. Kernels: :mod:`layoutlab.probe.sources`.
``python -m layoutlab.probe OUT.json`` writes :func:`run`'s record; :func:`compare` checks it (CI: 424 checks).
"""

import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from ..errors import LayoutError
from .sources import LDSM_CASES, MMA_SYNC_CASES, WGMMA_NS, _STAGE_ELEMS, _compile, _ldsm_name, _sources

__all__ = ["run", "record", "compare", "main", "WGMMA_NS", "MMA_SYNC_CASES", "LDSM_CASES"]


def _f16_bits(x, ab):
    """16-bit patterns of float values (exact small integers) for f16/bf16."""
    x = np.asarray(x, dtype=np.float32)
    if ab == "f16":
        return x.astype(np.float16).view(np.uint16)
    return (x.view(np.uint32) >> 16).astype(np.uint16)  # bf16 = top half of an exact f32


def _pack_pairs(bits16):
    """Pack 16-bit values pairwise into 32-bit registers, element 2i in the low half."""
    b = bits16.astype(np.uint32).reshape(bits16.shape[0], -1, 2)
    return (b[..., 0] | (b[..., 1] << 16)).astype(np.uint32)


def _unpack_d(raw, acc):
    """Accumulator registers -> float values in register order (f16x2: low half first)."""
    raw = np.asarray(raw, dtype=np.uint32)
    if acc == "f32":
        return raw.view(np.float32).astype(np.float64)
    lo = (raw & 0xFFFF).astype(np.uint16).view(np.float16)
    hi = (raw >> 16).astype(np.uint16).view(np.float16)
    return np.stack([lo, hi], axis=-1).reshape(raw.shape[0], -1).astype(np.float64)


def _tv_table(layout, nthr, nval):
    """(thread, value) -> flat index (colexicographic in the tile) as an (nthr, nval) array."""
    if layout.size() != nthr * nval:
        raise ValueError(f"probe: TV layout {layout} does not have {nthr} threads x {nval} values")
    return layout.evaluate_indices(np.arange(nthr * nval)).reshape(nval, nthr).T


def _wgmma_tv(n, a_regs=False):
    """The table of wgmma m64nNk16's C (the SS atom), or with ``a_regs`` of its A in registers."""
    from ..cute.atom import make_mma_atom
    from ..nvgpu.warpgroup import WarpgroupMmaF16BF16Op

    if a_regs:
        op = WarpgroupMmaF16BF16Op("f16", "f32", (64, n, 16), a_src="rmem")
        return _tv_table(make_mma_atom(op).layout_a_tv, 128, 8)
    return _tv_table(make_mma_atom(WarpgroupMmaF16BF16Op("f16", "f32", (64, n, 16))).layout_c_tv, 128,
                     n // 2)


def _gather(X, table):
    """The elements of ``X`` at the flat (column-major) indices of ``table``."""
    return X.reshape(-1, order="F")[table]


def _coord_operands(M, N, K):
    """A (M, K) and B (K, N) whose product names its own coordinate: ``(A B)[m, n] = m + M n``."""
    A, B = np.zeros((M, K)), np.zeros((K, N))
    A[:, 0], A[:, 1], B[0, :], B[1, :] = np.arange(M), 1, 1, M * np.arange(N)
    return A, B


def _as_list(d):
    """Accumulator values for the record: integers where they all are."""
    return d.astype(np.int64).tolist() if np.all(d == np.round(d)) else d.tolist()


def _mma_sync_atom(name):
    from ..cute.atom import make_mma_atom
    from ..nvgpu.warp import MmaF16BF16Op, MmaTF32Op

    _, _, ab, acc, _, _, _, M, N, K = next(c for c in MMA_SYNC_CASES if c[0] == name)
    if ab == "tf32":
        return make_mma_atom(MmaTF32Op((M, N, K)))
    return make_mma_atom(MmaF16BF16Op(ab, acc, (M, N, K)))


def _probe_mma_sync(mod, cp, rng):
    out = {}
    for name, shape, ab, acc, na, nb, nd, M, N, K in MMA_SYNC_CASES:
        atom = _mma_sync_atom(name)
        per_reg = 1 if ab == "tf32" else 2
        ta, tb = _tv_table(atom.layout_a_tv, 32, per_reg * na), _tv_table(atom.layout_b_tv, 32, per_reg * nb)
        rec = {"layout_a_fed": str(atom.layout_a_tv), "layout_b_fed": str(atom.layout_b_tv)}
        rand = rng.integers(-2, 3, (M, K)).astype(np.float64), rng.integers(-2, 3, (K, N)).astype(np.float64)
        for design, (A, B) in (("coord", _coord_operands(M, N, K)), ("random", rand)):
            fa, fb = _gather(A, ta), _gather(B.T, tb)  # (m, k) at flat index m + M k; (k, n) in the (N, K) tile
            if ab == "tf32":
                ra, rb = fa.astype(np.float32).view(np.uint32), fb.astype(np.float32).view(np.uint32)
            else:
                ra, rb = _pack_pairs(_f16_bits(fa, ab)), _pack_pairs(_f16_bits(fb, ab))
            dA, dB = cp.asarray(ra.reshape(-1)), cp.asarray(rb.reshape(-1))
            dD = cp.zeros(32 * nd, dtype=cp.uint32)
            mod.get_function(f"mma_{name}")((1,), (32,), (dA, dB, dD))
            d = _unpack_d(cp.asnumpy(dD).reshape(32, nd), acc)
            if design == "coord":
                rec["d_coord"] = _as_list(d)
            else:
                rec["random_ok"] = bool(np.array_equal(d, _gather(A @ B, _tv_table(atom.layout_c_tv, 32, d.shape[1]))))
        out[name] = rec
    return out


def _probe_ldsm(mod, cp):
    out = {}
    src16 = cp.asarray(np.arange(_STAGE_ELEMS, dtype=np.uint16))
    for ins, nmat, trans in LDSM_CASES:
        nm = _ldsm_name(ins, nmat, trans)
        regs = cp.zeros(32 * nmat, dtype=cp.uint32)
        smem = cp.zeros(_STAGE_ELEMS, dtype=cp.uint16)
        # stmatrix: value v of lane l carries the code 1 + 8 l + v (two per register); 0 = untouched
        src32 = cp.asarray(_pack_pairs(1 + 8 * np.arange(32)[:, None] + np.arange(2 * nmat)).reshape(-1))
        mod.get_function(nm)((1,), (32,), (src16, src32, regs, smem))
        if ins == "ldmatrix":
            r = cp.asnumpy(regs).reshape(32, nmat)
            # value 2j is the low half of register j: the element offset it came from
            vals = np.stack([r & 0xFFFF, r >> 16], axis=-1).reshape(32, 2 * nmat)
            out[nm] = {"lane_value_to_offset": vals.astype(int).tolist()}
        else:
            s = cp.asnumpy(smem).astype(int).tolist()
            # offset -> (lane, value) that wrote it, or -1 where nothing was written
            wrote = [[-1, -1] if c == 0xFFFF else [(c - 1) // 8, (c - 1) % 8] for c in s[: 64 * nmat]]
            out[nm] = {"offset_to_lane_value": wrote}
    return out


def _canonical_offsets(rows, K, major, lbo, sbo, T=8):
    """Element offsets of a (rows x K) 16-bit operand in the no-swizzle canonical layout, LBO/SBO in elements:
    K-major:  ((8,rows/8),(T,K/T)):((T,SBO),(1,LBO));  MN-major: ((T,rows/T),(8,K/8)):((1,SBO),(T,LBO)).
    """
    r, k = np.arange(rows)[:, None], np.arange(K)[None, :]
    if major == "K":
        return (r % 8) * T + (r // 8) * sbo + (k % T) + (k // T) * lbo
    return (r % T) + (r // T) * sbo + (k % 8) * T + (k // 8) * lbo


def _smem_image(rows, K, major, T=8):
    """The canonical layout and its (LBO, SBO) in bytes: K-major LBO = 64 el (next core matrix in K), SBO = 64 K/T el
    (next 8 rows); MN-major SBO = 64 el (next T rows), LBO = 8 rows el."""
    lbo, sbo = (64, 64 * (K // T)) if major == "K" else (8 * rows, 64)
    return _canonical_offsets(rows, K, major, lbo, sbo, T), 2 * lbo, 2 * sbo


def _reads_inside(rows, major, lbo, sbo, capacity, K=16, T=8):
    """Does the canonical no-swizzle layout with these LBO/SBO (bytes) stay inside ``capacity`` elements?"""
    return _canonical_offsets(rows, K, major, lbo // 2, sbo // 2, T).max() < capacity


def _image(X, off, ab="f16"):
    img = np.zeros(off.size, dtype=np.uint16)
    img[off.reshape(-1)] = _f16_bits(X.reshape(-1), ab)
    return img


def _probe_wgmma(mods, cp, rng, errors):
    def fn(name):
        for m in mods:
            try:
                return m.get_function(name)
            except Exception:  # noqa: BLE001 - cupy raises a driver error for a missing symbol
                continue
        raise KeyError(name)

    out = {}
    empty16 = cp.zeros(1, dtype=cp.uint16)
    empty32 = cp.zeros(1, dtype=cp.uint32)
    for n in WGMMA_NS:
        try:
            out[str(n)] = _probe_wgmma_n(n, fn, cp, rng, empty16, empty32)
        except Exception as e:  # noqa: BLE001 - one N failing must not hide the others
            errors[f"wgmma n{n}"] = f"{type(e).__name__}: {e}"[:2000]
            print(f"probe: wgmma n={n} failed: {e!r}", file=sys.stderr)
    return out


def _probe_wgmma_n(n, fn, cp, rng, empty16, empty32):
    """All probes of one N: SS in four majorness pairs (+ bf16 for N = 64, 256) and RS with both B majors."""
    rec, nd, c_claim = {}, n // 2, _wgmma_tv(n)

    def launch(name, imgA, afrag, imgB, prm):
        dout = cp.zeros(128 * nd, dtype=cp.float32)
        fn(name)((1,), (128,), (imgA, afrag, imgB, cp.asarray(np.array(prm, dtype=np.uint32)), dout))
        return cp.asnumpy(dout).reshape(128, nd).astype(np.float64)

    Acoord, Bcoord = _coord_operands(64, n, 16)
    Arand = rng.integers(-2, 3, (64, 16)).astype(np.float64)
    Brand = rng.integers(-2, 3, (16, n)).astype(np.float64)
    variants = [("f16", 0, 0), ("f16", 1, 1), ("f16", 0, 1), ("f16", 1, 0)] + [("bf16", 0, 0)] * (n in (64, 256))
    b_swap = {}  # B majorness -> whether the LBO/SBO-swapped descriptor was the one that worked
    for ab, ta, tb in variants:
        ma, mb = "MN" if ta else "K", "MN" if tb else "K"
        (offA, lboA, sboA), (offB, lboB, sboB) = _smem_image(64, 16, ma), _smem_image(n, 16, mb)
        key, name = f"ss_{ab}_a{ma}_b{mb}", f"wg_ss_{ab}_n{n}_a{ta}_b{tb}"
        res, coords = {}, {}

        def ss(A, B, prm):
            return launch(name, cp.asarray(_image(A, offA, ab)), empty32, cp.asarray(_image(B.T, offB, ab)), prm)

        for swap in (False, True):
            reading = "lbo_sbo_swapped" if swap else "lbo_sbo_as_documented"
            prm = [sboA, lboA, sboB, lboB] if swap else [lboA, sboA, lboB, sboB]
            if swap and not (_reads_inside(64, ma, sboA, lboA, 64 * 16) and _reads_inside(n, mb, sboB, lboB, 256 * 16)):
                # the wrong reading would read outside the buffers (an illegal address poisons the context)
                res[reading], coords[swap] = {"random_ok": False, "skipped": "would read outside the buffers"}, None
                continue
            ok = np.array_equal(ss(Arand, Brand, prm), _gather(Arand @ Brand, c_claim))
            res[reading] = {"random_ok": bool(ok)}
            coords[swap] = ss(Acoord, Bcoord, prm)
        # the probe's own smem layout is right under exactly one reading of the descriptor fields
        swap = not res["lbo_sbo_as_documented"]["random_ok"] and res["lbo_sbo_swapped"]["random_ok"]
        res["random_ok"] = res["lbo_sbo_swapped" if swap else "lbo_sbo_as_documented"]["random_ok"]
        if key == "ss_f16_aK_bK":
            rec["d_coord"] = _as_list(coords[swap])
        else:
            ref = np.array(rec.get("d_coord", []))
            res["d_coord_equals_aK_bK"] = bool(ref.size and np.array_equal(coords[swap], ref))
        if ta == 0 and ab == "f16":
            b_swap[mb] = swap
        rec[key] = res
    # A from registers: A registers hold their own slot code 8 t + v; B selects column k = n % 8 + 8 j
    slot = np.arange(128 * 8, dtype=np.float64).reshape(128, 8)
    for tb in (0, 1):
        mb = "MN" if tb else "K"
        offB, lboB, sboB = _smem_image(n, 16, mb)
        name = f"wg_rs_f16_n{n}_b{tb}"
        prm_b = [0, 0, sboB, lboB] if b_swap.get(mb) else [0, 0, lboB, sboB]

        def rs(A_regs, B):
            afrag = cp.asarray(_pack_pairs(_f16_bits(A_regs, "f16")).reshape(-1))
            return launch(name, empty16, afrag, cp.asarray(_image(B.T, offB)), prm_b)

        runs = []
        for j in (0, 1):
            Bsel = np.zeros((16, n))
            Bsel[np.arange(n) % 8 + 8 * j, np.arange(n)] = 1
            runs.append(rs(slot, Bsel))
        d = rs(_gather(Arand, _wgmma_tv(n, a_regs=True)), Brand)
        rec[f"rs_f16_b{mb}"] = {"a_observed": _decode_rs(rec["d_coord"], runs, n).tolist(),
                                "random_ok": bool(np.array_equal(d, _gather(Arand @ Brand, c_claim)))}
    return rec


def _decode_rs(d_coord, runs, n):
    """(t, v) -> m + 64 k of register-A from the selection runs, read through the observed C map."""
    obs_c = _coords(d_coord, 64 * n)
    where = np.full((64 * n, 2), -1, dtype=np.int64)          # flat C index -> the (t, v) that holds it
    tt, vv = np.nonzero(obs_c >= 0)
    where[obs_c[tt, vv]] = np.stack([tt, vv], axis=1)
    obs_a = np.full((128, 8), -1, dtype=np.int64)
    mm, col = (x.reshape(-1) for x in np.meshgrid(np.arange(64), np.arange(min(n, 8)), indexing="ij"))
    t, v = where[mm + 64 * col].T
    for j, run_d in enumerate(runs):  # run j: B selects k = n % 8 + 8 j, so D[m, n] = A[m, k]
        code = np.where(t >= 0, np.asarray(run_d, dtype=np.float64)[t, v], -1)
        good = (code >= 0) & (code < 1024) & (code == np.round(code))
        c = code[good].astype(np.int64)
        obs_a[c // 8, c % 8] = mm[good] + 64 * (col[good] + 8 * j)
    return obs_a


def _driver_version():
    return subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                          capture_output=True, text=True).stdout.strip()


def _versions():
    v = {"python": sys.version.split()[0], "numpy": np.__version__}
    try:
        import cupy
        v["cupy"] = cupy.__version__
        v["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
        v["cuda_driver"] = cupy.cuda.runtime.driverGetVersion()
    except Exception:  # noqa: BLE001 - versions are informative only
        pass
    try:
        v["nvidia_driver"] = _driver_version()
        v["nvcc"] = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    except OSError:
        pass
    return v


def run(seed=0):
    """Run every probe on GPU 0 and return the record (a JSON-able dict). Needs CuPy, nvcc and sm_90a."""
    import cupy as cp

    from .. import gpu

    if not gpu.is_hopper():
        raise RuntimeError(f"probe.run needs an sm_90a GPU (H100/H200); found {gpu.name() or gpu.reason()}")
    with tempfile.TemporaryDirectory() as tmp:  # CuPy may load a cubin lazily: keep the files until done
        workdir = os.environ.get("LAYOUTLAB_PROBE_BUILD") or tmp  # keep (and reuse) the cubins there
        Path(workdir).mkdir(parents=True, exist_ok=True)
        mods, errors = _compile(_sources(), workdir)
        rec = record(mods, cp, seed=seed, gpu_name=gpu.name(), versions=_versions())
        rec.setdefault("errors", {}).update({f"nvcc {k}": v for k, v in errors.items()})
        return rec


def record(mods, cp, seed=0, gpu_name=None, versions=None):
    """Run the kernels of ``mods`` (compiled :func:`_sources`: mma.sync/ldmatrix, then wgmma) through the array
    module ``cp`` (CuPy, or the tests' simulated instruction set); return the record (failures under ``errors``)."""
    rng = np.random.default_rng(seed)
    rec = {"what": "layoutlab.probe: where the real instructions put each element", "gpu": gpu_name,
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "versions": versions or {}, "seed": seed, "errors": {}}
    families = (("mma_sync", lambda: _probe_mma_sync(mods[0], cp, rng)),
                ("ldsm_stsm", lambda: _probe_ldsm(mods[0], cp)),
                ("wgmma", lambda: _probe_wgmma([m for m in mods[1:] if m is not None], cp, rng, rec["errors"])))
    for key, fn in families:
        try:
            rec[key] = fn()
        except Exception as e:  # noqa: BLE001 - keep what the other families found
            rec["errors"][key] = f"{type(e).__name__}: {e}"[:4000]
            print(f"probe: {key} failed: {e!r}", file=sys.stderr)
    return rec


def _coords(values, size):
    """Coordinate-coded accumulator values -> flat tile indices; -1 where a value is no valid code."""
    d = np.asarray(values, dtype=np.float64)
    good = np.isfinite(d) & (d == np.round(d)) & (d >= 0) & (d < size)
    return np.where(good, np.nan_to_num(d), -1).astype(np.int64)


def compare(rec):
    """Check a probe record against :mod:`layoutlab.cute.atom`: ``{"checked": [...], "mismatches": [...]}``, one entry
    per atom/variant compared, and what differed (empty when the hardware and our TV layouts agree).

    >>> from layoutlab import gpu
    >>> result = compare(gpu.load_result("atoms_probe_h100"))
    >>> len(result["checked"]), result["mismatches"]
    (424, [])
    """
    from ..cute.atom import make_copy_atom
    from ..nvgpu.warp import LdMatrix8x8x16bOp, StMatrix8x8x16bOp

    checked, bad = [], []

    def check(label, ok, detail=""):
        checked.append(label)
        if not ok:
            bad.append(f"{label}: {detail}" if detail else label)

    def check_table(label, obs, claim, differ="slots differ"):
        check(label, np.array_equal(obs, claim), f"{int((obs != claim).sum())} of {claim.size} {differ}")

    if not isinstance(rec, dict):
        raise LayoutError(f"compare: rec must be an atoms probe record (a dict, e.g. "
                          f"gpu.load_result('atoms_probe_h100')), got {type(rec).__name__}")
    for where, err in (rec.get("errors") or {}).items():
        check(f"probe ran: {where}", False, err.splitlines()[0] if err else "failed")
    for fam in ("mma_sync", "ldsm_stsm", "wgmma"):
        if fam not in rec:
            check(f"probe ran: {fam}", False, "no results recorded")
            rec = {**rec, fam: {}}

    for name, *_ in MMA_SYNC_CASES:
        if name not in rec["mma_sync"]:
            continue
        r, atom = rec["mma_sync"][name], _mma_sync_atom(name)
        check(f"mma.sync {name}: A/B layouts fed", r["layout_a_fed"] == str(atom.layout_a_tv)
              and r["layout_b_fed"] == str(atom.layout_b_tv), "the recording used other A/B layouts")
        obs = _coords(r["d_coord"], 16 * 8)  # D[m, n] = m + 16 n is the flat index in the 16x8 C tile
        check_table(f"mma.sync {name}: C (t,v)->(m,n)", obs, _tv_table(atom.layout_c_tv, 32, obs.shape[1]))
        check(f"mma.sync {name}: random A*B exact", r["random_ok"])

    for ins, nmat, trans in LDSM_CASES:
        nm = _ldsm_name(ins, nmat, trans)
        if nm not in rec["ldsm_stsm"]:
            continue
        r = rec["ldsm_stsm"][nm]
        op = LdMatrix8x8x16bOp if ins == "ldmatrix" else StMatrix8x8x16bOp
        atom = make_copy_atom(op(trans, nmat), "f16")
        if ins == "ldmatrix":
            obs = np.array(r["lane_value_to_offset"])
            claim = _tv_table(atom.layout_dst_tv, 32, obs.shape[1])
        else:
            claim = _tv_table(atom.layout_src_tv, 32, 2 * nmat)
            obs = np.full_like(claim, -1)
            for off, (lane, v) in enumerate(r["offset_to_lane_value"]):
                if lane >= 0:
                    obs[lane, v] = off
        check_table(f"{nm}: (lane,value)->element", obs, claim, "differ")

    for n in WGMMA_NS:
        if str(n) not in rec["wgmma"]:
            continue
        r, atom = rec["wgmma"][str(n)], f"wgmma m64n{n}k16"
        obs_c = _coords(r["d_coord"], 64 * n)  # D[m, n] = m + 64 n: the flat index in the 64xN tile
        check_table(f"{atom} SS: C (t,v)->(m,n)", obs_c, _wgmma_tv(n))
        for key, res in r.items():
            if key.startswith(("ss_", "rs_")):
                check(f"{atom} {key}: random A*B exact", res["random_ok"])
            if key.startswith("ss_") and "d_coord_equals_aK_bK" in res:
                check(f"{atom} {key}: same C layout as K/K", res["d_coord_equals_aK_bK"])
            elif key.startswith("rs_"):
                check_table(f"{atom} {key}: A (t,v)->(m,k)", np.asarray(res["a_observed"], dtype=np.int64),
                            _wgmma_tv(n, a_regs=True))
    return {"checked": checked, "mismatches": bad}


def _dumps(rec):
    """Compact JSON, one line per top-level probe family, numpy scalars as Python numbers."""
    def default(x):
        if isinstance(x, np.generic):
            return x.item()
        raise TypeError(f"probe: cannot store {type(x).__name__} in JSON")
    return json.dumps(rec, separators=(",", ":"), default=default)


def _report(prefix, res):
    print(f"{prefix}: {len(res['checked'])} checks, {len(res['mismatches'])} mismatches")
    for m in res["mismatches"][:50]:
        print("  MISMATCH", m)


def main(argv=None):
    """``python -m layoutlab.probe OUT.json``: run the probes, write the record, print the comparison."""
    argv = sys.argv[1:] if argv is None else argv
    path = Path(argv[0]) if argv else Path("atoms_probe.json")
    rec = run()
    path.write_text(_dumps(rec))
    try:
        _report("probe", compare(rec))
    except Exception as e:  # noqa: BLE001 - the record is written first; comparison may be fixed later
        print("probe: comparison failed:", repr(e))
    return 0

