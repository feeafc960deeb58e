// `bam vector-gen` writes a vector of seeded random values; `bam vector-add --a A --b B --out C`
// computes C[i] = A[i] + B[i] with kernel threads, BaM's vectorAdd workload (docs/analytics.md):
// emulated-ssd and file read A and B through bam arrays and write C through a writable one
// (write-back cache, then flush); host-memory and device-memory read and write the memory in
// place; tiled is the CPU-centric baseline (the host copies tiles in and out, double buffered).
// C is written under its final name only when it holds exactly A + B; figures go to standard
// error and --json.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <bam/array.hpp>
#include <bam/error.hpp>
#include <bam/platform/atomic.hpp>
#if defined(BAM_HAVE_CUDA)
#include <bam/platform/launch.cuh>  // this file is compiled as CUDA in GPU builds
#endif

#include "bam/commands.hpp"
#include "bam/copy_pacer.hpp"
#include "bam/settle_holds.hpp"
#include "bam/shared_buffer.hpp"
#include "bam/storage_options.hpp"
#include "common/json_writer.hpp"
#include "common/machine_info.hpp"
#include "common/sizes.hpp"
#include "graph/staged_file.hpp"

namespace bam::tools {

namespace {

/// Records that an access failed (cold: out of line, so the add loop stays small).
BAM_HD BAM_NOINLINE void flag_failure(std::uint32_t* failed) {
  // relaxed: a flag the host reads after the launch has finished.
  atomic_ref<std::uint32_t>(*failed).store(1u, order::relaxed);
}

/// C[i] = A[i] + B[i] through bam arrays (cached, or views of memory), over the chunks of a
/// pass (a chunk is a cache line's elements); a chunk with an element that could not be read
/// or stored is flagged in `failed` for the next pass. The `lanes` threads of a group take a
/// chunk at a time, lanes interleaved: on a GPU a warp (its first access of each line its only
/// probe that misses, while the other warps miss on other lines: 32 warps striding one line
/// left a wave of the grid only a few hundred lines loading at once); on the CPU one thread
/// (a worker runs its logical threads one after another, so a stride of one element would
/// touch a new line at every access).
template <class T>
struct add_kernel {
  array_ref<const T> a;
  array_ref<const T> b;
  array_ref<T> c;
  const std::uint64_t* chunks;  // the pass's chunks; null: every chunk
  std::uint64_t chunk_count;
  std::uint64_t chunk_elements;
  std::uint32_t lanes;
  std::uint64_t count;
  std::uint32_t* failed;  // a flag per chunk
  std::uint32_t* cut;     // set when the pass should end early (cuts_pass)

  BAM_HD void operator()(thread_index t) const {
    const std::uint64_t groups = t.count / lanes;
    // Cursors keep each of the chunk's three lines pinned until the chunk is done: a line
    // unpinned between accesses could be evicted while its warp waited for another of its
    // lines, and be read again (with 8 times the cache in data, 15% more bytes moved).
    typename array_ref<const T>::cursor ra(a);
    typename array_ref<const T>::cursor rb(b);
    typename array_ref<T>::cursor wc(c);
    for (std::uint64_t k = t.id / lanes; k < chunk_count; k += groups) {
      const std::uint64_t chunk = chunks ? chunks[k] : k;
      const std::uint64_t first = chunk * chunk_elements;
      const std::uint64_t end = first + chunk_elements < count ? first + chunk_elements : count;
      // relaxed: a hint; after a cut every chunk not done is left to the next pass.
      if (atomic_ref<std::uint32_t>(*cut).load(order::relaxed) != 0) {
        flag_failure(failed + chunk);
        continue;
      }
      for (std::uint64_t i = first + t.id % lanes; i < end; i += lanes) {
        T x{};
        T y{};
        io_status s = ra.try_read(i, x);
        if (s.ok()) s = rb.try_read(i, y);
        if (s.ok()) s = wc.try_store(i, static_cast<T>(x + y));
        if (!s.ok()) {
          flag_failure(failed + chunk);
          // relaxed: a flag the host reads after the launch has finished.
          if (cuts_pass(s)) atomic_ref<std::uint32_t>(*cut).store(1u, order::relaxed);
          break;
        }
      }
      // Pins are not held past the loop, whose lanes may have run different trip counts.
      ra.drop();
      rb.drop();
      wc.drop();
    }
  }
};

/// One tile of the tiled baseline: plain memory, no cache; `run` as in add_kernel.
template <class T>
struct tile_add_kernel {
  const T* a;
  const T* b;
  T* c;
  std::uint64_t count;
  std::uint64_t run;

