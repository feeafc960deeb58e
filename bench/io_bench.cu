// `bam bench io`: BaM's raw I/O figures on the GPU (io_bench.hpp), each next to the ceiling it
// is judged against, measured in the same run.
#include "io_bench.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include <bam/cuda_check.hpp>
#include <bam/error.hpp>
#include <bam/platform/launch.cuh>
#include <bam/runtime/gpu_info.hpp>
#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "ceilings.hpp"
#include "common/sizes.hpp"
#include "cuda_event.cuh"
#include "io_kernels.cuh"
#include "io_report.hpp"
#include "io_sleep.hpp"

namespace bam::bench {

namespace {

using namespace io;

constexpr std::uint32_t block_threads = 256;
constexpr std::uint64_t command_timeout_ns = 20'000'000'000ull;  // one command's wait
constexpr std::uint32_t max_buffer_shift = 12;                   // 4 KiB per thread
constexpr std::uint32_t samples_per_thread = 16;
constexpr std::uint64_t target_samplers = 4096;

std::string size_text(std::uint64_t bytes) {
  return tools::format_bytes(static_cast<double>(bytes));
}

/// What one timed run of io_worker does.
struct run_config {
  std::uint32_t io_bytes = 512;
  bool write = false;
  bool naive = false;
  bool lane_map = false;
  std::uint32_t lanes_per_warp = 32;  ///< working lanes per warp (a divisor of 32)
  std::uint64_t threads = 0;          ///< working threads; 0: every resident thread
  std::uint64_t footprint = 0;        ///< image bytes addressed (0: the whole image)
  double seconds = 0.2;
  std::uint64_t* trace = nullptr;  ///< sample stages when set
};

struct run_result {
  std::uint64_t threads = 0;
  run_counts counts{};
  double seconds = 0;
  double rate = 0;
  double entries_per_doorbell = 0;
  double completions_per_drain = 0;  ///< completions per CQ head doorbell
  std::vector<stage_sample> samples;
};

/// A runtime with the memory every run of one figure needs, allocated before any start.
class session {
 public:
  explicit session(std::uint32_t controller_sms) : rt_(make_config(controller_sms)) {
    if (!rt_.gpu()) throw input_error("bam bench io needs a GPU: " + rt_.message());
    int per_sm = 0;
    BAM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, kernel_function<io_worker>(), block_threads, 0));
    resident_ = std::uint64_t(std::max(per_sm, 1)) * block_threads * rt_.app_sms();
    buffers_ = device_memory(resident_ << max_buffer_shift);
    counts_ = device_memory(sizeof(run_counts));
    counts_out_ = pinned_memory(sizeof(run_counts));
    samples_ = device_memory(target_samplers * 2 * samples_per_thread * sizeof(stage_sample));
    samples_out_ = pinned_memory(samples_.bytes());
    measure_timer();
  }

  gpu_runtime& rt() { return rt_; }
  [[nodiscard]] std::uint64_t resident() const { return resident_; }
  [[nodiscard]] std::uint64_t timer_step_ns() const { return timer_step_[0]; }
  [[nodiscard]] std::uint64_t timer_mean_step_ns() const { return timer_step_[1]; }
  device_memory& counts() { return counts_; }
  [[nodiscard]] const run_counts& counts_out() const { return *counts_out_.as<run_counts>(); }

  /// Loads and launches every kernel of this benchmark once (before each start).
  void warm_up() {
    rt_.preload({kernel_function<io_worker>(), kernel_function<zero_words>(),
                 kernel_function<controller_fill>(), kernel_function<controller_ring>(),
                 kernel_function<controller_collect>(), kernel_function<fence_probe>()});
    rt_.warm_up([](stream_handle s) {
      warm_up_launch<io_worker>(s);
      warm_up_launch<zero_words>(s);
      warm_up_launch<controller_fill>(s);
      warm_up_launch<controller_ring>(s);
      warm_up_launch<controller_collect>(s);
      warm_up_launch<fence_probe>(s);
    });
  }

  void zero_counts() {
    launch(rt_.stream(), 1, 32, zero_words{counts_.as<std::uint64_t>(), sizeof(run_counts) / 8});
  }

