"""bam.Array: an array on storage, read and written through bam's queues and page cache."""

import numpy as np

from . import _bam
from ._frameworks import (device_empty, device_index, device_out, device_values,
                          empty_like_index, host_index, host_values, host_view, on_gpu)

IOError = _bam.IOError  # noqa: A001 (bam.IOError, a subclass of the built-in OSError)

_LISTED_ROWS = 10  # rows named in a message; all of them are in the exception's `rows`


class Array:
    """An array of `shape` (1-D, or rows x columns) whose bytes stay in storage.

    Made by bam.open(). With device="cpu" gathers run on bam's CPU threads; with
    device="cuda" on the GPU, on the caller's current CUDA stream (torch's or CuPy's). The
    GIL is released while they run; calls from several Python threads are serialized per
    array. Close it (or use `with`) to stop its
    I/O threads and write back what a writable array holds; it is also closed when the last
    reference goes.
    """

    def __init__(self, handle, dtype, shape, backend, path, device):
        self._handle = handle
        self.dtype = dtype
        self.shape = shape
        self.backend = backend
        self.path = path
        self.device = device

    # ---- properties ----------------------------------------------------------------------
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def writable(self):
        return self._handle.writable

    @property
    def closed(self):
        return self._handle.closed

    @property
    def description(self):
        """How the array is read: backend, devices, cache, threads."""
        return self._handle.description

    @property
    def gathers_always_wait(self):
        """True when gather(wait=False) still returns only once done: on device="cpu", and for
        backends file and emulated-ssd on a GPU, whose misses host threads serve."""
        return self._handle.gathers_always_wait

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        state = "closed" if self.closed else self.description
        return (f"bam.Array(path={self.path!r}, dtype={self.dtype}, shape={self.shape}, "
                f"device={self.device!r}, {state})")

    # ---- reads and writes ----------------------------------------------------------------
    def gather(self, index, out=None, *, wait=True):
        """Reads the rows named by `index` (any integer array: NumPy, torch, a DLPack
        object, a list, a slice). Returns an array of the index's framework of shape
        index.shape + row shape, or fills `out` (C-contiguous, that shape and dtype).

        device="cuda": a torch or CuPy index on the array's GPU gives a result there, in the
        same framework, gathered on that framework's current CUDA stream (work queued there
        before comes first); the call returns once the result is complete. With wait=False
        it returns once the gather is queued, as a torch operation does: work queued after
        it on that stream sees the result, and the gather's errors (below) are raised by the
        next call on this array, or by synchronize(), which then queues nothing (at most 4
        such gathers are in flight; a fifth waits for the first). A CPU index (NumPy, a CPU
        tensor, a list) is copied to the GPU, gathered there on bam's own stream, and the
        result copied back: a CPU array, as the index; wait has no effect there, nor on
        device="cpu".

        Raises IndexError for an index outside [0, len) before any I/O (negative indices are
        not wrapped), ValueError for a non-integer index or a bad `out`, and bam.IOError
        naming the rows whose reads failed (`rows`); `out` then holds the rows that were read,
        and every bit set in the rows that failed.
        """
        if on_gpu(index):
            return self._gather_device(index, out, wait)
        fw, rows, index_shape = host_index(index, self.shape[0])
        shape = tuple(index_shape) + tuple(self.shape[1:])
        if out is None:
            result = empty_like_index(fw, index, shape, self.dtype)
            view = host_view(result, "out", shape, self.dtype)
        else:
            result = out
            view = host_view(out, "out", shape, self.dtype)
        self._raise_failures(self._handle.gather(rows, view.reshape(-1)), "read", len(rows))
        if fw == "numpy" and out is None and view.ndim == 0:
            return view[()]  # a NumPy scalar, as a[i] of a NumPy array
        return result

    def __getitem__(self, index):
        return self.gather(index)

    def scatter(self, index, values):
        """Writes `values` (broadcast to index.shape + row shape, of the array's dtype) to the
        rows named by `index`, through the cache; flush() or close() writes them to storage.
        A row named twice gets one of its values. Needs writable=True."""
        if not self.writable:
            raise ValueError(f"'{self.path}' was opened read-only: bam.open(..., writable=True)")
        if on_gpu(index):
            self._scatter_device(index, values)
            return
        _, rows, index_shape = host_index(index, self.shape[0])
        shape = tuple(index_shape) + tuple(self.shape[1:])
        data = host_values(values, shape, self.dtype)
        self._raise_failures(self._handle.scatter(rows, data.reshape(-1)), "written", len(rows))

    def __setitem__(self, index, values):
        self.scatter(index, values)

    def synchronize(self):
        """Waits for the gathers queued with wait=False and raises the first one's error
        (IndexError, bam.IOError), as gather does. Returns at once when none is in flight."""
        self._raise_failures(self._handle.synchronize(), "read", 0)

    def flush(self):
        """Writes every dirty line back and flushes the storage (bam.IOError on failure).
        First raises what gathers queued with wait=False left (synchronize)."""
        self.synchronize()
        self._handle.flush()

    def stats(self):
        """The cache's counters for this array: accesses (reads of an element, or of a
        16-byte word where a gather reads rows by words), hits, misses, loads, write_backs,
        evictions, io_commands, bytes_requested, bytes_moved, amplification (bytes moved per
        byte asked), hit_rate, errors. All zero for backend host-memory (no cache)."""
        return self._handle.stats()

    def close(self):
        """Writes back a writable array, then frees the cache and stops the I/O threads.
        Idempotent; the array cannot be used afterwards (ValueError). Raises what gathers
        queued with wait=False left (synchronize), after closing."""
        try:
            if not self._handle.closed:
                self.synchronize()
        finally:
            self._handle.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ---- device="cuda" ----------------------------------------------------------------------
    def _device_buffer(self, index):
        if self.device == "cpu":
            raise ValueError(
                f"the index lives on a GPU, but this bam array was opened with device='cpu': "
                "pass a CPU index, or open the array with device='cuda'")
        buf, index_shape = device_index(index)
        if buf.device != self._handle.gpu_device:
            raise ValueError(f"the index is on GPU {buf.device}; this bam array runs on "
                             f"{self.device}")
        return buf, tuple(index_shape) + tuple(self.shape[1:])

    def _gather_device(self, index, out, wait):
        buf, shape = self._device_buffer(index)
        if out is None:
            result = device_empty(buf, shape, self.dtype)
            ptr = device_out(result, buf, shape, self.dtype)
        else:
            result = out
            ptr = device_out(out, buf, shape, self.dtype)
        n = int(buf.obj.shape[0])
        if n:
            self._raise_failures(
                self._handle.gather_device(buf.ptr, n, ptr, buf.stream, bool(wait)), "read", n)
        return result

    def _scatter_device(self, index, values):
        buf, shape = self._device_buffer(index)
        data, ptr = device_values(values, buf, shape, self.dtype)
        n = int(buf.obj.shape[0])
        if n:
            self._raise_failures(self._handle.scatter_device(buf.ptr, n, ptr, buf.stream),
                                 "written", n)
        del data  # kept alive until the kernel ended (scatter_device waits)

    def _raise_failures(self, failures, verb, total):
        if failures is None:
            return
        rows, first_error, asked, earlier = failures
        listed = ", ".join(str(r) for r in rows[:_LISTED_ROWS])
        more = f" and {len(rows) - _LISTED_ROWS} more" if len(rows) > _LISTED_ROWS else ""
        when = "an earlier gather (wait=False): " if earlier else ""
        message = (f"{when}{len(rows)} row(s) of the {asked or total} asked could not be {verb} "
                   f"('{self.path}', backend {self.backend}): rows {listed}{more}")
        if first_error:
            message += f"; first error: {first_error}"
        error = IOError(message)
        error.rows = list(rows)
        raise error
