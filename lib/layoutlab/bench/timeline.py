"""Record the Hopper GEMMs' pipeline timeline on the GPU (the record's format, its checks and summaries are
:mod:`layoutlab.kernels.timeline`).

``python -m layoutlab.bench.timeline OUT.json [--kernels ...]`` (Hopper GPU) checks the instrumented kernels against
float64 (and bitwise against the uninstrumented build) and records a 4096^3 bf16 timeline of each.
"""

import argparse
import dataclasses
import json
import math
import sys
from pathlib import Path

from ..errors import LayoutError
from ..kernels.hopper import timeline_buffer_shape
from ..kernels.timeline import (KERNELS, decode_timeline, format_summary, pipeline_stages, summarize_timeline,
                                timeline_config, validate_timeline)
from . import gemm

__all__ = ["record_timeline", "main"]


def _kernel_name(name):
    if name not in KERNELS:
        raise LayoutError(f"timeline: unknown kernel {name!r}; the instrumented kernels are {list(KERNELS)}")
    return name


def _operands(m, n, k, dtype, seed):
    """A (M, K) and B (K, N) K-major (TN), C (M, N), standard-normal, on the GPU (torch for bf16, else cupy)."""
    return gemm.Operands("torch" if dtype == "bfloat16" else "cupy", dtype, m, n, k, 1, seed=seed).sets[0]


def _kernel_fn(kernel_name):
    from .. import kernels
    return getattr(kernels, _kernel_name(kernel_name))


def _sm_count():
    import cupy
    return cupy.cuda.Device().attributes["MultiProcessorCount"]


def record_timeline(kernel_name, m, n, k, *, dtype="bfloat16", config=None, runs=3, seed=0, info=None):
    """Run the instrumented ``kernel_name`` on an M x N x K TN problem ``runs`` times (the buffer keeps the last);
    return the JSON-able record ``{"gpu", "date", "versions", "kernel", "config", "problem", "clock", "events"}``
    (events as :func:`decode_timeline`). GPU only."""
    import cupy
    config = config or timeline_config(kernel_name, num_sms=_sm_count())
    if not config.timeline:
        raise LayoutError(f"record_timeline: config.timeline is False; pass a config with timeline=True")
    info = info or gemm.gpu_info()
    a, b, c = _operands(m, n, k, dtype, seed)
    shape = timeline_buffer_shape(kernel_name, config, k)
    buf = cupy.full(math.prod(shape), -1, dtype=cupy.int64)
    fn = _kernel_fn(kernel_name)
    for _ in range(runs):
        fn(a, b, c, config=config, timeline=buf)
    cupy.cuda.runtime.deviceSynchronize()
    events, clock = decode_timeline(cupy.asnumpy(buf), kernel_name, config, k)
    cfg = dataclasses.asdict(config)
    cfg.update(cluster_mn=list(cfg["cluster_mn"]), stages=pipeline_stages(kernel_name, config),
               roles=["producer"] + [f"consumer {r}" for r in range(shape[1] - 1)], recorded_ctas=shape[0],
               recorded_tiles_per_cta=shape[2])
    return {"gpu": info.get("gpu"), "date": info.get("date"), "versions": gemm._versions(info),
            "kernel": kernel_name, "config": cfg,
            "problem": {"m": m, "n": n, "k": k, "dtype": dtype, "layout": "TN",
                        "k_tiles": math.ceil(k / config.tile_k)},
            "clock": clock, "events": events}