  /// One timed run of io_worker against `ssd` (started).
  run_result run(const emulated_storage& ssd, const run_config& c) {
    const device_set_ref set = ssd.ref();
    // Working threads, whole warps' worth; launched threads, whole warps of which the first
    // lanes_per_warp lanes work.
    const std::uint64_t lanes = c.lanes_per_warp;
    std::uint64_t threads = c.threads ? c.threads : resident_;
    threads = std::min(std::max<std::uint64_t>(32, (threads + 31) / 32 * 32),
                       resident_ / warp_lanes * lanes);
    std::uint64_t launched = threads / lanes * warp_lanes;
    const std::uint32_t block =
        launched < block_threads ? static_cast<std::uint32_t>(launched) : block_threads;
    const auto grid = static_cast<std::uint32_t>((launched + block - 1) / block);
    launched = std::uint64_t{grid} * block;
    threads = launched / warp_lanes * lanes;
    const std::uint64_t footprint = c.footprint ? c.footprint : set.capacity_bytes;
    // Whole stripes per device, so striping maps the slots onto [0, footprint) of the image.
    std::uint64_t per_device = footprint / set.devices;
    if (set.devices > 1) per_device = per_device / set.stripe_bytes * set.stripe_bytes;
    const std::uint64_t slots = per_device / c.io_bytes;
    if (slots == 0) throw input_error("footprint too small for the devices and command size");
    std::uint32_t shift = 9;
    while ((1u << shift) < c.io_bytes) ++shift;
    if (shift > max_buffer_shift) throw input_error("commands are at most 4 KiB here");
    const std::uint64_t sample_every =
        std::max<std::uint64_t>(1, (threads + target_samplers - 1) / target_samplers);
    if (c.trace) zero_async_kernel(samples_);

    const storage_stats before = ssd.stats();
    zero_counts();
    const io_worker k{.set = set,
                      .buffers = buffers_.as<std::uint8_t>(),
                      .buffer_shift = shift,
                      .blocks = c.io_bytes / set.block_bytes,
                      .slots_per_device = slots,
                      .write = c.write,
                      .naive = c.naive,
                      .lane_map = c.lane_map,
                      .lanes_per_warp = c.lanes_per_warp,
                      .seed = seed_++,
                      .duration_ns = static_cast<std::uint64_t>(c.seconds * 1e9),
                      .counts = counts_.as<run_counts>(),
                      .trace = c.trace,
                      .samples = samples_.as<stage_sample>(),
                      .sample_every = static_cast<std::uint32_t>(sample_every),
                      .samples_per_thread = samples_per_thread};
    BAM_CUDA_CHECK(cudaEventRecord(begin_.get(), rt_.stream()));
    launch(rt_.stream(), grid, block, k);
    BAM_CUDA_CHECK(cudaEventRecord(end_.get(), rt_.stream()));
    copy_async(counts_out_.data(), counts_.data(), sizeof(run_counts), rt_.stream());
    const std::uint64_t samplers = (threads + sample_every - 1) / sample_every;
    const std::uint64_t sample_bytes = samplers * samples_per_thread * sizeof(stage_sample);
    if (c.trace) copy_async(samples_out_.data(), samples_.data(), sample_bytes, rt_.stream());
    rt_.synchronize(rt_.stream(),
                    static_cast<std::uint64_t>(c.seconds * 1e9) + 2 * command_timeout_ns,
                    "the I/O workers (" + std::to_string(threads) + " threads)");
    rt_.check();
    float ms = 0;
    BAM_CUDA_CHECK(cudaEventElapsedTime(&ms, begin_.get(), end_.get()));
    const storage_stats after = ssd.stats();

    run_result r;
    r.threads = threads;
    r.counts = counts_out();
    r.seconds = ms / 1e3;
    r.rate = static_cast<double>(r.counts.completed) / r.seconds;
    std::uint64_t doorbells = 0, submitted = 0, drains = 0, drained = 0;
    for (std::size_t q = 0; q < after.queues.size(); ++q) {
      doorbells += after.queues[q].sq_doorbells - before.queues[q].sq_doorbells;
      submitted += after.queues[q].submitted - before.queues[q].submitted;
      drains += after.queues[q].cq_doorbells - before.queues[q].cq_doorbells;
      drained += after.queues[q].drained - before.queues[q].drained;
    }
    r.entries_per_doorbell =
        doorbells ? static_cast<double>(submitted) / static_cast<double>(doorbells) : 0;
    r.completions_per_drain =
        drains ? static_cast<double>(drained) / static_cast<double>(drains) : 0;
    if (c.trace) {
      const auto* s = samples_out_.as<stage_sample>();
      for (std::uint64_t i = 0; i < samplers * samples_per_thread; ++i) {
        if (s[i].t[0] != 0) r.samples.push_back(s[i]);
      }
    }
    return r;
  }

 private:
  static runtime_config make_config(std::uint32_t controller_sms) {
    runtime_config c;
    c.controller_sms = controller_sms;
    c.watchdog = true;
    c.wait_timeout_ns = 120'000'000'000ull;
    return c;
  }

  void zero_async_kernel(device_memory& m) {
    launch(rt_.stream(), 64, block_threads, zero_words{m.as<std::uint64_t>(), m.bytes() / 8});
  }

  // %globaltimer's step, before anything runs (DESIGN 11: it ticks coarsely).
  void measure_timer() {
    device_memory out(3 * sizeof(std::uint64_t));
    const owned_stream s = owned_stream::create_non_blocking();
    launch(s.get(), 1, 32, timer_step{out.as<std::uint64_t>()});
    copy_async(timer_step_, out.data(), sizeof timer_step_, s.get());
    BAM_CUDA_CHECK(cudaStreamSynchronize(s.get()));
  }

  gpu_runtime rt_;
  std::uint64_t resident_ = 0;
  device_memory buffers_, counts_, samples_;
  pinned_memory counts_out_, samples_out_;
  cuda_event begin_, end_;
  std::uint32_t seed_ = 1;
  std::uint64_t timer_step_[3] = {};
};

/// An image of `bytes` holding the pattern, in GPU or pinned host memory.
std::shared_ptr<backing_store> pattern_image(std::uint64_t bytes, memory_kind kind) {
  std::cerr << "bam: " << (kind == memory_kind::device ? "GPU" : "pinned") << " image of "
            << size_text(bytes) << "...\n";
  auto image = backing_store::in_memory(bytes, kind);
  const owned_stream s = owned_stream::create_non_blocking();
  fill_pattern_async(image->data(), bytes, s.get());
  BAM_CUDA_CHECK(cudaStreamSynchronize(s.get()));
  return image;
}

storage_config base_storage(const io_bench_options& o, std::uint32_t devices, std::uint32_t queues,
                            std::uint32_t depth, const device_model& model) {
  storage_config c;
  c.controller.fetch_batches = o.fetch_batches;
  c.controller.idle_sleep_ns = o.controller_sleep_ns;
  c.controller.stop_poll_ns = std::uint64_t{o.controller_stop_poll_us} * 1000;
  c.wait_sleep_ns = o.wait_sleep_ns.front();
  c.devices = devices;
  c.queues_per_device = queues;
  c.queue_depth = depth;
  c.model = model;
  c.timeout_ns = command_timeout_ns;
  c.placement = controller_placement::gpu_kernel;
  return c;
}

device_model caps_off(double latency_us) {
  device_model m = device_model::unlimited();
  m.latency_us = latency_us;
  return m;
}

/// Commands per second a device with caps can serve at this command size.
double modelled_rate(const device_model& m, std::uint32_t bytes) {
  const double by_iops = m.iops > 0 ? 1.0 / m.iops : 0;
  const double by_bw = m.bandwidth_bytes_per_s > 0 ? bytes / m.bandwidth_bytes_per_s : 0;
  const double cost = std::max(by_iops, by_bw);
  return cost > 0 ? 1.0 / cost : 0;
}

