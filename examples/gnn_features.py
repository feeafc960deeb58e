#!/usr/bin/env python3
"""GNN feature gathers through bam against the usual ways, on mini-batches of a power-law graph.

A Kronecker graph from `bam graph gen` (power-law degrees; without the command line, the same
R-MAT recipe in NumPy), float32 node features (--cols, 128..1024 columns) in a file,
mini-batches sampled by PyG's NeighborLoader (a uniform two-hop sampler in NumPy stands in
where PyG is missing), and each batch's feature rows gathered by:

    bam-file            bam, backend file (the feature file read on demand)
    bam-emulated-ssd    bam, backend emulated-ssd
    bam-host-cached     bam, backend host-cached (features in host memory, pinned on a GPU, read
                        through bam's cache; a miss copies its line itself, no controller)
    memmap-copy         numpy.memmap, fancy-indexed, then copied to the device
    pinned-copy         (GPU) features in pinned host memory, rows picked by the CPU
                        (index_select), then one copy to the GPU
    pinned-uva          (GPU) features in pinned host memory, gathered in place by GPU threads
                        over PCIe (bam's host-memory backend: a UVA gather kernel)
    gpu-resident        (GPU) all features in GPU memory, gathered there (the upper bound)

With --device cuda every loader hands back a torch tensor on the GPU (bam gathers with a
GPU index, on torch's current stream, and returns once the gather is queued, as torch's own
gathers do: wait=False, with each phase's closing synchronize raising any error; --wait makes
every call wait for its kernel; bam-file and bam-emulated-ssd always wait, their misses served
by host threads). Each loader is timed in two phases of different
batches: "cold", just made, with nothing of the features cached (the OS page cache of the
feature file dropped before the loaders that read the file, as for a file larger than host
memory), then "warm", where bam's cache (default a quarter of the features) holds the rows
that power-law sampling comes back to. Prints mini-batches/s and feature GB/s for each loader
and phase (and bam's hit rate) and writes JSON (bench/results style).

    python examples/gnn_features.py --device cpu --quick     # CPU-only smoke run
    python examples/gnn_features.py --scale 22 --cols 512     # on the GPU machine
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import bam


def find_cli(given):
    for c in ([given] if given else []) + ["build/gpu/bam", "build/cpu/bam", shutil.which("bam") or ""]:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    if given:
        sys.exit(f"--bam {given}: not an executable")
    return None


def rmat_graph(scale, edge_factor=16, seed=1):
    """(offsets, neighbors) of an R-MAT graph (Graph500's a=0.57, b=c=0.19), symmetric, in
    memory: the power-law graph `bam graph gen` writes, for machines without the command line."""
    rng = np.random.default_rng(seed)
    m = edge_factor << scale
    src = np.zeros(m, dtype=np.int64)
    dst = np.zeros(m, dtype=np.int64)
    for bit in range(scale):
        r = rng.random(m)
        down = r >= 0.57 + 0.19  # quadrants c and d: the source bit is 1
        right = ((r >= 0.57) & (r < 0.76)) | (r >= 0.95)  # quadrants b and d
        src |= down.astype(np.int64) << bit
        dst |= right.astype(np.int64) << bit
    perm = rng.permutation(1 << scale)  # no hub at vertex 0
    src, dst = perm[src], perm[dst]
    src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
    order = np.argsort(src, kind="stable")
    ids = dst[order]
    offsets = np.zeros((1 << scale) + 1, dtype=np.uint64)
    np.cumsum(np.bincount(src, minlength=1 << scale), out=offsets[1:])
    return offsets, ids


def read_bcsr(path):
    """(offsets, neighbors) of a .bcsr file (docs/graph-format.md), memory-mapped."""
    head = np.fromfile(path, dtype=np.uint8, count=128)
    if bytes(head[:8]) != b"BAM-BCSR":
        sys.exit(f"{path} is not a .bcsr file")
    n, m = head[16:32].view(np.uint64)
    id_bytes = int(head[32:36].view(np.uint32)[0])
    off_at, _, nb_at, _ = head[48:80].view(np.uint64)
    offsets = np.memmap(path, dtype=np.uint64, mode="r", offset=int(off_at), shape=(int(n) + 1,))
    ids = np.memmap(path, dtype=np.uint64 if id_bytes == 8 else np.uint32, mode="r",
                    offset=int(nb_at), shape=(int(m),))
    return offsets, ids


def numpy_batches(offsets, ids, batch, fanout, count, seed):
    """Node sets of `count` two-hop mini-batches: uniform `fanout` neighbours per hop."""
    rng = np.random.default_rng(seed)
    n = len(offsets) - 1
    for _ in range(count):
        frontier = rng.integers(0, n, batch)
        nodes = [frontier]
        for k in fanout:
            start, end = offsets[frontier].astype(np.int64), offsets[frontier + 1].astype(np.int64)
            deg = end - start
            pick = start[:, None] + (rng.random((len(frontier), k)) * deg[:, None]).astype(np.int64)
            frontier = ids[pick[deg > 0].ravel()].astype(np.int64)
            nodes.append(frontier)
        yield np.unique(np.concatenate(nodes))


def pyg_batches(offsets, ids, batch, fanout, count, seed):
    import torch
    from torch_geometric.data import Data
    from torch_geometric.loader import NeighborLoader

    torch.manual_seed(seed)
    n = len(offsets) - 1
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets).astype(np.int64))
    edge_index = torch.from_numpy(np.stack([src, np.asarray(ids, dtype=np.int64)]))
    loader = NeighborLoader(Data(edge_index=edge_index, num_nodes=n), num_neighbors=list(fanout),
                            batch_size=batch, shuffle=True)
    for k, b in enumerate(loader):
        if k == count:
            return
        yield b.n_id.numpy()


def drop_from_page_cache(path):
    """Evicts the file's pages from the OS page cache (they are clean: the file was synced
    when written), so that a loader's first read of a row comes from the disk, as for a
    feature file larger than host memory."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def stats_delta(after, before):
    """The cache's counters between two stats() calls, with the ratios recomputed."""
    d = {k: v - before.get(k, 0) for k, v in after.items() if k not in ("hit_rate", "amplification")}
    looked = d.get("hits", 0) + d.get("misses", 0)
    d["hit_rate"] = d.get("hits", 0) / looked if looked else 0.0
    asked = d.get("bytes_requested", 0)
    d["amplification"] = d.get("bytes_moved", 0) / asked if asked else 0.0
    return d