  BAM_HD void operator()(thread_index t) const {
    for (std::uint64_t r = t.id; r * run < count; r += t.count) {
      const std::uint64_t end = (r + 1) * run < count ? (r + 1) * run : count;
      for (std::uint64_t i = r * run; i < end; ++i) c[i] = static_cast<T>(a[i] + b[i]);
    }
  }
};

constexpr std::uint32_t block_threads = 256;

struct vector_options {
  std::string a;
  std::string b;
  std::string out;
  std::string dtype = "u32";
  std::string json;
  unsigned retries = 3;
  std::string fresh_output = "on";  ///< C's lines zero-filled on a miss instead of read
  storage_options storage;
};

/// What a run did, for the report.
struct add_result {
  double seconds = 0;  ///< the kernel phase: launches, write-back (or the tile loop)
  cache_stats stats;
  std::uint64_t bytes_moved = 0;
  std::uint64_t cache_bytes = 0;
  std::uint64_t tiles = 0;
  std::string where;
  std::string tile_source;  ///< tiled: where the tiles come from (copy_pacer::describe)
};

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// Whether `got` is `want` bit for bit, or both are NaN (a GPU's NaN need not carry the CPU's
/// payload).
template <class T>
bool same_value(T got, T want) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(got) && std::isnan(want)) return true;
  }
  return std::memcmp(&got, &want, sizeof(T)) == 0;
}

/// The first i in [0, n) where c[i] is not a[i] + b[i], or n.
template <class T>
std::uint64_t first_wrong(const T* a, const T* b, const T* c, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    if (!same_value(c[i], static_cast<T>(a[i] + b[i]))) return i;
  }
  return n;
}

[[noreturn]] void fail_wrong(const vector_options& o, std::uint64_t i) {
  throw error("bam vector-add: '" + o.out + "' not written: element " + std::to_string(i) +
              " is not the sum of its inputs");
}

void read_whole(const std::string& path, std::uint8_t* to, std::uint64_t bytes) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  const bool ok = f != nullptr && std::fread(to, 1, bytes, f) == bytes;
  if (f != nullptr) std::fclose(f);
  if (!ok) throw input_error("cannot read " + std::to_string(bytes) + " bytes of '" + path + "'");
}

/// Writes `bytes` from memory to the staged output, syncs it and renames it into place.
void commit_output(graph::staged_file& out, const void* data, std::uint64_t bytes) {
  graph::file_writer writer(out);
  writer.write_raw(data, bytes);
  writer.flush();
  if (::fsync(out.fd()) != 0) {
    throw error("writing '" + out.destination().string() + "': fsync: " + std::strerror(errno));
  }
  out.commit();
}

/// Elements a tile_add_kernel thread adds in a row: 1 on a GPU, 4 KiB of them on the CPU.
template <class T>
std::uint64_t run_of(const data_path& path) {
  return path.gpu() ? 1 : std::max<std::uint64_t>(1, 4096 / sizeof(T));
}

struct add_shape {
  std::uint32_t grid = 1;
  std::uint32_t block = 1;
};

/// A launch of `runs` threads (a thread per run of elements, or per lane of a chunk's group), up
/// to a resident wave; with a cache, at most four lines per concurrent warp: a warp pins three
/// (add_kernel's cursors), and a writable array's launch needs two (array::ref_for_launch).
add_shape shape_for(const data_path& path, std::uint64_t runs) {
  const std::uint64_t wave = (path.gpu() ? 132 * 8 : 1024) * std::uint64_t{block_threads};
  std::uint64_t threads = std::min(runs, wave);
  if (path.cache) {
    const std::uint64_t warps = std::max<std::uint64_t>(1, path.cache->lines() / 4);
    threads = std::min<std::uint64_t>(threads, warps * path.cache->warp_width());
  }
  threads = std::max<std::uint64_t>(threads, 1);
  const std::uint64_t block = std::min<std::uint64_t>(block_threads, threads);
  return {static_cast<std::uint32_t>(threads / block), static_cast<std::uint32_t>(block)};
}

