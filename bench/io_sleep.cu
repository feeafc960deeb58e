// `bam bench io --figure sleep`: every wait loop of bam backs off with __nanosleep, so a sleep
// that lasts far longer than asked becomes latency at low load. This figure measures the real
// duration (%globaltimer before and after) against the request: with one warp per SM and with
// full SMs, and with a warp's lanes converged or split into two branches that both sleep.
// No controller runs; plain stream of the primary context.
#include "io_sleep.hpp"

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include <bam/cuda_check.hpp>
#include <bam/platform/clock.hpp>
#include <bam/platform/launch.cuh>
#include <bam/platform/warp.hpp>
#include <bam/runtime/gpu_info.hpp>
#include <bam/runtime/resources.hpp>

#include "io_report.hpp"

namespace bam::bench {

namespace {

constexpr std::uint32_t sleeps_per_thread = 64;

// Out of line and one instantiation per branch, so the diverged branches cannot be merged.
template <unsigned Branch>
__device__ __noinline__ std::uint64_t sleep_loop(std::uint32_t request_ns, std::uint32_t n) {
  std::uint64_t total = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint64_t t0 = now_ns();
    __nanosleep(request_ns);
    total += now_ns() - t0;
  }
  return total;
}

/// Each thread sleeps `sleeps` times and stores its mean slept time in ns.
struct sleep_probe {
  std::uint32_t request_ns;
  std::uint32_t sleeps;
  bool diverge;  ///< odd lanes sleep in a branch of their own
  std::uint64_t* slept;

  BAM_DEVICE void operator()(thread_index t) const {
    const bool odd = diverge && (warp::lane() & 1u) != 0;
    const std::uint64_t total =
        odd ? sleep_loop<1>(request_ns, sleeps) : sleep_loop<0>(request_ns, sleeps);
    slept[t.id] = total / sleeps;
  }
};

struct probe_shape {
  const char* name;
  std::uint32_t grid;
  std::uint32_t block;
};

}  // namespace

void figure_sleep(const io_bench_options& o) {
  int device = 0;
  BAM_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  BAM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const auto sms = static_cast<std::uint32_t>(prop.multiProcessorCount);
  const auto full_blocks = static_cast<std::uint32_t>(prop.maxThreadsPerMultiProcessor) / 256;
  const probe_shape shapes[] = {{"one warp per SM", sms, 32}, {"full SMs", sms * full_blocks, 256}};

  report out;
  out.benchmark = "io";
  out.figure = "sleep";
  out.configuration.set("gpu", gpu_description())
      .set("sleeps_per_thread", sleeps_per_thread)
      .set("clock", "%globaltimer before and after each __nanosleep");

  device_memory slept(std::uint64_t{sms} * full_blocks * 256 * 8);
  const owned_stream st = owned_stream::create_non_blocking();
  warm_up_launch<sleep_probe>(st.get());
  for (const probe_shape& shape : shapes) {
    for (const bool diverge : {false, true}) {
      for (const std::uint32_t request : o.sleep_requests_ns) {
        const std::uint64_t threads = std::uint64_t{shape.grid} * shape.block;
        std::cerr << "bam: sleep " << request << " ns, " << shape.name
                  << (diverge ? ", diverged lanes" : "") << "...\n";
        launch(st.get(), shape.grid, shape.block,
               sleep_probe{request, sleeps_per_thread, diverge, slept.as<std::uint64_t>()});
        std::vector<std::uint64_t> per_thread(threads);
        copy_async(per_thread.data(), slept.data(), threads * 8, st.get());
        // Bounded by the kernel: sleeps_per_thread sleeps of at most 1 ms each.
        BAM_CUDA_CHECK(cudaStreamSynchronize(st.get()));
        const report_record d =
            distribution("slept", std::vector<double>(per_thread.begin(), per_thread.end()));
        report_record p;
        p.set("shape", shape.name)
            .set("lanes", diverge ? "diverged (two branches)" : "converged")
            .set("threads", threads)
            .set("request_ns", request)
            .set("slept_median_ns", d.number("median"))
            .set("slept_p99_ns", d.number("p99"))
            .set("slept_max_ns", d.number("max"))
            .set("median_over_request",
                 request ? d.number("median") / static_cast<double>(request) : 0.0)
            .set("failed", std::uint64_t{0})
            .set("wrong", std::uint64_t{0});
        out.points.push_back(p);
      }
    }
  }
  out.notes.push_back(
      "slept = each thread's mean over its sleeps (the clock's step is in the other io "
      "figures); median_over_request far above 1 means a waiter polls far less often than it "
      "asked for");
  finish_report(out,
                {"shape", "lanes", "threads", "request_ns", "slept_median_ns", "slept_p99_ns",
                 "slept_max_ns", "median_over_request"},
                o.json, "bench io", "sleeps");
}

}  // namespace bam::bench
