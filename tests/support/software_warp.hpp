#pragma once
/// @file
/// A test-only software warp: W std::threads (2..32) whose warp collectives (match_any, shfl,
/// ballot, active_mask) meet under one mutex, so that ThreadSanitizer sees the leader/follower
/// logic of warp-cooperative code. Each lane thread installs itself as
/// bam::warp::detail::current_lane, so bam::warp::lane(), width() and the collectives in
/// <bam/platform/warp.hpp> reach it.
///
///     bam::testing::run_software_warps(4, 8, [&](unsigned lane, unsigned warp) {
///       const std::uint32_t mask = bam::warp::active_mask();
///       const std::uint32_t group = bam::warp::match_any(mask, key_of(lane, warp));
///       ...
///     });
///
/// The model is a warp with independent thread scheduling:
/// - A collective with an explicit mask completes when every lane of the mask has called the
///   same collective with the same mask; the calling lane must be in its mask. What a lane wrote
///   before a collective is visible to every lane of it afterwards (the mutex publishes it).
/// - active_mask() is where lanes reconverge: it completes when every lane that has not exited
///   is waiting in active_mask(), and returns those lanes.
/// - A lane that returns from its body (or throws) exits and drops out of later collectives.
/// - Misuse throws std::logic_error in the lanes concerned instead of hanging: a mask naming an
///   exited lane or not naming the caller, a shfl from a lane outside the mask, every live lane
///   waiting with no collective able to complete, or a wait longer than the warp's timeout.
///
/// Thread safety: a software_warp runs one set of lanes at a time.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <bam/platform/warp.hpp>

namespace bam::testing {

class software_warp {
 public:
  using clock = std::chrono::steady_clock;

