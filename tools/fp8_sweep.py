"""gemm_hopper_fp8 configurations beside cuBLASLt fp8 at 8192^3 and 4096^3, in alternating rounds, one GPU run:
``python tools/fp8_sweep.py OUT.json [seconds] [rounds]``; ``FP8_SWEEP_CONFIGS`` (a JSON list of HopperFp8Config
fields) replaces the default list. Each side's time is the median of its round medians (layoutlab.bench.gemm's
timing, L2-cold operand sets); each configuration's output is compared with cuBLASLt's (per-tensor) or with a
float32 product of the scaled operands (block scales) before it is timed."""

import json
import os
import statistics
import sys

import torch

from layoutlab.bench.gemm import _fp8_sets, _versions, gpu_info, time_launches
from layoutlab.kernels.hopper_fp8 import HopperFp8Config, persistent_sms, prepare_gemm_hopper_fp8

CONFIGS = [dict(), dict(tile_n=128, epi_stages=4), dict(tile_n=128, epi_stages=4, partials=2),
           dict(tile_n=128, epi_stages=4, partials=2, overlap_run=8), dict(promotion_interval=0)]


def rel(x, ref):
    return float((x.float() - ref).norm() / ref.norm())


def main(out, seconds=0.3, rounds=3):
    configs = json.loads(os.environ["FP8_SWEEP_CONFIGS"]) if os.environ.get("FP8_SWEEP_CONFIGS") else CONFIGS
    info = gpu_info()
    one = torch.ones((), device="cuda")
    rows = []
    for m, n, k in [(8192, 8192, 8192), (4096, 4096, 4096)]:
        sets = _fp8_sets(info, m, n, k)
        blocks = [(torch.rand((m, k // 128), device="cuda") + 0.5, torch.rand((n // 128, k // 128), device="cuda") + 0.5)
                  for _ in sets]
        a, b, c = sets[0]
        ref_pt = torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16).float()
        sa, sb = blocks[0]
        ref_blk = ((a.float() * sa.repeat_interleave(128, 1)) @ (b.float() * sb.repeat_interleave(128, 0)
                                                                  .repeat_interleave(128, 1).T))
        sides = {"cublaslt": [(lambda s=s: torch._scaled_mm(s[0], s[1], one, one, out_dtype=torch.bfloat16,
                                                             out=s[2])) for s in sets]}
        errors = {}
        for kw in configs:
            name = json.dumps(kw, sort_keys=True)
            try:
                cfg = HopperFp8Config(num_sms=persistent_sms(one, tuple(kw.get("cluster_mn", (2, 1)))),
                                      **{k_: tuple(v) if isinstance(v, list) else v for k_, v in kw.items()})
                ours = [prepare_gemm_hopper_fp8(*s, config=cfg)[1] for s in sets]
                ours[0]()
                errors[name + " per-tensor"] = rel(c, ref_pt)
                sides[name + " per-tensor"] = ours
                if cfg.promotion_interval == 4:
                    blk = [prepare_gemm_hopper_fp8(*s, scale_a=x, scale_b=y, config=cfg)[1]
                           for s, (x, y) in zip(sets, blocks)]
                    blk[0]()
                    errors[name + " block"] = rel(c, ref_blk)
                    sides[name + " block"] = blk
            except Exception as err:                       # a config that does not build or run: say why
                errors[name] = f"{type(err).__name__}: {err}"[:300]
                print(name, errors[name], flush=True)
        times = {key: [] for key in sides}
        for r in range(rounds):
            keys = list(sides)
            keys = keys[r % len(keys):] + keys[:r % len(keys)]      # the first side rotates
            for key in keys:
                times[key].append(time_launches(sides[key], target_s=seconds)[0])
        t_lt = statistics.median(times["cublaslt"])
        for key, ts in times.items():
            ms = statistics.median(ts)
            row = {"m": m, "n": n, "k": k, "side": key, "ms": ms, "tflops": 2 * m * n * k / ms / 1e9,
                   "pct_cublaslt": 100 * t_lt / ms, "round_ms": ts, "rel_err": errors.get(key)}
            rows.append(row)
            print(f"{m}x{n}x{k} {key:70s} {row['tflops']:7.1f} TFLOP/s {row['pct_cublaslt']:6.1f} %  err "
                  f"{row['rel_err']}", flush=True)
        rows += [{"m": m, "n": n, "k": k, "side": key, "error": e} for key, e in errors.items() if isinstance(e, str)]
        with open(out, "w") as f:
            json.dump({"gpu": info.get("gpu"), "date": info.get("date"), "versions": _versions(info), "info": info,
                       "rounds": rounds, "seconds": seconds, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], *(float(x) for x in sys.argv[2:3]), *(int(x) for x in sys.argv[3:4]))