report new_report(const std::string& figure, session& s, const io_bench_options& o) {
  report r;
  r.benchmark = "io";
  r.figure = figure;
  r.configuration.set("controller_sms", s.rt().controller_sms())
      .set("app_sms", s.rt().app_sms())
      .set("green_contexts", std::string(s.rt().green_contexts() ? "yes" : "no"))
      .set("resident_threads", s.resident())
      .set("seconds_per_run", o.seconds)
      .set("fetch_batches", std::uint64_t{o.fetch_batches})
      .set("controller_sleep_ns", o.controller_sleep_ns)
      .set("controller_stop_poll_us", o.controller_stop_poll_us)
      .set("wait_sleep_ns", o.wait_sleep_ns.front())
      .set("globaltimer_step_ns", s.timer_step_ns())
      .set("globaltimer_mean_step_ns", s.timer_mean_step_ns())
      .set("gpu", gpu_description());
  return r;
}

report_record ceiling_record(const std::string& name, const rate_figure& f,
                             std::uint64_t line_bytes, std::uint64_t footprint) {
  report_record c;
  c.set("ceiling", name)
      .set("line_bytes", line_bytes)
      .set("footprint_bytes", footprint)
      .set("lines_per_s", f.lines_per_s)
      .set("bytes_per_s", f.bytes_per_s)
      .set("repetitions", static_cast<std::uint64_t>(f.repetition_seconds.size()));
  return c;
}

report_record run_record(const run_result& r, const run_config& c) {
  report_record p;
  p.set("io_bytes", c.io_bytes)
      .set("op", std::string(c.write ? "write" : "read"))
      .set("protocol", std::string(c.naive ? "naive" : "ticket"))
      .set("queue_map", std::string(c.lane_map ? "lane" : "warp"))
      .set("lanes_per_warp", c.lanes_per_warp)
      .set("threads", r.threads)
      .set("completed", r.counts.completed)
      .set("failed", r.counts.failed)
      .set("wrong", r.counts.wrong)
      .set("seconds", r.seconds)
      .set("iops", r.rate)
      .set("bytes_per_s", r.rate * c.io_bytes)
      .set("round_trip_us", r.rate > 0 ? static_cast<double>(r.threads) / r.rate * 1e6 : 0.0)
      .set("entries_per_doorbell", r.entries_per_doorbell)
      .set("completions_per_drain", r.completions_per_drain);
  return p;
}

/// Throws once everything is printed and written, if any run failed or read wrong bytes.
void finish(const report& r, const io_bench_options& o, const std::vector<std::string>& columns) {
  finish_report(r, columns, o.json, "bench io", "commands");
}

const std::vector<std::string> run_columns = {"io_bytes",
                                              "op",
                                              "protocol",
                                              "queue_map",
                                              "threads",
                                              "iops",
                                              "bytes_per_s",
                                              "round_trip_us",
                                              "entries_per_doorbell",
                                              "failed",
                                              "wrong"};

// --- (1) the controller alone ---------------------------------------------------------------

