"""``gemm_hopper``: a Hopper (sm_90a) GEMM with TMA loads, ``wgmma`` and a TMA-store epilogue.

``C = alpha * A @ B + beta * C`` for bf16 or fp16 operands, fp32 accumulation, C in the operand dtype.
All four majorness combinations (TN, NT, NN, TT) are supported, since ``wgmma`` reads K-major and
MN-major 16-bit operands from shared memory alike; C may be row- (N-major) or column-major (M-major).

How one CTA computes one ``bM x bN`` tile of C (the defaults are 128 x 256 x 64, 2 warpgroups)::

    for each k-tile (bK = 64 wide):                       # software pipeline, `stages` deep
        TMA:   gmem A[bM, bK], B[bN, bK] --> smem stage s   (128B swizzle, mbarrier expect-tx)
        wgmma: acc[bM, bN] += sA[s] @ sB[s]^T               (4 x m64n256k16 per warpgroup, async)
    epilogue: acc * alpha (+ beta * C) -> bf16 -> smem (stmatrix) -> TMA store, 128 x 32 at a time

The bulk tensor copy engine (TMA) fetches each k-tile into a 128-byte-swizzled shared-memory buffer
and counts the bytes it wrote on an mbarrier ("expect-tx"); the consumers wait on that barrier, issue
the asynchronous warpgroup MMAs, and release the buffer as soon as the MMAs reading it have retired
(``wgmma.wait_group 1`` keeps one batch of MMAs in flight while the next k-tile is waited for). One
thread (warp 0) refills the released buffer with the k-tile ``stages`` ahead. This is the
non-persistent, non-specialized design: every warp both loads and computes; see
:mod:`layoutlab.kernels.hopper_ws` for the warp-specialized, persistent version.

Arbitrary M, N, K: TMA zero-fills reads outside the matrix (so a partial k-tile adds zeros) and clips
writes outside it, so no predicate is needed in the main loop. What TMA does require is that every
stride but the unit one is a multiple of 16 bytes (8 elements) and that base addresses are 16-byte
aligned; operands breaking that are refused with a :class:`~layoutlab.errors.LayoutError` that says
which dimension to pad (a padded array sliced to the odd size is fine: only strides must align).

Pipeline timeline: ``HopperGemmConfig(timeline=True)`` (both kernels; a compile-time option, part of the
compile cache key) builds an instrumented kernel in which one lane per warp role stamps ``%globaltimer``
and ``%clock64`` at each load issue, load arrival, MMA start/end and epilogue into an extra int64 buffer
(the kernel's last argument): see :mod:`layoutlab.kernels.timeline`. Off (the default), none of it is
traced: the PTX is the uninstrumented kernel's, byte for byte (tests/kernels/test_timeline.py checks it).
"""

import dataclasses
import math
import numbers
from dataclasses import dataclass

from ..errors import LayoutError
from ._common import (DeviceOperand, array_info, array_library, cu_stream, cutlass_dtype, device_operand, gemm_problem,
                      new_array, refuse_host_array)

__all__ = ["gemm_hopper", "prepare_gemm_hopper", "HopperGemmConfig", "compile_hopper_gemm",
           "hopper_operands", "TIMELINE_EVENTS", "TIMELINE_COLUMNS", "timeline_slots"]

#: wgmma issue granularity: one warpgroup is 4 consecutive warps.
THREADS_PER_WARPGROUP = 128
#: Hopper's shared memory per CTA (227 KiB usable of 228 KiB).
SMEM_CAPACITY = 232448
#: TMA's rule: global strides (other than the unit one) and base addresses in multiples of 16 bytes.
TMA_ALIGN_BYTES = 16

# --- the pipeline timeline (``config.timeline=True``; off by default, and then not compiled in at all) ---
#: Event codes the instrumented kernels record, in code order. Producer: ``empty_wait`` (about to wait for
#: a free stage), ``load_issue`` (the stage is free, TMA issued next). Each consumer warpgroup:
#: ``full_wait`` (about to wait for a stage's bytes), ``load_arrive`` (the full barrier completed),
#: ``mma_start`` (wgmmas of the k-tile about to be issued), ``mma_end`` (``wgmma.wait_group`` returned with
#: that k-tile's batch retired), ``epi_start``/``epi_end`` (the tile's epilogue), ``tile_start``.
TIMELINE_EVENTS = ("empty_wait", "load_issue", "full_wait", "load_arrive", "mma_start", "mma_end",
                   "epi_start", "epi_end", "tile_start")
(EV_EMPTY_WAIT, EV_LOAD_ISSUE, EV_FULL_WAIT, EV_LOAD_ARRIVE, EV_MMA_START, EV_MMA_END,
 EV_EPI_START, EV_EPI_END, EV_TILE_START) = range(len(TIMELINE_EVENTS))
#: One row of int64 per event, in this order (a slot never written keeps the host's fill value -1).
TIMELINE_COLUMNS = ("globaltimer", "clock64", "event", "tile", "k_tile", "stage", "tile_m", "tile_n")


#: CTAs (the first ones in linear block order) and tiles per CTA that an instrumented build records.
TIMELINE_CTAS = {"gemm_hopper": 4, "gemm_hopper_ws": 4, "gemm_hopper_pingpong": 4}
TIMELINE_TILES = {"gemm_hopper": 1, "gemm_hopper_ws": 4, "gemm_hopper_pingpong": 4}


def _check_field_kinds(config):
    """Each field of a kernel configuration has the kind its annotation names (int, bool, a tuple of ints)."""
    for field in dataclasses.fields(config):
        value, kind = getattr(config, field.name), getattr(field.type, "__name__", field.type)
        ok = {"int": isinstance(value, numbers.Integral) and not isinstance(value, bool),
              "bool": isinstance(value, bool),
              "tuple": isinstance(value, tuple) and all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
                                                        for v in value)}.get(kind, True)
        if not ok:
            words = {"int": "an int", "bool": "True or False", "tuple": "a tuple of ints"}[kind]
            raise LayoutError(f"{type(config).__name__}: {field.name}={value!r}; it is {words}")


