// `bam gather`: reads the values at given indices of a binary file through a bam::array and
// prints them, one per line, in order. The embedding / feature-gather use case, and a
// correctness tool: the output must equal the file's values.

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <bam/array.hpp>
#include <bam/error.hpp>
#if defined(BAM_HAVE_CUDA)
#include <bam/platform/launch.cuh>  // this file is compiled as CUDA in GPU builds
#endif

#include "bam/commands.hpp"
#include "bam/storage_options.hpp"
#include "common/index_list.hpp"
#include "common/sizes.hpp"

namespace bam::tools {

namespace {

struct gather_options {
  std::string file;
  std::string dtype = "u64";
  std::string indices = "-";
  std::uint64_t offset = 0;
  storage_options storage;
};

template <class T>
void print_value(std::FILE* out, T v) {
  if constexpr (std::is_same_v<T, float>) {
    std::fprintf(out, "%.9g\n", static_cast<double>(v));
  } else if constexpr (std::is_same_v<T, double>) {
    std::fprintf(out, "%.17g\n", v);
  } else if constexpr (std::is_signed_v<T>) {
    std::fprintf(out, "%" PRId64 "\n", static_cast<std::int64_t>(v));
  } else {
    std::fprintf(out, "%" PRIu64 "\n", static_cast<std::uint64_t>(v));
  }
}

// Reads values[k] = a[indices[k]] with every logical thread walking its share.
template <class T>
struct gather_kernel {
  array_ref<const T> a;
  const std::uint64_t* indices;
  T* values;
  std::uint64_t n;
  BAM_HD void operator()(thread_index t) const {
    for (std::uint64_t k = t.id; k < n; k += t.count) values[k] = a[indices[k]];
  }
};

// Runs the gather kernel where the path runs kernels: the CPU pool, or the GPU (indices and
// values then live in pinned memory the GPU reads and writes directly).
template <class T>
void run_gather(data_path& path, const array<const T>& a, const std::vector<std::uint64_t>& indices,
                std::vector<T>& values) {
  const std::uint64_t n = indices.size();
  if (n == 0) return;
  const std::uint32_t block = 256;
  if (!path.gpu()) {
    path.start();
    const auto grid =
        static_cast<std::uint32_t>(std::min<std::uint64_t>((n + block - 1) / block, 1024));
    launch(*path.stream, grid, block,
           gather_kernel<T>{a.ref_for_launch(grid, block), indices.data(), values.data(), n});
    path.stream->synchronize();
    return;
  }
#if defined(BAM_HAVE_CUDA)
  gpu_runtime& rt = *path.runtime;
  pinned_memory idx(n * sizeof(std::uint64_t));
  pinned_memory out(n * sizeof(T));
  std::memcpy(idx.data(), indices.data(), n * sizeof(std::uint64_t));
  rt.preload({kernel_function<gather_kernel<T>>()});
  rt.warm_up([](stream_handle s) { warm_up_launch<gather_kernel<T>>(s); });
  path.start();
  const auto grid =
      static_cast<std::uint32_t>(std::min<std::uint64_t>((n + block - 1) / block, 132 * 8));
  launch(rt.stream(), grid, block,
         gather_kernel<T>{a.ref_for_launch(grid, block), idx.as<std::uint64_t>(), out.as<T>(), n});
  rt.synchronize(rt.stream(), 0, "the gather kernel");
  std::memcpy(values.data(), out.data(), n * sizeof(T));
  rt.stop();  // before the pinned buffers go: freeing waits for running kernels
#endif
}

template <class T>
void gather(const gather_options& o) {
  o.storage.validate();
  const std::vector<std::uint64_t> indices = read_index_list(o.indices);
  // --backend file reads the file(s) on demand; the others load the file into memory first.
  std::shared_ptr<backing_store> image;
  std::vector<std::string> paths = split_paths(o.file);
  if (!o.storage.on_files()) {
    if (paths.size() > 1)
      throw input_error("a striped set of files (--file A,B) needs --backend file");
    image = load_image(o.storage, o.file);
  }
  std::uint64_t bytes = 0;
  for (const std::string& p : paths) bytes += std::filesystem::file_size(p);
  if (o.offset > bytes) throw input_error("--offset is past the end of '" + o.file + "'");
  const std::uint64_t elements = (bytes - o.offset) / sizeof(T);
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (indices[k] >= elements) {
      throw input_error("index " + std::to_string(indices[k]) + " (entry " + std::to_string(k + 1) +
                        ") is past the end of '" + o.file + "', which holds " +
                        std::to_string(elements) + " elements of " + o.dtype);
    }
  }
  std::vector<T> values(indices.size());
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t default_cache = std::max<std::uint64_t>(bytes / 8, 1 << 20);
  data_path path = image ? data_path::open(o.storage, image, default_cache)
                         : data_path::open_files(o.storage, paths, false, default_cache);
  cache_stats stats;
  {
    array<const T> a =
        path.cache
            ? array<const T>(*path.cache, *path.devices(),
                             {.offset_bytes = o.offset, .count = elements, .name = o.file})
            : array<const T>::over_memory(reinterpret_cast<T*>(path.memory_data() + o.offset),
                                          elements, !path.device_image.data(), o.file);
    run_gather(path, a, indices, values);
    a.check();
    stats = a.stats();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const T& v : values) print_value(stdout, v);
  std::fprintf(stderr,
               "# gathered %zu values of %s from '%s' in %.3f s via %s on the %s; cache: %" PRIu64
               " hits, %" PRIu64 " misses, %" PRIu64
               " I/O commands, %s moved for %s asked (amplification %.2f)\n",
               values.size(), o.dtype.c_str(), o.file.c_str(), seconds, o.storage.backend.c_str(),
               path.where().c_str(), stats.hits, stats.misses, stats.io_commands(),
               format_bytes(static_cast<double>(stats.bytes_moved)).c_str(),
               format_bytes(static_cast<double>(stats.bytes_requested)).c_str(),
               stats.amplification());
}

}  // namespace

void add_gather_command(CLI::App& app) {
  auto o = std::make_shared<gather_options>();
  CLI::App* c = app.add_subcommand(
      "gather", "Print the values at given indices of a binary file, read through a bam::array");
  c->add_option("--file", o->file,
                "Binary file of little-endian values (--backend file: or a comma list of the "
                "files of a striped set, as bam copy --out A,B writes)")
      ->required()
      ->check(existing_files());
  c->add_option("--dtype", o->dtype, "Element type")
      ->check(CLI::IsMember({"u8", "u16", "u32", "u64", "i32", "i64", "f32", "f64"}))
      ->capture_default_str();
  c->add_option("--indices", o->indices,
                "File of decimal indices, one per line ('-': standard input)")
      ->capture_default_str();
  c->add_option("--offset", o->offset, "Byte offset of element 0 in the file")
      ->transform(size_transformer());
  o->storage.add_to(*c);
  c->callback([o] {
    const std::string& t = o->dtype;
    if (t == "u8")
      gather<std::uint8_t>(*o);
    else if (t == "u16")
      gather<std::uint16_t>(*o);
    else if (t == "u32")
      gather<std::uint32_t>(*o);
    else if (t == "u64")
      gather<std::uint64_t>(*o);
    else if (t == "i32")
      gather<std::int32_t>(*o);
    else if (t == "i64")
      gather<std::int64_t>(*o);
    else if (t == "f32")
      gather<float>(*o);
    else
      gather<double>(*o);
  });
}

}  // namespace bam::tools
