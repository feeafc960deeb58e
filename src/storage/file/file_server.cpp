#include "storage/file/file_server.hpp"
#include "runtime/thread_cpu_time.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include <bam/error.hpp>
#include <bam/nvme/prp.hpp>
#include <bam/nvme/status.hpp>
#include <bam/platform/clock.hpp>

namespace bam::file_io {

struct file_server::slot {
  std::uint32_t queue = 0;
  nvme::submission_entry command{};
  io_kind kind = io_kind::read;
  std::uint64_t offset = 0;         // file byte of the first block
  std::uint64_t bytes = 0;          // bytes the command names
  std::uint64_t inside = 0;         // of them, bytes inside the file (the rest reads as zero)
  std::vector<iovec> memory;        // the PRP segments, coalesced
  std::vector<iovec> iov;           // what the I/O reads into or writes from
  std::uint8_t* staging = nullptr;  // GPU: a pinned buffer of max_transfer_bytes
  int fd = -1;
  bool direct = false;
  bool truncate_after = false;  // a write of the whole last block: cut the file back after it
};

namespace {

constexpr std::uint64_t direct_alignment = 512;  // O_DIRECT's usual need; EINVAL falls back
// How long a pass that found nothing sleeps in the kernel for completions: short while free
// slots could take new commands (doorbells do not wake us), longer once every slot is busy.
constexpr std::uint64_t reap_wait_ns = 50'000;
constexpr std::uint64_t busy_reap_wait_ns = 200'000;
constexpr std::uint64_t longest_idle_sleep_ns = 100'000;
// Batching, in fractions of the engine's depth: such a wait wants a quarter of what is in
// flight; a pass that found work submits once an eighth is queued, or at once while the disk
// holds under a quarter (so it never runs dry while commands wait for the batch to fill).
constexpr std::uint32_t reap_batch_divisor = 4;
constexpr std::uint32_t submit_batch_divisor = 8;
constexpr std::uint32_t low_water_divisor = 4;

void add(std::atomic<std::uint64_t>& c, std::uint64_t v) {
  c.fetch_add(v, std::memory_order_relaxed);  // relaxed: a statistic, read after the fact
}

// The NVMe status for an I/O that failed with `err`.
std::uint16_t status_for(int err, io_kind kind) {
  using nvme::generic_status;
  using nvme::make_status_field;
  using nvme::media_status;
  switch (err) {
    case EIO:
    case ENODATA:
    case EBADMSG:
      return make_status_field(kind == io_kind::read ? media_status::unrecovered_read_error
                                                     : media_status::write_fault);
    case EROFS:
    case EPERM:
    case EACCES:
    case EBADF:
      return make_status_field(generic_status::namespace_write_protected, true);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return make_status_field(generic_status::capacity_exceeded, true);
    default:
      return make_status_field(generic_status::internal_error);
  }
}

bool aligned(const std::vector<iovec>& iov, std::uint64_t a) {
  return std::all_of(iov.begin(), iov.end(), [a](const iovec& v) {
    return reinterpret_cast<std::uintptr_t>(v.iov_base) % a == 0 && v.iov_len % a == 0;
  });
}

// Appends the first `bytes` of `from` to `out`.
void append_prefix(std::vector<iovec>& out, const std::vector<iovec>& from, std::uint64_t bytes) {
  for (const iovec& v : from) {
    if (bytes == 0) break;
    const std::uint64_t n = std::min<std::uint64_t>(v.iov_len, bytes);
    out.push_back({v.iov_base, n});
    bytes -= n;
  }
}

// The first `bytes` of `from`.
std::vector<iovec> prefix(const std::vector<iovec>& from, std::uint64_t bytes) {
  std::vector<iovec> out;
  append_prefix(out, from, bytes);
  return out;
}

// `from` without its first `bytes`.
std::vector<iovec> suffix(const std::vector<iovec>& from, std::uint64_t bytes) {
  std::vector<iovec> out;
  for (const iovec& v : from) {
    if (bytes >= v.iov_len) {
      bytes -= v.iov_len;
      continue;
    }
    out.push_back({static_cast<std::uint8_t*>(v.iov_base) + bytes, v.iov_len - bytes});
    bytes = 0;
  }
  return out;
}

// Finishes a short transfer with blocking calls on the buffered descriptor. Returns the bytes
// moved in all, or -errno.
std::int64_t finish_rest(int fd, io_kind kind, std::uint64_t offset, const std::vector<iovec>& iov,
                         std::uint64_t done, std::uint64_t want) {
  while (done < want) {
    const std::vector<iovec> rest = prefix(suffix(iov, done), want - done);
    const auto at = static_cast<off_t>(offset + done);
    const ssize_t n = kind == io_kind::read
                          ? ::preadv(fd, rest.data(), static_cast<int>(rest.size()), at)
                          : ::pwritev(fd, rest.data(), static_cast<int>(rest.size()), at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) break;  // the file ended early: it shrank since it was opened
    done += static_cast<std::uint64_t>(n);
  }
  return static_cast<std::int64_t>(done);
}

}  // namespace

file_server::file_server(const file_set& files, std::vector<emulated::namespace_view> namespaces,
                         std::vector<served_queue*> queues, device_counters* counters,
                         std::unique_ptr<io_engine> engine, staging_copier* copier,
                         const server_options& options)
    : files_(files),
      namespaces_(std::move(namespaces)),
      queues_(std::move(queues)),
      counters_(counters),
      engine_(std::move(engine)),
      copier_(copier),
      options_(options),
      slots_(engine_->depth()) {
  for (std::uint32_t i = engine_->depth(); i-- > 0;) free_.push_back(i);
  if (copier_ != nullptr) {
    // Allocated now: pinned allocation waits for running kernels.
    for (slot& s : slots_) {
      s.staging = static_cast<std::uint8_t*>(copier_->allocate(options_.max_transfer_bytes));
    }
  }
}

file_server::~file_server() {
  stop();
  if (abandoned_) {
    // Operations that may still run name the slots' iovecs and staging buffers, and the
    // engine's threads or ring may still move data: none of it is freed or reused. A leak,
    // bounded by one server's slots, rather than the OS or a worker writing into freed memory.
    (void)new std::vector<slot>(std::move(slots_));  // the slots keep their addresses
    (void)engine_.release();
    return;
  }
  if (copier_ != nullptr) {
    for (slot& s : slots_) copier_->release(s.staging);
  }
}

void file_server::start() {
  if (thread_.joinable()) return;
  stop_.store(false, std::memory_order_relaxed);
  thread_ = std::thread([this] { run(); });
  // A name perf and top show: these threads' CPU is what the file backend costs.
  (void)::pthread_setname_np(thread_.native_handle(), "bam-file-io");
}

void file_server::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_relaxed);
  thread_.join();
}