def timeline_slots(k_tiles):
    """Event slots per (CTA, role, tile): 4 per k-tile (producer: ``empty_wait`` at 4k, ``load_issue`` at
    4k+1; consumer: ``full_wait``, ``load_arrive``, ``mma_start``, ``mma_end`` at 4k..4k+3), then
    ``epi_start``, ``epi_end``, ``tile_start``. Each role owns its slots, so no two threads write one.

    >>> timeline_slots(4)             # 4 k-tiles: 16 slots, then epi_start, epi_end, tile_start
    19
    """
    if isinstance(k_tiles, numbers.Integral) and not isinstance(k_tiles, bool) and k_tiles >= 1:
        return 4 * k_tiles + 3
    if not isinstance(k_tiles, (numbers.Number, str, bytes, tuple, list, dict)):
        try:                    # the kernel passes the DSL's Int32, which has no Python value to check
            return 4 * k_tiles + 3
        except Exception:  # noqa: BLE001 - no integer: refused below
            pass
    raise LayoutError(f"timeline_slots: k_tiles={k_tiles!r}; it is the number of k-tiles, an int >= 1")


def timeline_buffer_shape(kernel_name, config, k):
    """``(ctas, roles, tiles, slots, columns)``: the int64 buffer an instrumented build of ``kernel_name``
    fills for a problem with K = ``k`` (flattened when passed to the kernel). Example: gemm_hopper with
    the default 128 x 256 tile and K = 4096 -> ``(4, 3, 1, 259, 8)``."""
    if kernel_name not in TIMELINE_CTAS:
        raise LayoutError(f"timeline_buffer_shape: unknown kernel {kernel_name!r}; "
                          f"instrumented kernels are {sorted(TIMELINE_CTAS)}")
    k_tiles = math.ceil(k / config.tile_k)
    return (TIMELINE_CTAS[kernel_name], 1 + config.consumer_warpgroups, TIMELINE_TILES[kernel_name],
            timeline_slots(k_tiles), len(TIMELINE_COLUMNS))


@dataclass(frozen=True)
class HopperGemmConfig:
    """A tile configuration: CTA tile ``bM x bN x bK``, pipeline depth, cluster shape.

    ``stages=0`` means "as many as fit in shared memory". ``cluster_mn=(2, 1)`` pairs two CTAs along M
    that share (multicast) their B tile. Example: ``HopperGemmConfig(128, 256, 64)`` is a 128x256 tile
    computed by two consumer warpgroups, each a 64x256 slab made of ``wgmma.m64n256k16`` instructions.

    >>> HopperGemmConfig()
    HopperGemmConfig(tile_m=128, tile_n=256, tile_k=64, stages=0, cluster_mn=(1, 1), timeline=False)
    """

    tile_m: int = 128
    tile_n: int = 256
    tile_k: int = 64
    stages: int = 0
    cluster_mn: tuple = (1, 1)
    #: Build option: record the pipeline timeline (``%globaltimer`` + ``%clock64`` per event) into an
    #: extra int64 buffer argument. Off (the default) compiles exactly the uninstrumented kernel.
    timeline: bool = False

    def __post_init__(self):
        if not isinstance(self.timeline, bool):
            raise LayoutError(f"HopperGemmConfig: timeline={self.timeline!r}; it is a build option, "
                              f"True (instrumented) or False")
        _check_field_kinds(self)
        if self.tile_m not in (64, 128, 256):
            raise LayoutError(f"HopperGemmConfig: tile_m={self.tile_m}; wgmma tiles M in 64-row slabs, "
                              f"one per warpgroup: use 64, 128 or 256")
        if self.tile_n % 8 or not 8 <= self.tile_n <= 256:
            raise LayoutError(f"HopperGemmConfig: tile_n={self.tile_n}; wgmma N must be a multiple of 8 "
                              f"in [8, 256]")
        if self.tile_k != 64:
            raise LayoutError(f"HopperGemmConfig: tile_k={self.tile_k}; 64 bf16/fp16 elements = 128 bytes, "
                              f"the row of the 128B swizzle atom, is the only K tile supported")

    @property
    def consumer_warpgroups(self):
        """One warpgroup per 64 rows of the CTA tile (each owns a 64 x bN accumulator)."""
        return self.tile_m // 64

    def ab_stage_bytes(self, itemsize=2):
        return (self.tile_m + self.tile_n) * self.tile_k * itemsize

    def ab_stages(self, reserved_bytes, itemsize=2):
        """Pipeline depth: the given one, or the most A+B stages that fit beside ``reserved_bytes``."""
        if self.stages:
            return self.stages
        return (SMEM_CAPACITY - reserved_bytes) // self.ab_stage_bytes(itemsize)


# ---------------------------------------------------------------------------------------------------
# Host side: operand checks (no DSL needed, so CI can test every refusal)
# ---------------------------------------------------------------------------------------------------

_DTYPE_NAMES = ("float16", "bfloat16")


def _operand(x, label):
    """A :class:`~layoutlab.kernels._common.DeviceOperand` (cupy array or torch CUDA tensor) as is."""
    return x if isinstance(x, DeviceOperand) else device_operand(x, label)


def refuse_host_operands(name, A, B, C=None):
    """LayoutError if A, B (or C, when given) is a host array: the first check of every entry point,
    before the DSL, cupy or CUDA is touched. Example: ``refuse_host_operands("gemm_hopper", a, b)`` with
    numpy ``a`` raises ``gemm_hopper: A must be a cupy array or a torch CUDA tensor, got ndarray ...``."""
    for label, x in (("A", A), ("B", B)) + ((("C", C),) if C is not None else ()):
        refuse_host_array(x, label, name)


