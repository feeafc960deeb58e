#include "storage/cpu/cpu_controller.hpp"

#include <algorithm>
#include <deque>
#include <queue>

#include <bam/error.hpp>
#include <bam/platform/clock.hpp>

#include "storage/queue_watch.hpp"

namespace bam::emulated {

struct cpu_controller::pending {
  std::uint64_t due_ns;
  std::uint32_t device;
  std::uint32_t queue;
  nvme::submission_entry command;
  std::uint16_t status;  // decided at fetch (validation or fault); 0: move data at completion

  bool operator>(const pending& o) const { return due_ns > o.due_ns; }
};

struct cpu_controller::queue_state {
  queue_pair_ref ref;
  queue_service service;
  std::deque<std::pair<std::uint16_t, std::uint16_t>> blocked;  // (cid, status): CQ was full
  std::unique_ptr<std::atomic<std::uint64_t>[]> fetched_at;     // per cid, 0: none outstanding
};

struct cpu_controller::device_state {
  namespace_view ns;
  timing_model timing;
  device_clock clock;
  fault_plan faults;
  std::uint64_t seed = 1;
  std::uint64_t sequence = 0;
  std::vector<queue_state> queues;
  struct counters {
    std::atomic<std::uint64_t> commands{0}, reads{0}, writes{0}, flushes{0}, bytes_read{0},
        bytes_written{0}, invalid{0}, injected_errors{0}, dropped{0}, late{0};
  } counters;
};

struct cpu_controller::schedule {
  using batch = std::vector<std::pair<pending, std::uint16_t>>;  // commands, their statuses
  std::priority_queue<pending, std::vector<pending>, std::greater<>> heap;
  struct in_flight {
    std::uint64_t mark;  // host_mark's, taken after the batch's copies were queued
    batch commands;
  };
  std::deque<in_flight> landing;  // oldest first
  std::vector<batch> spare;       // emptied batches, reused so a pass does not allocate
};

namespace {
void add(std::atomic<std::uint64_t>& c, std::uint64_t v) {
  c.store(c.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);  // one writer
}
}  // namespace

cpu_controller::cpu_controller(std::vector<controller_device> devices, backing_store* image,
                               std::uint32_t batches_in_flight)
    : image_(image),
      batches_in_flight_(std::max<std::uint32_t>(1, batches_in_flight)),
      origin_ns_(now_ns()),
      schedule_(std::make_unique<schedule>()) {
  for (auto& d : devices) {
    auto s = std::make_unique<device_state>();
    s->ns = d.ns;
    s->timing = d.timing;
    s->faults = d.faults;
    s->seed = d.seed;
    // One copy stream per controller thread, whichever device queued the copy: one wait
    // serves every device.
    if (d.ns.host_fence != nullptr) host_fence_ = d.ns.host_fence;
    if (d.ns.host_mark != nullptr && d.ns.host_reached != nullptr) {
      host_mark_ = d.ns.host_mark;
      host_reached_ = d.ns.host_reached;
    }
    for (const queue_pair_ref& q : d.queues) {
      queue_state qs;
      qs.ref = q;
      qs.fetched_at = std::make_unique<std::atomic<std::uint64_t>[]>(q.depth());
      s->queues.push_back(std::move(qs));
    }
    devices_.push_back(std::move(s));
  }
}

cpu_controller::~cpu_controller() { stop(); }

void cpu_controller::start() {
  if (thread_.joinable()) return;
  stop_.store(false, std::memory_order_relaxed);
  thread_ = std::thread([this] { run(); });
}

void cpu_controller::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_relaxed);
  thread_.join();
}

