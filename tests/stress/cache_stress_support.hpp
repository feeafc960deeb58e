#pragma once
// What the cache stress tests share: work sized for the build (ThreadSanitizer on two cores
// runs a fraction of the Release work), a pattern image whose every 64-bit word names its own
// index, temporary files, and a rig of emulated devices, a CPU stream and a cache.

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/platform/launch.hpp>
#include <bam/storage/backing_store.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "software_warp.hpp"

#ifndef BAM_STRESS_TSAN
#define BAM_STRESS_TSAN 0
#endif

namespace bam::stress {

/// `release` in an optimized build, `tsan` under ThreadSanitizer (compile definition
/// BAM_STRESS_TSAN, set by the cpu-tsan preset's BAM_TSAN option). BAM_STRESS_SCALE=<factor>
/// in the environment multiplies either (e.g. 0.25 for a quick run, 4 for a soak).
inline std::uint64_t scaled(std::uint64_t release, std::uint64_t tsan) {
  std::uint64_t n = BAM_STRESS_TSAN ? tsan : release;
  if (const char* s = std::getenv("BAM_STRESS_SCALE")) {
    const double f = std::strtod(s, nullptr);
    if (f > 0) n = static_cast<std::uint64_t>(static_cast<double>(n) * f);
  }
  return n < 1 ? 1 : n;
}

/// The word at 64-bit index `i` of a pattern image: distinct for every index and every byte
/// position, so a misplaced line, element or byte shows.
constexpr std::uint64_t pattern_word(std::uint64_t i) {
  std::uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull;
  x ^= x >> 29;
  return x ^ (i << 3);
}

/// The value a writer stores at index `i` (never equal to the pattern).
constexpr std::uint64_t written_word(std::uint64_t i) { return ~pattern_word(i) ^ 0xa5a5u; }

/// A small, fast generator per thread (xorshift64*).
class rng {
 public:
  explicit rng(std::uint64_t seed) : x_(seed * 0x2545f4914f6cdd1dull + 0x9e3779b97f4a7c15ull) {}
  std::uint64_t next() {
    x_ ^= x_ >> 12;
    x_ ^= x_ << 25;
    x_ ^= x_ >> 27;
    return x_ * 0x2545f4914f6cdd1dull;
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }

 private:
  std::uint64_t x_;
};

/// A file in the temporary folder, removed when this object dies.
class temp_file {
 public:
  /// Creates the file holding `words` pattern words.
  explicit temp_file(std::uint64_t words) {
    const char* dir = std::getenv("TMPDIR");
    std::string templ = std::string(dir && *dir ? dir : "/tmp") + "/bam_cache_stress_XXXXXX";
    std::vector<char> name(templ.begin(), templ.end());
    name.push_back('\0');
    const int fd = ::mkstemp(name.data());
    if (fd < 0) throw std::runtime_error("cannot create a temporary file from " + templ);
    ::close(fd);
    path_ = name.data();
    std::vector<std::uint64_t> data(words);
    for (std::uint64_t i = 0; i < words; ++i) data[i] = pattern_word(i);
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data.data()),
              static_cast<std::streamsize>(words * sizeof(std::uint64_t)));
    if (!out) throw std::runtime_error("cannot write " + path_);
  }
  ~temp_file() { ::unlink(path_.c_str()); }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }

  /// The file's words as they are on disk now.
  [[nodiscard]] std::vector<std::uint64_t> words() const {
    std::ifstream in(path_, std::ios::binary | std::ios::ate);
    const auto bytes = static_cast<std::uint64_t>(in.tellg());
    std::vector<std::uint64_t> out(bytes / sizeof(std::uint64_t));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(bytes));
    return out;
  }

 private:
  std::string path_;
};

/// An in-memory image of `words` pattern words.
inline std::shared_ptr<backing_store> pattern_image(std::uint64_t words) {
  auto image = backing_store::in_memory(words * sizeof(std::uint64_t));
  auto* w = reinterpret_cast<std::uint64_t*>(image->data());
  for (std::uint64_t i = 0; i < words; ++i) w[i] = pattern_word(i);
  return image;
}

/// Devices with no modelled latency: the protocol alone, as fast as the CPU runs it.
inline storage_config fast_storage(std::uint32_t devices = 1) {
  storage_config s;
  s.devices = devices;
  s.queues_per_device = 4;
  s.queue_depth = 64;
  s.model = device_model::unlimited();
  s.timeout_ns = 60'000'000'000ull;
  return s;
}