def hopper_operands(A, B, C=None, *, beta=0.0, name="gemm_hopper"):
    """Check ``A (M,K)``, ``B (K,N)``, ``C (M,N)`` for a TMA + wgmma GEMM and describe the problem.

    Returns ``(problem, ops)`` with ``problem`` a :class:`~layoutlab.kernels._common.GemmProblem`.
    Refuses (``LayoutError``) a dtype other than bf16/fp16, a C of another dtype, ``beta != 0`` with no C,
    and any operand whose non-unit stride or base address is not a multiple of 16 bytes, naming the
    dimension to pad. Example: a TN problem (A K-major) with K = 1001 is refused, but the same K held in
    an array of 1008 columns (``A = a[:, :1001]``) is accepted: only strides must be aligned.
    """
    refuse_host_operands(name, A, B, C)
    opA, opB = _operand(A, "A"), _operand(B, "B")
    opC = _operand(C, "C") if C is not None else None
    for label, op in (("A", opA), ("B", opB)) + ((("C", opC),) if opC else ()):
        if str(op.dtype) not in _DTYPE_NAMES:
            raise LayoutError(f"{name}: {label} has dtype {op.dtype}; this kernel takes "
                              f"{' or '.join(_DTYPE_NAMES)} operands (fp32 accumulation) and writes C "
                              f"in the same dtype")
    prob = _prefer_unit_stride(gemm_problem(opA, opB, opC), opA, opB, opC)
    if opC is not None and opC.dtype != opA.dtype:
        raise LayoutError(f"{name}: C is {opC.dtype} but A and B are {opA.dtype}; C must have "
                          f"the operand dtype")
    if beta != 0 and C is None:
        raise LayoutError(f"{name}: beta={beta} needs an input C to scale; pass C or use beta=0")
    checks = [("A", opA, "MK", prob.a_major), ("B", opB, "KN", prob.b_major)]
    if opC is not None:
        checks.append(("C", opC, "MN", prob.c_major))
    for label, op, modes, major in checks:
        _check_tma_alignment(name, label, op, modes, major)
    return prob, (opA, opB, opC)


def _prefer_unit_stride(prob, opA, opB, opC):
    """Where the mode that ``gemm_problem`` called contiguous has extent 1 (K = 1, say), any stride is
    "contiguous"; take the other mode as the major one when its stride is 1, so TMA sees a unit stride
    there. Example: A of shape (64, 1) with element strides (1, 64) is M-major, not K-major."""
    def pick(op, modes, major):
        if op is None:
            return major
        idx = modes.index(major)
        other = 1 - idx
        if op.shape[idx] == 1 and op.strides[other] == op.itemsize and op.shape[other] > 1:
            return modes[other]
        return major
    return dataclasses.replace(prob, a_major=pick(opA, "MK", prob.a_major),
                               b_major=pick(opB, "KN", prob.b_major), c_major=pick(opC, "MN", prob.c_major))


def _check_tma_alignment(name, label, op, modes, major):
    """TMA needs the outer (non-unit) stride in multiples of 16 bytes (driver API, ``cuTensorMapEncodeTiled``)
    and, since every tensor map of this kernel swizzles (A and B 128B, C 64B or 128B), a 128-byte aligned base:
    the CUDA C++ Programming Guide's table "Requirements and properties of the different swizzle patterns"
    (Compute Capability 9) asks 128 bytes of global memory with any swizzle, where the driver API says 16."""
    outer = 0 if major == modes[1] else 1
    stride = op.strides[outer]
    if op.shape[outer] > 1 and stride % TMA_ALIGN_BYTES:
        elems = TMA_ALIGN_BYTES // op.itemsize
        inner = modes[1 - outer]
        raise LayoutError(
            f"{name}: {label} is {modes[1 - outer]}-major with a stride of {stride // op.itemsize} elements "
            f"between consecutive {modes[outer]}; TMA needs that stride to be a multiple of {elems} elements "
            f"(16 bytes). Pad {label}'s {inner} dimension to a multiple of {elems} "
            f"(e.g. allocate {math.ceil(op.shape[1 - outer] / elems) * elems} and slice back to "
            f"{op.shape[1 - outer]})")
    if op.ptr % TMA_ALIGN_BYTES:
        raise LayoutError(f"{name}: {label}'s data pointer is not 16-byte aligned ({op.ptr:#x}); TMA needs "
                          f"16-byte aligned base addresses: pass an array that starts on such an address")
    if op.ptr % 128:
        raise LayoutError(f"{name}: {label}'s data pointer {op.ptr:#x} is 16- but not 128-byte aligned; this "
                          f"kernel's tensor maps swizzle, and the CUDA C++ Programming Guide's TMA swizzle table "
                          f"asks a 128-byte aligned global address for a swizzled map (the driver API checks only "
                          f"16). Pass an array that starts on a 128-byte boundary ({op.ptr - op.ptr % 128:#x} or "
                          f"{op.ptr - op.ptr % 128 + 128:#x}; fresh cupy/torch allocations do), e.g. copy a "
                          f"sliced view with .copy()")


# ---------------------------------------------------------------------------------------------------
# The CuTe DSL program (imported lazily: `import layoutlab.kernels` must work without the DSL)
# ---------------------------------------------------------------------------------------------------

def _dsl():
    import cutlass
    import cutlass.cute as cute
    import cutlass.pipeline as pipeline
    import cutlass.utils as utils
    import cutlass.utils.hopper_helpers as sm90
    return cutlass, cute, pipeline, utils, sm90


