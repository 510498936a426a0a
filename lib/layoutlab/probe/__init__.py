"""Hardware truth for the MMA and copy atoms: run the real instructions on the GPU and see where data lands.

Every TV layout in :mod:`layoutlab.atoms` is a claim about the hardware: "thread ``t``, value ``v`` of this
instruction holds element ``(m, n)``". This module checks the claims on a real GPU (sm_90a for ``wgmma``,
sm_80+ for the rest):

* ``ldmatrix`` x1/x2/x4, with and without ``.trans``: shared memory is filled with each element's own
  offset, every lane hands in the row address that the copy atom's source layout says, and the registers
  that come back are read as offsets. That gives ``(lane, value) -> element`` straight from the hardware,
  which must equal the atom's destination TV layout.
* ``stmatrix`` likewise in reverse: every register holds the code of its own ``(lane, value)``; shared
  memory is read back.
* ``wgmma`` m64nNk16 with A and B from shared memory (no-swizzle canonical layouts, K-major and MN-major):
  A and B are built so that ``D[m, n] = m + 64 n``; the accumulator registers that come back therefore
  *name* their own coordinate, which must equal the atom's C layout. Random integer A, B check the full
  product exactly, for every N in 8, 16, ..., 256.
* ``wgmma`` with A from registers: each A register holds the code ``8 t + v`` of its own slot and B is a
  0/1 selection matrix, so ``D[m, n] = A[m, k(n)]`` names the slot that holds ``A[m, k]``; read through the
  C layout observed above this gives ``(t, v) -> (m, k)`` from the hardware.
* ``mma.sync`` (m16n8k8 / m16n8k16 f16 and bf16, m16n8k4 / m16n8k8 tf32): A and B only ever live in
  registers, so the hardware fixes their layouts only up to a relabelling of m, n, k shared by A, B, C
  (a matrix product does not change when rows of A and C are renumbered together). The probe loads A and
  B through our TV layouts with coordinate-coded values (``D[m, n] = m + 16 n``) and with random integers:
  the accumulator registers must name exactly the coordinates that our C layout says, and the whole product
  must be exact.

The shared-memory operands use the PTX ISA's no-swizzle canonical layouts; each is also tried with the
descriptor's LBO and SBO fields exchanged (where that stays inside the buffers): on the H100 only the
documented reading reproduces A*B, for K-major and MN-major alike.

Recorded on an H100 (``results/atoms_probe_h100.json.gz``): 424 checks -- 8 mma.sync atoms, 12 ldmatrix /
stmatrix forms, wgmma m64nNk16 for all 32 N in 4 majorness pairs (+ bf16 at N = 64, 256) and with A from
registers -- and no mismatch.

Kernels are CUDA C++ with inline PTX, built for ``sm_90a`` by ``nvcc`` and launched with CuPy
(``LAYOUTLAB_PROBE_BUILD=dir`` keeps and reuses the cubins). :func:`run` returns one JSON-able record;
``python -m layoutlab.probe OUT.json`` writes it. :func:`compare` checks a record (live, or the one stored in
``results/atoms_probe_h100.json.gz``) against the atoms' TV layouts; CI runs that on the recording.

Example (on an H100, about 10 s)::

    >>> rec = run()                        # doctest: +SKIP
    >>> compare(rec)["mismatches"]         # doctest: +SKIP
    []
"""

import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from .sources import LDSM_CASES, MMA_SYNC_CASES, WGMMA_NS, _STAGE_ELEMS, _compile, _sources

__all__ = ["run", "record", "compare", "main", "WGMMA_NS", "MMA_SYNC_CASES", "LDSM_CASES"]


# ------------------------------------------------------------------------------------------------------
# Host side
# ------------------------------------------------------------------------------------------------------

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


def _mma_sync_atom(name):
    from .. import atoms

    _, _, ab, acc, _, _, _, M, N, K = next(c for c in MMA_SYNC_CASES if c[0] == name)
    if ab == "tf32":
        return atoms.make_mma_atom(atoms.MmaTF32Op((M, N, K)))
    return atoms.make_mma_atom(atoms.MmaF16BF16Op(ab, acc, (M, N, K)))


