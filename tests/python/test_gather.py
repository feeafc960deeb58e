"""Gathers read exactly the file's values (numpy.fromfile is the reference)."""

import os

import numpy as np
import pytest

import bam
from conftest import DTYPES


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_1d_gather_returns_the_files_values_for_every_dtype(data_file, backend, dtype):
    path, ref = data_file(dtype, 20_000)
    idx = np.random.default_rng(1).integers(0, len(ref), 3_000)
    with bam.open(path, dtype, backend=backend, cache_bytes="64K") as a:
        assert a.shape == (len(ref),) and a.dtype == np.dtype(dtype)
        got = a.gather(idx)
        assert got.dtype == ref.dtype and got.shape == idx.shape
        np.testing.assert_array_equal(got, ref[idx])


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_2d_gather_returns_whole_rows_for_every_dtype(data_file, backend, dtype):
    cols = 77  # rows straddle 512-byte lines
    path, ref = data_file(dtype, 300 * cols)
    ref = ref.reshape(-1, cols)
    idx = np.array([[0, 299], [150, 3], [3, 3]])
    with bam.open(path, dtype, shape=(-1, cols), backend=backend, line_bytes=512) as a:
        assert a.shape == (300, cols)
        got = a[idx]
        assert got.shape == (3, 2, cols)
        np.testing.assert_array_equal(got, ref[idx])


def test_a_row_longer_than_a_line_is_read_whole(data_file):
    path, ref = data_file("float32", 40 * 1024)
    ref = ref.reshape(40, 1024)  # 4 KiB rows over 512-byte lines
    with bam.open(path, "f32", shape=(40, 1024), backend="file", line_bytes=512,
                  cache_bytes=16 * 512) as a:
        np.testing.assert_array_equal(a[[39, 0, 17]], ref[[39, 0, 17]])


@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_of_whole_16_byte_words_read_the_same_into_any_out(data_file, backend, dtype):
    cols = 48 // np.dtype(dtype).itemsize  # 48-byte rows: three words, straddling 512-byte lines
    path, ref = data_file(dtype, 500 * cols)
    ref = ref.reshape(-1, cols)
    idx = np.random.default_rng(2).integers(0, 500, 400)
    with bam.open(path, dtype, shape=(-1, cols), backend=backend, line_bytes=512) as a:
        np.testing.assert_array_equal(a[idx], ref[idx])
        if backend != "host-memory":
            assert a.stats()["accesses"] == 3 * len(idx)  # one per 16-byte word
        # An `out` that starts between words is filled element by element.
        store = np.zeros(len(idx) * cols + 1, dtype=dtype)
        out = store[1:].reshape(len(idx), cols)
        a.gather(idx, out=out)
        np.testing.assert_array_equal(out, ref[idx])


def test_command_line_and_numpy_names_pick_the_same_type(data_file):
    path, ref = data_file("float64", 100)
    for name in ("f64", "float64", np.float64, np.dtype("<f8")):
        with bam.open(path, name) as a:
            assert a.dtype == np.float64
            np.testing.assert_array_equal(a[[5]], ref[[5]])


def test_an_explicit_shape_opens_a_prefix_of_the_file(data_file):
    path, ref = data_file("uint32", 1000)
    with bam.open(path, "u32", shape=(10, 50)) as a:
        assert a.shape == (10, 50) and len(a) == 10
        np.testing.assert_array_equal(a[9], ref[450:500])


def test_scalars_lists_slices_and_empty_indices_work_like_numpy(data_file, backend):
    path, ref = data_file("int64", 500)
    with bam.open(path, "i64", backend=backend) as a:
        assert a[7] == ref[7] and np.isscalar(a[7])
        np.testing.assert_array_equal(a[[1, 2, 3]], ref[[1, 2, 3]])
        np.testing.assert_array_equal(a[10:20:3], ref[10:20:3])
        np.testing.assert_array_equal(a[np.array([], dtype=np.int64)], ref[[]])
        np.testing.assert_array_equal(a[np.array([4, 5], dtype=np.uint8)], ref[[4, 5]])


def test_gather_fills_a_given_out_array(data_file):
    path, ref = data_file("float32", 1000)
    out = np.zeros((2, 3), dtype=np.float32)
    with bam.open(path, "f32", backend="emulated-ssd") as a:
        assert a.gather(np.array([[1, 2, 3], [4, 5, 999]]), out=out) is out
    np.testing.assert_array_equal(out, ref[[[1, 2, 3], [4, 5, 999]]])


def test_stats_count_hits_misses_and_bytes_moved(data_file):
    path, ref = data_file("uint64", 4096)
    with bam.open(path, "u64", backend="file", line_bytes=4096) as a:
        a[np.arange(512)]  # one 4 KiB line
        a[np.arange(512)]
        s = a.stats()
    # Probes are hits or misses; a lane's further reads of the line it holds are neither.
    assert s["loads"] == 1 and s["misses"] >= 1 and s["hits"] >= 1 and s["accesses"] == 1024
    assert s["bytes_moved"] == 4096 and s["bytes_requested"] == 2 * 512 * 8
    assert s["amplification"] == pytest.approx(0.5)


def test_a_striped_set_of_files_reads_as_one_array(tmp_path, data_file):
    path, ref = data_file("uint32", 64 * 1024)  # 256 KiB: four 64 KiB stripe units
    raw = ref.view(np.uint8).reshape(4, 65536)
    parts = [tmp_path / "p0", tmp_path / "p1"]
    np.concatenate([raw[0], raw[2]]).tofile(parts[0])  # units alternate between devices
    np.concatenate([raw[1], raw[3]]).tofile(parts[1])
    with bam.open(parts, "u32", backend="file", devices=2) as a:
        idx = np.array([0, 16384, 32768, 65535, 40000])
        np.testing.assert_array_equal(a[idx], ref[idx])


def test_several_controller_threads_serve_an_emulated_ssd(data_file):
    path, ref = data_file("float32", 64 * 1024)
    ref = ref.reshape(-1, 64)
    idx = np.random.default_rng(3).integers(0, len(ref), 2_000)
    with bam.open(path, "f32", shape=(-1, 64), backend="emulated-ssd", devices=2,
                  cache_bytes="64K", line_bytes=512, controller_threads=3) as a:
        np.testing.assert_array_equal(a[idx], ref[idx])
        assert a.stats()["loads"] > 0


def test_host_cached_reads_through_a_small_cache_that_reloads_lines(data_file):
    # A cache with fewer lines than twice the CPU pool's threads (4 per core) is read through,
    # uncached (bam::array::ref_for_launch): size it by the machine, at a 16th of the data.
    lines = max(32, 4 * 4 * (os.cpu_count() or 1))
    path, ref = data_file("float32", 16 * lines * 128)  # 512 B lines of 128 floats
    ref = ref.reshape(-1, 64)
    idx = np.random.default_rng(4).integers(0, len(ref), 6_000)
    with bam.open(path, "f32", shape=(-1, 64), backend="host-cached", line_bytes=512,
                  cache_bytes=lines * 512) as a:
        np.testing.assert_array_equal(a[idx], ref[idx])
        s = a.stats()
        assert "host memory, each miss copied" in a.description
    assert s["loads"] > 2 * lines and s["evictions"] > 0 and s["errors"] == 0
    assert s["bytes_moved"] == 512 * s["loads"]