def run(name, phases, gather, row_bytes, sync=lambda: None, stats=None):
    """Times `gather` over each phase's batches in turn, "cold" first (nothing of the features
    cached: the loader has just been made and the OS page cache dropped where it reads the
    file) then "warm" (other batches from the same sampler: the cache holds the rows that
    power-law sampling comes back to). One row first, untimed: a loader's first call may load
    its kernels (CUDA loads modules lazily); one row warms next to nothing of a cache."""
    gather(phases[0][1][0][:1])
    sync()
    out = []
    for phase, batches in phases:
        before = stats() if stats else None
        rows = 0
        start = time.perf_counter()
        for nodes in batches:
            gather(nodes)
            rows += len(nodes)
        sync()
        seconds = time.perf_counter() - start
        r = {"method": name, "phase": phase, "batches": len(batches), "rows": rows,
             "seconds": seconds, "batches_per_s": len(batches) / seconds,
             "feature_gb_per_s": rows * row_bytes / seconds / 1e9}
        hit = ""
        if stats:
            r["stats"] = stats_delta(stats(), before)
            hit = f" hit rate {r['stats']['hit_rate']:.3f}"
        print(f"{name:18s} {phase:5s} {r['batches_per_s']:10.1f} batches/s "
              f"{r['feature_gb_per_s']:8.3f} GB/s{hit}")
        out.append(r)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
    p.add_argument("--quick", action="store_true", help="a small graph and few batches")
    p.add_argument("--scale", type=int, default=20, help="2^SCALE vertices")
    p.add_argument("--cols", type=int, default=256, help="feature columns, 128..1024")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--fanout", type=int, nargs="+", default=[10, 5])
    p.add_argument("--batches", type=int, default=50, help="batches timed in each phase")
    p.add_argument("--cache-bytes", default="256M",
                   help="bam's cache (default: a quarter of the default features)")
    p.add_argument("--line-bytes", default="4K",
                   help="bam's cache line (512 to 64K; a row of --cols floats is cols x 4 bytes)")
    p.add_argument("--controller-threads", type=int,
                   help="bam emulated-ssd: host threads serving its queues (default: bam's)")
    p.add_argument("--copy-batches", type=int,
                   help="bam emulated-ssd on cuda: batches of copies a controller thread keeps "
                        "in flight (default: bam's)")
    p.add_argument("--wait", action="store_true",
                   help="bam's GPU gathers wait for their kernels (default: they return once "
                        "queued, wait=False)")
    p.add_argument("--loaders", help="a comma list of the loaders to time (default: all)")
    p.add_argument("--dir", help="where the graph and features go (default: a temporary folder)")
    p.add_argument("--bam", help="the bam command line (default: build/gpu/bam or build/cpu/bam)")
    p.add_argument("--json", default="bench/results/gnn_features.json")
    a = p.parse_args()
    if not 128 <= a.cols <= 1024:
        p.error("--cols is 128..1024")
    if a.quick:
        a.scale, a.batches, a.batch, a.cache_bytes = 12, 5, 64, "1M"
    work = a.dir or tempfile.mkdtemp(prefix="bam-gnn-")
    os.makedirs(work, exist_ok=True)
    graph, feats = os.path.join(work, f"kron{a.scale}.bcsr"), os.path.join(work, f"x{a.scale}x{a.cols}.f32")
    cli = find_cli(a.bam)
    if os.path.exists(graph):
        offsets, ids = read_bcsr(graph)
        graph_source = "bam graph gen"
    elif cli:
        subprocess.run([cli, "graph", "gen", "--scale", str(a.scale), "--out", graph, "--quiet"],
                       check=True)
        offsets, ids = read_bcsr(graph)
        graph_source = "bam graph gen"
    else:
        print("# no bam command line: an R-MAT graph made in NumPy")
        offsets, ids = rmat_graph(a.scale)
        graph_source = "numpy r-mat"
    n = len(offsets) - 1
    if not os.path.exists(feats):
        rng = np.random.default_rng(1)
        with open(feats, "wb") as f:
            for first in range(0, n, 65536):
                rng.standard_normal((min(65536, n - first), a.cols), dtype=np.float32).tofile(f)
            f.flush()
            os.fsync(f.fileno())  # clean pages: drop_from_page_cache can evict them
    try:
        import torch_geometric  # noqa: F401
        sampler, make = "pyg-neighborloader", pyg_batches
    except ImportError:
        sampler, make = "numpy-uniform (PyG not installed)", numpy_batches
    try:
        batches = list(make(offsets, ids, a.batch, a.fanout, 2 * a.batches, 7))
    except Exception as e:  # noqa: BLE001 (PyG's sampler needs pyg-lib or torch-sparse)
        if make is numpy_batches:
            raise
        print(f"# PyG's NeighborLoader failed ({type(e).__name__}: {e}); the NumPy sampler stands in")
        sampler, make = "numpy-uniform (PyG's NeighborLoader failed)", numpy_batches
        batches = list(make(offsets, ids, a.batch, a.fanout, 2 * a.batches, 7))
    # Two phases of different batches: cold (the loader just made, nothing cached) and warm.
    phases = [("cold", batches[:a.batches]), ("warm", batches[a.batches:])]
    row_bytes = a.cols * 4
    print(f"# {n} nodes, {len(ids)} edges, {a.cols} float32 columns "
          f"({n * row_bytes / 2**20:.0f} MiB; bam's cache {a.cache_bytes}), {a.batches} batches "
          f"a phase (sampler: {sampler}), device {a.device}")
    results = []

    known = ["bam-file", "bam-emulated-ssd", "bam-host-cached", "memmap-copy", "pinned-copy",
             "pinned-uva", "gpu-resident"]
    wanted = a.loaders.split(",") if a.loaders else known
    for w in wanted:
        if w not in known:
            p.error(f"--loaders: {w!r} is not one of {', '.join(known)}")

    def want(name):
        return name in wanted

    def controllers(backend):
        kw = {}
        if backend == "emulated-ssd" and a.controller_threads is not None:
            kw["controller_threads"] = a.controller_threads
        if backend == "emulated-ssd" and a.copy_batches is not None and a.device == "cuda":
            kw["copy_batches"] = a.copy_batches
        return kw

    mm = np.memmap(feats, dtype=np.float32, mode="r", shape=(n, a.cols))
    # Every loader starts from the batch's node ids on the host (as NeighborLoader gives them)
    # and ends with the features on the device: with --device cuda a torch tensor on the GPU
    # (bam gathers with a GPU index, on torch's current stream).
    if a.device == "cpu":
        on_device, index, sync, bam_device = (lambda x: x), (lambda nodes: nodes), (lambda: None), {}
    else:
        import torch

        dev = torch.device("cuda")
        sync = torch.cuda.synchronize
        bam_device = {"device": "cuda"}

        def on_device(x):
            return torch.from_numpy(x).to(dev, non_blocking=True)

        def index(nodes):
            return torch.from_numpy(nodes).to(dev, non_blocking=True)

    for backend in ("file", "emulated-ssd", "host-cached"):
        if not want(f"bam-{backend}"):
            continue
        drop_from_page_cache(feats)
        with bam.open(feats, "float32", shape=(n, a.cols), backend=backend,
                      cache_bytes=a.cache_bytes, line_bytes=a.line_bytes, **bam_device,
                      **controllers(backend)) as x:
            measured = run(f"bam-{backend}", phases,
                           lambda nodes: x.gather(index(nodes), wait=a.wait), row_bytes,
                           lambda: (sync(), x.synchronize()), stats=x.stats)
            if a.device == "cuda":
                for r in measured:
                    r["waited"] = a.wait or x.gathers_always_wait
            results += measured
    if want("memmap-copy"):
        drop_from_page_cache(feats)
        results += run("memmap-copy", phases,
                       lambda nodes: on_device(np.ascontiguousarray(mm[nodes])), row_bytes, sync)
    if a.device == "cpu":
        print("# pinned-copy, pinned-uva and gpu-resident need --device cuda")
    else:
        if want("pinned-copy"):
            host = torch.from_numpy(np.array(mm)).pin_memory()
            results += run("pinned-copy", phases,
                           lambda nodes: host.index_select(0, torch.from_numpy(nodes)).to(
                               dev, non_blocking=True), row_bytes, sync)
            del host
        if want("pinned-uva"):
            # The UVA gather: GPU threads read the rows of pinned host memory in place.
            with bam.open(feats, "float32", shape=(n, a.cols), backend="host-memory",
                          device="cuda") as x:
                measured = run("pinned-uva", phases,
                               lambda nodes: x.gather(index(nodes), wait=a.wait), row_bytes,
                               lambda: (sync(), x.synchronize()))
                results += [dict(r, waited=a.wait or x.gathers_always_wait) for r in measured]
        if want("gpu-resident"):
            resident = torch.from_numpy(np.array(mm)).to(dev)
            results += run("gpu-resident", phases,
                           lambda nodes: resident.index_select(0, index(nodes)), row_bytes, sync)
            del resident
    out = {"benchmark": "gnn_features", "machine": platform.node(), "device": a.device,
           "config": {"scale": a.scale, "nodes": n, "edges": int(len(ids)), "cols": a.cols,
                      "batch": a.batch, "fanout": a.fanout, "batches_per_phase": a.batches,
                      "cache_bytes": a.cache_bytes, "line_bytes": a.line_bytes,
                      "controller_threads": a.controller_threads,
                      "copy_batches": a.copy_batches, "wait": a.wait,
                      "sampler": sampler, "graph": graph_source},
           "results": results}
    os.makedirs(os.path.dirname(a.json) or ".", exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(out, f, indent=2)
    print(f"# wrote {a.json}")


if __name__ == "__main__":
    main()