def _probe_mma_sync(mod, cp, rng):
    out = {}
    for name, shape, ab, acc, na, nb, nd, M, N, K in MMA_SYNC_CASES:
        atom = _mma_sync_atom(name)
        vals_a, vals_b = 2 * na if ab != "tf32" else na, 2 * nb if ab != "tf32" else nb
        ta = _tv_table(atom.layout_a_tv, 32, vals_a)
        tb = _tv_table(atom.layout_b_tv, 32, vals_b)
        rec = {"layout_a_fed": str(atom.layout_a_tv), "layout_b_fed": str(atom.layout_b_tv)}
        for design in ("coord", "random"):
            if design == "coord":
                A = np.zeros((M, K)); A[:, 0] = np.arange(M); A[:, 1] = 1
                B = np.zeros((K, N)); B[0, :] = 1; B[1, :] = 16 * np.arange(N)
            else:
                A = rng.integers(-2, 3, (M, K)).astype(np.float64)
                B = rng.integers(-2, 3, (K, N)).astype(np.float64)
            fa = A.reshape(-1, order="F")[ta]  # (m, k) at flat index m + M k
            fb = B.T.reshape(-1, order="F")[tb]  # (k, n) in the (N, K) tile at n + N k
            if ab == "tf32":
                ra = fa.astype(np.float32).view(np.uint32)
                rb = fb.astype(np.float32).view(np.uint32)
            else:
                ra, rb = _pack_pairs(_f16_bits(fa, ab)), _pack_pairs(_f16_bits(fb, ab))
            dA, dB = cp.asarray(ra.reshape(-1)), cp.asarray(rb.reshape(-1))
            dD = cp.zeros(32 * nd, dtype=cp.uint32)
            mod.get_function(f"mma_{name}")((1,), (32,), (dA, dB, dD))
            d = _unpack_d(cp.asnumpy(dD).reshape(32, nd), acc)
            if design == "coord":
                rec["d_coord"] = d.astype(np.int64).tolist() if np.all(d == np.round(d)) else d.tolist()
            else:
                C = A @ B
                rec["random_ok"] = bool(np.array_equal(d, _c_from_table(C, _tv_table(atom.layout_c_tv, 32, d.shape[1]))))
        out[name] = rec
    return out


def _c_from_table(C, table):
    return C.reshape(-1, order="F")[table]


def _probe_ldsm(mod, cp):
    out = {}
    src16 = cp.asarray(np.arange(_STAGE_ELEMS, dtype=np.uint16))
    for ins, nmat, trans in LDSM_CASES:
        nm = f"{ins}_x{nmat}{'_t' if trans else ''}"
        regs = cp.zeros(32 * nmat, dtype=cp.uint32)
        smem = cp.zeros(_STAGE_ELEMS, dtype=cp.uint16)
        # stmatrix: register j of lane l carries codes 1 + 8 l + 2 j (+1 in the high half); 0 = untouched
        codes = np.array([[(1 + 8 * l + 2 * j) | ((2 + 8 * l + 2 * j) << 16) for j in range(nmat)]
                          for l in range(32)], dtype=np.uint32)
        src32 = cp.asarray(codes.reshape(-1))
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


