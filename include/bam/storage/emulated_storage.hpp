#pragma once
/// @file
/// The emulated NVMe SSD backend: N devices with Q queue pairs each, served by a controller
/// that speaks the NVMe wire format over queues in memory, with a latency/throughput model and
/// fault injection. The application side is the same code that would drive a real SSD.
///
///     auto image = bam::backing_store::from_file("graph.bcsr", false);
///     bam::emulated_storage ssd({.devices = 4}, image);
///     ssd.start();                       // controller runs from here on
///     ... kernels use ssd.ref() ...
///     ssd.stop();
///
/// On the GPU (placement gpu_kernel, the product) the storage belongs to a gpu_runtime, which
/// starts and stops its controller with the others:
///
///     bam::gpu_runtime rt;
///     auto image = bam::backing_store::from_file("graph.bcsr", false, bam::memory_kind::pinned);
///     bam::emulated_storage ssd({.devices = 4, .placement =
///     bam::controller_placement::gpu_kernel},
///                               image, &rt);
///     rt.warm_up(...);  rt.start();  ... kernels on rt.stream() use ssd.ref() ...  rt.stop();

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <bam/storage/backing_store.hpp>
#include <bam/storage/device_model.hpp>
#include <bam/storage/device_set.hpp>

namespace bam {

class gpu_runtime;

/// Who runs the controller.
enum class controller_placement {
  cpu_thread,   ///< a host thread over queues in host memory (the CPU path)
  host_thread,  ///< debug: a host thread over queues in pinned memory that GPU threads use,
                ///< so tools that serialize kernels (compute-sanitizer, ncu) still work; the
                ///< PRP addresses GPU threads pass must be host-reachable (pinned) memory
  gpu_kernel,   ///< a persistent kernel on the runtime's controller SMs over queues in GPU
                ///< memory; PRP addresses may be GPU or pinned memory
};

/// Words per (queue, command id) of gpu_controller_options::trace: fetching, fetched, posted,
/// stored.
inline constexpr std::uint32_t controller_trace_words = 4;

/// Knobs of the GPU controller kernel (placement gpu_kernel).
struct gpu_controller_options {
  std::uint32_t threads_per_block = 256;  ///< 32..256, a multiple of 32
  std::uint32_t max_blocks = 0;  ///< 0: as many as are resident on the controller SMs (fewer
                                 ///< when there are fewer queues than warps)
  std::uint64_t watch_period_ns = 10'000'000;  ///< how often warps report ages to the watchdog
  /// How often the controller (its warp 0) reads the stop flag in mapped host memory while
  /// some warp had work in the last idle_stop_poll_after_ns. Rarely: on the H200, while every
  /// warp read mapped host memory every 100 us, every system-scope barrier of every kernel on
  /// the GPU cost about 130 us and a GPU-scope fence.sc did half the time (docs/results.md,
  /// "The stop poll").
  std::uint64_t stop_poll_ns = 100'000'000;
  /// How often it reads the flag once no warp had work for idle_stop_poll_after_ns: a stop,
  /// which comes when the apps are done, is seen within about idle_stop_poll_after_ns.
  std::uint64_t idle_stop_poll_ns = 100'000;
  std::uint64_t idle_stop_poll_after_ns = 10'000'000;
  /// Batches of up to 32 submission entries a warp fetches from one queue before it completes
  /// that queue's due commands; 0: every entry there (bounded by the queue's depth). 1 makes a
  /// deep queue wait a whole serve pass per 32 entries.
  std::uint32_t fetch_batches = 0;
  /// Longest nanosleep of a controller warp that found nothing to do (doubling from 32 ns);
  /// 0: poll without sleeping. Up to max_sleep_ns.
  std::uint32_t idle_sleep_ns = 1024;
  std::uint64_t flush_timeout_ns = 60'000'000'000ull;  ///< FLUSH write-back deadline
  /// Doorbells (every queue: queue_pair_ref::set_gpu_scope_edges) and completions (the kernel)
  /// published with a GPU-scope release store alone instead of a system fence and release;
  /// the loads on the other side stay system scope. Enough when the controller and all queue
  /// users are on one GPU, which a real SSD's DMA or a CPU controller is not. Off: the
  /// emulator pays what a real SSD's system-scope edges cost (DESIGN 4).
  bool gpu_scope_edges = false;
  /// Benchmarks only (null: off). GPU memory of controller_trace_words x queues x depth words:
  /// at [controller_trace_words * (q * depth + command id)] (q: device-major queue index) the
  /// kernel stores the %globaltimer of the start of the fetch that took the command (before
  /// the doorbell's acquire load), of the fetch itself (after it), of its completion post (data
  /// moved, before the fence), and of the moment its completion's last dword was stored (after
  /// the fence), so a submitter can split its round trip into stages. The last is stored after
  /// the completion is released: a waiter may see an older command's stamp there.
  std::uint64_t* trace = nullptr;
};

struct storage_config {
  std::uint32_t devices = 1;
  std::uint32_t queues_per_device = 8;
  std::uint32_t queue_depth = 256;         ///< 2..65535
  std::uint32_t block_bytes = 512;         ///< 512 or 4096
  std::uint64_t stripe_bytes = 64 * 1024;  ///< multiple of the largest cache line used
  bool replicated = false;
  std::uint32_t max_transfer_bytes = 1u << 20;
  device_model model = device_model::optane();
  fault_plan faults{};                           ///< applied to every device
  std::uint64_t timeout_ns = 30'000'000'000ull;  ///< deadline of one command's wait
  /// Longest sleep between polls of a GPU thread waiting on a queue (queue_pair_ref); 0: poll
  /// without sleeping. Up to max_sleep_ns.
  std::uint32_t wait_sleep_ns = default_wait_sleep_ns;
  controller_placement placement = controller_placement::cpu_thread;
  /// Host threads serving the queues (placements cpu_thread and host_thread): thread t serves
  /// queue q of every device where q % threads == t, each with its own copy stream (over GPU
  /// memory more threads contend in the CUDA driver; copy_batches_in_flight helps one more).
  /// More than one needs a model without caps: each thread keeps its own device clocks.
  std::uint32_t controller_threads = 1;
  /// Placement host_thread: batches of copies a controller thread keeps in flight, posting
  /// each batch's completions when its copies land; 1: it waits for each batch before it
  /// fetches again. 1..64.
  std::uint32_t copy_batches_in_flight = 4;
  gpu_controller_options controller{};  ///< placement gpu_kernel only
};

/// Counters of one emulated device.
struct device_stats {
  std::uint64_t commands = 0;
  std::uint64_t reads = 0;
  std::uint64_t writes = 0;
  std::uint64_t flushes = 0;
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t invalid = 0;          ///< rejected by validation
  std::uint64_t injected_errors = 0;  ///< completed with an injected error status
  std::uint64_t dropped = 0;          ///< completions never posted
  std::uint64_t late = 0;             ///< completions delayed on purpose