double file_server::cpu_seconds() const {
  return static_cast<double>(cpu_ns_.load(std::memory_order_relaxed)) * 1e-9 +
         engine_->worker_cpu_seconds();
}

std::string file_server::failure() const {
  // acquire: failure_ was written before the flag's release store.
  return failed_.load(std::memory_order_acquire) ? failure_ : std::string();
}

void file_server::run() {
  const std::uint64_t cpu_began = runtime::thread_cpu_ns();
  std::uint64_t stop_deadline = 0;
  unsigned idle = 0;
  std::uint64_t passes = 0;
  try {
    for (;;) {
      const bool stopping = stop_.load(std::memory_order_relaxed);
      if (stopping) {
        const bool blocked = std::any_of(queues_.begin(), queues_.end(),
                                         [](const served_queue* q) { return !q->blocked.empty(); });
        if (in_flight_ == 0 && copied_in_.empty() && copied_out_.empty() && !blocked) break;
        if (stop_deadline == 0) stop_deadline = now_ns() + options_.stop_timeout_ns;
        if (now_ns() > stop_deadline) {
          throw error("stopping: " + std::to_string(in_flight_) +
                      " file I/O operation(s) still in flight after " +
                      std::to_string(options_.stop_timeout_ns / 1'000'000) + " ms");
        }
      }
      bool fetched = false;
      if (!stopping) {
        for (std::uint32_t k = 0; k < queues_.size() && !free_.empty(); ++k) {
          const std::uint32_t qi = (next_queue_ + k) % static_cast<std::uint32_t>(queues_.size());
          fetched |= fetch_from(*queues_[qi], qi);
        }
        next_queue_ = (next_queue_ + 1) % static_cast<std::uint32_t>(queues_.size());
      }
      flush_staged_copies();
      results_.clear();
      engine_->reap(results_, 0, 1);  // what has already completed: no system call
      if (results_.empty() && !fetched && in_flight_ > 0) {
        // Nothing new on either side: submit what is queued and sleep until a batch completes,
        // in one system call, rather than one to submit and one per completion.
        engine_->reap(results_, free_.empty() ? busy_reap_wait_ns : reap_wait_ns,
                      std::max<std::uint32_t>(1, in_flight_ / reap_batch_divisor));
      } else if (submit_now()) {
        engine_->kick();
      }
      for (const io_result& r : results_) finish(static_cast<std::uint32_t>(r.tag), r.value);
      bool worked = fetched || !results_.empty();
      flush_staged_copies();
      worked |= retry_blocked();
      if (worked) {
        idle = 0;
      } else if (in_flight_ == 0 && ++idle > 32) {
        // Nothing in flight and nothing new: sleep, doubling, so an idle set costs no core.
        const std::uint64_t ns = std::min<std::uint64_t>(
            std::uint64_t{1} << std::min(idle - 32 + 10, 20u), longest_idle_sleep_ns);
        const timespec t{0, static_cast<long>(ns)};
        ::nanosleep(&t, nullptr);
      }
      if ((++passes & 1023u) == 0)
        cpu_ns_.store(runtime::thread_cpu_ns() - cpu_began, std::memory_order_relaxed);
    }
  } catch (const std::exception& e) {
    failure_ = e.what();
    abandoned_ = in_flight_ != 0 || !copied_in_.empty() || !copied_out_.empty();
    failed_.store(true, std::memory_order_release);  // release: failure_ before the flag
  }
  cpu_ns_.store(runtime::thread_cpu_ns() - cpu_began, std::memory_order_relaxed);
}

