// The io_uring engine: one ring per server thread, submissions batched per kick.
#include <liburing.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <bam/error.hpp>

#include "storage/file/io_engine.hpp"

namespace bam::file_io {

namespace {

class uring_engine final : public io_engine {
 public:
  explicit uring_engine(std::uint32_t depth) : depth_(depth) {}
  ~uring_engine() override {
    if (ready_) io_uring_queue_exit(&ring_);
  }
  uring_engine(const uring_engine&) = delete;
  uring_engine& operator=(const uring_engine&) = delete;

  int init() {
    const int r = io_uring_queue_init(depth_, &ring_, 0);
    ready_ = r == 0;
    return r;
  }

  std::uint32_t depth() const override { return depth_; }
  const char* name() const override { return "io_uring"; }

  void submit(const io_request& r) override {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {  // the ring holds depth_ entries: flush the queued ones first
      kick();
      sqe = io_uring_get_sqe(&ring_);
      if (sqe == nullptr) throw error("io_uring: submission ring full");
    }
    switch (r.kind) {
      case io_kind::read:
        io_uring_prep_readv(sqe, r.fd, r.iov, r.iov_count, r.offset);
        break;
      case io_kind::write:
        io_uring_prep_writev(sqe, r.fd, r.iov, r.iov_count, r.offset);
        break;
      case io_kind::datasync:
        io_uring_prep_fsync(sqe, r.fd, IORING_FSYNC_DATASYNC);
        break;
    }
    io_uring_sqe_set_data64(sqe, r.tag);
    ++queued_;
  }

  void kick() override {
    while (queued_ > 0) {
      const int n = io_uring_submit(&ring_);
      if (n == -EINTR || n == -EAGAIN) continue;
      if (n < 0) throw error(std::string("io_uring_submit: ") + std::strerror(-n));
      queued_ -= static_cast<std::uint32_t>(n) < queued_ ? static_cast<std::uint32_t>(n) : queued_;
      if (n == 0) break;
    }
  }

  std::uint32_t queued() const override { return queued_; }

  std::uint32_t reap(std::vector<io_result>& out, std::uint64_t wait_ns,
                     std::uint32_t want) override {
    std::uint32_t got = take(out);
    if (got != 0 || wait_ns == 0) return got;
    __kernel_timespec ts{static_cast<long long>(wait_ns / 1'000'000'000),
                         static_cast<long long>(wait_ns % 1'000'000'000)};
    io_uring_cqe* cqe = nullptr;
    // One io_uring_enter submits what is queued and sleeps until `want` have completed or the
    // time is up. Its result is not needed: a timeout or an error leaves the CQ as it is, and
    // what it did not submit stays in the SQ for kick(), which retries or throws as before.
    (void)io_uring_submit_and_wait_timeout(&ring_, &cqe, want > 0 ? want : 1, &ts, nullptr);
    queued_ = io_uring_sq_ready(&ring_);
    kick();
    return take(out);
  }

 private:
  std::uint32_t take(std::vector<io_result>& out) {
    std::uint32_t got = 0;
    unsigned head = 0;
    io_uring_cqe* cqe = nullptr;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      out.push_back({io_uring_cqe_get_data64(cqe), cqe->res});
      ++got;
    }
    io_uring_cq_advance(&ring_, got);
    return got;
  }

  io_uring ring_{};
  std::uint32_t depth_;
  std::uint32_t queued_ = 0;
  bool ready_ = false;
};

}  // namespace

std::unique_ptr<io_engine> make_uring_engine(std::uint32_t depth, std::string& why) {
  // What a sandbox that forbids io_uring looks like, for tests and for users who want it off.
  if (std::getenv("BAM_NO_IO_URING") != nullptr) {
    why = "BAM_NO_IO_URING is set";
    return nullptr;
  }
  auto e = std::make_unique<uring_engine>(depth);
  const int r = e->init();
  if (r != 0) {
    why = std::string("io_uring_queue_init: ") + std::strerror(-r);
    return nullptr;
  }
  return e;
}

}  // namespace bam::file_io
