"""layoutlab.gpu: detection never raises, and recorded results are labelled as recorded."""

import gzip
import json
import os

import pytest

from layoutlab import gpu


def test_detection_is_consistent():
    if gpu.available():
        major, minor = gpu.compute_capability()
        assert major >= 1 and gpu.name() and gpu.reason() == ""
    else:
        assert gpu.compute_capability() is None and gpu.name() is None
        assert gpu.reason(), "an unavailable GPU must come with a reason"
        assert not gpu.is_hopper() and not gpu.is_ampere_or_newer()


def test_disabled_by_environment(monkeypatch):
    gpu._probe.cache_clear()
    monkeypatch.setenv("LAYOUTLAB_NO_GPU", "1")
    try:
        assert not gpu.available()
        assert "LAYOUTLAB_NO_GPU" in gpu.reason()
    finally:
        monkeypatch.delenv("LAYOUTLAB_NO_GPU")
        gpu._probe.cache_clear()


def test_recorded_results_are_labelled(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu, "RESULTS_DIR", tmp_path)
    (tmp_path / "demo.json").write_text(json.dumps({"gpu": "NVIDIA H100 80GB HBM3", "date": "2026-11-22T15:00"}))
    result = gpu.load_result("demo")
    note = gpu.recorded_note(result)
    assert note.startswith("Recorded on NVIDIA H100 80GB HBM3 on 2026-11-22")
    assert "not measured now" in note
    with pytest.raises(FileNotFoundError, match="no recorded result missing.json"):
        gpu.load_result("missing")
    (tmp_path / "big.json.gz").write_bytes(gzip.compress(json.dumps({"gpu": "H100", "events": [1, 2]}).encode()))
    assert gpu.load_result("big")["events"] == [1, 2]


def test_every_recorded_result_names_gpu_date_and_versions():
    files = sorted(gpu.RESULTS_DIR.rglob("*.json")) + sorted(gpu.RESULTS_DIR.rglob("*.json.gz"))
    assert files, f"no recorded results under {gpu.RESULTS_DIR}"
    for path in files:
        data = json.loads(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_text())
        for key in ("gpu", "date", "versions"):
            assert key in data, f"{path.name} lacks {key!r}: recorded results must say where and when"


def _machine(monkeypatch, hopper, any_gpu):
    monkeypatch.setattr(gpu, "is_hopper", lambda: hopper)
    monkeypatch.setattr(gpu, "available", lambda min_cc=None: any_gpu)


def test_live_or_recorded_measures_only_where_it_can(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(gpu, "RESULTS_DIR", tmp_path)
    (tmp_path / "demo.json").write_text(json.dumps({"gpu": "NVIDIA H100 80GB HBM3", "date": "2026-11-22T15:00"}))
    calls = []

    def measure():
        calls.append(1)
        return {"gpu": "NVIDIA H200", "date": "2026-11-28T11:00", "live": True}

    _machine(monkeypatch, hopper=True, any_gpu=True)                  # a Hopper with the packages: measured now
    assert gpu.live_or_recorded("demo", measure, needs=("json",))["live"] and len(calls) == 1
    assert capsys.readouterr().out == "Measured now on NVIDIA H200, 2026-11-28T11:00.\n"
    # a Hopper without a needed package, an Ampere for a Hopper measurement, no GPU: the recording, labelled
    for hopper, any_gpu, needs, kw in ((True, True, ("no_such_package_here",), {}), (False, True, ("json",), {}),
                                       (False, False, ("json",), {"hopper": False})):
        _machine(monkeypatch, hopper, any_gpu)
        rec = gpu.live_or_recorded("demo", measure, needs=needs, **kw)
        assert rec == {"gpu": "NVIDIA H100 80GB HBM3", "date": "2026-11-22T15:00"}
        assert capsys.readouterr().out.startswith("Recorded on NVIDIA H100 80GB HBM3 on 2026-11-22")
    assert len(calls) == 1
    _machine(monkeypatch, hopper=False, any_gpu=True)                 # any GPU will do: measured now
    assert gpu.live_or_recorded("demo", measure, hopper=False, needs=("json",))["live"] and len(calls) == 2
    capsys.readouterr()
    assert gpu.live_or_recorded("nothing", measure, needs=("no_such_package_here",)) is None     # neither
    assert "no recorded nothing.json under" in capsys.readouterr().out
    assert gpu.live_or_recorded("nothing", missing="the model only") is None
    assert capsys.readouterr().out == "the model only\n"


@pytest.mark.gpu
def test_gpu_is_detected_on_a_gpu_machine():
    assert gpu.available() and gpu.name()


def test_recorded_results_ship_in_the_wheel(tmp_path):
    """An installed wheel (no checkout around it) reads the same recorded results: the JSON records travel as
    package data (``lib/layoutlab/results``; the repository's ``results`` links there)."""
    import subprocess
    import sys
    import zipfile
    from pathlib import Path

    import shutil

    repo = Path(__file__).resolve().parents[1]
    src = tmp_path / "src"                                   # a fresh tree: the build leaves nothing in the repo
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(repo / name, src / name)
    shutil.copytree(repo / "lib", src / "lib", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(src),
                            "-w", str(tmp_path / "dist")], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    wheel, = (tmp_path / "dist").glob("layoutlab-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    recorded = sorted(p.name for p in (repo / "lib" / "layoutlab" / "results").glob("*.json*"))
    assert recorded and all(f"layoutlab/results/{n}" in names for n in recorded)
    assert not [n for n in names if n.startswith("layoutlab/results/") and n.endswith((".py", ".md"))]  # data only
    assert not [n for n in names if n.endswith(".py") and "/bench/" in n and n.split("/")[-1] not in
                ("__init__.py", "gemm.py", "timeline.py", "tour.py")]              # the lab stays in tools/

    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)                                   # a pure-Python wheel installs by unpacking
    probe = ("import layoutlab, layoutlab.gpu as g; print(layoutlab.__file__); "
             "print(g.load_result('gemm_h100_bench')['gpu'])")
    run = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(site)})
    assert run.returncode == 0, run.stderr[-3000:]
    where, gpu_name = run.stdout.split("\n")[:2]
    assert where.startswith(str(site))
    assert gpu_name == json.loads((repo / "results" / "gemm_h100_bench.json").read_text())["gpu"]
