"""Element types: the NumPy dtype, its name ("float32") or the command line's ("f32")."""

import numpy as np

# The command line's names (bam gather --dtype) and the NumPy types they read.
_BY_CLI_NAME = {
    "u8": np.dtype(np.uint8),
    "u16": np.dtype(np.uint16),
    "u32": np.dtype(np.uint32),
    "u64": np.dtype(np.uint64),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
}
_CLI_NAME = {dtype: name for name, dtype in _BY_CLI_NAME.items()}

SUPPORTED = tuple(str(d) for d in _BY_CLI_NAME.values())


def parse_dtype(dtype):
    """Returns (numpy dtype, command-line name); raises ValueError for anything else.

    Files hold little-endian values, so a big-endian dtype is refused rather than misread.
    """
    if dtype is None:  # NumPy reads None as float64; bam asks for the type
        raise ValueError(_unsupported(dtype))
    if isinstance(dtype, str) and dtype in _BY_CLI_NAME:
        return _BY_CLI_NAME[dtype], dtype
    text = str(dtype)
    if text.startswith("torch."):  # torch.float32 and friends name NumPy's types
        dtype = text[len("torch."):]
    try:
        resolved = np.dtype(dtype)
    except (TypeError, ValueError):
        raise ValueError(_unsupported(dtype)) from None
    if resolved.byteorder == ">":
        raise ValueError(f"dtype {dtype!r} is big-endian; bam reads little-endian files")
    resolved = resolved.newbyteorder("=")
    if resolved not in _CLI_NAME:
        raise ValueError(_unsupported(dtype))
    return resolved, _CLI_NAME[resolved]


def _unsupported(dtype):
    return (f"dtype {dtype!r} is not supported: use one of {', '.join(SUPPORTED)} "
            f"(or {', '.join(_BY_CLI_NAME)})")
