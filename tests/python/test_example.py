"""examples/gnn_features.py runs on the CPU and times every CPU loader in both phases."""

import json
import os
import subprocess
import sys

import pytest

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "gnn_features.py")


def run_example(tmp_path, *args):
    out = tmp_path / "gnn.json"
    subprocess.run([sys.executable, EXAMPLE, "--device", "cpu", "--quick", "--dir", str(tmp_path),
                    "--json", str(out), *args], check=True, capture_output=True, timeout=300)
    return json.loads(out.read_text())


def test_the_gnn_example_times_each_cpu_loader_cold_then_warm(tmp_path):
    doc = run_example(tmp_path, "--controller-threads", "2")
    got = [(r["method"], r["phase"]) for r in doc["results"]]
    assert got == [(m, p) for m in ("bam-file", "bam-emulated-ssd", "bam-host-cached",
                                    "memmap-copy")
                   for p in ("cold", "warm")]
    for r in doc["results"]:
        assert r["batches"] == doc["config"]["batches_per_phase"] and r["rows"] > 0
        if r["method"].startswith("bam-"):
            assert r["stats"]["hits"] + r["stats"]["misses"] > 0
    assert doc["config"]["controller_threads"] == 2


def test_the_gnn_example_refuses_an_unknown_loader(tmp_path):
    with pytest.raises(subprocess.CalledProcessError) as info:
        run_example(tmp_path, "--loaders", "bam-file,nothing")
    assert b"'nothing' is not one of" in info.value.stderr
