#include <bam/storage/file_storage.hpp>

#include <algorithm>
#include <cstring>

#include <bam/error.hpp>
#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>

#include "runtime/memory.hpp"
#include "storage/file/file_server.hpp"
#include "storage/file/file_set.hpp"
#include "storage/queue_shape.hpp"
#include "storage/queue_watch.hpp"

namespace bam {

namespace {

void check(const file_storage_config& c, const gpu_runtime* rt) {
  auto bad = [](const std::string& what) { throw input_error("file storage: " + what); };
  if (c.paths.empty()) bad("no files given");
  if (c.io_threads == 0 || c.io_threads > 64)
    bad("I/O threads must be 1..64, got " + std::to_string(c.io_threads));
  if (c.io_depth == 0 || c.io_depth > 4096)
    bad("I/O depth must be 1..4096, got " + std::to_string(c.io_depth));
  storage_detail::check_queue_shape({.devices = static_cast<std::uint32_t>(c.paths.size()),
                                     .queues_per_device = c.queues_per_device,
                                     .queue_depth = c.queue_depth,
                                     .block_bytes = c.block_bytes,
                                     .stripe_bytes = c.stripe_bytes,
                                     .striped = c.paths.size() > 1,
                                     .max_transfer_bytes = c.max_transfer_bytes,
                                     .timeout_ns = c.timeout_ns,
                                     .wait_sleep_ns = c.wait_sleep_ns},
                                    "file storage");
  if (c.gpu) {
    if (rt == nullptr) bad("kernels on a GPU need a bam::gpu_runtime");
    if (!rt->gpu()) bad("kernels on a GPU need a GPU: " + rt->message());
    if (rt->started()) {
      throw error(
          "construct file storage before gpu_runtime::start(): allocation waits for "
          "running kernels");
    }
  }
}

}  // namespace

struct file_storage::impl final : controller_service {
  file_storage_config config;
  gpu_runtime* rt = nullptr;
  std::vector<std::string> notices;
  std::unique_ptr<file_io::file_set> files;
  memory_kind queue_memory = memory_kind::host;
  void* queue_block = nullptr;
  std::vector<queue_pair_ref> queues;  // host copy; ref() points at it on the CPU path
  device_memory device_queues;         // GPU: the array kernels dereference
  std::vector<std::unique_ptr<file_io::served_queue>> served;
  std::unique_ptr<file_io::device_counters[]> counters;
  std::vector<std::unique_ptr<file_io::staging_copier>> copiers;  // GPU: one per server
  std::vector<std::unique_ptr<file_io::file_server>> servers;
  std::string engine_name;
  device_set_ref view;
  bool attached = false;
  bool started = false;

  ~impl() override {
    if (attached) rt->detach(*this);
    servers.clear();
    copiers.clear();
    runtime::release(queue_block, queue_memory);
  }

