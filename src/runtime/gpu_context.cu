// The device, the green-context split and the streams (CUDA build).
//
// Green contexts need the driver API (fetched through the runtime's entry-point query, so the
// program does not link libcuda): the device's SMs are split into a small partition for
// controllers and the rest for applications; each partition gets a green context and a
// non-blocking stream. Runtime-API launches into those streams run on the partition's SMs.
// When any step fails (an old driver, a virtualized GPU without the feature, MIG), both
// streams become plain non-blocking streams of the primary context, and a log line says so.
#include "runtime/gpu_context.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <bam/cuda_check.hpp>
#include <bam/error.hpp>
#include <bam/platform/clock.hpp>

namespace bam::detail {

namespace {

// A driver-API failure inside green-context set-up: caught there, and the runtime falls back.
struct driver_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The driver functions green contexts need, fetched through the runtime
// (cudaGetDriverEntryPointByVersion) instead of linking libcuda: a GPU build then still starts,
// and says "no GPU", on a machine without a driver.
struct driver_api {
  PFN_cuGetErrorName_v6000 get_error_name = nullptr;
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuDeviceGetDevResource_v12040 device_get_resource = nullptr;
  PFN_cuDevSmResourceSplitByCount_v12040 split_by_count = nullptr;
  PFN_cuDevResourceGenerateDesc_v12040 generate_desc = nullptr;
  PFN_cuGreenCtxCreate_v12040 green_create = nullptr;
  PFN_cuGreenCtxDestroy_v12040 green_destroy = nullptr;
  PFN_cuGreenCtxStreamCreate_v12050 green_stream_create = nullptr;
  std::string missing;  // the first symbol the driver lacks

  static const driver_api& get() {
    static const driver_api api = load();
    return api;
  }

 private:
  template <class F>
  static void fetch(const char* symbol, unsigned version, F& out, std::string& missing) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess || fn == nullptr) {
      cudaGetLastError();
      if (missing.empty()) missing = symbol;
      return;
    }
    out = reinterpret_cast<F>(fn);
  }
  static driver_api load() {
    driver_api a;
    fetch("cuGetErrorName", 6000, a.get_error_name, a.missing);
    fetch("cuDeviceGet", 2000, a.device_get, a.missing);
    fetch("cuDeviceGetDevResource", 12040, a.device_get_resource, a.missing);
    fetch("cuDevSmResourceSplitByCount", 12040, a.split_by_count, a.missing);
    fetch("cuDevResourceGenerateDesc", 12040, a.generate_desc, a.missing);
    fetch("cuGreenCtxCreate", 12040, a.green_create, a.missing);
    fetch("cuGreenCtxDestroy", 12040, a.green_destroy, a.missing);
    fetch("cuGreenCtxStreamCreate", 12050, a.green_stream_create, a.missing);
    return a;
  }
};

void check_driver(CUresult code, const char* expression) {
  if (code == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (driver_api::get().get_error_name) driver_api::get().get_error_name(code, &name);
  throw driver_failure(std::string(expression) + ": " +
                       (name ? name : ("CUresult " + std::to_string(static_cast<int>(code)))));
}
#define BAM_CU_CHECK(expression) check_driver((expression), #expression)

// Launched once on each stream at set-up: proves that a runtime-API launch into the stream
// runs, and is the first launch of a kernel on it.
__global__ void probe_kernel(unsigned* flag) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *flag = 0x600du;
}

}  // namespace