def make_hopper_gemm_class():
    """Build the kernel class (a function so that the DSL is imported only when a kernel is needed)."""
    cutlass, cute, pipeline, utils, sm90 = _dsl()
    from cutlass.cute.nvgpu import cpasync, warpgroup

    class HopperGemm:
        """Non-persistent TMA + wgmma GEMM; one CTA per C tile; warp 0 also issues the TMA loads."""

        def __init__(self, config: HopperGemmConfig, with_beta: bool):
            self.cfg = config
            self.with_beta = with_beta
            self.acc_dtype = cutlass.Float32
            self.num_wg = config.consumer_warpgroups
            self.threads = self.num_wg * THREADS_PER_WARPGROUP
            self.tile_mnk = (config.tile_m, config.tile_n, config.tile_k)
            # Epilogue sub-tile: the whole tile height (all warpgroups) x 32 columns; 4 of them in flight.
            self.epi_tile = (config.tile_m, 32)
            self.epi_stages = 4
            self.timeline_roles = 1 + self.num_wg      # producer + each MMA warpgroup

        def _setup(self, a, b, c):
            self.ab_dtype = a.element_type
            self.c_dtype = c.element_type
            self.a_layout = cutlass.tensor_utils.LayoutEnum.from_tensor(a)
            self.b_layout = cutlass.tensor_utils.LayoutEnum.from_tensor(b)
            self.c_layout = cutlass.tensor_utils.LayoutEnum.from_tensor(c)
            # One wgmma atom covers 64 x bN x 16; tile it over the warpgroups along M.
            self.tiled_mma = sm90.make_trivial_tiled_mma(
                self.ab_dtype, self.ab_dtype, self.a_layout.sm90_mma_major_mode(),
                self.b_layout.sm90_mma_major_mode(), self.acc_dtype, (self.num_wg, 1, 1),
                tiler_mn=(64, self.cfg.tile_n))
            # The epilogue buffer reuses the A stages (all MMAs are done by then), so no bytes reserved.
            self.ab_stages = self.cfg.ab_stages(reserved_bytes=1024)
            # 128B-swizzled (Swizzle<3,4,3>) K-major or MN-major atoms, tiled to bM x bK x stages.
            self.sA_layout = sm90.make_smem_layout_a(self.a_layout, self.tile_mnk, self.ab_dtype, self.ab_stages)
            self.sB_layout = sm90.make_smem_layout_b(self.b_layout, self.tile_mnk, self.ab_dtype, self.ab_stages)
            self.sC_layout = sm90.make_smem_layout_epi(self.c_dtype, self.c_layout, self.epi_tile, self.epi_stages)

        @cute.jit
        def __call__(self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor,
                     alpha: cutlass.Float32, beta: cutlass.Float32, stream, timeline: cute.Tensor = None):
            """a: (M, K), b: (N, K) (B transposed, as CuTe names it), c: (M, N); ``timeline``: the int64
            event buffer, only with ``config.timeline`` (see :func:`timeline_buffer_shape`)."""
            self._setup(a, b, c)
            bM, bN, bK = self.tile_mnk
            tma_a, gA_tma = cpasync.make_tiled_tma_atom(
                cpasync.CopyBulkTensorTileG2SOp(), a, cute.slice_(self.sA_layout, (None, None, 0)), (bM, bK))
            tma_b, gB_tma = cpasync.make_tiled_tma_atom(
                cpasync.CopyBulkTensorTileG2SOp(), b, cute.slice_(self.sB_layout, (None, None, 0)), (bN, bK))
            tma_c, gC_tma = cpasync.make_tiled_tma_atom(
                cpasync.CopyBulkTensorTileS2GOp(), c, cute.slice_(self.sC_layout, (None, None, 0)),
                self.epi_tile)

            @cute.struct
            class SharedStorage:
                barriers: cute.struct.MemRange[cutlass.Int64, self.ab_stages * 2]   # full + empty
                sA: cute.struct.Align[cute.struct.MemRange[self.ab_dtype, cute.cosize(self.sA_layout)], 1024]
                sB: cute.struct.Align[cute.struct.MemRange[self.ab_dtype, cute.cosize(self.sB_layout)], 1024]

            self.shared_storage = SharedStorage
            grid = (cute.ceil_div(c.shape[0], bM), cute.ceil_div(c.shape[1], bN), 1)
            self.kernel(tma_a, gA_tma, tma_b, gB_tma, tma_c, gC_tma, c, alpha, beta,
                        self.tiled_mma, self.sA_layout, self.sB_layout, self.sC_layout, timeline).launch(
                grid=grid, block=[self.threads, 1, 1], stream=stream)

        @cute.kernel
        def kernel(self, tma_a: cute.CopyAtom, mA: cute.Tensor, tma_b: cute.CopyAtom, mB: cute.Tensor,
                   tma_c: cute.CopyAtom, mC_tma: cute.Tensor, mC: cute.Tensor,
                   alpha: cutlass.Float32, beta: cutlass.Float32, tiled_mma: cute.TiledMma,
                   sA_layout: cute.ComposedLayout, sB_layout: cute.ComposedLayout,
                   sC_layout: cute.ComposedLayout, tl: cute.Tensor = None):
            bM, bN, bK = self.tile_mnk
            tidx, _, _ = cute.arch.thread_idx()
            warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
            tile_m, tile_n, _ = cute.arch.block_idx()
            if warp == 0:
                cpasync.prefetch_descriptor(tma_a)
                cpasync.prefetch_descriptor(tma_b)

            # --- shared memory and the k-tile pipeline (full/empty mbarrier per stage) ---------------
            storage = cutlass.memory.SmemAllocator().allocate(self.shared_storage)
            stage_bytes = (cute.size_in_bytes(self.ab_dtype, cute.slice_(sA_layout, (None, None, 0)))
                           + cute.size_in_bytes(self.ab_dtype, cute.slice_(sB_layout, (None, None, 0))))
            ab_pipe = pipeline.PipelineTmaAsync.create(
                barrier_storage=storage.barriers.data_ptr(), num_stages=self.ab_stages,
                producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
                # every consumer warp releases a stage once (one elected arrive per warp)
                consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, self.threads // 32),
                tx_count=stage_bytes, cta_layout_vmnk=cute.make_layout((1, 1, 1, 1)), defer_sync=True)
            pipeline.pipeline_init_arrive()
            sA = storage.sA.get_tensor(sA_layout.outer, swizzle=sA_layout.inner)
            sB = storage.sB.get_tensor(sB_layout.outer, swizzle=sB_layout.inner)

            # --- this CTA's tiles: gA (bM, bK, k), gB (bN, bK, k), gC (bM, bN) ------------------------
            gA = cute.local_tile(mA, (bM, bK), (tile_m, None))
            gB = cute.local_tile(mB, (bN, bK), (tile_n, None))
            k_tiles = cute.size(gA, mode=[2])
            # TMA views: one copy per stage moves a whole (bM, bK) tile; no cluster, so CTA 0 of 1.
            tAsA, tAgA = cpasync.tma_partition(tma_a, 0, cute.make_layout(1),
                                               cute.group_modes(sA, 0, 2), cute.group_modes(gA, 0, 2))
            tBsB, tBgB = cpasync.tma_partition(tma_b, 0, cute.make_layout(1),
                                               cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2))

            # --- wgmma partitions: warpgroup w owns rows [64w, 64w + 64) of the tile --------------------
            wg = cute.arch.make_warp_uniform(tidx // THREADS_PER_WARPGROUP)
            thr_mma = tiled_mma.get_slice(wg * THREADS_PER_WARPGROUP)
            tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))   # smem descriptors, not registers
            tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
            gC = cute.local_tile(mC, (bM, bN), (tile_m, tile_n))
            acc = cute.make_rmem_tensor(thr_mma.partition_C(gC).shape, self.acc_dtype)
            k_blocks = cute.size(tCrA, mode=[2])   # bK / 16 wgmma instructions per k-tile
            tlc, rec_p, rec_c = None, None, None
            if cutlass.const_expr(self.cfg.timeline):
                # One CTA computes one tile. Recorders: lane 0 of warp 0 for the loads (role 0), lane 0
                # of each warpgroup's first warp for its MMAs and epilogue (role 1 + warpgroup).
                tlc, rec_p, rec_c = self._timeline_recorders(tl, k_tiles, tidx, warp, wg)

            pipeline.pipeline_init_wait()

            # --- prologue: warp 0 fills every stage (or all k-tiles if fewer) --------------------------
            produce = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.ab_stages)
            if cutlass.const_expr(self.cfg.timeline):
                self._stamp(tlc, rec_p, 0, 0, timeline_slots(k_tiles) - 1, EV_TILE_START, 0, 0, tile_m, tile_n)
                self._stamp(tlc, rec_c, 1 + wg, 0, timeline_slots(k_tiles) - 1, EV_TILE_START, 0, 0,
                            tile_m, tile_n)
            if warp == 0:
                for _ in cutlass.range(cutlass.min(self.ab_stages, k_tiles), unroll=1):
                    self._load_stage(ab_pipe, produce, tma_a, tAgA, tAsA, tma_b, tBgB, tBsB, tlc, rec_p)
                    produce.advance()

            # --- main loop --------------------------------------------------------------------------
            consume = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.ab_stages)
            release = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.ab_stages)
            acc.fill(0.0)
            tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
            for k_tile in cutlass.range(k_tiles, unroll=1):
                if cutlass.const_expr(self.cfg.timeline):
                    self._stamp(tlc, rec_c, 1 + wg, 0, 4 * k_tile, EV_FULL_WAIT, k_tile, consume.index,
                                tile_m, tile_n)
                ab_pipe.consumer_wait(consume)              # TMA bytes for this stage have landed
                if cutlass.const_expr(self.cfg.timeline):
                    self._stamp(tlc, rec_c, 1 + wg, 0, 4 * k_tile + 1, EV_LOAD_ARRIVE, k_tile, consume.index,
                                tile_m, tile_n)
                if cutlass.const_expr(self.cfg.timeline):
                    self._stamp(tlc, rec_c, 1 + wg, 0, 4 * k_tile + 2, EV_MMA_START, k_tile, consume.index,
                                tile_m, tile_n)
                warpgroup.fence()
                for kb in cutlass.range_constexpr(k_blocks):
                    cute.gemm(tiled_mma, acc, tCrA[None, None, kb, consume.index],
                              tCrB[None, None, kb, consume.index], acc)
                warpgroup.commit_group()
                # Keep this batch in flight; the previous one has now retired, so its stage is free.
                warpgroup.wait_group(1)
                if k_tile > 0:
                    if cutlass.const_expr(self.cfg.timeline):     # k-tile k-1's MMAs have retired
                        self._stamp(tlc, rec_c, 1 + wg, 0, 4 * k_tile - 1, EV_MMA_END, k_tile - 1,
                                    release.index, tile_m, tile_n)
                    ab_pipe.consumer_release(release)
                    release.advance()
                    # Refill the stage just released with the k-tile `stages` ahead. Only now: had warp 0
                    # waited for a stage that its own warp has not released yet, it would wait forever.
                    if warp == 0 and produce.count < k_tiles:
                        self._load_stage(ab_pipe, produce, tma_a, tAgA, tAsA, tma_b, tBgB, tBsB, tlc, rec_p)
                        produce.advance()
                consume.advance()
            warpgroup.wait_group(0)
            if cutlass.const_expr(self.cfg.timeline):
                self._stamp(tlc, rec_c, 1 + wg, 0, 4 * k_tiles - 1, EV_MMA_END, k_tiles - 1, release.index,
                            tile_m, tile_n)

            # --- epilogue ---------------------------------------------------------------------------
            # All warpgroups must be done reading sA before it is reused as the C staging buffer.
            cute.arch.sync_threads()
            if cutlass.const_expr(self.cfg.timeline):
                self._stamp(tlc, rec_c, 1 + wg, 0, 4 * k_tiles, EV_EPI_START, 0, 0, tile_m, tile_n)
            sC = cute.make_tensor(cute.recast_ptr(sA.iterator, sC_layout.inner, dtype=self.c_dtype),
                                  sC_layout.outer)
            gC_tma = cute.local_tile(mC_tma, (bM, bN), (tile_m, tile_n))
            cC = cute.local_tile(cute.make_identity_tensor(mC.shape), (bM, bN), (tile_m, tile_n))
            store_pipe = pipeline.PipelineTmaStore.create(
                num_stages=self.epi_stages,
                producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, self.threads))
            # The accumulator's (m, n) coordinates differ per thread: partition C with this thread's
            # slice (thr_mma above is the warpgroup's, which is all that the smem operands need).
            thr_c = tiled_mma.get_slice(tidx)
            self._epilogue(tidx, warp, acc, alpha, beta, thr_c.partition_C(gC), thr_c.partition_C(cC),
                           mC.shape, tiled_mma, sC, gC_tma, tma_c, store_pipe, self.threads)
            if cutlass.const_expr(self.cfg.timeline):
                self._stamp(tlc, rec_c, 1 + wg, 0, 4 * k_tiles + 1, EV_EPI_END, 0, 0, tile_m, tile_n)
            if warp == self.store_warp:
                store_pipe.producer_tail()           # the last TMA stores must finish reading smem

        @cute.jit
        def _load_stage(self, ab_pipe, produce, tma_a, tAgA, tAsA, tma_b, tBgB, tBsB, tlc=None, rec=None):
            """Wait until stage `produce.index` is free, then TMA k-tile `produce.count` into it."""
            if cutlass.const_expr(self.cfg.timeline):
                self._stamp(tlc, rec, 0, 0, 4 * produce.count, EV_EMPTY_WAIT, produce.count, produce.index,
                            tlc[3], tlc[4])
            ab_pipe.producer_acquire(produce)        # also arms the full barrier with the byte count
            if cutlass.const_expr(self.cfg.timeline):
                self._stamp(tlc, rec, 0, 0, 4 * produce.count + 1, EV_LOAD_ISSUE, produce.count,
                            produce.index, tlc[3], tlc[4])
            bar = ab_pipe.producer_get_barrier(produce)
            cute.copy(tma_a, tAgA[None, produce.count], tAsA[None, produce.index], tma_bar_ptr=bar)
            cute.copy(tma_b, tBgB[None, produce.count], tBsB[None, produce.index], tma_bar_ptr=bar)

        # --- pipeline timeline (only traced with config.timeline) ----------------------------------------
        @cute.jit
        def _timeline_recorders(self, tl, k_tiles, tidx, warp, wg):
            """``(tlc, rec_p, rec_c)``: the context ``(tl, cta, slots, tile_m, tile_n)`` for
            :meth:`_stamp` and the two "this thread records" predicates: lane 0 of warp 0 (the loads) and
            lane 0 of the first warp of each MMA warpgroup. Only the first ``timeline_ctas`` CTAs (in
            linear block order) record."""
            bx, by, bz = cute.arch.block_idx()
            gx, gy, _ = cute.arch.grid_dim()
            cta = bx + gx * (by + gy * bz)
            lane = cute.arch.lane_idx()
            ok = cta < self.timeline_ctas
            rec_p = ok & (warp == 0) & (lane == 0)
            rec_c = ok & (warp % 4 == 0) & (lane == 0)
            return (tl, cta, timeline_slots(k_tiles), bx, by), rec_p, rec_c

        @cute.jit
        def _stamp(self, tlc, rec, role, tile, slot, event, k_tile, stage, tile_m, tile_n):
            """Where ``rec`` (one lane of one warp) and ``tile`` is among the first ``timeline_tiles``:
            write ``%globaltimer``, ``%clock64`` and the event's description to this (CTA, role, tile,
            slot)'s row of the flat int64 buffer (``TIMELINE_COLUMNS``). Nothing here is warp-collective."""
            tl, cta, slots = tlc[0], tlc[1], tlc[2]
            if rec & (cutlass.Int32(tile) < self.timeline_tiles):
                row = (((cta * self.timeline_roles + role) * self.timeline_tiles + tile) * slots + slot) * 8
                tl[row] = cute.arch.globaltimer()
                tl[row + 1] = cute.arch.clock64()
                tl[row + 2] = cutlass.Int64(event)
                tl[row + 3] = cutlass.Int64(tile)
                tl[row + 4] = cutlass.Int64(k_tile)
                tl[row + 5] = cutlass.Int64(stage)
                tl[row + 6] = cutlass.Int64(tile_m)
                tl[row + 7] = cutlass.Int64(tile_n)

        @cute.jit
        def _epilogue(self, epi_tidx, warp, acc, alpha, beta, tCgC, tCcC, c_shape, tiled_mma, sC, gC_tile,
                      tma_c, store_pipe, num_threads):
            """acc -> alpha*acc (+ beta*C) -> C dtype -> smem (stmatrix) -> TMA store, 32 columns at a time.

            ``epi_tidx`` is the thread's index among the ``num_threads`` MMA threads; ``sC`` holds
            ``epi_stages`` staging buffers, recycled through ``store_pipe`` (bulk-group waits)."""
            if cutlass.const_expr(self.with_beta):
                # beta != 0 reads C straight from global memory in the accumulator layout (predicated
                # on the matrix bounds); beta == 0 never reads C, so NaNs in it cannot leak (BLAS rule).
                for i in cutlass.range(cute.size(acc), unroll_full=True):
                    if cute.elem_less(tCcC[i], c_shape):
                        acc[i] = alpha * acc[i] + beta * tCgC[i].to(self.acc_dtype)
            else:
                for i in cutlass.range_constexpr(cute.size(acc)):
                    acc[i] = alpha * acc[i]
            # stmatrix (8x8 16-bit matrices, 4 at a time) laid out to match the wgmma accumulator.
            st_atom = cute.make_copy_atom(
                cute.nvgpu.warp.StMatrix8x8x16bOp(self.c_layout.is_m_major_c(), 4), self.c_dtype)
            r2s = cute.make_tiled_copy_S(
                sm90.get_smem_store_op(self.c_layout, self.c_dtype, self.acc_dtype),
                cute.make_tiled_copy_C_atom(st_atom, tiled_mma))
            thr_r2s = r2s.get_slice(epi_tidx)
            tRS_sC = thr_r2s.partition_D(sC)                      # (R2S, R2S_M, R2S_N, stage)
            tRS_acc = r2s.retile(acc)
            piece_shape = cute.shape(thr_r2s.partition_S(sC))[:3]
            piece = cute.make_rmem_tensor(piece_shape, self.acc_dtype)
            piece_out = cute.make_rmem_tensor(piece_shape, self.c_dtype)
            gC_epi = cute.zipped_divide(gC_tile, self.epi_tile)    # ((epiM, epiN), (nM, nN))
            bSG_sC, bSG_gC = cpasync.tma_partition(tma_c, 0, cute.make_layout(1),
                                                   cute.group_modes(sC, 0, 2), gC_epi)
            n_pieces = cute.size(gC_epi, mode=[1])
            pieces_shape = gC_epi.shape[1]
            piece_order = cute.make_layout(pieces_shape, stride=(pieces_shape[1], 1))
            for p in cutlass.range_constexpr(n_pieces):
                for v in cutlass.range_constexpr(cute.size(piece)):
                    piece[v] = tRS_acc[p * cute.size(piece) + v]
                piece_out.store(piece.load().to(self.c_dtype))
                buf = p % self.epi_stages     # n_pieces is a multiple of epi_stages: tiles reuse the order
                cute.copy(r2s, piece_out, tRS_sC[None, None, None, buf])
                # Make the generic-proxy smem writes visible to the TMA (async proxy) before it reads.
                cute.arch.fence_proxy("async.shared", space="cta")
                cute.arch.barrier(barrier_id=self.epi_barrier, number_of_threads=num_threads)
                if warp == self.store_warp:
                    cute.copy(tma_c, bSG_sC[None, buf], bSG_gC[None, piece_order.get_hier_coord(p)])
                    store_pipe.producer_commit()
                    store_pipe.producer_acquire()   # buffer `buf` is free again once <= stages-1 pending
                cute.arch.barrier(barrier_id=self.epi_barrier, number_of_threads=num_threads)

    HopperGemm.store_warp = 0     # the warp that issues the TMA stores
    HopperGemm.epi_barrier = 1    # named barrier for the epilogue (0 is __syncthreads)
    HopperGemm.timeline_ctas = TIMELINE_CTAS["gemm_hopper"]     # CTAs that record (config.timeline)
    HopperGemm.timeline_tiles = TIMELINE_TILES["gemm_hopper"]   # tiles per CTA recorded (one CTA, one tile)
    return HopperGemm