bool file_server::submit_now() const {
  const std::uint32_t queued = engine_->queued();
  if (queued == 0) return false;
  const std::uint32_t depth = engine_->depth();
  return queued >= std::max<std::uint32_t>(1, depth / submit_batch_divisor) ||
         in_flight_ - queued < depth / low_water_divisor;
}

bool file_server::fetch_from(served_queue& q, std::uint32_t queue_index) {
  bool worked = false;
  for (std::uint32_t n = q.service.available(q.ref); n > 0 && !free_.empty(); --n) {
    begin(queue_index, q.service.fetch(q.ref));
    worked = true;
  }
  return worked;
}

void file_server::begin(std::uint32_t queue_index, const nvme::submission_entry& c) {
  served_queue& q = *queues_[queue_index];
  const emulated::namespace_view& ns = namespaces_[q.device];
  device_counters& count = counters_[q.device];
  const file_device& file = files_.devices()[q.device];
  add(count.commands, 1);
  if (c.command_id < q.ref.depth())
    q.fetched_at[c.command_id].store(now_ns(), std::memory_order_relaxed);
  if (const std::uint16_t status = emulated::validate(c, ns); status != 0) {
    add(count.invalid, 1);
    post(q, c.command_id, status);
    return;
  }
  const auto op = static_cast<nvme::io_opcode>(c.opcode);
  if (op == nvme::io_opcode::write && !options_.writable) {
    add(count.errors, 1);
    post(q, c.command_id,
         nvme::make_status_field(nvme::generic_status::namespace_write_protected, true));
    return;
  }
  const std::uint32_t index = free_.back();
  free_.pop_back();
  slot& s = slots_[index];
  s.queue = queue_index;
  s.command = c;
  s.memory.clear();
  s.iov.clear();
  s.truncate_after = false;
  if (op == nvme::io_opcode::flush) {
    s.kind = io_kind::datasync;
    s.fd = file.buffered_fd;
    s.direct = false;
    issue(s);
    return;
  }
  s.kind = op == nvme::io_opcode::read ? io_kind::read : io_kind::write;
  s.offset = c.slba() * ns.block_bytes;
  s.bytes = std::uint64_t{c.block_count()} * ns.block_bytes;
  s.inside = std::min(s.bytes, file.bytes - s.offset);  // validate() kept slba inside the file
  const nvme::generic_status walked = nvme::walk_prps(
      c.prp1, c.prp2, s.bytes, options_.page_bytes,
      [this](std::uint64_t address) {
        return copier_ != nullptr ? copier_->read_u64(address)
                                  : *reinterpret_cast<const std::uint64_t*>(address);
      },
      [&s](std::uint64_t address, std::uint64_t len) {
        if (address == 0) return false;  // a missing PRP entry: no memory is named by 0
        auto* p = reinterpret_cast<std::uint8_t*>(address);
        if (!s.memory.empty() &&
            static_cast<std::uint8_t*>(s.memory.back().iov_base) + s.memory.back().iov_len == p) {
          s.memory.back().iov_len += len;
        } else {
          s.memory.push_back({p, len});
        }
        return true;
      });
  if (walked != nvme::generic_status::success) {
    free_.push_back(index);
    add(count.invalid, 1);
    post(q, c.command_id, nvme::make_status_field(walked, true));
    return;
  }
  // Reads take the whole command (past the end of the file they come back short). A write that
  // ends in the file's partial last block writes that block whole through O_DIRECT and then
  // cuts the file back to its size: a buffered write of the tail would share a page-cache page
  // with direct writes of the blocks before it, and the kernel reports such a collision as EIO
  // on the next fdatasync. Files without O_DIRECT take only the bytes inside the file.
  s.truncate_after = s.kind == io_kind::write && s.inside < s.bytes && file.direct_fd >= 0;
  const std::uint64_t moved = s.kind == io_kind::read || s.truncate_after ? s.bytes : s.inside;
  if (copier_ != nullptr) {
    s.iov.push_back({s.staging, moved});
    if (s.kind == io_kind::write) {
      std::uint64_t at = 0;
      for (const iovec& m : prefix(s.memory, moved)) {
        copier_->copy(s.staging + at, m.iov_base, m.iov_len);
        at += m.iov_len;
      }
      add(count.staged_bytes, moved);
    }
  } else {
    append_prefix(s.iov, s.memory, moved);  // into the slot's vector: no allocation per command
  }
  s.direct = file.direct_fd >= 0 && aligned(s.iov, direct_alignment);
  s.fd = s.direct ? file.direct_fd : file.buffered_fd;
  if (!s.direct) add(count.buffered, 1);
  if (copier_ != nullptr && s.kind == io_kind::write) {
    copied_in_.push_back(index);  // issued once its data is staged
    return;
  }
  issue(s);
}