/// Runs the add kernel over arrays a, b, c, then again over the chunks where an access failed
/// (at most `retries` times: the add is idempotent), then flushes c; leaves nothing held and
/// the runtime stopped. Throws bam::error when chunks still failed or the write-back did not
/// succeed.
template <class T>
void add_passes(const vector_options& o, data_path& path, array<const T>& a, array<const T>& b,
                array<T>& c, std::uint64_t n, add_result& r) {
  const bool gpu = path.gpu();
  const std::uint64_t chunk_elements =
      std::max<std::uint64_t>(1, (path.cache ? o.storage.line_bytes : 4096) / sizeof(T));
  const std::uint32_t lanes = gpu ? 32 : 1;
  const std::uint64_t chunks = (n + chunk_elements - 1) / chunk_elements;
  shared_buffer failed(gpu, chunks * 4);
  shared_buffer list(gpu, chunks * 8);
  shared_buffer cut(gpu, 4);
#if defined(BAM_HAVE_CUDA)
  if (gpu) {
    path.runtime->preload({kernel_function<add_kernel<T>>()});
    path.runtime->warm_up([](stream_handle s) { warm_up_launch<add_kernel<T>>(s); });
  }
#endif
  path.start();
  std::vector<std::string> errors;
  auto record = [&](const auto& x) {
    try {
      x.check();
    } catch (const error& e) {
      errors.emplace_back(e.what());
    }
  };
  std::vector<std::uint64_t> todo;
  const auto start = std::chrono::steady_clock::now();
  // A pass cut short that still added lines does not use up a retry (as bam copy's).
  for (unsigned pass = 0, retries = 0; retries <= o.retries; ++pass) {
    std::memset(failed.as<std::uint32_t>(), 0, chunks * 4);
    *cut.as<std::uint32_t>() = 0;
    std::copy(todo.begin(), todo.end(), list.as<std::uint64_t>());
    const std::uint64_t count = pass == 0 ? chunks : todo.size();
    const add_shape shape = shape_for(path, count * lanes);
    const add_kernel<T> k{a.ref_for_launch(shape.grid, shape.block),
                          b.ref_for_launch(shape.grid, shape.block),
                          c.ref_for_launch(shape.grid, shape.block),
                          pass == 0 ? nullptr : list.as<std::uint64_t>(),
                          count,
                          chunk_elements,
                          lanes,
                          n,
                          failed.as<std::uint32_t>(),
                          cut.as<std::uint32_t>()};
    if (!gpu) {
      launch(*path.stream, shape.grid, shape.block, k);
      path.stream->synchronize();
    } else {
#if defined(BAM_HAVE_CUDA)
      launch(path.runtime->stream(), shape.grid, shape.block, k);
      path.runtime->synchronize(path.runtime->stream(), 0, "the vector-add kernel");
#endif
    }
    record(a);
    record(b);
    record(c);
    todo.clear();
    for (std::uint64_t ch = 0; ch < chunks; ++ch) {
      if (failed.as<std::uint32_t>()[ch] != 0) todo.push_back(ch);
    }
    if (todo.empty() || !path.cache) break;
    const bool was_cut = *cut.as<std::uint32_t>() != 0;
    if (!was_cut || todo.size() == count) ++retries;
    // Lines held by commands that timed out cannot be used again until those are done or
    // aborted.
    (void)settle_holds(o.storage, path, c);
    a.clear_failures();
    b.clear_failures();
    c.clear_failures();
    std::fprintf(stderr, "# pass %u: %zu of %" PRIu64 " lines %s (%s); adding them again\n",
                 pass + 1, todo.size(), chunks, was_cut ? "failed or left after a cut" : "failed",
                 errors.empty() ? "no error recorded" : errors.back().c_str());
  }
  const bool flushed =
      !path.cache || (todo.empty() && flush_retrying(o.storage, o.retries, path, c, errors));
  r.seconds = since(start);
  const std::uint64_t held = settle_holds(o.storage, path, c).total();
  if (path.runtime) path.runtime->stop();
  if (held != 0) {
    throw error("bam vector-add: the cache still holds " + std::to_string(held) +
                " buffer(s) 10 s after the add (a leak)");
  }
  if (!todo.empty() || !flushed) {
    throw error("bam vector-add: '" + o.out + "' not written: " +
                (todo.empty() ? std::string("the write-back did not succeed")
                              : std::to_string(todo.size()) + " line(s) still failed after " +
                                    std::to_string(o.retries) + " retries") +
                (errors.empty() ? std::string() : "; first error: " + errors.front()));
  }
}

