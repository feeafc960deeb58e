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
        "pass a CPU index (bam gathers on the CPU in this build)")


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
