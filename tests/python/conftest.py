"""Shared fixtures: small binary files of known values, written with NumPy."""

import numpy as np
import pytest

import bam

DTYPES = ["uint8", "uint16", "uint32", "uint64", "int32", "int64", "float32", "float64"]
CACHED = ["file", "emulated-ssd"]
BACKENDS = CACHED + ["host-memory", "host-cached"]


def values(dtype, count, seed=0):
    """Distinct-looking values of `dtype` (wrapping for the small integer types)."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(count).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=count, dtype=dtype, endpoint=True)


@pytest.fixture
def data_file(tmp_path):
    """make(dtype, count) -> (path, the values written)."""

    def make(dtype, count, name="data.bin", seed=0):
        path = tmp_path / name
        v = values(dtype, count, seed)
        v.tofile(path)
        return str(path), np.fromfile(path, dtype=dtype)

    return make


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@pytest.fixture(autouse=True)
def _no_open_arrays_left():
    yield
    # Each test closes what it opens; anything left would keep I/O threads running.
    import gc

    gc.collect()
    assert not [o for o in gc.get_objects() if isinstance(o, bam.Array) and not o.closed]
