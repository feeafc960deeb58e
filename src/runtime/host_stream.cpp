#include <bam/platform/launch.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <bam/platform/agent.hpp>

namespace bam {

// One job at a time runs on all workers (stream order); workers claim chunks of logical
// threads from a shared counter.
struct host_stream::impl {
  struct job {
    std::uint64_t threads;
    std::function<void(thread_index)> body;
  };

  explicit impl(unsigned n) {
    if (n == 0) n = std::max(1u, std::thread::hardware_concurrency()) * 4u;
    workers.reserve(n);
    for (unsigned w = 0; w < n; ++w) {
      workers.emplace_back([this, w] { run(w); });
    }
  }

  ~impl() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (auto& t : workers) t.join();
  }

  void run(unsigned worker) {
    detail::host_agent = worker;
    std::uint64_t seen = 0;
    for (;;) {
      job* current = nullptr;
      {
        std::unique_lock lock(mutex);
        wake.wait(lock, [&] { return stopping || (active && generation != seen); });
        if (stopping) return;
        seen = generation;
        current = active;
      }
      const std::uint64_t chunk =
          std::max<std::uint64_t>(1, current->threads / (workers.size() * 8));
      for (;;) {
        const std::uint64_t first = next.fetch_add(chunk, std::memory_order_relaxed);
        if (first >= current->threads) break;
        const std::uint64_t last = std::min(current->threads, first + chunk);
        for (std::uint64_t id = first; id < last; ++id) {
          try {
            current->body(thread_index{id, current->threads});
          } catch (...) {
            std::lock_guard lock(mutex);
            if (!failure) failure = std::current_exception();
          }
        }
      }
      std::lock_guard lock(mutex);
      if (++finished == workers.size()) {
        active = nullptr;
        queue.pop_front();
        start_next_locked();
        done.notify_all();
      }
    }
  }

  // Starts the job at the queue's front, if any. Called with the mutex held.
  void start_next_locked() {
    if (queue.empty() || active) return;
    active = &queue.front();
    next.store(0, std::memory_order_relaxed);
    finished = 0;
    ++generation;
    wake.notify_all();
  }

  std::mutex mutex;
  std::condition_variable wake;
  std::condition_variable done;
  std::deque<job> queue;
  job* active = nullptr;
  std::uint64_t generation = 0;
  std::atomic<std::uint64_t> next{0};
  std::size_t finished = 0;
  bool stopping = false;
  std::exception_ptr failure;
  std::vector<std::thread> workers;
};

host_stream::host_stream(unsigned workers) : impl_(std::make_unique<impl>(workers)) {}
host_stream::~host_stream() = default;
host_stream::host_stream(host_stream&&) noexcept = default;
host_stream& host_stream::operator=(host_stream&&) noexcept = default;

void host_stream::enqueue(std::uint64_t threads, std::function<void(thread_index)> body) {
  if (threads == 0) return;
  std::lock_guard lock(impl_->mutex);
  impl_->queue.push_back({threads, std::move(body)});
  impl_->start_next_locked();
}

void host_stream::synchronize() {
  std::unique_lock lock(impl_->mutex);
  impl_->done.wait(lock, [&] { return impl_->queue.empty(); });
  if (impl_->failure) {
    std::exception_ptr f = std::exchange(impl_->failure, nullptr);
    std::rethrow_exception(f);
  }
}

unsigned host_stream::workers() const { return static_cast<unsigned>(impl_->workers.size()); }

}  // namespace bam
