"""``gemm_hopper_pingpong``: the warp-specialized persistent GEMM with *ping-pong* consumers.

One idea on top of :mod:`layoutlab.kernels.hopper_ws` (same contract, same refusals, same producer): the two
consumer warpgroups no longer split one 128 x 256 tile, each computes a **whole tile of its own** (64 x 256:
the same 128 fp32 accumulators per thread). The CTA's tiles alternate between them (tile 0, 2, 4, ... to
consumer 0; 1, 3, 5, ... to consumer 1) and the producer loads them into one ring in that order, so a
consumer skips the ring stages of its partner's tiles.

* **Ordering barrier.** Only one warpgroup issues MMAs at a time: before the MMAs of tile *j* a consumer
  waits on a named barrier that its partner arrives at once it has *issued* the last MMAs of tile *j-1*
  (``bar.sync`` by one warpgroup + ``bar.arrive`` by the other: 256 threads). So while one warpgroup runs
  its epilogue (scale, convert, ``stmatrix``, TMA store) the other keeps the tensor cores busy: the
  epilogue that the cooperative kernel leaves exposed is hidden behind the partner's main loop.
* **Own epilogue resources.** Each consumer has its own C staging buffers, its own epilogue named barrier
  and its own TMA-store warp, so the two epilogues never wait for each other.

The price: a 64 x 256 tile feeds half the MMAs of a 128 x 256 one from nearly as many loaded bytes. With the
cooperative kernel's 2 x 1 cluster that is +50 % L2 -> SM bytes per flop, and on the H100 the kernel became
L2-bound (ncu, bf16 8192^3: L2 throughput 89 % vs 68 %, 2.71 M cycles vs 2.18 M). So the default cluster is
4 x 1: B is multicast to 4 CTAs, which brings the bytes per flop back to the cooperative kernel's, but only
30 clusters of 4 fit on the H100 at once (120 of 132 SMs busy): the measured rung stays behind
``gemm_hopper_ws`` (``results/gemm_ladder_h100/README.md``).

``HopperPingpongConfig(timeline=True)`` records the pipeline as :mod:`layoutlab.kernels.hopper_ws` does
(producer, then each consumer warpgroup, its first tiles).
"""

from dataclasses import dataclass

from ..errors import LayoutError
from ._common import grouped_tile_coord

from .hopper import (EV_EMPTY_WAIT, EV_EPI_END, EV_EPI_START, EV_FULL_WAIT, EV_LOAD_ARRIVE,
                          EV_LOAD_ISSUE, EV_MMA_END, EV_MMA_START, EV_TILE_START, THREADS_PER_WARPGROUP,
                          TIMELINE_CTAS, TIMELINE_TILES, HopperGemmConfig, check_timeline_buffer,
                          hopper_operands,
                          compile_hopper_gemm, make_hopper_gemm_class, plan_gemm, timeline_slots, _dsl,
                          _operand)
from .hopper_ws import HopperWsConfig, persistent_sms

__all__ = ["gemm_hopper_pingpong", "prepare_gemm_hopper_pingpong", "HopperPingpongConfig",
           "compile_hopper_gemm_pingpong", "PingpongTile", "pingpong_schedule"]

#: registers per thread after ``setmaxnreg``: producer warpgroup, then each consumer warpgroup.
PRODUCER_REGS, CONSUMER_REGS = 40, 232
#: named barriers (0 is ``__syncthreads``): each consumer's epilogue (1, 2), then the MMA order (3, 4).
EPI_BARRIER, ORDER_BARRIER = 1, 3


