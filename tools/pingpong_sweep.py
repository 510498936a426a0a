"""A first look at gemm_hopper_pingpong on the GPU machine: a few configurations beside gemm_hopper_ws and cuBLAS.

    python tools/pingpong_sweep.py OUT.json [ROUNDS] [SECONDS]

bf16 TN at 8192^3 and 4096^3, standard-normal L2-cold operand sets (:mod:`layoutlab.bench.gemm`'s), every side
checked against cuBLAS first, then all sides in turn each round (the first side rotates); each side's time is
the median of its round medians, its ratio the median cuBLAS time over it.
"""
import json
import statistics
import sys

from layoutlab.bench.gemm import Operands, _cupy_has_bf16, _operand_sets, _rel_err, gpu_info, time_launches
from layoutlab.kernels.hopper_pingpong import HopperPingpongConfig, prepare_gemm_hopper_pingpong
from layoutlab.kernels.hopper_ws import persistent_sms, prepare_gemm_hopper_ws


def sides_for(ops):
    a = ops.sets[0][0]
    pp = {"pingpong": HopperPingpongConfig(num_sms=persistent_sms(a, (2, 1))),
          # B multicast over 4 CTAs (A over 2 with 2 x 2): fewer L2 -> SM bytes per flop
          "pingpong_4x1": HopperPingpongConfig(cluster_mn=(4, 1), num_sms=persistent_sms(a, (4, 1))),
          "pingpong_2x2": HopperPingpongConfig(cluster_mn=(2, 2), num_sms=persistent_sms(a, (2, 2))),
          "pingpong_4x1_swz4": HopperPingpongConfig(cluster_mn=(4, 1), swizzle=4,
                                                    num_sms=persistent_sms(a, (4, 1)))}
    sides = {"cublas": [(lambda s=s: ops.cublas(*s)) for s in ops.sets],
             "ws": [prepare_gemm_hopper_ws(*s)[1] for s in ops.sets]}
    for name, cfg in pp.items():
        sides[name] = [prepare_gemm_hopper_pingpong(*s, config=cfg)[1] for s in ops.sets]
    return sides


def main(out, rounds=3, seconds=0.5):
    import cupy
    info = gpu_info()
    lib = "cupy" if _cupy_has_bf16() else "torch"
    rows = []
    for (m, n, k) in [(8192, 8192, 8192), (4096, 4096, 4096)]:
        ops = Operands(lib, "bfloat16", m, n, k, _operand_sets(info, m, n, k, 2))
        sides = sides_for(ops)
        a, b, c = ops.sets[0]
        ops.cublas(a, b, c)
        ref = c.clone() if hasattr(c, "clone") else c.copy()
        errs = {}
        for name, launches in sides.items():
            c[...] = float("nan")
            launches[0]()
            errs[name] = _rel_err(c, ref)
        names = list(sides)
        times = {name: [] for name in names}
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                times[name].append(time_launches(sides[name], target_s=seconds)[0])
        med = {name: statistics.median(t) for name, t in times.items()}
        row = {"m": m, "n": n, "k": k, "dtype": "bfloat16", "ms": med, "ms_rounds": times, "rel_err": errs,
               "pct_cublas": {name: 100 * med["cublas"] / med[name] for name in names}}
        rows.append(row)
        print(f"{m}x{n}x{k}: " + "  ".join(f"{name} {row['pct_cublas'][name]:.1f} % (err {errs[name]:.1e})"
                                          for name in names), flush=True)
        ops = sides = a = b = c = ref = None
        cupy.get_default_memory_pool().free_all_blocks()
    with open(out, "w") as f:
        json.dump({"gpu": info["gpu"], "date": info["date"], "info": info, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    args = sys.argv[1:]
    main(args[0], int(args[1]) if len(args) > 1 else 3, float(args[2]) if len(args) > 2 else 0.5)
