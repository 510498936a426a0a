"""layoutlab.gpu: detection never raises, and recorded results are labelled as recorded."""

import gzip
import json

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


@pytest.mark.gpu
def test_gpu_is_detected_on_a_gpu_machine():
    assert gpu.available() and gpu.name()
