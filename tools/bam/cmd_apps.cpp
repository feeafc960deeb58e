// `bam bfs`, `bam cc`, `bam pagerank`: the graph apps over a .bcsr file whose neighbour ids are
// read through a bam::array (emulated SSD and page cache), with time, MTEPS, cache hit rate and
// I/O amplification. Without --graph a Kronecker graph is generated for the run (the one-command
// demonstration: a graph larger than the cache, traversed from storage).

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include <bam/array.hpp>
#include <bam/error.hpp>

#include "apps/cpu_apps.hpp"
#if defined(BAM_HAVE_CUDA)
#include "apps/gpu_apps.cuh"
#endif
#include "apps/graph_file.hpp"
#include "apps/outputs.hpp"
#include "apps/tiled_edges.hpp"
#include "bam/commands.hpp"
#include "bam/storage_options.hpp"
#include "common/json_writer.hpp"
#include "common/machine_info.hpp"
#include "common/output_paths.hpp"
#include "common/sizes.hpp"
#include "graph/generate.hpp"

namespace bam::tools {

namespace {

// Without --graph: scale 18 (262144 vertices, 8.4 M stored edges, 64 MiB of neighbour ids)
// generates in about 2 s and traverses in a few seconds on two cores, through a cache of 8 MiB.
constexpr unsigned default_scale = 18;
// The default cache holds this fraction of the neighbour section, and at least min_lines.
constexpr std::uint64_t default_cache_divisor = 8;
constexpr std::uint64_t min_default_lines = 64;

struct app_options {
  std::string graph;
  std::string keep_graph;
  std::string kind = "kron";
  unsigned scale = default_scale;
  std::uint64_t degree = 16;
  std::uint64_t seed = 1;
  std::string json;
  storage_options storage;
  // bfs
  std::optional<std::uint64_t> source;
  std::string depths_out;
  std::uint64_t scan_divisor = apps::bfs_options{}.scan_divisor;
  std::string bfs_algorithm = apps::to_string(apps::bfs_options{}.algorithm);
  std::string bfs_switch_rule = apps::to_string(apps::bfs_options{}.switch_rule);
  std::string early_claims = apps::bfs_options{}.early_claims ? "on" : "off";
  std::string vertex_batches = apps::bfs_options{}.vertex_batches ? "on" : "off";
  std::string hubs = "auto";
  std::uint32_t hub_count = 0;
  std::uint64_t piece_entries = apps::bfs_options{}.piece_entries;
  // cc
  std::string labels_out;
  std::string cc_algorithm = apps::to_string(apps::cc_options{}.algorithm);
  // pagerank
  std::string ranks_out;
  unsigned iterations = 20;
  double tolerance = 0;
  std::string pagerank_algorithm;  ///< pull or push; empty: pull where in-lists exist
  std::string in_edges;            ///< the transpose of --graph, whose lists pull reads
};

std::string fixed(double value, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string num(std::uint64_t v) { return std::to_string(v); }

// A file's hubs go to run_bfs whole: its kernels must take as many a vertex as the format holds.
static_assert(apps::bfs_hubs::most == graph::bcsr_max_hub_count);

// The graph file of a run: the user's, or one generated for it and removed afterwards.
class run_graph {
 public:
  explicit run_graph(const app_options& o) {
    if (!o.graph.empty()) {
      path_ = o.graph;
      origin_ = "given (--graph)";
      return;
    }
    graph::generate_options g;
    g.kind = graph::parse_graph_kind(o.kind);
    g.scale = o.scale;
    g.degree = o.degree;
    g.seed = o.seed;
    if (o.keep_graph.empty()) {
      static unsigned serial = 0;
      path_ = std::filesystem::temp_directory_path() /
              ("bam-" + o.kind + "-" + std::to_string(::getpid()) + "-" + std::to_string(serial++) +
               ".bcsr");
      remove_ = true;
    } else {
      path_ = o.keep_graph;
    }
    const graph::generate_result r = graph::generate_graph(path_, g);
    generate_seconds_ = r.total_seconds;
    origin_ =
        "generated: " + o.kind + " scale " + std::to_string(o.scale) + " degree " +
        std::to_string(o.degree) + " seed " + std::to_string(o.seed) + ", " +
        fixed(r.total_seconds, 2) + " s; " +
        (remove_ ? "a temporary file, removed at the end (--keep-graph PATH keeps it)" : "kept");
  }
  ~run_graph() {
    if (!remove_) return;
    std::error_code ec;
    std::filesystem::remove(path_, ec);  // best effort: never throw from a destructor
  }
  run_graph(const run_graph&) = delete;
  run_graph& operator=(const run_graph&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] const std::string& origin() const { return origin_; }
  [[nodiscard]] bool generated() const { return origin_ != "given (--graph)"; }
  [[nodiscard]] double generate_seconds() const { return generate_seconds_; }

 private:
  std::filesystem::path path_;
  std::string origin_;
  bool remove_ = false;
  double generate_seconds_ = 0;
};

std::uint64_t default_cache_bytes(const apps::graph_file& g, const storage_options& o) {
  const std::uint64_t part = g.neighbour_bytes() / default_cache_divisor;
  const std::uint64_t floor = min_default_lines * o.line_bytes;
  return part > floor ? part : floor;
}

// What a run reads through: the graph's offsets in memory, its image on the devices (or in
// memory, for the memory backends), the cache, and where kernels run.
// With --backend file nothing but the offsets is read up front: the neighbour ids stay in the
// .bcsr file, read through the cache on demand.
struct session {
  session(const app_options& o, const run_graph& file)
      : graph(apps::graph_file::open(file.path())),
        path(o.storage.on_files()
                 ? data_path::open_files(o.storage, {file.path().string()}, false,
                                         default_cache_bytes(graph, o.storage))
                 : data_path::open(o.storage, load_image(o.storage, file.path().string()),
                                   default_cache_bytes(graph, o.storage))) {
    set = path.devices();
  }

  apps::graph_file graph;
  data_path path;
  std::optional<device_set_ref> set;
};

#if defined(BAM_HAVE_CUDA)
// GPU memory the executor reserves for working arrays: the largest app needs about 36 bytes
// per vertex (BFS: offsets, depths, three frontier lists; PageRank: offsets and three
// doubles), BFS's line rule a count and two bits per `unit_bytes` of the neighbour section, and
// its table of long lists' pieces (sized for 4-byte ids, the most entries).
std::uint64_t work_bytes(const apps::graph_file& g, std::uint64_t unit_bytes) {
  return 48 * (g.vertex_count() + 1) +
         apps::bfs_unit_table_bytes(g.neighbour_bytes() / unit_bytes + 2) +
         apps::bfs_pieces::capacity_for(g.neighbour_bytes() / 4,
                                        apps::bfs_pieces::default_entries) *
             sizeof(apps::bfs_piece) +
         (std::uint64_t{1} << 20);
}
#endif

// The tiled backend's buffer: --cache-bytes, or the default cache size.
std::uint64_t tile_buffer_bytes(const app_options& o, const apps::graph_file& g) {
  return o.storage.cache_bytes ? o.storage.cache_bytes : default_cache_bytes(g, o.storage);
}

// What the neighbour source reports after a run: cache statistics (through the cache) or the
// tile copies (tiled); neither for the memory backends.
struct edge_report {
  std::optional<cache_stats> stats;
  std::optional<apps::tile_traffic> tiles;
};

// Runs `body(executor)` where the path runs kernels (the CPU pool, or the GPU in a CUDA build)
// and returns what it returns. `View` is the neighbour view the kernels hold; the GPU executor
// reserves its working memory plus `extra_bytes` before the controllers start.
template <class View, class Body>
auto on_executor(session& s, [[maybe_unused]] std::uint64_t extra_bytes, Body&& body) {
  if (!s.path.gpu()) {
    s.path.start();
    apps::cpu_executor exec(*s.path.stream);
    return body(exec);
  }
#if defined(BAM_HAVE_CUDA)
  gpu_runtime& rt = *s.path.runtime;
  // The units BFS's line rule counts: cache lines, or 128-byte segments over memory. The
  // executor reserves its memory before the controllers start.
  const std::uint64_t unit_bytes =
      s.path.cache ? s.path.cache->config().line_bytes : apps::aligned_read_bytes;
  apps::gpu_executor exec(rt, work_bytes(s.graph, unit_bytes) + extra_bytes);
  exec.warm_up<View>();  // every kernel launched once before the controllers start
  // Stop the controllers before the executor frees its memory (a free waits for every
  // running kernel, and the controller kernel never ends), even when the app throws.
  struct stop_first {
    gpu_runtime& rt;
    ~stop_first() {
      try {
        rt.stop();
      } catch (...) {
      }
    }
  } stop{rt};
  s.path.start();
  return body(exec);
#else
  throw error("this build has no CUDA: run with --target cpu");
#endif
}

// Runs `app(executor, edges)` over the neighbour source of the backend: the array (through the
// cache, or over memory) or tiled partitions. Returns its result and the source's report.
// `app_bytes`: executor memory the app needs beyond work_bytes (BFS's hubs).
template <class App>
auto run_on_edges(const app_options& o, session& s, App&& app, std::uint64_t app_bytes = 0) {
  if (o.storage.backend == "tiled") {
    const std::uint64_t bytes = tile_buffer_bytes(o, s.graph);
    auto tiled = [&]<class Id>(Id*) {
      const auto* ids =
          reinterpret_cast<const Id*>(s.path.image->data() + s.graph.header.neighbors.offset);
      // Both halves come from the executor's arena (with room for their alignment).
      return on_executor<apps::window_ref<Id>>(s, bytes + 1024 + app_bytes, [&](auto& exec) {
        using exec_type = std::decay_t<decltype(exec)>;
        const apps::tiled_edges<Id, exec_type> edges(exec, s.graph.offset_span(), ids,
                                                     s.graph.edge_count(), bytes);
        auto result = app(exec, edges);
        return std::pair{std::move(result), edge_report{std::nullopt, edges.traffic()}};
      });
    };
    if (s.graph.id_bytes() == 4) return tiled(static_cast<std::uint32_t*>(nullptr));
    return tiled(static_cast<std::uint64_t*>(nullptr));
  }
  return apps::with_edges(
      s.graph, s.path.cache.get(), s.set ? &*s.set : nullptr, s.path.memory_data(),
      s.path.device_image.data() == nullptr, [&](const auto& edges) {
        using view = typename std::decay_t<decltype(edges)>::view_type;
        return on_executor<view>(s, app_bytes, [&](auto& exec) {
          auto result = app(exec, edges);
          return std::pair{std::move(result), edge_report{edges.stats(), std::nullopt}};
        });
      });
}

// Bytes of the aligned 128-byte segments a warp's reads of the lists of the vertices
// `read(u)` selects touch (apps/kernel_support.hpp: from the segment holding a list's first
// entry to the one holding its last): what the memory backends move, modelled.
template <class Read>
std::uint64_t segment_bytes(std::span<const std::uint64_t> offsets, std::uint32_t id_bytes,
                            Read&& read) {
  constexpr std::uint64_t segment = apps::aligned_read_bytes;
  std::uint64_t total = 0;
  for (std::uint64_t u = 0; u + 1 < offsets.size(); ++u) {
    if (offsets[u] == offsets[u + 1] || !read(u)) continue;
    const std::uint64_t first = offsets[u] * id_bytes / segment;
    const std::uint64_t end = (offsets[u + 1] * id_bytes + segment - 1) / segment;
    total += (end - first) * segment;
  }
  return total;
}

// What every app reports, besides its own lines.
struct figures {
  const char* app;
  std::string what;  // one phrase: what the app did
  double seconds = 0;
  std::uint64_t edges_traversed = 0;
  // Adjacency entries the app read (BFS bottom-up levels and Afforest read fewer than they
  // traverse); what the bytes moved are weighed against.
  std::uint64_t edges_read = 0;
  edge_report io;
  // The memory backends: bytes of the 128-byte segments of the lists the app read (modelled).
  std::uint64_t segment_bytes = 0;
  std::vector<std::pair<std::string, std::string>> lines;  // app-specific, printed first
  std::function<void(json_writer&)> json;                  // app-specific fields
};

std::string describe_graph(const apps::graph_file& g) {
  return num(g.vertex_count()) + " vertices, " + num(g.edge_count()) + " edges, " +
         std::to_string(g.id_bytes()) + "-byte ids, " + (g.symmetric() ? "symmetric" : "directed") +
         ", neighbours " + format_bytes(static_cast<double>(g.neighbour_bytes()));
}

std::string describe_model(const storage_options& st) {
  const device_model m = st.model();
  return "model " + st.model_label() + ": " + fixed(m.latency_us, 1) + " us" +
         (m.caps ? ", caps " + fixed(m.iops / 1e6, 2) + " M IOPS and " +
                       format_bytes(m.bandwidth_bytes_per_s) + "/s per device"
                 : ", no caps");
}

std::string describe_storage(const app_options& o, const session& s) {
  const storage_options& st = o.storage;
  if (st.backend == "tiled") {
    return "tiled (the host copies partitions of the neighbour ids into the kernels' buffer, "
           "one launch per partition on every pass; no cache, no devices); " +
           s.path.where();
  }
  if (!s.set) return st.backend + " (ids read in place, no cache); " + s.path.where();
  if (s.path.files) return s.path.describe_devices() + "; " + s.path.where();
  return s.path.describe_devices() + ", " + describe_model(st) + "; " + s.path.where();
}

std::string describe_cache(const app_options& o, const session& s) {
  if (o.storage.backend == "tiled") {
    const std::uint64_t bytes = tile_buffer_bytes(o, s.graph);
    return "none; tile buffer " + format_bytes(static_cast<double>(bytes)) + " (two halves)" +
           (o.storage.cache_bytes ? "" : " (default: 1/8 of the neighbour section)");
  }
  if (!s.path.cache) return "none";
  const page_cache& c = *s.path.cache;
  const double bytes = static_cast<double>(c.lines()) * c.config().line_bytes;
  const double share =
      s.graph.neighbour_bytes() ? bytes / static_cast<double>(s.graph.neighbour_bytes()) : 0.0;
  return format_bytes(bytes) + " (" + num(c.lines()) + " lines of " +
         format_bytes(c.config().line_bytes) + ", " + to_string(c.config().mode) +
         ") = " + fixed(100 * share, 1) + "% of the neighbour section" +
         (o.storage.cache_bytes ? ""
                                : " (default: 1/8, at least 64 lines; on the CPU at least two "
                                  "per worker thread)");
}

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

// How much of the emulated devices' modelled peak a run used: its I/O commands and bytes per
// second against devices x the model's rates (whether or not the caps applied).
struct device_use {
  std::uint64_t commands = 0;
  std::uint64_t bytes = 0;
  double commands_per_s = 0;
  double bytes_per_s = 0;
  double peak_iops = 0;            // devices x model IOPS
  double peak_bytes_per_s = 0;     // devices x model bandwidth
  double peak_commands_per_s = 0;  // devices x the rate at this run's mean command size
  [[nodiscard]] double fraction_of_iops() const { return ratio(commands_per_s, peak_iops); }
  [[nodiscard]] double fraction_of_bandwidth() const {
    return ratio(bytes_per_s, peak_bytes_per_s);
  }
  // The devices' modelled busy time over the run's time: the binding one of the two rates.
  [[nodiscard]] double fraction_of_peak() const {
    return ratio(commands_per_s, peak_commands_per_s);
  }
};

device_use use_of_devices(const storage_options& st, const cache_stats& c, double seconds) {
  const device_model m = st.model();
  device_use u;
  u.commands = c.io_commands();
  u.bytes = c.bytes_moved;
  u.commands_per_s = ratio(static_cast<double>(u.commands), seconds);
  u.bytes_per_s = ratio(static_cast<double>(u.bytes), seconds);
  const double devices = st.devices;
  u.peak_iops = devices * m.iops;
  u.peak_bytes_per_s = devices * m.bandwidth_bytes_per_s;
  const std::uint64_t mean_bytes = u.commands ? u.bytes / u.commands : 0;
  u.peak_commands_per_s = devices * m.peak_commands_per_s(mean_bytes);
  return u;
}

// Bytes the run moved to read the neighbours, and what counted them.
struct moved_bytes {
  std::uint64_t bytes = 0;
  const char* source = "none";
};

moved_bytes bytes_moved(const figures& f) {
  if (f.io.stats) return {f.io.stats->bytes_moved, "cache I/O commands"};
  if (f.io.tiles) return {f.io.tiles->bytes_copied, "tile copies"};
  if (f.segment_bytes) return {f.segment_bytes, "modelled: 128 B segments of the lists read"};
  return {};
}

void report(const app_options& o, const run_graph& file, const session& s, const figures& f,
            double total_seconds, bool results_to_stdout) {
  // The summary goes where the per-vertex results do not.
  std::ostream& out = results_to_stdout ? std::cerr : std::cout;
  const double mteps =
      f.seconds > 0 ? static_cast<double>(f.edges_traversed) / f.seconds / 1e6 : 0.0;
  const std::uint64_t needed = f.edges_read * s.graph.id_bytes();
  const moved_bytes moved = bytes_moved(f);
  const double amplification = ratio(static_cast<double>(moved.bytes), static_cast<double>(needed));
  std::optional<device_use> use;
  if (f.io.stats && s.path.storage) use = use_of_devices(o.storage, *f.io.stats, f.seconds);
  std::optional<file_io_stats> file_io;
  if (s.path.files) file_io = s.path.files->io_stats();
  std::vector<std::pair<std::string, std::string>> rows;
  auto row = [&](std::string key, std::string value) {
    rows.emplace_back(std::move(key), std::move(value));
  };
  row("graph", file.path().string());
  row("graph source", file.origin());
  row("graph shape", describe_graph(s.graph));
  row("storage", describe_storage(o, s));
  row("cache", describe_cache(o, s));
  for (const auto& [key, value] : f.lines) row(key, value);
  row("edges traversed", num(f.edges_traversed));
  row("edges read", num(f.edges_read) + " of the graph's " + num(s.graph.edge_count()) + " (" +
                        fixed(100 * ratio(static_cast<double>(f.edges_read),
                                          static_cast<double>(s.graph.edge_count())),
                              1) +
                        "%: adjacency entries read from the neighbour source)");
  row("time", fixed(f.seconds, 3) + " s (the app's launches" + (f.io.tiles ? " and copies" : "") +
                  "; " + fixed(total_seconds, 2) + " s in all with generating and loading)");
  row("MTEPS", fixed(mteps, 2) + " (edges traversed / time / 10^6)");
  if (f.io.stats) {
    const cache_stats& c = *f.io.stats;
    if (c.probes() == 0) {
      row("cache hit rate",
          "none: every access read through (" + num(c.read_through) + " uncached reads)");
    } else {
      row("cache hit rate", fixed(100 * c.hit_rate(), 2) + "% (" + num(c.hits) + " hits / " +
                                num(c.probes()) + " probes; " + num(c.coalesced + c.reused) +
                                " more accesses coalesced or reused)");
    }
    row("I/O", num(c.io_commands()) + " reads, " +
                   format_bytes(static_cast<double>(c.bytes_moved)) + " moved for " +
                   format_bytes(static_cast<double>(needed)) + " needed");
  }
  if (f.io.tiles) {
    const apps::tile_traffic& t = *f.io.tiles;
    row("tiles", num(t.partitions) + " partitions, " + num(t.copies) + " copies, " +
                     format_bytes(static_cast<double>(t.bytes_copied)) + " copied for " +
                     format_bytes(static_cast<double>(needed)) + " needed");
  }
  if (moved.bytes) {
    row("I/O amplification",
        fixed(amplification, 2) + "x (bytes moved / bytes needed; " + moved.source + ")");
  }
  if (use && !o.storage.model().caps) {
    // Without caps the model enforces no peak: a share of one would mean nothing (and can pass
    // 100%), so only the rates are shown.
    row("device use", fixed(use->commands_per_s / 1e6, 3) + " M commands/s, " +
                          format_bytes(use->bytes_per_s) +
                          "/s (the model has no caps: latency only, no peak to compare with)");
  } else if (use) {
    row("device use", fixed(100 * use->fraction_of_peak(), 1) + "% of the modelled peak (" +
                          fixed(use->commands_per_s / 1e6, 3) +
                          " M commands/s = " + fixed(100 * use->fraction_of_iops(), 1) + "% of " +
                          fixed(use->peak_iops / 1e6, 2) + " M IOPS; " +
                          format_bytes(use->bytes_per_s) +
                          "/s = " + fixed(100 * use->fraction_of_bandwidth(), 1) + "% of " +
                          format_bytes(use->peak_bytes_per_s) + "/s)");
  }
  if (file_io) {
    const device_stats d = s.path.files->stats().total();
    row("file I/O", num(d.reads) + " reads, " + num(d.writes) + " writes by " + file_io->engine +
                        (file_io->direct ? " (O_DIRECT)" : " (page cache)") + ", " +
                        num(file_io->errors) + " errors; I/O threads used " +
                        fixed(file_io->cpu_seconds, 2) + " s of CPU");
  }
  std::size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.first.size());
  std::string source;
  if (s.path.files) {
    source = "from '" + file.path().string() + "' on demand through a " +
             format_bytes(static_cast<double>(s.path.cache->lines()) *
                          s.path.cache->config().line_bytes) +
             " page cache";
  } else if (s.path.cache) {
    source = "from " + std::to_string(o.storage.devices) + " emulated NVMe device(s) through a " +
             format_bytes(static_cast<double>(s.path.cache->lines()) *
                          s.path.cache->config().line_bytes) +
             " page cache";
  } else if (f.io.tiles) {
    source = "in partitions copied from host memory into a " +
             format_bytes(static_cast<double>(f.io.tiles->buffer_bytes)) + " buffer (tiled)";
  } else {
    source = "in place from " + o.storage.backend + " (no cache)";
  }
  out << "bam " << f.app << ": " << f.what << ", neighbour ids read " << source
      << "; kernels on the " << s.path.where() << (s.path.gpu() ? "\n" : " (the CPU path)\n");
  for (const auto& [key, value] : rows) {
    out << "  " << key << std::string(width - key.size() + 2, ' ') << value << '\n';
  }
  out.flush();

  if (o.json.empty()) return;
  json_writer j;
  j.begin_object()
      .field("command", std::string(f.app))
      .field("app", std::string(f.app))
      .field("backend", o.storage.backend)
      .key("machine");
  write_json(j, read_machine_info());
  j.key("graph")
      .begin_object()
      .field("path", file.path().string())
      .field("generated", file.generated())
      .field("generate_seconds", file.generate_seconds())
      .field("vertices", s.graph.vertex_count())
      .field("edges", s.graph.edge_count())
      .field("id_bytes", s.graph.id_bytes())
      .field("symmetric", s.graph.symmetric())
      .field("neighbour_bytes", s.graph.neighbour_bytes())
      .end_object();
  const storage_options& st = o.storage;
  const device_model model = st.model();
  j.key("storage")
      .begin_object()
      .field("backend", st.backend)
      .field("devices", s.set ? s.set->devices : 0u)
      .field("queues", s.set ? s.set->queues_per_device : 0u)
      .field("depth", s.path.storage ? s.path.storage->config().queue_depth
                      : s.path.files ? s.path.files->config().queue_depth
                                     : 0u)
      .field("controller_sms",
             s.path.storage && s.path.gpu() ? s.path.runtime->controller_sms() : 0u)
      .field("wait_sleep_ns", st.wait_sleep_ns)
      .field("controller_sleep_ns", st.controller_sleep_ns)
      .field("model", st.model_label())
      .field("media", st.media)
      .field("latency_us", model.latency_us)
      .field("caps", model.caps)
      .field("model_iops", model.iops)
      .field("model_bandwidth_bytes_per_s", model.bandwidth_bytes_per_s)
      .field("where", s.path.where());
  if (file_io) {
    j.field("io_engine", file_io->engine)
        .field("direct", file_io->direct)
        .field("io_errors", file_io->errors)
        .field("io_cpu_seconds", file_io->cpu_seconds);
  }
  if (s.path.cache) {
    j.field("cache_bytes", std::uint64_t{s.path.cache->lines()} * s.path.cache->config().line_bytes)
        .field("line_bytes", s.path.cache->config().line_bytes)
        .field("cache_mode", std::string(to_string(s.path.cache->config().mode)))
        .field("cache_fraction",
               ratio(static_cast<double>(s.path.cache->lines()) * s.path.cache->config().line_bytes,
                     static_cast<double>(s.graph.neighbour_bytes())));
  }
  if (f.io.tiles) {
    j.field("tile_buffer_bytes", f.io.tiles->buffer_bytes)
        .field("cache_fraction", ratio(static_cast<double>(f.io.tiles->buffer_bytes),
                                       static_cast<double>(s.graph.neighbour_bytes())));
  }
  j.end_object();
  j.key("result").begin_object();
  f.json(j);
  j.end_object();
  j.field("seconds", f.seconds)
      .field("total_seconds", total_seconds)
      .field("edges_traversed", f.edges_traversed)
      .field("edges_read", f.edges_read)
      .field("graph_edges", s.graph.edge_count())
      .field("mteps", mteps)
      .field("bytes_needed", needed)
      .field("bytes_moved", moved.bytes)
      .field("bytes_moved_source", std::string(moved.source));
  j.key("amplification");
  if (moved.bytes) {
    j.value(amplification);
  } else {
    j.null();
  }
  j.key("hit_rate");
  if (f.io.stats && f.io.stats->probes() > 0) {
    j.value(f.io.stats->hit_rate());
  } else {
    j.null();
  }
  if (f.io.stats) {
    const cache_stats& c = *f.io.stats;
    j.key("cache")
        .begin_object()
        .field("accesses", c.accesses)
        .field("hits", c.hits)
        .field("misses", c.misses)
        .field("miss_waits", c.miss_waits)
        .field("coalesced", c.coalesced)
        .field("reused", c.reused)
        .field("loads", c.loads)
        .field("read_through", c.read_through)
        .field("evictions", c.evictions)
        .field("io_commands", c.io_commands())
        .field("bytes_requested", c.bytes_requested)
        .field("bytes_moved", c.bytes_moved)
        .field("hit_rate", c.hit_rate())
        .end_object();
  }
  if (f.io.tiles) {
    const apps::tile_traffic& t = *f.io.tiles;
    j.key("tiles")
        .begin_object()
        .field("buffer_bytes", t.buffer_bytes)
        .field("partitions", t.partitions)
        .field("copies", t.copies)
        .field("bytes_copied", t.bytes_copied)
        .field("copy_bytes_per_s", ratio(static_cast<double>(t.bytes_copied), f.seconds))
        .end_object();
  }
  if (use) {
    j.key("device_use")
        .begin_object()
        .field("commands", use->commands)
        .field("bytes", use->bytes)
        .field("commands_per_s", use->commands_per_s)
        .field("bytes_per_s", use->bytes_per_s)
        .field("peak_iops", use->peak_iops)
        .field("peak_bytes_per_s", use->peak_bytes_per_s)
        .field("peak_commands_per_s", use->peak_commands_per_s)
        .field("fraction_of_iops", use->fraction_of_iops())
        .field("fraction_of_bandwidth", use->fraction_of_bandwidth())
        .field("fraction_of_peak", use->fraction_of_peak())
        .field("caps_applied", model.caps)
        .end_object();
  }
  j.end_object();
  j.save(o.json);
}

std::string list_sizes(const std::vector<std::uint64_t>& sizes) {
  constexpr std::size_t shown = 12;
  std::string text;
  for (std::size_t i = 0; i < sizes.size() && i < shown; ++i) {
    if (i) text += ", ";
    text += num(sizes[i]);
  }
  if (sizes.size() > shown) text += ", ...";
  return text;
}

// What the parser could not check, before any graph is generated or read: the storage
// options together, and no output on top of the graph or of another output.
void check_before_work(const app_options& o, std::string_view result_option,
                       const std::string& result_path) {
  o.storage.validate();
  const named_path inputs[] = {{"--graph", o.graph}, {"--in-edges", o.in_edges}};
  const named_path outputs[] = {
      {"--keep-graph", o.keep_graph}, {result_option, result_path}, {"--json", o.json}};
  refuse_overlaps(inputs, outputs);
}

void run_bfs_command(const app_options& o) {
  check_before_work(o, "--depths-out", o.depths_out);
  const auto start = std::chrono::steady_clock::now();
  run_graph file(o);
  auto s = std::make_unique<session>(o, file);
  const std::uint64_t source =
      o.source ? *o.source : apps::max_degree_vertex(s->graph.offset_span());
  if (o.hubs == "on" && !s->graph.header.has_hubs()) {
    throw input_error("bfs: --hubs on, but " + s->graph.path.string() +
                      " has no hubs section (bam graph gen and convert write one unless "
                      "--no-hubs; make the file again, or use --hubs auto)");
  }
  const std::uint32_t hubs_held = s->graph.header.hubs_per_vertex();
  if (o.hub_count > hubs_held && o.hubs != "off") {
    throw input_error("bfs: --hub-count " + num(o.hub_count) + ", but " + s->graph.path.string() +
                      " holds " + num(hubs_held) +
                      " hubs per vertex (bam graph gen and convert --hubs K write K)");
  }
  // Each vertex's highest-degree neighbours, kept in memory beside the offsets; read only where
  // bottom-up steps can run (run_bfs leaves hubs unread on a directed graph and top-down).
  const bool hubs_used = o.hubs != "off" && o.bfs_algorithm != "top-down" && s->graph.symmetric();
  graph::hub_table hubs;
  if (hubs_used) {
    hubs = graph::load_hubs(s->graph.path);
    if (o.hub_count != 0) hubs = hubs.first(o.hub_count);
  }
  auto [r, io] = run_on_edges(
      o, *s,
      [&](auto& exec, const auto& edges) {
        return apps::run_bfs(
            exec, s->graph.offset_span(), edges,
            {.source = source,
             .scan_divisor = o.scan_divisor,
             .algorithm = o.bfs_algorithm == "top-down" ? apps::bfs_algorithm::top_down
                                                        : apps::bfs_algorithm::direction_optimizing,
             .symmetric = s->graph.symmetric(),
             .switch_rule = o.bfs_switch_rule == "lines"   ? apps::bfs_switch_rule::lines
                            : o.bfs_switch_rule == "edges" ? apps::bfs_switch_rule::edges
                                                           : apps::bfs_switch_rule::automatic,
             .early_claims = o.early_claims == "on",
             .vertex_batches = o.vertex_batches == "on",
             .piece_entries = o.piece_entries,
             .hubs = hubs.ids});
      },
      // The hubs, copied to the executor beside the offsets (with room for alignment).
      hubs.ids.size() * sizeof(std::uint64_t) + 1024);
  figures f{"bfs",
            "breadth-first search from vertex " + num(source),
            r.seconds,
            r.edges_traversed,
            r.edges_read,
            io,
            0,
            {},
            {}};
  // The model counts whole lists: a top-down traversal's reads only.
  if ((o.storage.backend == "host-memory" || o.storage.backend == "device-memory") &&
      r.algorithm == apps::bfs_algorithm::top_down) {
    f.segment_bytes =
        segment_bytes(s->graph.offset_span(), s->graph.id_bytes(),
                      [&](std::uint64_t u) { return r.depths[u] != apps::unreached; });
  }
  const std::uint64_t degree = s->graph.offsets[source + 1] - s->graph.offsets[source];
  std::uint64_t early_claimed = 0;
  for (const apps::bfs_level& l : r.levels) early_claimed += l.early;
  f.lines.emplace_back("source", "vertex " + num(source) + " (degree " + num(degree) +
                                     (o.source ? ", --source)" : ", the highest; --source V)"));
  f.lines.emplace_back(
      "algorithm",
      std::string(apps::to_string(r.algorithm)) +
          (r.fell_back ? " (--algorithm do asked for, but a directed graph has no in-lists to "
                         "search bottom-up: top-down)"
           : r.algorithm == apps::bfs_algorithm::direction_optimizing
               ? " (direction-optimizing: " + num(r.bottom_up_levels) +
                     " levels bottom-up by --switch-rule " + apps::to_string(r.switch_rule) + ", " +
                     num(early_claimed) + " vertices claimed early" +
                     (r.early_claims ? "" : " (--early-claims off)") +
                     (r.hubs ? ", " + num(r.hub_found) + " found by their " + num(hubs.per_vertex) +
                                   " hubs alone"
                             : std::string(", no hubs")) +
                     "; --algorithm top-down for the other)"
               : " (--algorithm do for direction-optimizing)"));
  f.lines.emplace_back("levels", num(r.level_vertices.size()) + " (vertices per level: " +
                                     list_sizes(r.level_vertices) + "; " + num(r.scanned_levels) +
                                     " top-down by a scan in vertex order)");
  if (io.stats) {
    // Which way each level went and the lines it loaded: where the I/O of a traversal goes.
    std::string steps;
    for (const apps::bfs_level& l : r.levels) {
      if (!steps.empty()) steps += ", ";
      steps += (l.direction == apps::bfs_direction::bottom_up ? "B " : "T ") + num(l.loads);
    }
    f.lines.emplace_back("lines per level", steps + " (T: top-down, B: bottom-up)");
  }
  f.lines.emplace_back("reached",
                       num(r.reached) + " of " + num(s->graph.vertex_count()) + " vertices");
  f.json = [&](json_writer& j) {
    j.field("source", source)
        .field("algorithm", std::string(apps::to_string(r.algorithm)))
        .field("algorithm_fell_back", r.fell_back)
        .field("switch_rule", std::string(apps::to_string(r.switch_rule)))
        .field("early_claims", r.early_claims)
        .field("vertex_batches", r.vertex_batches)
        .field("hubs", r.hubs)
        .field("hub_found", r.hub_found)
        .field("hubs_per_vertex", r.hubs ? hubs.per_vertex : 0)
        .field("hub_bytes", r.hubs ? hubs.ids.size() * s->graph.header.id_bytes : 0)
        .field("split_lists", o.piece_entries)
        .field("bottom_up_levels", r.bottom_up_levels)
        .field("reached", r.reached)
        .field("scan_divisor", o.scan_divisor)
        .field("scanned_levels", r.scanned_levels)
        .key("level_vertices")
        .begin_array();
    for (const std::uint64_t v : r.level_vertices) j.value(v);
    j.end_array();
    j.key("levels").begin_array();
    for (const apps::bfs_level& l : r.levels) {
      j.begin_object()
          .field("direction", std::string(apps::to_string(l.direction)))
          .field("frontier", l.frontier)
          .field("found", l.found)
          .field("early", l.early)
          .field("hub_found", l.hub_found)
          .field("edges_read", l.edges_read)
          .field("top_down_units", l.top_down_units)
          .field("bottom_up_units", l.bottom_up_units)
          .field("loads", l.loads)
          .field("bytes_moved", l.bytes_moved)
          .field("seconds", l.seconds)
          .end_object();
    }
    j.end_array();
  };
  report(o, file, *s, f, apps::seconds_since(start), o.depths_out == "-");
  if (!o.depths_out.empty()) apps::write_depths(o.depths_out, r.depths);
}

void run_cc_command(const app_options& o) {
  check_before_work(o, "--labels-out", o.labels_out);
  const auto start = std::chrono::steady_clock::now();
  run_graph file(o);
  auto s = std::make_unique<session>(o, file);
  auto [r, io] = run_on_edges(o, *s, [&](auto& exec, const auto& edges) {
    return apps::run_cc(
        exec, s->graph.offset_span(), edges,
        {.symmetric = s->graph.symmetric(),
         .algorithm = o.cc_algorithm == "union-find" ? apps::cc_algorithm::union_find
                                                     : apps::cc_algorithm::afforest});
  });
  figures f{"cc", "connected components", r.seconds, r.edges_traversed, r.edges_read, io, 0, {},
            {}};
  // The model counts whole lists: union-find's reads only.
  if ((o.storage.backend == "host-memory" || o.storage.backend == "device-memory") &&
      r.algorithm == apps::cc_algorithm::union_find) {
    f.segment_bytes = segment_bytes(s->graph.offset_span(), s->graph.id_bytes(),
                                    [](std::uint64_t) { return true; });
  }
  f.lines.emplace_back(
      "algorithm",
      std::string(apps::to_string(r.algorithm)) +
          (r.fell_back ? " (--algorithm afforest asked for, but a directed graph's lists cannot "
                         "be skipped: union-find over every edge)"
           : r.algorithm == apps::cc_algorithm::afforest
               ? " (2 sampled neighbours per vertex within the line of its first" +
                     std::string(r.sampled_by_units ? ", a warp per line" : "") +
                     ", then the lists outside the sampled giant component; --algorithm "
                     "union-find for one pass over every edge)"
               : " (one pass over every edge; --algorithm afforest reads less)"));
  f.lines.emplace_back("components", num(r.components) + " (largest: " + num(r.largest) +
                                         " vertices; edges taken as undirected)");
  f.json = [&](json_writer& j) {
    j.field("algorithm", std::string(apps::to_string(r.algorithm)))
        .field("algorithm_fell_back", r.fell_back)
        .field("components", r.components)
        .field("largest_component", r.largest);
    if (r.algorithm == apps::cc_algorithm::afforest) {
      j.field("sampled_by_lines", r.sampled_by_units)
          .field("sample_unit_entries", r.sample_units.per_unit);
    }
  };
  report(o, file, *s, f, apps::seconds_since(start), o.labels_out == "-");
  if (!o.labels_out.empty()) apps::write_labels(o.labels_out, r.labels);
}

// PageRank's algorithm: pull reads in-lists, which a symmetric graph's lists are and a directed
// graph's transpose (--in-edges) holds; push reads out-lists, so any graph works.
apps::pagerank_algorithm choose_pagerank(const app_options& o, bool symmetric) {
  const bool in_lists = symmetric || !o.in_edges.empty();
  if (o.pagerank_algorithm == "push") {
    if (!o.in_edges.empty()) throw input_error("pagerank: --in-edges is for --algorithm pull");
    return apps::pagerank_algorithm::push;
  }
  if (o.pagerank_algorithm == "pull" && !in_lists) {
    throw input_error("pagerank --algorithm pull: '" + o.graph +
                      "' is directed, and pull reads in-lists: give its transpose with "
                      "--in-edges (bam graph convert --transpose), or use --algorithm push");
  }
  return in_lists ? apps::pagerank_algorithm::pull : apps::pagerank_algorithm::push;
}

void run_pagerank_command(const app_options& o) {
  check_before_work(o, "--ranks-out", o.ranks_out);
  if (!o.in_edges.empty() && o.graph.empty()) {
    throw input_error("pagerank: --in-edges needs --graph (the graph it is the transpose of)");
  }
  const auto start = std::chrono::steady_clock::now();
  // With --in-edges the lists read are the transpose's; the graph itself gives the out-degrees.
  std::optional<apps::graph_file> forward;
  app_options read = o;
  if (!o.in_edges.empty()) {
    forward = apps::graph_file::open(o.graph);
    read.graph = o.in_edges;
  }
  run_graph file(read);
  auto s = std::make_unique<session>(read, file);
  if (forward && (forward->vertex_count() != s->graph.vertex_count() ||
                  forward->edge_count() != s->graph.edge_count())) {
    throw input_error("pagerank: --in-edges '" + o.in_edges + "' has " +
                      num(s->graph.vertex_count()) + " vertices and " + num(s->graph.edge_count()) +
                      " edges, '" + o.graph + "' " + num(forward->vertex_count()) + " and " +
                      num(forward->edge_count()) + ": not its transpose");
  }
  const apps::pagerank_options p{
      .iterations = o.iterations,
      .tolerance = o.tolerance,
      .algorithm = choose_pagerank(o, s->graph.symmetric()),
      .out_offsets = forward ? forward->offset_span() : std::span<const std::uint64_t>{}};
  const bool pull = p.algorithm == apps::pagerank_algorithm::pull;
  auto [r, io] = run_on_edges(read, *s, [&](auto& exec, const auto& edges) {
    return apps::run_pagerank(exec, s->graph.offset_span(), edges, p);
  });
  // Every iteration reads every list: entries read are the entries traversed.
  figures f{"pagerank",
            std::string("PageRank (") + (pull ? "pull" : "push") + "), " +
                std::to_string(r.iterations) + " iterations",
            r.seconds,
            r.edges_traversed,
            r.edges_traversed,
            io,
            0,
            {},
            {}};
  if (o.storage.backend == "host-memory" || o.storage.backend == "device-memory") {
    f.segment_bytes = r.iterations * segment_bytes(s->graph.offset_span(), s->graph.id_bytes(),
                                                   [](std::uint64_t) { return true; });
  }
  char change[32];
  std::snprintf(change, sizeof change, "%.3g", r.last_change);
  f.lines.emplace_back(
      "algorithm",
      pull ? (forward ? "pull over the in-lists of --in-edges (out-degrees from --graph)"
                      : "pull (the graph is symmetric: its lists are the in-lists)")
           : (o.pagerank_algorithm == "push"
                  ? "push (--algorithm push)"
                  : "push (the graph is directed: --in-edges GT, its transpose, allows pull)"));
  f.lines.emplace_back("iterations", std::to_string(r.iterations) + " (damping " +
                                         fixed(p.damping, 2) + "; last L1 change " + change + ")");
  f.json = [&](json_writer& j) {
    j.field("algorithm", std::string(pull ? "pull" : "push"))
        .field("in_edges", o.in_edges)
        .field("iterations", r.iterations)
        .field("damping", p.damping)
        .field("tolerance", p.tolerance)
        .field("last_change", r.last_change);
  };
  report(read, file, *s, f, apps::seconds_since(start), o.ranks_out == "-");
  if (!o.ranks_out.empty()) apps::write_ranks(o.ranks_out, r.ranks);
}

// Options every app takes: the graph (or how to generate one), storage, JSON.
void add_common(CLI::App& c, app_options& o) {
  CLI::Option* graph =
      c.add_option("--graph", o.graph, "Graph file (.bcsr; see `bam graph convert`)")
          ->check(CLI::ExistingFile);
  const std::string without = " of the graph generated when --graph is not given";
  c.add_option("--kind", o.kind, "kron or urand: kind" + without)
      ->check(CLI::IsMember({"kron", "urand"}))
      ->capture_default_str()
      ->excludes(graph);
  c.add_option("--scale", o.scale, "2^SCALE vertices" + without)
      ->check(CLI::Range(1u, 40u))
      ->capture_default_str()
      ->excludes(graph);
  c.add_option("--degree", o.degree, "Undirected edges per vertex" + without)
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->excludes(graph);
  c.add_option("--seed", o.seed, "Seed" + without)
      ->transform(whole_number())
      ->capture_default_str()
      ->excludes(graph);
  c.add_option("--keep-graph", o.keep_graph, "Write the generated graph to PATH and keep it")
      ->type_name("PATH")
      ->check(output_file({.renamed_into_place = true}))
      ->excludes(graph);
  o.storage.add_to(c, {.tiled = true});
  add_json_option(c, o.json);
}

}  // namespace

void add_app_commands(CLI::App& app) {
  {
    auto o = std::make_shared<app_options>();
    CLI::App* c = app.add_subcommand(
        "bfs",
        "Breadth-first search with neighbour lists read from storage through the page cache "
        "(no --graph: generates a Kronecker graph 8x the cache and traverses it)");
    add_common(*c, *o);
    c->add_option("--source", o->source, "Source vertex (default: the highest-degree vertex)")
        ->transform(whole_number());
    c->add_option("--scan-divisor", o->scan_divisor,
                  "Expand a level whose frontier exceeds n/N vertices by a scan in vertex order "
                  "(storage order) instead of the frontier list; 0: never")
        ->type_name("N")
        ->transform(whole_number())
        ->capture_default_str();
    c->add_option("--algorithm", o->bfs_algorithm,
                  "do: direction-optimizing (large levels bottom-up: each unreached vertex reads "
                  "its list only until it meets the frontier; symmetric graphs, a directed one "
                  "runs top-down); top-down: every level expands the frontier's lists")
        ->check(CLI::IsMember({"do", "top-down"}))
        ->capture_default_str();
    c->add_option("--switch-rule", o->bfs_switch_rule,
                  "How do picks each level's direction: lines (the direction that loads fewer "
                  "cache lines, counted as vertices are reached), edges (Beamer's alpha/beta over "
                  "edge counts, as GAP), auto (lines through a cache, edges over memory and tiles)")
        ->check(CLI::IsMember({"auto", "lines", "edges"}))
        ->capture_default_str();
    c->add_option("--early-claims", o->early_claims,
                  "on: a bottom-up step gives the next depth at once to a vertex whose whole list "
                  "it read without a parent but with a vertex found in the step, so the next step "
                  "need not read the list again; off: every vertex waits for its own step")
        ->check(CLI::IsMember({"on", "off"}))
        ->capture_default_str();
    c->add_option("--vertex-batches", o->vertex_batches,
                  "on: scans and bottom-up steps give a warp a run of 32 vertices, a lane testing "
                  "each, and the warp reads the lists of those it must; off: a warp per vertex "
                  "(the same depths)")
        ->check(CLI::IsMember({"on", "off"}))
        ->capture_default_str();
    c->add_option("--hubs", o->hubs,
                  "auto: bottom-up steps look up each vertex's highest-degree neighbours (the "
                  "graph file's hubs section, read into memory beside the offsets) before its "
                  "list, and read the list only when none of them is on the frontier; on: "
                  "the same, an error without the section; off: read lists only (the same "
                  "depths)")
        ->check(CLI::IsMember({"auto", "on", "off"}))
        ->capture_default_str();
    c->add_option("--hub-count", o->hub_count,
                  "Hubs per vertex to look up: the first K (those of highest degree) of the K or "
                  "more the file holds; 0: all of them")
        ->type_name("K")
        ->check(CLI::Range(0u, graph::bcsr_max_hub_count))
        ->capture_default_str();
    c->add_option("--split-lists", o->piece_entries,
                  "Top-down steps cut a list longer than N entries into pieces of N, each "
                  "expanded by a warp of its own, so one long list does not hold a level on one "
                  "warp; 0: a warp per list (the same depths). N is 0 or at least the default")
        ->type_name("N")
        ->check([](const std::string& text) {
          const std::uint64_t n = std::strtoull(text.c_str(), nullptr, 10);
          return n == 0 || n >= apps::bfs_pieces::default_entries
                     ? std::string()
                     : "must be 0 or at least " + std::to_string(apps::bfs_pieces::default_entries);
        })
        ->capture_default_str();
    c->add_option("--depths-out", o->depths_out,
                  "Write each vertex's depth (-1: unreached), one per line, to FILE ('-': stdout)")
        ->type_name("FILE")
        ->check(output_file({.standard_output = true}));
    c->callback([o] { run_bfs_command(*o); });
  }
  {
    auto o = std::make_shared<app_options>();
    CLI::App* c = app.add_subcommand(
        "cc",
        "Connected components (edges taken as undirected), neighbour lists from storage. "
        "Trusts the graph's symmetric flag (a symmetric graph is read one way only); "
        "`bam graph info` checks it");
    add_common(*c, *o);
    c->add_option("--algorithm", o->cc_algorithm,
                  "afforest: link 2 sampled neighbours per vertex, then read only the lists "
                  "outside the sampled giant component (symmetric graphs, a directed one runs "
                  "union-find); union-find: one pass over every edge")
        ->check(CLI::IsMember({"afforest", "union-find"}))
        ->capture_default_str();
    c->add_option("--labels-out", o->labels_out,
                  "Write each vertex's label (the smallest vertex of its component), one per line, "
                  "to FILE ('-': stdout)")
        ->type_name("FILE")
        ->check(output_file({.standard_output = true}));
    c->callback([o] { run_cc_command(*o); });
  }
  {
    auto o = std::make_shared<app_options>();
    CLI::App* c = app.add_subcommand(
        "pagerank",
        "PageRank (damping 0.85), neighbour lists from storage: pull where in-lists exist "
        "(a symmetric graph, or --in-edges), else push");
    add_common(*c, *o);
    c->add_option("--algorithm", o->pagerank_algorithm,
                  "pull (each vertex sums over its in-list: a symmetric graph's lists, or "
                  "--in-edges) or push (atomic adds along out-edges; any graph). Default: pull "
                  "where in-lists exist")
        ->check(CLI::IsMember({"pull", "push"}));
    c->add_option("--in-edges", o->in_edges,
                  "The transpose of a directed --graph (bam graph convert --transpose), whose "
                  "lists pull reads; out-degrees still come from --graph")
        ->type_name("FILE")
        ->check(CLI::ExistingFile);
    CLI::Option* iterations =
        c->add_option("--iterations", o->iterations,
                      "Iterations (with --tolerance: the most; default then 1000)")
            ->check(CLI::Range(1u, 1000000u))
            ->capture_default_str();
    c->add_option("--tolerance", o->tolerance,
                  "Stop once an iteration changes the ranks by less than this (L1)")
        ->check(CLI::NonNegativeNumber);
    c->add_option("--ranks-out", o->ranks_out,
                  "Write each vertex's rank, one per line, to FILE ('-': stdout)")
        ->type_name("FILE")
        ->check(output_file({.standard_output = true}));
    c->callback([o, iterations] {
      if (o->tolerance > 0 && iterations->count() == 0) o->iterations = 1000;
      run_pagerank_command(*o);
    });
  }
}

}  // namespace bam::tools
