"""bam: read data sets larger than memory through NVMe-style queues and a software cache.

    import bam, numpy as np
    with bam.open("features.f32", "float32", shape=(-1, 128)) as feats:
        rows = feats[np.array([3, 17, 42])]      # (3, 128) float32, read on demand
        print(feats.stats())                      # hits, misses, bytes_moved, amplification

docs/python.md has the whole API.
"""

import os

from . import _bam
from ._array import Array, IOError  # noqa: A001
from ._dtypes import SUPPORTED as dtypes
from ._dtypes import parse_dtype

__all__ = ["open", "Array", "IOError", "dtypes", "cuda_build"]
__version__ = "0.1.0"

#: True when the compiled module was built with CUDA (BAM_PYTHON_CUDA=1).
cuda_build = _bam.cuda_build

_BACKENDS = ("file", "emulated-ssd", "host-memory", "host-cached", "device-memory")


def open(path, dtype, shape=None, *, backend="file", cache_bytes=None, line_bytes=4096,  # noqa: A001
         devices=1, device=None, writable=False, faults=None, controller_threads=None,
         copy_batches=None):
    """Opens a binary file of little-endian values as a bam.Array.

    path: a file, or a list of the files of a striped set (backend "file").
    dtype: a NumPy dtype, its name ("float32") or the command line's ("f32"); one of
        uint8 uint16 uint32 uint64 int32 int64 float32 float64 (ValueError otherwise).
    shape: None (1-D, the whole file), n, (n,) or (rows, columns); rows may be -1 (as many
        as the file holds). A row may span cache lines.
    backend: the command line's --backend: "file" (the file itself, read on demand by I/O
        threads), "emulated-ssd" (the file loaded into emulated NVMe devices, where faults
        can be injected), "host-memory" (read in place, no cache), "host-cached" (the file
        loaded into host memory, read through the cache: a miss copies its line from host
        memory, with no controller; read-only), "device-memory" (GPU).
    cache_bytes: the cache's capacity, an int or a size such as "64M" (default: an eighth of
        the data, at least 1 MiB). line_bytes: a power of two from 512 to 64K.
    devices: emulated-ssd devices the data is striped over.
    device: "cpu" (gathers on bam's CPU threads), or "cuda" / "cuda:N" (needs a CUDA build,
        bam.cuda_build): gathers run on GPU N (0 for "cuda") on the caller's current CUDA
        stream, from torch or CuPy GPU indices. None: "cpu".
    writable: allows scatter(); flush() and close() write back to the file.
    faults: emulated-ssd only, the command line's --faults spec ("error-rate=0.01,seed=7").
    controller_threads: emulated-ssd only, host threads serving the emulated devices' queues
        (at most 32 with device="cuda", 8 on the CPU). None: 1.
    copy_batches: emulated-ssd with device="cuda" only, batches of copies into the cache one
        controller thread keeps in flight (1 to 64; 1 waits for each batch). None: 4.
    """
    np_dtype, cli_name = parse_dtype(dtype)
    if backend not in _BACKENDS:
        raise ValueError(f"backend {backend!r} is not one of {', '.join(_BACKENDS)}")
    device, gpu = _pick_device(device)
    paths = [os.fspath(p) for p in path] if isinstance(path, (list, tuple)) else [os.fspath(path)]
    for p in paths:
        if not os.path.exists(p):
            raise FileNotFoundError(2, "No such file (bam.open)", p)
    rows, row_len = _rows_and_length(shape)
    handle = _bam.open(paths, cli_name, rows, row_len, backend, _size(cache_bytes, "cache_bytes"),
                       _size(line_bytes, "line_bytes"), _count(devices, "devices"),
                       bool(writable), "" if faults is None else str(faults),
                       0 if controller_threads is None else _count(controller_threads,
                                                                   "controller_threads"),
                       0 if copy_batches is None else _count(copy_batches, "copy_batches"),
                       gpu)
    full = (handle.rows,) if shape is None or _ndim(shape) == 1 else (handle.rows, row_len)
    return Array(handle, np_dtype, full, backend, ",".join(paths), device)


def _pick_device(device):
    """("cpu", -1) or ("cuda:N", N); accepts a torch.device too."""
    text = "cpu" if device is None else str(device)
    if text == "cpu":
        return "cpu", -1
    if text == "cuda" or text.startswith("cuda:"):
        ordinal = 0 if text == "cuda" else text[len("cuda:"):]
        try:
            ordinal = int(ordinal)
        except ValueError:
            raise ValueError(f"device {device!r} is not 'cpu', 'cuda' or 'cuda:N'") from None
        if ordinal < 0:
            raise ValueError(f"device {device!r}: the GPU ordinal must be 0 or more")
        if not cuda_build:
            raise ValueError(
                "device='cuda' needs bam built with CUDA: BAM_PYTHON_CUDA=1 pip install . "
                "(this build runs device='cpu' only)")
        return f"cuda:{ordinal}", ordinal
    raise ValueError(f"device {device!r} is not 'cpu', 'cuda' or 'cuda:N'")


def _ndim(shape):
    return 1 if isinstance(shape, int) else len(shape)


def _rows_and_length(shape):
    """(rows, elements per row); rows 0 means as many as the file holds."""
    if shape is None:
        return 0, 1
    if isinstance(shape, int):
        shape = (shape,)
    try:
        dims = tuple(int(d) for d in shape)
    except TypeError:
        raise ValueError(f"shape {shape!r} is not None, an int or a tuple of ints") from None
    if len(dims) not in (1, 2):
        raise ValueError(f"shape {shape!r}: bam arrays are 1-D or 2-D (rows of a matrix)")
    if dims[0] == 0 or dims[0] < -1:
        raise ValueError(f"shape {shape!r}: rows must be positive, or -1 for the whole file")
    if len(dims) == 2 and dims[1] <= 0:
        raise ValueError(f"shape {shape!r}: columns must be positive")
    return max(dims[0], 0), (dims[1] if len(dims) == 2 else 1)


def _size(value, name):
    if value is None:
        return 0
    if isinstance(value, str):
        return _bam.parse_size(value)
    if isinstance(value, bool) or int(value) != value or value <= 0:
        raise ValueError(f"{name} must be a positive number of bytes, not {value!r}")
    return int(value)


def _count(value, name):
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    return int(value)
