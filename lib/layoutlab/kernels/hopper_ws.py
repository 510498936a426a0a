"""``gemm_hopper_ws``: the fast kernel — the warp-specialized GEMM made persistent, in 2 x 1 clusters.

Same contract as :func:`~layoutlab.kernels.hopper.gemm_hopper` (bf16/fp16 in, fp32 accumulate,
TN/NT/NN/TT, C row- or column-major, alpha/beta, any M, N, K with 16-byte-aligned strides). It keeps the
producer warp, the two consumer warpgroups and ``setmaxnreg`` of
:mod:`~layoutlab.kernels.hopper_specialized` (the rung below) and adds where the CTAs' tiles come from:

* **Persistence.** The grid is as many clusters as the GPU holds at once (66 clusters of 2 on the H100 and H200);
  persistent cluster z walks the cluster tiles z, z + Z, z + 2Z, ... (a static schedule of its own: the
  DSL's ``StaticPersistentTileScheduler`` is deprecated). While the consumers store tile *t*, the
  producer is already loading tile *t+1*.
* **L2-friendly order.** Cluster tiles are numbered in groups of ``swizzle`` cluster rows swept column
  by column (grouped rasterization), so the CTAs running at one moment share A rows and B columns in L2;
  and every other tile walks K backwards (``serpentine_k``), starting on the k-tiles the previous wave
  loaded last, which are still in L2.
* **Clusters + multicast.** With ``cluster_mn=(2, 1)`` two CTAs computing vertically adjacent tiles
  share their B tile: each loads half and the TMA multicasts it into both CTAs' shared memory, halving
  B's L2 -> SM traffic.

``HopperWsConfig(timeline=True)`` records the measured pipeline (producer, each consumer warpgroup; the
first tiles of the first CTAs), as in :mod:`layoutlab.kernels.hopper`.
"""

from dataclasses import dataclass

from ..errors import LayoutError
from ._common import device_index, grouped_tile_coord

from .hopper import (EV_EMPTY_WAIT, EV_EPI_END, EV_EPI_START, EV_FULL_WAIT, EV_LOAD_ARRIVE,
                          EV_LOAD_ISSUE, EV_MMA_END, EV_MMA_START, EV_TILE_START, THREADS_PER_WARPGROUP,
                          TIMELINE_CTAS, TIMELINE_TILES, check_timeline_buffer, refuse_host_operands,
                          compile_hopper_gemm, plan_gemm, timeline_slots, _dsl, _operand)
from .hopper_specialized import (CONSUMER_REGS, PRODUCER_REGS, HopperSpecializedConfig,
                                 make_hopper_specialized_class)

__all__ = ["gemm_hopper_ws", "prepare_gemm_hopper_ws", "HopperWsConfig", "compile_hopper_gemm_ws"]

@dataclass(frozen=True)
class HopperWsConfig(HopperSpecializedConfig):
    """:class:`~layoutlab.kernels.hopper_specialized.HopperSpecializedConfig` plus the persistent-schedule knobs.

    ``swizzle``: cluster tiles per group in the grouped rasterization (1 = plain column-major order).
    ``num_sms``: SMs the persistent grid fills, one cluster per ``num_sms / cluster size`` (the H100 SXM
    has 132 SMs; :func:`prepare_gemm_hopper_ws` asks the driver how many clusters fit at once, see
    :func:`persistent_sms`). ``serpentine_k``: every other tile of a CTA runs its k-tiles last to
    first, so that each wave of tiles starts on the A and B slices the previous wave loaded last (still in
    L2) rather than on the first ones (evicted long ago): fewer DRAM reads, and on a power-capped H100
    fewer watts spent outside the SMs.

    >>> cfg = HopperWsConfig(128, 256, 64, cluster_mn=(2, 1), swizzle=8)
    >>> cfg.consumer_warpgroups, cfg.epi_stages, cfg.serpentine_k, cfg.ab_stage_bytes() // 1024
    (2, 4, True, 48)
    >>> HopperWsConfig(epi_stages=3)
    Traceback (most recent call last):
    ...
    layoutlab.errors.LayoutError: HopperWsConfig: epi_stages=3; the 8 epilogue pieces of a 128 x 256 tile must reuse the buffers in order: use a divisor of 8
    """

    cluster_mn: tuple = (2, 1)
    swizzle: int = 8
    num_sms: int = 132
    serpentine_k: bool = True


