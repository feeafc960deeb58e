#pragma once
// What the owners of a device set read from its queues on the host, whichever backend serves
// them: a queue's counters, and its oldest outstanding command for the watchdog.

#include <atomic>
#include <cstdint>
#include <string>

#include <bam/platform/atomic.hpp>
#include <bam/queue/queue_pair.hpp>

namespace bam::storage_detail {

/// A snapshot of the counters in a queue's control block (host-reachable memory), read while
/// submitters and drainers store them.
inline queue_counters read_counters(const queue_pair_ref& q) {
  queue_counters& c = q.control()->counters;
  auto read = [](std::uint64_t& word) {
    return atomic_ref<std::uint64_t>(word).load(order::relaxed);  // relaxed: a snapshot
  };
  return {read(c.sq_doorbells), read(c.submitted),        read(c.cq_doorbells),
          read(c.drained),      read(c.late_completions), read(c.bad_completions)};
}

/// "<name> queue <id>: command id <c> outstanding for <n> ms" when the oldest of `depth`
/// fetch stamps (one per command id, 0: none outstanding) is older than `age_ns`; "" otherwise.
inline std::string stuck_line(const std::string& name, const queue_pair_ref& q,
                              const std::atomic<std::uint64_t>* fetched_at, std::uint64_t now,
                              std::uint64_t age_ns) {
  std::uint64_t oldest = 0;
  std::uint32_t oldest_cid = 0;
  for (std::uint32_t c = 0; c < q.depth(); ++c) {
    const std::uint64_t t = fetched_at[c].load(std::memory_order_relaxed);  // relaxed: a look
    if (t != 0 && (oldest == 0 || t < oldest)) {
      oldest = t;
      oldest_cid = c;
    }
  }
  // A pass that began after our clock read may have stamped a later time than `now`.
  if (oldest == 0 || now <= oldest || now - oldest <= age_ns) return {};
  return name + " queue " + std::to_string(q.id()) + ": command id " + std::to_string(oldest_cid) +
         " outstanding for " + std::to_string((now - oldest) / 1'000'000) + " ms";
}

}  // namespace bam::storage_detail