# ---------------------------------------------------------------------------------------------------
# Compilation (cached) and the public entry point
# ---------------------------------------------------------------------------------------------------

_CACHE = {}


_CLASSES = {}


def _class_of(factory):
    if factory not in _CLASSES:
        _CLASSES[factory] = factory()
    return _CLASSES[factory]


def fake_operands(dtype_name, a_major, b_major, c_major="N"):
    """CuTe DSL fake tensors with symbolic M, N, K and 16-byte-aligned symbolic leading dimensions.

    ``a`` is (M, K), ``b`` is (N, K) (CuTe's convention for B), ``c`` is (M, N). Compiling against these
    yields one kernel for every problem size with this dtype and majorness, and works without a GPU.
    """
    cute = _dsl()[1]
    from cutlass.cute.runtime import make_fake_tensor
    dt = cutlass_dtype(dtype_name)
    m, n, k = (cute.sym_int32(symbol=s) for s in "MNK")
    div = TMA_ALIGN_BYTES * 8 // dt.width

    def operand(rows, cols, contiguous_in_cols, tag):
        ld = cute.sym_int64(divisibility=div, symbol=f"ld{tag}")
        stride = (ld, 1) if contiguous_in_cols else (1, ld)
        return make_fake_tensor(dt, (rows, cols), stride, assumed_align=TMA_ALIGN_BYTES)

    return (operand(m, k, a_major == "K", "a"), operand(n, k, b_major == "K", "b"),
            operand(m, n, c_major == "N", "c"))


