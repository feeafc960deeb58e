// `bam copy --in F --out G`: copies a file through bam. F's bytes and room for G's lie on one
// emulated device set; kernel threads read F through one bam::array and store into G through
// another (write-back cache), then G is flushed to the devices. G is written to its final name
// only when the devices hold exactly F's bytes: a fault campaign's check that no late or failed
// I/O lands on the wrong page, and that every failure is reported rather than copied.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <bam/array.hpp>
#include <bam/error.hpp>
#include <bam/platform/atomic.hpp>
#if defined(BAM_HAVE_CUDA)
#include <bam/platform/launch.cuh>  // this file is compiled as CUDA in GPU builds
#endif

#include "bam/commands.hpp"
#include "bam/settle_holds.hpp"
#include "bam/shared_buffer.hpp"
#include "bam/storage_options.hpp"
#include "common/sizes.hpp"
#include "graph/mapped_file.hpp"
#include "graph/staged_file.hpp"

namespace bam::tools {

namespace {

struct copy_options {
  std::string in;
  std::string out;
  unsigned retries = 3;
  std::string translation = "base";
  storage_options storage;
};

/// Copies element i of `in` to `out` for every element of the chunks of a pass (a chunk is one
/// cache line's elements); a chunk with an element that could not be read or stored is flagged
/// in `failed` for the next pass.
template <class T>
struct copy_kernel {
  array_ref<const T> in;
  array_ref<T> out;
  const std::uint64_t* chunks;  // the pass's chunks; null: every chunk
  std::uint64_t chunk_count;
  std::uint64_t chunk_elements;
  std::uint64_t elements;
  std::uint32_t* failed;  // a flag per chunk
  std::uint32_t* cut;     // set when the pass should end early (cuts_pass)

