"""The caller's framework: indices in, results out, on the index's framework and device.

Only NumPy is imported here; torch and cupy are recognized by their types' modules, so none
of them is needed unless the caller uses it.
"""

import numpy as np

_INT64_MAX = np.iinfo(np.int64).max


def framework_of(obj):
    """'torch', 'cupy' or 'numpy' (anything else goes through NumPy)."""
    root = type(obj).__module__.split(".")[0]
    return root if root in ("torch", "cupy") else "numpy"


def _device_error(obj):
    return ValueError(
        f"the index lives on {obj.device}, but this bam array was opened with device='cpu': "
        "pass a CPU index, or open the array with device='cuda'")


def host_index(index, rows):
    """Returns (framework, C-contiguous int64 NumPy view or copy of the index, its shape).

    Raises ValueError for a non-integer index and IndexError for one too large for int64.
    """
    fw = framework_of(index)
    if fw == "torch":
        if index.device.type != "cpu":
            raise _device_error(index)
        if index.dtype.is_floating_point or index.dtype.is_complex or str(index.dtype) == "torch.bool":
            raise ValueError(f"the index must hold integers, not {index.dtype}")
        flat = index.detach().contiguous().numpy()
    elif fw == "cupy":
        raise _device_error(index)
    elif isinstance(index, slice):
        flat = np.arange(rows, dtype=np.int64)[index]
    elif hasattr(index, "__dlpack__") and not isinstance(index, np.ndarray):
        flat = np.from_dlpack(index)
    else:
        flat = np.asarray(index)
    if flat.dtype.kind not in "iu":
        raise ValueError(f"the index must hold integers, not {flat.dtype}")
    if flat.dtype == np.uint64 and flat.size and flat.max() > _INT64_MAX:
        raise IndexError(f"index {int(flat.max())} is out of range ({rows} rows)")
    shape = flat.shape
    return fw, np.ascontiguousarray(flat.reshape(-1), dtype=np.int64), shape


def empty_like_index(fw, index, shape, dtype):
    """A new C-contiguous array of `shape` and `dtype` in the index's framework (CPU)."""
    if fw == "torch":
        import torch

        return torch.from_numpy(np.empty(shape, dtype=dtype))
    return np.empty(shape, dtype=dtype)


def host_view(array, name, shape, dtype):
    """A writable, C-contiguous NumPy view of a caller's `out` array; ValueError otherwise."""
    fw = framework_of(array)
    if fw == "torch":
        if array.device.type != "cpu":
            raise ValueError(f"{name} lives on {array.device}; this bam array runs on the CPU")
        if not array.is_contiguous():
            raise ValueError(f"{name} must be contiguous")
        view = array.detach().numpy()
    elif isinstance(array, np.ndarray):
        view = array
    else:
        raise ValueError(f"{name} must be a NumPy array or a torch tensor, not {type(array).__name__}")
    if view.dtype != dtype:
        raise ValueError(f"{name} has dtype {view.dtype}; this array holds {dtype}")
    if tuple(view.shape) != tuple(shape):
        raise ValueError(f"{name} has shape {tuple(view.shape)}; the gather gives {tuple(shape)}")
    if not view.flags.c_contiguous or not view.flags.writeable:
        raise ValueError(f"{name} must be C-contiguous and writable")
    return view


def host_values(values, shape, dtype):
    """A C-contiguous NumPy array of `shape` and `dtype` from a caller's values: arrays and
    tensors must have the array's dtype (no silent conversion); Python numbers and lists are
    converted. Values broadcast to `shape` as in NumPy."""
    fw = framework_of(values)
    if fw == "torch":
        if values.device.type != "cpu":
            raise ValueError(f"values live on {values.device}; this bam array runs on the CPU")
        values = values.detach().contiguous().numpy()
    elif fw == "cupy":
        raise ValueError("values live on a GPU; this bam array runs on the CPU")
    if hasattr(values, "dtype"):
        if np.dtype(values.dtype) != dtype:
            raise ValueError(f"values have dtype {values.dtype}; this array holds {dtype}")
        values = np.asarray(values)
    else:
        values = np.asarray(values, dtype=dtype)
    try:
        values = np.broadcast_to(values, shape)
    except ValueError:
        raise ValueError(
            f"values of shape {values.shape} do not fit the {tuple(shape)} the index names") from None
    return np.ascontiguousarray(values)


# ---- device="cuda": GPU tensors of torch and CuPy ------------------------------------------
_KDL_CUDA = 2  # DLPack's device type of CUDA memory


def on_gpu(obj):
    """True for a torch tensor on a CUDA device, a CuPy array, or a DLPack object in CUDA
    memory (the last is refused by device_index: pass torch or CuPy)."""
    fw = framework_of(obj)
    if fw == "torch":
        return obj.device.type == "cuda"
    if fw == "cupy":
        return True
    dev = getattr(obj, "__dlpack_device__", None)
    if dev is not None and not isinstance(obj, np.ndarray):
        try:
            return dev()[0] == _KDL_CUDA
        except Exception:  # noqa: BLE001 (an object that cannot say: not a GPU one)
            return False
    return False


class DeviceBuffer:
    """A contiguous GPU buffer of the caller's framework: the object (kept alive while bam
    uses it), its address, its device ordinal and the framework's current stream there."""

    def __init__(self, fw, obj, ptr, device, stream):
        self.fw = fw
        self.obj = obj
        self.ptr = ptr
        self.device = device
        self.stream = stream


