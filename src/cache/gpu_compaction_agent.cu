// The GPU compaction agent (bam/cache/mosaic/gpu_compaction_agent.hpp): its kernel, its
// memory and its start and stop.
#include <bam/cache/mosaic/gpu_compaction_agent.hpp>

#include <string>

#include <cuda_runtime.h>

#include <bam/cache.hpp>
#include <bam/cuda_check.hpp>
#include <bam/error.hpp>
#include <bam/platform/launch.cuh>
#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>

namespace bam::cache::mosaic {

namespace {

/// The loop on one GPU thread: compact_step and everything it calls are single-thread code
/// (bounded waits, no collective that needs other lanes), and one thread sleeping between
/// looks costs the SM it lands on next to nothing.
struct agent_kernel {
  compaction_agent_ref agent;
  BAM_HD void operator()(thread_index t) const {
    if (t.id == 0) agent.run();
  }
};

/// Bound on the small copies and the warm-up launch (they wait for nothing but a copy engine
/// or an idle SM).
constexpr std::uint64_t copy_timeout_ns = 10'000'000'000ull;
/// stop()'s default bound beyond the cache's victim timeout: a sleep, a pass's scans and the
/// poll of the wait.
constexpr std::uint64_t stop_slack_ns = 10'000'000'000ull;

/// The pinned staging words, one compaction_agent_words each.
enum staging_index : std::size_t { zeros = 0, stop_set = 1, read_back = 2, look = 3, count = 4 };

}  // namespace

struct gpu_compaction_agent::impl {
  impl(gpu_runtime& r, const page_cache_ref& c, const compaction_agent_options& o,
       std::uint64_t timeout)
      : rt(r), cache(c), options(o), stop_timeout_ns(timeout) {}

  [[nodiscard]] compaction_agent_words& staged(staging_index i) const {
    return staging.as<compaction_agent_words>()[i];
  }
  [[nodiscard]] compaction_agent_words* device_words() const {
    return words.as<compaction_agent_words>();
  }
  /// Copies the device words into staging `i` on `s` and waits (bounded).
  compaction_counts read_out(staging_index i, stream_handle s, const char* what) const {
    copy_async(&staged(i), device_words(), sizeof(compaction_agent_words), s);
    rt.synchronize(s, copy_timeout_ns, what);
    return compaction_agent_ref::counts(staged(i));
  }