def _check_correctness(kernel_name, m, n, k, seed=1):
    """Instrumented kernel vs float64 (relative Frobenius error) and vs the uninstrumented build (bitwise: the
    stamps must not change the arithmetic), bf16, standard-normal data."""
    import cupy
    import torch
    a, b, c_on = _operands(m, n, k, "bfloat16", seed)
    c_off = torch.empty_like(c_on)
    cfg_on = timeline_config(kernel_name, num_sms=_sm_count())
    cfg_off = dataclasses.replace(cfg_on, timeline=False)
    buf = cupy.full(math.prod(timeline_buffer_shape(kernel_name, cfg_on, k)), -1, dtype=cupy.int64)
    fn = _kernel_fn(kernel_name)
    fn(a, b, c_on, config=cfg_on, timeline=buf)
    fn(a, b, c_off, config=cfg_off)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    err = float(torch.linalg.norm(c_on.double() - ref) / torch.linalg.norm(ref))
    same, nan = bool(torch.equal(c_on, c_off)), bool(torch.isnan(c_on).any())
    written = int((cupy.asnumpy(buf) >= 0).sum())
    return {"kernel": kernel_name, "m": m, "n": n, "k": k, "dtype": "bfloat16", "rel_err_vs_float64": err,
            "identical_to_uninstrumented": same, "nan": nan, "words_written": written,
            "ok": err < 1e-2 and same and not nan and written > 0}


def main(argv=None):
    parser = argparse.ArgumentParser(description="Record the Hopper GEMMs' pipeline timeline (GPU).")
    parser.add_argument("out", type=Path, help="JSON file to write")
    parser.add_argument("--size", default="4096,4096,4096", help="M,N,K of the recorded problem")
    parser.add_argument("--check-size", default="1000,1032,1096", help="M,N,K of the correctness check")
    parser.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated instrumented kernels")
    args = parser.parse_args(argv)
    kernels = [_kernel_name(name) for name in args.kernels.split(",")]
    m, n, k = (int(x) for x in args.size.split(","))
    cm, cn, ck = (int(x) for x in args.check_size.split(","))
    info = gemm.gpu_info()
    checks, records, problems = [], [], []

    def problem(text):
        problems.append(text)
        print(text, flush=True)

    # One kernel's failure must not lose the other's data: everything is caught, reported and recorded.
    for name in kernels:
        try:
            c = _check_correctness(name, cm, cn, ck)
            print(f"check {name} {cm}x{cn}x{ck} bf16 (timeline on): rel err vs float64 "
                  f"{c['rel_err_vs_float64']:.2e}, identical to the uninstrumented build: "
                  f"{c['identical_to_uninstrumented']}, words written {c['words_written']}", flush=True)
        except Exception as err:                       # noqa: BLE001 - reported and recorded
            c = {"kernel": name, "ok": False, "error": f"{type(err).__name__}: {err}"}
            print(f"check {name} FAILED: {c['error']}", flush=True)
        checks.append(c)
    for name in kernels:
        try:
            rec = record_timeline(name, m, n, k, info=info)
        except Exception as err:                       # noqa: BLE001
            problem(f"record {name}: {type(err).__name__}: {err}")
            continue
        records.append(rec)
        try:
            counts = validate_timeline(rec)
        except LayoutError as err:
            problems.append(str(err))
            counts = f"FAILED: {err}"
        print(f"recorded {name} {m}x{n}x{k}: {len(rec['events'])} events, clock {rec['clock']}; "
              f"validate: {counts}", flush=True)
        try:
            print(format_summary(summarize_timeline(rec)), flush=True)
        except Exception as err:                       # noqa: BLE001
            problem(f"summary {name}: {type(err).__name__}: {err}")
    ok = all(c["ok"] for c in checks) and not problems and len(records) == len(kernels)
    out = {"gpu": info.get("gpu"), "date": info.get("date"), "versions": gemm._versions(info), "info": info,
           "checks": checks, "problems": problems, "records": records}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(_dump(out))
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KiB); checks {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


def _dump(out):
    """JSON with one event per line (readable diffs, ~100 bytes an event)."""
    head = {key: value for key, value in out.items() if key != "records"}
    parts = []
    for rec in out["records"]:
        meta = {key: value for key, value in rec.items() if key != "events"}
        body = ",\n".join(json.dumps(e, separators=(",", ":")) for e in rec["events"])
        parts.append(json.dumps(meta, indent=1)[:-2] + ',\n "events": [\n' + body + "\n]}")
    return json.dumps(head, indent=1)[:-2] + ',\n "records": [\n' + ",\n".join(parts) + "\n]}\n"


if __name__ == "__main__":
    sys.exit(main())
