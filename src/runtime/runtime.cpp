// gpu_runtime: lifecycle, attached controllers and the watchdog. The CUDA parts live in
// gpu_context (gpu_context.cu, or gpu_context_none.cpp in the CPU build).
#include <bam/runtime/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include <bam/error.hpp>

#include "runtime/gpu_context.hpp"

namespace bam {

struct gpu_runtime::impl {
  runtime_config config;
  std::unique_ptr<detail::gpu_context> gpu;
  std::string message;
  std::size_t largest_local_bytes = 0;
  std::size_t preloaded = 0;
  bool started = false;

  mutable std::mutex mutex;  // guards services, reports, stopping
  std::vector<controller_service*> services;
  std::vector<std::string> reports;
  std::map<std::string, std::uint64_t> last_reported;  // line prefix -> steady ns
  std::condition_variable wake;
  bool stopping = false;
  std::thread watchdog;

  void log(const std::string& line) const {
    if (!config.quiet) std::fprintf(stderr, "bam: %s\n", line.c_str());
  }

  // Runs `run(deadline)` (0: config.wait_timeout_ns) where there is a GPU. BAM_TRACE=1 logs
  // every wait: where a run stops, the last line says what it waited on.
  template <class Run>
  void traced_wait(std::uint64_t timeout_ns, const std::string& what, Run run) const {
    if (!gpu) return;
    static const bool trace = std::getenv("BAM_TRACE") != nullptr;
    const auto began = std::chrono::steady_clock::now();
    if (trace) log("trace: waiting for " + what);
    run(timeout_ns ? timeout_ns : config.wait_timeout_ns);
    if (trace) {
      const std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - began;
      log("trace: " + what + " finished after " + std::to_string(ms.count()) + " ms");
    }
  }

  void require_before_start(const char* what) const {
    if (started) {
      throw error(std::string(what) +
                  " after start(): controllers are running and CUDA would wait for them");
    }
  }

  // One pass of the watchdog: stuck queues and unhealthy controllers, each line at most once
  // per 10 periods so a long hang does not flood the log.
  void watch_once() {
    std::vector<std::string> lines;
    {
      std::lock_guard lock(mutex);
      for (controller_service* s : services) {
        try {
          if (!s->running()) continue;
          for (auto& l : s->stuck_queues(config.stuck_after_ns)) {
            lines.push_back("watchdog: " + s->name() + ": " + l);
          }
          const std::string h = s->health();
          if (!h.empty()) lines.push_back("watchdog: " + s->name() + ": " + h);
        } catch (const std::exception& e) {
          lines.push_back("watchdog: " + s->name() + ": cannot inspect: " + e.what());
        }
      }
    }
    const auto now = static_cast<std::uint64_t>(
        std::chrono::steady_clock::now().time_since_epoch() / std::chrono::nanoseconds(1));
    for (const std::string& l : lines) {
      // The age in a line changes every pass; key on the text before "for".
      const std::string key = l.substr(0, l.find(" for "));
      std::lock_guard lock(mutex);
      auto it = last_reported.find(key);
      if (it != last_reported.end() && now - it->second < 10 * config.watchdog_period_ns) continue;
      last_reported[key] = now;
      if (reports.size() < 10000) reports.push_back(l);
      log(l);
    }
  }

