"""Scatters write through the cache; flush() and close() put the values in the file."""

import numpy as np
import pytest

import bam
from conftest import CACHED, DTYPES, values


@pytest.mark.parametrize("backend", CACHED)
@pytest.mark.parametrize("dtype", DTYPES)
def test_scattered_rows_reach_the_file_after_flush(data_file, backend, dtype):
    cols = 33
    path, ref = data_file(dtype, 200 * cols)
    ref = ref.reshape(-1, cols).copy()
    idx = np.array([0, 199, 50, 51])
    new = values(dtype, 4 * cols, seed=9).reshape(4, cols)
    with bam.open(path, dtype, shape=(-1, cols), backend=backend, writable=True,
                  line_bytes=512) as a:
        a.scatter(idx, new)
        np.testing.assert_array_equal(a[idx], new)  # read back through the cache
        a.flush()
        ref[idx] = new
        np.testing.assert_array_equal(np.fromfile(path, dtype=dtype).reshape(-1, cols), ref)


@pytest.mark.parametrize("backend", CACHED)
def test_close_writes_back_what_was_not_flushed(data_file, backend):
    path, ref = data_file("int32", 10_000)
    a = bam.open(path, "i32", backend=backend, writable=True)
    a[np.array([3, 9999])] = np.array([-1, 42], dtype=np.int32)
    a.close()
    ref[[3, 9999]] = [-1, 42]
    np.testing.assert_array_equal(np.fromfile(path, dtype=np.int32), ref)


def test_a_scalar_value_is_broadcast_over_the_rows(data_file):
    path, ref = data_file("float64", 100)
    with bam.open(path, "f64", shape=(-1, 10), backend="file", writable=True) as a:
        a[[2, 4]] = 0.5
    np.testing.assert_array_equal(np.fromfile(path, dtype=np.float64).reshape(10, 10)[[2, 4]],
                                  np.full((2, 10), 0.5))


def test_scatter_into_a_read_only_array_is_a_value_error(data_file):
    path, _ = data_file("uint8", 100)
    with bam.open(path, "u8") as a:
        with pytest.raises(ValueError, match="read-only"):
            a[[1]] = np.array([1], dtype=np.uint8)


def test_values_of_another_dtype_or_shape_are_a_value_error(data_file):
    path, ref = data_file("float32", 100)
    with bam.open(path, "f32", shape=(-1, 10), writable=True) as a:
        with pytest.raises(ValueError, match="dtype"):
            a.scatter([1], np.zeros((1, 10), dtype=np.float64))
        with pytest.raises(ValueError, match="shape"):
            a.scatter([1, 2], np.zeros((3, 10), dtype=np.float32))
    np.testing.assert_array_equal(np.fromfile(path, dtype=np.float32), ref)


@pytest.mark.parametrize("backend", ["host-memory", "host-cached"])
def test_memory_backends_cannot_be_opened_writable(data_file, backend):
    path, _ = data_file("uint8", 100)
    with pytest.raises(ValueError, match="read-only"):
        bam.open(path, "u8", backend=backend, writable=True)
