#include "graph/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace bam::graph {

unsigned hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

void parallel_chunks(unsigned threads, std::uint64_t chunk_count,
                     const std::function<void(std::uint64_t)>& body) {
  if (chunk_count == 0) return;
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto work = [&] {
    for (;;) {
      if (failed.load(std::memory_order_relaxed)) return;
      const std::uint64_t chunk = next.fetch_add(1, std::memory_order_relaxed);
      if (chunk >= chunk_count) return;
      try {
        body(chunk);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
        return;
      }
    }
  };
  const auto helpers =
      static_cast<unsigned>(std::min<std::uint64_t>(std::max(threads, 1u), chunk_count)) - 1;
  std::vector<std::thread> pool;
  pool.reserve(helpers);
  for (unsigned t = 0; t < helpers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace bam::graph
