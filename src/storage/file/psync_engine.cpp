// The psync engine: a few worker threads doing preadv/pwritev/fdatasync. Works wherever files
// do (no io_uring needed); its depth is its thread count.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "runtime/thread_cpu_time.hpp"
#include "storage/file/io_engine.hpp"

namespace bam::file_io {

namespace {

std::int64_t run(const io_request& r) {
  for (;;) {
    ssize_t n = 0;
    switch (r.kind) {
      case io_kind::read:
        n = ::preadv(r.fd, r.iov, static_cast<int>(r.iov_count), static_cast<off_t>(r.offset));
        break;
      case io_kind::write:
        n = ::pwritev(r.fd, r.iov, static_cast<int>(r.iov_count), static_cast<off_t>(r.offset));
        break;
      case io_kind::datasync:
        n = ::fdatasync(r.fd);
        break;
    }
    if (n >= 0) return n;
    if (errno != EINTR) return -errno;
  }
}

class psync_engine final : public io_engine {
 public:
  psync_engine(std::uint32_t depth, std::uint32_t threads)
      : depth_(depth), cpu_ns_(std::make_unique<std::atomic<std::uint64_t>[]>(threads)) {
    for (std::uint32_t t = 0; t < threads; ++t) workers_.emplace_back([this, t] { work(t); });
  }
  ~psync_engine() override {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    ready_.notify_all();
    for (auto& t : workers_) t.join();
  }
  psync_engine(const psync_engine&) = delete;
  psync_engine& operator=(const psync_engine&) = delete;

  std::uint32_t depth() const override { return depth_; }
  const char* name() const override { return "psync"; }
  double worker_cpu_seconds() const override {
    std::uint64_t ns = 0;
    for (std::size_t t = 0; t < workers_.size(); ++t) {
      ns += cpu_ns_[t].load(std::memory_order_relaxed);  // relaxed: a statistic
    }
    return static_cast<double>(ns) * 1e-9;
  }

  void submit(const io_request& r) override {
    {
      std::lock_guard lock(mutex_);
      todo_.push_back(r);
    }
    ready_.notify_one();
  }
  void kick() override {}

  std::uint32_t reap(std::vector<io_result>& out, std::uint64_t wait_ns,
                     std::uint32_t want) override {
    std::unique_lock lock(mutex_);
    if (done_.empty() && wait_ns != 0) {
      // The workers notify once `wanted_` are done: a batch, not every operation, wakes us.
      wanted_ = std::max<std::size_t>(want, 1);
      finished_.wait_for(lock, std::chrono::nanoseconds(wait_ns),
                         [this] { return done_.size() >= wanted_; });
      wanted_ = 1;
    }
    const auto got = static_cast<std::uint32_t>(done_.size());
    out.insert(out.end(), done_.begin(), done_.end());
    done_.clear();
    return got;
  }

 private:
  void work(std::uint32_t t) {
    const std::uint64_t began = runtime::thread_cpu_ns();
    std::unique_lock lock(mutex_);
    for (;;) {
      ready_.wait(lock, [this] { return stop_ || !todo_.empty(); });
      if (stop_) return;
      const io_request r = todo_.front();
      todo_.pop_front();
      lock.unlock();
      const io_result result{r.tag, run(r)};
      // relaxed: a statistic, read by another thread at any time.
      cpu_ns_[t].store(runtime::thread_cpu_ns() - began, std::memory_order_relaxed);
      lock.lock();
      done_.push_back(result);
      if (done_.size() >= wanted_) finished_.notify_one();
    }
  }

  std::uint32_t depth_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::condition_variable finished_;
  std::deque<io_request> todo_;
  std::vector<io_result> done_;
  std::size_t wanted_ = 1;  // finished operations a waiting reap() wants before it wakes
  std::unique_ptr<std::atomic<std::uint64_t>[]> cpu_ns_;  // per worker
  std::vector<std::thread> workers_;
  bool stop_ = false;
};

}  // namespace

std::unique_ptr<io_engine> make_psync_engine(std::uint32_t depth, std::uint32_t threads) {
  return std::make_unique<psync_engine>(depth, threads == 0 ? 1 : threads);
}

}  // namespace bam::file_io
