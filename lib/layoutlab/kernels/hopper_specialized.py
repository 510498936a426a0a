"""``gemm_hopper_specialized``: warp specialization, one idea on top of :mod:`layoutlab.kernels.hopper`.

Same contract as :func:`~layoutlab.kernels.hopper.gemm_hopper` (bf16/fp16 in, fp32 accumulate, TN/NT/NN/TT, C row-
or column-major, alpha/beta, any M, N, K with 16-byte-aligned strides), and still one CTA per 128 x 256 tile of C,
but the CTA's warps no longer all do the same thing:

* **A producer and two consumers.** A CTA has 3 warpgroups. Warpgroup 0 is the *producer*: one thread of its
  first warp issues every TMA load of the tile, the other 127 threads idle. Warpgroups 1 and 2 are *consumers*:
  each issues ``wgmma.m64n256k16`` over its 64 x 256 half of the tile and runs the epilogue. The two roles meet
  only at the mbarriers of the shared-memory ring ("full": the TMA's bytes landed; "empty": the MMAs reading the
  stage retired). In :mod:`~layoutlab.kernels.hopper` warp 0 both loads and computes, so it refills a stage only
  between its own MMAs; here the producer waits for nothing but a free stage.
* **Register reallocation.** ``setmaxnreg`` (PTX ISA, "Parallel Synchronization and Communication Instructions:
  setmaxnreg") moves registers from the producer (down to 40 per thread) to the consumers (up to 232): 128 x (40 +
  2 x 232) = 64512 <= 65536, the register file. A consumer holds 128 fp32 accumulators per thread; the headroom
  keeps it from spilling.
* **Its own C staging buffers**, beside the ring (4 x 8 KiB): the base kernel reused the A stages for C after
  a CTA-wide barrier, which a producer that runs ahead would make unsafe. At 128 x 256 x 64 the ring still has
  4 stages.

What it does not do yet, which :mod:`~layoutlab.kernels.hopper_ws` adds next: keep the CTA alive for more tiles
(persistence: the producer loads tile t+1 while the consumers store tile t) and share B across a 2 x 1 cluster
(multicast). No pipeline timeline (``gemm_hopper`` and ``gemm_hopper_ws`` record one).
"""

from dataclasses import dataclass

from ..errors import LayoutError
from .hopper import (THREADS_PER_WARPGROUP, HopperGemmConfig, _dsl, compile_hopper_gemm, make_hopper_gemm_class,
                     plan_gemm, refuse_host_operands)

__all__ = ["gemm_hopper_specialized", "prepare_gemm_hopper_specialized", "HopperSpecializedConfig",
           "compile_hopper_gemm_specialized", "PRODUCER_REGS", "CONSUMER_REGS"]

#: registers per thread after ``setmaxnreg``: producer warpgroup, then each consumer warpgroup.
PRODUCER_REGS, CONSUMER_REGS = 40, 232


@dataclass(frozen=True)
class HopperSpecializedConfig(HopperGemmConfig):
    """:class:`~layoutlab.kernels.hopper.HopperGemmConfig` plus ``epi_stages``: C staging buffers of 128 x 32
    (each 8 KiB at 16 bits; a divisor of the tile's ``tile_n / 32`` epilogue pieces).

    >>> cfg = HopperSpecializedConfig()
    >>> cfg.consumer_warpgroups, cfg.epi_stages, cfg.ab_stages(reserved_bytes=1024 + 4 * 8192)
    (2, 4, 4)
    >>> HopperSpecializedConfig(epi_stages=3)
    Traceback (most recent call last):
    ...
    layoutlab.errors.LayoutError: HopperSpecializedConfig: epi_stages=3; the 8 epilogue pieces of a 128 x 256 tile must reuse the buffers in order: use a divisor of 8
    """

    epi_stages: int = 4

    def __post_init__(self):
        super().__post_init__()
        pieces = self.tile_n // 32
        if self.epi_stages < 1 or pieces % self.epi_stages:
            raise LayoutError(f"{type(self).__name__}: epi_stages={self.epi_stages}; the {pieces} epilogue pieces "
                              f"of a {self.tile_m} x {self.tile_n} tile must reuse the buffers in order: use a "
                              f"divisor of {pieces}")


