"""``gemm_hopper_fp8``: the fp8 rung — e4m3 x e4m3 with two-level accumulation and block scaling.

``C = alpha * (A @ B)`` with A (M, K) and B (K, N) in e4m3 (``torch.float8_e4m3fn``), fp32 accumulation,
C in bf16. It is :mod:`layoutlab.kernels.hopper_ws` (persistent, a producer warpgroup and two consumer
warpgroups, ``setmaxnreg``, a 2 x 1 cluster multicasting B, the TMA-store epilogue) with three changes:

* **K-major only (TN).** ``wgmma`` reads 16-bit operands from shared memory K-major or MN-major, but 8-bit
  ones (e4m3/e5m2) only K-major: PTX ISA section 9.7.15.5.2 (``wgmma.mma_async``) supports the transpose
  (``imm-trans-a``, ``imm-trans-b``) "only for the ``wgmma.mma_async`` variants with ``.f16``/``.bf16``
  types on matrices accessed from shared memory". MN-major fp8 operands are refused
  before any CUDA call. A k-tile is 128 elements = 128 bytes (one row of the 128-byte swizzle atom), and one
  ``wgmma.m64nNk32`` consumes a 32-element (32-byte) k-block: 4 per k-tile.
* **Two-level accumulation.** wgmma's fp8 path does not keep a full fp32 sum (DeepSeek-V3 technical report,
  section 3.3.2: about 14 bits retained on the H800). So wgmma accumulates a k-tile (4 k-blocks) into partial
  sums, which CUDA-core adds promote into an fp32 main accumulator ``acc``. With ``partials=2`` (the default)
  each consumer keeps two partial accumulators: k-tile j's wgmmas write ``p[j % 2]`` (the first with
  scale-d = 0, so nothing is zeroed) and k-tile j is promoted right after k-tile j + 1 is issued, while the
  tensor cores work. Main and two partial accumulators of 64 x 128 are 3 x 64 = 192 registers per thread of the
  232 ``setmaxnreg`` gives a consumer (of 64 x 192 they would be 288): the CTA tile is 128 x 128. Two compiler
  rules shape the loop: the promotion reads a partial only after an empty volatile asm placed behind
  ``wgmma.wait_group`` (``_pin``: otherwise its reads may be hoisted above the wait), and no accumulator is in
  flight across a loop's back edge (otherwise ptxas serializes every wgmma of the kernel, warning C7514): the
  k-tiles go in unrolled runs of ``overlap_run`` with everything retired at a run's end. ``partials=1`` promotes
  between one k-tile's wgmmas and the next (any promotion interval, tiles up to 192 wide): measured slower, it
  serves the intervals other than every k-tile.
* **Block scaling** (DeepSeek-V3 / DeepGEMM): ``scale_a`` (M, ceil(K/128)) fp32, one scale per row and 128
  of K; ``scale_b`` (ceil(N/128), ceil(K/128)), one per 128 x 128 block of B. A k-tile lies in one K block, so
  each promotion multiplies a k-tile's partials by ``scale_a[row, k] * scale_b[n_block, k]`` (two rows per
  thread: r and r + 8 of its 64-row slab), loaded when the k-tile is issued and multiplied at its promotion.
  Block scaling therefore promotes after every k-tile (``promotion_interval=4``). Per-tensor scales (two
  floats) are the simple case: folded into alpha.

The promotion interval is counted in k-blocks of 32: 4 (every k-tile, as DeepGEMM), 8, 16, ... or 0 (never:
single-level wgmma accumulation); for the serial consumer it is a run-time argument (one compile serves all).
The configuration and the host-side checks are in :mod:`layoutlab.kernels.fp8_operands`.
"""

import dataclasses

from ._common import cu_stream
from .fp8_operands import _NEVER, SCALE_BLOCK, WGMMA_K_FP8, HopperFp8Config, fp8_operands
from .hopper import TMA_ALIGN_BYTES, THREADS_PER_WARPGROUP, _dsl, _class_of, _canonical_view
from .hopper_ws import PRODUCER_REGS, CONSUMER_REGS, make_hopper_ws_class, persistent_sms