def fake_timeline_buffer():
    """A CuTe DSL fake 1-D int64 tensor of symbolic length: the flat timeline buffer."""
    cutlass, cute = _dsl()[:2]
    from cutlass.cute.runtime import make_fake_tensor
    return make_fake_tensor(cutlass.Int64, (cute.sym_int32(symbol="T"),), (1,), assumed_align=TMA_ALIGN_BYTES)


def compile_hopper_gemm(dtype_name="bfloat16", a_major="K", b_major="K", c_major="N", *,
                        config=HopperGemmConfig(), with_beta=False, kernel_factory=None, operands=None):
    """Compile (and cache) the kernel for a dtype/majorness/config; works on a CPU with
    ``CUTE_DSL_ARCH=sm_90a``. Returns the DSL's compiled callable
    ``f(a (M,K), b (N,K), c (M,N), alpha, beta, stream)`` (with ``config.timeline``:
    ``f(..., stream, timeline)``, the flat int64 event buffer). ``operands`` (runtime CuTe tensors, plus the
    timeline buffer with ``config.timeline``) replace the fake ones when given: the GPU path compiles
    against the very tensor types it will pass. The config, timeline option included, is part of the
    cache key.

    >>> f = compile_hopper_gemm("bfloat16", "K", "K", "N")       # bf16 TN, the default 128 x 256 x 64 tile
    >>> f is compile_hopper_gemm()                               # cached; these are the defaults
    True
    >>> [("HopperGemm_object" in name, "bf16" in name) for name in f.kernel_info]   # one GPU kernel
    [(True, True)]

    (The PTX is kept only when ``CUTE_DSL_KEEP=ptx`` is set before the DSL is imported:
    tests/kernels/test_kernels_hopper.py compiles in a subprocess and checks its wgmma and TMA instructions.)
    """
    kernel_factory = kernel_factory or make_hopper_gemm_class
    key = (kernel_factory.__name__, dtype_name, a_major, b_major, c_major, config, with_beta)
    if key not in _CACHE:
        cutlass, cute = _dsl()[:2]
        from cutlass.cute.runtime import make_fake_stream
        cls = _class_of(kernel_factory)
        operands = tuple(operands or fake_operands(dtype_name, a_major, b_major, c_major))
        a, b, c = operands[:3]
        extra = ()
        if config.timeline:
            extra = (operands[3] if len(operands) > 3 else fake_timeline_buffer(),)
        _CACHE[key] = cute.compile(cls(config, with_beta), a, b, c, cutlass.Float32(1.0),
                                   cutlass.Float32(0.0), make_fake_stream(), *extra)
    return _CACHE[key]


