"""``gemm_hopper_streamk``: the persistent warp-specialized GEMM without its partial last wave (stream-K).

One idea on top of :mod:`layoutlab.kernels.hopper_ws` (same contract, refusals, producer, consumers and
epilogue). It builds on the cooperative rung, not on :mod:`~layoutlab.kernels.hopper_pingpong`: on the H100 the
cooperative kernel was the faster (99-102 % of cuBLAS against 87-94 %, ``results/gemm_ladder_h100/README.md``),
and its 2 x 1 clusters keep all 132 SMs busy, which is what a fix of the last wave needs.

With 128 x 256 tiles, 8192^3 has 2048 tiles: 15.5 waves of 132 CTAs, so during the last wave half of the SMs
idle (3 % of the run). The schedule (:func:`~layoutlab.kernels.schedule.stream_k_schedule`) keeps the 15 whole
waves as they are and splits the K loop of the 68 tail tiles over all CTAs: each does 65 or 66 of their
8704 k-tiles, at most two pieces of two consecutive tail tiles. The unit of the schedule is the *cluster* tile
(2 x 1 CTA tiles, the two CTAs share B by multicast, so they walk the same k-range) and the workers are the 66
persistent clusters; the kernel evaluates :func:`~layoutlab.kernels.schedule.stream_k_unit` itself, with the
DSL's integer operations.

Measured (H200, bf16, same run as ``gemm_hopper_ws``, ``results/gemm_ladder_h100/streamk_README.md``): ahead of
ws where the last wave is about half empty (8192^3 and 8000^3: 34 of 66 clusters busy in it), behind where it is
nearly full (6144^3: 48 of 66, 4096^3: 58 of 66), where the split saves a small fraction of a tile-time and the
fixup costs more than that.

* **Split only where it pays.** The split saves the empty part of the last wave on the busiest cluster and costs
  a fixup; :func:`~layoutlab.kernels.schedule.stream_k_pays` weighs the two (in k-tile times, the price measured)
  on the host before every launch, and :func:`kernel_params` hands the kernel either the split schedule or the
  plain one (every tile whole, the last wave partial: the ws rung's schedule). At 8192^3 it splits (62 k-tiles
  saved against a price of 48), at 6144^3 and 4096^3 it does not (26 against 38, 7 against 28).
* **Fixup without waiting.** A CTA that computed only part of a tile's K stores its fp32 accumulators in its
  own workspace slot, makes them visible (``fence.acq_rel.gpu``, a barrier, then one thread's ``atom.add`` of
  its k-tile count to the tile's counter: the release pattern of the PTX ISA's memory consistency model). The
  CTA whose count completes ``k_iters`` is the last: after the acquire fence it loads the other pieces (their
  owners are :func:`~layoutlab.kernels.schedule.stream_k_owner` of the tile's first to last k-tile), adds them
  to its own, resets the counter and runs the normal epilogue. No CTA waits for another, so no schedule or
  residency can deadlock it; which CTA writes a tail tile is decided at run time. (A first version added the
  pieces with ``red.global.add.f32`` and took the sum with ``atom.exch``, 32768 atomics per piece and as many
  again per sum; ``results/gemm_ladder_h100/streamk_README.md`` compares the two on the H200.)
* **Workspace.** Allocated once per device and stream by the launcher: fp32, two 128 x 256 slots per CTA (a
  cluster's stream-K range touches at most two tiles), and int32 counters, zero at allocation and left zero by
  every launch. Two launches on different streams get different workspaces, so they cannot mix their pieces.
"""

from dataclasses import dataclass

from ..errors import LayoutError
from ._common import current_stream, device_index, new_array
from .hopper import (THREADS_PER_WARPGROUP, TMA_ALIGN_BYTES, _dsl, _class_of,
                     fake_operands, hopper_operands, plan_gemm)
from .hopper_ws import HopperWsConfig, make_hopper_ws_class, persistent_sms, PRODUCER_REGS, CONSUMER_REGS
from .schedule import stream_k_owner, stream_k_pays, stream_k_schedule, stream_k_split, stream_k_unit

__all__ = ["gemm_hopper_streamk", "prepare_gemm_hopper_streamk", "HopperStreamKConfig",
           "compile_hopper_gemm_streamk", "kernel_schedule", "kernel_params"]

#: The schedule's arithmetic runs in 32-bit device integers: cta * sk_iters < 2^31 (about K < 7.8 M at 132 CTAs).
_INT32_MAX = 2 ** 31 - 1