@dataclass(frozen=True)
class HopperPingpongConfig(HopperWsConfig):
    """:class:`~layoutlab.kernels.hopper_ws.HopperWsConfig` where ``tile_m x tile_n`` is the tile of *one*
    consumer warpgroup (64 x 256 by default: wgmma's 64 rows). ``epi_stages``: C staging buffers of
    64 x 32 per consumer (each 4 KiB at 16 bits); 2 leave room for 5 A/B stages of 40 KiB. ``cluster_mn``:
    4 x 1 by default (B multicast to 4 CTAs: the L2 -> SM bytes per flop of the cooperative 128 x 256 tile).

    >>> cfg = HopperPingpongConfig()
    >>> cfg.tile_m, cfg.tile_n, cfg.cluster_mn, cfg.consumer_warpgroups, cfg.epi_stages, cfg.ab_stage_bytes() // 1024
    (64, 256, (4, 1), 2, 2, 40)
    >>> HopperPingpongConfig(tile_m=128)
    Traceback (most recent call last):
    ...
    layoutlab.errors.LayoutError: HopperPingpongConfig: tile_m=128; a ping-pong consumer is one warpgroup and holds one 64-row wgmma accumulator: use tile_m=64
    """

    tile_m: int = 64
    cluster_mn: tuple = (4, 1)
    epi_stages: int = 2

    def __post_init__(self):
        super().__post_init__()
        if self.tile_m != 64:
            raise LayoutError(f"HopperPingpongConfig: tile_m={self.tile_m}; a ping-pong consumer is one "
                              f"warpgroup and holds one 64-row wgmma accumulator: use tile_m=64")

    @property
    def consumer_warpgroups(self):
        """Two consumer warpgroups, each computing whole tiles (the base class counts 64-row slabs)."""
        return 2


@dataclass(frozen=True)
class PingpongTile:
    """What the consumer warpgroup that owns the CTA's ``tile``-th tile does for it, in program order (see
    :func:`pingpong_schedule`): ``bar.sync order_sync`` (``None``: nothing to wait for), released by that
    barrier's completion number ``order_phase`` (0 = its first); then per k-step the wait on the full mbarrier
    of ring ``stage`` for ``parity``, whose stage holds k-tile ``k_tile``; then ``bar.arrive order_arrive``
    (``None``: the CTA has no next tile); then the epilogue on its own named barrier ``epi_barrier``.

    >>> pingpong_schedule(2, 1, 4)[1]          # the second of two tiles: consumer 1, released by barrier 4
    PingpongTile(tile=1, warpgroup=2, order_sync=4, order_phase=0, slots=((1, 0, 0),), order_arrive=None, epi_barrier=2)
    """

    tile: int
    warpgroup: int
    order_sync: object
    order_phase: object
    slots: tuple
    order_arrive: object
    epi_barrier: int