/// The tiled baseline: tiles of A and B copied into two slots of A/B/C buffers, a kernel per
/// tile, its C copied out; the next tile's copies overlap this tile's kernel. On a GPU each
/// slot has a stream of its own (a slot's next copies queue behind its last copy out); on the
/// CPU the next tile is copied while the workers add this one.
template <class T>
void add_tiled(data_path& path, copy_pacer& pacer, const T* a, const T* b, T* c, std::uint64_t n,
               std::uint64_t budget, add_result& r) {
  const std::uint64_t tile = std::min(n, std::max<std::uint64_t>(1, budget / (6 * sizeof(T))));
  r.tiles = (n + tile - 1) / tile;
  r.cache_bytes = 6 * tile * sizeof(T);
  r.bytes_moved = 3 * n * sizeof(T);
  auto first = [&](std::uint64_t t) { return t * tile; };
  auto length = [&](std::uint64_t t) { return std::min(tile, n - t * tile); };
  const std::uint64_t run = run_of<T>(path);
  const add_shape shape = shape_for(path, (tile + run - 1) / run);
  if (!path.gpu()) {
    std::vector<T> slots(6 * tile);
    auto slot_of = [&](std::uint64_t t) { return slots.data() + (t % 2) * 3 * tile; };
    auto load = [&](std::uint64_t t) {
      pacer.read(2 * length(t) * sizeof(T));
      std::memcpy(slot_of(t), a + first(t), length(t) * sizeof(T));
      std::memcpy(slot_of(t) + tile, b + first(t), length(t) * sizeof(T));
    };
    const auto start = std::chrono::steady_clock::now();
    load(0);
    for (std::uint64_t t = 0; t < r.tiles; ++t) {
      T* s = slot_of(t);
      launch(*path.stream, shape.grid, shape.block,
             tile_add_kernel<T>{s, s + tile, s + 2 * tile, length(t), run});
      if (t + 1 < r.tiles) load(t + 1);  // while the workers add tile t
      path.stream->synchronize();
      std::memcpy(c + first(t), s + 2 * tile, length(t) * sizeof(T));
      (void)pacer.reserve(length(t) * sizeof(T));  // C's write to the devices
    }
    pacer.drain();
    r.seconds = since(start);
    return;
  }
#if defined(BAM_HAVE_CUDA)
  gpu_runtime& rt = *path.runtime;
  device_memory slots(6 * tile * sizeof(T));  // before start(): an allocation waits for kernels
  owned_stream streams[2] = {owned_stream::create_non_blocking(),
                             owned_stream::create_non_blocking()};
  rt.preload({kernel_function<tile_add_kernel<T>>()});
  rt.warm_up([](stream_handle s) { warm_up_launch<tile_add_kernel<T>>(s); });
  path.start();
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t t = 0; t < r.tiles; ++t) {
    T* s = slots.as<T>() + (t % 2) * 3 * tile;
    const stream_handle st = streams[t % 2].get();
    const std::uint64_t bytes = length(t) * sizeof(T);
    pacer.read(2 * bytes);  // the tile's A and B read from the devices first
    copy_async(s, a + first(t), bytes, st);
    copy_async(s + tile, b + first(t), bytes, st);
    launch(st, shape.grid, shape.block,
           tile_add_kernel<T>{s, s + tile, s + 2 * tile, length(t), run});
    copy_async(c + first(t), s + 2 * tile, bytes, st);
    (void)pacer.reserve(bytes);  // C's write to the devices, after its copy out
  }
  rt.synchronize(streams[0].get(), 0, "the tiles of slot 0");
  rt.synchronize(streams[1].get(), 0, "the tiles of slot 1");
  pacer.drain();
  r.seconds = since(start);
  rt.stop();