def make_hopper_specialized_class():
    """Build the warp-specialized kernel class (on top of the base kernel's setup and epilogue)."""
    cutlass, cute, pipeline, _, sm90 = _dsl()
    from cutlass.cute.nvgpu import cpasync, warpgroup
    Base = make_hopper_gemm_class()

    class HopperGemmSpecialized(Base):
        """TMA + wgmma GEMM, one CTA per tile: a producer warp loads, two consumer warpgroups compute."""

        store_warp = 4            # first warp of the first consumer warpgroup issues the TMA stores

        def __init__(self, config: HopperSpecializedConfig, with_beta: bool):
            super().__init__(config, with_beta)
            self.epi_stages = config.epi_stages
            self.mma_threads = self.num_wg * THREADS_PER_WARPGROUP
            self.threads = self.mma_threads + THREADS_PER_WARPGROUP     # + the producer warpgroup

        def _setup(self, a, b, c):
            super()._setup(a, b, c)
            # Unlike the base kernel, C gets its own staging buffers: the consumers store C while the
            # producer may still own stages of the A/B ring.
            c_bytes = self.epi_tile[0] * self.epi_tile[1] * self.epi_stages * self.c_dtype.width // 8
            self.ab_stages = self.cfg.ab_stages(reserved_bytes=1024 + c_bytes)
            self.sA_layout = sm90.make_smem_layout_a(self.a_layout, self.tile_mnk, self.ab_dtype, self.ab_stages)
            self.sB_layout = sm90.make_smem_layout_b(self.b_layout, self.tile_mnk, self.ab_dtype, self.ab_stages)

        @cute.jit
        def __call__(self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor,
                     alpha: cutlass.Float32, beta: cutlass.Float32, stream):
            self._setup(a, b, c)
            bM, bN, bK = self.tile_mnk

            tma_a, gA_tma = cpasync.make_tiled_tma_atom(
                cpasync.CopyBulkTensorTileG2SOp(), a, cute.slice_(self.sA_layout, (None, None, 0)), (bM, bK))
            tma_b, gB_tma = cpasync.make_tiled_tma_atom(
                cpasync.CopyBulkTensorTileG2SOp(), b, cute.slice_(self.sB_layout, (None, None, 0)), (bN, bK))
            tma_c, gC_tma = cpasync.make_tiled_tma_atom(
                cpasync.CopyBulkTensorTileS2GOp(), c, cute.slice_(self.sC_layout, (None, None, 0)),
                self.epi_tile)

            grid = (cute.ceil_div(c.shape[0], bM), cute.ceil_div(c.shape[1], bN), 1)    # one CTA per tile

            @cute.struct
            class SharedStorage:
                barriers: cute.struct.MemRange[cutlass.Int64, self.ab_stages * 2]
                sA: cute.struct.Align[cute.struct.MemRange[self.ab_dtype, cute.cosize(self.sA_layout)], 1024]
                sB: cute.struct.Align[cute.struct.MemRange[self.ab_dtype, cute.cosize(self.sB_layout)], 1024]
                sC: cute.struct.Align[cute.struct.MemRange[self.c_dtype, cute.cosize(self.sC_layout)], 1024]

            self.shared_storage = SharedStorage
            self.kernel(tma_a, gA_tma, tma_b, gB_tma, tma_c, gC_tma, c, alpha, beta, self.tiled_mma,
                        self.sA_layout, self.sB_layout, self.sC_layout).launch(
                grid=grid, block=[self.threads, 1, 1], min_blocks_per_mp=1, stream=stream)

        @cute.kernel
        def kernel(self, tma_a: cute.CopyAtom, mA: cute.Tensor, tma_b: cute.CopyAtom, mB: cute.Tensor,
                   tma_c: cute.CopyAtom, mC_tma: cute.Tensor, mC: cute.Tensor,
                   alpha: cutlass.Float32, beta: cutlass.Float32, tiled_mma: cute.TiledMma,
                   sA_layout: cute.ComposedLayout, sB_layout: cute.ComposedLayout,
                   sC_layout: cute.ComposedLayout):
            bM, bN, bK = self.tile_mnk
            tidx, _, _ = cute.arch.thread_idx()
            warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
            wg = cute.arch.make_warp_uniform(tidx // THREADS_PER_WARPGROUP)
            if warp == 0:
                cpasync.prefetch_descriptor(tma_a)
                cpasync.prefetch_descriptor(tma_b)
                cpasync.prefetch_descriptor(tma_c)
            tm, tn, _ = cute.arch.block_idx()                 # this CTA's one tile

            # --- shared memory ring: `stages` x (A tile, B tile), full/empty mbarrier per stage -------
            storage = cutlass.memory.SmemAllocator().allocate(self.shared_storage)
            stage_bytes = (cute.size_in_bytes(self.ab_dtype, cute.slice_(sA_layout, (None, None, 0)))
                           + cute.size_in_bytes(self.ab_dtype, cute.slice_(sB_layout, (None, None, 0))))
            ab_pipe = pipeline.PipelineTmaAsync.create(
                barrier_storage=storage.barriers.data_ptr(), num_stages=self.ab_stages,
                producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
                # a stage is free once every consumer warp is done with it (one elected arrive per warp)
                consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, self.mma_threads // 32),
                tx_count=stage_bytes, cta_layout_vmnk=cute.make_layout((1, 1, 1, 1)), defer_sync=True)
            pipeline.pipeline_init_arrive()
            sA = storage.sA.get_tensor(sA_layout.outer, swizzle=sA_layout.inner)
            sB = storage.sB.get_tensor(sB_layout.outer, swizzle=sB_layout.inner)
            sC = storage.sC.get_tensor(sC_layout.outer, swizzle=sC_layout.inner)

            # --- all tiles of the problem: gA (bM, bK, tiles_m, k), gB (bN, bK, tiles_n, k) ------------
            gA = cute.local_tile(mA, (bM, bK), (None, None))
            gB = cute.local_tile(mB, (bN, bK), (None, None))
            gC = cute.local_tile(mC, (bM, bN), (None, None))
            gC_tma = cute.local_tile(mC_tma, (bM, bN), (None, None))
            cC = cute.local_tile(cute.make_identity_tensor(mC.shape), (bM, bN), (None, None))
            k_tiles = cute.size(gA, mode=[3])
            # TMA views: one copy per stage moves a whole tile; no cluster, so CTA 0 of 1.
            tAsA, tAgA = cpasync.tma_partition(tma_a, 0, cute.make_layout(1),
                                               cute.group_modes(sA, 0, 2), cute.group_modes(gA, 0, 2))
            tBsB, tBgB = cpasync.tma_partition(tma_b, 0, cute.make_layout(1),
                                               cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2))

            pipeline.pipeline_init_wait()

            if wg == 0:
                # ================================ producer warpgroup ================================
                cute.arch.setmaxregister_decrease(PRODUCER_REGS)
                if warp == 0:
                    produce = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.ab_stages)
                    for k in cutlass.range(k_tiles, unroll=1):
                        ab_pipe.producer_acquire(produce)       # wait for a free stage, arm its full barrier
                        bar = ab_pipe.producer_get_barrier(produce)
                        cute.copy(tma_a, tAgA[None, tm, k], tAsA[None, produce.index], tma_bar_ptr=bar)
                        cute.copy(tma_b, tBgB[None, tn, k], tBsB[None, produce.index], tma_bar_ptr=bar)
                        produce.advance()
            else:
                # ================================ consumer warpgroups ===============================
                cute.arch.setmaxregister_increase(CONSUMER_REGS)
                mma_tidx = tidx - THREADS_PER_WARPGROUP
                thr_mma = tiled_mma.get_slice((wg - 1) * THREADS_PER_WARPGROUP)   # smem operand views
                thr_c = tiled_mma.get_slice(mma_tidx)      # this thread's accumulator coordinates
                tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))
                tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
                acc = cute.make_rmem_tensor(thr_mma.partition_C(gC[None, None, 0, 0]).shape, self.acc_dtype)
                k_blocks = cute.size(tCrA, mode=[2])
                store_pipe = pipeline.PipelineTmaStore.create(
                    num_stages=self.epi_stages,
                    producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, self.mma_threads))
                consume = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.ab_stages)
                release = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.ab_stages)

                acc.fill(0.0)
                tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
                for k in cutlass.range(k_tiles, unroll=1):
                    ab_pipe.consumer_wait(consume)
                    warpgroup.fence()
                    for kb in cutlass.range_constexpr(k_blocks):
                        cute.gemm(tiled_mma, acc, tCrA[None, None, kb, consume.index],
                                  tCrB[None, None, kb, consume.index], acc)
                    warpgroup.commit_group()
                    # One batch stays in flight; the one before it retired, so free its stage.
                    warpgroup.wait_group(1)
                    if k > 0:
                        ab_pipe.consumer_release(release)
                        release.advance()
                    consume.advance()
                warpgroup.wait_group(0)
                ab_pipe.consumer_release(release)       # the tile's last stage
                release.advance()

                self._epilogue(mma_tidx, warp, acc, alpha, beta,
                               thr_c.partition_C(gC[None, None, tm, tn]),
                               thr_c.partition_C(cC[None, None, tm, tn]), mC.shape, tiled_mma, sC,
                               gC_tma[None, None, tm, tn], tma_c, store_pipe, self.mma_threads)
                if warp == self.store_warp:
                    store_pipe.producer_tail()

    return HopperGemmSpecialized


