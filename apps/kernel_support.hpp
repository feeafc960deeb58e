#pragma once
/// @file
/// Pieces every app kernel uses: the warp a logical thread belongs to, the warp-cooperative
/// walk over one adjacency list, and a fill kernel. Portable code (the app kernel model,
/// bam/platform/launch.hpp): grid-stride loops, no barriers, no shared memory.

#include <cstdint>
#include <type_traits>
#include <utility>

#include <bam/platform/atomic.hpp>
#include <bam/platform/config.hpp>
#include <bam/platform/launch.hpp>
#include <bam/platform/warp.hpp>

namespace bam::apps {

/// Where a logical thread stands when work is handed out a warp at a time: warp `warp` of
/// `warps`, lane `lane` of `width` (32 on a GPU, 1 on a CPU thread). Executors launch whole
/// warps, so the logical thread ids of one warp are consecutive and start at a multiple of
/// the width.
struct warp_position {
  std::uint64_t warp;
  std::uint64_t warps;
  unsigned lane;
  unsigned width;
};

[[nodiscard]] BAM_HD inline warp_position warp_of(thread_index t) {
  const unsigned width = warp::width();
  return {t.id / width, t.count / width, warp::lane(), width};
}

/// Calls `visit(v)` for every neighbour v of one vertex, whose ids are [begin, end) of `ids`,
/// with the lanes of the calling warp reading consecutive entries (EMOGI's access pattern: on
/// a GPU one warp's reads fall in one or two lines and coalesce into one probe each). Every
/// lane of the warp calls this for the same vertex. A lane keeps one cursor, so the entries
/// it reads from one line cost one pin; the cursor drops its pin when the list ends, so a warp
/// never holds more than the lines of the list it is on.
///
/// An id that cannot be read (the array recorded the error; the host's check() throws) is
/// skipped; an id >= n (a corrupt file, or the poison value) is counted in `*bad_ids`.
template <class View, class Visit>
BAM_HD void for_each_neighbour(const View& ids, const warp_position& w, std::uint64_t begin,
                               std::uint64_t end, std::uint64_t n, std::uint64_t* bad_ids,
                               Visit&& visit) {
  auto cursor = ids.reader();
  for (std::uint64_t e = begin + w.lane; e < end; e += w.width) {
    typename View::value_type id;
    if (!cursor.try_read(e, id).ok()) continue;
    const std::uint64_t v = id;
    if (v >= n) {
      // relaxed: a count the host reads after the launch has finished.
      atomic_ref<std::uint64_t>(*bad_ids).fetch_add(1, order::relaxed);
      continue;
    }
    visit(v);
  }
}

/// data[i] = value for every i < n.
template <class T>
struct fill_kernel {
  T* data;
  std::uint64_t n;
  T value;

  BAM_HD void operator()(thread_index t) const {
    for (std::uint64_t i = t.id; i < n; i += t.count) data[i] = value;
  }
};

/// Queues a fill of a whole executor buffer.
template <class Exec, class Buffer,
          class T = std::remove_pointer_t<decltype(std::declval<Buffer&>().data())>>
void fill(Exec& exec, Buffer& buffer, std::type_identity_t<T> value) {
  if (buffer.size() == 0) return;
  exec.launch(exec.shape_for(buffer.size()), fill_kernel<T>{buffer.data(), buffer.size(), value});
}

}  // namespace bam::apps
