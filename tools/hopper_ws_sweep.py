"""Schedule sweep for gemm_hopper_ws on the GPU machine (cluster shape, rasterization group, tile N).

    python tools/hopper_ws_sweep.py OUT.json [rounds]      # run 1 used 3 rounds of 0.3 s

Each configuration is checked against cuBLAS and timed as :mod:`layoutlab.bench.gemm` does (ratio: median cuBLAS
ms / median kernel ms). Results: results/NOTES.md (entries 8, 14, 16).
"""
import json
import statistics
import sys
from pathlib import Path

#: (tile_m, tile_n, cluster_mn, swizzle, epi_stages, serpentine_k); the first is HopperWsConfig().
CONFIGS = [(128, 256, (2, 1), 8, 4, False), (128, 256, (2, 1), 8, 4, True), (128, 256, (2, 1), 4, 4, True),
           (128, 256, (2, 1), 16, 4, True)]
SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (6144, 6144, 6144), (4096, 14336, 4096)]


def main(out, rounds=5):
    from layoutlab.bench.gemm import Operands, _operand_sets, _record, _rel_err, gpu_info, time_alternating
    from layoutlab.kernels.hopper_ws import HopperWsConfig, persistent_sms, prepare_gemm_hopper_ws

    info = gpu_info()
    rows = []
    for (m, n, k) in SHAPES:
        sets = _operand_sets(info, m, n, k, 2)
        ops = Operands("torch", "bfloat16", m, n, k, sets)
        a, b, c = ops.sets[0]
        ops.cublas(a, b, c)
        ref = c.clone()
        for tm, tn, cl, sw, epi, serp in CONFIGS:
            label = f"{tm}x{tn} cluster {cl[0]}x{cl[1]} swizzle {sw} epi {epi}" + (" serpentine" if serp else "")
            cfg = HopperWsConfig(tm, tn, 64, cluster_mn=cl, swizzle=sw, epi_stages=epi, serpentine_k=serp,
                                 num_sms=persistent_sms(a, cl))
            row = {"shape": [m, n, k], "config": label, "persistent_sms": cfg.num_sms}
            try:
                c[...] = float("nan")
                prepare_gemm_hopper_ws(a, b, c, config=cfg)[1]()
                err = _rel_err(c, ref)
                launches = [prepare_gemm_hopper_ws(*s, config=cfg)[1] for s in ops.sets]
                t_k, t_c, _ = time_alternating(launches, [(lambda s=s: ops.cublas(*s)) for s in ops.sets], rounds)
                t = statistics.median(t_k)
                row.update(kernel_ms=t_k, cublas_ms=t_c, rel_err=err, ratio=statistics.median(t_c) / t)
                print(f"{m}x{n}x{k}  {label:40s} {t:.3f} ms {2 * m * n * k / t / 1e9:6.1f} TF/s "
                      f"ratio {row['ratio']:.3f} (rounds {' '.join(f'{c / k_:.3f}' for c, k_ in zip(t_c, t_k))})"
                      f" err {err:.1e}", flush=True)
            except Exception as exc:          # keep going: a refused or failing config is a result too
                row["error"] = repr(exc)[:400]
                print(f"{m}x{n}x{k}  {label:40s} FAILED {row['error'][:200]}", flush=True)
            rows.append(row)
        del ops, a, b, c, ref
    Path(out).write_text(json.dumps(_record(info, rows, []), indent=1))   # gpu, date, versions on top


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