def compile_hopper_gemm_specialized(dtype_name="bfloat16", a_major="K", b_major="K", c_major="N", *,
                                    config=HopperSpecializedConfig(), with_beta=False, operands=None):
    """Compile (and cache) the warp-specialized kernel; see :func:`~layoutlab.kernels.hopper.compile_hopper_gemm`.

    >>> f = compile_hopper_gemm_specialized("bfloat16", "K", "K", "N")
    >>> f is compile_hopper_gemm_specialized()
    True
    >>> ["HopperGemmSpecialized_object" in name for name in f.kernel_info]      # one GPU kernel
    [True]
    """
    _check_config(config)
    return compile_hopper_gemm(dtype_name, a_major, b_major, c_major, config=config, with_beta=with_beta,
                               kernel_factory=make_hopper_specialized_class, operands=operands)


def _check_config(config):
    if not isinstance(config, HopperSpecializedConfig):
        raise LayoutError(f"gemm_hopper_specialized: config={config!r}; pass a HopperSpecializedConfig")
    if config.timeline or tuple(config.cluster_mn) != (1, 1):
        raise LayoutError(f"gemm_hopper_specialized: timeline={config.timeline}, cluster_mn={config.cluster_mn}; "
                          f"this rung has no pipeline timeline and no cluster (gemm_hopper_ws has both): use "
                          f"timeline=False, cluster_mn=(1, 1)")