  void start() override {
    for (auto& s : servers) s->start();
    started = true;
  }
  void stop() override {
    std::string failed;
    for (auto& s : servers) {
      s->stop();
      if (failed.empty()) failed = s->failure();
    }
    started = false;
    if (!failed.empty()) throw error("file storage: " + failed);
  }
  bool running() const override { return started; }
  std::vector<std::string> stuck_queues(std::uint64_t age_ns) const override {
    std::vector<std::string> out;
    const std::uint64_t now = now_ns();
    for (const auto& q : served) {
      std::string line = storage_detail::stuck_line("file '" + config.paths[q->device] + "'",
                                                    q->ref, q->fetched_at.get(), now, age_ns);
      if (!line.empty()) out.push_back(std::move(line));
    }
    return out;
  }
  std::string health() const override {
    for (const auto& s : servers) {
      std::string f = s->failure();
      if (!f.empty()) return f;
    }
    return {};
  }
  std::string name() const override {
    return "file " + std::to_string(config.paths.size()) + "x" +
           std::to_string(config.queues_per_device) + "x" + std::to_string(config.queue_depth);
  }
};

file_storage::file_storage(const file_storage_config& config, gpu_runtime* runtime)
    : impl_(std::make_unique<impl>()) {
  check(config, runtime);
  impl& m = *impl_;
  m.config = config;
  m.rt = runtime;
  m.files = std::make_unique<file_io::file_set>(
      config.paths,
      file_io::open_options{.writable = config.writable,
                            .direct = config.direct,
                            .block_bytes = config.block_bytes,
                            .stripe_bytes = config.stripe_bytes},
      m.notices);
  const auto devices = static_cast<std::uint32_t>(config.paths.size());

  // The engines first: automatic falls back to psync with a notice.
  std::vector<std::unique_ptr<file_io::io_engine>> engines;
  for (std::uint32_t t = 0; t < config.io_threads; ++t) {
    std::unique_ptr<file_io::io_engine> e;
    if (config.engine != io_engine_kind::psync) {
      std::string why;
      e = file_io::make_uring_engine(config.io_depth, why);
      if (!e && config.engine == io_engine_kind::io_uring) {
        throw input_error("--io-engine io_uring: " + why);
      }
      if (!e && t == 0) m.notices.push_back("io_uring unavailable (" + why + "): using psync");
    }
    if (!e) e = file_io::make_psync_engine(config.io_depth, std::min(config.io_depth, 16u));
    engines.push_back(std::move(e));
  }
  m.engine_name = engines.front()->name();

  // Queues: host memory on the CPU path; pinned on a GPU, where kernels and the I/O threads
  // both reach them.
  m.queue_memory = config.gpu ? memory_kind::pinned : memory_kind::host;
  const queue_layout layout = queue_layout::for_depth(config.queue_depth);
  const std::uint64_t count = std::uint64_t{devices} * config.queues_per_device;
  m.queue_block = runtime::allocate(layout.bytes * count, m.queue_memory);
  std::memset(m.queue_block, 0, layout.bytes * count);
  for (std::uint64_t i = 0; i < count; ++i) {
    m.queues.emplace_back(
        static_cast<unsigned char*>(m.queue_block) + i * layout.bytes, config.queue_depth,
        static_cast<std::uint16_t>(1 + i % config.queues_per_device), config.timeout_ns);
    m.queues.back().set_wait_sleep_ns(config.wait_sleep_ns);
    auto q = std::make_unique<file_io::served_queue>();
    q->ref = m.queues.back();
    q->device = static_cast<std::uint32_t>(i / config.queues_per_device);
    q->fetched_at = std::make_unique<std::atomic<std::uint64_t>[]>(config.queue_depth);
    m.served.push_back(std::move(q));
  }
  device_set_ref& v = m.view;
  v.queues = m.queues.data();
  if (config.gpu) {
    m.device_queues = device_memory(sizeof(queue_pair_ref) * count);
    owned_stream s = owned_stream::create_non_blocking();
    copy_async(m.device_queues.data(), m.queues.data(), sizeof(queue_pair_ref) * count, s.get());
    m.rt->synchronize(s.get(), 0, "copying queue views");
    v.queues = m.device_queues.as<queue_pair_ref>();
    // One copier per server thread: each batches and waits for its own copies on its own
    // stream (a shared one made every server wait for the others' copies, and raced on the
    // word read_u64 reads PRP list entries through).
    const std::uint64_t servers = std::min<std::uint64_t>(config.io_threads, count);
    for (std::uint64_t t = 0; t < servers; ++t)
      m.copiers.push_back(file_io::make_gpu_copier(*m.rt));
  }
  v.devices = devices;
  v.queues_per_device = config.queues_per_device;
  v.block_bytes = config.block_bytes;
  v.page_bytes = 4096;
  v.stripe_bytes = config.stripe_bytes;
  v.capacity_bytes = m.files->bytes();
  v.max_transfer_bytes = config.max_transfer_bytes;
  v.replicated = false;

  std::vector<emulated::namespace_view> namespaces;
  for (std::uint32_t d = 0; d < devices; ++d) {
    emulated::namespace_view ns;
    ns.image_bytes = m.files->bytes();
    ns.devices = devices;
    ns.index = d;
    ns.stripe_bytes = config.stripe_bytes;
    ns.block_bytes = config.block_bytes;
    ns.capacity_blocks = m.files->devices()[d].capacity_blocks;
    ns.max_transfer_bytes = config.max_transfer_bytes;
    ns.page_bytes = v.page_bytes;
    namespaces.push_back(ns);
  }
  m.counters = std::make_unique<file_io::device_counters[]>(devices);
  // Queue i goes to thread i % threads: every device's queues spread over every thread.
  const std::uint32_t threads =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(config.io_threads, count));
  for (std::uint32_t t = 0; t < threads; ++t) {
    std::vector<file_io::served_queue*> mine;
    for (std::uint64_t i = t; i < count; i += threads) mine.push_back(m.served[i].get());
    m.servers.push_back(std::make_unique<file_io::file_server>(
        *m.files, namespaces, std::move(mine), m.counters.get(), std::move(engines[t]),
        m.copiers.empty() ? nullptr : m.copiers[t].get(),
        file_io::server_options{.writable = config.writable,
                                .page_bytes = v.page_bytes,
                                .max_transfer_bytes = config.max_transfer_bytes}));
  }
  if (m.rt != nullptr && config.gpu) {
    m.rt->attach(m);
    m.attached = true;
  }
}