def to_cute_tensor(x, major_mode):
    """A runtime CuTe tensor over a 2-D cupy array / torch tensor with dynamic shape and strides: unit
    stride on ``major_mode`` (0 or 1), 16-byte base alignment asserted."""
    from cutlass.cute.runtime import from_dlpack
    return from_dlpack(_canonical_view(x, major_mode),
                       assumed_align=TMA_ALIGN_BYTES).mark_layout_dynamic(leading_dim=major_mode)


def _canonical_view(x, major_mode):
    """The same elements with stride 1 on ``major_mode`` and an aligned stride on the other mode.

    A mode of extent 1 may carry any stride (numpy/cupy/torch keep whatever the slicing left), which
    would make the majorness ambiguous and can break TMA's 16-byte rule for a stride that is never used.
    Example: an M-major view of shape (1, 1) with strides (1, 8) becomes strides (8, 1) for major_mode=1.
    """
    is_torch = array_library(x) == "torch"
    itemsize = x.element_size() if is_torch else x.itemsize
    strides = list(array_info(x)[2])
    want = list(strides)
    want[major_mode] = 1
    if x.shape[1 - major_mode] == 1:
        want[1 - major_mode] = -(-max(int(x.shape[major_mode]), 1) // 8) * 8
    if want == strides:
        return x
    if is_torch:
        return x.as_strided(tuple(x.shape), tuple(want))
    from cupy.lib.stride_tricks import as_strided
    return as_strided(x, shape=x.shape, strides=tuple(s * itemsize for s in want))


def plan_gemm(name, compiled_for, A, B, C, alpha, beta, timeline=None, buffers=(), scalars=()):
    """The one host path of the Hopper GEMMs (gemm_hopper, _ws, _pingpong, _streamk): check the operands,
    allocate C, fetch (or compile) the kernel. Returns ``(C, launch)``: ``launch()`` enqueues the GEMM on the
    current stream with all arguments already converted, which is what a benchmark should time. ``buffers``:
    1-D device arrays the kernel takes after the stream (stream-K's workspace and counters); ``timeline``: the
    int64 event buffer of an instrumented build (checked by the caller), passed after the buffers; ``scalars``: DSL
    integers the kernel takes last (stream-K's schedule, decided per problem on the host)."""
    prob, _ = hopper_operands(A, B, C, beta=beta, name=name)
    if C is None:
        C = new_array(A, (prob.m, prob.n))
    dtype_name = str(prob.dtype)
    import cutlass
    a = to_cute_tensor(A, 1 if prob.a_major == "K" else 0)
    b = to_cute_tensor(B.T, 1 if prob.b_major == "K" else 0)      # (N, K) view of B
    c = to_cute_tensor(C, 1 if prob.c_major == "N" else 0)
    ops = (a, b, c)
    extra = tuple(buffers) + ((timeline,) if timeline is not None else ())
    if extra:
        from cutlass.cute.runtime import from_dlpack
        ops += tuple(from_dlpack(x, assumed_align=TMA_ALIGN_BYTES).mark_layout_dynamic(leading_dim=0) for x in extra)
    kernel = compiled_for(dtype_name, prob.a_major, prob.b_major, prob.c_major, beta != 0, ops)
    args = (a, b, c, cutlass.Float32(alpha), cutlass.Float32(beta), cu_stream(A)) + ops[3:] + tuple(scalars)
    return C, lambda: kernel(*args)


def check_timeline_buffer(name, config, timeline, k):
    """Refuse a timeline buffer without ``config.timeline`` (or none with it), and one that is not a
    contiguous 1-D int64 device array of at least :func:`timeline_buffer_shape`'s size."""
    if not config.timeline:
        if timeline is not None:
            raise LayoutError(f"{name}: a timeline buffer was given but config.timeline is False; build the "
                              f"instrumented kernel with config=...(timeline=True)")
        return
    if timeline is None:
        raise LayoutError(f"{name}: config.timeline=True needs timeline=<int64 device array of "
                          f"{math.prod(timeline_buffer_shape(name, config, k))} elements, filled with -1>")
    need = math.prod(timeline_buffer_shape(name, config, k))
    dtype, shape, strides, on_gpu = array_info(timeline)
    if not on_gpu or dtype != "int64" or len(shape) != 1 or strides != (1,) or shape[0] < need:
        raise LayoutError(f"{name}: the timeline buffer must be a contiguous 1-D int64 GPU array (cupy or "
                          f"torch) of at least {need} elements (shape {timeline_buffer_shape(name, config, k)} "
                          f"flattened); got {type(timeline).__name__} of dtype {dtype}, shape {shape}")


def run_gemm(name, compiled_for, A, B, C, alpha, beta):
    C, launch = plan_gemm(name, compiled_for, A, B, C, alpha, beta)
    launch()
    return C


def _compiled_for(config):
    return lambda dt, am, bm, cm, wb, ops: compile_hopper_gemm(dt, am, bm, cm, config=config, with_beta=wb,
                                                                operands=ops)


def prepare_gemm_hopper(A, B, C=None, *, alpha=1.0, beta=0.0, config=HopperGemmConfig(), timeline=None):
    """Like :func:`gemm_hopper` but returns ``(C, launch)`` without running: ``launch()`` enqueues the
    GEMM with no host-side checking or conversion (for timing). ``timeline``: with
    ``config.timeline=True``, the flat int64 device buffer the kernel writes its events into
    (:func:`timeline_buffer_shape`; :func:`layoutlab.bench.timeline.record_timeline` does all this)."""
    refuse_host_operands("gemm_hopper", A, B, C)
    check_timeline_buffer("gemm_hopper", config, timeline, _operand(A, "A").shape[1])
    return plan_gemm("gemm_hopper", _compiled_for(config), A, B, C, alpha, beta, timeline)


def gemm_hopper(A, B, C=None, *, alpha=1.0, beta=0.0, config=HopperGemmConfig(), timeline=None):
    """``C = alpha * A @ B + beta * C`` on a Hopper GPU with TMA and wgmma (TN, NT, NN and TT).

    A is (M, K), B is (K, N), both bf16 or both fp16 (cupy arrays or torch tensors); C, if given, is
    (M, N) in the same dtype, row- or column-major. Accumulates in fp32. Example::

        a = cupy.random.randn(4096, 4096).astype(cupy.float16)
        c = gemm_hopper(a, a.T)                   # TN: both operands K-major
        # c ~= (a.astype(float) @ a.T.astype(float)).astype(float16)
    """
    C, launch = prepare_gemm_hopper(A, B, C, alpha=alpha, beta=beta, config=config, timeline=timeline)
    launch()
    return C