/// Emulated devices over an image, a CPU stream and a cache. Arrays made on it must die
/// before it (declare them after the rig).
struct rig {
  rig(std::shared_ptr<backing_store> img, const storage_config& storage, const cache_config& cache,
      unsigned workers = 8)
      : image(std::move(img)),
        ssd(std::make_unique<emulated_storage>(storage, image)),
        stream(std::make_unique<host_stream>(workers)),
        cache_owner(std::make_unique<page_cache>(cache, *stream)) {
    ssd->start();
  }
  ~rig() {
    cache_owner.reset();
    ssd->stop();
  }
  rig(const rig&) = delete;
  rig& operator=(const rig&) = delete;

  [[nodiscard]] page_cache& cache() const { return *cache_owner; }
  [[nodiscard]] device_set_ref set() const { return ssd->ref(); }

  std::shared_ptr<backing_store> image;
  std::unique_ptr<emulated_storage> ssd;
  std::unique_ptr<host_stream> stream;
  std::unique_ptr<page_cache> cache_owner;
};

/// Runs `body(t)` on `threads` raw std::threads at once and joins them.
inline void run_threads(unsigned threads, const std::function<void(unsigned)>& body) {
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(body, t);
  for (auto& t : pool) t.join();
}

/// What a set of reader threads saw.
struct read_tally {
  std::atomic<std::uint64_t> reads{0};
  std::atomic<std::uint64_t> wrong{0};
  std::atomic<std::uint64_t> failed{0};
  std::atomic<std::uint64_t> first_wrong_index{~0ull};

  void note_wrong(std::uint64_t i) {
    wrong.fetch_add(1, std::memory_order_relaxed);
    std::uint64_t none = ~0ull;
    first_wrong_index.compare_exchange_strong(none, i, std::memory_order_relaxed);
  }
  /// Reads element `i` of `a` (an array_ref, or a cursor of one) and counts it, failed or wrong
  /// against `expected`.
  template <class Reader>
  void read_and_check(Reader& a, std::uint64_t i, std::uint64_t expected) {
    reads.fetch_add(1, std::memory_order_relaxed);
    std::uint64_t v = 0;
    if (!a.try_read(i, v).ok()) {
      failed.fetch_add(1, std::memory_order_relaxed);
    } else if (v != expected) {
      note_wrong(i);
    }
  }
};

/// Software warps of `width` lanes, `warps` of them: each lane walks `walks` runs of `walk`
/// consecutive elements of `ref` (the pattern) from random starts of its own, each run with a
/// cursor of its own, and counts what it read into `tally`.
inline void walk_with_cursors(const array_ref<const std::uint64_t>& ref, std::uint64_t words,
                              unsigned warps, unsigned width, std::uint64_t walks,
                              std::uint64_t walk, read_tally& tally) {
  bam::testing::run_software_warps(warps, width, [&](unsigned lane, unsigned warp) {
    rng g((warp + 1) * 1000 + lane);  // lanes walk different places, some shared by chance
    for (std::uint64_t n = 0; n < walks; ++n) {
      auto cursor = ref.reader();
      const std::uint64_t start = g.below(words - walk);
      for (std::uint64_t j = 0; j < walk; ++j) {
        tally.read_and_check(cursor, start + j, pattern_word(start + j));
      }
    }
  });
}

/// A kernel for bam::launch (or raw threads): each logical thread reads `per_thread`
/// elements of `a`, in runs of `run` consecutive elements from random starts (so lines are
/// both missed and hit), and checks them against the pattern, whose element 0 is pattern word
/// `first_word`.
struct random_reader {
  array_ref<const std::uint64_t> a;
  std::uint64_t per_thread;
  std::uint64_t first_word = 0;
  read_tally* tally = nullptr;
  std::uint64_t run = 4;

  void operator()(thread_index t) const {
    rng r(t.id + 1);
    std::uint64_t failed = 0;
    std::uint64_t i = 0;
    for (std::uint64_t k = 0; k < per_thread; ++k) {
      i = k % run == 0 ? r.below(a.size()) : (i + 1) % a.size();
      std::uint64_t v = 0;
      if (!a.try_read(i, v).ok()) {
        ++failed;
      } else if (v != pattern_word(first_word + i)) {
        tally->note_wrong(i);
      }
    }
    tally->reads.fetch_add(per_thread, std::memory_order_relaxed);
    tally->failed.fetch_add(failed, std::memory_order_relaxed);
  }
};

}  // namespace bam::stress