  BAM_HD void operator()(thread_index t) const {
    const std::uint64_t total = chunk_count * chunk_elements;
    for (std::uint64_t k = t.id; k < total; k += t.count) {
      const std::uint64_t c = chunks ? chunks[k / chunk_elements] : k / chunk_elements;
      const std::uint64_t i = c * chunk_elements + k % chunk_elements;
      if (i >= elements) continue;
      // relaxed: hints. A chunk with a failed element is retried whole, so its other elements
      // need not each wait out the bound on the resource that failed it (a line held by a
      // command that never completes); after a cut, every chunk not done is left to the next
      // pass.
      atomic_ref<std::uint32_t> chunk_failed(failed[c]);
      if (chunk_failed.load(order::relaxed) != 0) continue;
      if (atomic_ref<std::uint32_t>(*cut).load(order::relaxed) != 0) {
        chunk_failed.store(1u, order::relaxed);
        continue;
      }
      T v = 0;
      io_status s = in.try_read(i, v);
      if (s.ok()) s = out.try_store(i, v);
      if (s.ok()) continue;
      // relaxed: flags the host reads after the launch has finished.
      chunk_failed.store(1u, order::relaxed);
      if (cuts_pass(s)) atomic_ref<std::uint32_t>(*cut).store(1u, order::relaxed);
    }
  }
};

/// "blocks 8-15, 40-47" for the 512-byte logical blocks of the byte ranges given as sorted
/// chunk indices of `chunk_bytes` each, counted from `base` (the first block of the file).
std::string block_ranges(const std::vector<std::uint64_t>& chunks, std::uint64_t chunk_bytes,
                         std::uint64_t base_block) {
  constexpr std::uint64_t block = 512;
  std::string s;
  std::size_t shown = 0;
  for (std::size_t k = 0; k < chunks.size();) {
    std::size_t e = k;
    while (e + 1 < chunks.size() && chunks[e + 1] == chunks[e] + 1) ++e;
    const std::uint64_t first = base_block + chunks[k] * chunk_bytes / block;
    const std::uint64_t last = base_block + (chunks[e] + 1) * chunk_bytes / block - 1;
    if (shown == 8) {
      s += ", ...";
      break;
    }
    s += (s.empty() ? "" : ", ") + std::to_string(first) + "-" + std::to_string(last);
    ++shown;
    k = e + 1;
  }
  return s;
}

constexpr std::uint32_t block_threads = 256;

/// Blocks of a pass over `work` elements: one element per thread, up to a resident wave.
std::uint32_t pass_grid(bool gpu, std::uint64_t work) {
  const std::uint64_t most = gpu ? 132 * 8 : 1024;
  return static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>((work + block_threads - 1) / block_threads, 1, most));
}

/// One pass of the copy kernel where the path runs kernels.
template <class T>
void run_pass(data_path& path, std::uint32_t grid, const copy_kernel<T>& k) {
  if (k.chunk_count * k.chunk_elements == 0) return;
  if (!path.gpu()) {
    launch(*path.stream, grid, block_threads, k);
    path.stream->synchronize();
    return;
  }
#if defined(BAM_HAVE_CUDA)
  gpu_runtime& rt = *path.runtime;
  launch(rt.stream(), grid, block_threads, k);
  rt.synchronize(rt.stream(), 0, "the copy kernel");
#endif
}

/// What the passes of a copy left: lines that could not be copied, whether the write-back
/// succeeded, the errors seen.
struct copy_outcome {
  std::vector<std::uint64_t> todo;
  bool flushed = false;
  std::vector<std::string> errors;
};

/// Copies `in` to `out` a line's elements at a time, retrying the lines that failed, then
/// flushes `out`; waits (bounded) for the cache to give back every buffer held by a command
/// that may still run, and stops the GPU runtime.
template <class T>
copy_outcome copy_passes(const copy_options& o, data_path& path, array<const T>& in, array<T>& out,
                         std::uint64_t elements) {
  const std::uint64_t line = o.storage.line_bytes;
  const std::uint64_t chunk_elements = line / sizeof(T);
  const std::uint64_t chunks = (elements + chunk_elements - 1) / chunk_elements;
  const bool gpu = path.gpu();
  shared_buffer failed(gpu, chunks * 4);
  shared_buffer list(gpu, chunks * 8);
  shared_buffer cut(gpu, 4);
#if defined(BAM_HAVE_CUDA)
  if (gpu) {
    path.runtime->preload({kernel_function<copy_kernel<T>>()});
    path.runtime->warm_up([](stream_handle s) { warm_up_launch<copy_kernel<T>>(s); });
  }
#endif
  path.start();
  copy_outcome r;
  bool first = true;
  // A pass cut short that still copied lines does not use up a retry; each such pass leaves
  // fewer lines, so the passes end.
  for (unsigned pass = 0, retries = 0; retries <= o.retries; ++pass) {
    std::memset(failed.as<std::uint32_t>(), 0, chunks * 4);
    *cut.as<std::uint32_t>() = 0;
    std::copy(r.todo.begin(), r.todo.end(), list.as<std::uint64_t>());
    const std::uint64_t count = first ? chunks : r.todo.size();
    const std::uint32_t grid = pass_grid(gpu, count * chunk_elements);
    copy_kernel<T> k{in.ref_for_launch(grid, block_threads),
                     out.ref_for_launch(grid, block_threads),
                     first ? nullptr : list.as<std::uint64_t>(),
                     count,
                     chunk_elements,
                     elements,
                     failed.as<std::uint32_t>(),
                     cut.as<std::uint32_t>()};
    run_pass(path, grid, k);
    first = false;
    try {
      in.check();
    } catch (const error& e) {
      r.errors.emplace_back(e.what());
    }
    try {
      out.check();
    } catch (const error& e) {
      r.errors.emplace_back(e.what());
    }
    r.todo.clear();
    for (std::uint64_t c = 0; c < chunks; ++c) {
      if (failed.as<std::uint32_t>()[c] != 0) r.todo.push_back(c);
    }
    if (r.todo.empty()) break;
    const bool was_cut = *cut.as<std::uint32_t>() != 0;
    if (!was_cut || r.todo.size() == count) ++retries;
    // Lines held by commands that timed out cannot be retried until those are done or
    // aborted.
    (void)settle_holds(o.storage, path, out);
    in.clear_failures();
    out.clear_failures();
    std::fprintf(
        stderr, "# pass %u: %zu of %" PRIu64 " lines %s; trying them again\n", pass + 1,
        r.todo.size(), chunks,
        was_cut ? "failed or left after a cut (held buffers or a halted queue)" : "failed");
  }
  r.flushed = flush_retrying(o.storage, o.retries, path, out, r.errors);
  const cache_holds held = settle_holds(o.storage, path, out);
  std::fprintf(stderr,
               "# held after: %" PRIu64 " lines, %" PRIu64 " frame slots, %" PRIu64
               " bounce buffers (pinned lines %" PRIu64 ", frames held %" PRIu64
               ", pinned frames %" PRIu64 ")\n",
               held.busy_lines, held.busy_slots, held.bounce_buffers, held.pinned_lines,
               held.held_frames, held.pinned_frames);
  if (path.runtime) path.runtime->stop();
  if (held.total() != 0) {
    throw error("bam copy: the cache still holds buffers 10 s after the copy (a leak): " +
                std::to_string(held.total()));
  }
  return r;
}

/// The error for a copy that did not make a whole output.
[[noreturn]] void fail_copy(const copy_options& o, const copy_outcome& r,
                            const std::vector<std::uint64_t>& wrong) {
  const std::uint64_t line = o.storage.line_bytes;
  std::string what = "bam copy: '" + o.out + "' not written: ";
  if (!r.todo.empty()) {
    what += std::to_string(r.todo.size()) + " line(s) could not be copied after " +
            std::to_string(o.retries) + " retries (blocks " + block_ranges(r.todo, line, 0) +
            " of the input); ";
  }
  if (!r.flushed) what += "the write-back did not succeed; ";
  if (!wrong.empty()) {
    what += "the devices hold wrong bytes in blocks " + block_ranges(wrong, line, 0) +
            " of the output; ";
  }
  if (!r.errors.empty()) what += "first error: " + r.errors.front();
  throw error(what);
}

void report_copy(const copy_options& o, const data_path& path, std::uint64_t n,
                 const cache_stats& si, const cache_stats& so, const copy_outcome& r) {
  std::fprintf(stderr,
               "# copied %" PRIu64 " bytes from '%s' to '%s' via %s on the %s; %" PRIu64
               " loads, %" PRIu64 " write-backs, %zu error(s) retried\n",
               n, o.in.c_str(), o.out.c_str(), o.storage.backend.c_str(), path.where().c_str(),
               si.loads + so.loads, so.write_backs, r.errors.size());
}

// --backend emulated-ssd: F's bytes and room for G's lie on one emulated device set.
void copy_emulated(const copy_options& o) {
  if (std::filesystem::exists(o.out) && std::filesystem::equivalent(o.in, o.out)) {
    throw input_error("--out '" + o.out + "' is the input file");
  }
  // The output is written under a temporary name beside it and renamed into place only when
  // whole (staged_file); made now, so an unwritable folder fails before any work.
  graph::staged_file file(o.out);
  const std::uint64_t n = std::filesystem::file_size(o.in);
  const std::uint64_t line = o.storage.line_bytes;
  const std::uint64_t padded = std::max<std::uint64_t>((n + line - 1) / line * line, line);
  const bool gpu = o.storage.use_gpu();
  // The input at byte 0, the output's room after it, both line-aligned.
  auto image = backing_store::in_memory(2 * padded, gpu ? memory_kind::pinned : memory_kind::host);
  {
    const graph::mapped_file source(o.in);
    if (source.size() != n) throw input_error("'" + o.in + "' changed size while being read");
    if (n != 0) std::memcpy(image->data(), source.data(), n);
  }
  // Default cache: a quarter of the data, and at least what a writable array needs for a
  // resident wave of warps (two lines each) on the GPU.
  const std::uint64_t least =
      gpu ? std::uint64_t{2} * 132 * 8 * block_threads / 32 * line : 1 << 20;
  data_path path = data_path::open(o.storage, image, std::max(padded / 4, least));
  if (!path.cache) throw input_error("bam copy needs --backend emulated-ssd or file");
  const std::uint64_t elements = padded / 8;
  const bool dense = path.cache->config().translation == translation_kind::two_level;
  const device_set_ref set = *path.devices();
  array<const std::uint64_t> in(
      *path.cache, set, {.offset_bytes = 0, .count = elements, .name = o.in, .dense = dense});
  array<std::uint64_t> out(
      *path.cache, set, {.offset_bytes = padded, .count = elements, .name = o.out, .dense = dense});
  const copy_outcome r = copy_passes(o, path, in, out, elements);
  // What the devices hold now, against the input.
  path.copy_back(padded, n);
  const std::uint8_t* src = image->data();
  const std::uint8_t* dst = image->data() + padded;
  std::vector<std::uint64_t> wrong;
  for (std::uint64_t c = 0; c < padded / line; ++c) {
    const std::uint64_t at = c * line;
    const std::uint64_t len = at >= n ? 0 : std::min<std::uint64_t>(line, n - at);
    if (len != 0 && std::memcmp(src + at, dst + at, len) != 0) wrong.push_back(c);
  }
  if (!wrong.empty() || !r.todo.empty() || !r.flushed) fail_copy(o, r, wrong);
  // Synced before the rename, so the copy survives the process once it exits 0.
  graph::file_writer writer(file);
  writer.write_raw(dst, n);
  writer.flush();
  if (::fsync(file.fd()) != 0) {
    throw error("writing '" + o.out + "': fsync: " + std::strerror(errno));
  }
  file.commit();
  report_copy(o, path, n, in.stats(), out.stats(), r);
}

/// Reads bytes [at, at + bytes) of the address space of a striped set of open files.
void read_striped(const std::vector<int>& fds, std::uint64_t stripe, std::uint64_t at,
                  std::uint8_t* to, std::uint64_t bytes, const std::string& name) {
  while (bytes > 0) {
    const std::uint64_t s = fds.size() == 1 ? 0 : at / stripe;
    const std::uint64_t within = fds.size() == 1 ? at : at % stripe;
    const std::uint64_t room = fds.size() == 1 ? bytes : stripe - within;
    const std::uint64_t n = std::min(bytes, room);
    const int fd = fds[s % fds.size()];
    const std::uint64_t file_at = (s / fds.size()) * stripe + within;
    const ssize_t got = ::pread(fd, to, n, static_cast<off_t>(file_at));
    if (got <= 0)
      throw error("reading back '" + name +
                  "': " + (got < 0 ? std::strerror(errno) : "short file"));
    to += got;
    at += static_cast<std::uint64_t>(got);
    bytes -= static_cast<std::uint64_t>(got);
  }
}

// --backend file: F (one file or a striped set) read in place, G written in place under
// temporary names, compared with F on disk, then renamed into place.
template <class T>
void copy_files(const copy_options& o, const std::vector<std::string>& in_paths,
                const std::vector<std::string>& out_paths, std::uint64_t n) {
  const std::uint64_t line = o.storage.line_bytes;
  std::vector<std::unique_ptr<graph::staged_file>> staged;
  std::vector<std::string> temporary;
  const file_storage_config layout = o.storage.files(out_paths, true);
  const auto sizes =
      striped_file_bytes(n, static_cast<std::uint32_t>(out_paths.size()), layout.stripe_bytes);
  for (std::size_t i = 0; i < out_paths.size(); ++i) {
    staged.push_back(std::make_unique<graph::staged_file>(out_paths[i]));
    staged.back()->reserve(sizes[i]);
    temporary.push_back(staged.back()->temporary().string());
  }
  const bool gpu = o.storage.use_gpu();
  const std::uint64_t least =
      gpu ? std::uint64_t{2} * 132 * 8 * block_threads / 32 * line : 1 << 20;
  const std::uint64_t padded = (n + line - 1) / line * line;
  data_path path = data_path::open_files(o.storage, in_paths, false, std::max(padded / 4, least));
  file_storage target(o.storage.files(temporary, true), path.runtime.get());
  if (!gpu) target.start();
  const std::uint64_t elements = n / sizeof(T);
  const bool dense = path.cache->config().translation == translation_kind::two_level;
  copy_outcome r;
  cache_stats si;
  cache_stats so;
  {
    array<const T> in(*path.cache, *path.devices(),
                      {.offset_bytes = 0, .count = elements, .name = o.in, .dense = dense});
    array<T> out(*path.cache, target.ref(),
                 {.offset_bytes = 0, .count = elements, .name = o.out, .dense = dense});
    r = copy_passes(o, path, in, out, elements);
    si = in.stats();
    so = out.stats();
  }
  target.stop();
  // What the output files hold now (after FLUSH, so on the disk), against the input.
  std::vector<int> in_fds;
  std::vector<int> out_fds;
  for (const auto& p : in_paths) {
    in_fds.push_back(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
    if (in_fds.back() < 0) throw error("reading back '" + p + "': " + std::strerror(errno));
  }
  for (const auto& f : staged) out_fds.push_back(f->fd());
  std::vector<std::uint64_t> wrong;
  std::vector<std::uint8_t> a(line);
  std::vector<std::uint8_t> b(line);
  for (std::uint64_t at = 0; at < n; at += line) {
    const std::uint64_t len = std::min<std::uint64_t>(line, n - at);
    read_striped(in_fds, layout.stripe_bytes, at, a.data(), len, o.in);
    read_striped(out_fds, layout.stripe_bytes, at, b.data(), len, o.out);
    if (std::memcmp(a.data(), b.data(), len) != 0) wrong.push_back(at / line);
  }
  for (int fd : in_fds) ::close(fd);
  if (!wrong.empty() || !r.todo.empty() || !r.flushed) fail_copy(o, r, wrong);
  for (auto& f : staged) {
    if (::fsync(f->fd()) != 0) {
      throw error("writing '" + f->destination().string() + "': fsync: " + std::strerror(errno));
    }
  }
  for (auto& f : staged) f->commit();
  report_copy(o, path, n, si, so, r);
}

void copy(const copy_options& o) {
  if (!o.storage.on_files()) {
    if (o.in.find(',') != std::string::npos || o.out.find(',') != std::string::npos) {
      throw input_error("striped sets of files (--in A,B or --out A,B) need --backend file");
    }
    copy_emulated(o);
    return;
  }
  const std::vector<std::string> in_paths = split_paths(o.in);
  const std::vector<std::string> out_paths = split_paths(o.out);
  std::uint64_t n = 0;
  for (const auto& p : in_paths) n += std::filesystem::file_size(p);
  for (const auto& q : out_paths) {
    for (const auto& p : in_paths) {
      if (std::filesystem::exists(q) && std::filesystem::equivalent(p, q)) {
        throw input_error("--out '" + q + "' is an input file");
      }
    }
  }
  if (n == 0) {  // nothing to read: the output is as empty
    for (const auto& q : out_paths) graph::staged_file(q).commit();
    std::fprintf(stderr, "# copied 0 bytes from '%s' to '%s'\n", o.in.c_str(), o.out.c_str());
    return;
  }
  // Whole 8-byte words when the size allows (fewer element accesses), else bytes.
  if (n % 8 == 0) {
    copy_files<std::uint64_t>(o, in_paths, out_paths, n);
  } else {
    copy_files<std::uint8_t>(o, in_paths, out_paths, n);
  }
}

}  // namespace

void add_copy_command(CLI::App& app) {
  auto o = std::make_shared<copy_options>();
  CLI::App* c = app.add_subcommand(
      "copy",
      "Copy a file through bam (read through one array, stored through another, then flushed); "
      "the output is written only if the devices hold exactly the input's bytes");
  c->add_option("--in", o->in,
                "File to copy (--backend file: or a comma list, the files of a striped set)")
      ->required()
      ->check(existing_files());
  c->add_option("--out", o->out,
                "Where the copy goes, written whole or not at all (--backend file: a comma list "
                "writes a striped set, one file per disk)")
      ->required();
  c->add_option("--retries", o->retries,
                "Passes over the lines that failed (reads and stores), and flush attempts")
      ->capture_default_str();
  c->add_option("--translation", o->translation,
                "base, or two_level: the arrays are dense (large frames, docs/mosaic.md)")
      ->check(CLI::IsMember({"base", "two_level"}))
      ->capture_default_str();
  o->storage.add_to(*c);
  c->callback([o] {
    o->storage.translation =
        o->translation == "two_level" ? translation_kind::two_level : translation_kind::base;
    o->storage.validate();
    copy(*o);
  });
}

}  // namespace bam::tools