def _torch_stream(device):
    import torch

    return torch.cuda.current_stream(device).cuda_stream


def _cupy_stream(device):
    import cupy

    with cupy.cuda.Device(device):
        return cupy.cuda.get_current_stream().ptr


def device_index(index):
    """(DeviceBuffer of the index as contiguous int64, its shape) for a torch or CuPy GPU
    index; the conversion runs on the framework's current stream. ValueError otherwise."""
    fw = framework_of(index)
    if fw == "torch":
        import torch

        if index.dtype.is_floating_point or index.dtype.is_complex or index.dtype == torch.bool:
            raise ValueError(f"the index must hold integers, not {index.dtype}")
        shape = tuple(index.shape)
        flat = index.detach().reshape(-1).to(torch.int64).contiguous()
        dev = index.device.index if index.device.index is not None else torch.cuda.current_device()
        return DeviceBuffer(fw, flat, flat.data_ptr(), dev, _torch_stream(index.device)), shape
    if fw == "cupy":
        import cupy

        if index.dtype.kind not in "iu":
            raise ValueError(f"the index must hold integers, not {index.dtype}")
        dev = index.device.id
        with cupy.cuda.Device(dev):
            flat = cupy.ascontiguousarray(index.reshape(-1), dtype=cupy.int64)
        return DeviceBuffer(fw, flat, flat.data.ptr, dev, _cupy_stream(dev)), tuple(index.shape)
    raise ValueError(
        f"a GPU index of type {type(index).__name__}: pass a torch tensor or a CuPy array "
        "(torch.from_dlpack or cupy.from_dlpack take any DLPack object)")


def _torch_dtype(dtype):
    import torch

    t = getattr(torch, np.dtype(dtype).name, None)
    if t is None:
        raise ValueError(f"this torch ({torch.__version__}) has no {np.dtype(dtype).name}: use "
                         "CuPy, or a CPU index")
    return t


def _numpy_dtype(dtype):
    """NumPy's dtype for a torch or CuPy dtype; None for one NumPy lacks (bfloat16)."""
    try:
        return np.dtype(str(dtype).replace("torch.", ""))
    except TypeError:
        return None


def device_empty(index_buffer, shape, dtype):
    """A new C-contiguous array of `shape` and `dtype` in the index's framework and device."""
    if index_buffer.fw == "torch":
        import torch

        return torch.empty(shape, dtype=_torch_dtype(dtype), device=index_buffer.obj.device)
    import cupy

    with cupy.cuda.Device(index_buffer.device):
        return cupy.empty(shape, dtype=dtype)


def _device_dtype_and_ptr(array, name):
    fw = framework_of(array)
    if fw == "torch" and array.device.type == "cuda":
        if not array.is_contiguous():
            raise ValueError(f"{name} must be contiguous")
        dev = array.device.index if array.device.index is not None else 0
        return _numpy_dtype(array.dtype), array.data_ptr(), dev
    if fw == "cupy":
        if not array.flags.c_contiguous:
            raise ValueError(f"{name} must be C-contiguous")
        return np.dtype(array.dtype), array.data.ptr, array.device.id
    raise ValueError(f"{name} must be a torch tensor or CuPy array on the index's GPU, "
                     f"not {type(array).__name__}")


def device_out(out, index_buffer, shape, dtype):
    """The address of a caller's GPU `out` after checking it; ValueError otherwise."""
    if framework_of(out) != index_buffer.fw:
        raise ValueError(f"out is a {framework_of(out)} array; the index is {index_buffer.fw}")
    out_dtype, ptr, dev = _device_dtype_and_ptr(out, "out")
    if dev != index_buffer.device:
        raise ValueError(f"out is on GPU {dev}, the index on GPU {index_buffer.device}")
    if out_dtype != dtype:
        raise ValueError(f"out has dtype {out_dtype}; this array holds {dtype}")
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"out has shape {tuple(out.shape)}; the gather gives {tuple(shape)}")
    return ptr


def device_values(values, index_buffer, shape, dtype):
    """A contiguous GPU array of `shape` and `dtype` on the index's device, in its framework:
    arrays and tensors must have the array's dtype; Python numbers, lists and NumPy arrays
    are copied to the GPU. Values broadcast to `shape`. Returns (object, address)."""
    fw = framework_of(values)
    if hasattr(values, "dtype"):
        if _numpy_dtype(values.dtype) != dtype:
            raise ValueError(f"values have dtype {values.dtype}; this array holds {dtype}")
    if index_buffer.fw == "torch":
        import torch

        tdtype = _torch_dtype(dtype)
        device = index_buffer.obj.device
        if fw == "torch":
            v = values.detach().to(device)
        else:
            v = torch.as_tensor(np.asarray(values, dtype=dtype) if fw == "numpy" else values,
                                device=device)
            v = v.to(tdtype)
        try:
            v = v.expand(shape).contiguous()
        except RuntimeError:
            raise ValueError(f"values of shape {tuple(v.shape)} do not fit the {tuple(shape)} "
                             "the index names") from None
        return v, v.data_ptr()
    import cupy

    with cupy.cuda.Device(index_buffer.device):
        v = cupy.asarray(values, dtype=dtype)
        try:
            v = cupy.broadcast_to(v, shape)
        except ValueError:
            raise ValueError(f"values of shape {v.shape} do not fit the {tuple(shape)} "
                             "the index names") from None
        v = cupy.ascontiguousarray(v)
    return v, v.data.ptr