#endif
}

/// emulated-ssd, host-memory, device-memory and tiled: A, B and room for C in one image,
/// each line-aligned; C checked against A + B in memory, then written out.
template <class T>
void add_in_memory(const vector_options& o, graph::staged_file& out, std::uint64_t n,
                   add_result& r) {
  const std::uint64_t bytes = n * sizeof(T);
  const std::uint64_t align = std::max<std::uint64_t>(o.storage.line_bytes, 65536);
  const std::uint64_t padded = (bytes + align - 1) / align * align;
  const bool gpu = o.storage.use_gpu();
  auto image = backing_store::in_memory(3 * padded, gpu ? memory_kind::pinned : memory_kind::host);
  read_whole(o.a, image->data(), bytes);
  read_whole(o.b, image->data() + padded, bytes);
  const std::uint64_t default_cache = std::max<std::uint64_t>(3 * bytes / 8, 1 << 20);
  data_path path = data_path::open(o.storage, image, default_cache);
  r.where = path.where();
  const T* a = reinterpret_cast<const T*>(image->data());
  const T* b = reinterpret_cast<const T*>(image->data() + padded);
  T* c = reinterpret_cast<T*>(image->data() + 2 * padded);
  if (o.storage.backend == "tiled") {
    copy_pacer pacer = copy_pacer::for_options(o.storage);
    r.tile_source = pacer.describe(o.storage);
    add_tiled(path, pacer, a, b, c, n,
              o.storage.cache_bytes ? o.storage.cache_bytes : default_cache, r);
  } else {
    std::uint8_t* mem = path.memory_data();
    const bool host_accessible = path.device_image.data() == nullptr;
    auto make = [&]<class U>(std::uint64_t at, const std::string& name, U*) {
      if (!path.cache) {
        return array<U>::over_memory(reinterpret_cast<std::remove_const_t<U>*>(mem + at), n,
                                     host_accessible, name);
      }
      return array<U>(*path.cache, *path.devices(),
                      {.offset_bytes = at,
                       .count = n,
                       .name = name,
                       .fresh = !std::is_const_v<U> && o.fresh_output == "on"});
    };
    array<const T> av = make(0, o.a, static_cast<const T*>(nullptr));
    array<const T> bv = make(padded, o.b, static_cast<const T*>(nullptr));
    array<T> cv = make(2 * padded, o.out, static_cast<T*>(nullptr));
    add_passes(o, path, av, bv, cv, n, r);
    r.stats = av.stats();
    r.stats += bv.stats();
    r.stats += cv.stats();
    r.bytes_moved = path.cache ? r.stats.bytes_moved : 3 * bytes;
    if (path.cache)
      r.cache_bytes = std::uint64_t{path.cache->lines()} * path.cache->config().line_bytes;
  }
  path.copy_back(2 * padded, bytes);  // C, from GPU memory (device-memory, --media gpu)
  const std::uint64_t wrong = first_wrong(a, b, c, n);
  if (wrong != n) fail_wrong(o, wrong);
  commit_output(out, c, bytes);
}

/// Reads `count` elements from element `at` of an open file.
template <class T>
void pread_elements(int fd, std::uint64_t at, std::uint64_t count, T* to, const std::string& name) {
  std::uint64_t done = 0;
  const std::uint64_t want = count * sizeof(T);
  auto* p = reinterpret_cast<std::uint8_t*>(to);
  while (done < want) {
    const ssize_t got =
        ::pread(fd, p + done, want - done, static_cast<off_t>(at * sizeof(T) + done));
    if (got <= 0) {
      throw error("reading back '" + name +
                  "': " + (got < 0 ? std::strerror(errno) : "short file"));
    }
    done += static_cast<std::uint64_t>(got);
  }
}

