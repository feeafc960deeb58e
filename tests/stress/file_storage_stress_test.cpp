// The file backend under many CPU threads: readers check every element they read against the
// file's pattern while writers store their own stripes of a second, writable file through the
// same small cache (constant eviction and write-back), over one file and a striped set, with
// io_uring and with psync; after flush the written file holds exactly what was stored.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/launch.hpp>
#include <bam/storage/file_storage.hpp>

#ifndef BAM_STRESS_SCALE_DEFAULT
#define BAM_STRESS_SCALE_DEFAULT 1.0
#endif

namespace {

using namespace bam;
namespace fs = std::filesystem;

double scale() {
  const char* s = std::getenv("BAM_STRESS_SCALE");
  return s ? std::atof(s) : BAM_STRESS_SCALE_DEFAULT;
}

constexpr std::uint64_t word_at(std::uint64_t i) { return i * 0x9e3779b97f4a7c15ull + 1; }
constexpr std::uint64_t stored_at(std::uint64_t i) { return ~i ^ 0x00ff00ff00ff00ffull; }

class folder {
 public:
  folder() {
    std::string p = (fs::temp_directory_path() / "bam-file-stress-XXXXXX").string();
    if (::mkdtemp(p.data()) == nullptr) throw std::runtime_error("mkdtemp");
    dir_ = p;
  }
  ~folder() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  folder(const folder&) = delete;
  folder& operator=(const folder&) = delete;
  [[nodiscard]] std::string file(const std::string& n) const { return (dir_ / n).string(); }

 private:
  fs::path dir_;
};

/// Writes `words` words of `value(i)` as a striped set of `files` files in `stripe` units.
template <class Value>
std::vector<std::string> write_set(const folder& d, const std::string& name, std::uint64_t words,
                                   std::uint32_t files, std::uint64_t stripe, Value value) {
  std::vector<std::string> paths;
  std::vector<std::ofstream> out;
  for (std::uint32_t f = 0; f < files; ++f) {
    paths.push_back(d.file(name + std::to_string(f)));
    out.emplace_back(paths.back(), std::ios::binary | std::ios::trunc);
  }
  const std::uint64_t per_stripe = stripe / 8;
  for (std::uint64_t i = 0; i < words; ++i) {
    const std::uint64_t v = value(i);
    out[(i / per_stripe) % files].write(reinterpret_cast<const char*>(&v), 8);
  }
  return paths;
}

struct stress_case {
  io_engine_kind engine;
  std::uint32_t files;
  std::uint32_t line_bytes;
};

class FileStorageStress : public ::testing::TestWithParam<stress_case> {};

TEST_P(FileStorageStress, ReadersAndWritersThroughASmallCacheSeeAndLeaveExactBytes) {
  const stress_case c = GetParam();
  const std::uint64_t stripe = 16 * 1024;
  const auto words = static_cast<std::uint64_t>(std::max(64.0, 4096 * scale())) * 8;
  folder d;
  const auto in_paths = write_set(d, "in", words, c.files, stripe, word_at);
  const auto out_paths =
      write_set(d, "out", words, c.files, stripe, [](std::uint64_t) { return 0; });
  file_storage_config base{.paths = {},
                           .engine = c.engine,
                           .io_threads = 2,
                           .io_depth = 16,
                           .queues_per_device = 4,
                           .queue_depth = 64,
                           .stripe_bytes = stripe};
  file_storage_config in_config = base;
  in_config.paths = in_paths;
  file_storage_config out_config = base;
  out_config.paths = out_paths;
  out_config.writable = true;
  file_storage in_disk(in_config);
  file_storage out_disk(out_config);
  in_disk.start();
  out_disk.start();
  host_stream stream(16);
  {
    page_cache cache({.line_bytes = c.line_bytes, .capacity_bytes = 40ull * c.line_bytes}, stream);
    array<const std::uint64_t> in(cache, in_disk.ref(), {.count = words, .name = "in"});
    array<std::uint64_t> out(cache, out_disk.ref(), {.count = words, .name = "out"});
    std::atomic<std::uint64_t> wrong{0};
    std::atomic<std::uint64_t> failed{0};
    const auto in_ref = in.ref_for_launch(16, 1);
    const auto out_ref = out.ref_for_launch(16, 1);
    // Half the threads read (strided, so they meet on lines), half store their own stripes.
    launch(stream, 16, 1, [&](thread_index t) {
      if (t.id % 2 == 0) {
        for (std::uint64_t i = t.id / 2; i < words; i += 8) {
          std::uint64_t v = 0;
          if (!in_ref.try_read((i * 7919) % words, v).ok()) {
            failed.fetch_add(1, std::memory_order_relaxed);
          } else if (v != word_at((i * 7919) % words)) {
            wrong.fetch_add(1, std::memory_order_relaxed);
          }
        }
      } else {
        for (std::uint64_t i = t.id / 2; i < words; i += 8) {
          if (!out_ref.try_store(i, stored_at(i)).ok())
            failed.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
    stream.synchronize();
    EXPECT_EQ(wrong.load(), 0u);
    EXPECT_EQ(failed.load(), 0u);
    in.check();
    out.flush();
  }
  in_disk.stop();
  out_disk.stop();
  EXPECT_EQ(out_disk.io_stats().errors, 0u);
  // Read the set back from the files themselves.
  std::vector<std::ifstream> files;
  for (const auto& p : out_paths) files.emplace_back(p, std::ios::binary);
  std::uint64_t mismatches = 0;
  for (std::uint64_t i = 0; i < words; ++i) {
    std::uint64_t v = 0;
    files[(i / (stripe / 8)) % c.files].read(reinterpret_cast<char*>(&v), 8);
    if (v != stored_at(i)) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0u);
}

INSTANTIATE_TEST_SUITE_P(Engines, FileStorageStress,
                         ::testing::Values(stress_case{io_engine_kind::io_uring, 1, 4096},
                                           stress_case{io_engine_kind::io_uring, 3, 512},
                                           stress_case{io_engine_kind::psync, 2, 4096}));

}  // namespace