@dataclass(frozen=True)
class HopperStreamKConfig(HopperWsConfig):
    """:class:`~layoutlab.kernels.hopper_ws.HopperWsConfig` (128 x 256 x 64 tiles, 2 x 1 clusters, grouped order).
    No pipeline timeline (the stamps of the ws rung are not carried over).

    >>> HopperStreamKConfig().cluster_mn
    (2, 1)
    >>> HopperStreamKConfig(timeline=True)
    Traceback (most recent call last):
    ...
    layoutlab.errors.LayoutError: HopperStreamKConfig: timeline=True; the stream-K rung records no pipeline timeline (gemm_hopper_ws does)
    """

    def __post_init__(self):
        super().__post_init__()
        if self.timeline:
            raise LayoutError("HopperStreamKConfig: timeline=True; the stream-K rung records no pipeline timeline "
                              "(gemm_hopper_ws does)")


def kernel_schedule(M, N, K, config=HopperStreamKConfig()):
    """The :func:`~layoutlab.kernels.schedule.stream_k_schedule` the kernel runs for an ``M x N x K`` problem: in
    cluster tiles (``cluster_mn`` CTA tiles) over ``num_sms / cluster size`` persistent clusters.

    >>> s = kernel_schedule(8192, 8192, 8192)
    >>> s.tile_mnk, s.num_ctas, s.tiles, s.full_waves, s.tail_tiles
    ((256, 256, 64), 66, 1024, 15, 34)
    """
    if not isinstance(config, HopperWsConfig):
        raise LayoutError(f"kernel_schedule: config must be a HopperStreamKConfig, got {type(config).__name__}")
    cm, cn = config.cluster_mn
    return stream_k_schedule(M, N, K, (config.tile_m * cm, config.tile_n * cn, config.tile_k),
                             config.num_sms // (cm * cn))


def kernel_params(M, N, K, config=HopperStreamKConfig(), split=None):
    """``(split, (full_waves, dp_tiles, sk_iters))``: whether the launch splits its last wave and the three integers
    the kernel's :func:`~layoutlab.kernels.schedule.stream_k_unit` reads. ``split=None`` asks
    :func:`~layoutlab.kernels.schedule.stream_k_pays` (in cluster tiles over the persistent clusters); True or False
    forces it (to measure the split's price). Without the split every tile is whole and the last wave partial, as in
    :mod:`~layoutlab.kernels.hopper_ws`.

    >>> kernel_params(8192, 8192, 8192)
    (True, (15, 990, 4352))
    >>> kernel_params(4096, 4096, 4096)                 # 3.9 waves: the split would cost more than it saves
    (False, (4, 256, 0))
    """
    if not isinstance(config, HopperStreamKConfig) or split not in (None, True, False):
        raise LayoutError(f"kernel_params: config={config!r}, split={split!r}; give a HopperStreamKConfig and split "
                          f"None (the rule decides), True or False")
    s = kernel_schedule(M, N, K, config)
    if split is None:
        split = stream_k_pays(M, N, K, s.tile_mnk, s.num_ctas).split
    if split:
        return True, stream_k_split(s.tiles, s.num_ctas, s.k_iters)
    return False, (-(-s.tiles // s.num_ctas), s.tiles, 0)


def make_hopper_streamk_class():
    """Build the stream-K kernel class (the ws kernel's setup, tile order and epilogue; a new tile loop)."""
    cutlass, cute, pipeline, _, sm90 = _dsl()
    from cutlass.cute.nvgpu import cpasync, warpgroup
    Ws = make_hopper_ws_class()

    class HopperGemmStreamK(Ws):
        """Persistent warp-specialized GEMM; the tail tiles split along K over all clusters (stream-K)."""

        def _unit(self, u, sched):
            """Unit ``u`` of this cluster, ``(tile, k_begin, k_end)``: the schedule's own arithmetic on device
            integers (``sched``: cluster, clusters, full_waves, dp_tiles, sk_iters, k_tiles)."""
            return stream_k_unit(sched[0], u, *sched[1:], min_=cutlass.min, max_=cutlass.max,
                                 select=lambda c, a, b: cutlass.Int32(
                                     cutlass.select_(c, cutlass.Int32(a), cutlass.Int32(b))))

        @cute.jit
        def __call__(self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, alpha: cutlass.Float32,
                     beta: cutlass.Float32, stream, workspace: cute.Tensor, counters: cute.Tensor,
                     full_waves: cutlass.Int32, dp_tiles: cutlass.Int32, sk_iters: cutlass.Int32):
            """``full_waves, dp_tiles, sk_iters``: the schedule, from the host (:func:`kernel_params`), which
            decides whether the tail is split at all (:func:`~layoutlab.kernels.schedule.stream_k_pays`)."""
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
                last: cute.struct.MemRange[cutlass.Int32, 4]       # "this CTA finishes the tile" broadcast
                sA: cute.struct.Align[cute.struct.MemRange[self.ab_dtype, cute.cosize(self.sA_layout)], 1024]
                sB: cute.struct.Align[cute.struct.MemRange[self.ab_dtype, cute.cosize(self.sB_layout)], 1024]
                sC: cute.struct.Align[cute.struct.MemRange[self.c_dtype, cute.cosize(self.sC_layout)], 1024]

            self.shared_storage = SharedStorage
            self.kernel(tma_a, gA_tma, tma_b, gB_tma, tma_c, gC_tma, c, alpha, beta, self.tiled_mma,
                        self.sA_layout, self.sB_layout, self.sC_layout, clusters_m, clusters_n,
                        full_waves, dp_tiles, sk_iters, workspace, counters).launch(
                grid=grid, block=[self.threads, 1, 1], cluster=(cm, cn, 1), min_blocks_per_mp=1,
                stream=stream)

        @cute.kernel
        def kernel(self, tma_a: cute.CopyAtom, mA: cute.Tensor, tma_b: cute.CopyAtom, mB: cute.Tensor,
                   tma_c: cute.CopyAtom, mC_tma: cute.Tensor, mC: cute.Tensor,
                   alpha: cutlass.Float32, beta: cutlass.Float32, tiled_mma: cute.TiledMma,
                   sA_layout: cute.ComposedLayout, sB_layout: cute.ComposedLayout,
                   sC_layout: cute.ComposedLayout, clusters_m: cutlass.Int32, clusters_n: cutlass.Int32,
                   full_waves: cutlass.Int32, dp_tiles: cutlass.Int32, sk_iters: cutlass.Int32,
                   workspace: cute.Tensor, counters: cute.Tensor):
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
            _, _, cta = cute.arch.block_idx()
            _, _, persistent_clusters = cute.arch.grid_dim()
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
            s_last = storage.last.get_tensor(cute.make_layout(4))

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

            # Persistent cluster z runs units self._unit(0), self._unit(1), ... of the stream-K schedule.
            sched = (cta, persistent_clusters, full_waves, dp_tiles, sk_iters, k_tiles)
            pipeline.pipeline_init_wait(cluster_shape_mn=(cm, cn))

            if wg == 0:
                # ================================ producer warpgroup ================================
                cute.arch.setmaxregister_decrease(PRODUCER_REGS)
                if warp == 0:
                    produce = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.ab_stages)
                    u = cutlass.Int32(0)
                    tile, kb, ke = self._unit(u, sched)
                    while kb < ke:
                        tm, tn = self._tile_of(tile, clusters_m, clusters_n, cluster_crd)
                        n = ke - kb
                        for k in cutlass.range(n, unroll=1):
                            ab_pipe.producer_acquire(produce)   # stage empty in every CTA it feeds
                            bar = ab_pipe.producer_get_barrier(produce)
                            kk = kb + k
                            if cutlass.const_expr(self.cfg.serpentine_k):
                                # odd units walk their k-range backwards: they start on the k-tiles
                                # the whole grid loaded last, which are still in L2
                                kk = kb + k + (u % 2) * (n - 1 - 2 * k)
                            cute.copy(tma_a, tAgA[None, tm, kk], tAsA[None, produce.index],
                                      tma_bar_ptr=bar, mcast_mask=a_mask)
                            cute.copy(tma_b, tBgB[None, tn, kk], tBsB[None, produce.index],
                                      tma_bar_ptr=bar, mcast_mask=b_mask)
                            produce.advance()
                        u += 1
                        tile, kb, ke = self._unit(u, sched)
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

                u = cutlass.Int32(0)
                tile, kb, ke = self._unit(u, sched)
                while kb < ke:
                    tm, tn = self._tile_of(tile, clusters_m, clusters_n, cluster_crd)
                    acc.fill(0.0)
                    tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
                    for k in cutlass.range(ke - kb, unroll=1):
                        ab_pipe.consumer_wait(consume)
                        warpgroup.fence()
                        for kblk in cutlass.range_constexpr(k_blocks):
                            cute.gemm(tiled_mma, acc, tCrA[None, None, kblk, consume.index],
                                      tCrB[None, None, kblk, consume.index], acc)
                        warpgroup.commit_group()
                        # One batch stays in flight; the one before it retired, so free its stage.
                        warpgroup.wait_group(1)
                        if k > 0:
                            ab_pipe.consumer_release(release)
                            release.advance()
                        consume.advance()
                    warpgroup.wait_group(0)
                    ab_pipe.consumer_release(release)       # the unit's last stage
                    release.advance()

                    # A whole tile goes straight to the epilogue; a piece of a tail tile goes through the
                    # workspace, and only the CTA that completes the tile's k-tiles writes it.
                    finish = cutlass.Int32(1)
                    if (kb > 0) | (ke < k_tiles):
                        finish = self._fixup(acc, workspace, counters, tile, u, sched, ke - kb, mma_tidx, rank,
                                             s_last)
                    if finish != 0:
                        self._epilogue(mma_tidx, warp, acc, alpha, beta,
                                       thr_c.partition_C(gC[None, None, tm, tn]),
                                       thr_c.partition_C(cC[None, None, tm, tn]), mC.shape, tiled_mma, sC,
                                       gC_tma[None, None, tm, tn], tma_c, store_pipe, self.mma_threads)
                    u += 1
                    tile, kb, ke = self._unit(u, sched)
                if warp == self.store_warp:
                    store_pipe.producer_tail()

        @cute.jit
        def _fixup(self, acc, workspace, counters, tile, u, sched, k_done, mma_tidx, rank, s_last):
            """Store this piece in the cluster's own workspace slot and count its k-tiles on the tile's counter;
            returns 1 in the CTA whose count completes the tile, with the other pieces added into ``acc``, else 0.
            A slot is (cluster, its 1st or 2nd stream-K unit, rank in the cluster); thread t's accumulator i
            sits at ``slot * size + i * threads + t``: coalesced, and the same (m, n) element in every CTA, since
            all use the same tiled MMA. Plain stores and loads: no slot is written twice in a launch."""
            cta, ctas, full_waves, dp_tiles, sk_iters, k_tiles = sched
            cs = self.cfg.cluster_mn[0] * self.cfg.cluster_mn[1]
            n_acc = cute.size(acc)
            size = n_acc * self.mma_threads
            j = tile - dp_tiles                                   # which tail tile
            mine = ((cta * 2 + (u - full_waves)) * cs + rank) * size + mma_tidx
            for i in cutlass.range_constexpr(n_acc):
                workspace[mine + i * self.mma_threads] = acc[i]
            # Release: every thread's stores are ordered before the one counter update (each thread fences,
            # then a barrier: the CUDA Programming Guide's __threadfence() pattern; PTX ISA, memory model).
            cute.arch.fence_acq_rel_gpu()
            cute.arch.barrier(barrier_id=self.epi_barrier, number_of_threads=self.mma_threads)
            if mma_tidx == 0:
                before = cute.arch.atomic_add((counters.iterator + (j * cs + rank)).llvm_ptr, cutlass.Int32(k_done),
                                              sem="acq_rel", scope="gpu")
                last = cutlass.Int32(0)
                if before + k_done == k_tiles:
                    last = cutlass.Int32(1)
                    counters[j * cs + rank] = cutlass.Int32(0)    # every piece has arrived: ready for next call
                s_last[0] = last
            cute.arch.barrier(barrier_id=self.epi_barrier, number_of_threads=self.mma_threads)
            finish = s_last[0]
            if finish != 0:
                cute.arch.fence_acq_rel_gpu()           # acquire: the other pieces' stores are visible
                # the tile's pieces belong to the clusters owning its first to its last tail k-tile
                first = stream_k_owner(j * k_tiles, ctas, sk_iters)
                for c in cutlass.range(first, stream_k_owner((j + 1) * k_tiles - 1, ctas, sk_iters) + 1,
                                       unroll=1):
                    begin = c * sk_iters // ctas
                    if (c != cta) & (begin < (c + 1) * sk_iters // ctas):
                        which = cutlass.Int32(0)
                        if begin // k_tiles != j:        # the piece is that cluster's 2nd unit
                            which = cutlass.Int32(1)
                        src = ((c * 2 + which) * cs + rank) * size + mma_tidx
                        for i in cutlass.range_constexpr(n_acc):
                            acc[i] = acc[i] + workspace[src + i * self.mma_threads]
            return finish

    return HopperGemmStreamK


# ---------------------------------------------------------------------------------------------------
# Compilation (cached), the workspace, and the public entry point
# ---------------------------------------------------------------------------------------------------

_CACHE, _WORKSPACES = {}, {}


def _fake_1d(dtype):
    cute = _dsl()[1]
    from cutlass.cute.runtime import make_fake_tensor
    return make_fake_tensor(dtype, (cute.sym_int32(symbol="W"),), (1,), assumed_align=TMA_ALIGN_BYTES)


def compile_hopper_gemm_streamk(dtype_name="bfloat16", a_major="K", b_major="K", c_major="N", *,
                                config=HopperStreamKConfig(), with_beta=False, operands=None):
    """Compile (and cache) the stream-K kernel, as :func:`~layoutlab.kernels.hopper.compile_hopper_gemm` does,
    with five more arguments after the stream: the fp32 workspace and the int32 counters (1-D), then the schedule's
    ``full_waves, dp_tiles, sk_iters`` (:func:`kernel_params`).

    >>> f = compile_hopper_gemm_streamk("bfloat16", "K", "K", "N")
    >>> f is compile_hopper_gemm_streamk()
    True
    >>> [("HopperGemmStreamK_object" in name, "bf16" in name) for name in f.kernel_info]
    [(True, True)]
    """
    key = (dtype_name, a_major, b_major, c_major, config, with_beta)
    if key not in _CACHE:
        cutlass, cute = _dsl()[:2]
        from cutlass.cute.runtime import make_fake_stream
        ops = tuple(operands) if operands else (*fake_operands(dtype_name, a_major, b_major, c_major),
                                                _fake_1d(cutlass.Float32), _fake_1d(cutlass.Int32))
        a, b, c, ws, cnt = ops
        _CACHE[key] = cute.compile(_class_of(make_hopper_streamk_class)(config, with_beta), a, b, c,
                                   cutlass.Float32(1.0), cutlass.Float32(0.0), make_fake_stream(), ws, cnt,
                                   cutlass.Int32(0), cutlass.Int32(0), cutlass.Int32(0))
    return _CACHE[key]


def _workspace(A, config):
    """The (fp32 workspace, int32 counters) of this device and stream: two tile slots per CTA (a cluster's
    stream-K range spans at most two tiles) and a counter per tail CTA tile (fewer than one wave of them);
    the counters are zero, and left zero by every launch."""
    slots = config.num_sms
    key = (device_index(A), current_stream(A), slots, config.tile_m * config.tile_n)
    if key not in _WORKSPACES:
        _WORKSPACES[key] = (new_array(A, 2 * slots * config.tile_m * config.tile_n, "float32", zeros=True),
                            new_array(A, slots, "int32", zeros=True))
    return _WORKSPACES[key]


def gemm_hopper_streamk(A, B, C=None, *, alpha=1.0, beta=0.0, config=None, split=None):
    """``C = alpha * A @ B + beta * C``, persistent, warp-specialized, the last wave split along K where that pays.

    Same operands and refusals as :func:`~layoutlab.kernels.hopper_ws.gemm_hopper_ws`. ``split``: None (default)
    splits when :func:`~layoutlab.kernels.schedule.stream_k_pays` says so; True or False forces it. Example::

        a = cupy.random.randn(8192, 8192).astype(cupy.float16)
        c = gemm_hopper_streamk(a, a.T)           # TN
    """
    C, launch = prepare_gemm_hopper_streamk(A, B, C, alpha=alpha, beta=beta, config=config, split=split)
    launch()
    return C


def prepare_gemm_hopper_streamk(A, B, C=None, *, alpha=1.0, beta=0.0, config=None, split=None):
    """``(C, launch)`` as :func:`~layoutlab.kernels.hopper.prepare_gemm_hopper` (for timing)."""
    if split not in (None, True, False):
        raise LayoutError(f"gemm_hopper_streamk: split={split!r}; use None (the rule decides), True or False")
    prob, _ = hopper_operands(A, B, C, beta=beta, name="gemm_hopper_streamk")   # every refusal before CUDA
    if config is None:
        config = HopperStreamKConfig(num_sms=persistent_sms(A, HopperStreamKConfig.cluster_mn))
    sched = kernel_schedule(prob.m, prob.n, prob.k, config)
    _, params = kernel_params(prob.m, prob.n, prob.k, config, split)
    if sched.num_ctas * sched.sk_iters > _INT32_MAX:
        raise LayoutError(f"gemm_hopper_streamk: K={prob.k} is too deep for the schedule's 32-bit arithmetic "
                          f"({sched.num_ctas} clusters x {sched.sk_iters} tail k-tiles >= 2^31); split K into "
                          f"calls with beta=1")
    import cutlass
    return plan_gemm("gemm_hopper_streamk",
                     lambda dt, am, bm, cm, wb, ops: compile_hopper_gemm_streamk(
                         dt, am, bm, cm, config=config, with_beta=wb, operands=ops),
                     A, B, C, alpha, beta, buffers=_workspace(A, config), scalars=tuple(map(cutlass.Int32, params)))