file_storage::~file_storage() = default;

device_set_ref file_storage::ref() const { return impl_->view; }
void file_storage::start() {
  if (!impl_->started) impl_->start();
}
void file_storage::stop() {
  if (impl_->started) impl_->stop();
}
bool file_storage::running() const { return impl_->started; }
std::uint64_t file_storage::bytes() const { return impl_->files->bytes(); }
const std::vector<std::string>& file_storage::notices() const { return impl_->notices; }
const file_storage_config& file_storage::config() const { return impl_->config; }
std::vector<std::string> file_storage::stuck_queues(std::uint64_t age_ns) const {
  return impl_->stuck_queues(age_ns);
}

std::string file_storage::describe() const {
  const impl& m = *impl_;
  const std::size_t n = m.config.paths.size();
  return std::to_string(n) + (n == 1 ? " file, " : " files, ") + m.engine_name + ", " +
         (m.files->all_direct() ? "O_DIRECT" : "buffered") + ", " +
         std::to_string(m.servers.size()) + " I/O thread(s) x " +
         std::to_string(m.config.io_depth) + (m.config.gpu ? ", staged through pinned memory" : "");
}

storage_stats file_storage::stats() const {
  const impl& m = *impl_;
  storage_stats s;
  for (std::size_t d = 0; d < m.config.paths.size(); ++d) {
    const file_io::device_counters& c = m.counters[d];
    auto r = [](const std::atomic<std::uint64_t>& v) { return v.load(std::memory_order_relaxed); };
    device_stats ds;
    ds.commands = r(c.commands);
    ds.reads = r(c.reads);
    ds.writes = r(c.writes);
    ds.flushes = r(c.flushes);
    ds.bytes_read = r(c.bytes_read);
    ds.bytes_written = r(c.bytes_written);
    ds.invalid = r(c.invalid);
    s.devices.push_back(ds);
  }
  // Drainers and tail winners store these words while submitters run.
  for (const queue_pair_ref& q : m.queues) s.queues.push_back(storage_detail::read_counters(q));
  return s;
}

file_io_stats file_storage::io_stats() const {
  const impl& m = *impl_;
  file_io_stats s;
  s.engine = m.engine_name;
  s.direct = m.files->all_direct();
  for (std::size_t d = 0; d < m.config.paths.size(); ++d) {
    const file_io::device_counters& c = m.counters[d];
    s.errors += c.errors.load(std::memory_order_relaxed);
    s.buffered += c.buffered.load(std::memory_order_relaxed);
    s.staged_bytes += c.staged_bytes.load(std::memory_order_relaxed);
  }
  for (const auto& server : m.servers) s.cpu_seconds += server->cpu_seconds();
  return s;
}

}  // namespace bam