def pingpong_schedule(tiles, k_tiles, stages, serpentine_k=True):
    """The consumers' side of :func:`gemm_hopper_pingpong` for one CTA that holds ``tiles`` tiles of
    ``k_tiles`` k-tiles each, with an A/B ring of ``stages`` stages: one :class:`PingpongTile` per tile,
    computed as the kernel does it (the CTA's tile ``j`` goes to consumer ``j % 2``, warpgroup ``1 + j % 2``).

    * Ordering: named barriers ``ORDER_BARRIER + c`` (3 and 4), 256 threads each: consumer ``c`` syncs on its
      own before every tile but the CTA's first, its partner arrives there once it has *issued* the previous
      tile's MMAs (and only if there is a next tile: the syncs and arrives on each barrier pair up).
      PTX ISA §9.7.13.1: a barrier completes when the count of threads has arrived and is reinitialized at
      once, so the ``n``-th completion of a barrier releases its ``n``-th ``bar.sync``.
    * Ring: the producer fills ring positions in tile order, ``k_tiles`` per tile, and a consumer skips its
      partner's positions, so tile ``j``'s k-step ``k`` is position ``p = j * k_tiles + k``: stage
      ``p % stages``, full-barrier parity ``(p // stages) % 2``; with ``serpentine_k`` odd tiles load their
      k-tiles last to first.
    * Epilogue: on the warpgroup's own named barrier ``EPI_BARRIER - 1 + warpgroup`` (1 or 2, 128 threads):
      it waits for nothing of the partner's.

    >>> for t in pingpong_schedule(4, 3, 5):
    ...     print(t.tile, t.warpgroup, t.order_sync, t.order_phase, t.slots, t.order_arrive, t.epi_barrier)
    0 1 None None ((0, 0, 0), (1, 0, 1), (2, 0, 2)) 4 1
    1 2 4 0 ((3, 0, 2), (4, 0, 1), (0, 1, 0)) 3 2
    2 1 3 0 ((1, 1, 0), (2, 1, 1), (3, 1, 2)) 4 1
    3 2 4 1 ((4, 1, 2), (0, 0, 1), (1, 0, 0)) None 2
    >>> pingpong_schedule(4, 0, 5)
    Traceback (most recent call last):
    ...
    layoutlab.errors.LayoutError: pingpong_schedule: k_tiles=0; tiles, k_tiles and stages are positive integers
    """
    for name, v in (("tiles", tiles), ("k_tiles", k_tiles), ("stages", stages)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise LayoutError(f"pingpong_schedule: {name}={v!r}; tiles, k_tiles and stages are positive integers")
    out = []
    for j in range(tiles):
        me = j % 2                                   # consumer 0 or 1 (warpgroup 1 or 2)
        slots = []
        for k in range(k_tiles):
            p = j * k_tiles + k
            kk = k_tiles - 1 - k if serpentine_k and j % 2 else k
            slots.append((p % stages, (p // stages) % 2, kk))
        out.append(PingpongTile(
            tile=j, warpgroup=1 + me,
            order_sync=ORDER_BARRIER + me if j >= 1 else None,
            # barrier ORDER_BARRIER + me releases this consumer's tiles me + 2, me + 4, ... (me = 1: 1, 3, ...)
            order_phase=(j - 1) // 2 if j >= 1 else None,
            slots=tuple(slots),
            order_arrive=ORDER_BARRIER + 1 - me if j + 1 < tiles else None,
            epi_barrier=EPI_BARRIER - 1 + (1 + me)))
    return out


def make_hopper_pingpong_class():
    """Build the ping-pong kernel class (on top of the base kernel's setup and epilogue)."""
    cutlass, cute, pipeline, _, sm90 = _dsl()
    from cutlass.cute.nvgpu import cpasync, warpgroup
    Base = make_hopper_gemm_class()

    class HopperGemmPingpong(Base):
        """Persistent warp-specialized TMA + wgmma GEMM, one tile per consumer warpgroup."""

        timeline_ctas = TIMELINE_CTAS["gemm_hopper_pingpong"]      # CTAs that record (config.timeline)
        timeline_tiles = TIMELINE_TILES["gemm_hopper_pingpong"]    # the first tiles of each consumer

        def __init__(self, config: HopperPingpongConfig, with_beta: bool):
            super().__init__(config, with_beta)
            self.num_wg = 1                                   # the tiled MMA is one warpgroup's
            self.epi_stages = config.epi_stages
            self.mma_threads = THREADS_PER_WARPGROUP          # a tile's MMAs and epilogue: one warpgroup
            self.threads = 3 * THREADS_PER_WARPGROUP          # producer + 2 consumers
            cm, cn = config.cluster_mn
            # A tile row-block is shared by the CTAs of a cluster row (along N), B by a cluster column.
            self.mcast_a, self.mcast_b = cn, cm

        def _setup(self, a, b, c):
            super()._setup(a, b, c)
            # Unlike the base kernel, C gets its own staging buffers: the producer reuses the A/B ring
            # for the next tile while the consumers are still storing this one.
            # ... and each consumer has its own, so that the two epilogues never wait for each other.
            c_bytes = 2 * self.epi_tile[0] * self.epi_tile[1] * self.epi_stages * self.c_dtype.width // 8
            self.ab_stages = self.cfg.ab_stages(reserved_bytes=1024 + c_bytes)
            self.sA_layout = sm90.make_smem_layout_a(self.a_layout, self.tile_mnk, self.ab_dtype, self.ab_stages)
            self.sB_layout = sm90.make_smem_layout_b(self.b_layout, self.tile_mnk, self.ab_dtype, self.ab_stages)

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
                sC: cute.struct.Align[cute.struct.MemRange[self.c_dtype, 2 * cute.cosize(self.sC_layout)], 1024]

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
                # a stage is free once the consumer warps (one warpgroup: the tile's owner) of every CTA
                # that multicast into it are done
                consumer_group=pipeline.CooperativeGroup(
                    pipeline.Agent.Thread, (self.mcast_a + self.mcast_b - 1) * self.mma_threads // 32),
                tx_count=stage_bytes, cta_layout_vmnk=cute.make_layout((1, cm, cn, 1)), defer_sync=True)
            pipeline.pipeline_init_arrive(cluster_shape_mn=(cm, cn), is_relaxed=True)
            sA = storage.sA.get_tensor(sA_layout.outer, swizzle=sA_layout.inner)
            sB = storage.sB.get_tensor(sB_layout.outer, swizzle=sB_layout.inner)

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

            # Each consumer's epilogue has its own named barrier (the two epilogues run unsynchronised).
            self.epi_barrier = EPI_BARRIER - 1 + wg
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
                me = wg - 1                                # consumer 0 or 1
                mma_tidx = tidx % THREADS_PER_WARPGROUP    # the thread's index in its warpgroup
                thr_mma = tiled_mma.get_slice(0)           # smem operand views (the warpgroup's)
                thr_c = tiled_mma.get_slice(mma_tidx)      # this thread's accumulator coordinates
                tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))
                tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
                acc = cute.make_rmem_tensor(thr_mma.partition_C(gC[None, None, 0, 0]).shape, self.acc_dtype)
                k_blocks = cute.size(tCrA, mode=[2])
                # This consumer's C buffers (its epilogue barrier is set above, its store warp is its
                # first: _epilogue gets the warp's index within the warpgroup).
                c_elems = cute.cosize(sC_layout.outer)      # one consumer's buffers (a multiple of 1024 B)
                c_base = storage.sC.data_ptr() + cute.assume(me * c_elems, divby=c_elems)
                sC = cute.make_tensor(cute.recast_ptr(c_base, sC_layout.inner, dtype=self.c_dtype),
                                      sC_layout.outer)
                store_pipe = pipeline.PipelineTmaStore.create(
                    num_stages=self.epi_stages,
                    producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, self.mma_threads))
                consume = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.ab_stages)
                release = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.ab_stages)
                if me == 1:                  # the ring starts with consumer 0's tile: skip its stages
                    consume.advance(k_tiles)
                    release.advance(k_tiles)

                # The CTA's j-th tile is cluster tile first + j * Z, computed by consumer j % 2.
                cluster_tile, done = first_cluster_tile + me * persistent_clusters, cutlass.Int32(0)
                while cluster_tile < num_cluster_tiles:
                    tm, tn = self._tile_of(cluster_tile, clusters_m, clusters_n, cluster_crd)
                    if cutlass.const_expr(self.cfg.timeline):
                        self._stamp(tlc, rec_c, wg, done, timeline_slots(k_tiles) - 1,
                                    EV_TILE_START, 0, 0, tm, tn)
                    acc.fill(0.0)
                    tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
                    if cluster_tile >= persistent_clusters:
                        # Not the CTA's first tile: wait until the partner has issued the previous tile's
                        # MMAs (its bar.arrive + our bar.sync = 256 threads).
                        cute.arch.barrier(barrier_id=ORDER_BARRIER + me,
                                          number_of_threads=2 * THREADS_PER_WARPGROUP)
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
                    # All of this tile's MMAs are issued: the partner may start its tile (if there is one).
                    if cluster_tile + persistent_clusters < num_cluster_tiles:
                        cute.arch.barrier_arrive(barrier_id=ORDER_BARRIER + 1 - me,
                                                 number_of_threads=2 * THREADS_PER_WARPGROUP)
                    warpgroup.wait_group(0)
                    if cutlass.const_expr(self.cfg.timeline):
                        self._stamp(tlc, rec_c, wg, done, 4 * k_tiles - 1, EV_MMA_END,
                                    k_tiles - 1, release.index, tm, tn)
                    ab_pipe.consumer_release(release)       # the tile's last stage
                    release.advance()

                    if cutlass.const_expr(self.cfg.timeline):
                        self._stamp(tlc, rec_c, wg, done, 4 * k_tiles, EV_EPI_START, 0, 0,
                                    tm, tn)
                    self._epilogue(mma_tidx, warp % 4, acc, alpha, beta,
                                   thr_c.partition_C(gC[None, None, tm, tn]),
                                   thr_c.partition_C(cC[None, None, tm, tn]), mC.shape, tiled_mma, sC,
                                   gC_tma[None, None, tm, tn], tma_c, store_pipe, self.mma_threads)
                    if cutlass.const_expr(self.cfg.timeline):
                        self._stamp(tlc, rec_c, wg, done, 4 * k_tiles + 1, EV_EPI_END, 0, 0,
                                    tm, tn)
                    # The partner's tile comes next in the ring: skip its stages.
                    consume.advance(k_tiles)
                    release.advance(k_tiles)
                    cluster_tile += 2 * persistent_clusters
                    done += 1
                if warp % 4 == self.store_warp:
                    store_pipe.producer_tail()

    return HopperGemmPingpong