void cpu_controller::reset_queue(std::uint32_t device, std::uint32_t queue) {
  if (running()) throw error("reset_queue needs a stopped controller");
  queue_state& q = devices_.at(device)->queues.at(queue);
  q.service = queue_service{};
  q.blocked.clear();
  for (std::uint32_t c = 0; c < q.ref.depth(); ++c)
    q.fetched_at[c].store(0, std::memory_order_relaxed);
  // Commands of this queue still scheduled are forgotten with it.
  std::vector<pending> keep;
  while (!schedule_->heap.empty()) {
    if (schedule_->heap.top().device != device || schedule_->heap.top().queue != queue) {
      keep.push_back(schedule_->heap.top());
    }
    schedule_->heap.pop();
  }
  for (auto& p : keep) schedule_->heap.push(p);
}

void cpu_controller::run() {
  unsigned idle = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    const std::uint64_t now = now_ns();
    bool worked = poll_submissions(now);
    worked |= post_landed(false);
    worked |= retry_full_queues();
    worked |= complete_due(now_ns());
    if (worked) {
      idle = 0;
    } else if (++idle > 64 && schedule_->landing.empty()) {
      std::this_thread::yield();  // nothing to do: let submitters run on our core
    }
  }
  post_landed(true);  // commands whose data moved are answered before the thread ends
}

bool cpu_controller::poll_submissions(std::uint64_t now) {
  bool worked = false;
  for (std::uint32_t d = 0; d < devices_.size(); ++d) {
    device_state& dev = *devices_[d];
    for (std::uint32_t qi = 0; qi < dev.queues.size(); ++qi) {
      queue_state& q = dev.queues[qi];
      for (std::uint32_t n = q.service.available(q.ref); n > 0; --n) {
        worked = true;
        const nvme::submission_entry c = q.service.fetch(q.ref);
        const std::uint64_t sequence = dev.sequence++;
        add(dev.counters.commands, 1);
        if (c.command_id < q.ref.depth()) {
          q.fetched_at[c.command_id].store(now, std::memory_order_relaxed);
        }
        pending p{now, d, qi, c, validate(c, dev.ns)};
        if (p.status != 0) {
          add(dev.counters.invalid, 1);
          schedule_->heap.push(p);  // invalid commands are answered at once
          continue;
        }
        const fault_decision f = decide_fault(dev.faults, c, d, sequence);
        if (f.drop) {
          add(dev.counters.dropped, 1);
          continue;
        }
        if (f.status != 0) add(dev.counters.injected_errors, 1);
        if (f.extra_ns != 0) add(dev.counters.late, 1);
        p.status = f.status;
        const bool moves_data = c.opcode != static_cast<std::uint8_t>(nvme::io_opcode::flush);
        const std::uint64_t bytes =
            moves_data ? std::uint64_t{c.block_count()} * dev.ns.block_bytes : 0;
        // The device clock works in picoseconds from the controller's start: absolute
        // nanoseconds times 1000 would overflow after months of host uptime.
        p.due_ns =
            origin_ns_ +
            dev.clock.schedule(now - origin_ns_, dev.timing.latency_ns(dev.seed, d, sequence),
                               dev.timing.cost_ps(bytes)) +
            f.extra_ns;
        schedule_->heap.push(p);
      }
    }
  }
  return worked;
}

std::uint16_t cpu_controller::finish(const pending& p) {
  device_state& dev = *devices_[p.device];
  if (p.status != 0) return p.status;
  const auto op = static_cast<nvme::io_opcode>(p.command.opcode);
  if (op == nvme::io_opcode::flush) {
    add(dev.counters.flushes, 1);
    fence();  // the writes completed before this flush are in the image before it is synced
    if (!image_) return 0;
    try {
      image_->flush();
      return 0;
    } catch (const std::exception&) {
      return nvme::make_status_field(nvme::media_status::write_fault);
    }
  }
  const std::uint16_t s = transfer(p.command, dev.ns);
  if (s == 0) {
    const std::uint64_t bytes = std::uint64_t{p.command.block_count()} * dev.ns.block_bytes;
    if (op == nvme::io_opcode::read) {
      add(dev.counters.reads, 1);
      add(dev.counters.bytes_read, bytes);
    } else {
      add(dev.counters.writes, 1);
      add(dev.counters.bytes_written, bytes);
    }
  }
  return s;
}