std::unique_ptr<gpu_context> gpu_context::create(const runtime_config& config,
                                                 const log_function& log, std::string& why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    why = e != cudaSuccess ? std::string("no usable CUDA device: ") + cudaGetErrorString(e)
                           : std::string("no CUDA device present");
    cudaGetLastError();  // clear the error the query left behind
    return nullptr;
  }
  if (config.device < 0 || config.device >= count) {
    throw input_error("runtime: device " + std::to_string(config.device) + " does not exist (" +
                      std::to_string(count) + " present)");
  }
  std::unique_ptr<gpu_context> g(new gpu_context());
  g->device_ = config.device;
  BAM_CUDA_CHECK(cudaSetDevice(config.device));
  BAM_CUDA_CHECK(cudaFree(nullptr));  // creates the primary context now, not at first use

  cudaDeviceProp p{};
  BAM_CUDA_CHECK(cudaGetDeviceProperties(&p, config.device));
  if (!p.unifiedAddressing || !p.canMapHostMemory) {
    throw error(
        "runtime: the GPU lacks unified addressing or mapped host memory, which bam's "
        "pinned images and queues need");
  }
  g->total_sms_ = static_cast<std::uint32_t>(p.multiProcessorCount);

  std::string green_failure;
  if (config.green_contexts) {
    try {
      g->make_green(config);
    } catch (const driver_failure& f) {
      green_failure = f.what();
    } catch (const std::exception& f) {
      green_failure = f.what();
    }
    if (!green_failure.empty()) {
      log("green contexts unavailable (" + green_failure +
          "): controllers and applications share SMs through plain non-blocking streams");
    }
  }
  if (!g->green()) g->make_plain(config);

  int driver = 0, runtime_version = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime_version);
  char text[512];
  std::snprintf(text, sizeof text,
                "%s, %u SMs, %.1f GiB, driver %d.%d, runtime %d.%d; controllers %u SMs, apps %u "
                "SMs (%s)",
                p.name, g->total_sms_, static_cast<double>(p.totalGlobalMem) / (1ull << 30),
                driver / 1000, driver % 1000 / 10, runtime_version / 1000,
                runtime_version % 1000 / 10, g->controller_sms_, g->app_sms_,
                g->green() ? "green contexts" : "shared SMs, plain streams");
  g->description_ = text;
  return g;
}

