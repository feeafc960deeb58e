"""Arrays free everything they hold: close(), `with`, and the last reference going."""

import gc
import os
import weakref

import numpy as np
import pytest

import bam


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _threads():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("Threads:"))


def _fds():
    return len(os.listdir("/proc/self/fd"))


def test_with_closes_the_array_and_a_closed_array_refuses_work(data_file):
    path, _ = data_file("uint32", 100)
    with bam.open(path, "u32") as a:
        assert not a.closed
    assert a.closed
    a.close()  # idempotent
    for call in (lambda: a[[1]], a.stats, a.flush):
        with pytest.raises(ValueError, match="closed"):
            call()


def test_an_array_is_freed_when_its_last_reference_goes(data_file):
    path, _ = data_file("uint32", 100)
    threads = _threads()
    a = bam.open(path, "u32", backend="emulated-ssd")
    assert _threads() > threads  # its workers and controller run
    gone = weakref.ref(a)
    del a
    gc.collect()
    assert gone() is None
    assert _threads() == threads


def test_a_gathered_result_outlives_its_array(data_file):
    path, ref = data_file("float32", 100)
    with bam.open(path, "f32") as a:
        got = a[[1, 2]]
    del a
    gc.collect()
    np.testing.assert_array_equal(got, ref[[1, 2]])


def _open_many(path, backend, count, gather_every):
    for i in range(count):
        a = bam.open(path, "u32", backend=backend, cache_bytes="64K")
        if i % gather_every == 0:
            a[[i % 1000]]
        if i % 2:
            a.close()
        del a  # every other one freed by reference counting alone


@pytest.mark.parametrize("backend, count", [("emulated-ssd", 10_000), ("file", 1_000),
                                            ("host-memory", 10_000),
                                            ("host-cached", 10_000)])
def test_many_opens_leak_no_memory_threads_or_files(data_file, backend, count):
    path, _ = data_file("uint32", 1000)
    _open_many(path, backend, 300, 10)  # warm up the allocator and the import
    gc.collect()
    rss, threads, fds = _rss_bytes(), _threads(), _fds()
    _open_many(path, backend, count, 100)
    gc.collect()
    assert _threads() == threads and _fds() == fds
    grown = _rss_bytes() - rss
    # Each open allocates a cache, queues and an image of about 100 KiB or more: a leak of
    # any of them over these opens would grow RSS by far more than this.
    assert grown < 8 << 20, f"RSS grew by {grown >> 10} KiB over {count} opens"
    assert not [o for o in gc.get_objects() if isinstance(o, bam.Array)]