bool cpu_controller::complete_due(std::uint64_t now) {
  auto& heap = schedule_->heap;
  if (heap.empty() || heap.top().due_ns > now) return false;
  // Every due command moves its data first, then the completions: a host controller serving
  // GPU memory queues the batch's copies, marks them and posts the batch once they land
  // (post_landed), or without marks waits for them once here.
  constexpr std::size_t max_batch = 1024;
  auto& landing = schedule_->landing;
  if (host_mark_ != nullptr && landing.size() >= batches_in_flight_) return false;
  auto& spare = schedule_->spare;
  schedule::batch batch;
  if (!spare.empty()) {
    batch = std::move(spare.back());
    spare.pop_back();
    batch.clear();
  }
  while (!heap.empty() && heap.top().due_ns <= now && batch.size() < max_batch) {
    const pending p = heap.top();
    heap.pop();
    batch.emplace_back(p, finish(p));
  }
  if (host_mark_ != nullptr) {  // the copies run while the thread goes on
    landing.push_back({host_mark_(), std::move(batch)});
    return true;
  }
  fence();
  for (const auto& [p, status] : batch) post(p, status);
  spare.push_back(std::move(batch));
  return true;
}

bool cpu_controller::post_landed(bool wait) {
  auto& landing = schedule_->landing;
  if (landing.empty()) return false;
  if (wait) fence();
  bool worked = false;
  while (!landing.empty() && (wait || host_reached_(landing.front().mark))) {
    for (const auto& [p, status] : landing.front().commands) post(p, status);
    schedule_->spare.push_back(std::move(landing.front().commands));
    landing.pop_front();
    worked = true;
  }
  return worked;
}

void cpu_controller::post(const pending& p, std::uint16_t status) {
  queue_state& q = devices_[p.device]->queues[p.queue];
  if (!q.blocked.empty() || !q.service.post(q.ref, p.command.command_id, status)) {
    q.blocked.emplace_back(p.command.command_id, status);  // CQ full: post in order later
  } else if (p.command.command_id < q.ref.depth()) {
    q.fetched_at[p.command.command_id].store(0, std::memory_order_relaxed);
  }
}

void cpu_controller::fence() {
  if (host_fence_ != nullptr) host_fence_();
}

bool cpu_controller::retry_full_queues() {
  bool worked = false;
  for (auto& dev : devices_) {
    for (auto& q : dev->queues) {
      while (!q.blocked.empty() &&
             q.service.post(q.ref, q.blocked.front().first, q.blocked.front().second)) {
        if (q.blocked.front().first < q.ref.depth()) {
          q.fetched_at[q.blocked.front().first].store(0, std::memory_order_relaxed);
        }
        q.blocked.pop_front();
        worked = true;
      }
    }
  }
  return worked;
}

std::vector<device_stats> cpu_controller::stats() const {
  std::vector<device_stats> out;
  for (const auto& d : devices_) {
    const auto& c = d->counters;
    auto r = [](const std::atomic<std::uint64_t>& v) { return v.load(std::memory_order_relaxed); };
    out.push_back({r(c.commands), r(c.reads), r(c.writes), r(c.flushes), r(c.bytes_read),
                   r(c.bytes_written), r(c.invalid), r(c.injected_errors), r(c.dropped),
                   r(c.late)});
  }
  return out;
}

std::vector<std::string> cpu_controller::stuck_queues(std::uint64_t age_ns) const {
  std::vector<std::string> out;
  const std::uint64_t now = now_ns();
  for (std::uint32_t d = 0; d < devices_.size(); ++d) {
    for (std::uint32_t qi = 0; qi < devices_[d]->queues.size(); ++qi) {
      const queue_state& q = devices_[d]->queues[qi];
      std::string line = storage_detail::stuck_line("device " + std::to_string(d), q.ref,
                                                    q.fetched_at.get(), now, age_ns);
      if (!line.empty()) out.push_back(std::move(line));
    }
  }
  return out;
}

}  // namespace bam::emulated