def gemm_hopper_specialized(A, B, C=None, *, alpha=1.0, beta=0.0, config=None):
    """``C = alpha * A @ B + beta * C`` with a producer warp and two consumer warpgroups, one CTA per tile.

    Same operands and refusals as :func:`~layoutlab.kernels.hopper.gemm_hopper`. Example::

        a = cupy.random.randn(4096, 4096).astype(cupy.float16)
        c = gemm_hopper_specialized(a, a.T)       # TN
    """
    C, launch = prepare_gemm_hopper_specialized(A, B, C, alpha=alpha, beta=beta, config=config)
    launch()
    return C


def prepare_gemm_hopper_specialized(A, B, C=None, *, alpha=1.0, beta=0.0, config=None):
    """``(C, launch)`` as :func:`~layoutlab.kernels.hopper.prepare_gemm_hopper` (for timing)."""
    refuse_host_operands("gemm_hopper_specialized", A, B, C)
    config = HopperSpecializedConfig() if config is None else config
    _check_config(config)
    return plan_gemm("gemm_hopper_specialized",
                     lambda dt, am, bm, cm, wb, ops: compile_hopper_gemm_specialized(
                         dt, am, bm, cm, config=config, with_beta=wb, operands=ops),
                     A, B, C, alpha, beta)
