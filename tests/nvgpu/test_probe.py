"""Hardware truth for the atoms.

* ``test_recorded_probe_matches_atoms``: CI compares our TV layouts with what the real instructions did on an
  H100 (``results/atoms_probe_h100.json.gz``, written by ``python -m layoutlab.probe``).
* ``test_probe_live_on_gpu`` (gpu): runs the probe now and compares.
* The host side of the probe (packing fragments, building shared-memory images and descriptors, decoding
  coordinates) is checked here without a GPU, against a small simulator of the instructions written from
  the PTX ISA's fragment figures -- and the simulator with one lane pair swapped must be caught.
"""

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from layoutlab import gpu
from layoutlab.probe import atoms as probe
from layoutlab.gpu import RESULTS_DIR

RECORD = RESULTS_DIR / "atoms_probe_h100.json.gz"   # gzip: 1.7 MB of JSON, 0.6 MB packed


# ------------------------------------------------------------------------------------------------------
# A simulator of the probe kernels, from the PTX ISA's fragment descriptions (not from layoutlab.cute.atom)
# ------------------------------------------------------------------------------------------------------

def _f16(bits):
    return np.asarray(bits, dtype=np.uint16).view(np.float16).astype(np.float64)


def _bf16(bits):
    return (np.asarray(bits, dtype=np.uint32) << 16).astype(np.uint32).view(np.float32).astype(np.float64)


def _halves(words):
    w = np.asarray(words, dtype=np.uint32)
    return np.stack([w & 0xFFFF, w >> 16], axis=-1).reshape(w.shape[0], -1)


def _mma_frag(kind, ab, k, lane, h):
    """(row, col) of element h of lane's fragment ('a': (m,k), 'b': (k,n), 'c': (m,n)), PTX mma.m16n8k*."""
    g, tq = lane >> 2, lane & 3
    if kind == "c":
        return g + 8 * (h >> 1), 2 * tq + (h & 1)
    if ab == "tf32":
        if kind == "a":
            return (g + 8 * (h & 1), tq + 4 * (h >> 1)) if k == 8 else (g + 8 * h, tq)
        return (tq + 4 * h, g)
    if kind == "a":
        return g + 8 * ((h >> 1) & 1), 2 * tq + (h & 1) + 8 * (h >> 2)
    return 2 * tq + (h & 1) + 8 * (h >> 1), g