void file_server::issue(slot& s) {
  const auto index = static_cast<std::uint32_t>(&s - slots_.data());
  engine_->submit(
      {s.kind, s.fd, s.offset, s.iov.data(), static_cast<std::uint32_t>(s.iov.size()), index});
  ++in_flight_;
}

void file_server::finish(std::uint32_t index, std::int64_t value) {
  slot& s = slots_[index];
  --in_flight_;
  served_queue& q = *queues_[s.queue];
  device_counters& count = counters_[q.device];
  const file_device& file = files_.devices()[q.device];
  if (value == -EINVAL && s.direct) {
    // The file system wants more alignment than we gave it: the page cache takes any.
    s.direct = false;
    s.fd = file.buffered_fd;
    add(count.buffered, 1);
    issue(s);
    return;
  }
  if (s.kind == io_kind::datasync) {
    add(count.flushes, 1);
    complete(s, value < 0 ? status_for(static_cast<int>(-value), s.kind) : 0);
    return;
  }
  if (value >= 0 && static_cast<std::uint64_t>(value) < s.inside) {
    value = finish_rest(file.buffered_fd, s.kind, s.offset, s.iov,
                        static_cast<std::uint64_t>(value), s.inside);
  }
  if (value < 0) {
    complete(s, status_for(static_cast<int>(-value), s.kind));
    return;
  }
  if (static_cast<std::uint64_t>(value) < s.inside) {
    complete(s, nvme::make_status_field(s.kind == io_kind::read
                                            ? nvme::media_status::unrecovered_read_error
                                            : nvme::media_status::write_fault));
    return;
  }
  if (s.kind == io_kind::write) {
    // The file never grows: the block past its end that the write added is cut off again.
    if (s.truncate_after && ::ftruncate(file.buffered_fd, static_cast<off_t>(file.bytes)) != 0) {
      complete(s, status_for(errno, s.kind));
      return;
    }
    add(count.writes, 1);
    add(count.bytes_written, s.bytes);
    complete(s, 0);
    return;
  }
  add(count.reads, 1);
  add(count.bytes_read, s.bytes);
  // Past the end of the file a block reads as zeroes.
  if (copier_ != nullptr) {
    if (s.inside < s.bytes) std::memset(s.staging + s.inside, 0, s.bytes - s.inside);
    std::uint64_t at = 0;
    for (const iovec& m : s.memory) {
      copier_->copy(m.iov_base, s.staging + at, m.iov_len);
      at += m.iov_len;
    }
    add(count.staged_bytes, s.bytes);
    copied_out_.push_back(index);  // completed once the copies have landed
    return;
  }
  if (s.inside < s.bytes) {
    for (const iovec& m : suffix(s.memory, s.inside)) std::memset(m.iov_base, 0, m.iov_len);
  }
  complete(s, 0);
}