def _smem_image(rows, K, major, T=8):
    """Offsets of a (rows x K) 16-bit operand in the no-swizzle canonical layout, and (LBO, SBO) in bytes.

    K-major:  ((8,rows/8),(T,K/T)):((T,SBO),(1,LBO))  with LBO = 64 el (next core matrix in K),
              SBO = 64 * K/T el (next 8 rows).
    MN-major: ((T,rows/T),(8,K/8)):((1,SBO),(T,LBO)) with SBO = 64 el (next T rows), LBO = 8 * rows el.
    """
    r = np.arange(rows)[:, None]
    k = np.arange(K)[None, :]
    if major == "K":
        off = (r % 8) * T + (r // 8) * (64 * (K // T)) + (k % T) + (k // T) * 64
        lbo, sbo = 64 * 2, 64 * (K // T) * 2
    else:
        off = (r % T) + (r // T) * 64 + (k % 8) * T + (k // 8) * (8 * rows)
        lbo, sbo = 8 * rows * 2, 64 * 2
    return off, lbo, sbo


def _reads_inside(rows, major, lbo, sbo, capacity, K=16, T=8):
    """Does the canonical no-swizzle layout with these LBO/SBO (bytes) stay inside ``capacity`` elements?"""
    lbo_e, sbo_e = lbo // 2, sbo // 2
    if major == "K":
        top = (T - 1) + 7 * T + (rows // 8 - 1) * sbo_e + (K // T - 1) * lbo_e
    else:
        top = (T - 1) + (rows // T - 1) * sbo_e + 7 * T + (K // 8 - 1) * lbo_e
    return top < capacity


def _image(X, off, ab="f16"):
    img = np.zeros(off.size, dtype=np.uint16)
    img[off.reshape(-1)] = _f16_bits(X.reshape(-1), ab)
    return img


def _probe_wgmma(mods, cp, rng, errors=None):
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
            if errors is None:
                raise
            errors[f"wgmma n{n}"] = f"{type(e).__name__}: {e}"[:2000]
            print(f"probe: wgmma n={n} failed: {e!r}", file=sys.stderr)
    return out


def _probe_wgmma_n(n, fn, cp, rng, empty16, empty32):
    """All probes of one N: SS in four majorness pairs (+ bf16 for N = 64, 256) and RS with both B majors."""
    from .. import atoms

    rec = {}
    nd = n // 2
    c_claim = _tv_table(atoms.make_mma_atom(atoms.WarpgroupMmaF16BF16Op("f16", "f32", (64, n, 16))).layout_c_tv, 128, nd)

    def launch(name, imgA, afrag, imgB, prm):
        dout = cp.zeros(128 * nd, dtype=cp.float32)
        fn(name)((1,), (128,), (imgA, afrag, imgB, cp.asarray(np.array(prm, dtype=np.uint32)), dout))
        return cp.asnumpy(dout).reshape(128, nd).astype(np.float64)

    Acoord = np.zeros((64, 16)); Acoord[:, 0] = np.arange(64); Acoord[:, 1] = 1
    Bcoord = np.zeros((16, n)); Bcoord[0, :] = 1; Bcoord[1, :] = 64 * np.arange(n)
    Arand = rng.integers(-2, 3, (64, 16)).astype(np.float64)
    Brand = rng.integers(-2, 3, (16, n)).astype(np.float64)
    variants = [("f16", 0, 0), ("f16", 1, 1), ("f16", 0, 1), ("f16", 1, 0)] + ([("bf16", 0, 0)] if n in (64, 256) else [])
    b_swap = {}  # B majorness -> whether the LBO/SBO-swapped descriptor was the one that worked
    for ab, ta, tb in variants:
        offA, lboA, sboA = _smem_image(64, 16, "MN" if ta else "K")
        offB, lboB, sboB = _smem_image(n, 16, "MN" if tb else "K")
        key = f"ss_{ab}_a{'MN' if ta else 'K'}_b{'MN' if tb else 'K'}"
        name = f"wg_ss_{ab}_n{n}_a{ta}_b{tb}"
        res, coords = {}, {}
        for swap in (False, True):
            prm = [sboA, lboA, sboB, lboB] if swap else [lboA, sboA, lboB, sboB]
            if swap and not (_reads_inside(64, "MN" if ta else "K", sboA, lboA, 64 * 16)
                             and _reads_inside(n, "MN" if tb else "K", sboB, lboB, 256 * 16)):
                # the wrong reading would send the tensor cores outside the buffers (an illegal address
                # that poisons the context): skip it
                res["lbo_sbo_swapped"] = {"random_ok": False, "skipped": "would read outside the buffers"}
                coords[swap] = None
                continue
            d = launch(name, cp.asarray(_image(Arand, offA, ab)), empty32, cp.asarray(_image(Brand.T, offB, ab)), prm)
            ok = bool(np.array_equal(d, _c_from_table(Arand @ Brand, c_claim)))
            coords[swap] = launch(name, cp.asarray(_image(Acoord, offA, ab)), empty32,
                                  cp.asarray(_image(Bcoord.T, offB, ab)), prm)
            res["lbo_sbo_swapped" if swap else "lbo_sbo_as_documented"] = {"random_ok": ok}
        # the probe's own smem layout is right under exactly one reading of the descriptor fields
        swap = not res["lbo_sbo_as_documented"]["random_ok"] and res["lbo_sbo_swapped"]["random_ok"]
        res["random_ok"] = res["lbo_sbo_swapped" if swap else "lbo_sbo_as_documented"]["random_ok"]
        dc = coords[swap]
        if key == "ss_f16_aK_bK":
            rec["d_coord"] = dc.astype(np.int64).tolist() if np.all(dc == np.round(dc)) else dc.tolist()
        else:
            ref = np.array(rec.get("d_coord", []))
            res["d_coord_equals_aK_bK"] = bool(ref.size and np.array_equal(dc, ref))
        if ta == 0 and ab == "f16":
            b_swap["MN" if tb else "K"] = swap
        rec[key] = res
    # A from registers: A registers hold their own slot code 8 t + v; B selects column k = n % 8 + 8 j
    for tb in (0, 1):
        offB, lboB, sboB = _smem_image(n, 16, "MN" if tb else "K")
        name = f"wg_rs_f16_n{n}_b{tb}"
        prm_b = [0, 0, sboB, lboB] if b_swap.get("MN" if tb else "K") else [0, 0, lboB, sboB]
        slot = np.arange(128 * 8, dtype=np.float64).reshape(128, 8)
        afr = cp.asarray(_pack_pairs(_f16_bits(slot, "f16")).reshape(-1))
        runs = []
        for j in (0, 1):
            Bsel = np.zeros((16, n))
            Bsel[np.arange(n) % 8 + 8 * j, np.arange(n)] = 1
            d = launch(name, empty16, afr, cp.asarray(_image(Bsel.T, offB)), prm_b)
            runs.append(d)
        a_claim = _tv_table(atoms.make_mma_atom(atoms.WarpgroupMmaF16BF16Op("f16", "f32", (64, n, 16), a_src="rmem")).layout_a_tv, 128, 8)
        fa = Arand.reshape(-1, order="F")[a_claim]
        afr_rand = cp.asarray(_pack_pairs(_f16_bits(fa, "f16")).reshape(-1))
        d = launch(name, empty16, afr_rand, cp.asarray(_image(Brand.T, offB)), prm_b)
        rec[f"rs_f16_b{'MN' if tb else 'K'}"] = {
            "a_observed": _decode_rs(rec["d_coord"], runs, n).tolist(),
            "random_ok": bool(np.array_equal(d, _c_from_table(Arand @ Brand, c_claim)))}
    return rec


def _decode_rs(d_coord, runs, n):
    """(t, v) -> m + 64 k of register-A from the selection runs, read through the observed C map."""
    obs_c = _coords(d_coord, 64 * n)
    where_t = np.full(64 * n, -1, dtype=np.int64)
    where_v = np.full(64 * n, -1, dtype=np.int64)
    tt, vv = np.nonzero(obs_c >= 0)
    where_t[obs_c[tt, vv]], where_v[obs_c[tt, vv]] = tt, vv
    obs_a = np.full((128, 8), -1, dtype=np.int64)
    mm, col = np.meshgrid(np.arange(64), np.arange(min(n, 8)), indexing="ij")
    mm, col = mm.reshape(-1), col.reshape(-1)
    t, v = where_t[mm + 64 * col], where_v[mm + 64 * col]
    for j, run_d in enumerate(runs):  # run j: B selects k = n % 8 + 8 j, so D[m, n] = A[m, k]
        run_d = np.asarray(run_d, dtype=np.float64)
        code = np.where(t >= 0, run_d[t, v], -1)
        good = (code >= 0) & (code < 1024) & (code == np.round(code))
        c = code[good].astype(np.int64)
        obs_a[c // 8, c % 8] = mm[good] + 64 * (col[good] % 8 + 8 * j)
    return obs_a


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
        v["nvidia_driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                            capture_output=True, text=True).stdout.strip()
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
    build = os.environ.get("LAYOUTLAB_PROBE_BUILD")  # keep (and reuse) the cubins there
    with tempfile.TemporaryDirectory() as tmp:  # CuPy may load a cubin lazily: keep the files until done
        workdir = build or tmp
        Path(workdir).mkdir(parents=True, exist_ok=True)
        mods, errors = _compile(_sources(), workdir)
        rec = record(mods, cp, seed=seed, gpu_name=gpu.name(), versions=_versions())
        rec.setdefault("errors", {}).update({f"nvcc {k}": v for k, v in errors.items()})
        return rec


def record(mods, cp, seed=0, gpu_name=None, versions=None):
    """Run the probe kernels of ``mods`` (compiled :func:`_sources`: mma.sync/ldmatrix first, then wgmma)
    through the array module ``cp`` and return the record. :func:`run` calls it with CuPy; the tests call
    it with a simulated instruction set to check the host side without a GPU. A family that fails is
    recorded under ``errors`` and the others still run."""
    rng = np.random.default_rng(seed)
    rec = {
        "what": "layoutlab.probe: where the real instructions put each element",
        "gpu": gpu_name,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "versions": versions or {},
        "seed": seed,
        "errors": {},
    }
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


# ------------------------------------------------------------------------------------------------------
# Comparison with the atoms (CPU; used live on the GPU and on the recording in CI)
# ------------------------------------------------------------------------------------------------------

def _coords(values, size):
    """Coordinate-coded accumulator values -> flat tile indices; -1 where a value is no valid code."""
    d = np.asarray(values, dtype=np.float64)
    good = np.isfinite(d) & (d == np.round(d)) & (d >= 0) & (d < size)
    return np.where(good, np.nan_to_num(d), -1).astype(np.int64)


def compare(rec):
    """Check a probe record against :mod:`layoutlab.atoms`. Returns ``{"checked": [...], "mismatches": [...]}``.

    Each entry of ``checked`` names one atom/variant and what was compared; ``mismatches`` says what
    differed (empty when the hardware and our TV layouts agree everywhere).

    >>> from layoutlab import gpu
    >>> result = compare(gpu.load_result("atoms_probe_h100"))
    >>> len(result["checked"]), result["mismatches"]
    (424, [])
    """
    from .. import atoms

    checked, bad = [], []

    def check(label, ok, detail=""):
        checked.append(label)
        if not ok:
            bad.append(f"{label}: {detail}" if detail else label)

    for where, err in (rec.get("errors") or {}).items():
        check(f"probe ran: {where}", False, err.splitlines()[0] if err else "failed")
    for fam in ("mma_sync", "ldsm_stsm", "wgmma"):
        if fam not in rec:
            check(f"probe ran: {fam}", False, "no results recorded")
            rec = {**rec, fam: {}}

    for name, shape, ab, acc, na, nb, nd, M, N, K in MMA_SYNC_CASES:
        if name not in rec["mma_sync"]:
            continue
        r = rec["mma_sync"][name]
        atom = _mma_sync_atom(name)
        check(f"mma.sync {name}: A/B layouts fed", r["layout_a_fed"] == str(atom.layout_a_tv)
              and r["layout_b_fed"] == str(atom.layout_b_tv), "the recording used other A/B layouts")
        obs = _coords(r["d_coord"], 16 * 8)  # D[m, n] = m + 16 n is the flat index in the 16x8 C tile
        claim = _tv_table(atom.layout_c_tv, 32, obs.shape[1])
        check(f"mma.sync {name}: C (t,v)->(m,n)", np.array_equal(obs, claim),
              f"{int((obs != claim).sum())} of {claim.size} slots differ")
        check(f"mma.sync {name}: random A*B exact", r["random_ok"])

    for ins, nmat, trans in LDSM_CASES:
        nm = f"{ins}_x{nmat}{'_t' if trans else ''}"
        atom = atoms.make_copy_atom((atoms.LdMatrix8x8x16bOp if ins == "ldmatrix" else atoms.StMatrix8x8x16bOp)(trans, nmat), "f16")
        if nm not in rec["ldsm_stsm"]:
            continue
        r = rec["ldsm_stsm"][nm]
        if ins == "ldmatrix":
            obs = np.array(r["lane_value_to_offset"])
            claim = _tv_table(atom.layout_dst_tv, 32, obs.shape[1])
            check(f"{nm}: (lane,value)->element", np.array_equal(obs, claim),
                  f"{int((obs != claim).sum())} of {claim.size} differ")
        else:
            wrote = r["offset_to_lane_value"]
            claim = _tv_table(atom.layout_src_tv, 32, 2 * nmat)
            obs = np.full_like(claim, -1)
            for off, (lane, v) in enumerate(wrote):
                if lane >= 0:
                    obs[lane, v] = off
            check(f"{nm}: (lane,value)->element", np.array_equal(obs, claim),
                  f"{int((obs != claim).sum())} of {claim.size} differ")

    for n in WGMMA_NS:
        if str(n) not in rec["wgmma"]:
            continue
        r = rec["wgmma"][str(n)]
        nd = n // 2
        atom_ss = atoms.make_mma_atom(atoms.WarpgroupMmaF16BF16Op("f16", "f32", (64, n, 16)))
        c_claim = _tv_table(atom_ss.layout_c_tv, 128, nd)
        obs_c = _coords(r["d_coord"], 64 * n)  # D[m, n] = m + 64 n: the flat index in the 64xN tile
        check(f"wgmma m64n{n}k16 SS: C (t,v)->(m,n)", np.array_equal(obs_c, c_claim),
              f"{int((obs_c != c_claim).sum())} of {c_claim.size} slots differ")
        for key, res in r.items():
            if key.startswith("ss_"):
                check(f"wgmma m64n{n}k16 {key}: random A*B exact", res["random_ok"])
                if "d_coord_equals_aK_bK" in res:
                    check(f"wgmma m64n{n}k16 {key}: same C layout as K/K", res["d_coord_equals_aK_bK"])
            elif key.startswith("rs_"):
                check(f"wgmma m64n{n}k16 {key}: random A*B exact", res["random_ok"])
                a_claim = _tv_table(atoms.make_mma_atom(atoms.WarpgroupMmaF16BF16Op("f16", "f32", (64, n, 16), a_src="rmem")).layout_a_tv, 128, 8)
                obs_a = np.asarray(res["a_observed"], dtype=np.int64)
                check(f"wgmma m64n{n}k16 {key}: A (t,v)->(m,k)", np.array_equal(obs_a, a_claim),
                      f"{int((obs_a != a_claim).sum())} of {a_claim.size} slots differ")
    return {"checked": checked, "mismatches": bad}


def _dumps(rec):
    """Compact JSON, one line per top-level probe family, numpy scalars as Python numbers."""
    def default(x):
        if isinstance(x, np.generic):
            return x.item()
        raise TypeError(f"probe: cannot store {type(x).__name__} in JSON")
    return json.dumps(rec, separators=(",", ":"), default=default)


def main(argv=None):
    """``python -m layoutlab.probe OUT.json``: run the probes, write the record, print the comparison."""
    argv = sys.argv[1:] if argv is None else argv
    path = Path(argv[0]) if argv else Path("atoms_probe.json")
    rec = run()
    path.write_text(_dumps(rec))
    try:
        res = compare(rec)
        print(f"probe: {len(res['checked'])} checks, {len(res['mismatches'])} mismatches")
        for m in res["mismatches"][:50]:
            print("  MISMATCH", m)
    except Exception as e:  # noqa: BLE001 - the record is written first; comparison may be fixed later
        print("probe: comparison failed:", repr(e))
    return 0

