#pragma once
/// @file
/// What `bam copy` and `bam vector-add` do between launches before they check that the cache
/// gave back every buffer: late completions drained, commands that never complete aborted.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache/stats.hpp>
#include <bam/error.hpp>

#include "bam/storage_options.hpp"

namespace bam::tools {

/// Failures that the rest of a pass would meet again, each access after a wait of its own: a
/// cache whose buffers are held by commands that may still run (each access waits out the
/// victim bound before it fails), a queue halted until the host resets it, a lost slot. A
/// kernel that meets one ends its pass early (leaving what is not done to the next pass), and
/// the host settles the holds (settle_holds) before the next.
BAM_HD inline bool cuts_pass(io_status s) {
  return s.source() == status_source::cache_exhausted ||
         s.source() == status_source::queue_halted || s.source() == status_source::command_lost;
}

/// Waits for what the cache holds for commands that may still run to come back (a flush of
/// `out` drains their late completions), for at most one command timeout (and at most 10 s);
/// then aborts the commands still outstanding, late or never to complete (a dropped completion
/// never comes), by resetting the queues, which gives their buffers back, and says so on
/// standard error. The wait only spares a reset: a reset is safe for a command that would
/// still complete (as an NVMe controller reset aborts what it has). It waited three timeouts
/// and a second before, so a pass with a dropped command cost 1.3 s at a 100 ms timeout and a
/// copy with drops up to 110 timeouts in all. It resets at once when a queue is halted (a
/// submitter that could not get its slot halts its queue, and every later command on it fails
/// at once: a retry would fail again). Between launches only. Returns what is still held
/// (nothing without a cache).
template <class T>
cache_holds settle_holds(const storage_options& o, data_path& path, array<T>& out) {
  if (!path.cache) return {};
  cache_holds held = path.cache->held_resources();
  const std::uint32_t halted = path.storage ? path.storage->halted_queues() : 0u;
  if (held.total() == 0 && halted == 0) return held;
  const std::uint64_t timeout_ms = o.io_timeout_ms ? o.io_timeout_ms : 30'000;
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(std::min<std::uint64_t>(timeout_ms, 10'000));
  // With a queue halted the reset below comes anyway, and it gives back every hold at once:
  // waiting first for late completions only delayed it (commands left in a halted queue's ring
  // never complete, so the wait ran its whole bound).
  while (halted == 0 && held.total() != 0 && std::chrono::steady_clock::now() < until) {
    try {
      out.flush();
    } catch (const error&) {
      // A flush that fails still drained what came back; the caller's own flush reports.
    }
    held = path.cache->held_resources();
  }
  if ((held.total() != 0 || halted != 0) && path.storage) {
    const std::uint32_t released = path.reset_queues();
    std::fprintf(stderr,
                 "# reset the queues to abort commands that never completed: %u hold(s) given "
                 "back, %u halted queue(s) restarted\n",
                 released, halted);
    held = path.cache->held_resources();
  }
  return held;
}

/// Flushes `out`, up to `retries` more times after a failure, settling the holds in between (a
/// write-back that never completed halted its queue: every later one on it would fail too).
/// Each failure's message goes to `errors`. Returns whether a flush succeeded.
template <class T>
bool flush_retrying(const storage_options& o, unsigned retries, data_path& path, array<T>& out,
                    std::vector<std::string>& errors) {
  for (unsigned attempt = 0; attempt <= retries; ++attempt) {
    try {
      out.flush();
      return true;
    } catch (const error& e) {
      errors.emplace_back(e.what());
      (void)settle_holds(o, path, out);
      out.clear_failures();
    }
  }
  return false;
}

}  // namespace bam::tools
