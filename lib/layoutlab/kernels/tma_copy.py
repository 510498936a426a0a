"""``tma_copy``: the smallest TMA-load kernel, written to show where every byte of a tile lands.

One CTA; the global tensor holds in every element a code for its own coordinate.  Thread 0 arms an
mbarrier with the tile's byte count (``mbarrier.arrive.expect_tx``) and warp 0 issues the TMA copies that
``cpasync.make_tiled_tma_atom`` / ``cpasync.tma_partition`` derive for a (swizzled, staged) shared-memory
layout -- one CTA tile per stage (the DSL's copy elects one lane with ``elect.sync`` over the whole warp, so a
whole warp must reach it: issued from thread 0 alone, every case hung on the H100); everybody waits on the barrier's phase 0; then all threads copy the
shared-memory buffer *raw*, 32-bit word by word, to global memory.  The host therefore sees the physical
placement: which element's code sits at which shared-memory byte, what the out-of-bounds fill wrote, and
which bytes nothing wrote (the buffer is pre-filled with ``0xFF`` bytes).

A case is a plain dict (JSON-able, so the probe can record it)::

    {"name": "K_SW128 f16", "dtype": "f16", "gmem": [[200, 136], [136, 1]], "tile": [64, 64],
     "smem": ["atom", "K_SW128", [0, 1, 2]], "stages": 2, "tiles": [[0, 0], [3, 2]], "offset": 0}

``smem`` is ``["atom", kind, order]`` (a GMMA atom of :func:`~layoutlab.nvgpu.warpgroup.make_smem_layout_atom` tiled
to ``tile + (stages,)`` with ``tile_to_shape(order)``) or ``["plain", swizzle_bits_or_null, shape, stride]``
(one stage).  ``tiles[s]`` is the CTA tile loaded into stage ``s``.  ``offset`` places the buffer that many
bytes after a 1024-byte boundary (to show what a misaligned swizzled buffer does).  ``"multicast": n`` runs a
cluster of n CTAs that each load 1/n of every box with ``.multicast::cluster`` (all CTAs receive the tile).

:func:`smem_layout` builds the same layout with ``layoutlab``; :func:`compile_tma_copy` compiles for sm_90a
on a CPU (``CUTE_DSL_ARCH=sm_90a``); :func:`run_tma_copy` runs on a Hopper GPU (cupy) and returns the raw
shared-memory bytes.  :mod:`layoutlab.probe.tma` runs the cases and compares with :mod:`layoutlab.nvgpu.tma`.
"""


import math

from ..errors import LayoutError

__all__ = ["smem_layout", "case_bytes", "compile_tma_copy", "run_tma_copy", "coded_tensor", "THREADS",
           "SENTINEL_BYTE", "ELEMENT_BYTES"]

THREADS = 128
SENTINEL_BYTE = 0xFF
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4}


_CASE_KEYS = ("name", "dtype", "gmem", "tile", "smem", "tiles", "stages", "offset")


def check_case(case, op):
    """Refuse what is not a probe case (an entry of :data:`layoutlab.probe.tma.CASES`)."""
    if not isinstance(case, dict) or not set(_CASE_KEYS) <= case.keys() or case["dtype"] not in ELEMENT_BYTES:
        raise LayoutError(f"{op}: case must be one of layoutlab.probe.tma.CASES (a dict with the keys "
                          f"{', '.join(_CASE_KEYS)}; dtype one of {sorted(ELEMENT_BYTES)}), got {str(case)[:60]}")


def _staged_layout(case, lib):
    """The case's shared-memory layout, staged (rank 3), built by ``lib`` ("ours" or the DSL's ``cute``)."""
    tile, stages = tuple(case["tile"]), int(case.get("stages", 1))
    kind = case["smem"][0]
    if kind == "atom":
        _, atom_kind, order = case["smem"]
        return tile + (stages,), atom_kind, tuple(order)
    if kind == "plain":
        if stages != 1:
            raise LayoutError("tma_copy: a plain smem layout has one stage; use an 'atom' layout for stages")
        return None
    raise LayoutError(f"tma_copy: smem spec {case['smem']!r} must start with 'atom' or 'plain'")


