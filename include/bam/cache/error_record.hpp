#pragma once
/// @file
/// The sticky per-array error record: the first failed I/O of an array, written by the device
/// code that saw it and checked by the host after every launch and flush.

#include <cstdint>

#include <bam/nvme/status.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/config.hpp>

namespace bam {

enum class error_kind : std::uint32_t {
  none = 0,
  read = 1,
  write_back = 2,
  out_of_range = 3,
  cache = 4,
  bounce = 5  ///< no bounce buffer for a read-through in time (index: how many there are)
};

struct error_record {
  std::uint32_t state;   ///< 0 empty, 1 being written, 2 complete
  std::uint32_t kind;    ///< error_kind
  std::uint32_t status;  ///< io_status bits
  std::uint32_t device;
  std::uint32_t queue;
  std::uint32_t command_id;
  std::uint64_t lba;
  std::uint64_t index;  ///< element index for out_of_range
  std::uint64_t count;  ///< errors seen (the record keeps the first)

  /// Records an error; only the first caller's details are kept. Out of line: every access
  /// path has an error branch, and none should carry this code.
  BAM_HD BAM_NOINLINE void record(error_kind k, io_status s, std::uint32_t dev, std::uint32_t q,
                                  std::uint32_t cid, std::uint64_t at_lba, std::uint64_t at_index) {
    // relaxed: a count only.
    atomic_ref<std::uint64_t, scope::system>(count).fetch_add(1, order::relaxed);
    std::uint32_t expected = 0;
    atomic_ref<std::uint32_t, scope::system> st(state);
    // relaxed: claiming the record; the fields are published by the release below.
    if (!st.compare_exchange(expected, 1u, order::relaxed)) return;
    kind = static_cast<std::uint32_t>(k);
    status = s.bits();
    device = dev;
    queue = q;
    command_id = cid;
    lba = at_lba;
    index = at_index;
    // release (system scope): the fields before the host's acquire of state == 2.
    st.store(2u, order::release);
  }
};

}  // namespace bam