void figure_controller(const io_bench_options& o) {
  const std::uint32_t queues = o.queues ? o.queues : 512;
  const std::uint32_t depth = o.depth ? o.depth : 1024;
  const std::uint64_t image_bytes = 1ull << 30;
  std::unique_ptr<report> out;
  for (const std::uint32_t sms : o.controller_sms) {
    session s(sms);
    if (!out) {
      out = std::make_unique<report>(new_report("controller", s, o));
      out->configuration.set("queues", queues)
          .set("depth", depth)
          .set("rounds", o.rounds)
          .set("image", "GPU memory, " + size_text(image_bytes))
          .set("io_bytes", std::uint64_t{512})
          .set("model", "caps off, no latency");
    }
    gpu_runtime& rt = s.rt();
    auto image = pattern_image(image_bytes, memory_kind::device);
    emulated_storage ssd(base_storage(o, 1, queues, depth, caps_off(0)), image, &rt);
    device_memory buffers(std::uint64_t{queues} * depth * 512);
    device_memory ring(8ull * queues), finish_at(8ull * queues);
    pinned_memory ring_out(8ull * queues), finish_out(8ull * queues);
    cuda_event begin, end;
    s.warm_up();
    const std::uint64_t per_round = std::uint64_t{queues} * (depth - 1);
    std::vector<double> rates, event_rates;
    std::uint64_t ok = 0, bad = 0, wrong = 0, timed_out = 0;
    {
      stop_guard stop(rt);
      rt.start();
      std::cerr << "bam: controller " << ssd.describe() << "\n";
      for (std::uint32_t round = 0; round < o.rounds; ++round) {
        s.zero_counts();
        const controller_round r{.set = ssd.ref(),
                                 .buffers = buffers.as<std::uint8_t>(),
                                 .slots_per_device = image_bytes / 512,
                                 .round = round,
                                 .seed = 77,
                                 .ring_ns = ring.as<std::uint64_t>(),
                                 .finish_ns = finish_at.as<std::uint64_t>(),
                                 .counts = s.counts().as<run_counts>(),
                                 .timeout_ns = 10'000'000'000ull};
        launch(rt.stream(), 1024, block_threads, controller_fill{r});
        BAM_CUDA_CHECK(cudaEventRecord(begin.get(), rt.stream()));
        launch(rt.stream(), (queues + block_threads - 1) / block_threads, block_threads,
               controller_ring{r});
        launch(rt.stream(), (queues * warp_lanes + block_threads - 1) / block_threads,
               block_threads, controller_collect{r});
        BAM_CUDA_CHECK(cudaEventRecord(end.get(), rt.stream()));
        copy_async(ring_out.data(), ring.data(), 8ull * queues, rt.stream());
        copy_async(finish_out.data(), finish_at.data(), 8ull * queues, rt.stream());
        rt.synchronize(rt.stream(), 60'000'000'000ull, "controller round " + std::to_string(round));
        rt.check();
        const run_counts c = s.counts_out();
        ok += c.completed;
        bad += c.failed;
        wrong += c.wrong;
        const auto* rs = ring_out.as<std::uint64_t>();
        const auto* fs = finish_out.as<std::uint64_t>();
        std::uint64_t first = ~0ull, last = 0;
        for (std::uint32_t q = 0; q < queues; ++q) {
          first = std::min(first, rs[q]);
          last = std::max(last, fs[q]);
          if (fs[q] == 0) ++timed_out;
        }
        float ms = 0;
        BAM_CUDA_CHECK(cudaEventElapsedTime(&ms, begin.get(), end.get()));
        if (last > first)
          rates.push_back(static_cast<double>(per_round) * 1e9 / double(last - first));
        event_rates.push_back(static_cast<double>(per_round) / (ms / 1e3));
      }
    }
    std::sort(rates.begin(), rates.end());
    std::sort(event_rates.begin(), event_rates.end());
    const double median = rates.empty() ? 0 : rates[rates.size() / 2];
    report_record p;
    p.set("controller_sms", rt.controller_sms())
        .set("controller", ssd.describe())
        .set("commands_per_round", per_round)
        .set("rounds", o.rounds)
        .set("iops", median)
        .set("iops_min", rates.empty() ? 0.0 : rates.front())
        .set("iops_max", rates.empty() ? 0.0 : rates.back())
        .set("iops_by_events", event_rates.empty() ? 0.0 : event_rates[event_rates.size() / 2])
        .set("iops_per_sm", median / rt.controller_sms())
        .set("completed", ok)
        .set("failed", bad + timed_out)
        .set("wrong", wrong);
    out->points.push_back(p);
  }
  out->notes.push_back(
      "iops: commands of a round / (last completion seen - first doorbell rung), %globaltimer; "
      "iops_by_events: the same over CUDA events around the ring and collect kernels (adds two "
      "launches)");
  finish(*out, o,
         {"controller_sms", "controller", "commands_per_round", "iops", "iops_min", "iops_max",
          "iops_by_events", "iops_per_sm", "failed", "wrong"});
}

// --- (2) end to end, GPU memory ------------------------------------------------------------

struct queue_shape {
  std::uint32_t queues, depth;
};

void figure_e2e(const io_bench_options& o) {
  session s(o.controller_sms.front());
  report out = new_report("e2e", s, o);
  const std::uint64_t image_bytes = 1ull << 30;
  out.configuration.set("image", "GPU memory, " + size_text(image_bytes))
      .set("model", "caps off, no latency")
      .set("devices", std::uint64_t{1});
  auto image = pattern_image(image_bytes, memory_kind::device);
  {
    const owned_stream st = owned_stream::create_non_blocking();
    out.ceilings.push_back(ceiling_record(
        "hbm_lines", measure_random_lines(image->data(), image_bytes, 512, {.stream = st.get()}),
        512, image_bytes));
  }
  std::vector<queue_shape> shapes;
  if (o.queues || o.depth) {
    shapes.push_back({o.queues ? o.queues : 128, o.depth ? o.depth : 1024});
  } else {
    shapes = {{128, 1024}, {512, 256}};
  }
  const std::uint64_t threads = o.threads.empty() ? 0 : o.threads.front();
  gpu_runtime& rt = s.rt();
  for (const queue_shape& shape : shapes) {
    emulated_storage ssd(base_storage(o, 1, shape.queues, shape.depth, caps_off(0)), image, &rt);
    s.warm_up();
    stop_guard stop(rt);
    rt.start();
    for (const bool lane_map : {false, true}) {
      run_config c{.io_bytes = 512, .lane_map = lane_map, .threads = threads, .seconds = o.seconds};
      std::cerr << "bam: e2e " << shape.queues << " x " << shape.depth << " map "
                << (lane_map ? "lane" : "warp") << "...\n";
      const run_result r = s.run(ssd, c);
      report_record p = run_record(r, c);
      p.set("queues", shape.queues).set("depth", shape.depth);
      p.set("fraction_of_100M", r.rate / 100e6);
      out.points.push_back(p);
    }
  }
  out.notes.push_back(
      "stretch goal 100 M IOPS (one PCIe Gen5 x16 link carries about 90-105 M 512 B reads/s); "
      "the image is in HBM, so the hbm_lines ceiling shows data movement is not the limit");
  out.notes.push_back(
      "round_trip_us = threads / iops (Little's law): each thread has one command in flight");
  std::vector<std::string> cols = {"queues", "depth"};
  cols.insert(cols.end(), run_columns.begin(), run_columns.end());
  cols.push_back("fraction_of_100M");
  finish(out, o, cols);
}

// --- (3) host backing against the zero-copy ceiling ----------------------------------------

void figure_host(const io_bench_options& o) {
  session s(o.controller_sms.front());
  report out = new_report("host", s, o);
  std::vector<std::uint64_t> footprints = o.footprints;
  std::sort(footprints.begin(), footprints.end());
  const std::uint64_t image_bytes = footprints.back();
  const std::uint32_t queues = o.queues ? o.queues : 128;
  const std::uint32_t depth = o.depth ? o.depth : 1024;
  out.configuration.set("image", "pinned host memory, " + size_text(image_bytes))
      .set("model", "caps off, no latency")
      .set("devices", std::uint64_t{1})
      .set("queues", queues)
      .set("depth", depth);
  auto image = pattern_image(image_bytes, memory_kind::pinned);
  const std::vector<std::uint32_t> sizes = {512, 4096};
  std::vector<double> ceiling_rate;  // per (footprint, size), in that order
  {
    const owned_stream st = owned_stream::create_non_blocking();
    for (const std::uint64_t f : footprints) {
      for (const std::uint32_t size : sizes) {
        std::cerr << "bam: zero-copy ceiling " << size_text(size) << " over " << size_text(f)
                  << "...\n";
        const rate_figure c = measure_random_lines(image->data(), f, size, {.stream = st.get()});
        out.ceilings.push_back(ceiling_record("zero_copy_lines", c, size, f));
        ceiling_rate.push_back(c.lines_per_s);
      }
    }
  }
  gpu_runtime& rt = s.rt();
  emulated_storage ssd(base_storage(o, 1, queues, depth, caps_off(0)), image, &rt);
  s.warm_up();
  const std::uint64_t threads = o.threads.empty() ? 0 : o.threads.front();
  {
    stop_guard stop(rt);
    rt.start();
    std::size_t i = 0;
    for (const std::uint64_t f : footprints) {
      for (const std::uint32_t size : sizes) {
        run_config c{.io_bytes = size, .threads = threads, .footprint = f, .seconds = o.seconds};
        std::cerr << "bam: host " << size_text(size) << " over " << size_text(f) << "...\n";
        const run_result r = s.run(ssd, c);
        report_record p = run_record(r, c);
        p.set("footprint_bytes", f)
            .set("ceiling_lines_per_s", ceiling_rate[i])
            .set("fraction_of_ceiling", r.rate / ceiling_rate[i]);
        out.points.push_back(p);
        ++i;
      }
    }
  }
  out.notes.push_back(
      "ceiling: GPU warps reading random whole lines of the same pinned image over the same "
      "footprint (zero-copy), all SMs, before the controller starts; target >= 90%");
  std::vector<std::string> cols = {"footprint_bytes"};
  cols.insert(cols.end(), run_columns.begin(), run_columns.end());
  cols.push_back("ceiling_lines_per_s");
  cols.push_back("fraction_of_ceiling");
  finish(out, o, cols);
}

// --- (4) device scaling --------------------------------------------------------------------

void figure_devices(const io_bench_options& o) {
  session s(o.controller_sms.front());
  report out = new_report("devices", s, o);
  const std::uint64_t image_bytes = *std::max_element(o.footprints.begin(), o.footprints.end());
  const std::uint32_t queues = o.queues ? o.queues : 32;
  const std::uint32_t depth = o.depth ? o.depth : 1024;
  const device_model model = device_model::optane();
  out.configuration.set("image", "pinned host memory, " + size_text(image_bytes))
      .set("model", "Optane-like: 11 us, 5.1 M IOPS, 6.1 GB/s per device (caps on)")
      .set("queues_per_device", queues)
      .set("depth", depth)
      .set("stripe_bytes", std::uint64_t{64 * 1024});
  auto image = pattern_image(image_bytes, memory_kind::pinned);
  const std::vector<std::uint32_t> sizes = {512, 4096};
  std::vector<double> ceiling_rate;
  {
    const owned_stream st = owned_stream::create_non_blocking();
    for (const std::uint32_t size : sizes) {
      const rate_figure c =
          measure_random_lines(image->data(), image_bytes, size, {.stream = st.get()});
      out.ceilings.push_back(ceiling_record("zero_copy_lines", c, size, image_bytes));
      ceiling_rate.push_back(c.lines_per_s);
    }
  }
  gpu_runtime& rt = s.rt();
  const std::uint64_t threads = o.threads.empty() ? 0 : o.threads.front();
  for (const std::uint32_t d : o.devices) {
    emulated_storage ssd(base_storage(o, d, queues, depth, model), image, &rt);
    s.warm_up();
    stop_guard stop(rt);
    rt.start();
    for (const bool write : {false, true}) {
      for (std::size_t k = 0; k < sizes.size(); ++k) {
        run_config c{
            .io_bytes = sizes[k], .write = write, .threads = threads, .seconds = o.seconds};
        std::cerr << "bam: " << d << " devices " << (write ? "write " : "read ")
                  << size_text(sizes[k]) << "...\n";
        const run_result r = s.run(ssd, c);
        const double cap = d * modelled_rate(model, sizes[k]);
        report_record p = run_record(r, c);
        p.set("devices", d)
            .set("modelled_iops", cap)
            .set("fraction_of_model", r.rate / cap)
            .set("zero_copy_lines_per_s", ceiling_rate[k])
            .set("limit", std::string(cap > ceiling_rate[k] && !write ? "VM DMA (zero-copy ceiling)"
                                                                      : "devices (model)"));
        out.points.push_back(p);
      }
    }
  }
  out.notes.push_back(
      "limit names the lower of the modelled cap (devices x per-device rate) and, for reads, the "
      "random zero-copy read ceiling of the same pinned image: past it the VM's DMA "
      "translation, not bam, limits reads; writes cross PCIe as posted writes (no read ceiling)");
  finish(out, o,
         {"devices", "op", "io_bytes", "threads", "iops", "bytes_per_s", "modelled_iops",
          "fraction_of_model", "zero_copy_lines_per_s", "limit", "failed", "wrong"});
}

// --- (5) latency hiding --------------------------------------------------------------------

void figure_latency(const io_bench_options& o) {
  session s(o.controller_sms.front());
  report out = new_report("latency", s, o);
  const std::uint64_t image_bytes = 1ull << 30;
  const std::uint32_t devices = o.latency_devices;
  const std::uint32_t queues = o.queues ? o.queues : 32;
  const std::uint32_t depth = o.depth ? o.depth : 1024;
  out.configuration.set("image", "GPU memory, " + size_text(image_bytes))
      .set("devices", devices)
      .set("queues_per_device", queues)
      .set("depth", depth)
      .set("io_bytes", std::uint64_t{512})
      .set("model", "Optane-like caps (5.1 M IOPS per device) at each latency");
  auto image = pattern_image(image_bytes, memory_kind::device);
  std::vector<std::uint64_t> sweep = o.threads;
  if (sweep.empty()) {
    for (std::uint64_t t = 32; t < s.resident(); t *= 2) sweep.push_back(t);
    sweep.push_back(s.resident());
  }
  gpu_runtime& rt = s.rt();
  for (const std::uint32_t sleep_ns : o.wait_sleep_ns)
    for (const double latency : o.latencies_us) {
      device_model model = device_model::optane();
      model.latency_us = latency;
      const double peak = devices * modelled_rate(model, 512);
      storage_config sc = base_storage(o, devices, queues, depth, model);
      sc.wait_sleep_ns = sleep_ns;
      emulated_storage ssd(sc, image, &rt);
      s.warm_up();
      stop_guard stop(rt);
      rt.start();
      std::uint64_t needed = 0;
      for (const std::uint64_t threads : sweep) {
        run_config c{.io_bytes = 512, .threads = threads, .seconds = o.seconds};
        std::cerr << "bam: latency " << latency << " us, " << threads << " threads, wait sleep "
                  << sleep_ns << " ns...\n";
        const run_result r = s.run(ssd, c);
        report_record p = run_record(r, c);
        p.set("latency_us", latency)
            .set("wait_sleep_ns", sleep_ns)
            .set("modelled_peak_iops", peak)
            .set("fraction_of_peak", r.rate / peak)
            .set("little_in_flight_at_peak", peak * latency * 1e-6);
        out.points.push_back(p);
        if (needed == 0 && r.rate >= 0.9 * peak) needed = r.threads;
      }
      report_record summary;
      summary.set("ceiling", "latency_summary")
          .set("latency_us", latency)
          .set("wait_sleep_ns", sleep_ns)
          .set("modelled_peak_iops", peak)
          .set("threads_for_90pct", needed)
          .set("little_in_flight_for_90pct", 0.9 * peak * latency * 1e-6)
          .set("ratio_measured_to_little",
               needed ? static_cast<double>(needed) / (0.9 * peak * latency * 1e-6) : 0.0);
      out.ceilings.push_back(summary);
    }
  out.notes.push_back(
      "threads_for_90pct = 0: 90% of the modelled peak was not reached at any thread count; "
      "round_trip_us = threads / iops is the latency Little's law sees (modelled + bam's own)");
  finish(out, o,
         {"latency_us", "wait_sleep_ns", "threads", "iops", "fraction_of_peak", "round_trip_us",
          "little_in_flight_at_peak", "entries_per_doorbell", "failed", "wrong"});
}

// --- (6) ticketed vs naive -----------------------------------------------------------------

/// Lock acquisitions per second over `locks` locks contended by every resident thread.
double measure_handoff(session& s, std::uint32_t locks, bool critical_section, double seconds) {
  device_memory lock_words(std::uint64_t{locks} * 128), acquired(std::uint64_t{locks} * 128),
      entries(std::uint64_t{locks} * 128), doorbells(std::uint64_t{locks} * 128);
  const owned_stream st = owned_stream::create_non_blocking();
  for (device_memory* m : {&lock_words, &acquired, &entries, &doorbells}) {
    zero_async(m->data(), m->bytes(), st.get());
  }
  zero_async(s.counts().data(), sizeof(run_counts), st.get());
  const std::uint64_t threads = s.resident();
  cuda_event begin, end;
  BAM_CUDA_CHECK(cudaEventRecord(begin.get(), st.get()));
  launch(st.get(), static_cast<std::uint32_t>(threads / block_threads), block_threads,
         lock_handoff{.locks = lock_words.as<std::uint32_t>(),
                      .acquired = acquired.as<std::uint64_t>(),
                      .entries = entries.as<nvme::submission_entry>(),
                      .doorbells = doorbells.as<std::uint32_t>(),
                      .lock_count = locks,
                      .critical_section = critical_section,
                      .duration_ns = static_cast<std::uint64_t>(seconds * 1e9),
                      .counts = s.counts().as<run_counts>()});
  BAM_CUDA_CHECK(cudaEventRecord(end.get(), st.get()));
  std::vector<std::uint64_t> counts(std::uint64_t{locks} * 16);
  copy_async(counts.data(), acquired.data(), counts.size() * 8, st.get());
  BAM_CUDA_CHECK(cudaStreamSynchronize(st.get()));
  float ms = 0;
  BAM_CUDA_CHECK(cudaEventElapsedTime(&ms, begin.get(), end.get()));
  std::uint64_t total = 0;
  for (std::uint32_t l = 0; l < locks; ++l) total += counts[std::uint64_t{l} * 16];
  return static_cast<double>(total) / (ms / 1e3);
}

void figure_queues(const io_bench_options& o) {
  session s(o.controller_sms.front());
  report out = new_report("queues", s, o);
  const std::uint64_t image_bytes = 1ull << 30;
  const std::uint32_t queues = o.queues ? o.queues : 128;
  const std::uint32_t depth = o.depth ? o.depth : 1024;
  const double latency = 11;
  out.configuration.set("image", "GPU memory, " + size_text(image_bytes))
      .set("devices", std::uint64_t{1})
      .set("queues", queues)
      .set("depth", depth)
      .set("latency_us", latency)
      .set("io_bytes", std::uint64_t{512});
  auto image = pattern_image(image_bytes, memory_kind::device);

  // The lock hand-off, before anything else runs on the GPU (it needs no controller).
  std::cerr << "bam: lock hand-off...\n";
  const double empty = measure_handoff(s, queues, false, o.seconds);
  const double with_cs = measure_handoff(s, queues, true, o.seconds);
  const double handoff_ns = empty > 0 ? queues / empty * 1e9 : 0;
  const double handoff_cs_ns = with_cs > 0 ? queues / with_cs * 1e9 : 0;
  const double device_cap = modelled_rate(device_model::optane(), 512);
  const double predicted = std::min(with_cs, device_cap);
  out.ceilings.push_back(report_record{}
                             .set("ceiling", "lock_handoff")
                             .set("locks", queues)
                             .set("threads", s.resident())
                             .set("handoff_ns_empty", handoff_ns)
                             .set("handoff_ns_naive_critical_section", handoff_cs_ns)
                             .set("acquisitions_per_s", with_cs)
                             .set("predicted_naive_iops_caps_off", with_cs)
                             .set("predicted_naive_iops_caps_on", predicted));

  gpu_runtime& rt = s.rt();
  const std::uint64_t threads = o.threads.empty() ? 0 : o.threads.front();
  for (const bool caps : {false, true}) {
    device_model model = caps ? device_model::optane() : caps_off(latency);
    model.latency_us = latency;
    for (const bool naive : {false, true}) {
      // A fresh set per protocol: submit() and submit_naive() are not mixed on one queue.
      emulated_storage ssd(base_storage(o, 1, queues, depth, model), image, &rt);
      s.warm_up();
      stop_guard stop(rt);
      rt.start();
      run_config c{.io_bytes = 512, .naive = naive, .threads = threads, .seconds = o.seconds};
      std::cerr << "bam: " << (naive ? "naive" : "ticket") << (caps ? " caps on" : " caps off")
                << "...\n";
      const run_result r = s.run(ssd, c);
      report_record p = run_record(r, c);
      p.set("caps", std::string(caps ? "on" : "off"))
          .set("predicted_naive_iops", caps ? predicted : with_cs);
      out.points.push_back(p);
    }
  }
  for (std::size_t i = 0; i + 1 < out.points.size(); i += 2) {
    const double ticket = out.points[i].number("iops");
    const double naive = out.points[i + 1].number("iops");
    out.points[i + 1].set("ticket_over_naive", naive > 0 ? ticket / naive : 0.0);
  }
  out.notes.push_back(
      "predicted naive IOPS = locks / hand-off time with the naive critical section (a 64-byte "
      "entry, a system fence, a doorbell store), measured with every resident thread contending "
      "(a warp per lock, round robin), capped by the modelled device when caps are on; the paper "
      "reported 823 K (naive) vs 45.8 M (ticketed)");
  finish(out, o,
         {"caps", "protocol", "threads", "iops", "round_trip_us", "entries_per_doorbell",
          "predicted_naive_iops", "ticket_over_naive", "failed", "wrong"});
}

// --- the round trip, stage by stage --------------------------------------------------------

void add_stages(report& out, const std::string& label, const run_result& r) {
  std::vector<double> submit, to_fetching, to_fetched, to_post, to_stored, to_seen, total;
  std::uint64_t invalid = 0, unstored = 0;
  for (const stage_sample& x : r.samples) {
    // called, returned, fetching, fetched, posted, stored, seen
    const std::uint64_t* t = x.t;
    if (t[2] == 0 || t[3] == 0 || t[4] == 0 || t[2] < t[0] || t[3] < t[2] || t[4] < t[3] ||
        t[6] < t[4] || t[6] < t[1]) {
      ++invalid;
      continue;
    }
    submit.push_back(static_cast<double>(t[1] - t[0]));
    // Signed: the controller may fetch before the submitter reads its clock after submit().
    to_fetching.push_back(static_cast<double>(t[2]) - static_cast<double>(t[1]));
    to_fetched.push_back(static_cast<double>(t[3] - t[2]));
    to_post.push_back(static_cast<double>(t[4] - t[3]));
    // An older command's "stored" stamp (this one's had not landed when it was read) is left
    // out of this stage only.
    if (t[5] >= t[4] && t[5] <= t[6]) {
      to_stored.push_back(static_cast<double>(t[5] - t[4]));
    } else {
      ++unstored;
    }
    to_seen.push_back(static_cast<double>(t[6] - t[4]));
    total.push_back(static_cast<double>(t[6] - t[0]));
  }
  const char* names[] = {"submit (ticket, turn, tail doorbell)",
                         "doorbell -> fetch starts",
                         "fetch starts -> fetched (doorbell acquire)",
                         "fetched -> completion posted",
                         "posted -> stored (controller fence, release)",
                         "posted -> seen (drain, mailbox, backoff)",
                         "total"};
  std::vector<double>* series[] = {&submit,    &to_fetching, &to_fetched, &to_post,
                                   &to_stored, &to_seen,     &total};
  for (int i = 0; i < 7; ++i) {
    report_record d = distribution(names[i], *series[i]);
    d.fields.insert(d.fields.begin(), {"run", label});
    out.samples.push_back(d);
  }
  out.notes.push_back(label + ": " + std::to_string(r.samples.size()) + " samples, " +
                      std::to_string(invalid) + " discarded (stamps out of order or " +
                      "overwritten), " + std::to_string(unstored) +
                      " without their own stored stamp");
}

const char* const probe_names[probe_ops] = {"clock (nothing)",
                                            "fence.sc.cta",
                                            "fence.sc.gpu",
                                            "fence.sc.sys",
                                            "release store, gpu",
                                            "release store, sys",
                                            "relaxed load sys + fence.sc.cta",
                                            "acquire load sys + fence.sc.cta",
                                            "doorbell (fence.sc.sys + release store sys)",
                                            "entry + doorbell, sys (tail winner)",
                                            "entry + doorbell, gpu scope"};

/// Memory of probe_fences, allocated before any controller starts (nothing is allocated or
/// freed while one runs).
struct probe_memory {
  static constexpr std::uint64_t duration_offset = 512;  // after the words (256 B), the entry
  static constexpr std::uint64_t duration_bytes = 8ull * probe_ops * probe_reps;
  device_memory scratch{duration_offset + duration_bytes + 8};
  pinned_memory durations{duration_bytes};
};

/// Times each fence, scoped load and store the queue protocol uses (fence_probe, one thread
/// of one warp on the app stream) and adds a ceiling record per operation.
void probe_fences(session& s, probe_memory& m, report& out, const std::string& controller) {
  auto* base = m.scratch.as<std::uint8_t>();
  // The app stream: the probe runs where the workers run (the app's SMs).
  const stream_handle st = s.rt().stream();
  launch(st, 1, 32, zero_words{m.scratch.as<std::uint64_t>(), probe_memory::duration_offset / 8});
  launch(st, 1, 32,
         fence_probe{.words = m.scratch.as<std::uint32_t>(),
                     .entry = reinterpret_cast<nvme::submission_entry*>(base + 256),
                     .out = reinterpret_cast<std::uint64_t*>(base + probe_memory::duration_offset),
                     .sink = reinterpret_cast<std::uint64_t*>(base + probe_memory::duration_offset +
                                                              probe_memory::duration_bytes)});
  copy_async(m.durations.data(), base + probe_memory::duration_offset, probe_memory::duration_bytes,
             st);
  s.rt().synchronize(st, 10'000'000'000ull, "the fence probe");
  s.rt().check();
  const auto* ns = m.durations.as<std::uint64_t>();
  for (std::uint32_t op = 0; op < probe_ops; ++op) {
    std::vector<double> v(ns + std::uint64_t{op} * probe_reps,
                          ns + std::uint64_t{op + 1} * probe_reps);
    report_record d = distribution(probe_names[op], v);
    d.fields.insert(d.fields.begin(),
                    {{"ceiling", std::string("fence_probe")}, {"controller", controller}});
    out.ceilings.push_back(d);
  }
}

void figure_decompose(const io_bench_options& o) {
  session s(o.controller_sms.front());
  report out = new_report("decompose", s, o);
  const std::uint64_t image_bytes = 1ull << 30;
  const std::uint32_t queues = o.queues ? o.queues : 128;
  const std::uint32_t depth = o.depth ? o.depth : 1024;
  out.configuration.set("devices", std::uint64_t{1})
      .set("queues", queues)
      .set("depth", depth)
      .set("io_bytes", std::uint64_t{512})
      .set("model", "caps off, no latency")
      .set("image_bytes", image_bytes);
  std::vector<std::uint64_t> counts = o.threads;
  if (counts.empty()) counts = {0, 32768};
  device_memory trace(std::uint64_t{controller_trace_words} * queues * depth * 8);
  gpu_runtime& rt = s.rt();
  probe_memory probe;
  s.warm_up();
  probe_fences(s, probe, out, "stopped");
  for (const std::uint32_t sleep_ns : o.wait_sleep_ns)
    for (const memory_kind kind : {memory_kind::device, memory_kind::pinned}) {
      auto image = pattern_image(image_bytes, kind);
      for (const std::string& edges : o.edges) {
        {
          const owned_stream st = owned_stream::create_non_blocking();
          zero_async(trace.data(), trace.bytes(), st.get());
          BAM_CUDA_CHECK(cudaStreamSynchronize(st.get()));
        }
        storage_config sc = base_storage(o, 1, queues, depth, caps_off(0));
        sc.controller.trace = trace.as<std::uint64_t>();
        sc.controller.gpu_scope_edges = edges == "gpu";
        sc.wait_sleep_ns = sleep_ns;
        emulated_storage ssd(sc, image, &rt);
        s.warm_up();
        stop_guard stop(rt);
        rt.start();
        probe_fences(s, probe, out,
                     std::string("running (") + (kind == memory_kind::device ? "GPU" : "pinned") +
                         " image, " + edges + " edges)");
        for (const std::uint64_t threads : counts)
          for (const std::uint32_t lanes : o.lanes_per_warp) {
            run_config c{.io_bytes = 512,
                         .lanes_per_warp = lanes,
                         .threads = threads,
                         .seconds = o.seconds,
                         .trace = trace.as<std::uint64_t>()};
            const std::string label = std::string(kind == memory_kind::device ? "GPU" : "pinned") +
                                      " image, " +
                                      std::to_string(threads ? threads : s.resident()) +
                                      " threads, " + std::to_string(lanes) + " per warp, " + edges +
                                      " edges, wait sleep " + std::to_string(sleep_ns) + " ns";
            std::cerr << "bam: decompose " << label << "...\n";
            const run_result r = s.run(ssd, c);
            report_record p = run_record(r, c);
            p.set("image", std::string(kind == memory_kind::device ? "GPU" : "pinned"))
                .set("edges", edges)
                .set("wait_sleep_ns", sleep_ns);
            out.points.push_back(p);
            add_stages(out, label, r);
          }
      }
    }
  out.notes.push_back(
      "stamps are %globaltimer (step in the configuration): submit called / returned; by the "
      "controller (trace hook) fetch starts (before the doorbell's acquire load), fetched, "
      "posted (data moved, before its fence), stored (after the fence and the completion's "
      "release); seen by the waiter; compare the median total with round_trip_us "
      "(threads / iops)");
  out.notes.push_back(
      "fence_probe: one thread times each operation 64 times between two %globaltimer reads, "
      "with the controller stopped and running; a tail winner pays 'entry + doorbell', a "
      "drainer a doorbell, the controller a fence.sc.sys and a release store per post");
  std::vector<std::string> cols = {"image", "edges", "wait_sleep_ns", "lanes_per_warp"};
  cols.insert(cols.end(), run_columns.begin(), run_columns.end());
  cols.push_back("completions_per_drain");
  finish(out, o, cols);
}

void check(const io_bench_options& o) {
  if (o.seconds < 0.02 || o.seconds > 30) throw input_error("--seconds must be 0.02..30");
  if (o.controller_sms.empty()) throw input_error("--controller-sms needs a value");
  for (const std::uint32_t d : o.devices) {
    if (d == 0 || d > 64) throw input_error("--devices values must be 1..64");
  }
  if (o.devices.empty()) throw input_error("--devices needs a value");
  if (o.footprints.empty()) throw input_error("--footprint needs a value");
  for (const std::uint64_t f : o.footprints) {
    if (f < (16u << 20) || f > (64ull << 30)) throw input_error("--footprint values: 16M..64G");
  }
  if (o.latencies_us.empty()) throw input_error("--latency-us needs a value");
  for (const double l : o.latencies_us) {
    if (!(l >= 0 && l <= 100000)) throw input_error("--latency-us values: 0..100000");
  }
  if (o.rounds == 0 || o.rounds > 100) throw input_error("--rounds must be 1..100");
  if (o.wait_sleep_ns.empty()) throw input_error("--wait-sleep-ns needs a value");
  for (const std::uint32_t ns : o.wait_sleep_ns) {
    if (ns > max_sleep_ns) throw input_error("--wait-sleep-ns values: 0..1000000");
  }
  if (o.controller_sleep_ns > max_sleep_ns) {
    throw input_error("--controller-sleep-ns must be 0..1000000");
  }
  if (o.sleep_requests_ns.empty()) throw input_error("--sleep-requests-ns needs a value");
  for (const std::uint32_t ns : o.sleep_requests_ns) {
    if (ns > max_sleep_ns) throw input_error("--sleep-requests-ns values: 0..1000000");
  }
  if (o.latency_devices == 0 || o.latency_devices > 64) {
    throw input_error("--latency-devices must be 1..64");
  }
  if (o.controller_stop_poll_us == 0 || o.controller_stop_poll_us > 100'000) {
    throw input_error("--controller-stop-poll-us must be 1..100000");
  }
  if (o.lanes_per_warp.empty()) throw input_error("--lanes-per-warp needs a value");
  for (const std::uint32_t l : o.lanes_per_warp) {
    if (l == 0 || l > 32 || 32 % l != 0) {
      throw input_error("--lanes-per-warp values: 1, 2, 4, 8, 16 or 32");
    }
  }
  if (o.edges.empty()) throw input_error("--edges needs a value");
  for (const std::string& e : o.edges) {
    if (e != "system" && e != "gpu") throw input_error("--edges values: system or gpu");
  }
}

}  // namespace

void run_io_bench(const io_bench_options& options) {
  check(options);
  if (!gpu_available()) {
    throw input_error("bam bench io needs a GPU: " + gpu_unavailable_reason());
  }
  const std::string& f = options.figure;
  if (f == "controller") {
    figure_controller(options);
  } else if (f == "e2e") {
    figure_e2e(options);
  } else if (f == "host") {
    figure_host(options);
  } else if (f == "devices") {
    figure_devices(options);
  } else if (f == "latency") {
    figure_latency(options);
  } else if (f == "queues") {
    figure_queues(options);
  } else if (f == "decompose") {
    figure_decompose(options);
  } else if (f == "sleep") {
    figure_sleep(options);
  } else {
    throw input_error(
        "--figure must be controller, e2e, host, devices, latency, queues, decompose or "
        "sleep, got '" +
        f + "'");
  }
}

}  // namespace bam::bench
