"""``wgmma_tile``: the smallest wgmma program -- one warpgroup, one 64 x N tile, ``C = A @ B`` in fp32.

One CTA of 128 threads (one warpgroup):

    1. every thread copies elements of A (64 x K) and B (N x K, CuTe's convention) from global memory
       into shared memory, through the swizzled layout of the chosen GMMA atom (plain stores: the swizzle
       is applied to the addresses by the layout);
    2. ``fence.proxy.async`` makes those ordinary stores visible to the tensor cores (the async proxy),
       then a CTA barrier;
    3. ``wgmma.fence``; one ``wgmma.mma_async`` per k-block (K / 16 of them for 16-bit types), each with
       two shared-memory descriptors; ``wgmma.commit_group``; ``wgmma.wait_group 0``;
    4. every thread writes its accumulator registers to C (64 x N, fp32) at the (m, n) the accumulator
       TV layout gives (chapter 3).

The atom kinds (``K_INTER`` ... ``MN_SW128``) choose the swizzle mode and majorness of each operand, so the
same program exercises every descriptor form. On a CPU it compiles for sm_90a (``CUTE_DSL_ARCH=sm_90a``)
and :func:`descriptor_constants` reads the descriptors the DSL built out of the PTX; on an H100
:func:`run_wgmma_tile` runs it and the result is checked against a float64 reference.
"""

import re

from ..errors import LayoutError
from ._common import array_library

__all__ = ["WgmmaTileConfig", "compile_wgmma_tile", "run_wgmma_tile", "descriptor_constants", "reference",
           "gpu_check", "check_record", "GPU_CONFIGS", "compile_report"]

_KINDS = ("K_INTER", "K_SW32", "K_SW64", "K_SW128", "MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128")


class WgmmaTileConfig:
    """dtype (``"float16"``/``"bfloat16"``), N (8..256, multiple of 8), K (multiple of 16) and the two atom kinds.

    ``a_kind="RMEM"`` puts A in registers (the RS form): every thread loads its A fragment from global
    memory straight into registers, and the wgmma reads them there.

    The MN extent must fill whole swizzle rows of an MN-major atom (e.g. ``MN_SW128`` for 16-bit needs
    N a multiple of 64), and K whole rows of a K-major one (``K_SW128`` needs K a multiple of 64).

    >>> WgmmaTileConfig()
    WgmmaTileConfig('float16', 64, 64, 'K_SW128', 'K_SW128')
    """

    def __init__(self, dtype="float16", n=64, k=64, a_kind="K_SW128", b_kind="K_SW128"):
        if dtype not in ("float16", "bfloat16"):
            raise LayoutError(f"wgmma_tile: dtype {dtype!r}; this kernel takes float16 or bfloat16")
        if n % 8 or not 8 <= n <= 256:
            raise LayoutError(f"wgmma_tile: N = {n}; wgmma N is a multiple of 8 in [8, 256]")
        if k % 16 or k <= 0:
            raise LayoutError(f"wgmma_tile: K = {k}; one wgmma takes K = 16 of a 16-bit type: use a multiple of 16")
        if b_kind == "RMEM":
            raise LayoutError("wgmma_tile: b_kind = 'RMEM'; wgmma reads B from shared memory only")
        for name, kind, mn in (("a_kind", a_kind, 64), ("b_kind", b_kind, n)):
            if kind == "RMEM" and name == "a_kind":
                continue        # A in registers (RS): K-major, no shared-memory atom
            if kind not in _KINDS:
                raise LayoutError(f"wgmma_tile: {name} = {kind!r}; one of {_KINDS}"
                                  + (" or 'RMEM' (A in registers)" if name == "a_kind" else ""))
            major, width = kind.split("_")
            row = {"INTER": 8, "SW32": 16, "SW64": 32, "SW128": 64}[width]   # elements in one atom row
            extent = k if major == "K" else mn
            if extent % row:
                raise LayoutError(f"wgmma_tile: {name} = {kind} needs the {'K' if major == 'K' else 'MN'} extent "
                                  f"({extent}) to be a multiple of its row of {row} elements")
        self.dtype, self.n, self.k, self.a_kind, self.b_kind = dtype, n, k, a_kind, b_kind

    @property
    def key(self):
        return (self.dtype, self.n, self.k, self.a_kind, self.b_kind)

    def __repr__(self):
        return f"WgmmaTileConfig{self.key}"