void gpu_context::make_green(const runtime_config& config) {
  const driver_api& cu = driver_api::get();
  if (!cu.missing.empty()) throw driver_failure("the driver has no " + cu.missing);
  CUdevice dev = 0;
  BAM_CU_CHECK(cu.device_get(&dev, device_));
  CUdevResource all{};
  BAM_CU_CHECK(cu.device_get_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
  const unsigned granularity = std::max(1u, all.sm.smCoscheduledAlignment);
  const unsigned minimum = std::max(all.sm.minSmPartitionSize, 1u);
  unsigned want = std::max(config.controller_sms, minimum);
  want = (want + granularity - 1) / granularity * granularity;
  if (want >= all.sm.smCount) {
    throw driver_failure("asked for " + std::to_string(want) + " controller SMs of " +
                         std::to_string(all.sm.smCount));
  }
  CUdevResource part{};
  CUdevResource rest{};
  unsigned groups = 1;
  BAM_CU_CHECK(cu.split_by_count(&part, &groups, &all, &rest, 0, want));
  if (groups < 1 || rest.sm.smCount == 0) throw driver_failure("the SM split made no partition");
  CUdevResourceDesc part_desc = nullptr;
  CUdevResourceDesc rest_desc = nullptr;
  BAM_CU_CHECK(cu.generate_desc(&part_desc, &part, 1));
  BAM_CU_CHECK(cu.generate_desc(&rest_desc, &rest, 1));
  CUgreenCtx controller_ctx = nullptr;
  CUgreenCtx app_ctx = nullptr;
  BAM_CU_CHECK(cu.green_create(&controller_ctx, part_desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  green_controller_ = controller_ctx;
  BAM_CU_CHECK(cu.green_create(&app_ctx, rest_desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  green_app_ = app_ctx;
  CUstream controller_stream = nullptr;
  CUstream app_stream = nullptr;
  BAM_CU_CHECK(
      cu.green_stream_create(&controller_stream, controller_ctx, CU_STREAM_NON_BLOCKING, 0));
  controller_ = owned_stream::adopt(controller_stream);
  BAM_CU_CHECK(cu.green_stream_create(&app_stream, app_ctx, CU_STREAM_NON_BLOCKING, 0));
  app_ = owned_stream::adopt(app_stream);
  controller_sms_ = part.sm.smCount;
  app_sms_ = rest.sm.smCount;

  std::string why;
  if (!probe(controller_.get(), why) || !probe(app_.get(), why)) {
    app_ = owned_stream{};
    controller_ = owned_stream{};
    cu.green_destroy(app_ctx);
    cu.green_destroy(controller_ctx);
    green_app_ = nullptr;
    green_controller_ = nullptr;
    throw driver_failure("a runtime launch into a green-context stream failed: " + why);
  }
}

void gpu_context::make_plain(const runtime_config& config) {
  controller_ = owned_stream::create_non_blocking();
  app_ = owned_stream::create_non_blocking();
  controller_sms_ = std::min(std::max(config.controller_sms, 1u), total_sms_);
  // Applications size their grids from this; the controller's blocks hold the rest.
  app_sms_ = total_sms_ > controller_sms_ ? total_sms_ - controller_sms_ : total_sms_;
  std::string why;
  if (!probe(controller_.get(), why) || !probe(app_.get(), why)) {
    throw error("runtime: a probe launch on a plain stream failed: " + why);
  }
}

bool gpu_context::probe(stream_handle stream, std::string& why) {
  unsigned* flag = nullptr;
  cudaError_t e = cudaHostAlloc(&flag, sizeof(unsigned), cudaHostAllocMapped);
  if (e != cudaSuccess) {
    why = std::string("cudaHostAlloc: ") + cudaGetErrorString(e);
    return false;
  }
  *flag = 0;
  probe_kernel<<<1, 32, 0, stream>>>(flag);
  e = cudaGetLastError();
  if (e == cudaSuccess) {
    const deadline until = deadline::after_ns(10'000'000'000ull);
    while ((e = cudaStreamQuery(stream)) == cudaErrorNotReady && !until.expired()) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  const bool ok = e == cudaSuccess && *static_cast<volatile unsigned*>(flag) == 0x600du;
  if (!ok) {
    why = e == cudaErrorNotReady ? std::string("the probe kernel did not finish within 10 s")
          : e != cudaSuccess     ? std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e)
                                 : std::string("the probe kernel did not run");
    cudaGetLastError();
  }
  cudaFreeHost(flag);
  return ok;
}

gpu_context::~gpu_context() {
  // Streams first: destroying a green context does not destroy its streams.
  app_ = owned_stream{};
  controller_ = owned_stream{};
  const driver_api& cu = driver_api::get();
  if (green_app_) cu.green_destroy(static_cast<CUgreenCtx>(green_app_));
  if (green_controller_) cu.green_destroy(static_cast<CUgreenCtx>(green_controller_));
}

std::size_t gpu_context::load(const void* const* kernels, std::size_t count) {
  std::size_t largest = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (!kernels[i]) throw input_error("preload: a null kernel function");
    cudaFuncAttributes a{};
    // Under lazy loading this loads the function's module now, while nothing persistent runs.
    BAM_CUDA_CHECK(cudaFuncGetAttributes(&a, kernels[i]));
    largest = std::max(largest, static_cast<std::size_t>(a.localSizeBytes));
  }
  return largest;
}

void gpu_context::reserve_limits(std::size_t stack_bytes, std::size_t printf_fifo_bytes) {
  std::size_t current = 0;
  BAM_CUDA_CHECK(cudaDeviceGetLimit(&current, cudaLimitStackSize));
  if (stack_bytes > current) BAM_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitStackSize, stack_bytes));
  if (printf_fifo_bytes != 0) {
    BAM_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, printf_fifo_bytes));
  }
}

namespace {

// Calls `query` (cudaStreamQuery or cudaEventQuery) until it says the work is done.
template <class Query>
void poll_until_done(Query query, std::uint64_t timeout_ns, const std::string& what) {
  const deadline until = deadline::after_ns(timeout_ns);
  // Polls without sleeping for the first millisecond: a sleep lasts at least the kernel's
  // timer slack (50 us by default), and a one-row gather from Python took 119 us in all on an
  // H100 when the first query came too early. That costs the waiting thread's core for up to
  // a millisecond; longer waits back off to sleeps, so a slow kernel does not keep it busy.
  const deadline spin_until = deadline::after_ns(1'000'000);
  std::uint32_t sleep_us = 50;
  for (;;) {
    const cudaError_t e = query();
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) BAM_CUDA_CHECK(e);
    if (until.expired()) {
      throw error(what + " did not finish within " + std::to_string(timeout_ns / 1'000'000) +
                  " ms (a hang: see the watchdog lines for stuck queues)");
    }
    if (!spin_until.expired()) {
      std::this_thread::yield();
      continue;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
    sleep_us = std::min(sleep_us * 2, 1000u);
  }
}

}  // namespace

void gpu_context::synchronize(stream_handle stream, std::uint64_t timeout_ns,
                              const std::string& what) const {
  poll_until_done([stream] { return cudaStreamQuery(stream); }, timeout_ns, what);
}

void gpu_context::synchronize(event_handle event, std::uint64_t timeout_ns,
                              const std::string& what) const {
  poll_until_done([event] { return cudaEventQuery(event); }, timeout_ns, what);
}

}  // namespace bam::detail
