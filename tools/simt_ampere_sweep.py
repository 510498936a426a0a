"""Tile sweep for gemm_ampere and sgemm_fast on the GPU machine (tools/simt_ampere_run.sh), with the helpers of
the checkout's tests/kernels/test_kernels_simt_ampere.py:

    python tools/simt_ampere_sweep.py check I N OUT.json   # correctness of every N-th candidate from I
    python tools/simt_ampere_sweep.py time OUT.json        # compile all, wait for $BENCH_WAIT_FOR, time
    python tools/simt_ampere_sweep.py pick TIME.json CHECK.json...   # name the best DEFAULT_CONFIG
"""
import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: (tile, warps, stages, min_ctas, variant); the first is the default. "new": this tree; a commit id: gemm_ampere of
#: that commit (``ab_compare --extract <id> $AMPERE_OLD_DIR``). Runs: results/simt_ampere_notes.md.
AMPERE = [((128, 128, 64), (2, 2), 3, 0, "new"),
          ((128, 128, 64), (2, 2), 3, 0, "96948f5"),
          ((128, 128, 64), (2, 2), 3, 0, "e1868c7"),
          ((128, 128, 32), (2, 2), 4, 0, "e3354bb")]
#: (stages, bK, min_ctas, stage_mn) for sgemm_fast, timed in NT and TN.
SGEMM = [(3, 16, 0, False)]


def _simt_tests():
    """tests/kernels/test_kernels_simt_ampere.py of this checkout, imported from its path."""
    path = REPO / "tests" / "kernels" / "test_kernels_simt_ampere.py"
    spec = importlib.util.spec_from_file_location("test_kernels_simt_ampere", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ampere_label(cfg):
    """The label of a gemm_ampere candidate (tile, warps, stages, min_ctas, variant) in the sweep's JSON.

    >>> ampere_label(((128, 128, 64), (2, 2), 3, 0, "new"))
    'gemm_ampere 128x128x64 w2x2 s=3 mc=0'
    >>> ampere_label(((128, 128, 32), (2, 2), 4, 0, "e3354bb"))
    'gemm_ampere 128x128x32 w2x2 s=4 mc=0 (e3354bb)'
    """
    (m, n, k), (wm, wn), s, mc, variant = cfg
    return f"gemm_ampere {m}x{n}x{k} w{wm}x{wn} s={s} mc={mc}" + ("" if variant == "new" else f" ({variant})")


def ampere(cfg):
    tile, warps, stages, mc, variant = cfg
    if variant != "new":
        import os

        from ab_compare import module
        return module("gemm_ampere", variant, os.environ["AMPERE_OLD_DIR"]).gemm_ampere_configured(
            tile, warps, stages, mc)
    from layoutlab.kernels.ampere import gemm_ampere_configured
    return gemm_ampere_configured(tile, warps, stages, mc)


def check(first, step, out):
    """Odd sizes in TN and NT (NT with alpha/beta), fp16, NaN-prefilled C, float64 reference."""
    tests = _simt_tests()
    TOL, check_gemm = tests.TOL, tests.check_gemm
    res = {}
    for cfg in AMPERE[first::step]:
        kernel, worst, label = ampere(cfg), 0.0, ampere_label(cfg)
        try:
            for (m, n, k) in [(200, 136, 72), (777, 650, 333), (512, 512, 256)]:   # the last one even
                worst = max(worst, check_gemm(kernel, "cupy", "float16", "TN", m, n, k, seed=m),
                            check_gemm(kernel, "cupy", "float16", "NT", m, n, k, alpha=2.0, beta=0.5, seed=n))
            res[label] = {"worst_rel_err": worst, "ok": worst < TOL["float16"]}
        except Exception as exc:
            res[label] = {"error": repr(exc)[:500], "ok": False}
        print(label, res[label], flush=True)
    Path(out).write_text(json.dumps(res, indent=1))


def time_all(out):
    from layoutlab.kernels import sgemm_simple
    from layoutlab.kernels.simt_fast import sgemm_fast_configured
    bench_main = _simt_tests().bench_main
    configs = [("sgemm_simple", sgemm_simple, "float32", 4096, lay) for lay in ("NT", "TN")]
    for stages, bk, mc, smn in SGEMM:
        launcher = sgemm_fast_configured(stages, bk, mc, smn)
        configs += [(f"sgemm_fast s={stages} bK={bk} mc={mc}" + (" stage_mn" if smn else ""), launcher,
                     "float32", 4096, lay) for lay in ("NT", "TN")]
    configs += [(ampere_label(cfg), ampere(cfg), "float16", 8192, "TN") for cfg in AMPERE]
    bench_main(out, configs)


def pick(time_json, check_jsons):
    """Print which gemm_ampere candidate of :data:`AMPERE` to make the default: the fastest (highest ratio to cuBLAS
    in ``time_json``) that passed every check in ``check_jsons``, if "new" and over 3 % faster than the default.

    >>> import json, tempfile
    >>> from pathlib import Path
    >>> tmp = tempfile.TemporaryDirectory(); d = Path(tmp.name)
    >>> default, old = ampere_label(AMPERE[0]), ampere_label(AMPERE[3])      # made-up ratios below
    >>> _ = (d / "time.json").write_text(json.dumps([{"label": default, "ratio": 0.5},
    ...                                              {"label": old, "ratio": 0.6}]))
    >>> _ = (d / "check.json").write_text(json.dumps({default: {"ok": True}, old: {"ok": False}}))
    >>> pick(d / "time.json", [d / "check.json"])          # the faster one failed its check
    pick: default kept (gemm_ampere 128x128x64 w2x2 s=3 mc=0: 0.500; best gemm_ampere 128x128x64 w2x2 s=3 mc=0: 0.500)
    >>> _ = (d / "check.json").write_text(json.dumps({default: {"ok": True}, old: {"ok": True}}))
    >>> pick(d / "time.json", [d / "check.json"])
    pick: an older kernel (e3354bb) was fastest; DEFAULT_CONFIG unchanged
    >>> tmp.cleanup()
    """
    rows = {r["label"]: r for r in json.loads(Path(time_json).read_text()) if "ratio" in r}
    ok = {k: v["ok"] for path in check_jsons for k, v in json.loads(Path(path).read_text()).items()}
    default = ampere_label(AMPERE[0])
    scored = [(rows[ampere_label(c)]["ratio"], c) for c in AMPERE
              if ampere_label(c) in rows and ok.get(ampere_label(c))]
    if not scored or default not in rows:
        print("pick: nothing to compare; DEFAULT_CONFIG unchanged")
        return
    best_ratio, best = max(scored)
    if best_ratio < 1.03 * rows[default]["ratio"]:
        print(f"pick: default kept ({default}: {rows[default]['ratio']:.3f}; best {ampere_label(best)}: "
              f"{best_ratio:.3f})")
        return
    tile, warps, stages, mc, variant = best
    if variant != "new":
        print(f"pick: an older kernel ({variant}) was fastest; DEFAULT_CONFIG unchanged")
        return
    new = f"DEFAULT_CONFIG = dict(tile={tile}, warps={warps}, stages={stages}, min_ctas={mc})"
    print(f"pick: {new}  (ratio {best_ratio:.3f} vs default {rows[default]['ratio']:.3f}); set it in "
          f"lib/layoutlab/kernels/ampere.py to adopt it")


if __name__ == "__main__":
    if sys.argv[1] == "check":
        check(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "time":
        time_all(sys.argv[2])
    elif sys.argv[1] == "pick":
        pick(sys.argv[2], sys.argv[3:])