def compile_hopper_gemm_pingpong(dtype_name="bfloat16", a_major="K", b_major="K", c_major="N", *,
                                 config=HopperPingpongConfig(), with_beta=False, operands=None):
    """Compile (and cache) the ping-pong kernel; see
    :func:`~layoutlab.kernels.hopper.compile_hopper_gemm`.

    >>> f = compile_hopper_gemm_pingpong("bfloat16", "K", "K", "N")
    >>> f is compile_hopper_gemm_pingpong()
    True
    >>> [("HopperGemmPingpong_object" in name, "bf16" in name) for name in f.kernel_info]
    [(True, True)]
    """
    return compile_hopper_gemm(dtype_name, a_major, b_major, c_major, config=config, with_beta=with_beta,
                               kernel_factory=make_hopper_pingpong_class, operands=operands)


def gemm_hopper_pingpong(A, B, C=None, *, alpha=1.0, beta=0.0, config=None, timeline=None):
    """``C = alpha * A @ B + beta * C`` with ping-pong consumers (TN, NT, NN and TT).

    Same operands and refusals as :func:`~layoutlab.kernels.hopper.gemm_hopper`. ``config`` defaults to
    64x256x64 tiles per consumer warpgroup, 4-CTA clusters with B multicast, grouped rasterization of 8
    and as many CTAs as clusters of 4 fit on the current device at once. Example::

        a = cupy.random.randn(8192, 8192).astype(cupy.float16)
        c = gemm_hopper_pingpong(a, a.T)          # TN
    """
    C, launch = prepare_gemm_hopper_pingpong(A, B, C, alpha=alpha, beta=beta, config=config,
                                             timeline=timeline)
    launch()
    return C


def prepare_gemm_hopper_pingpong(A, B, C=None, *, alpha=1.0, beta=0.0, config=None, timeline=None):
    """``(C, launch)`` as :func:`~layoutlab.kernels.hopper.prepare_gemm_hopper` (for timing);
    ``timeline`` as there (with ``config.timeline=True``)."""
    # every operand refusal (host arrays, dtypes, TMA alignment) before persistent_sms asks CUDA about A
    hopper_operands(A, B, C, beta=beta, name="gemm_hopper_pingpong")
    if config is None:
        config = HopperPingpongConfig(num_sms=persistent_sms(A, HopperPingpongConfig.cluster_mn))
    check_timeline_buffer("gemm_hopper_pingpong", config, timeline, _operand(A, "A").shape[1])
    return plan_gemm("gemm_hopper_pingpong",
                     lambda dt, am, bm, cm, wb, ops: compile_hopper_gemm_pingpong(
                         dt, am, bm, cm, config=config, with_beta=wb, operands=ops),
                     A, B, C, alpha, beta, timeline)
