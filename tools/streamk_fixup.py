"""The price of the stream-K split, measured: python tools/streamk_fixup.py OUT.json [ROUNDS] [SECONDS]

For each problem (bf16 TN, standard-normal operands rotated over 4x the L2, as layoutlab.bench.gemm does) it times,
alternating in every round: gemm_hopper_ws, gemm_hopper_streamk forced to split (split=True) and forced not to
(split=False). The split saves ``saved`` k-tile times on the busiest CTA (stream_k_pays with a zero price); what it
gained, in k-tile times of this problem (ws's time / (ceil(waves) * k_iters)), is ``gained``; the price it paid is
``saved - gained``. A least-squares line price = c0 + c1 * k_iters over the problems is the rule's FIXUP_COST.
"""
import json
import math
import statistics
import sys

SHAPES = [(8192, 8192, 1024), (8192, 8192, 2048), (8192, 8192, 4096), (8192, 8192, 8192), (8192, 8192, 16384),
          (12288, 8192, 8192), (4096, 4096, 4096), (4096, 4096, 16384), (6144, 6144, 6144), (8000, 8000, 8000),
          (4096, 14336, 4096), (16384, 4096, 4096), (1024, 8192, 8192)]


def main(out, rounds=5, seconds=0.15):
    import cupy

    from layoutlab.bench.gemm import Operands, _operand_sets, gpu_info, time_launches
    from layoutlab.kernels.hopper_streamk import HopperStreamKConfig, kernel_schedule, prepare_gemm_hopper_streamk
    from layoutlab.kernels.hopper_ws import persistent_sms, prepare_gemm_hopper_ws
    from layoutlab.kernels.schedule import stream_k_pays

    info = gpu_info()
    rows = []
    for m, n, k in SHAPES:
        ops = Operands("torch", "bfloat16", m, n, k, _operand_sets(info, m, n, k, 2))
        a0 = ops.sets[0][0]
        cfg = HopperStreamKConfig(num_sms=persistent_sms(a0, HopperStreamKConfig.cluster_mn))
        s = kernel_schedule(m, n, k, cfg)
        free = stream_k_pays(m, n, k, s.tile_mnk, s.num_ctas, cost=(0, 0))
        launches = {"ws": [prepare_gemm_hopper_ws(*x)[1] for x in ops.sets],
                    "split": [prepare_gemm_hopper_streamk(*x, split=True)[1] for x in ops.sets],
                    "nosplit": [prepare_gemm_hopper_streamk(*x, split=False)[1] for x in ops.sets]}
        a, b, c = ops.sets[0]
        ref = ops.cublas(a, b, c).clone()
        errs = {}
        for name, ls in launches.items():
            c.fill_(float("nan"))
            ls[0]()
            cupy.cuda.runtime.deviceSynchronize()
            errs[name] = float((c.float() - ref.float()).norm() / ref.float().norm())
        t = {name: [] for name in launches}
        for _ in range(rounds):
            for name, ls in launches.items():
                t[name].append(time_launches(ls, target_s=seconds)[0])
        med = {name: statistics.median(v) for name, v in t.items()}
        k_tile_ms = med["ws"] / (math.ceil(s.tiles / s.num_ctas) * s.k_iters)
        gained = (med["ws"] - med["split"]) / k_tile_ms
        row = {"m": m, "n": n, "k": k, "tiles": s.tiles, "clusters": s.num_ctas, "k_iters": s.k_iters,
               "tail_tiles": s.tail_tiles, "saved_k_tiles": free.saved_k_tiles, "ms": med, "ms_rounds": t,
               "rel_err_vs_cublas": errs, "k_tile_us": 1e3 * k_tile_ms, "gained_k_tiles": gained,
               "price_k_tiles": free.saved_k_tiles - gained,
               "split_vs_ws_pct": 100 * med["ws"] / med["split"], "nosplit_vs_ws_pct": 100 * med["ws"] / med["nosplit"],
               "rule_splits": stream_k_pays(m, n, k, s.tile_mnk, s.num_ctas).split}
        rows.append(row)
        print(f"{m:>5}x{n:>5}x{k:>5} k_iters {s.k_iters:3d} tail {s.tail_tiles:2d}/{s.num_ctas} saved "
              f"{free.saved_k_tiles:3d}  ws {med['ws']:.3f} split {med['split']:.3f} nosplit {med['nosplit']:.3f} ms"
              f"  gained {gained:6.1f} price {row['price_k_tiles']:6.1f} k-tiles  split/ws {row['split_vs_ws_pct']:.1f}"
              f" % nosplit/ws {row['nosplit_vs_ws_pct']:.1f} %  rule {'split' if row['rule_splits'] else 'no split'}",
              flush=True)
        ops = launches = None
        cupy.get_default_memory_pool().free_all_blocks()
    xs, ys = [r["k_iters"] for r in rows], [r["price_k_tiles"] for r in rows]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    c1 = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    fit = {"c0": my - c1 * mx, "c1": c1}
    print(f"price ~= {fit['c0']:.1f} + {fit['c1']:.3f} * k_iters k-tiles (least squares over {len(rows)} problems)")
    rec = {"gpu": info["gpu"], "date": info["date"], "versions": {k: info.get(k) for k in (
        "driver_version", "cupy", "cuda_runtime", "nvidia-cutlass-dsl", "cutlass", "torch")}, "info": info,
        "rounds": rounds, "seconds": seconds, "dtype": "bfloat16", "layout": "TN", "rows": rows, "fit": fit}
    with open(out, "w") as f:
        json.dump(rec, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], *(int(sys.argv[2]),) if len(sys.argv) > 2 else (), *(float(sys.argv[3]),) if len(sys.argv) > 3 else ())
