"""device="cuda": gathers and scatters with torch and CuPy GPU tensors, on the caller's current
CUDA stream, checked against numpy.fromfile. Skipped without a CUDA build or a GPU."""

import numpy as np
import pytest

import bam
from conftest import DTYPES

if not bam.cuda_build:
    pytest.skip("bam was built without CUDA (BAM_PYTHON_CUDA=1 pip install .)",
                allow_module_level=True)


def _gpu_present():
    try:
        import torch

        if torch.cuda.is_available():
            return True
    except ImportError:
        pass
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 (no CuPy, or no driver)
        return False


if not _gpu_present():
    pytest.skip("no GPU (torch or CuPy sees none)", allow_module_level=True)

GPU_BACKENDS = ["file", "emulated-ssd", "host-memory", "host-cached", "device-memory"]


class Torch:
    name = "torch"

    def __init__(self):
        self.torch = pytest.importorskip("torch")
        if not self.torch.cuda.is_available():
            pytest.skip("torch sees no GPU")

    def index(self, host):
        return self.torch.from_numpy(np.ascontiguousarray(host)).cuda()

    def values(self, host):
        dtype = getattr(self.torch, host.dtype.name, None)
        if dtype is None:
            pytest.skip(f"this torch has no {host.dtype}")
        return self.torch.from_numpy(np.ascontiguousarray(host).view(np.uint8)).cuda().view(
            dtype).reshape(host.shape)

    def host(self, x):
        assert isinstance(x, self.torch.Tensor) and x.is_cuda
        x = x.cpu()
        try:
            return x.numpy()
        except (TypeError, RuntimeError):  # unsigned types older torch cannot hand to NumPy
            return np.from_dlpack(x)

    def stream(self):
        return self.torch.cuda.Stream()

    def on(self, stream):
        return self.torch.cuda.stream(stream)

    def synchronize(self, stream):
        stream.synchronize()

    def need(self, dtype):
        if getattr(self.torch, np.dtype(dtype).name, None) is None:
            pytest.skip(f"this torch has no {dtype}")


class CuPy:
    name = "cupy"

    def __init__(self):
        self.cupy = pytest.importorskip("cupy")

    def index(self, host):
        return self.cupy.asarray(host)

    def values(self, host):
        return self.cupy.asarray(host)

    def host(self, x):
        assert isinstance(x, self.cupy.ndarray)
        return self.cupy.asnumpy(x)

    def stream(self):
        return self.cupy.cuda.Stream()  # a blocking stream: orders against the legacy one

    def on(self, stream):
        return stream

    def synchronize(self, stream):
        stream.synchronize()

    def need(self, dtype):
        pass


@pytest.fixture(params=["torch", "cupy"])
def fw(request):
    return Torch() if request.param == "torch" else CuPy()