/// --backend file: A and B read in place, C written in place under a temporary name through a
/// writable file set, read back and checked against A + B, then renamed into place.
template <class T>
void add_files(const vector_options& o, graph::staged_file& out, std::uint64_t n, add_result& r) {
  const std::uint64_t bytes = n * sizeof(T);
  out.reserve(bytes);
  const bool gpu = o.storage.use_gpu();
  const std::uint64_t default_cache = std::max<std::uint64_t>(3 * bytes / 8, 1 << 20);
  data_path path = data_path::open_files(o.storage, {o.a}, false, default_cache);
  r.where = path.where();
  file_storage bset(o.storage.files({o.b}, false), path.runtime.get());
  file_storage cset(o.storage.files({out.temporary().string()}, true), path.runtime.get());
  if (!gpu) {
    bset.start();
    cset.start();
  }
  {
    array<const T> av(*path.cache, *path.devices(), {.offset_bytes = 0, .count = n, .name = o.a});
    array<const T> bv(*path.cache, bset.ref(), {.offset_bytes = 0, .count = n, .name = o.b});
    array<T> cv(*path.cache, cset.ref(),
                {.offset_bytes = 0, .count = n, .name = o.out, .fresh = o.fresh_output == "on"});
    add_passes(o, path, av, bv, cv, n, r);
    r.stats = av.stats();
    r.stats += bv.stats();
    r.stats += cv.stats();
  }
  bset.stop();
  cset.stop();
  r.bytes_moved = r.stats.bytes_moved;
  r.cache_bytes = std::uint64_t{path.cache->lines()} * path.cache->config().line_bytes;
  // What the output file holds now (after FLUSH, so on the disk), against A + B.
  const int fa = ::open(o.a.c_str(), O_RDONLY | O_CLOEXEC);
  const int fb = ::open(o.b.c_str(), O_RDONLY | O_CLOEXEC);
  std::uint64_t wrong = n;
  try {
    if (fa < 0 || fb < 0)
      throw error("reading back the inputs: " + std::string(std::strerror(errno)));
    constexpr std::uint64_t chunk = std::uint64_t{1} << 20;
    std::vector<T> x(chunk);
    std::vector<T> y(chunk);
    std::vector<T> z(chunk);
    for (std::uint64_t at = 0; at < n && wrong == n; at += chunk) {
      const std::uint64_t k = std::min(chunk, n - at);
      pread_elements(fa, at, k, x.data(), o.a);
      pread_elements(fb, at, k, y.data(), o.b);
      pread_elements(out.fd(), at, k, z.data(), o.out);
      const std::uint64_t w = first_wrong(x.data(), y.data(), z.data(), k);
      if (w != k) wrong = at + w;
    }
  } catch (...) {
    if (fa >= 0) ::close(fa);
    if (fb >= 0) ::close(fb);
    throw;
  }
  ::close(fa);
  ::close(fb);
  if (wrong != n) fail_wrong(o, wrong);
  if (::fsync(out.fd()) != 0) {
    throw error("writing '" + o.out + "': fsync: " + std::strerror(errno));
  }
  out.commit();
}

std::uint64_t dtype_bytes(const std::string& dtype) {
  return dtype == "u32" || dtype == "f32" ? 4 : 8;
}

