"""Bad arguments are Python exceptions with a reason; failed reads are bam.IOError."""

import numpy as np
import pytest

import bam


def test_an_index_out_of_range_is_an_index_error_before_any_io(data_file, backend):
    path, _ = data_file("uint32", 1000)
    with bam.open(path, "u32", backend=backend) as a:
        for bad in ([0, 1000], [-1], np.array([2**63 + 5], dtype=np.uint64)):
            with pytest.raises(IndexError, match="out of range"):
                a[bad]
        assert a.stats()["accesses"] == 0


def test_a_row_index_is_checked_against_rows_not_elements(data_file):
    path, _ = data_file("uint32", 1000)
    with bam.open(path, "u32", shape=(-1, 10)) as a:
        with pytest.raises(IndexError, match="100 rows"):
            a[[100]]


@pytest.mark.parametrize("dtype", ["float16", "complex64", "bool", "int8", "u128", "x", ">f4", None])
def test_an_unsupported_dtype_is_a_value_error(data_file, dtype):
    path, _ = data_file("uint8", 100)
    with pytest.raises(ValueError):
        bam.open(path, dtype)


def test_a_non_integer_index_is_a_value_error(data_file):
    path, _ = data_file("uint8", 100)
    with bam.open(path, "u8") as a:
        with pytest.raises(ValueError, match="integers"):
            a[np.array([1.0])]


def test_an_out_array_of_the_wrong_dtype_or_shape_is_a_value_error(data_file):
    path, _ = data_file("float32", 100)
    with bam.open(path, "f32") as a:
        with pytest.raises(ValueError, match="dtype"):
            a.gather([1, 2], out=np.empty(2, dtype=np.float64))
        with pytest.raises(ValueError, match="shape"):
            a.gather([1, 2], out=np.empty(3, dtype=np.float32))
        with pytest.raises(ValueError, match="contiguous"):
            a.gather([1, 2], out=np.empty(4, dtype=np.float32)[::2])


@pytest.mark.parametrize("kwargs, match", [
    ({"shape": (1, 2, 3)}, "1-D or 2-D"),
    ({"shape": (1000,)}, "holds 400 bytes"),
    ({"shape": (0,)}, "rows must be positive"),
    ({"backend": "tape"}, "not one of"),
    ({"backend": "device-memory"}, "device='cuda'"),
    ({"device": "cuda"}, "cuda"),
    ({"line_bytes": 1000}, "line"),
    ({"cache_bytes": "lots"}, "size"),
    ({"devices": 0}, "positive"),
    ({"faults": "error-rate=0.1"}, "emulated-ssd"),
])
def test_bad_open_arguments_are_value_errors_with_a_reason(data_file, kwargs, match):
    if "device" in kwargs and bam.cuda_build:
        pytest.skip("device='cuda' opens in a CUDA build (tests/python/test_cuda.py)")
    path, _ = data_file("float32", 100)
    with pytest.raises((ValueError, NotImplementedError), match=match):
        bam.open(path, "f32", **kwargs)


def test_a_malformed_fault_spec_is_a_value_error(data_file):
    path, _ = data_file("float32", 100)
    with pytest.raises(ValueError, match="error-rate=2"):
        bam.open(path, "f32", backend="emulated-ssd", faults="error-rate=2")


def test_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        bam.open(tmp_path / "nothing", "f32")


def test_a_failed_read_raises_io_error_naming_the_failed_rows(data_file):
    path, ref = data_file("float32", 64 * 1024)
    with bam.open(path, "f32", shape=(-1, 128), backend="emulated-ssd", line_bytes=512,
                  faults="error-rate=0.3,seed=11") as a:
        idx = np.arange(0, 512, 3)
        out = np.zeros((len(idx), 128), dtype=np.float32)
        with pytest.raises(bam.IOError, match="could not be read") as info:
            a.gather(idx, out=out)
        e = info.value
        assert isinstance(e, OSError)
        assert e.rows and set(e.rows) <= set(idx.tolist())
        assert "media" in str(e)
        failed = np.isin(idx, e.rows)
        # Rows that were read are right; failed rows hold the poison value (every bit set).
        np.testing.assert_array_equal(out[~failed], ref.reshape(-1, 128)[idx[~failed]])
        assert (out[failed].view(np.uint32) == 0xFFFFFFFF).any(axis=1).all()
        assert a.stats()["errors"] > 0


def test_every_read_failing_names_every_row(data_file):
    path, _ = data_file("uint64", 4096)
    with bam.open(path, "u64", backend="emulated-ssd", faults="error-rate=1") as a:
        with pytest.raises(bam.IOError) as info:
            a[[5, 1, 5, 4000]]
        assert info.value.rows == [1, 5, 4000]


def test_controller_threads_are_for_emulated_devices_and_at_most_the_queues(data_file):
    path, _ = data_file("uint32", 1000)
    with pytest.raises(ValueError, match="emulated-ssd"):
        bam.open(path, "u32", backend="file", controller_threads=2)
    with pytest.raises(ValueError, match="controller threads must be 1 to the queues"):
        bam.open(path, "u32", backend="emulated-ssd", controller_threads=9)
    with pytest.raises(ValueError, match="positive integer"):
        bam.open(path, "u32", backend="emulated-ssd", controller_threads=0)


def test_copy_batches_are_for_emulated_devices_on_a_gpu(data_file):
    path, _ = data_file("uint32", 1000)
    with pytest.raises(ValueError, match="device='cuda' only"):
        bam.open(path, "u32", backend="emulated-ssd", copy_batches=4)
    with pytest.raises(ValueError, match="emulated-ssd"):
        bam.open(path, "u32", backend="file", copy_batches=4)
    with pytest.raises(ValueError, match="positive integer"):
        bam.open(path, "u32", backend="emulated-ssd", copy_batches=0)


def test_on_the_cpu_a_gather_that_need_not_wait_still_raises_at_the_call(data_file):
    path, ref = data_file("uint64", 4096)
    with bam.open(path, "u64", backend="emulated-ssd", faults="error-rate=1") as a:
        assert a.gathers_always_wait
        with pytest.raises(bam.IOError, match="^3 row") as info:
            a.gather([5, 1, 4000], wait=False)
        assert info.value.rows == [1, 5, 4000]
        a.synchronize()  # nothing in flight: nothing to raise
    with bam.open(path, "u64", backend="host-memory") as a:
        assert a.gathers_always_wait
        np.testing.assert_array_equal(a.gather([7, 2], wait=False), ref[[7, 2]])
        with pytest.raises(IndexError):
            a.gather([4096], wait=False)