@pytest.mark.parametrize("backend", GPU_BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_1d_gpu_gather_returns_the_files_values_for_every_dtype(data_file, fw, backend, dtype):
    fw.need(dtype)
    path, ref = data_file(dtype, 20_000)
    idx = np.random.default_rng(1).integers(0, len(ref), 3_000)
    with bam.open(path, dtype, backend=backend, cache_bytes="256K", device="cuda") as a:
        got = a.gather(fw.index(idx))
        assert tuple(got.shape) == idx.shape
        np.testing.assert_array_equal(fw.host(got), ref[idx])


@pytest.mark.parametrize("backend", GPU_BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_2d_gpu_gather_returns_whole_rows_spanning_lines(data_file, fw, backend, dtype):
    fw.need(dtype)
    cols = 300  # rows straddle 512-byte lines
    path, ref = data_file(dtype, 500 * cols)
    ref = ref.reshape(-1, cols)
    idx = np.array([[0, 499], [250, 3], [3, 3]])
    with bam.open(path, dtype, shape=(-1, cols), backend=backend, line_bytes=512,
                  cache_bytes="64K", device="cuda") as a:
        got = a[fw.index(idx)]
        assert tuple(got.shape) == (3, 2, cols)
        np.testing.assert_array_equal(fw.host(got), ref[idx])


def test_a_gpu_gather_fills_out(data_file, fw):
    path, ref = data_file("float32", 64 * 100)
    idx = np.array([7, 0, 99])
    with bam.open(path, "f32", shape=(-1, 64), backend="emulated-ssd", device="cuda") as a:
        out = fw.values(np.zeros((3, 64), dtype=np.float32))
        assert a.gather(fw.index(idx), out=out) is out
        np.testing.assert_array_equal(fw.host(out), ref.reshape(-1, 64)[idx])
        with pytest.raises(ValueError, match="dtype"):
            a.gather(fw.index(idx), out=fw.values(np.zeros((3, 64), dtype=np.float64)))
        with pytest.raises(ValueError, match="shape"):
            a.gather(fw.index(idx), out=fw.values(np.zeros((4, 64), dtype=np.float32)))


@pytest.mark.parametrize("backend", ["file", "emulated-ssd"])
def test_a_gpu_gather_runs_on_the_callers_current_stream(data_file, fw, backend):
    torch = pytest.importorskip("torch") if fw.name == "torch" else None
    path, ref = data_file("int64", 50_000)
    idx = np.random.default_rng(5).integers(0, len(ref), 20_000)
    with bam.open(path, "i64", backend=backend, device="cuda") as a:
        s = fw.stream()
        with fw.on(s):
            real = fw.index(idx)
            index = fw.index(np.zeros_like(idx))
            if torch is not None:
                torch.cuda._sleep(50_000_000)  # the real index lands long after the call
            index[:] = real  # a copy queued on s: bam must wait for it, or read row 0s
            got = a[index]
        fw.synchronize(s)
        np.testing.assert_array_equal(fw.host(got), ref[idx])


def test_a_gpu_gather_on_the_legacy_default_stream(data_file):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    path, ref = data_file("float32", 10_000)
    idx = np.arange(0, 10_000, 7)
    with bam.open(path, "f32", backend="emulated-ssd", device="cuda") as a:
        with torch.cuda.stream(torch.cuda.default_stream()):
            got = a[torch.from_numpy(idx).cuda()]
        np.testing.assert_array_equal(got.cpu().numpy(), ref[idx])


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_a_gpu_index_out_of_range_is_an_index_error_before_any_io(data_file, fw, backend):
    path, _ = data_file("uint32", 1000)
    with bam.open(path, "u32", backend=backend, device="cuda") as a:
        for bad in ([0, 1000], [-1], [5, 2**40, 7]):
            with pytest.raises(IndexError, match="out of range") as info:
                a[fw.index(np.array(bad, dtype=np.int64))]
            assert str(bad[-2] if len(bad) == 3 else bad[-1]) in str(info.value)
        assert a.stats()["accesses"] == 0


@pytest.mark.parametrize("copy_batches", [1, 16, 64])
def test_every_count_of_copy_batches_in_flight_returns_the_files_rows(data_file, fw,
                                                                      copy_batches):
    path, ref = data_file("float32", 256 * 1024)
    rng = np.random.default_rng(copy_batches)
    with bam.open(path, "f32", shape=(-1, 256), backend="emulated-ssd", line_bytes=512,
                  cache_bytes="64K", copy_batches=copy_batches, controller_threads=2,
                  device="cuda") as a:
        for _ in range(4):
            idx = rng.integers(0, 1024, 3000)
            np.testing.assert_array_equal(fw.host(a[fw.index(idx)]), ref.reshape(-1, 256)[idx])
        with pytest.raises(ValueError, match="1 to 64"):
            bam.open(path, "f32", backend="emulated-ssd", copy_batches=65, device="cuda")


def test_a_failed_gpu_read_raises_io_error_naming_the_failed_rows(data_file, fw):
    path, ref = data_file("float32", 64 * 1024)
    with bam.open(path, "f32", shape=(-1, 128), backend="emulated-ssd", line_bytes=512,
                  faults="error-rate=0.3,seed=11", device="cuda") as a:
        idx = np.arange(0, 512, 3)
        out = fw.values(np.zeros((len(idx), 128), dtype=np.float32))
        with pytest.raises(bam.IOError, match="could not be read") as info:
            a.gather(fw.index(idx), out=out)
        e = info.value
        assert e.rows and set(e.rows) <= set(idx.tolist())
        failed = np.isin(idx, e.rows)
        got = fw.host(out)
        np.testing.assert_array_equal(got[~failed], ref.reshape(-1, 128)[idx[~failed]])
        assert (got[failed].view(np.uint32) == 0xFFFFFFFF).any(axis=1).all()


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_gathers_that_do_not_wait_return_the_files_rows(data_file, fw, backend):
    path, ref = data_file("float32", 256 * 4096)
    rows = ref.reshape(-1, 256)
    rng = np.random.default_rng(8)
    with bam.open(path, "f32", shape=(-1, 256), backend=backend, cache_bytes="2M",
                  device="cuda") as a:
        s = fw.stream()
        with fw.on(s):
            # More gathers than are in flight at once: the fifth waits for the first. The later
            # ones ask for more rows than a call's failure marks first hold (8K), so these grow
            # while earlier gathers may still run.
            idx = [rng.integers(0, len(rows), 700 + 900 * k) for k in range(11)]
            got = [a.gather(fw.index(i), wait=False) for i in idx]
        a.synchronize()
        fw.synchronize(s)
        for i, g in zip(idx, got):
            np.testing.assert_array_equal(fw.host(g), rows[i])


def test_gathers_that_do_not_wait_on_two_streams_return_the_files_rows(data_file, fw):
    path, ref = data_file("int64", 50_000)
    rng = np.random.default_rng(9)
    with bam.open(path, "i64", backend="host-cached", device="cuda") as a:
        streams = [fw.stream(), fw.stream()]
        idx, got = [], []
        for k in range(6):
            with fw.on(streams[k % 2]):
                idx.append(rng.integers(0, len(ref), 5000))
                got.append(a.gather(fw.index(idx[-1]), wait=False))
        a.synchronize()
        for s in streams:
            fw.synchronize(s)
        for i, g in zip(idx, got):
            np.testing.assert_array_equal(fw.host(g), ref[i])


@pytest.mark.parametrize("backend", ["host-cached", "host-memory"])
def test_an_index_out_of_range_in_a_gather_that_did_not_wait_is_raised_by_the_next_call(
        data_file, fw, backend):
    path, ref = data_file("uint32", 1000)
    with bam.open(path, "u32", backend=backend, device="cuda") as a:
        assert not a.gathers_always_wait
        a.gather(fw.index(np.array([3, 1000, 4], dtype=np.int64)), wait=False)
        with pytest.raises(IndexError, match=r"earlier gather.*index 1000 \(position 1\)"):
            a[fw.index(np.array([1, 2], dtype=np.int64))]  # raises instead, queues nothing
        assert a.stats()["accesses"] == 0
        np.testing.assert_array_equal(fw.host(a[fw.index(np.array([1, 2]))]), ref[[1, 2]])
        a.gather(fw.index(np.array([-5], dtype=np.int64)), wait=False)
        with pytest.raises(IndexError, match="earlier gather.*negative indices"):
            a.synchronize()
        a.synchronize()  # reported once


@pytest.mark.parametrize("backend", ["file", "emulated-ssd"])
def test_a_gather_served_by_host_threads_waits_even_when_asked_not_to(data_file, fw, backend):
    # Its kernel's misses wait for host threads' copies: it is never left running.
    path, ref = data_file("uint32", 1000)
    with bam.open(path, "u32", backend=backend, device="cuda") as a:
        assert a.gathers_always_wait
        with pytest.raises(IndexError, match="index 1000 .position 1.") as info:
            a.gather(fw.index(np.array([3, 1000, 4], dtype=np.int64)), wait=False)
        assert "earlier" not in str(info.value)
        assert a.stats()["accesses"] == 0
        got = a.gather(fw.index(np.array([7, 2, 999], dtype=np.int64)), wait=False)
        a.synchronize()  # nothing left to report
        np.testing.assert_array_equal(fw.host(got), ref[[7, 2, 999]])


def test_a_failed_read_of_a_gather_asked_not_to_wait_on_emulated_ssd_is_raised_by_it(
        data_file, fw):
    path, ref = data_file("float32", 64 * 1024)
    with bam.open(path, "f32", shape=(-1, 128), backend="emulated-ssd", line_bytes=512,
                  faults="error-rate=0.3,seed=11", device="cuda") as a:
        idx = np.arange(0, 512, 3)
        out = fw.values(np.zeros((len(idx), 128), dtype=np.float32))
        with pytest.raises(bam.IOError, match=f"of the {len(idx)} asked") as info:
            a.gather(fw.index(idx), out=out, wait=False)
        e = info.value
        assert "earlier" not in str(e)
        assert e.rows and set(e.rows) <= set(idx.tolist())
        failed = np.isin(idx, e.rows)
        np.testing.assert_array_equal(fw.host(out)[~failed], ref.reshape(-1, 128)[idx[~failed]])
        a.synchronize()  # reported once, by the gather


def test_close_raises_what_a_gather_that_did_not_wait_left(data_file, fw):
    path, _ = data_file("uint32", 1000)
    a = bam.open(path, "u32", backend="host-cached", device="cuda")
    a.gather(fw.index(np.array([7, 5000], dtype=np.int64)), wait=False)
    with pytest.raises(IndexError, match="earlier gather.*index 5000"):
        a.close()
    assert a.closed


@pytest.mark.parametrize("backend", ["file", "emulated-ssd"])
def test_a_gpu_scatter_is_written_back_to_the_file(data_file, fw, backend):
    cols = 10
    path, ref = data_file("float32", 1000 * cols)
    ref = ref.reshape(-1, cols).copy()
    idx = np.array([3, 999, 0])
    new = np.arange(3 * cols, dtype=np.float32).reshape(3, cols)
    with bam.open(path, "f32", shape=(-1, cols), backend=backend, writable=True,
                  device="cuda") as a:
        a[fw.index(idx)] = fw.values(new)
        np.testing.assert_array_equal(fw.host(a[fw.index(idx)]), new)
        a.scatter(fw.index(np.array([500])), 7.0)  # a number broadcasts to the row
        a.flush()
    ref[idx] = new
    ref[500] = 7.0
    np.testing.assert_array_equal(np.fromfile(path, dtype=np.float32).reshape(-1, cols), ref)


def test_a_cpu_index_on_a_gpu_array_gives_a_cpu_result(data_file):
    path, ref = data_file("uint16", 5000)
    with bam.open(path, "u16", backend="emulated-ssd", device="cuda") as a:
        got = a[np.array([4999, 0, 17])]
        assert isinstance(got, np.ndarray)
        np.testing.assert_array_equal(got, ref[[4999, 0, 17]])
        with pytest.raises(IndexError):
            a[[5000]]


def test_a_gpu_index_on_a_cpu_array_is_a_value_error(data_file, fw):
    path, _ = data_file("uint8", 100)
    with bam.open(path, "u8") as a:
        with pytest.raises(ValueError, match="device='cuda'"):
            a[fw.index(np.array([1]))]


def test_gpu_stats_count_the_cache(data_file, fw):
    path, _ = data_file("uint64", 100_000)
    with bam.open(path, "u64", backend="file", device="cuda") as a:
        a[fw.index(np.arange(0, 100_000, 97))]
        s = a.stats()
        assert s["misses"] > 0 and s["bytes_moved"] > 0


def test_the_pyg_feature_store_hands_back_gpu_tensors(data_file):
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch_geometric")
    import bam.pyg

    path, ref = data_file("float32", 128 * 200)
    with bam.open(path, "f32", shape=(-1, 128), backend="emulated-ssd", device="cuda") as a:
        store = bam.pyg.FeatureStore({("node", "x"): a})
        got = store.get_tensor(group_name="node", attr_name="x", index=torch.tensor([5, 0, 199]))
        assert got.is_cuda and tuple(got.shape) == (3, 128)
        np.testing.assert_array_equal(got.cpu().numpy(), ref.reshape(-1, 128)[[5, 0, 199]])