void file_server::flush_staged_copies() {
  if (copied_in_.empty() && copied_out_.empty()) return;
  copier_->wait();
  for (const std::uint32_t i : copied_in_) issue(slots_[i]);
  for (const std::uint32_t i : copied_out_) complete(slots_[i], 0);
  copied_in_.clear();
  copied_out_.clear();
}

void file_server::complete(slot& s, std::uint16_t status) {
  served_queue& q = *queues_[s.queue];
  if (status != 0) add(counters_[q.device].errors, 1);
  post(q, s.command.command_id, status);
  free_.push_back(static_cast<std::uint32_t>(&s - slots_.data()));
}

void file_server::post(served_queue& q, std::uint16_t cid, std::uint16_t status) {
  if (!q.blocked.empty() || !q.service.post(q.ref, cid, status)) {
    q.blocked.emplace_back(cid, status);  // CQ full: post in order later
  } else if (cid < q.ref.depth()) {
    q.fetched_at[cid].store(0, std::memory_order_relaxed);
  }
}

bool file_server::retry_blocked() {
  bool worked = false;
  for (served_queue* q : queues_) {
    while (!q->blocked.empty() &&
           q->service.post(q->ref, q->blocked.front().first, q->blocked.front().second)) {
      if (q->blocked.front().first < q->ref.depth()) {
        q->fetched_at[q->blocked.front().first].store(0, std::memory_order_relaxed);
      }
      q->blocked.pop_front();
      worked = true;
    }
  }
  return worked;
}

}  // namespace bam::file_io
