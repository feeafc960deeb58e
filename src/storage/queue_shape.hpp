#pragma once
// The checks every device set makes of its shape (queues, depth, block, stripe, transfer size,
// deadlines) before it allocates, whichever backend serves it.

#include <cstdint>
#include <string>

namespace bam::storage_detail {

struct queue_shape {
  std::uint32_t devices;
  std::uint32_t queues_per_device;
  std::uint32_t queue_depth;
  std::uint32_t block_bytes;
  std::uint64_t stripe_bytes;
  bool striped;  ///< several devices, not replicated: the stripe unit matters
  std::uint32_t max_transfer_bytes;
  std::uint64_t timeout_ns;
  std::uint32_t wait_sleep_ns;
};

/// Throws bam::input_error("<what>: <the field and its allowed range>") for the first field
/// out of range.
void check_queue_shape(const queue_shape& s, const std::string& what);

}  // namespace bam::storage_detail