  void watchdog_loop() {
    std::unique_lock lock(mutex);
    while (!stopping) {
      wake.wait_for(lock, std::chrono::nanoseconds(config.watchdog_period_ns));
      if (stopping) break;
      lock.unlock();
      watch_once();
      lock.lock();
    }
  }
};

gpu_runtime::gpu_runtime(const runtime_config& config) : impl_(std::make_unique<impl>()) {
  impl_->config = config;
  if (config.watchdog_period_ns == 0) throw input_error("runtime: watchdog period must be > 0");
  std::string why;
  impl_->gpu = detail::gpu_context::create(
      config, [this](const std::string& l) { impl_->log(l); }, why);
  if (impl_->gpu) {
    impl_->message = impl_->gpu->description();
  } else {
    impl_->message = why;
    impl_->log("no GPU (" + why + "): the CPU path serves");
  }
}

gpu_runtime::~gpu_runtime() {
  try {
    stop();
  } catch (const std::exception& e) {
    impl_->log(std::string("stopping at exit: ") + e.what());
  }
}

bool gpu_runtime::gpu() const { return impl_->gpu != nullptr; }
const std::string& gpu_runtime::message() const { return impl_->message; }
bool gpu_runtime::green_contexts() const { return impl_->gpu && impl_->gpu->green(); }
std::uint32_t gpu_runtime::controller_sms() const {
  return impl_->gpu ? impl_->gpu->controller_sms() : 0;
}
std::uint32_t gpu_runtime::app_sms() const { return impl_->gpu ? impl_->gpu->app_sms() : 0; }
stream_handle gpu_runtime::stream() const {
  return impl_->gpu ? impl_->gpu->app_stream() : nullptr;
}
stream_handle gpu_runtime::controller_stream() const {
  return impl_->gpu ? impl_->gpu->controller_stream() : nullptr;
}
const runtime_config& gpu_runtime::config() const { return impl_->config; }
bool gpu_runtime::started() const { return impl_->started; }
void gpu_runtime::log(const std::string& line) const { impl_->log(line); }

void gpu_runtime::preload(std::span<const void* const> kernels) {
  impl_->require_before_start("preload");
  if (!impl_->gpu || kernels.empty()) return;
  impl_->largest_local_bytes =
      std::max(impl_->largest_local_bytes, impl_->gpu->load(kernels.data(), kernels.size()));
  impl_->preloaded += kernels.size();
}

void gpu_runtime::preload(std::initializer_list<const void*> kernels) {
  preload(std::span<const void* const>(kernels.begin(), kernels.size()));
}

void gpu_runtime::warm_up(const std::function<void(stream_handle)>& launches) {
  impl_->require_before_start("warm_up");
  if (!impl_->gpu) return;
  launches(stream());
  impl_->gpu->synchronize(stream(), impl_->config.wait_timeout_ns, "warm-up launches");
}

void gpu_runtime::attach(controller_service& service) {
  impl_->require_before_start("attaching a controller");
  std::lock_guard lock(impl_->mutex);
  if (std::find(impl_->services.begin(), impl_->services.end(), &service) ==
      impl_->services.end()) {
    impl_->services.push_back(&service);
  }
}

void gpu_runtime::detach(controller_service& service) noexcept {
  std::lock_guard lock(impl_->mutex);
  impl_->services.erase(std::remove(impl_->services.begin(), impl_->services.end(), &service),
                        impl_->services.end());
}

void gpu_runtime::start() {
  if (impl_->started) return;
  if (impl_->gpu) {
    // Reserve local memory once, now: a launch that needs more later would resize it, which
    // waits for every running kernel, a controller included (DESIGN 11).
    const std::size_t stack =
        std::max<std::size_t>({impl_->config.stack_bytes, impl_->largest_local_bytes, 1024});
    impl_->gpu->reserve_limits(stack, impl_->config.printf_fifo_bytes);
  }
  std::vector<controller_service*> services;
  {
    std::lock_guard lock(impl_->mutex);
    services = impl_->services;
  }
  std::vector<controller_service*> begun;
  try {
    for (controller_service* s : services) {
      if (!s->running()) {
        s->start();
        begun.push_back(s);
      }
    }
  } catch (...) {
    for (auto it = begun.rbegin(); it != begun.rend(); ++it) {
      try {
        (*it)->stop();
      } catch (const std::exception& e) {
        impl_->log(std::string("stopping after a failed start: ") + e.what());
      }
    }
    throw;
  }
  impl_->started = true;
  if (impl_->gpu && impl_->preloaded == 0) {
    impl_->log(
        "start() with no kernels preloaded: a first launch beside the controller can "
        "hang (DESIGN 11); use preload() and warm_up()");
  }
  if (impl_->config.watchdog && !services.empty()) {
    {
      std::lock_guard lock(impl_->mutex);
      impl_->stopping = false;
    }
    impl_->watchdog = std::thread([this] { impl_->watchdog_loop(); });
  }
}

void gpu_runtime::stop() {
  if (impl_->watchdog.joinable()) {
    {
      std::lock_guard lock(impl_->mutex);
      impl_->stopping = true;
    }
    impl_->wake.notify_all();
    impl_->watchdog.join();
  }
  if (!impl_->started) return;
  std::vector<controller_service*> services;
  {
    std::lock_guard lock(impl_->mutex);
    services = impl_->services;
  }
  std::string first_error;
  for (auto it = services.rbegin(); it != services.rend(); ++it) {
    try {
      if ((*it)->running()) (*it)->stop();
    } catch (const std::exception& e) {
      if (first_error.empty()) first_error = e.what();
      impl_->log(std::string("stop: ") + e.what());
    }
  }
  impl_->started = false;
  if (!first_error.empty()) throw error("runtime stop failed: " + first_error);
}

void gpu_runtime::synchronize(stream_handle stream, std::uint64_t timeout_ns,
                              const std::string& what) const {
  impl_->traced_wait(timeout_ns, what,
                     [&](std::uint64_t t) { impl_->gpu->synchronize(stream, t, what); });
}

void gpu_runtime::synchronize(event_handle event, std::uint64_t timeout_ns,
                              const std::string& what) const {
  impl_->traced_wait(timeout_ns, what,
                     [&](std::uint64_t t) { impl_->gpu->synchronize(event, t, what); });
}

void gpu_runtime::check() const {
  std::lock_guard lock(impl_->mutex);
  for (controller_service* s : impl_->services) {
    const std::string h = s->health();
    if (!h.empty()) throw error(s->name() + ": " + h);
  }
}

std::vector<std::string> gpu_runtime::watchdog_reports() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->reports;
}

}  // namespace bam