  device_stats& operator+=(const device_stats& o) {
    commands += o.commands;
    reads += o.reads;
    writes += o.writes;
    flushes += o.flushes;
    bytes_read += o.bytes_read;
    bytes_written += o.bytes_written;
    invalid += o.invalid;
    injected_errors += o.injected_errors;
    dropped += o.dropped;
    late += o.late;
    return *this;
  }
};

struct storage_stats {
  std::vector<device_stats> devices;
  std::vector<queue_counters> queues;  ///< devices x queues, device major
  [[nodiscard]] device_stats total() const;
};

/// Owner of an emulated device set. Not thread safe: set-up calls from one thread.
class emulated_storage {
 public:
  /// Checks the configuration (throws bam::input_error naming the bad field) and allocates
  /// the queues. The image is the set's address space: host memory for cpu_thread, host or
  /// pinned for host_thread, pinned or device for gpu_kernel. The GPU placements need
  /// `runtime` (not yet started); the storage attaches to it, so runtime->start() and stop()
  /// drive its controller, and must not outlive it.
  emulated_storage(const storage_config& config, std::shared_ptr<backing_store> image,
                   gpu_runtime* runtime = nullptr);
  ~emulated_storage();
  emulated_storage(const emulated_storage&) = delete;
  emulated_storage& operator=(const emulated_storage&) = delete;

  /// The view kernels use. Valid while this object lives. For the GPU placements its
  /// `queues` array is in GPU memory: pass the view to kernels, do not dereference it on the
  /// host.
  [[nodiscard]] device_set_ref ref() const;

  /// Starts / stops the controller (bounded waits; throws bam::error past the deadline).
  /// stop() leaves commands in flight unanswered; call it when no kernel uses the queues.
  void start();
  void stop();
  [[nodiscard]] bool running() const;

  /// How the controller runs ("GPU kernel: grid 16 x 256 ..." or "host thread").
  [[nodiscard]] std::string describe() const;

  /// Puts a queue pair back in its initial state (after a halt, or to abort commands that
  /// never completed): the controller forgets the queue's commands, and what their abandoned
  /// waiters held (cache lines, bounce buffers) goes back. The controller must be stopped and
  /// no thread may use the queue. Returns the holds given back (queues in GPU memory, the
  /// gpu_kernel placement's, by a one-thread kernel of the GPU controller's).
  std::uint32_t reset_queue(std::uint32_t device, std::uint32_t queue);

  /// Queues halted by a submitter that could not get its slot (every later command on them
  /// fails at once until reset_queue). Between launches: on the GPU it copies a word per queue.
  [[nodiscard]] std::uint32_t halted_queues() const;

  /// Names queues whose oldest fetched command is older than `age_ns` (a watchdog's view),
  /// as "device d queue q: command id c outstanding for N ms". Empty when all is well.
  [[nodiscard]] std::vector<std::string> stuck_queues(std::uint64_t age_ns) const;

  [[nodiscard]] storage_stats stats() const;
  [[nodiscard]] const storage_config& config() const;
  [[nodiscard]] backing_store& image() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace bam
