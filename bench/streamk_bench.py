"""Issue 25, the last-wave rung on the GPU: gemm_hopper_streamk vs gemm_hopper_ws vs cuBLAS, same run, alternating.

    python3 bench/streamk_bench.py OUT.json [ROUNDS] [SECONDS] [SHAPES]

SHAPES: comma-separated MxNxK (default 8192^3, 6144^3, 4096^3, 8000^3); bf16 TN, fresh standard-normal operand sets
rotated over 4x the L2 (layoutlab.bench.gemm.Operands). Each round times the three in turn (time_launches, SECONDS
each); a kernel's row is the median of its round medians against the median of cuBLAS's, in the row format of
`python -m layoutlab.bench.gemm` (so `layoutlab.kernels.ladder.rung_row` reads it), plus the stream-K schedule of
each shape and issue 25's goal fields for the stream-K rung.
"""

import json
import statistics
import sys
from pathlib import Path

from layoutlab.bench import gemm as bg
from layoutlab.kernels import hopper_streamk, hopper_ws

KERNELS = {"gemm_hopper_streamk": hopper_streamk.prepare_gemm_hopper_streamk,
           "gemm_hopper_ws": hopper_ws.prepare_gemm_hopper_ws}


def main(out, rounds=5, seconds=0.5, shapes="8192x8192x8192,6144x6144x6144,4096x4096x4096,8000x8000x8000",
         dtype="bfloat16"):
    import cupy
    info = bg.gpu_info()
    lib = "cupy" if bg._cupy_has_bf16() or dtype == "float16" else "torch"
    info["bf16_arrays"] = lib
    rows, notes, schedules = [], [], []
    for shape in shapes.split(","):
        m, n, k = (int(x) for x in shape.split("x"))
        sets = bg._operand_sets(info, m, n, k, 2)
        ops = bg.Operands(lib, dtype, m, n, k, sets, layout="TN")
        a, b, c = ops.sets[0]
        ops.cublas(a, b, c)
        ref = c.clone() if hasattr(c, "clone") else c.copy()
        launches, errs = {}, {}
        for name, prepare in KERNELS.items():
            c[...] = float("nan")
            prepare(a, b, c)[1]()
            errs[name] = bg._rel_err(c, ref)
            launches[name] = [prepare(*s)[1] for s in ops.sets]
        cublas = [(lambda s=s: ops.cublas(*s)) for s in ops.sets]
        times = {name: [] for name in [*KERNELS, "cublas"]}
        for _ in range(rounds):                       # alternate: streamk, ws, cuBLAS, streamk, ...
            for name in KERNELS:
                t, runs = bg.time_launches(launches[name], target_s=seconds)
                times[name].append(t)
            times["cublas"].append(bg.time_launches(cublas, target_s=seconds)[0])
        for name in KERNELS:
            r = bg._row(name, dtype, "TN", (m, n, k), times[name], times["cublas"], errs[name], runs, sets)
            r.update(ms_rounds=times[name], cublas_ms_rounds=times["cublas"],
                     cublas_via="torch.matmul" if lib == "torch" else "cupy.matmul")
            rows.append(r)
            print(f"  {name:20s} {m}x{n}x{k}  {r['ms']:.3f} ms  {r['tflops']:6.1f} TF/s  {r['pct_cublas']:6.1f} % "
                  f"of cuBLAS  err {r['rel_err_vs_cublas']:.1e}", flush=True)
        sk, ws = (statistics.median(times[x]) for x in KERNELS)
        s = hopper_streamk.kernel_schedule(m, n, k, hopper_streamk.HopperStreamKConfig(
            num_sms=hopper_ws.persistent_sms(a, (2, 1))))
        schedules.append({"m": m, "n": n, "k": k, "tiles": s.tiles, "clusters": s.num_ctas, "full_waves": s.full_waves,
                          "tail_tiles": s.tail_tiles, "idle_fraction": s.idle_fraction,
                          "streamk_vs_ws_pct": 100.0 * ws / sk})
        print(f"  stream-K / ws: {100.0 * ws / sk:.1f} % (tail {s.tail_tiles} of {s.tiles} cluster tiles, "
              f"{100 * s.idle_fraction:.1f} % idle without the split)", flush=True)
        ops = launches = None
        cupy.get_default_memory_pool().free_all_blocks()
        rec = bg._record(info, rows, notes)
        rec["schedules"] = schedules
        rec["goals"] = bg.ladder_goals(rows, "gemm_hopper_streamk")
        Path(out).write_text(json.dumps(rec, indent=1))
    return 0


if __name__ == "__main__":
    a = sys.argv[1:]
    sys.exit(main(a[0], int(a[1]) if len(a) > 1 else 5, float(a[2]) if len(a) > 2 else 0.5, *a[3:4]))
