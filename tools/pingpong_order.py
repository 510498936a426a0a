"""Record, on a Hopper GPU, what gemm_hopper_pingpong's consumers do in the first CTAs (its instrumented
build, ``timeline=True``): per consumer warpgroup and tile, the ring stage of each full-barrier wait and the
``%clock64`` of every event; and check C against float64. Writes one JSON:

    python tools/pingpong_order.py results/pingpong_order_h200.json

``tests/kernels/test_kernels_pingpong.py`` checks the record against ``pingpong_schedule`` (ex09 part F and chapter
9's table read that function): the stages, and the ordering barrier's hand-over between the two consumers."""
import datetime
import json
import math
import subprocess
import sys

import cupy as cp
import cutlass
import numpy as np

from layoutlab.kernels.hopper import TIMELINE_COLUMNS, TIMELINE_EVENTS, timeline_buffer_shape
from layoutlab.kernels.hopper_pingpong import HopperPingpongConfig, gemm_hopper_pingpong

M, N, K = 1280, 512, 448          # 20 x 2 tiles of 64 x 256 -> 5 x 2 cluster tiles (4 x 1) over 2 clusters
cfg = HopperPingpongConfig(num_sms=8, timeline=True)
shape = timeline_buffer_shape("gemm_hopper_pingpong", cfg, K)
rng = np.random.default_rng(7)
a_h = rng.standard_normal((M, K)).astype(np.float16)
b_h = rng.standard_normal((N, K)).astype(np.float16)
a, b = cp.asarray(a_h), cp.asarray(b_h)
buf = cp.full(math.prod(shape), -1, dtype=cp.int64)
c = gemm_hopper_pingpong(a, b.T, config=cfg, timeline=buf)
cp.cuda.runtime.deviceSynchronize()
ref = a_h.astype(np.float64) @ b_h.astype(np.float64).T
err = float(np.abs(cp.asnumpy(c).astype(np.float64) - ref).max() / np.abs(ref).max())
raw = cp.asnumpy(buf).reshape(shape)
rows = [[cta, role, tile, slot] + raw[cta, role, tile, slot].tolist()
        for cta, role, tile, slot in np.argwhere(raw[..., TIMELINE_COLUMNS.index("event")] >= 0).tolist()]
gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.strip()
out = {"gpu": gpu.split(",")[0].strip(), "driver": gpu.split(",")[-1].strip(),
       "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
       "versions": {"cupy": cp.__version__, "nvidia-cutlass-dsl": getattr(cutlass, "__version__", "?")},
       "kernel": "gemm_hopper_pingpong", "problem": {"m": M, "n": N, "k": K, "dtype": "float16", "layout": "TN"},
       "config": {"tile_mnk": [cfg.tile_m, cfg.tile_n, cfg.tile_k], "cluster_mn": list(cfg.cluster_mn),
                  "num_sms": cfg.num_sms, "serpentine_k": cfg.serpentine_k},
       "rel_err_vs_float64": err, "buffer_shape": list(shape),
       "columns": ["cta", "role", "tile", "slot"] + list(TIMELINE_COLUMNS), "events": list(TIMELINE_EVENTS),
       "rows": rows}
json.dump(out, open(sys.argv[1], "w"))
print("rel err", err, "rows", len(rows), "shape", shape)
