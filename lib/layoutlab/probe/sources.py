"""The probe kernels and their cases: CUDA C++ with inline PTX for ``mma.sync``, ``ldmatrix``/``stmatrix`` and
``wgmma``, one per instruction form, built for ``sm_90a`` by ``nvcc``; :mod:`layoutlab.probe` reads the answers."""

import subprocess
import sys
from pathlib import Path

__all__ = ["WGMMA_NS", "MMA_SYNC_CASES", "LDSM_CASES"]

#: Every N that ``wgmma.mma_async.m64nNk16`` accepts for f16/bf16 inputs.
WGMMA_NS = tuple(range(8, 257, 8))

#: (name, ptx shape, a/b type, accumulator type, #A regs, #B regs, #D regs, M, N, K)
MMA_SYNC_CASES = (
    ("m16n8k8_f16_f16", "m16n8k8", "f16", "f16", 2, 1, 2, 16, 8, 8),
    ("m16n8k8_f16_f32", "m16n8k8", "f16", "f32", 2, 1, 4, 16, 8, 8),
    ("m16n8k8_bf16_f32", "m16n8k8", "bf16", "f32", 2, 1, 4, 16, 8, 8),
    ("m16n8k16_f16_f16", "m16n8k16", "f16", "f16", 4, 2, 2, 16, 8, 16),
    ("m16n8k16_f16_f32", "m16n8k16", "f16", "f32", 4, 2, 4, 16, 8, 16),
    ("m16n8k16_bf16_f32", "m16n8k16", "bf16", "f32", 4, 2, 4, 16, 8, 16),
    ("m16n8k4_tf32_f32", "m16n8k4", "tf32", "f32", 2, 1, 4, 16, 8, 4),
    ("m16n8k8_tf32_f32", "m16n8k8", "tf32", "f32", 4, 2, 4, 16, 8, 8),
)

#: (instruction, number of 8x8 matrices, transposed)
LDSM_CASES = tuple((ins, n, t) for ins in ("ldmatrix", "stmatrix") for t in (False, True) for n in (1, 2, 4))

_STAGE_ELEMS = 256  # four 8x8 matrices of 16-bit elements, stacked row after row


_PRELUDE = r"""
#include <cuda_fp16.h>
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned long long u64;

// A wgmma shared-memory matrix descriptor for the no-swizzle ("interleave") canonical layout:
// start address, leading- and stride-dimension byte offsets, all in units of 16 bytes.
__device__ __forceinline__ u64 smem_desc(const void* p, u32 lbo_bytes, u32 sbo_bytes) {
    u32 addr = (u32)__cvta_generic_to_shared(p);
    u64 d = (u64)((addr >> 4) & 0x3FFF);
    d |= (u64)((lbo_bytes >> 4) & 0x3FFF) << 16;
    d |= (u64)((sbo_bytes >> 4) & 0x3FFF) << 32;
    return d;  // base offset 0, layout type 0 (no swizzle)
}
"""


def _regs(n, start):
    return ", ".join(f"%{start + i}" for i in range(n)), start + n