void report(const vector_options& o, std::uint64_t n, double all, const add_result& r) {
  const std::uint64_t needed = 3 * n * dtype_bytes(o.dtype);
  const double rate = r.seconds > 0 ? static_cast<double>(needed) / r.seconds / 1e9 : 0.0;
  const double amplification =
      needed ? static_cast<double>(r.bytes_moved) / static_cast<double>(needed) : 0.0;
  std::fprintf(stderr,
               "# vector-add of %" PRIu64
               " %s via %s on the %s: %.3f s (%.2f s in all), %.2f GB/s of the %s needed; "
               "%s moved (amplification %.3f), %" PRIu64 " I/O commands, %" PRIu64 " tiles\n",
               n, o.dtype.c_str(), o.storage.backend.c_str(), r.where.c_str(), r.seconds, all, rate,
               format_bytes(static_cast<double>(needed)).c_str(),
               format_bytes(static_cast<double>(r.bytes_moved)).c_str(), amplification,
               r.stats.io_commands(), r.tiles);
  if (!r.tile_source.empty()) std::fprintf(stderr, "# tiles read from %s\n", r.tile_source.c_str());
  if (o.json.empty()) return;
  json_writer j;
  j.begin_object().field("command", std::string("vector-add")).key("machine");
  write_json(j, read_machine_info());
  j.field("dtype", o.dtype)
      .field("count", n)
      .field("backend", o.storage.backend)
      .field("where", r.where)
      .field("seconds", r.seconds)
      .field("seconds_all", all)
      .field("bytes_needed", needed)
      .field("bytes_moved", r.bytes_moved)
      .field("io_commands", r.stats.io_commands())
      .field("write_backs", r.stats.write_backs)
      .field("write_backs_beside_loads", r.stats.write_backs_beside_loads)
      .field("cache_bytes", r.cache_bytes)
      .field("tiles", r.tiles)
      .field("tile_source", r.tile_source)
      .field("devices", std::uint64_t{o.storage.devices})
      .field("model", o.storage.model_label())
      .field("media", o.storage.media)
      .field("line_bytes", o.storage.line_bytes)
      .field("write_behind", o.storage.write_behind)
      .field("fresh_output", o.fresh_output)
      .field("zero_filled", r.stats.zero_filled)
      .end_object();
  j.save(o.json);
}

template <class T>
void add_typed(const vector_options& o, std::uint64_t n) {
  const auto began = std::chrono::steady_clock::now();
  // Made now, so an unwritable folder fails before any work; renamed into place only when
  // whole and checked.
  graph::staged_file out(o.out);
  add_result r;
  if (n == 0) {
    out.commit();
  } else if (o.storage.on_files()) {
    add_files<T>(o, out, n, r);
  } else {
    add_in_memory<T>(o, out, n, r);
  }
  report(o, n, since(began), r);
}

void vector_add(const vector_options& o) {
  o.storage.validate();
  if (o.storage.on_files() &&
      (o.a.find(',') != std::string::npos || o.b.find(',') != std::string::npos ||
       o.out.find(',') != std::string::npos)) {
    throw input_error("bam vector-add reads one file per vector (no striped sets)");
  }
  const named_path inputs[] = {{"--a", o.a}, {"--b", o.b}};
  const named_path outputs[] = {{"--out", o.out}};
  refuse_overlaps(inputs, outputs);
  const std::uint64_t size = dtype_bytes(o.dtype);
  const std::uint64_t a_bytes = std::filesystem::file_size(o.a);
  const std::uint64_t b_bytes = std::filesystem::file_size(o.b);
  if (a_bytes != b_bytes) {
    throw input_error("--a '" + o.a + "' has " + std::to_string(a_bytes) + " bytes and --b '" +
                      o.b + "' has " + std::to_string(b_bytes) + ": the vectors must be as long");
  }
  if (a_bytes % size != 0) {
    throw input_error("--a '" + o.a + "' (" + std::to_string(a_bytes) +
                      " bytes) is not a whole number of " + std::to_string(size) + "-byte " +
                      o.dtype + " values");
  }
  const std::uint64_t n = a_bytes / size;
  if (o.dtype == "u32") {
    add_typed<std::uint32_t>(o, n);
  } else if (o.dtype == "u64") {
    add_typed<std::uint64_t>(o, n);
  } else if (o.dtype == "f32") {
    add_typed<float>(o, n);
  } else {
    add_typed<double>(o, n);
  }
}

/// splitmix64: the same seed, the same vector, on every machine.
std::uint64_t next_random(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// A value of type T from 64 random bits: integers take the low bits (sums wrap); floats are
/// finite, uniform in [-1000, 1000).
template <class T>
T value_from(std::uint64_t bits) {
  if constexpr (std::is_floating_point_v<T>) {
    const double unit = static_cast<double>(bits >> 11) * 0x1.0p-53;
    return static_cast<T>(unit * 2000.0 - 1000.0);
  } else {
    return static_cast<T>(bits);
  }
}

template <class T>
void generate(const std::string& path, std::uint64_t count, std::uint64_t seed) {
  graph::staged_file out(path);
  out.reserve(count * sizeof(T));
  graph::file_writer writer(out);
  std::uint64_t state = seed;
  std::vector<T> chunk(std::uint64_t{1} << 16);
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t k = std::min<std::uint64_t>(chunk.size(), count - done);
    for (std::uint64_t i = 0; i < k; ++i) chunk[i] = value_from<T>(next_random(state));
    writer.write_raw(chunk.data(), k * sizeof(T));
    done += k;
  }
  writer.flush();
  if (::fsync(out.fd()) != 0) {
    throw error("writing '" + path + "': fsync: " + std::strerror(errno));
  }
  out.commit();
}

}  // namespace