  /// A warp of `width` lanes (2..32). A collective waiting longer than `timeout` throws.
  explicit software_warp(unsigned width,
                         std::chrono::milliseconds timeout = std::chrono::milliseconds(60'000))
      : width_(width), timeout_(timeout), lanes_(width) {
    if (width < 2 || width > warp::max_width) {
      throw std::invalid_argument("software warp width must be 2..32, got " +
                                  std::to_string(width));
    }
    for (unsigned l = 0; l < width; ++l) lanes_[l].hooks = lane_handle(this, l);
  }
  software_warp(const software_warp&) = delete;
  software_warp& operator=(const software_warp&) = delete;

  [[nodiscard]] unsigned width() const { return width_; }
  [[nodiscard]] std::uint32_t full_mask() const { return width_ == 32 ? ~0u : (1u << width_) - 1u; }

  /// Runs `body(lane)` on `width` new threads, each attached as its lane, and joins them.
  /// Rethrows the first exception a lane threw.
  void run(const std::function<void(unsigned lane)>& body) {
    begin();
    std::vector<std::thread> threads;
    threads.reserve(width_);
    for (unsigned l = 0; l < width_; ++l) {
      threads.emplace_back([this, l, &body] { run_lane(l, body); });
    }
    for (auto& t : threads) t.join();
    rethrow_failure();
  }

  /// For run_software_warps: puts every lane back to "running" before threads start.
  void begin() {
    std::lock_guard lock(mutex_);
    for (auto& s : lanes_) s.reset();
    live_ = full_mask();
    failure_ = nullptr;
  }

  /// Runs lane `l`'s body on the calling thread (one thread per lane), then exits the lane.
  void run_lane(unsigned l, const std::function<void(unsigned lane)>& body) {
    warp::detail::current_lane = &lanes_[l].hooks;
    try {
      body(l);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!failure_) failure_ = std::current_exception();
    }
    warp::detail::current_lane = nullptr;
    exit_lane(l);
  }

  /// Rethrows the first exception a lane threw since begin().
  void rethrow_failure() {
    std::exception_ptr f;
    {
      std::lock_guard lock(mutex_);
      f = failure_;
    }
    if (f) std::rethrow_exception(f);
  }

 private:
  enum class op : std::uint8_t { none, active_mask, match_any, shfl, ballot };

  static const char* name(op o) {
    switch (o) {
      case op::active_mask:
        return "active_mask";
      case op::match_any:
        return "match_any";
      case op::shfl:
        return "shfl";
      case op::ballot:
        return "ballot";
      default:
        return "nothing";
    }
  }

  // What one lane provides to bam::warp; forwards to its warp with its lane index.
  class lane_handle final : public warp::detail::lane_hooks {
   public:
    lane_handle() = default;
    lane_handle(software_warp* w, unsigned l) : warp_(w), lane_(l) {}
    unsigned lane() const override { return lane_; }
    unsigned width() const override { return warp_->width_; }
    std::uint32_t active_mask() override {
      return static_cast<std::uint32_t>(warp_->collective(lane_, op::active_mask, 0, 0, 0));
    }
    std::uint32_t match_any(std::uint32_t mask, std::uint64_t key) override {
      return static_cast<std::uint32_t>(warp_->collective(lane_, op::match_any, mask, key, 0));
    }
    std::uint64_t shfl(std::uint32_t mask, std::uint64_t value, unsigned src_lane) override {
      return warp_->collective(lane_, op::shfl, mask, value, src_lane);
    }
    std::uint32_t ballot(std::uint32_t mask, bool predicate) override {
      return static_cast<std::uint32_t>(
          warp_->collective(lane_, op::ballot, mask, predicate ? 1u : 0u, 0));
    }

   private:
    software_warp* warp_ = nullptr;
    unsigned lane_ = 0;
  };

  // One lane's state, guarded by mutex_. A lane is waiting while kind != none and !done.
  struct lane_state {
    lane_handle hooks;
    op kind = op::none;
    std::uint32_t mask = 0;
    std::uint64_t value = 0;
    unsigned source = 0;
    bool done = false;
    std::uint64_t result = 0;
    std::string error;

    void reset() {
      kind = op::none;
      mask = 0;
      value = 0;
      source = 0;
      done = false;
      result = 0;
      error.clear();
    }
    [[nodiscard]] bool waiting() const { return kind != op::none && !done && error.empty(); }
  };

  static std::uint32_t bit(unsigned l) { return 1u << l; }

  std::string lanes_text(std::uint32_t mask) const {
    std::string s = "{";
    for (unsigned l = 0; l < width_; ++l) {
      if (!(mask & bit(l))) continue;
      if (s.size() > 1) s += ',';
      s += std::to_string(l);
    }
    s += '}';
    return s;
  }

  // Every collective: record the call, complete whatever can complete, wait for our result.
  std::uint64_t collective(unsigned l, op kind, std::uint32_t mask, std::uint64_t value,
                           unsigned source) {
    std::unique_lock lock(mutex_);
    lane_state& me = lanes_[l];
    me.kind = kind;
    me.mask = kind == op::active_mask ? 0u : mask;
    me.value = value;
    me.source = source;
    me.done = false;
    me.error.clear();
    if (kind != op::active_mask && (mask & bit(l)) == 0) {
      fail_lane(l, "lane " + std::to_string(l) + " called " + name(kind) + " with mask " +
                       lanes_text(mask) + " that does not name it");
    } else {
      settle();
    }
    const auto until = clock::now() + timeout_;
    while (!me.done && me.error.empty()) {
      if (cv_.wait_until(lock, until) == std::cv_status::timeout && !me.done && me.error.empty()) {
        fail_lane(l, "lane " + std::to_string(l) + " waited " + std::to_string(timeout_.count()) +
                         " ms in " + name(kind) + " with mask " + lanes_text(me.mask) +
                         "; live lanes " + lanes_text(live_));
      }
    }
    me.kind = op::none;
    if (!me.error.empty()) {
      const std::string why = "software warp: " + me.error;
      me.error.clear();
      throw std::logic_error(why);
    }
    return me.result;
  }

  void exit_lane(unsigned l) {
    std::lock_guard lock(mutex_);
    live_ &= ~bit(l);
    lanes_[l].reset();
    settle();
  }

  void fail_lane(unsigned l, const std::string& why) {
    lanes_[l].error = why;
    cv_.notify_all();
  }

  // Completes every collective that can complete, reports masks that name exited lanes, and
  // reports a deadlock when every live lane waits and nothing can complete. Mutex held.
  void settle() {
    bool progress = true;
    while (progress) {
      progress = false;
      for (unsigned l = 0; l < width_; ++l) {
        if (lanes_[l].waiting() && try_complete(l)) progress = true;
      }
    }
    std::uint32_t waiting = 0;
    for (unsigned l = 0; l < width_; ++l) {
      if (lanes_[l].waiting()) waiting |= bit(l);
    }
    if (waiting != 0 && waiting == live_) {
      for (unsigned l = 0; l < width_; ++l) {
        if (waiting & bit(l)) {
          fail_lane(l, "deadlock: every live lane " + lanes_text(live_) +
                           " waits in a collective that cannot complete (lane " +
                           std::to_string(l) + " in " + name(lanes_[l].kind) + " with mask " +
                           lanes_text(lanes_[l].mask) + ")");
        }
      }
    }
  }

  // Completes lane l's collective if all its lanes have arrived. Mutex held.
  bool try_complete(unsigned l) {
    const lane_state& me = lanes_[l];
    if (me.kind == op::active_mask) {
      for (unsigned x = 0; x < width_; ++x) {
        if ((live_ & bit(x)) && !(lanes_[x].waiting() && lanes_[x].kind == op::active_mask)) {
          return false;
        }
      }
      for (unsigned x = 0; x < width_; ++x) {
        if (live_ & bit(x)) finish(x, live_);
      }
      return true;
    }
    const std::uint32_t mask = me.mask;
    if ((mask & ~live_) != 0) {
      const std::string why = "a lane of mask " + lanes_text(mask) + " has exited (live lanes " +
                              lanes_text(live_) + ")";
      for (unsigned x = 0; x < width_; ++x) {
        if ((mask & bit(x)) && lanes_[x].waiting() && lanes_[x].mask == mask) {
          fail_lane(x, "lane " + std::to_string(x) + " in " + name(lanes_[x].kind) + ": " + why);
        }
      }
      return true;
    }
    for (unsigned x = 0; x < width_; ++x) {
      if ((mask & bit(x)) &&
          !(lanes_[x].waiting() && lanes_[x].kind == me.kind && lanes_[x].mask == mask)) {
        return false;
      }
    }
    const op kind = me.kind;
    if (kind == op::shfl) {
      for (unsigned x = 0; x < width_; ++x) {
        if ((mask & bit(x)) && (lanes_[x].source >= width_ || !(mask & bit(lanes_[x].source)))) {
          for (unsigned y = 0; y < width_; ++y) {
            if (mask & bit(y)) {
              fail_lane(y, "lane " + std::to_string(x) + " shuffles from lane " +
                               std::to_string(lanes_[x].source) + ", which is not in mask " +
                               lanes_text(mask));
            }
          }
          return true;
        }
      }
    }
    std::uint64_t results[warp::max_width] = {};
    for (unsigned x = 0; x < width_; ++x) {
      if (!(mask & bit(x))) continue;
      switch (kind) {
        case op::match_any:
          for (unsigned y = 0; y < width_; ++y) {
            if ((mask & bit(y)) && lanes_[y].value == lanes_[x].value) results[x] |= bit(y);
          }
          break;
        case op::shfl:
          results[x] = lanes_[lanes_[x].source].value;
          break;
        case op::ballot:
          for (unsigned y = 0; y < width_; ++y) {
            if ((mask & bit(y)) && lanes_[y].value != 0) results[x] |= bit(y);
          }
          break;
        default:
          break;
      }
    }
    for (unsigned x = 0; x < width_; ++x) {
      if (mask & bit(x)) finish(x, results[x]);
    }
    return true;
  }

  void finish(unsigned x, std::uint64_t result) {
    lanes_[x].result = result;
    lanes_[x].done = true;
    cv_.notify_all();
  }

  unsigned width_;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<lane_state> lanes_;
  std::uint32_t live_ = 0;
  std::exception_ptr failure_;
};

/// Runs `body(lane, warp)` on `warps * width` threads: `warps` software warps of `width` lanes
/// each, all running at once. Joins them and rethrows the first exception a lane threw.
inline void run_software_warps(unsigned warps, unsigned width,
                               const std::function<void(unsigned lane, unsigned warp)>& body) {
  std::vector<std::unique_ptr<software_warp>> ws;
  std::vector<std::function<void(unsigned)>> bodies;
  ws.reserve(warps);
  bodies.reserve(warps);
  for (unsigned w = 0; w < warps; ++w) {
    ws.push_back(std::make_unique<software_warp>(width));
    ws.back()->begin();
    bodies.emplace_back([&body, w](unsigned lane) { body(lane, w); });
  }
  std::vector<std::thread> threads;
  threads.reserve(std::size_t{warps} * width);
  for (unsigned w = 0; w < warps; ++w) {
    for (unsigned l = 0; l < width; ++l) {
      threads.emplace_back([&ws, &bodies, w, l] { ws[w]->run_lane(l, bodies[w]); });
    }
  }
  for (auto& t : threads) t.join();
  for (auto& w : ws) w->rethrow_failure();
}

}  // namespace bam::testing