def _mma_sync_kernel(name, shape, ab, acc, na, nb, nd):
    # mma.sync with C = 0: D = A * B. A/B go in as raw 32-bit words; an f32 accumulator takes "f" operands.
    dlist, i = _regs(nd, 0)
    alist, i = _regs(na, i)
    blist, i = _regs(nb, i)
    ctype = "f32" if acc == "f32" else "f16"
    zero_c = ", ".join(["%" + str(i)] * nd)
    dtype, dcon, zero = ("float", "=f", '"f"(0.f)') if acc == "f32" else ("u32", "=r", '"r"(0u)')
    outs = ", ".join(f'"{dcon}"(d[{j}])' for j in range(nd))
    ins = ", ".join([f'"r"(a[{j}])' for j in range(na)] + [f'"r"(b[{j}])' for j in range(nb)] + [zero])
    store = "__float_as_uint(d[j])" if acc == "f32" else "d[j]"
    return f"""
extern "C" __global__ void mma_{name}(const u32* A, const u32* B, u32* D) {{
    int t = threadIdx.x;
    u32 a[{na}], b[{nb}];
    {dtype} d[{nd}];
    #pragma unroll
    for (int j = 0; j < {na}; ++j) a[j] = A[t * {na} + j];
    #pragma unroll
    for (int j = 0; j < {nb}; ++j) b[j] = B[t * {nb} + j];
    asm volatile("mma.sync.aligned.{shape}.row.col.{acc}.{ab}.{ab}.{ctype} {{{dlist}}}, {{{alist}}}, {{{blist}}}, {{{zero_c}}};\\n"
                 : {outs} : {ins});
    #pragma unroll
    for (int j = 0; j < {nd}; ++j) D[t * {nd} + j] = {store};
}}
"""


def _ldsm_name(ins, nmat, trans):
    return f"{ins}_x{nmat}{'_t' if trans else ''}"


def _ldsm_kernel(ins, nmat, trans):
    # Lane l hands in the address of row l % 8 of matrix (l / 8) % nmat: the copy atom's source layout.
    nm = _ldsm_name(ins, nmat, trans)
    q = f".x{nmat}{'.trans' if trans else ''}.shared.b16"
    regs = ", ".join(f"%{j + (0 if ins == 'ldmatrix' else 1)}" for j in range(nmat))
    addr = "%" + str(nmat) if ins == "ldmatrix" else "%0"
    if ins == "ldmatrix":
        body = (f'asm volatile("ldmatrix.sync.aligned.m8n8{q} {{{regs}}}, [{addr}];\\n" : '
                + ", ".join(f'"=r"(r[{j}])' for j in range(nmat)) + ' : "r"(saddr));')
        pre = f"for (int i = t; i < {_STAGE_ELEMS}; i += 32) s[i] = src[i];\n    __syncwarp();"
        post = f"for (int j = 0; j < {nmat}; ++j) out[t * {nmat} + j] = r[j];"
    else:
        body = (f'asm volatile("stmatrix.sync.aligned.m8n8{q} [{addr}], {{{regs}}};\\n" :: "r"(saddr), '
                + ", ".join(f'"r"(r[{j}])' for j in range(nmat)) + ' : "memory");')
        pre = (f"for (int i = t; i < {_STAGE_ELEMS}; i += 32) s[i] = 0xFFFF;\n    __syncwarp();\n"
               f"    for (int j = 0; j < {nmat}; ++j) r[j] = src32[t * {nmat} + j];")
        post = f"__syncwarp();\n    for (int i = t; i < {_STAGE_ELEMS}; i += 32) out16[i] = s[i];"
    return f"""
extern "C" __global__ void {nm}(const u16* src, const u32* src32, u32* out, u16* out16) {{
    __shared__ __align__(128) u16 s[{_STAGE_ELEMS}];
    int t = threadIdx.x;
    u32 r[{nmat}];
    {pre}
    u32 saddr = (u32)__cvta_generic_to_shared(&s[((t / 8) % {nmat}) * 64 + (t % 8) * 8]);
    {body}
    {post}
}}
"""