  gpu_runtime& rt;
  page_cache_ref cache;
  compaction_agent_options options;
  std::uint64_t stop_timeout_ns;
  device_memory words;    // one compaction_agent_words: the loop's stop word and counters
  pinned_memory staging;  // staging_index::count compaction_agent_words
  owned_stream loop;      // the agent's kernel, from start() until it ends
  owned_stream control;   // the stop copy and the looks, beside the running kernel
  bool running = false;
  bool wedged = false;  // the kernel would not stop: its memory must outlive us
  compaction_counts last;
};

gpu_compaction_agent::gpu_compaction_agent(gpu_runtime& rt, const page_cache& cache,
                                           const compaction_agent_options& options,
                                           std::uint64_t stop_timeout_ns) {
  if (!rt.gpu()) throw error("a GPU compaction agent needs a GPU: " + rt.message());
  const page_cache_ref ref = cache.ref();
  cudaPointerAttributes where{};
  BAM_CUDA_CHECK(cudaPointerGetAttributes(&where, ref.slot_at(0)));
  if (where.type != cudaMemoryTypeDevice) {
    throw input_error(
        "a GPU compaction agent needs a cache in GPU memory (a page_cache made on the GPU "
        "runtime); a cache in host memory takes bam::cache::mosaic::compactor");
  }
  const std::uint64_t timeout =
      stop_timeout_ns != 0 ? stop_timeout_ns : ref.victim_timeout_ns() + stop_slack_ns;
  impl_ = std::make_unique<impl>(rt, ref, options, timeout);
  impl& m = *impl_;
  // Throws once the runtime has started: allocation and a first launch would wait for (or
  // deadlock beside) the controller.
  rt.preload({kernel_function<agent_kernel>()});
  m.words = device_memory(sizeof(compaction_agent_words));
  m.staging = pinned_memory(sizeof(compaction_agent_words) * staging_index::count);  // zeroed
  m.staged(staging_index::stop_set).stop = 1;
  m.loop = owned_stream::create_non_blocking();
  m.control = owned_stream::create_non_blocking();
  // The kernel's first launch, in the context of the stream it will run on.
  warm_up_launch<agent_kernel>(m.loop.get());
  rt.synchronize(m.loop.get(), copy_timeout_ns, "the GPU compaction agent's warm-up launch");
}

gpu_compaction_agent::~gpu_compaction_agent() {
  if (!impl_) return;
  if (impl_->running) {
    try {
      (void)stop();
    } catch (const std::exception& e) {
      impl_->rt.log(std::string("GPU compaction agent: ") + e.what());
    }
  }
  if (impl_->wedged) {
    // The kernel still runs and reads these words: leak them rather than free them under it
    // (cudaFree would also wait for it forever).
    impl_->rt.log("GPU compaction agent: its kernel did not stop; leaking its memory");
    (void)impl_.release();  // intentionally leaked
  }
}

void gpu_compaction_agent::start() {
  impl& m = *impl_;
  if (m.running) return;
  if (m.wedged) throw error("GPU compaction agent: an earlier run never stopped");
  // Zeroed on the second stream, and waited for before the launch: stop()'s copy goes on
  // that stream too, so it can never be overtaken by (and lost under) this one.
  copy_async(m.device_words(), &m.staged(staging_index::zeros), sizeof(compaction_agent_words),
             m.control.get());
  m.rt.synchronize(m.control.get(), copy_timeout_ns, "zeroing the GPU compaction agent's words");
  launch(m.loop.get(), 1, 1,
         agent_kernel{compaction_agent_ref(m.cache, m.device_words(), m.options)});
  m.running = true;
}

compaction_counts gpu_compaction_agent::stop() {
  impl& m = *impl_;
  if (!m.running) return m.last;
  // A host-to-device copy from pinned memory on a stream of its own: it does not wait for the
  // running kernels (DESIGN 6), and the loop reads the word with a system-scope load.
  copy_async(&m.device_words()->stop, &m.staged(staging_index::stop_set).stop,
             sizeof(std::uint32_t), m.control.get());
  m.rt.synchronize(m.control.get(), copy_timeout_ns,
                   "setting the GPU compaction agent's stop word");
  try {
    m.rt.synchronize(m.loop.get(), m.stop_timeout_ns, "the GPU compaction agent");
  } catch (const cuda_error&) {
    m.running = false;  // the kernel failed: it no longer runs
    throw;
  } catch (const error&) {
    m.wedged = true;
    throw error("the GPU compaction agent did not stop within " +
                std::to_string(m.stop_timeout_ns / 1'000'000) +
                " ms of its stop request (one compaction step waits at most the cache's victim "
                "timeout, " +
                std::to_string(m.cache.victim_timeout_ns() / 1'000'000) +
                " ms): its kernel still runs and its memory stays allocated");
  }
  m.running = false;
  m.last = m.read_out(staging_index::read_back, m.loop.get(),
                      "copying the GPU compaction agent's counters out");
  return m.last;
}

bool gpu_compaction_agent::running() const { return impl_->running; }

compaction_counts gpu_compaction_agent::counts() const { return impl_->last; }

compaction_counts gpu_compaction_agent::counts_now() const {
  const impl& m = *impl_;
  if (!m.running) return m.last;
  return m.read_out(staging_index::look, m.control.get(),
                    "copying the GPU compaction agent's counters out while it runs");
}

stream_handle gpu_compaction_agent::stream() const { return impl_->loop.get(); }

}  // namespace bam::cache::mosaic
