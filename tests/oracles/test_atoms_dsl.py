"""Differential test: every MMA and copy atom prints exactly as the CuTe DSL prints it (CUTE_DSL_ARCH=sm_90a).

One DSL subprocess evaluates all snippets (layoutlab.dsl batches them); each case compares the whole
printout: ThrID, Shape MNK and the TV layouts (MMA), or ThrID, Src/Dst TV layouts and value type (copy).
"""

import itertools

import pytest

import layoutlab as atoms
from layoutlab.dsl import HAVE_DSL, SKIP_REASON, dsl_eval

pytestmark = [pytest.mark.dsl, pytest.mark.skipif(not HAVE_DSL, reason=SKIP_REASON)]

SETUP = """
from cutlass import Float16, BFloat16, Float32, TFloat32, Int8, Float8E4M3FN, Float8E5M2
W = cute.nvgpu.warpgroup
OM = cute.nvgpu.OperandMajorMode
DT = {"f16": Float16, "bf16": BFloat16, "f32": Float32, "i8": Int8, "f8E4M3FN": Float8E4M3FN, "f8E5M2": Float8E5M2}
"""

MMA_SYNC = [("f16", "f16", s) for s in ((16, 8, 8), (16, 8, 16))] + \
           [("f16", "f32", s) for s in ((16, 8, 8), (16, 8, 16))] + \
           [("bf16", "f32", s) for s in ((16, 8, 8), (16, 8, 16))]
TF32 = [(16, 8, 4), (16, 8, 8)]
WGMMA = [(ab, acc, n, src, am, bm)
         for ab, acc in (("f16", "f32"), ("bf16", "f32"), ("f16", "f16"))
         for n in atoms.WGMMA_N_VALUES
         for src, am, bm in (("smem", "K", "K"), ("smem", "K", "MN"), ("smem", "MN", "K"), ("smem", "MN", "MN"),
                             ("rmem", "K", "K"), ("rmem", "K", "MN"))]
MATRIX = [(ins, t, n, vt) for ins in ("LdMatrix8x8x16bOp", "StMatrix8x8x16bOp") for t in (False, True)
          for n in (1, 2, 4) for vt in (("f16", "bf16") if t else ("f16", "bf16", "i8", "f32"))]
CPASYNC = [(bits, vt, mode) for bits in (32, 64, 128) for vt in ("f16", "f32", "i8") for mode in ("ALWAYS",)
           if bits >= {"f16": 16, "f32": 32, "i8": 8}[vt]] + [(128, "f16", "GLOBAL")]
UNIVERSAL = [(bits, vt) for bits in (None, 16, 32, 64, 128) for vt in ("f16", "f32", "i8")
             if bits is None or bits >= {"f16": 16, "f32": 32, "i8": 8}[vt]]
# issue 17 item 9: the 8-bit matrix copies (every valid transpose / num_matrices / unpack_bits, 8-bit types)
MATRIX8 = [(ins, t, n, ub, vt)
           for ins, t, ns, ubs in (("LdMatrix8x16x8bOp", False, (1, 2, 4), (None, 4, 6)),
                                   ("LdMatrix16x8x8bOp", True, (2, 4), (None, 4, 6)),
                                   ("LdMatrix16x16x8bOp", True, (1, 2), (None, 4, 6)),
                                   ("StMatrix16x8x8bOp", True, (1, 2, 4), (None,)))
           for n in ns for ub in ubs for vt in ("i8", "f8E4M3FN", "f8E5M2")]
# ... and the fp8 MMAs: mma.sync m16n8k{16,32} (sm_89) and wgmma m64nNk32 (every N, both A sources, mixed types)
FP8_SYNC = [(ab, acc, shp) for ab in ("f8E4M3FN", "f8E5M2") for acc in ("f16", "f32")
            for shp in ((16, 8, 16), (16, 8, 32))]