def _wgmma_kernel(n, a_src, ta, tb, ab="f16"):
    nd = n // 2
    dlist = ", ".join(f"%{j}" for j in range(nd))
    outs = ", ".join(f'"+f"(d[{j}])' for j in range(nd))
    na = 1 if a_src == "ss" else 4          # A: one descriptor, or four registers
    aop = f"%{nd}" if na == 1 else "{" + ", ".join(f"%{nd + j}" for j in range(4)) + "}"
    bop, pred = f"%{nd + na}", f"%{nd + na + 1}"
    if a_src == "ss":
        name = f"wg_ss_{ab}_n{n}_a{ta}_b{tb}"
        ins = '"l"(da), "l"(db), "r"(1u)'
        tail = f"p, 1, 1, {ta}, {tb}"
        a_setup = ("for (int i = t; i < 64 * 16; i += 128) sA[i] = imgA[i];")
        a_desc = "u64 da = smem_desc(sA, prm[0], prm[1]);"
    else:
        name = f"wg_rs_{ab}_n{n}_b{tb}"
        ins = '"r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1u)'
        tail = f"p, 1, 1, {tb}"
        a_setup = "u32 a[4];\n    for (int j = 0; j < 4; ++j) a[j] = afrag[t * 4 + j];"
        a_desc = ""
    return f"""
extern "C" __global__ void __launch_bounds__(128, 1) {name}(const u16* imgA, const u32* afrag, const u16* imgB,
                                                           const u32* prm, float* out) {{
    __shared__ __align__(1024) u16 sA[64 * 16];
    __shared__ __align__(1024) u16 sB[256 * 16];
    int t = threadIdx.x;
    {a_setup}
    for (int i = t; i < {n} * 16; i += 128) sB[i] = imgB[i];
    // ordinary stores that the tensor cores read next: make them visible to the async proxy
    asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory");
    __syncthreads();
    {a_desc}
    u64 db = smem_desc(sB, prm[2], prm[3]);
    float d[{nd}];
    #pragma unroll
    for (int j = 0; j < {nd}; ++j) d[j] = 0.f;
    asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
    asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, {pred}, 0;\\n"
                 "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ab}.{ab} {{{dlist}}}, {aop}, {bop}, {tail};\\n}}\\n"
                 : {outs} : {ins});
    asm volatile("wgmma.commit_group.sync.aligned;\\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\\n" ::: "memory");
    #pragma unroll
    for (int j = 0; j < {nd}; ++j) out[t * {nd} + j] = d[j];
}}
"""


def _sources():
    """Four translation units (compiled in parallel): mma.sync + ldmatrix/stmatrix, and wgmma by N."""
    units = ["".join([_PRELUDE] + [_mma_sync_kernel(*case[:7]) for case in MMA_SYNC_CASES]
                     + [_ldsm_kernel(*case) for case in LDSM_CASES])]
    groups = [[], [], []]
    for i, n in enumerate(WGMMA_NS):
        g = groups[i % 3]
        for ta, tb in ((0, 0), (1, 1), (0, 1), (1, 0)):
            g.append(_wgmma_kernel(n, "ss", ta, tb))
        for tb in (0, 1):
            g.append(_wgmma_kernel(n, "rs", 0, tb))
        if n in (64, 256):
            g.append(_wgmma_kernel(n, "ss", 0, 0, ab="bf16"))
    units += [_PRELUDE + "".join(g) for g in groups]
    return units


def _compile(units, workdir):
    """Build each unit to a cubin with nvcc (sm_90a), in parallel (reusing those in ``workdir``); returns (modules,
    errors): a unit that fails to build gives ``None`` and its compiler log, so the other probes still run."""
    import cupy

    jobs = []
    for i, src in enumerate(units):
        cu = Path(workdir) / f"probe{i}.cu"
        out = cu.with_suffix(".cubin")
        if out.exists() and cu.exists() and cu.read_text() == src:
            jobs.append((out, None))
            continue
        cu.write_text(src)
        jobs.append((out, subprocess.Popen(
            ["nvcc", "-cubin", "-O1", "-gencode=arch=compute_90a,code=sm_90a", "-o", str(out), str(cu)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)))
    mods, errors = [], {}
    for out, p in jobs:
        if p is not None:
            log = p.communicate()[0].decode()
            if p.returncode != 0:
                errors[out.name] = log[-4000:]
                print(f"probe: nvcc failed for {out.name}:\n{log[-4000:]}", file=sys.stderr)
                mods.append(None)
                continue
        mods.append(cupy.RawModule(path=str(out)))
    return mods, errors