class _Sim:
    def __init__(self, swap_lanes=None):
        self.swap = swap_lanes  # simulate wrong hardware: lanes (i, j) exchange their results

    def get_function(self, name):
        return lambda grid, block, args: self._run(name, args)

    def _lane(self, l):
        if self.swap and l in self.swap:
            return self.swap[1 - self.swap.index(l)]
        return l

    def _run(self, name, args):
        if name.startswith("mma_"):
            return self._mma(name[4:], *args)
        if name.startswith(("ldmatrix", "stmatrix")):
            return self._matrix(name, *args)
        return self._wgmma(name, *args)

    def _mma(self, name, A, B, D):
        case = next(c for c in probe.MMA_SYNC_CASES if c[0] == name)
        _, _, ab, acc, na, nb, nd, M, N, K = case
        A, B = np.asarray(A).reshape(32, na), np.asarray(B).reshape(32, nb)
        conv = (lambda w: np.asarray(w, dtype=np.uint32).view(np.float32).astype(np.float64)) if ab == "tf32" else \
            (lambda w: _f16(_halves(w)) if ab == "f16" else _bf16(_halves(w)))
        av, bv = conv(A), conv(B)
        Am, Bm = np.zeros((M, K)), np.zeros((K, N))
        for l in range(32):
            for h in range(av.shape[1]):
                Am[_mma_frag("a", ab, K, l, h)] = av[l, h]
            for h in range(bv.shape[1]):
                Bm[_mma_frag("b", ab, K, l, h)] = bv[l, h]
        C = Am @ Bm
        out = np.zeros((32, 4))
        for l in range(32):
            for h in range(4):
                out[self._lane(l), h] = C[_mma_frag("c", ab, K, l, h)]
        if acc == "f32":
            D[:] = out.astype(np.float32).view(np.uint32).reshape(-1)
        else:
            b = out.astype(np.float16).view(np.uint16).astype(np.uint32).reshape(32, 2, 2)
            D[:] = (b[..., 0] | (b[..., 1] << 16)).reshape(-1)

    def _matrix(self, name, src16, src32, out, out16):
        m = re.match(r"(ldmatrix|stmatrix)_x(\d)(_t)?", name)
        ins, nmat, trans = m.group(1), int(m.group(2)), bool(m.group(3))
        smem = np.array(src16, dtype=np.uint16) if ins == "ldmatrix" else np.full(256, 0xFFFF, dtype=np.uint16)
        addr = [((l // 8) % nmat) * 64 + (l % 8) * 8 for l in range(32)]  # the kernel's address choice

        def elem(j, r, c):  # element (r, c) of matrix j: row r's address comes from lane 8 j + r
            return addr[8 * j + r] + c

        regs = np.asarray(src32, dtype=np.uint32).reshape(32, nmat) if ins == "stmatrix" else None
        res = np.zeros((32, nmat), dtype=np.uint32)
        for l in range(32):
            for j in range(nmat):
                pos = [elem(j, 2 * (l % 4) + i, l // 4) if trans else elem(j, l // 4, 2 * (l % 4) + i) for i in (0, 1)]
                if ins == "ldmatrix":
                    res[self._lane(l), j] = int(smem[pos[0]]) | (int(smem[pos[1]]) << 16)
                else:
                    w = int(regs[self._lane(l), j])
                    smem[pos[0]], smem[pos[1]] = w & 0xFFFF, w >> 16
        if ins == "ldmatrix":
            out[:] = res.reshape(-1)
        else:
            out16[:] = smem

    def _wgmma(self, name, imgA, afrag, imgB, prm, out):
        m = re.match(r"wg_(ss|rs)_(f16|bf16)_n(\d+)(?:_a(\d))?_b(\d)", name)
        src, ab, n, ta, tb = m.group(1), m.group(2), int(m.group(3)), int(m.group(4) or 0), int(m.group(5))
        prm = [int(x) for x in prm]
        conv = _f16 if ab == "f16" else _bf16

        def read(img, rows, trans, lbo, sbo):
            # PTX canonical no-swizzle layouts, T = 8 elements of 16 bits; LBO/SBO in bytes
            r, k = np.arange(rows)[:, None], np.arange(16)[None, :]
            if trans:   # MN-major ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
                off = (r % 8) + (r // 8) * (sbo // 2) + (k % 8) * 8 + (k // 8) * (lbo // 2)
            else:       # K-major ((8,m),(T,2k)):((1T,SBO),(1,LBO))
                off = (r % 8) * 8 + (r // 8) * (sbo // 2) + (k % 8) + (k // 8) * (lbo // 2)
            img = np.asarray(img)
            return np.where(off < img.size, conv(img[np.minimum(off, img.size - 1)]), np.nan)

        def frag(nval):  # wgmma m64nNk16 register fragments (A from registers and D): same pattern
            t, v = np.meshgrid(np.arange(128), np.arange(nval), indexing="ij")
            w, g, tq = t // 32, (t % 32) >> 2, t & 3
            return 16 * w + g + 8 * ((v >> 1) & 1), 2 * tq + (v & 1) + 8 * (v >> 2)

        Bt = read(imgB, n, tb, prm[2], prm[3])  # (n, k)
        if src == "ss":
            A = read(imgA, 64, ta, prm[0], prm[1])
        else:
            av = _f16(_halves(np.asarray(afrag, dtype=np.uint32).reshape(128, 4)))
            A = np.zeros((64, 16))
            A[frag(8)] = av
        C = A @ Bt.T
        res = C[frag(n // 2)]
        out[:] = np.nan_to_num(res, nan=-12345.0).astype(np.float32).reshape(-1)


class _FakeCupy:
    uint16, uint32, float32 = np.uint16, np.uint32, np.float32
    asarray = staticmethod(lambda x: np.array(x, copy=True))
    asnumpy = staticmethod(lambda x: np.asarray(x))
    zeros = staticmethod(np.zeros)


@pytest.fixture(scope="module")
def simulated_record():
    sim = _Sim()
    return probe.record([sim, sim], _FakeCupy, seed=1)


def test_probe_host_side_against_simulated_instructions(simulated_record):
    res = probe.compare(simulated_record)
    n_wgmma = sum(1 for c in res["checked"] if c.startswith("wgmma"))
    print(f"\nsimulated probe: {len(res['checked'])} checks ({n_wgmma} wgmma), {len(res['mismatches'])} mismatches")
    assert not res["mismatches"], res["mismatches"][:10]
    assert n_wgmma >= 32 * 9
    # the documented LBO/SBO reading reproduces A*B in the simulator; the swapped one does not (K/K, N=64)
    ss = simulated_record["wgmma"]["64"]["ss_f16_aK_bK"]
    assert ss["lbo_sbo_as_documented"]["random_ok"] and not ss["lbo_sbo_swapped"]["random_ok"]


def test_probe_catches_wrong_hardware():
    """A 'GPU' whose lanes 5 and 9 trade results must be reported for every warp-level instruction."""
    sim_ok, sim_bad = _Sim(), _Sim(swap_lanes=[5, 9])

    class Mixed:
        def get_function(self, name):
            return (sim_bad if name.startswith(("mma_", "ldmatrix", "stmatrix")) else sim_ok).get_function(name)

    rec = probe.record([Mixed(), sim_ok], _FakeCupy, seed=2)
    bad = probe.compare(rec)["mismatches"]
    for case in probe.MMA_SYNC_CASES:
        assert any(case[0] in b and "C (t,v)" in b for b in bad), case[0]
    for ins, n, t in probe.LDSM_CASES:
        assert any(b.startswith(f"{ins}_x{n}{'_t' if t else ''}:") for b in bad), (ins, n, t)
    assert not any(b.startswith("wgmma") for b in bad)


@pytest.mark.skipif(not RECORD.exists(), reason=f"no recording {RECORD.name} yet (run python -m layoutlab.probe on an H100)")
def test_recorded_probe_matches_atoms():
    rec = gpu.load_result("atoms_probe_h100")
    assert "H100" in (rec.get("gpu") or "") or "H200" in (rec.get("gpu") or ""), rec.get("gpu")
    res = probe.compare(rec)
    n_wgmma_ns = len({re.match(r"wgmma m64n(\d+)", c).group(1) for c in res["checked"] if c.startswith("wgmma")})
    print(f"\nrecorded probe ({rec['gpu']}, {rec['date']}): {len(res['checked'])} checks, "
          f"{len(res['mismatches'])} mismatches, wgmma N values: {n_wgmma_ns}")
    assert n_wgmma_ns == 32
    assert not res["mismatches"], res["mismatches"][:20]


@pytest.mark.gpu
@pytest.mark.skipif(not gpu.is_hopper(), reason="the probe needs an sm_90a GPU (wgmma)")
def test_probe_live_on_gpu():
    rec = probe.run()
    out = os.environ.get("LAYOUTLAB_PROBE_OUT")  # the device run that made results/atoms_probe_h100.json.gz (gzip it)
    if out:
        Path(out).write_text(probe._dumps(rec))
    res = probe.compare(rec)
    print(f"\nlive probe on {rec['gpu']}: {len(res['checked'])} checks, {len(res['mismatches'])} mismatches")
    assert not res["mismatches"], res["mismatches"][:20]