__all__ = ["gemm_hopper_fp8", "prepare_gemm_hopper_fp8", "HopperFp8Config", "compile_hopper_gemm_fp8",
           "fp8_operands", "SCALE_BLOCK", "WGMMA_K_FP8"]

# ---------------------------------------------------------------------------------------------------
# The kernel: hopper_ws's with the two-level consumer loop
# ---------------------------------------------------------------------------------------------------

def make_hopper_fp8_class():
    """Build the fp8 kernel class on top of the warp-specialized one (its _setup, _tile_of, _epilogue)."""
    cutlass, cute, pipeline, _, sm90 = _dsl()
    from cutlass._mlir.dialects import llvm
    from cutlass.cute.nvgpu import cpasync, warpgroup
    from cutlass.cutlass_dsl import T
    Ws = make_hopper_ws_class()

    class HopperGemmFp8(Ws):
        """Persistent warp-specialized e4m3 GEMM, wgmma partials promoted into an fp32 accumulator."""

        def _setup(self, a, b, c):
            super()._setup(a, b, c)
            # one wgmma is bN / n_halves wide: each half of the tile gets a partial accumulator of its own
            self.tiled_mma = sm90.make_trivial_tiled_mma(
                self.ab_dtype, self.ab_dtype, self.a_layout.sm90_mma_major_mode(),
                self.b_layout.sm90_mma_major_mode(), self.acc_dtype, (self.num_wg, 1, 1),
                tiler_mn=(64, self.cfg.tile_n // self.cfg.n_halves))

        @cute.jit
        def __call__(self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, sfa: cute.Tensor,
                     sfb: cute.Tensor, alpha: cutlass.Float32, beta: cutlass.Float32,
                     promote_every: cutlass.Int32, stream):
            """a (M, K), b (N, K) e4m3 K-major, c (M, N) bf16; sfa (M, Kb), sfb (Nb, Kb) fp32 or None (per-
            tensor scales folded into alpha); promote_every: k-tiles between promotions."""
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
            self.kernel(tma_a, gA_tma, tma_b, gB_tma, tma_c, gC_tma, c, sfa, sfb, alpha, beta, promote_every,
                        self.tiled_mma, self.sA_layout, self.sB_layout, self.sC_layout, clusters_m,
                        clusters_n).launch(
                grid=grid, block=[self.threads, 1, 1], cluster=(cm, cn, 1), min_blocks_per_mp=1,
                stream=stream)

        @cute.kernel
        def kernel(self, tma_a: cute.CopyAtom, mA: cute.Tensor, tma_b: cute.CopyAtom, mB: cute.Tensor,
                   tma_c: cute.CopyAtom, mC_tma: cute.Tensor, mC: cute.Tensor, sfa: cute.Tensor,
                   sfb: cute.Tensor, alpha: cutlass.Float32, beta: cutlass.Float32,
                   promote_every: cutlass.Int32, tiled_mma: cute.TiledMma,
                   sA_layout: cute.ComposedLayout, sB_layout: cute.ComposedLayout,
                   sC_layout: cute.ComposedLayout, clusters_m: cutlass.Int32, clusters_n: cutlass.Int32):
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

            pipeline.pipeline_init_wait(cluster_shape_mn=(cm, cn))

            if wg == 0:
                # ================================ producer warpgroup ================================
                cute.arch.setmaxregister_decrease(PRODUCER_REGS)
                if warp == 0:
                    produce = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.ab_stages)
                    cluster_tile, done = first_cluster_tile, cutlass.Int32(0)
                    while cluster_tile < num_cluster_tiles:
                        tm, tn = self._tile_of(cluster_tile, clusters_m, clusters_n, cluster_crd)
                        for k in cutlass.range(k_tiles, unroll=1):
                            ab_pipe.producer_acquire(produce)   # stage empty in every CTA it feeds
                            bar = ab_pipe.producer_get_barrier(produce)
                            kk = self._k_tile(k, done, k_tiles)
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
                # The tile's N is cut into `halves` (the tiled MMA is bN / halves wide): half h's wgmmas
                # accumulate into parts[h], so one half is promoted while the other's MMAs still run.
                halves = self.cfg.n_halves
                sB_h = cute.flat_divide(sB, (bN // halves,))           # (bN / halves, halves, bK, stages)
                tCrB = [tiled_mma.make_fragment_B(thr_mma.partition_B(sB_h[None, h, None, None]))
                        for h in range(halves)]
                acc = cute.make_rmem_tensor(thr_mma.partition_C(gC[None, None, 0, 0]).shape, self.acc_dtype)
                part_shape = thr_mma.partition_C(cute.local_tile(gC[None, None, 0, 0], (bM, bN // halves),
                                                                 (0, 0))).shape
                parts = [cute.make_rmem_tensor(part_shape, self.acc_dtype) for _ in range(halves)]
                groups = cute.size(parts[0]) // 4                     # column groups of 8 per half
                k_blocks = cute.size(tCrA, mode=[2])
                store_pipe = pipeline.PipelineTmaStore.create(
                    num_stages=self.epi_stages,
                    producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, self.mma_threads))
                consume = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.ab_stages)
                release = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.ab_stages)
                if cutlass.const_expr(self.cfg.partials == 2):
                    self._consume_overlapped(
                        tiled_mma, tCrA, tCrB[0], acc, parts[0], thr_c, sfa, sfb, mC, gC, cC, gC_tma, tma_c, sC,
                        store_pipe, ab_pipe, consume, release, k_tiles, first_cluster_tile,
                        persistent_clusters, num_cluster_tiles, clusters_m, clusters_n, cluster_crd, mma_tidx,
                        warp, alpha, beta)
                else:
                    tiled_mma.set(warpgroup.Field.ACCUMULATE, True)

                    cluster_tile, done = first_cluster_tile, cutlass.Int32(0)
                    while cluster_tile < num_cluster_tiles:
                        tm, tn = self._tile_of(cluster_tile, clusters_m, clusters_n, cluster_crd)
                        tCcC = thr_c.partition_C(cC[None, None, tm, tn])
                        # this thread's two accumulator rows (r, r + 8: values 0-1 and 2-3 of each 4) and B block
                        row0 = cutlass.min(tCcC[0][0], mC.shape[0] - 1)
                        row1 = cutlass.min(tCcC[2][0], mC.shape[0] - 1)
                        # the tile's columns lie in B blocks n_blk (the first `split` groups of 8) and n_blk1
                        n_blk = tn * bN // 128
                        split = (128 - tn * bN % 128) // 8
                        n_blk1 = n_blk
                        if cutlass.const_expr(sfa is not None and bN > 128):
                            n_blk1 = cutlass.min(n_blk + 1, sfb.shape[0] - 1)
                        acc.fill(0.0)
                        for h in cutlass.range_constexpr(halves):
                            parts[h].fill(0.0)
                        s0, s1 = cutlass.Float32(1.0), cutlass.Float32(1.0)      # rows r, r + 8 of block n_blk
                        t0, t1 = s0, s1                                          # ... of block n_blk1
                        for k in cutlass.range(k_tiles, unroll=1):
                            ab_pipe.consumer_wait(consume)
                            promote = (k > 0) & (k % promote_every == 0)
                            for h in cutlass.range_constexpr(halves):
                                if promote:
                                    # parts[h] holds k-tiles [k - promote_every, k): let its last batch retire
                                    # (the other half's may still run), then promote it
                                    warpgroup.wait_group(halves - 1)
                                    self._promote_tile(acc[None, 0, h], parts[h], s0, s1, t0, t1, split, groups * h)
                                warpgroup.fence()
                                for kb in cutlass.range_constexpr(k_blocks):
                                    cute.gemm(tiled_mma, parts[h], tCrA[None, None, kb, consume.index],
                                              tCrB[h][None, None, kb, consume.index], parts[h])
                                warpgroup.commit_group()
                            if cutlass.const_expr(sfa is not None):
                                # k-tile k's scales, loaded now and used at its promotion (next iteration)
                                kk = self._k_tile(k, done, k_tiles)
                                sb, sb1 = sfb[n_blk, kk], sfb[n_blk1, kk]
                                s0, s1 = sfa[row0, kk] * sb, sfa[row1, kk] * sb
                                t0, t1 = s0, s1
                                if cutlass.const_expr(bN > 128):
                                    t0, t1 = sfa[row0, kk] * sb1, sfa[row1, kk] * sb1
                            # This k-tile's batches stay in flight; the previous one's retired: free its stage.
                            warpgroup.wait_group(halves)
                            if k > 0:
                                ab_pipe.consumer_release(release)
                                release.advance()
                            consume.advance()
                        warpgroup.wait_group(0)
                        ab_pipe.consumer_release(release)       # the tile's last stage
                        release.advance()
                        for h in cutlass.range_constexpr(halves):
                            self._promote_tile(acc[None, 0, h], parts[h], s0, s1, t0, t1, split, groups * h)

                        self._epilogue(mma_tidx, warp, acc, alpha, beta,
                                       thr_c.partition_C(gC[None, None, tm, tn]), tCcC, mC.shape, tiled_mma, sC,
                                       gC_tma[None, None, tm, tn], tma_c, store_pipe, self.mma_threads)
                        cluster_tile += persistent_clusters
                        done += 1
                if warp == self.store_warp:
                    store_pipe.producer_tail()

        @cute.jit
        def _consume_overlapped(self, tiled_mma, tCrA, tCrB, acc, p0, thr_c, sfa, sfb, mC, gC, cC, gC_tma, tma_c,
                                sC, store_pipe, ab_pipe, consume, release, k_tiles, first_cluster_tile,
                                persistent_clusters, num_cluster_tiles, clusters_m, clusters_n, cluster_crd,
                                mma_tidx, warp, alpha, beta):
            """``partials=2``: k-tile j accumulates in partials ``p[j % 2]`` and is promoted right after k-tile
            j + 1 is issued, so the promotion's adds run while the tensor cores work. A k-tile's first k-block
            overwrites its partials (scale-d = 0), so they are never zeroed. The k-tiles go in runs of
            ``overlap_run`` with every wgmma retired at the end of a run: ptxas serializes every wgmma of the kernel
            (warning C7514) when an accumulator is still in flight across a loop's back edge."""
            bN = self.tile_mnk[1]
            run = self.cfg.overlap_run
            parts = (p0, cute.make_rmem_tensor(p0.shape, self.acc_dtype))
            mma_first = tiled_mma.__new_from_mlir_values__(tiled_mma.__extract_mlir_values__())
            mma_first.set(warpgroup.Field.ACCUMULATE, False)
            tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
            # stagger: the second consumer warpgroup starts each tile with half a run, so that the two warpgroups'
            # run ends (every wgmma retired, one promotion not overlapped) fall on different k-tiles
            head = cutlass.Int32(0)
            if cutlass.const_expr(self.cfg.stagger):
                if mma_tidx >= THREADS_PER_WARPGROUP and k_tiles >= run // 2:
                    head = cutlass.Int32(run // 2)
            cluster_tile, done = first_cluster_tile, cutlass.Int32(0)
            while cluster_tile < num_cluster_tiles:
                tm, tn = self._tile_of(cluster_tile, clusters_m, clusters_n, cluster_crd)
                tCcC = thr_c.partition_C(cC[None, None, tm, tn])
                # block scales: scale_a and scale_b, this thread's rows r, r + 8 and the tile's block of scale_b
                scale_src = (sfa, sfb, cutlass.min(tCcC[0][0], mC.shape[0] - 1), cutlass.min(tCcC[2][0], mC.shape[0] - 1),
                        tn * bN // 128)
                acc.fill(0.0)
                ops = (acc, parts, mma_first, tiled_mma, tCrA, tCrB, ab_pipe)
                if cutlass.const_expr(self.cfg.stagger):
                    if head > 0:
                        consume, release = self._run(run // 2, cutlass.Int32(0), done, k_tiles, ops, consume, release,
                                                     scale_src)
                for r in cutlass.range((k_tiles - head) // run, unroll=1):
                    consume, release = self._run(run, head + r * run, done, k_tiles, ops, consume, release, scale_src)
                for k in cutlass.range(k_tiles - (k_tiles - head) % run, k_tiles, unroll=1):   # the rest, one by one
                    consume, release = self._run(1, k, done, k_tiles, ops, consume, release, scale_src)
                self._epilogue(mma_tidx, warp, acc, alpha, beta, thr_c.partition_C(gC[None, None, tm, tn]), tCcC,
                               mC.shape, tiled_mma, sC, gC_tma[None, None, tm, tn], tma_c, store_pipe,
                               self.mma_threads)
                cluster_tile += persistent_clusters
                done += 1

        @cute.jit
        def _run(self, length: cutlass.Constexpr, k0, done, k_tiles, ops, consume, release, scale_src):
            """k-tiles k0 .. k0 + length - 1: each promoted (and its stage freed) right after the next is issued;
            the last after every wgmma has retired. Returns the advanced pipeline states."""
            acc, parts, mma_first, tiled_mma, tCrA, tCrB, ab_pipe = ops
            scales = [None] * length
            for u in cutlass.range_constexpr(length):
                self._issue(mma_first, tiled_mma, tCrA, tCrB, parts[u % 2], ab_pipe, consume)
                scales[u] = self._scales(scale_src, self._k_tile(k0 + u, done, k_tiles))
                consume.advance()
                if cutlass.const_expr(u > 0):              # k-tile u - 1 has retired: free it, promote it
                    ab_pipe.consumer_release(release)
                    release.advance()
                    self._promote_part(acc, parts[(u - 1) % 2], scales[u - 1])
            warpgroup.wait_group(0)
            ab_pipe.consumer_release(release)
            release.advance()
            self._promote_part(acc, parts[(length - 1) % 2], scales[length - 1])
            return consume, release           # advanced: the caller rebinds them (loop-carried state)

        @cute.jit
        def _promote_part(self, acc, part, scales):
            """acc += scale * part for a retired k-tile; the block scales' product is formed here, a k-tile after
            their loads were issued, so the loads' latency hides under the MMAs."""
            self._pin(part)
            a0, a1, b = scales
            s0, s1 = a0, a1
            if cutlass.const_expr(b is not None):
                s0, s1 = a0 * b, a1 * b
            self._promote(acc, part, s0, s1, s0, s1, 1 << 10, 0, False)

        @cute.jit
        def _issue(self, mma_first, tiled_mma, tCrA, tCrB, part, ab_pipe, consume):
            """Wait for the stage, issue its k-tile's wgmmas into ``part`` (the first overwriting it), and wait
            until only this batch is in flight."""
            ab_pipe.consumer_wait(consume)
            warpgroup.fence()
            for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
                cute.gemm(mma_first if kb == 0 else tiled_mma, part, tCrA[None, None, kb, consume.index],
                          tCrB[None, None, kb, consume.index], part)
            warpgroup.commit_group()
            warpgroup.wait_group(1)

        @cute.jit
        def _scales(self, scale_src, kk):
            """k-tile ``kk``'s block scales, loaded: A's for this thread's rows r and r + 8 and B's for the tile's
            block (``scale_src``: scale_a, scale_b and the three indices); (1, 1, None) with per-tensor scales."""
            sfa, sfb, r0, r1, n_blk = scale_src
            if cutlass.const_expr(sfa is None):
                return cutlass.Float32(1.0), cutlass.Float32(1.0), None
            return sfa[r0, kk], sfa[r1, kk], sfb[n_blk, kk]

        @cute.jit
        def _pin(self, part):
            """Read a retired wgmma accumulator only after the wait that retired it: each register passes through
            an empty volatile asm placed after the wait (CUTLASS's ``warpgroup_fence_operand``). Without it the
            compiler may hoist the promotion's reads above ``wgmma.wait_group``, and ptxas then serializes every
            wgmma of the kernel (warning C7514)."""
            for i in cutlass.range_constexpr(cute.size(part)):
                part[i] = cutlass.Float32(llvm.inline_asm(T.f32(), [part[i].ir_value()], "", "=f,0",
                                                          has_side_effects=True))

        @cute.jit
        def _k_tile(self, k, done, k_tiles):
            """The k-tile loaded k-th for this CTA's tile number ``done``: odd tiles walk K backwards
            (``serpentine_k``, as in hopper_ws); the consumers need it for the block scales' index."""
            kk = k
            if cutlass.const_expr(self.cfg.serpentine_k):
                kk = k + (done % 2) * (k_tiles - 1 - 2 * k)
            return kk

        @cute.jit
        def _promote_tile(self, acc, part, s0, s1, t0, t1, split, g0: cutlass.Constexpr):
            """A tile of 192 columns straddles two B blocks after 128 or 64 of them (``split`` = 16 or 8 groups of
            8 columns): one promotion per case, so that each value's scale is known at compile time."""
            if cutlass.const_expr(self.tile_mnk[1] <= 128):
                self._promote(acc, part, s0, s1, t0, t1, 1 << 10, g0)
            else:
                if split == 16:
                    self._promote(acc, part, s0, s1, t0, t1, 16, g0)
                else:
                    self._promote(acc, part, s0, s1, t0, t1, 8, g0)

        @cute.jit
        def _promote(self, acc, part, s0, s1, t0, t1, split: cutlass.Constexpr, g0: cutlass.Constexpr,
                     zero: cutlass.Constexpr = True):
            """acc += scale * part, part = 0. Value i is row r (s0, t0) or r + 8 (s1, t1) by (i // 2) % 2, in column
            group g0 + i // 4 of the tile (8 columns each): groups before ``split`` use B block n_blk (s), the rest
            n_blk1 (t). With per-tensor scales every scale is 1."""
            for i in cutlass.range_constexpr(cute.size(part)):
                row_b = (i // 2) % 2
                s = (s1 if row_b else s0) if g0 + i // 4 < split else (t1 if row_b else t0)
                acc[i] = acc[i] + s * part[i]
                if cutlass.const_expr(zero):         # partials=2 overwrites instead (scale-d = 0)
                    part[i] = 0.0

    return HopperGemmFp8


# ---------------------------------------------------------------------------------------------------
# Compilation (cached) and the public entry point
# ---------------------------------------------------------------------------------------------------

_CACHE = {}


def fake_fp8_operands(block_scaled, c_major="N"):
    """CuTe DSL fake tensors with symbolic sizes: a (M, K), b (N, K) e4m3 K-major, c (M, N) bf16, and the
    scale tensors sfa (M, Kb), sfb (Nb, Kb) fp32 row-major (None without block scaling)."""
    cutlass, cute = _dsl()[:2]
    from cutlass.cute.runtime import make_fake_tensor
    m, n, k, kb, nb = (cute.sym_int32(symbol=s) for s in ("M", "N", "K", "Kb", "Nb"))

    def mat(dt, rows, cols, k_major, tag):
        ld = cute.sym_int64(divisibility=TMA_ALIGN_BYTES * 8 // dt.width, symbol=f"ld{tag}")
        return make_fake_tensor(dt, (rows, cols), (ld, 1) if k_major else (1, ld), assumed_align=TMA_ALIGN_BYTES)

    a = mat(cutlass.Float8E4M3FN, m, k, True, "a")
    b = mat(cutlass.Float8E4M3FN, n, k, True, "b")
    c = mat(cutlass.BFloat16, m, n, c_major == "N", "c")
    if not block_scaled:
        return a, b, c, None, None
    sfa = make_fake_tensor(cutlass.Float32, (m, kb), (kb, 1), assumed_align=4)
    sfb = make_fake_tensor(cutlass.Float32, (nb, kb), (kb, 1), assumed_align=4)
    return a, b, c, sfa, sfb


def compile_hopper_gemm_fp8(block_scaled=False, c_major="N", *, config=None, with_beta=False, operands=None):
    """Compile (and cache) the fp8 kernel; works on a CPU with ``CUTE_DSL_ARCH=sm_90a``. The promotion
    interval is a run-time argument, so it is not part of the cache key. Returns the DSL's callable
    ``f(a, b, c, sfa, sfb, alpha, beta, promote_every, stream)``.

    >>> f = compile_hopper_gemm_fp8(config=HopperFp8Config(promotion_interval=8))
    >>> f is compile_hopper_gemm_fp8(config=HopperFp8Config(promotion_interval=0))   # one serial kernel, any interval
    True
    """
    config = dataclasses.replace(config or HopperFp8Config(), promotion_interval=4)
    key = (block_scaled, c_major, config, with_beta)
    if key not in _CACHE:
        cutlass, cute = _dsl()[:2]
        from cutlass.cute.runtime import make_fake_stream
        cls = _class_of(make_hopper_fp8_class)
        a, b, c, sfa, sfb = operands or fake_fp8_operands(block_scaled, c_major)
        _CACHE[key] = cute.compile(cls(config, with_beta), a, b, c, sfa, sfb, cutlass.Float32(1.0),
                                   cutlass.Float32(0.0), cutlass.Int32(1), make_fake_stream())
    return _CACHE[key]


def _fp8_tensor(x, major_mode):
    """A runtime CuTe tensor over a torch e4m3 tensor: DLPack carries it as uint8, the element type is set."""
    import cutlass
    import torch
    from cutlass.cute.runtime import from_dlpack
    t = from_dlpack(_canonical_view(x.view(torch.uint8), major_mode), assumed_align=TMA_ALIGN_BYTES)
    t.element_type = cutlass.Float8E4M3FN
    return t.mark_layout_dynamic(leading_dim=major_mode)


def prepare_gemm_hopper_fp8(A, B, C=None, *, scale_a=1.0, scale_b=1.0, alpha=1.0, beta=0.0, config=None):
    """``(C, launch)``: everything checked and converted, ``launch()`` enqueues the GEMM (for timing)."""
    m, n, k, c_major, block, ops = fp8_operands(A, B, C, scale_a=scale_a, scale_b=scale_b, beta=beta,
                                                config=config)
    if config is None:
        config = HopperFp8Config(num_sms=persistent_sms(A, HopperFp8Config.cluster_mn))
    import cutlass
    import torch
    from cutlass.cute.runtime import from_dlpack
    from .hopper import to_cute_tensor
    if C is None:      # rows padded to 16 bytes (TMA's stride rule), the view sliced back to N
        C = torch.empty((m, -(-n // 8) * 8), dtype=torch.bfloat16, device=A.device)[:, :n]
    a, b = _fp8_tensor(A, 1), _fp8_tensor(B.T, 1)
    c = to_cute_tensor(C, 1 if c_major == "N" else 0)
    sfa = sfb = None
    if block:
        sfa = from_dlpack(scale_a, assumed_align=4).mark_layout_dynamic(leading_dim=1)
        sfb = from_dlpack(scale_b, assumed_align=4).mark_layout_dynamic(leading_dim=1)
    else:
        alpha = alpha * float(scale_a) * float(scale_b)
    kernel = compile_hopper_gemm_fp8(block, c_major, config=config, with_beta=beta != 0,
                                     operands=(a, b, c, sfa, sfb))
    args = (a, b, c, sfa, sfb, cutlass.Float32(alpha), cutlass.Float32(beta),
            cutlass.Int32(min(config.promote_every_k_tiles, _NEVER)), cu_stream(A))
    return C, lambda: kernel(*args)


def gemm_hopper_fp8(A, B, C=None, *, scale_a=1.0, scale_b=1.0, alpha=1.0, beta=0.0, config=None):
    """``C = alpha * (scale_a * A) @ (scale_b * B) (+ beta * C)`` in e4m3 on a Hopper GPU, bf16 out.

    ``scale_a``/``scale_b``: two numbers (per-tensor) or block scales, fp32 CUDA tensors of shape
    (M, ceil(K/128)) and (ceil(N/128), ceil(K/128)) (DeepSeek-V3's 1 x 128 and 128 x 128 blocks). A is
    (M, K) row-major, B is (K, N) with K contiguous (``b.T`` of an (N, K) row-major b). Example::

        a = torch.randn(4096, 4096, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(4096, 4096, device="cuda").to(torch.float8_e4m3fn)
        c = gemm_hopper_fp8(a, b.T)            # bf16 (4096, 4096) ~= a.float() @ b.float().T
    """
    C, launch = prepare_gemm_hopper_fp8(A, B, C, scale_a=scale_a, scale_b=scale_b, alpha=alpha, beta=beta,
                                        config=config)
    launch()
    return C
