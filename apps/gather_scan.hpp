#pragma once
/// @file
/// Two array workloads for the multi-tenant study (`bam tenants`): a random gather and a
/// sequential scan over an array of 8-byte values on storage, each summing what it read into
/// a checksum the host can recompute (the values are synthetic_value(i)).
///
///     auto view_for = [&](apps::launch_shape s) { return a.ref_for_launch(s.grid, s.block); };
///     apps::stream_result r = apps::run_gather(exec, reads, apps::stream_source{view_for, 0});
///
/// Portable kernels (bam/platform/launch.hpp): grid-stride loops, one relaxed atomic add per
/// thread at the end.

#include <chrono>
#include <cstdint>
#include <span>

#include <bam/array_ref.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/config.hpp>
#include <bam/platform/launch.hpp>

#include "apps/driver_support.hpp"
#include "apps/executor.hpp"
#include "apps/kernel_support.hpp"

namespace bam::apps {

/// The value stored at element `i` of a gather or scan array (splitmix64 of i).
[[nodiscard]] BAM_HD constexpr std::uint64_t synthetic_value(std::uint64_t i) {
  std::uint64_t z = i + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// The element the gather reads at step `k` (uniform over `count` elements).
[[nodiscard]] BAM_HD constexpr std::uint64_t gather_index(std::uint64_t k, std::uint64_t count) {
  return synthetic_value(k ^ 0x5bd1e995ull) % count;
}

/// Adds a thread's partial sum (and its failed reads) to the launch's two counters.
BAM_HD inline void add_partial(std::uint64_t* sums, std::uint64_t sum, std::uint64_t failed) {
  // relaxed: the counters are read by download(), after the launch has finished.
  atomic_ref<std::uint64_t>(sums[0]).fetch_add(sum, order::relaxed);
  if (failed != 0) atomic_ref<std::uint64_t>(sums[1]).fetch_add(failed, order::relaxed);
}

/// Reads `reads` random elements of `values` and sums them.
template <class View>
struct gather_kernel {
  View values;
  std::uint64_t reads;
  std::uint64_t* sums;  ///< [0]: sum of what was read, [1]: failed reads
  BAM_HD void operator()(thread_index t) const {
    std::uint64_t sum = 0;
    std::uint64_t failed = 0;
    for (std::uint64_t k = t.id; k < reads; k += t.count) {
      std::uint64_t v = 0;
      if (values.try_read(gather_index(k, values.size()), v).ok()) {
        sum += v;
      } else {
        ++failed;
      }
    }
    add_partial(sums, sum, failed);
  }
};

/// Reads every element of `values` and sums: each warp one contiguous chunk, in order, its
/// lanes on adjacent elements (a CPU thread, a warp of one, walks its chunk line by line
/// instead of hopping a grid's stride across every line).
template <class View>
struct scan_kernel {
  View values;
  std::uint64_t* sums;
  BAM_HD void operator()(thread_index t) const {
    const warp_position w = warp_of(t);
    const std::uint64_t n = values.size();
    const std::uint64_t chunk = (n + w.warps - 1) / w.warps;
    const std::uint64_t begin = w.warp * chunk < n ? w.warp * chunk : n;
    const std::uint64_t end = n - begin > chunk ? begin + chunk : n;
    std::uint64_t sum = 0;
    std::uint64_t failed = 0;
    for (std::uint64_t i = begin + w.lane; i < end; i += w.width) {
      std::uint64_t v = 0;
      if (values.try_read(i, v).ok()) {
        sum += v;
      } else {
        ++failed;
      }
    }
    add_partial(sums, sum, failed);
  }
};

/// What a gather or a scan did.
struct stream_result {
  std::uint64_t checksum = 0;  ///< sum (mod 2^64) of the values read
  std::uint64_t reads = 0;
  std::uint64_t failed = 0;  ///< reads that returned an error (the array's check() names it)
  double seconds = 0;
};

/// The checksum a gather of `reads` over `count` elements must produce (host).
[[nodiscard]] inline std::uint64_t expected_gather(std::uint64_t count, std::uint64_t reads) {
  std::uint64_t sum = 0;
  for (std::uint64_t k = 0; k < reads; ++k) sum += synthetic_value(gather_index(k, count));
  return sum;
}

/// The checksum of a scan over `count` elements (host).
[[nodiscard]] inline std::uint64_t expected_scan(std::uint64_t count) {
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < count; ++i) sum += synthetic_value(i);
  return sum;
}

/// How a gather or scan launches: `view_for(shape)` gives the view a launch of that shape
/// holds; at most `max_threads` threads per launch (0: no limit), as
/// array_edges::max_launch_threads says for a cache (so the cache serves the launch).
template <class ViewFor>
struct stream_source {
  ViewFor view_for;
  std::uint64_t max_threads = 0;
};

/// Runs one launch of the kernel `make(view, sums)` over `items` items and returns the sums.
template <class Exec, class ViewFor, class Make>
stream_result run_stream_kernel(Exec& exec, std::uint64_t items,
                                const stream_source<ViewFor>& source, Make&& make) {
  auto sums = exec.template allocate<std::uint64_t>(2);
  const std::uint64_t zeros[2] = {0, 0};
  exec.upload(sums, 0, std::span<const std::uint64_t>(zeros));
  const auto start = std::chrono::steady_clock::now();
  const launch_shape shape = within(exec.shape_for(items), source.max_threads);
  exec.launch(shape, make(source.view_for(shape), sums.data()));
  std::uint64_t out[2] = {0, 0};
  exec.download(sums, 0, std::span<std::uint64_t>(out));
  return {out[0], items, out[1], seconds_since(start)};
}

/// A gather of `reads` random elements.
template <class Exec, class ViewFor>
stream_result run_gather(Exec& exec, std::uint64_t reads, const stream_source<ViewFor>& source) {
  return run_stream_kernel(exec, reads, source, [&](auto view, std::uint64_t* sums) {
    return gather_kernel<decltype(view)>{view, reads, sums};
  });
}

/// A scan of all `count` elements.
template <class Exec, class ViewFor>
stream_result run_scan(Exec& exec, std::uint64_t count, const stream_source<ViewFor>& source) {
  return run_stream_kernel(exec, count, source, [](auto view, std::uint64_t* sums) {
    return scan_kernel<decltype(view)>{view, sums};
  });
}

}  // namespace bam::apps