FP8_WGMMA = [(a, b, acc, n, src) for a, b in (("f8E4M3FN", "f8E4M3FN"), ("f8E4M3FN", "f8E5M2"), ("f8E5M2", "f8E4M3FN"))
             for acc in ("f32", "f16") for n in atoms.WGMMA_N_VALUES for src in ("smem", "rmem")]


def _cases():
    cases = []
    for ab, acc, shp in MMA_SYNC:
        cases.append((f"mma.sync {ab}/{acc} {shp}",
                      f"str(cute.make_mma_atom(cute.nvgpu.warp.MmaF16BF16Op(DT['{ab}'], DT['{acc}'], {shp})))",
                      lambda ab=ab, acc=acc, shp=shp: atoms.make_mma_atom(atoms.MmaF16BF16Op(ab, acc, shp))))
    for shp in TF32:
        cases.append((f"mma.sync tf32 {shp}", f"str(cute.make_mma_atom(cute.nvgpu.warp.MmaTF32Op({shp})))",
                      lambda shp=shp: atoms.make_mma_atom(atoms.MmaTF32Op(shp))))
    for ab, acc, n, src, am, bm in WGMMA:
        dsl_src = "W.OperandSource.SMEM" if src == "smem" else "W.OperandSource.RMEM"
        cases.append((f"wgmma {ab}/{acc} 64x{n}x16 {src} A{am} B{bm}",
                      f"str(cute.make_mma_atom(W.MmaF16BF16Op(DT['{ab}'], DT['{acc}'], (64,{n},16), {dsl_src}, "
                      f"OM.{am}, OM.{bm})))",
                      lambda ab=ab, acc=acc, n=n, src=src, am=am, bm=bm: atoms.make_mma_atom(
                          atoms.nvgpu.warpgroup.MmaF16BF16Op(ab, acc, (64, n, 16), src, am, bm))))
    for ins, t, n, vt in MATRIX:
        cases.append((f"{ins}({t},{n}) {vt}",
                      f"str(cute.make_copy_atom(cute.nvgpu.warp.{ins}({t}, {n}), DT['{vt}']))",
                      lambda ins=ins, t=t, n=n, vt=vt: atoms.make_copy_atom(getattr(atoms, ins)(t, n), vt)))
    for ins, t, n, ub, vt in MATRIX8:
        cases.append((f"{ins}({t},{n},{ub}) {vt}",
                      f"str(cute.make_copy_atom(cute.nvgpu.warp.{ins}({t}, {n}, {ub}), DT['{vt}']))",
                      lambda ins=ins, t=t, n=n, ub=ub, vt=vt: atoms.make_copy_atom(getattr(atoms, ins)(t, n, ub), vt)))
    for ab, acc, shp in FP8_SYNC:
        cases.append((f"mma.sync {ab}/{acc} {shp}",
                      f"str(cute.make_mma_atom(cute.nvgpu.warp.MmaFP8Op(DT['{ab}'], DT['{acc}'], {shp})))",
                      lambda ab=ab, acc=acc, shp=shp: atoms.make_mma_atom(atoms.nvgpu.warp.MmaFP8Op(ab, acc, shp))))
    for a, b, acc, n, src in FP8_WGMMA:
        dsl_src = "W.OperandSource.SMEM" if src == "smem" else "W.OperandSource.RMEM"
        cases.append((f"wgmma {a}x{b}/{acc} 64x{n}x32 {src}",
                      f"str(cute.make_mma_atom(W.MmaF8Op(DT['{a}'], DT['{b}'], DT['{acc}'], (64,{n},32), {dsl_src}, "
                      f"OM.K, OM.K)))",
                      lambda a=a, b=b, acc=acc, n=n, src=src: atoms.make_mma_atom(
                          atoms.nvgpu.warpgroup.MmaF8Op(a, b, acc, (64, n, 32), src))))
    for bits, vt, mode in CPASYNC:
        cases.append((f"cp.async {bits} {vt} {mode}",
                      f"str(cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(cute.nvgpu.cpasync.LoadCacheMode.{mode}),"
                      f" DT['{vt}'], num_bits_per_copy={bits}))",
                      lambda bits=bits, vt=vt, mode=mode: atoms.make_copy_atom(
                          atoms.CopyG2SOp(mode.lower()), vt, num_bits_per_copy=bits)))
    for bits, vt in UNIVERSAL:
        kw = "" if bits is None else f", num_bits_per_copy={bits}"
        cases.append((f"universal {bits} {vt}",
                      f"str(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), DT['{vt}']{kw}))",
                      lambda bits=bits, vt=vt: atoms.make_copy_atom(atoms.CopyUniversalOp(), vt, num_bits_per_copy=bits)))
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def dsl_results():
    return dsl_eval([snip for _, snip, _ in CASES], setup=SETUP)


