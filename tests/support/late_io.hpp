#pragma once
/// @file
/// Helpers for tests of commands that fail, time out or complete late: running a body with a
/// bound on its time, and waiting until the late completions of abandoned commands have been
/// drained and the cache holds nothing.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include <bam/cache.hpp>
#include <bam/storage/device_set.hpp>
#include <bam/storage/emulated_storage.hpp>
#include <bam/storage/io.hpp>

namespace bam::testing {

/// Runs `body` on a thread of its own and waits at most `limit` for it. A body still running
/// then can neither be stopped nor outlived by what it uses: the process ends with a message
/// (the test that hangs is the failure).
inline void finishes_within(std::chrono::milliseconds limit, const std::function<void()>& body,
                            const std::string& what) {
  std::packaged_task<void()> task(body);
  std::future<void> done = task.get_future();
  std::thread runner(std::move(task));
  if (done.wait_for(limit) != std::future_status::ready) {
    std::fprintf(stderr, "FAILED: %s did not end within %lld ms\n", what.c_str(),
                 static_cast<long long>(limit.count()));
    std::fflush(stderr);
    std::_Exit(1);
  }
  runner.join();
  done.get();
}

/// Drains the set's queues until the cache holds nothing (or `limit` passes) and returns what
/// it holds then. Call it when no thread uses the cache and every late completion is due
/// within `limit`.
inline cache_holds drain_until_released(const page_cache& cache, const device_set_ref& set,
                                        std::chrono::milliseconds limit) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  for (;;) {
    device_drain(set);
    const cache_holds h = cache.held_resources();
    if (h.total() == 0 || std::chrono::steady_clock::now() > give_up) return h;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

/// Resets every halted queue of `ssd` (a queue halts when a submitter waits for its slot past
/// its deadline, as behind a command that came late): stops the controller, resets them (which
/// gives back what their abandoned commands held) and starts it again. Call it when no thread
/// uses the queues (CPU path). Returns how many it reset.
inline unsigned reset_halted_queues(emulated_storage& ssd) {
  const device_set_ref set = ssd.ref();
  unsigned halted = 0;
  for (std::uint32_t d = 0; d < set.devices; ++d) {
    for (std::uint32_t q = 0; q < set.queues_per_device; ++q) halted += set.queue(d, q).halted();
  }
  if (halted == 0) return 0;
  ssd.stop();
  for (std::uint32_t d = 0; d < set.devices; ++d) {
    for (std::uint32_t q = 0; q < set.queues_per_device; ++q) {
      if (set.queue(d, q).halted()) ssd.reset_queue(d, q);
    }
  }
  ssd.start();
  return halted;
}

/// "busy lines 0, ..." for a failure message.
inline std::string describe(const cache_holds& h) {
  return "busy lines " + std::to_string(h.busy_lines) + ", pinned lines " +
         std::to_string(h.pinned_lines) + ", busy slots " + std::to_string(h.busy_slots) +
         ", held frames " + std::to_string(h.held_frames) + ", pinned frames " +
         std::to_string(h.pinned_frames) + ", bounce buffers " + std::to_string(h.bounce_buffers);
}

}  // namespace bam::testing