def _make_class():
    import cutlass
    import cutlass.cute as cute
    import cutlass.utils.hopper_helpers as sm90
    from cutlass.cute.nvgpu import OperandMajorMode, warpgroup

    class WgmmaTile:
        def __init__(self, cfg: WgmmaTileConfig):
            self.cfg = cfg
            self.ab = {"float16": cutlass.Float16, "bfloat16": cutlass.BFloat16}[cfg.dtype]

        def _layouts(self):
            c = self.cfg
            rs = c.a_kind == "RMEM"
            a_kind = "K_INTER" if rs else c.a_kind      # RS: the (unused) smem A is a plain K-major tile
            a_major, b_major = a_kind.split("_")[0], c.b_kind.split("_")[0]
            mode = {"K": OperandMajorMode.K, "MN": OperandMajorMode.MN}
            tiled_mma = sm90.make_trivial_tiled_mma(
                self.ab, self.ab, mode[a_major], mode[b_major], cutlass.Float32, (1, 1, 1), tiler_mn=(64, c.n),
                a_source=warpgroup.OperandSource.RMEM if rs else warpgroup.OperandSource.SMEM)
            sA = cute.tile_to_shape(
                warpgroup.make_smem_layout_atom(getattr(warpgroup.SmemLayoutAtomKind, a_kind), self.ab),
                (64, c.k), order=(0, 1) if a_major == "K" else (1, 0))
            sB = cute.tile_to_shape(
                warpgroup.make_smem_layout_atom(getattr(warpgroup.SmemLayoutAtomKind, c.b_kind), self.ab),
                (c.n, c.k), order=(0, 1) if b_major == "K" else (1, 0))
            return tiled_mma, sA, sB

        @cute.jit
        def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream):
            tiled_mma, sA_layout, sB_layout = self._layouts()
            self.kernel(mA, mB, mC, tiled_mma, sA_layout, sB_layout).launch(
                grid=(1, 1, 1), block=(128, 1, 1), stream=stream)

        @cute.kernel
        def kernel(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, tiled_mma: cute.TiledMma,
                   sA_layout: cute.ComposedLayout, sB_layout: cute.ComposedLayout):
            n, k = self.cfg.n, self.cfg.k
            tidx, _, _ = cute.arch.thread_idx()
            smem = cutlass.memory.SmemAllocator()
            # 1024-byte aligned buffers: every swizzle pattern starts on its own boundary (base offset 0)
            sA = smem.allocate_tensor(self.ab, sA_layout.outer, byte_alignment=1024, swizzle=sA_layout.inner)
            sB = smem.allocate_tensor(self.ab, sB_layout.outer, byte_alignment=1024, swizzle=sB_layout.inner)
            # 1. global -> shared, element by element (the swizzled layout picks each address)
            if cutlass.const_expr(self.cfg.a_kind != "RMEM"):
                for i in cutlass.range(tidx, 64 * k, 128):
                    sA[i % 64, i // 64] = mA[i % 64, i // 64]
            for i in cutlass.range(tidx, n * k, 128):
                sB[i % n, i // n] = mB[i % n, i // n]
            # 2. generic-proxy stores -> visible to wgmma (async proxy); then everyone has stored
            cute.arch.fence_proxy("async.shared", space="cta")
            cute.arch.sync_threads()
            # 3. descriptors per k-block, accumulator in registers
            thr = tiled_mma.get_slice(tidx)
            if cutlass.const_expr(self.cfg.a_kind == "RMEM"):
                # RS: this thread's A fragment, straight from global memory into registers (chapter 8's
                # partition: rows t1 + 16 w (+8), columns 2 t0 (+1, +8) of every k-block)
                tCgA = thr.partition_A(mA)
                tCrA = tiled_mma.make_fragment_A(tCgA)
                for i in cutlass.range_constexpr(cute.size(tCrA)):
                    tCrA[i] = tCgA[i]
            else:
                tCrA = tiled_mma.make_fragment_A(thr.partition_A(sA))
            tCrB = tiled_mma.make_fragment_B(thr.partition_B(sB))
            tCgC = thr.partition_C(mC)
            acc = cute.make_rmem_tensor(tCgC.shape, cutlass.Float32)
            acc.fill(0.0)
            tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
            warpgroup.fence()          # before the first wgmma, always (PTX 9.7.15.7.1); orders the zeroed acc, RS A
            for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
                cute.gemm(tiled_mma, acc, tCrA[None, None, kb], tCrB[None, None, kb], acc)
            warpgroup.commit_group()
            warpgroup.wait_group(0)
            # 4. registers -> C at the accumulator layout's (m, n)
            for i in cutlass.range_constexpr(cute.size(acc)):
                tCgC[i] = acc[i]

    return WgmmaTile


_CLASS = []
_CACHE = {}


def _fake_operands(cfg):
    import cutlass
    from cutlass.cute.runtime import make_fake_tensor
    dt = {"float16": cutlass.Float16, "bfloat16": cutlass.BFloat16}[cfg.dtype]
    n, k = cfg.n, cfg.k
    a = make_fake_tensor(dt, (64, k), (1, 64) if cfg.a_kind.startswith("MN") else (k, 1), assumed_align=16)
    b = make_fake_tensor(dt, (n, k), (k, 1) if cfg.b_kind.startswith("K") else (1, n), assumed_align=16)
    c = make_fake_tensor(cutlass.Float32, (64, n), (n, 1), assumed_align=16)
    return a, b, c


def compile_wgmma_tile(cfg: WgmmaTileConfig = None, operands=None):
    """Compile (cached) for one config; on a CPU with ``CUTE_DSL_ARCH=sm_90a`` against fake tensors.

    Returns the DSL's compiled callable ``f(a (64,K), b (N,K), c (64,N) fp32, stream)``.

    >>> cfg = WgmmaTileConfig("float16", 8, 16, "K_INTER", "K_INTER")      # the smallest: one m64n8k16
    >>> f = compile_wgmma_tile(cfg)
    >>> f is compile_wgmma_tile(WgmmaTileConfig("float16", 8, 16, "K_INTER", "K_INTER"))
    True
    >>> [("WgmmaTile_object" in name, "f16" in name) for name in f.kernel_info]
    [(True, True)]
    """
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_stream
    cfg = cfg or WgmmaTileConfig()
    key = cfg.key + (operands is not None,)
    if key not in _CACHE:
        if not _CLASS:
            _CLASS.append(_make_class())
        a, b, c = operands or _fake_operands(cfg)
        _CACHE[key] = cute.compile(_CLASS[0](cfg), a, b, c, make_fake_stream())
    return _CACHE[key]


def reference(A, B):
    """float64 ``A @ B.T`` of A (64, K) and B (N, K) (numpy or cupy arrays).

    >>> import numpy as np
    >>> reference(np.ones((64, 16)), np.full((8, 16), 2.0))[0, :3]
    array([32., 32., 32.])
    """
    import numpy as np
    try:
        a, b = (np.asarray(X.get() if hasattr(X, "__cuda_array_interface__") and callable(getattr(X, "get", None))
                           else X, dtype=np.float64) for X in (A, B))     # a cupy array is copied to the host
    except (TypeError, ValueError):
        a = b = None
    if a is None or a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise LayoutError(f"reference: A (M, K) and B (N, K) must be 2-D arrays of numbers with the same K, got "
                          f"{type(A).__name__} and {type(B).__name__}")
    return a @ b.T


def run_wgmma_tile(cfg: WgmmaTileConfig, A, B):
    """Run on the GPU: A (64, K), B (N, K) cupy arrays (float16) or torch CUDA tensors (bfloat16), in any
    strides (they are made K- or MN-contiguous as the atom kinds say). Returns C (64, N) float32 (cupy)."""
    import cupy
    import cuda.bindings.driver as cuda
    from cutlass.cute.runtime import from_dlpack
    if tuple(A.shape) != (64, cfg.k) or tuple(B.shape) != (cfg.n, cfg.k):
        raise LayoutError(f"run_wgmma_tile: A must be (64, {cfg.k}) and B ({cfg.n}, {cfg.k}); got "
                          f"{tuple(A.shape)}, {tuple(B.shape)}")
    a, b = _arrange(A, not cfg.a_kind.startswith("MN")), _arrange(B, cfg.b_kind.startswith("K"))
    if array_library(a) == "torch":                         # finish its work before ours
        import torch
        torch.cuda.synchronize()
    C = cupy.zeros((64, cfg.n), dtype=cupy.float32)
    ops = tuple(from_dlpack(x, assumed_align=16) for x in (a, b, C))
    kernel = compile_wgmma_tile(cfg, operands=ops)
    kernel(*ops, cuda.CUstream(cupy.cuda.get_current_stream().ptr))
    cupy.cuda.get_current_stream().synchronize()
    return C


def _arrange(x, k_contiguous):
    """The same matrix with K (mode 1) contiguous, or the MN mode (mode 0) contiguous."""
    if array_library(x) == "torch":
        return x.contiguous() if k_contiguous else x.t().contiguous().t()
    import cupy
    return cupy.ascontiguousarray(x) if k_contiguous else cupy.asfortranarray(x)


_WGMMA = re.compile(r"wgmma\.mma_async\.sync\.aligned\.(m64n\d+k\d+)\.\S+\s*\{[^}]*\},\s*(%rd\d+),\s*(%rd\d+)")
_INSTR = re.compile(r"^\s*([a-z][\w.]*)\s+(%\w+),\s*([^;]*);", re.M)


def descriptor_constants(ptx: str):
    """The descriptors the DSL built, read from its PTX: ``[(shape, a_desc_const, b_desc_const), ...]``.

    The DSL computes each descriptor as ``((address >> 4) & mask) | constant`` (``+ constant`` for later
    k-blocks; in 32 bits when the constant fits): the constant holds every field but the buffer's own
    address, i.e. the descriptor of a buffer at shared address 0. The definitions of the two descriptor
    registers of each ``wgmma.mma_async`` are followed back to that constant (0 where only the address
    remains), in program order.

    A hand-written PTX excerpt: A's descriptor is ``(addr >> 4) & 0x3FFF`` or'ed with a constant (128-byte
    swizzle, stride 1024 bytes, leading 16 bytes); B's is the address alone.

    >>> ptx = "\\n".join([
    ...     "shr.u64 %rd2, %rd1, 4;",
    ...     "and.b64 %rd3, %rd2, 16383;",
    ...     "or.b64 %rd4, %rd3, 4611686293305360384;",
    ...     "mov.b64 %rd5, %rd3;",
    ...     "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd4, %rd5, p, 1, 1, 0, 0;"])
    >>> [(shape, hex(a), hex(b)) for shape, a, b in descriptor_constants(ptx)]
    [('m64n8k16', '0x4000004000010000', '0x0')]
    """
    if not isinstance(ptx, str):
        raise LayoutError(f"descriptor_constants: ptx must be the PTX text (a str), got {type(ptx).__name__}")
    defs = {m.group(2): (m.group(1), [a.strip() for a in m.group(3).split(",")]) for m in _INSTR.finditer(ptx)}

    def const(reg, depth=0):
        if reg not in defs or depth > 8:
            raise LayoutError(f"descriptor_constants: cannot follow {reg} back to its definition in the PTX")
        opc, args = defs[reg]
        if opc.startswith(("or.", "add.")) and len(args) == 2 and re.fullmatch(r"-?\d+", args[1]):
            return int(args[1]) % (1 << 64)
        if opc.startswith("cvt.") or opc.startswith("mov."):
            return const(args[0], depth + 1)
        if opc.startswith(("and.", "shr.")):
            return 0      # only the address part: (addr >> 4) & mask
        raise LayoutError(f"descriptor_constants: {reg} is defined by {opc} {', '.join(args)}, not by the "
                          f"address | constant pattern")

    return [(m.group(1), const(m.group(2)), const(m.group(3))) for m in _WGMMA.finditer(ptx)]


#: The configurations the H100 check runs: every pair of atom kinds at 64 x 64 x 64 (f16), a few other N,
#: K and bf16, and A from registers (RS): 8 x 8 + 8 + 4 = 76 kernels.
GPU_CONFIGS = tuple(("float16", 64, 64, a, b) for a in _KINDS for b in _KINDS) + (
    ("bfloat16", 64, 64, "K_SW128", "K_SW128"), ("bfloat16", 128, 64, "K_SW128", "MN_SW128"),
    ("float16", 256, 64, "K_SW128", "K_SW128"), ("float16", 8, 16, "K_INTER", "K_INTER"),
    ("float16", 8, 32, "MN_INTER", "K_SW32"), ("float16", 24, 48, "K_INTER", "MN_INTER"),
    ("bfloat16", 256, 128, "MN_SW64", "MN_SW128"), ("float16", 64, 256, "K_SW128", "MN_SW32"),
    ("float16", 64, 64, "RMEM", "K_SW128"), ("float16", 128, 32, "RMEM", "MN_SW64"),
    ("bfloat16", 256, 64, "RMEM", "MN_SW128"), ("float16", 8, 16, "RMEM", "K_INTER"))


def gpu_check(configs=GPU_CONFIGS, seed=0):
    """Run every config on the GPU with random integer inputs in [-2, 2] (the fp32 product is then exact)
    and with normal random inputs; compare with the float64 reference. Returns a JSON-able record."""
    import datetime
    import sys

    import cupy
    import numpy as np

    from .. import gpu

    rng = np.random.default_rng(seed)
    cases = []
    for c in configs:
        cfg = WgmmaTileConfig(*c)
        row = {"config": list(c)}
        try:
            for design in ("integers", "normal"):
                if design == "integers":
                    a = rng.integers(-2, 3, (64, cfg.k)).astype(np.float32)
                    b = rng.integers(-2, 3, (cfg.n, cfg.k)).astype(np.float32)
                else:
                    a = rng.standard_normal((64, cfg.k)).astype(np.float32)
                    b = rng.standard_normal((cfg.n, cfg.k)).astype(np.float32)
                A, B = _device(a, cfg.dtype), _device(b, cfg.dtype)
                # the reference sees the values the kernel sees: the inputs rounded to the 16-bit type
                ref = reference(_host_values(A, cfg.dtype), _host_values(B, cfg.dtype))
                C = cupy.asnumpy(run_wgmma_tile(cfg, A, B)).astype(np.float64)
                err = float(np.max(np.abs(C - ref)))
                row[design] = {"max_abs_err": err, "exact": bool(err == 0.0),
                               "max_abs_ref": float(np.max(np.abs(ref)))}
        except Exception as e:  # noqa: BLE001 - one config failing must not hide the others
            row["error"] = f"{type(e).__name__}: {e}"[:2000]
            print(f"wgmma_tile {c}: {e!r}", file=sys.stderr)
        cases.append(row)
    return {"what": "layoutlab.kernels.wgmma_tile: C = A @ B^T on one warpgroup vs float64",
            "gpu": gpu.name(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "versions": _versions(), "seed": seed, "cases": cases}


def _device(x, dtype):
    """float16 as a cupy array; bfloat16 (no numpy/cupy dtype) as a torch CUDA tensor."""
    if dtype == "float16":
        import cupy
        return cupy.asarray(x.astype("float16"))
    import torch
    return torch.tensor(x, dtype=torch.bfloat16, device="cuda")


def _host_values(X, dtype):
    import numpy as np
    if dtype == "float16":
        return np.asarray(X.get(), dtype=np.float64)
    return X.float().cpu().numpy().astype(np.float64)


def _versions():
    import sys
    v = {"python": sys.version.split()[0]}
    for mod in ("cupy", "numpy", "torch"):
        try:
            v[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 - informative only
            pass
    try:
        from importlib.metadata import version
        v["nvidia-cutlass-dsl"] = version("nvidia-cutlass-dsl")
    except Exception:  # noqa: BLE001
        pass
    return v


def check_record(rec, rtol=1e-3):
    """``(checked, problems)`` for a :func:`gpu_check` record: integer inputs exact, normal inputs within
    ``rtol`` of the largest reference value (fp32 accumulation of K products), no errors, every config run.

    >>> from layoutlab import gpu
    >>> checked, problems = check_record(gpu.load_result("wgmma_tile_h100"))
    >>> checked > 0, problems
    (True, [])
    """
    if not isinstance(rec, dict) or not all(isinstance(r, dict) for r in rec.get("cases", [])):
        raise LayoutError(f"check_record: rec must be a gpu_check record (a dict with a list of cases, e.g. "
                          f"gpu.load_result('wgmma_tile_h100')), got {type(rec).__name__}")
    problems, checked = [], 0
    seen = {tuple(r["config"]) for r in rec.get("cases", [])}
    for c in GPU_CONFIGS:
        if c not in seen:
            problems.append(f"{c}: not in the record")
    for r in rec.get("cases", []):
        checked += 1
        if "error" in r:
            problems.append(f"{tuple(r['config'])}: {r['error'].splitlines()[0]}")
            continue
        if not r["integers"]["exact"]:
            problems.append(f"{tuple(r['config'])}: integer inputs off by {r['integers']['max_abs_err']}")
        if r["normal"]["max_abs_err"] > rtol * max(r["normal"]["max_abs_ref"], 1.0):
            problems.append(f"{tuple(r['config'])}: normal inputs off by {r['normal']['max_abs_err']}")
    return checked, problems


def main(argv=None):
    """``python -m layoutlab.kernels.wgmma_tile OUT.json``: run :func:`gpu_check`, write, summarise."""
    import json
    import sys
    from pathlib import Path
    argv = sys.argv[1:] if argv is None else argv
    rec = gpu_check()
    Path(argv[0] if argv else "wgmma_tile.json").write_text(json.dumps(rec, indent=1))
    checked, problems = check_record(rec)
    print(f"wgmma_tile: {checked} configs, {len(problems)} problems")
    for p in problems:
        print("  PROBLEM", p)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())


def compile_report(cfg: WgmmaTileConfig = None, timeout=600):
    """Compile ``cfg`` for sm_90a in a fresh process (the DSL reads ``CUTE_DSL_ARCH``/``KEEP`` when imported;
    a native crash cannot take the caller down) and return ``{"ptx": str, "descriptors": [...]}`` with
    :func:`descriptor_constants` of the kept PTX. Works on a CPU.

    >>> rep = compile_report(WgmmaTileConfig("float16", 8, 16, "K_INTER", "K_INTER"))   # a few seconds
    >>> "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16" in rep["ptx"]
    True
    >>> [shape for shape, a_desc, b_desc in rep["descriptors"]]
    ['m64n8k16']
    """
    import json
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path
    cfg = cfg or WgmmaTileConfig()
    lib = str(Path(__file__).resolve().parents[2])
    code = ("import json, sys\nsys.path.insert(0, %r)\n"
            "from layoutlab.kernels.wgmma_tile import WgmmaTileConfig, compile_wgmma_tile, descriptor_constants\n"
            "ptx = compile_wgmma_tile(WgmmaTileConfig(*%r)).artifacts.PTX\n"
            "print(json.dumps({'ptx': ptx, 'descriptors': descriptor_constants(ptx)}))\n") % (lib, cfg.key)
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", CUTE_DSL_KEEP="ptx", CUTE_DSL_DUMP_DIR=tmp)
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"compile_report: the DSL compile failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