def test_every_atom_prints_like_the_dsl(dsl_results):
    mismatches, errors = [], []
    for (label, snip, ours), r in zip(CASES, dsl_results):
        if not r.ok:
            errors.append(f"{label}: DSL {r.status}: {r.message[:200]}")
            continue
        mine = str(ours())
        if mine != r.value:
            mismatches.append(f"{label}:\n--- DSL\n{r.value}\n--- ours\n{mine}")
    print(f"\natoms vs CuTe DSL: {len(CASES)} atoms compared, {len(mismatches)} differ, {len(errors)} DSL errors")
    assert not errors, "\n".join(errors[:10])
    assert not mismatches, "\n".join(mismatches[:5])


def test_case_counts_cover_the_issue():
    # every N of wgmma m64nNk16 in both A sources and all majornesses, every ldmatrix/stmatrix form
    assert len([c for c in WGMMA if c[0] == "f16" and c[1] == "f32"]) == 32 * 6
    assert {(t, n) for ins, t, n, _ in MATRIX if ins.startswith("Ld")} == set(itertools.product((False, True), (1, 2, 4)))
    # issue 17 item 9: all four 8-bit matrix ops in every form the DSL builds, both fp8 MMAs
    assert {ins for ins, *_ in MATRIX8} == {"LdMatrix8x16x8bOp", "LdMatrix16x8x8bOp", "LdMatrix16x16x8bOp",
                                             "StMatrix16x8x8bOp"} and len(MATRIX8) == 3 * (9 + 6 + 6 + 3)
    assert len(FP8_SYNC) == 8 and len(FP8_WGMMA) == 3 * 2 * 32 * 2


# Inputs the DSL accepts although no instruction can do them: we refuse, and say why.
DSL_LENIENT = [
    ("cp.async of 2 bytes", "str(cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), DT['f16'], num_bits_per_copy=16))",
     lambda: atoms.make_copy_atom(atoms.CopyG2SOp(), "f16", num_bits_per_copy=16), "4, 8 or 16 bytes"),
    ("cp.async of 32 bytes", "str(cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), DT['f16'], num_bits_per_copy=256))",
     lambda: atoms.make_copy_atom(atoms.CopyG2SOp(), "f16", num_bits_per_copy=256), "4, 8 or 16 bytes"),
    ("ldmatrix.trans of f32", "str(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(True, 4), DT['f32']))",
     lambda: atoms.make_copy_atom(atoms.LdMatrix8x8x16bOp(True, 4), "f32"), "16 bits wide"),
    ("universal copy of half an f16", "str(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), DT['f16'], num_bits_per_copy=8))",
     lambda: atoms.make_copy_atom(atoms.CopyUniversalOp(), "f16", num_bits_per_copy=8), "whole f16 values"),
    ("8-bit ldmatrix of f16", "str(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix16x8x8bOp(True, 4), DT['f16']))",
     lambda: atoms.make_copy_atom(atoms.LdMatrix16x8x8bOp(True, 4), "f16"), "8 bits wide"),
    ("8-bit stmatrix of f16", "str(cute.make_copy_atom(cute.nvgpu.warp.StMatrix16x8x8bOp(True, 2), DT['f16']))",
     lambda: atoms.make_copy_atom(atoms.StMatrix16x8x8bOp(True, 2), "f16"), "8 bits wide"),
    ("MN-major fp8 wgmma", "str(cute.make_mma_atom(W.MmaF8Op(DT['f8E4M3FN'], DT['f8E4M3FN'], DT['f32'], (64,64,32), "
     "W.OperandSource.SMEM, OM.MN, OM.K)))",
     lambda: atoms.WarpgroupMmaF8Op("f8E4M3FN", "f8E4M3FN", "f32", (64, 64, 32), "smem", "MN", "K"), "K-major"),
]