def make_hopper_ws_class():
    """Build the persistent kernel class (on top of the warp-specialized rung's setup and epilogue)."""
    cutlass, cute, pipeline, _, sm90 = _dsl()
    from cutlass.cute.nvgpu import cpasync, warpgroup
    Specialized = make_hopper_specialized_class()

    class HopperGemmWs(Specialized):
        """Persistent warp-specialized TMA + wgmma GEMM with optional 2-CTA clusters."""

        timeline_ctas = TIMELINE_CTAS["gemm_hopper_ws"]      # CTAs that record (config.timeline)
        timeline_tiles = TIMELINE_TILES["gemm_hopper_ws"]    # the first tiles each of them computes

        def __init__(self, config: HopperWsConfig, with_beta: bool):
            super().__init__(config, with_beta)
            cm, cn = config.cluster_mn
            # A tile row-block is shared by the CTAs of a cluster row (along N), B by a cluster column.
            self.mcast_a, self.mcast_b = cn, cm

        @cute.jit
        def __call__(self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor,
                     alpha: cutlass.Float32, beta: cutlass.Float32, stream, timeline: cute.Tensor = None):
            self._setup(a, b, c)
            bM, bN, bK = self.tile_mnk
            cm, cn = self.cfg.cluster_mn

            def load_op(mcast):
                return cpasync.CopyBulkTensorTileG2SMulticastOp() if mcast > 1 else cpasync.CopyBulkTensorTileG2SOp()

            tma_a, gA_tma = cpasync.make_tiled_tma_atom(
                load_op(self.mcast_a), a, cute.slice_(self.sA_layout, (None, None, 0)), (bM, bK), self.mcast_a)
            tma_b, gB_tma = cpasync.make_tiled_tma_atom(
                load_op(self.mcast_b), b, cute.slice_(self.sB_layout, (None, None, 0)), (bN, bK), self.mcast_b)
            tma_c, gC_tma = cpasync.make_tiled_tma_atom(
                cpasync.CopyBulkTensorTileS2GOp(), c, cute.slice_(self.sC_layout, (None, None, 0)),
                self.epi_tile)

            # The schedule's unit is a cluster tile (cm x cn CTA tiles); one persistent cluster per
            # cm * cn SMs, none idle from the start when the problem has fewer cluster tiles.
            clusters_m = cute.ceil_div(cute.ceil_div(c.shape[0], bM), cm)
            clusters_n = cute.ceil_div(cute.ceil_div(c.shape[1], bN), cn)
            persistent = cutlass.min(self.cfg.num_sms // (cm * cn), clusters_m * clusters_n)
            grid = (cm, cn, persistent)          # blockIdx.z: which persistent cluster

            @cute.struct
            class SharedStorage:
                barriers: cute.struct.MemRange[cutlass.Int64, self.ab_stages * 2]
                sA: cute.struct.Align[cute.struct.MemRange[self.ab_dtype, cute.cosize(self.sA_layout)], 1024]
                sB: cute.struct.Align[cute.struct.MemRange[self.ab_dtype, cute.cosize(self.sB_layout)], 1024]
                sC: cute.struct.Align[cute.struct.MemRange[self.c_dtype, cute.cosize(self.sC_layout)], 1024]

            self.shared_storage = SharedStorage
            self.kernel(tma_a, gA_tma, tma_b, gB_tma, tma_c, gC_tma, c, alpha, beta, self.tiled_mma,
                        self.sA_layout, self.sB_layout, self.sC_layout, clusters_m, clusters_n,
                        timeline).launch(
                grid=grid, block=[self.threads, 1, 1], cluster=(cm, cn, 1), min_blocks_per_mp=1,
                stream=stream)

        @cute.jit
        def _tile_of(self, cluster_tile, clusters_m, clusters_n, cluster_crd):
            """The CTA tile (tm, tn) of this CTA in linear cluster tile ``cluster_tile``: cluster tiles
            go in grouped order (``swizzle`` cluster rows swept column by column, so the clusters running
            together share A rows and B columns in L2); within one, the CTA's rank in the cluster."""
            cl_m, cl_n = grouped_tile_coord(cluster_tile, 0, clusters_m, clusters_n, self.cfg.swizzle)
            cm, cn = self.cfg.cluster_mn
            return cl_m * cm + cluster_crd[0], cl_n * cn + cluster_crd[1]

        @cute.kernel
        def kernel(self, tma_a: cute.CopyAtom, mA: cute.Tensor, tma_b: cute.CopyAtom, mB: cute.Tensor,
                   tma_c: cute.CopyAtom, mC_tma: cute.Tensor, mC: cute.Tensor,
                   alpha: cutlass.Float32, beta: cutlass.Float32, tiled_mma: cute.TiledMma,
                   sA_layout: cute.ComposedLayout, sB_layout: cute.ComposedLayout,
                   sC_layout: cute.ComposedLayout, clusters_m: cutlass.Int32, clusters_n: cutlass.Int32,
                   tl: cute.Tensor = None):
            bM, bN, bK = self.tile_mnk
            cm, cn = self.cfg.cluster_mn
            tidx, _, _ = cute.arch.thread_idx()
            warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
            wg = cute.arch.make_warp_uniform(tidx // THREADS_PER_WARPGROUP)
            if warp == 0:
                cpasync.prefetch_descriptor(tma_a)
                cpasync.prefetch_descriptor(tma_b)
                cpasync.prefetch_descriptor(tma_c)

            # --- cluster geometry and multicast masks -------------------------------------------------
            cluster_layout = cute.make_layout((cm, cn, 1))
            rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
            cluster_crd = cluster_layout.get_flat_coord(rank)
            # Static persistent schedule: persistent cluster z takes cluster tiles z, z + Z, z + 2Z, ...
            _, _, first_cluster_tile = cute.arch.block_idx()
            _, _, persistent_clusters = cute.arch.grid_dim()
            num_cluster_tiles = clusters_m * clusters_n
            # A is needed by every CTA of this cluster row (same m), B by every CTA of this column.
            a_mask = cute.make_layout_image_mask(cluster_layout, cluster_crd, mode=1) if self.mcast_a > 1 else 0
            b_mask = cute.make_layout_image_mask(cluster_layout, cluster_crd, mode=0) if self.mcast_b > 1 else 0

            # --- shared memory ring: `stages` x (A tile, B tile), full/empty mbarrier per stage -------
            storage = cutlass.memory.SmemAllocator().allocate(self.shared_storage)
            stage_bytes = (cute.size_in_bytes(self.ab_dtype, cute.slice_(sA_layout, (None, None, 0)))
                           + cute.size_in_bytes(self.ab_dtype, cute.slice_(sB_layout, (None, None, 0))))
            ab_pipe = pipeline.PipelineTmaAsync.create(
                barrier_storage=storage.barriers.data_ptr(), num_stages=self.ab_stages,
                producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
                # a stage is free once every consumer warp of every CTA that multicast into it is done
                consumer_group=pipeline.CooperativeGroup(
                    pipeline.Agent.Thread, (self.mcast_a + self.mcast_b - 1) * self.mma_threads // 32),
                tx_count=stage_bytes, cta_layout_vmnk=cute.make_layout((1, cm, cn, 1)), defer_sync=True)
            pipeline.pipeline_init_arrive(cluster_shape_mn=(cm, cn), is_relaxed=True)
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
            # With multicast each CTA loads 1/mcast of the tile and the TMA writes it to all of them.
            tAsA, tAgA = cpasync.tma_partition(tma_a, cluster_crd[1], cute.make_layout(cn),
                                               cute.group_modes(sA, 0, 2), cute.group_modes(gA, 0, 2))
            tBsB, tBgB = cpasync.tma_partition(tma_b, cluster_crd[0], cute.make_layout(cm),
                                               cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2))

            tlc, rec_p, rec_c = None, None, None
            if cutlass.const_expr(self.cfg.timeline):
                # Recorders: lane 0 of warp 0 (the producer's TMA warp, role 0) and lane 0 of each consumer
                # warpgroup's first warp (role wg); each (CTA, role, tile) owns its slots.
                tlc, rec_p, rec_c = self._timeline_recorders(tl, k_tiles, tidx, warp, wg)

            pipeline.pipeline_init_wait(cluster_shape_mn=(cm, cn))

            if wg == 0:
                # ================================ producer warpgroup ================================
                cute.arch.setmaxregister_decrease(PRODUCER_REGS)
                if warp == 0:
                    produce = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.ab_stages)
                    cluster_tile, done = first_cluster_tile, cutlass.Int32(0)
                    while cluster_tile < num_cluster_tiles:
                        tm, tn = self._tile_of(cluster_tile, clusters_m, clusters_n, cluster_crd)
                        if cutlass.const_expr(self.cfg.timeline):
                            self._stamp(tlc, rec_p, 0, done, timeline_slots(k_tiles) - 1,
                                        EV_TILE_START, 0, 0, tm, tn)
                        for k in cutlass.range(k_tiles, unroll=1):
                            if cutlass.const_expr(self.cfg.timeline):
                                self._stamp(tlc, rec_p, 0, done, 4 * k, EV_EMPTY_WAIT, k,
                                            produce.index, tm, tn)
                            ab_pipe.producer_acquire(produce)   # stage empty in every CTA it feeds
                            if cutlass.const_expr(self.cfg.timeline):
                                self._stamp(tlc, rec_p, 0, done, 4 * k + 1, EV_LOAD_ISSUE,
                                            k, produce.index, tm, tn)
                            bar = ab_pipe.producer_get_barrier(produce)
                            kk = k
                            if cutlass.const_expr(self.cfg.serpentine_k):
                                # odd tiles walk K backwards: they start on the k-tiles the whole
                                # grid loaded last, which are still in L2 (the consumers need no
                                # change: a sum over k-tiles is a sum in any order)
                                kk = k + (done % 2) * (k_tiles - 1 - 2 * k)
                            cute.copy(tma_a, tAgA[None, tm, kk], tAsA[None, produce.index],
                                      tma_bar_ptr=bar, mcast_mask=a_mask)
                            cute.copy(tma_b, tBgB[None, tn, kk], tBsB[None, produce.index],
                                      tma_bar_ptr=bar, mcast_mask=b_mask)
                            produce.advance()
                        cluster_tile += persistent_clusters
                        done += 1
                    # Do not exit while a peer CTA may still signal our barriers / receive our multicast.
                    ab_pipe.producer_tail(produce)
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

                cluster_tile, done = first_cluster_tile, cutlass.Int32(0)
                while cluster_tile < num_cluster_tiles:
                    tm, tn = self._tile_of(cluster_tile, clusters_m, clusters_n, cluster_crd)
                    if cutlass.const_expr(self.cfg.timeline):
                        self._stamp(tlc, rec_c, wg, done, timeline_slots(k_tiles) - 1,
                                    EV_TILE_START, 0, 0, tm, tn)
                    acc.fill(0.0)
                    tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
                    for k in cutlass.range(k_tiles, unroll=1):
                        if cutlass.const_expr(self.cfg.timeline):
                            self._stamp(tlc, rec_c, wg, done, 4 * k, EV_FULL_WAIT, k,
                                        consume.index, tm, tn)
                        ab_pipe.consumer_wait(consume)
                        if cutlass.const_expr(self.cfg.timeline):
                            self._stamp(tlc, rec_c, wg, done, 4 * k + 1, EV_LOAD_ARRIVE, k,
                                        consume.index, tm, tn)
                        if cutlass.const_expr(self.cfg.timeline):
                            self._stamp(tlc, rec_c, wg, done, 4 * k + 2, EV_MMA_START, k,
                                        consume.index, tm, tn)
                        warpgroup.fence()
                        for kb in cutlass.range_constexpr(k_blocks):
                            cute.gemm(tiled_mma, acc, tCrA[None, None, kb, consume.index],
                                      tCrB[None, None, kb, consume.index], acc)
                        warpgroup.commit_group()
                        # One batch stays in flight; the one before it retired, so free its stage.
                        warpgroup.wait_group(1)
                        if k > 0:
                            if cutlass.const_expr(self.cfg.timeline):     # k-tile k-1 has retired
                                self._stamp(tlc, rec_c, wg, done, 4 * k - 1, EV_MMA_END,
                                            k - 1, release.index, tm, tn)
                            ab_pipe.consumer_release(release)
                            release.advance()
                        consume.advance()
                    warpgroup.wait_group(0)
                    if cutlass.const_expr(self.cfg.timeline):
                        self._stamp(tlc, rec_c, wg, done, 4 * k_tiles - 1, EV_MMA_END,
                                    k_tiles - 1, release.index, tm, tn)
                    ab_pipe.consumer_release(release)       # the tile's last stage
                    release.advance()

                    if cutlass.const_expr(self.cfg.timeline):
                        self._stamp(tlc, rec_c, wg, done, 4 * k_tiles, EV_EPI_START, 0, 0,
                                    tm, tn)
                    self._epilogue(mma_tidx, warp, acc, alpha, beta,
                                   thr_c.partition_C(gC[None, None, tm, tn]),
                                   thr_c.partition_C(cC[None, None, tm, tn]), mC.shape, tiled_mma, sC,
                                   gC_tma[None, None, tm, tn], tma_c, store_pipe, self.mma_threads)
                    if cutlass.const_expr(self.cfg.timeline):
                        self._stamp(tlc, rec_c, wg, done, 4 * k_tiles + 1, EV_EPI_END, 0, 0,
                                    tm, tn)
                    cluster_tile += persistent_clusters
                    done += 1
                if warp == self.store_warp:
                    store_pipe.producer_tail()

    return HopperGemmWs


def compile_hopper_gemm_ws(dtype_name="bfloat16", a_major="K", b_major="K", c_major="N", *,
                           config=HopperWsConfig(), with_beta=False, operands=None):
    """Compile (and cache) the warp-specialized kernel; see
    :func:`~layoutlab.kernels.hopper.compile_hopper_gemm`.

    >>> f = compile_hopper_gemm_ws("bfloat16", "K", "K", "N")
    >>> f is compile_hopper_gemm_ws()
    True
    >>> [("HopperGemmWs_object" in name, "bf16" in name) for name in f.kernel_info]
    [(True, True)]
    """
    return compile_hopper_gemm(dtype_name, a_major, b_major, c_major, config=config, with_beta=with_beta,
                               kernel_factory=make_hopper_ws_class, operands=operands)


def gemm_hopper_ws(A, B, C=None, *, alpha=1.0, beta=0.0, config=None, timeline=None):
    """``C = alpha * A @ B + beta * C``, persistent and warp-specialized (TN, NT, NN and TT).

    Same operands and refusals as :func:`~layoutlab.kernels.hopper.gemm_hopper`. ``config``
    defaults to 128x256x64 tiles, 2-CTA clusters with B multicast, grouped rasterization of 8 and one
    CTA per SM of the current device. Example::

        a = cupy.random.randn(8192, 8192).astype(cupy.float16)
        c = gemm_hopper_ws(a, a.T)                # TN
    """
    C, launch = prepare_gemm_hopper_ws(A, B, C, alpha=alpha, beta=beta, config=config, timeline=timeline)
    launch()
    return C


def prepare_gemm_hopper_ws(A, B, C=None, *, alpha=1.0, beta=0.0, config=None, timeline=None):
    """``(C, launch)`` as :func:`~layoutlab.kernels.hopper.prepare_gemm_hopper` (for timing);
    ``timeline`` as there (with ``config.timeline=True``)."""
    refuse_host_operands("gemm_hopper_ws", A, B, C)     # before persistent_sms asks CUDA about A's device
    if config is None:
        config = HopperWsConfig(num_sms=persistent_sms(A, HopperWsConfig.cluster_mn))
    check_timeline_buffer("gemm_hopper_ws", config, timeline, _operand(A, "A").shape[1])
    return plan_gemm("gemm_hopper_ws",
                     lambda dt, am, bm, cm, wb, ops: compile_hopper_gemm_ws(
                         dt, am, bm, cm, config=config, with_beta=wb, operands=ops),
                     A, B, C, alpha, beta, timeline)


_SM_COUNT, _PERSISTENT = {}, {}


def persistent_sms(A, cluster_mn):
    """SMs a persistent grid of ``cluster_mn`` clusters can fill at once on the GPU holding A: the
    driver's count of co-resident clusters (cudaOccupancyMaxActiveClusters) times the cluster size. On
    the H100 SXM: 132 for 2 x 1 clusters (66 of them). A persistent cluster that cannot be resident with
    the others would start only when one finishes, doubling the time of its tiles."""
    size = cluster_mn[0] * cluster_mn[1]
    key = (device_index(A), size)
    if key not in _PERSISTENT:
        from cutlass.utils import HardwareInfo
        clusters = HardwareInfo(key[0] or 0).get_max_active_clusters(size)
        _PERSISTENT[key] = min(clusters * size, _sm_count(A))
    return _PERSISTENT[key]


def _sm_count(A):
    """Multiprocessors of the GPU holding A (cached per device)."""
    device = device_index(A)
    if device not in _SM_COUNT:
        import cupy
        with cupy.cuda.Device(device or 0):
            _SM_COUNT[device] = cupy.cuda.Device().attributes["MultiProcessorCount"]
    return _SM_COUNT[device]
