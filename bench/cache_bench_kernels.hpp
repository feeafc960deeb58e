#pragma once
/// @file
/// The kernels of `bam bench cache`, portable (grid-stride functors over bam::launch): the
/// same source runs on a CPU host_stream and, launched with launch.cuh, on GPU threads.

#include <cstdint>

#include <bam/array_ref.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/config.hpp>
#include <bam/platform/launch.hpp>

namespace bam::bench {

/// A 64-bit mix (splitmix64's finalizer): random indices and the image's values.
BAM_HD constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The value element `i` of the benchmark's image holds.
template <class T>
BAM_HD constexpr T value_at(std::uint64_t i) {
  return static_cast<T>(mix64(i ^ 0x5eedull));
}

/// What the timed reads found wrong: words the host reads after the launch.
struct read_faults {
  std::uint64_t wrong = 0;   ///< reads that returned other bytes than the image's
  std::uint64_t failed = 0;  ///< reads whose I/O failed
};

/// Reads `accesses` random elements of `a` (index k -> mix64(seed + k) mod size), checking
/// each against value_at.
template <class T>
struct random_reads {
  array_ref<const T> a;
  std::uint64_t accesses;
  std::uint64_t seed;
  read_faults* faults;

  BAM_HD void operator()(thread_index t) const {
    std::uint64_t wrong = 0, failed = 0;
    for (std::uint64_t k = t.id; k < accesses; k += t.count) {
      const std::uint64_t i = mix64(seed + k) % a.size();
      T v{};
      if (!a.try_read(i, v).ok()) {
        ++failed;
      } else if (v != value_at<T>(i)) {
        ++wrong;
      }
    }
    // relaxed: totals, read by the host after the launch has completed.
    if (wrong) atomic_ref<std::uint64_t>(faults->wrong).fetch_add(wrong, order::relaxed);
    if (failed) atomic_ref<std::uint64_t>(faults->failed).fetch_add(failed, order::relaxed);
  }
};

/// Reads one element of each of the first `lines` lines of `a` (fills the cache).
template <class T>
struct touch_lines {
  array_ref<const T> a;
  std::uint64_t lines;
  std::uint64_t per_line;  ///< elements per line
  read_faults* faults;

  BAM_HD void operator()(thread_index t) const {
    std::uint64_t failed = 0;
    for (std::uint64_t l = t.id; l < lines; l += t.count) {
      const std::uint64_t i = l * per_line;
      if (i >= a.size()) break;
      T v{};
      if (!a.try_read(i, v).ok()) ++failed;
    }
    // relaxed: a total, read by the host after the launch has completed.
    if (failed) atomic_ref<std::uint64_t>(faults->failed).fetch_add(failed, order::relaxed);
  }
};

/// The ceiling: the same random reads straight from the image in memory (no cache, no I/O).
template <class T>
struct random_loads {
  const T* data;
  std::uint64_t size;
  std::uint64_t accesses;
  std::uint64_t seed;
  read_faults* faults;

  BAM_HD void operator()(thread_index t) const {
    std::uint64_t wrong = 0;
    for (std::uint64_t k = t.id; k < accesses; k += t.count) {
      const std::uint64_t i = mix64(seed + k) % size;
      if (data[i] != value_at<T>(i)) ++wrong;
    }
    // relaxed: a total, read by the host after the launch has completed.
    if (wrong) atomic_ref<std::uint64_t>(faults->wrong).fetch_add(wrong, order::relaxed);
  }
};

}  // namespace bam::bench