def test_dsl_lenient_inputs_are_refused_with_a_reason():
    results = dsl_eval([s for _, s, _, _ in DSL_LENIENT], setup=SETUP)
    for (label, _, ours, why), r in zip(DSL_LENIENT, results):
        assert r.ok, f"{label}: the DSL no longer accepts this ({r.message[:200]}); update the classification"
        with pytest.raises(atoms.LayoutError if hasattr(atoms, "LayoutError") else ValueError, match=why):
            ours()
    # the DSL's ldmatrix.trans of f32 and its 8-bit transposing forms of f16 really are broken: their thread
    # modes no longer cover the 32 lanes
    for k in (2, 4):
        assert results[k].value.splitlines()[3].split(":", 1)[1].strip().startswith("((4,4)")
    assert results[5].value.splitlines()[2].split(":", 1)[1].strip().startswith("((4,4)")


# Inputs both refuse.
DSL_REFUSES = [
    ("mma.sync 16x8x32", "cute.make_mma_atom(cute.nvgpu.warp.MmaF16BF16Op(DT['f16'], DT['f32'], (16,8,32)))",
     lambda: atoms.MmaF16BF16Op("f16", "f32", (16, 8, 32)), "shape_mnk"),
    ("mma.sync bf16 with f16 acc", "cute.make_mma_atom(cute.nvgpu.warp.MmaF16BF16Op(DT['bf16'], DT['f16'], (16,8,16)))",
     lambda: atoms.MmaF16BF16Op("bf16", "f16", (16, 8, 16)), "f32"),
    ("wgmma N=12", "cute.make_mma_atom(W.MmaF16BF16Op(DT['f16'], DT['f32'], (64,12,16), W.OperandSource.SMEM, OM.K, OM.K))",
     lambda: atoms.WarpgroupMmaF16BF16Op("f16", "f32", (64, 12, 16)), "multiple of 8"),
    ("wgmma N=264", "cute.make_mma_atom(W.MmaF16BF16Op(DT['f16'], DT['f32'], (64,264,16), W.OperandSource.SMEM, OM.K, OM.K))",
     lambda: atoms.WarpgroupMmaF16BF16Op("f16", "f32", (64, 264, 16)), r"\[8,256\]"),
    ("wgmma K=32", "cute.make_mma_atom(W.MmaF16BF16Op(DT['f16'], DT['f32'], (64,64,32), W.OperandSource.SMEM, OM.K, OM.K))",
     lambda: atoms.WarpgroupMmaF16BF16Op("f16", "f32", (64, 64, 32)), "64,N,16"),
    ("wgmma bf16 with f16 acc", "cute.make_mma_atom(W.MmaF16BF16Op(DT['bf16'], DT['f16'], (64,64,16), W.OperandSource.SMEM, OM.K, OM.K))",
     lambda: atoms.WarpgroupMmaF16BF16Op("bf16", "f16", (64, 64, 16)), "bf16 inputs in f32"),
    ("ldmatrix x3", "cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 3)",
     lambda: atoms.LdMatrix8x8x16bOp(False, 3), "1, 2 or 4"),
    ("ldmatrix 16x8 b8 x1", "cute.nvgpu.warp.LdMatrix16x8x8bOp(True, 1)",
     lambda: atoms.LdMatrix16x8x8bOp(True, 1), "2 or 4"),
    ("ldmatrix 16x8 b8 without .trans", "cute.nvgpu.warp.LdMatrix16x8x8bOp(False, 2)",
     lambda: atoms.LdMatrix16x8x8bOp(False, 2), "always transposes"),
    ("ldmatrix 16x16 b8 x4", "cute.nvgpu.warp.LdMatrix16x16x8bOp(True, 4)",
     lambda: atoms.LdMatrix16x16x8bOp(True, 4), "1 or 2"),
    ("ldmatrix 8x16 b8 .trans", "cute.nvgpu.warp.LdMatrix8x16x8bOp(True, 1)",
     lambda: atoms.LdMatrix8x16x8bOp(True, 1), "never transposes"),
    ("ldmatrix 8x16 unpack 5", "cute.nvgpu.warp.LdMatrix8x16x8bOp(False, 1, 5)",
     lambda: atoms.LdMatrix8x16x8bOp(False, 1, 5), "unpack_bits 5"),
    ("stmatrix 16x8 b8 unpack", "cute.nvgpu.warp.StMatrix16x8x8bOp(True, 1, 4)",
     lambda: atoms.StMatrix16x8x8bOp(True, 1, 4), "unpack_bits 4"),
    ("ldmatrix 8x8 b16 unpack", "cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 1, 4)",
     lambda: atoms.LdMatrix8x8x16bOp(False, 1, 4), "unpack_bits 4"),
    ("mma.sync fp8 16x8x8", "cute.nvgpu.warp.MmaFP8Op(DT['f8E4M3FN'], DT['f32'], (16,8,8))",
     lambda: atoms.MmaFP8Op("f8E4M3FN", "f32", (16, 8, 8)), r"\(16,8,16\) or \(16,8,32\)"),
    ("mma.sync fp8 of f16", "cute.nvgpu.warp.MmaFP8Op(DT['f16'], DT['f32'], (16,8,32))",
     lambda: atoms.MmaFP8Op("f16", "f32", (16, 8, 32)), "not an fp8 type"),
    ("mma.sync fp8 with bf16 acc", "cute.nvgpu.warp.MmaFP8Op(DT['f8E5M2'], DT['bf16'], (16,8,32))",
     lambda: atoms.MmaFP8Op("f8E5M2", "bf16", (16, 8, 32)), "f16 or f32"),
    ("wgmma fp8 K=16", "W.MmaF8Op(DT['f8E4M3FN'], DT['f8E4M3FN'], DT['f32'], (64,64,16), W.OperandSource.SMEM, OM.K, OM.K)",
     lambda: atoms.WarpgroupMmaF8Op("f8E4M3FN", "f8E4M3FN", "f32", (64, 64, 16)), r"\(64,N,32\)"),
    ("wgmma fp8 N=12", "W.MmaF8Op(DT['f8E4M3FN'], DT['f8E4M3FN'], DT['f32'], (64,12,32), W.OperandSource.SMEM, OM.K, OM.K)",
     lambda: atoms.WarpgroupMmaF8Op("f8E4M3FN", "f8E4M3FN", "f32", (64, 12, 32)), "multiple of 8"),
    ("wgmma fp8 with f16 B", "W.MmaF8Op(DT['f8E4M3FN'], DT['f16'], DT['f32'], (64,64,32), W.OperandSource.SMEM, OM.K, OM.K)",
     lambda: atoms.WarpgroupMmaF8Op("f8E4M3FN", "f16", "f32", (64, 64, 32)), "b_dtype f16 is not an fp8"),
]


def test_inputs_both_refuse():
    results = dsl_eval([s for _, s, _, _ in DSL_REFUSES], setup=SETUP)
    for (label, _, ours, why), r in zip(DSL_REFUSES, results):
        assert r.status == "error", f"{label}: the DSL now accepts it: {r.value}"
        with pytest.raises(ValueError, match=why):
            ours()
