#include "storage/queue_shape.hpp"

#include <bam/error.hpp>
#include <bam/queue/queue_pair.hpp>

namespace bam::storage_detail {

void check_queue_shape(const queue_shape& s, const std::string& what) {
  auto bad = [&what](const std::string& why) { throw input_error(what + ": " + why); };
  if (s.devices == 0 || s.devices > 1024) {
    bad("devices must be 1..1024, got " + std::to_string(s.devices));
  }
  if (s.queues_per_device == 0 || s.queues_per_device > 65535) {
    bad("queues per device must be 1..65535, got " + std::to_string(s.queues_per_device));
  }
  if (s.queue_depth < 2 || s.queue_depth > max_queue_depth) {
    bad("queue depth must be 2..65535, got " + std::to_string(s.queue_depth));
  }
  if (s.block_bytes != 512 && s.block_bytes != 4096) {
    bad("block size must be 512 or 4096, got " + std::to_string(s.block_bytes));
  }
  if (s.striped && (s.stripe_bytes == 0 || s.stripe_bytes % s.block_bytes != 0)) {
    bad("stripe unit must be a multiple of the block size, got " + std::to_string(s.stripe_bytes));
  }
  const std::uint32_t t = s.max_transfer_bytes;
  if (t == 0 || (t & (t - 1)) != 0 || t < s.block_bytes) {
    bad("max transfer must be a power of two of at least one block");
  }
  if (s.timeout_ns == 0) bad("timeout must be positive");
  if (s.wait_sleep_ns > max_sleep_ns) bad("wait sleep must be at most 1 ms (nanosleep's limit)");
}

}  // namespace bam::storage_detail