void add_vector_commands(CLI::App& app) {
  struct gen_options {
    std::string out;
    std::uint64_t count = 1 << 20;
    std::string dtype = "u32";
    std::uint64_t seed = 1;
  };
  auto g = std::make_shared<gen_options>();
  CLI::App* gen = app.add_subcommand(
      "vector-gen",
      "Write COUNT little-endian values of a type, seeded random (integers over their whole "
      "range, floats in [-1000, 1000)): an input of bam vector-add");
  gen->add_option("--out", g->out, "The vector's file, written whole or not at all")
      ->required()
      ->check(output_file({.renamed_into_place = true}));
  gen->add_option("--count", g->count, "Values (sizes like 64M)")
      ->transform(size_transformer())
      ->capture_default_str();
  gen->add_option("--dtype", g->dtype, "u32 | u64 | f32 | f64")
      ->check(CLI::IsMember({"u32", "u64", "f32", "f64"}))
      ->capture_default_str();
  gen->add_option("--seed", g->seed, "Seed (the same seed, the same values)")
      ->transform(whole_number())
      ->capture_default_str();
  gen->callback([g] {
    if (g->dtype == "u32") {
      generate<std::uint32_t>(g->out, g->count, g->seed);
    } else if (g->dtype == "u64") {
      generate<std::uint64_t>(g->out, g->count, g->seed);
    } else if (g->dtype == "f32") {
      generate<float>(g->out, g->count, g->seed);
    } else {
      generate<double>(g->out, g->count, g->seed);
    }
    std::fprintf(stderr, "# wrote %" PRIu64 " %s values to '%s'\n", g->count, g->dtype.c_str(),
                 g->out.c_str());
  });

  auto o = std::make_shared<vector_options>();
  CLI::App* add = app.add_subcommand(
      "vector-add",
      "C[i] = A[i] + B[i] with kernel threads reading A and B and writing C through bam "
      "(docs/analytics.md); C is written only when it holds exactly the sums");
  add->add_option("--a", o->a, "The first vector's file")->required()->check(CLI::ExistingFile);
  add->add_option("--b", o->b, "The second vector's file")->required()->check(CLI::ExistingFile);
  add->add_option("--out", o->out, "Where C goes, written whole or not at all")
      ->required()
      ->check(output_file({.renamed_into_place = true}));
  add->add_option("--dtype", o->dtype, "u32 | u64 (integers wrap) | f32 | f64 (IEEE addition)")
      ->check(CLI::IsMember({"u32", "u64", "f32", "f64"}))
      ->capture_default_str();
  add->add_option("--retries", o->retries,
                  "emulated-ssd and file: passes again after accesses failed, and flush attempts")
      ->capture_default_str();
  add->add_option("--fresh-output", o->fresh_output,
                  "emulated-ssd and file: on, C is a fresh array (a line of C it never wrote back "
                  "is zero-filled on a miss instead of read, since every element is stored); "
                  "off, C's lines are read before they are written")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  // A stream reads and writes every line whole, so larger lines cost nothing in bytes and the
  // devices serve fewer, larger commands: on an H100, 3 x 256 M f32 from 4 Optane-like devices
  // took 0.134 s with 16 KiB lines and 0.143 s with 4 KiB (tiled 0.135 s, the same calls).
  o->storage.line_bytes = 16 * 1024;
  o->storage.add_to(*add, {.tiled = true});
  add_json_option(*add, o->json);
  add->callback([o] { vector_add(*o); });
}

}  // namespace bam::tools