def smem_layout(case):
    """The case's staged smem layout as a layoutlab ``ComposedLayout`` (rank 3: tile modes + stage).

    >>> from layoutlab.probe.tma import CASES
    >>> print(smem_layout(CASES[0]))
    S<0,4,3> o 0 o ((8,4),(8,4),(1,1)):((8,64),(1,256),(0,0))
    """
    from ..cute.layout import Layout
    from ..cute.swizzle import ComposedLayout, Swizzle
    from ..nvgpu.warpgroup import SmemLayoutAtomKind, make_smem_layout_atom
    check_case(case, "smem_layout")
    bits = ELEMENT_BYTES[case["dtype"]] * 8
    spec = _staged_layout(case, "ours")
    if spec:
        shape, kind, order = spec
        return make_smem_layout_atom(SmemLayoutAtomKind[kind], bits).tile_to_shape(shape, order)
    _, b, shape, stride = case["smem"]
    outer = Layout(tuple(shape) + (1,), tuple(stride) + (0,))
    return ComposedLayout(Swizzle(b or 0, 4, 3), 0, outer)


def case_bytes(case) -> int:
    """Bytes of the shared-memory buffer the kernel copies out: the staged layout's cosize, plus the offset,
    rounded up to whole 16-byte chunks.

    >>> from layoutlab.probe.tma import CASES
    >>> case_bytes(CASES[0])
    2048
    """
    check_case(case, "case_bytes")
    n = smem_layout(case).cosize() * ELEMENT_BYTES[case["dtype"]] + int(case.get("offset", 0))
    return -(-n // 16) * 16


def coded_tensor(case):
    """The global tensor's codes as a flat numpy array (uint16 for 2-byte types, uint32 for 4-byte ones):
    the element at coordinate (i, j) (global layout offset o) holds ``1 + i + rows * j`` (mod 2^16 - 2 for
    16 bits, so a code is never 0 -- the zero fill -- nor 0xFFFF -- the untouched sentinel).

    >>> from layoutlab.probe.tma import CASES
    >>> coded_tensor(CASES[0])[:4].tolist()
    [1, 65, 129, 193]
    """
    import numpy as np
    check_case(case, "coded_tensor")
    (rows, cols), (s0, s1) = case["gmem"]
    size = (rows - 1) * s0 + (cols - 1) * s1 + 1
    esize = ELEMENT_BYTES[case["dtype"]]
    flat = np.zeros(size, dtype=np.uint16 if esize == 2 else np.uint32)
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    code = 1 + i + rows * j
    if esize == 2:
        code = 1 + (code - 1) % 65534
    flat[(i * s0 + j * s1).ravel()] = code.ravel()
    return flat


# ---------------------------------------------------------------------------------------------------
# The CuTe DSL program
# ---------------------------------------------------------------------------------------------------

def _make_class():
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import cpasync

    dtypes = {"f16": cutlass.Float16, "bf16": cutlass.BFloat16, "f32": cutlass.Float32}

    class TmaCopy:
        def __init__(self, case):
            self.case = case
            self.dt = dtypes[case["dtype"]]
            self.tile = tuple(case["tile"])
            self.stages = int(case.get("stages", 1))
            self.tiles = [tuple(t) for t in case["tiles"]]
            self.offset = int(case.get("offset", 0))
            self.nbytes = case_bytes(case)
            self.esize = ELEMENT_BYTES[case["dtype"]]
            self.mcast = int(case.get("multicast", 1))

        def _smem_layout(self):
            spec = _staged_layout(self.case, "dsl")
            if spec:
                shape, kind, order = spec
                W = cute.nvgpu.warpgroup
                atom = W.make_smem_layout_atom(getattr(W.SmemLayoutAtomKind, kind), self.dt)
                return cute.tile_to_shape(atom, shape, order=order)
            _, b, shape, stride = self.case["smem"]
            outer = cute.make_layout(tuple(shape) + (1,), stride=tuple(stride) + (0,))
            return cute.make_composed_layout(cute.make_swizzle(b or 0, 4, 3), 0, outer)

        @cute.jit
        def __call__(self, src: cute.Tensor, out: cute.Tensor, stream):
            sl = self._smem_layout()
            op = cpasync.CopyBulkTensorTileG2SMulticastOp() if self.mcast > 1 else cpasync.CopyBulkTensorTileG2SOp()
            tma, mA = cpasync.make_tiled_tma_atom(op, src, cute.slice_(sl, (None, None, 0)), self.tile, self.mcast)

            @cute.struct
            class SharedStorage:
                bar: cute.struct.MemRange[cutlass.Int64, 1]
                buf: cute.struct.Align[cute.struct.MemRange[cutlass.Uint8, self.nbytes], 1024]

            self.storage = SharedStorage
            if cutlass.const_expr(self.mcast > 1):
                # a cluster of `mcast` CTAs: each loads 1/mcast of every box and multicasts it to all
                self.kernel(tma, mA, out, sl).launch(grid=(self.mcast, 1, 1), block=(THREADS, 1, 1),
                                                     cluster=(self.mcast, 1, 1), stream=stream)
            else:
                self.kernel(tma, mA, out, sl).launch(grid=(1, 1, 1), block=(THREADS, 1, 1), stream=stream)

        @cute.kernel
        def kernel(self, tma: cute.CopyAtom, mA: cute.Tensor, out: cute.Tensor, sl: cute.ComposedLayout):
            tidx, _, _ = cute.arch.thread_idx()
            storage = cutlass.memory.SmemAllocator().allocate(self.storage)
            bar = storage.bar.data_ptr()
            raw = storage.buf.data_ptr()
            words = cute.make_tensor(cute.recast_ptr(raw, dtype=cutlass.Uint32),
                                     cute.make_layout(self.nbytes // 4))
            # 1. mark every byte as "not written" (0xFF), and make those writes visible to the TMA
            for i in cutlass.range(tidx, self.nbytes // 4, THREADS, unroll=1):
                words[i] = cutlass.Uint32(0xFFFFFFFF)
            cute.arch.fence_proxy("async.shared", space="cta")
            if tidx == 0:
                cute.arch.mbarrier_init(bar, 1)
                cute.arch.mbarrier_init_fence()
            if cutlass.const_expr(self.mcast > 1):
                cute.arch.cluster_arrive()           # every CTA's barrier is ready before anyone multicasts
                cute.arch.cluster_wait()
            else:
                cute.arch.sync_threads()
            # 2. thread 0: expect the bytes of all stages, then one TMA copy per box per stage
            sA = cute.make_tensor(cute.recast_ptr(raw + self.offset, sl.inner, dtype=self.dt), sl.outer)
            gA = cute.local_tile(mA, self.tile, (None, None))                  # (bM, bK, nM, nK)
            rank = cute.arch.block_idx_in_cluster() if cutlass.const_expr(self.mcast > 1) else 0
            tAsA, tAgA = cpasync.tma_partition(tma, rank, cute.make_layout(self.mcast),
                                               cute.group_modes(sA, 0, 2), cute.group_modes(gA, 0, 2))
            # The DSL's TMA copy elects one lane itself (elect.sync over the full warp): it must be reached
            # by a whole warp. Issued by one thread only, elect.sync waits for lanes that never come (a hang).
            if tidx < 32:
                if tidx == 0:
                    # every CTA receives the whole tile (its own slice and the others'), so expects all bytes
                    cute.arch.mbarrier_arrive_and_expect_tx(
                        bar, self.stages * math.prod(self.tile) * self.esize)
                for s in cutlass.range_constexpr(self.stages):
                    tm, tk = self.tiles[s]
                    if cutlass.const_expr(self.mcast > 1):
                        cute.copy(tma, tAgA[None, tm, tk], tAsA[None, s], tma_bar_ptr=bar,
                                  mcast_mask=cutlass.Int16((1 << self.mcast) - 1))
                    else:
                        cute.copy(tma, tAgA[None, tm, tk], tAsA[None, s], tma_bar_ptr=bar)
            # 3. everybody waits for phase 0 to complete, then copies the raw bytes out
            cute.arch.mbarrier_wait(bar, 0)
            for i in cutlass.range(tidx, self.nbytes // 4, THREADS, unroll=1):
                out[rank * (self.nbytes // 4) + i] = words[i]
            if cutlass.const_expr(self.mcast > 1):
                cute.arch.cluster_arrive()           # no CTA leaves while a peer may still write to it
                cute.arch.cluster_wait()

    return TmaCopy


_CLASS = []
_CACHE = {}


def _key(case):
    import json
    return json.dumps({k: v for k, v in case.items() if k != "name"}, sort_keys=True)


def _fake_args(case):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_stream, make_fake_tensor
    dt = {"f16": cutlass.Float16, "bf16": cutlass.BFloat16, "f32": cutlass.Float32}[case["dtype"]]
    (rows, cols), stride = case["gmem"]
    src = make_fake_tensor(dt, (rows, cols), tuple(stride), assumed_align=16)
    out = make_fake_tensor(cutlass.Uint32, (case_bytes(case) // 4 * int(case.get("multicast", 1)),), (1,),
                           assumed_align=16)
    return src, out, make_fake_stream()


def compile_tma_copy(case, args=None):
    """Compile (and cache) the kernel for one case; on a CPU with ``CUTE_DSL_ARCH=sm_90a`` too.

    >>> from layoutlab.probe.tma import CASES
    >>> CASES[0]["name"], CASES[0]["dtype"]
    ('K-major f16, no swizzle (K_INTER): 16-byte-wide boxes', 'f16')
    >>> f = compile_tma_copy(CASES[0])
    >>> f is compile_tma_copy(dict(CASES[0], name="another name"))    # the name is not part of the key
    True
    >>> [("TmaCopy_object" in name, "f16" in name) for name in f.kernel_info]
    [(True, True)]
    """
    import cutlass.cute as cute
    key = _key(case)
    if key not in _CACHE:
        if not _CLASS:
            _CLASS.append(_make_class())
        _CACHE[key] = cute.compile(_CLASS[0](case), *(args or _fake_args(case)))
    return _CACHE[key]


def run_tma_copy(case):
    """Run one case on the GPU (cupy): returns the shared-memory buffer's bytes (numpy uint8), the first
    ``offset`` bytes included (they precede the tile and stay 0xFF); with ``"multicast": n`` the n CTAs'
    buffers one after the other."""
    import cupy
    import cuda.bindings.driver as cuda
    import numpy as np
    from cutlass.cute.runtime import from_dlpack
    codes = cupy.asarray(coded_tensor(case))
    view = codes.view(cupy.float16 if codes.dtype == np.uint16 else cupy.float32)
    (rows, cols), (s0, s1) = case["gmem"]
    esize = codes.itemsize
    g = cupy.lib.stride_tricks.as_strided(view, shape=(rows, cols), strides=(s0 * esize, s1 * esize))
    out = cupy.zeros(case_bytes(case) // 4 * int(case.get("multicast", 1)), dtype=cupy.uint32)
    src_t = from_dlpack(g, assumed_align=16)
    out_t = from_dlpack(out, assumed_align=16)
    stream = cuda.CUstream(cupy.cuda.get_current_stream().ptr)
    kernel = compile_tma_copy(case, (src_t, out_t, stream))
    kernel(src_t, out_t, stream)
    cupy.cuda.get_current_stream().synchronize()
    return cupy.asnumpy(out).view(np.uint8)
