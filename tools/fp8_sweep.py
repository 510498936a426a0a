"""gemm_hopper_fp8 configurations at 8192^3 and 4096^3 (per-tensor and block scales) beside cuBLASLt fp8, one GPU run:
``python tools/fp8_sweep.py OUT.json [seconds]``. Each point: the median of ``seconds`` of launches over L2-cold
operand sets (layoutlab.bench.gemm's timing)."""

import json
import sys

import torch

from layoutlab.bench.gemm import _fp8_sets, _versions, gpu_info, time_launches
from layoutlab.kernels.hopper_fp8 import HopperFp8Config, persistent_sms, prepare_gemm_hopper_fp8

CONFIGS = [dict(), dict(n_halves=1), dict(tile_n=128, epi_stages=4), dict(tile_n=128, epi_stages=4, n_halves=1),
           dict(promotion_interval=0), dict(promotion_interval=8)]


def main(out, seconds=0.5):
    info = gpu_info()
    one = torch.ones((), device="cuda")
    rows = []
    for m, n, k in [(8192, 8192, 8192), (4096, 4096, 4096)]:
        sets = _fp8_sets(info, m, n, k)
        lt = [(lambda s=s: torch._scaled_mm(s[0], s[1], one, one, out_dtype=torch.bfloat16, out=s[2])) for s in sets]
        t_lt = time_launches(lt, target_s=seconds)[0]
        blocks = [(torch.rand((m, k // 128), device="cuda") + 0.5, torch.rand((n // 128, k // 128), device="cuda") + 0.5)
                  for _ in sets]
        for kw in CONFIGS:
            row = {"m": m, "n": n, "k": k, "config": {k_: list(v) if isinstance(v, tuple) else v for k_, v in kw.items()},
                   "cublaslt_tflops": 2 * m * n * k / t_lt / 1e9}
            try:
                cm = kw.get("cluster_mn", (2, 1))
                cfg = HopperFp8Config(num_sms=persistent_sms(one, cm), **kw)
                ours = [prepare_gemm_hopper_fp8(a, b, c, config=cfg)[1] for a, b, c in sets]
                row["per_tensor_tflops"] = 2 * m * n * k / time_launches(ours, target_s=seconds)[0] / 1e9
                if cfg.promotion_interval == 4:
                    blk = [prepare_gemm_hopper_fp8(a, b, c, scale_a=sa, scale_b=sb, config=cfg)[1]
                           for (a, b, c), (sa, sb) in zip(sets, blocks)]
                    row["block_tflops"] = 2 * m * n * k / time_launches(blk, target_s=seconds)[0] / 1e9
            except Exception as err:                       # a config that does not build or run: say why
                row["error"] = f"{type(err).__name__}: {err}"[:300]
            rows.append(row)
            print(json.dumps(row), flush=True)
            with open(out, "w") as f:
                json.dump({"gpu": info.get("gpu"), "date": info.get("date"), "versions": _versions(info), "info": info,
                           "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.5)
