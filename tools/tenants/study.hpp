#pragma once
/// @file
/// The multi-tenant study (issue 9, `bam tenants`): tenants (BFS, CC, gather, scan), each with
/// its own arrays on one shared page cache and its own stream (GPU) or host thread and stream
/// (CPU), relaunching their app until every tenant has finished once. Each tenant's first run
/// is timed against the same tenant alone with 1/N of the cache under base-page translation,
/// which gives weighted speedup and unfairness per translation.
///
///     tenants::study_config c{...};
///     tenants::tenant_data data(c, mix);                      // the image: one region each
///     tenants::run_outcome r = tenants::run_tenants(c, data, {0, 1}, c.cache.capacity_bytes,
///                                                   translation_kind::two_level);
///
/// Thread safety: one host thread calls these; run_tenants starts and joins its own threads.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <bam/cache/cache_config.hpp>
#include <bam/cache/mosaic/compaction_agent.hpp>
#include <bam/cache/stats.hpp>
#include <bam/runtime/runtime.hpp>
#include <bam/storage/backing_store.hpp>
#include <bam/storage/emulated_storage.hpp>

#include "apps/graph_file.hpp"
#include "tenants/mix.hpp"

namespace bam::tenants {

using cache::mosaic::compaction_counts;

struct study_config {
  storage_config storage;       ///< the emulated devices every run reads through
  cache_config cache;           ///< capacity_bytes: the shared cache (0: 1/8 of a mix's data)
  bool gpu = false;             ///< kernels on the GPU (each tenant on its own stream)
  runtime_config runtime;       ///< GPU runs (green contexts are turned off: see runner.cpp)
  unsigned cpu_workers = 4;     ///< CPU path: threads of each tenant's stream
  std::filesystem::path graph;  ///< .bcsr for bfs and cc tenants
  std::uint64_t gather_bytes = 64ull << 20;  ///< each gather tenant's array
  std::uint64_t gather_reads = 0;            ///< per gather run (0: one per element)
  std::uint64_t scan_bytes = 64ull << 20;    ///< each scan tenant's array
  std::uint32_t frame_quota = 0;             ///< per dense tenant (0: none)
  unsigned repetitions = 3;                  ///< medians of this many runs
  std::vector<translation_kind> translations = {translation_kind::two_level,
                                                translation_kind::base};
  bool keep_outputs = false;  ///< keep each tenant's first BFS depths / CC labels (tests)
  /// two_level: run the compaction agent beside the tenants (a host thread on the CPU path,
  /// cache/mosaic/compactor.hpp; a GPU thread on a GPU, cache/mosaic/gpu_compaction_agent.hpp).
  bool compaction = true;
  /// Time each tenant's second run too (every tenant runs at least twice) and each tenant
  /// alone over a copy of its data that kernels read directly (no cache), which split its
  /// first run into data, translation and misses (time_shares).
  bool measure_shares = true;
  /// Told how far each tenant of a shared run is, every progress_interval_s (none: silent).
  std::function<void(const std::string&)> progress;
  double progress_interval_s = 10;
};

/// One tenant of a mix: its workload and its region of the image.
struct tenant_spec {
  tenant_kind kind = tenant_kind::bfs;
  std::string name;            ///< "bfs.0": kind and position in the mix
  std::uint64_t offset = 0;    ///< byte offset of its data in the image
  std::uint64_t bytes = 0;     ///< bytes of its data
  std::uint64_t elements = 0;  ///< neighbour ids, or 8-byte values
  std::uint64_t expected = 0;  ///< gather and scan: the checksum a correct run produces
};

/// The data of a mix: a graph (when a tenant needs one) and one image holding every tenant's
/// own copy of its data (a graph's neighbour ids, or synthetic values), each region aligned to
/// a large frame.
class tenant_data {
 public:
  /// Builds the image (pinned memory on a GPU). Throws bam::input_error when a bfs or cc
  /// tenant has no graph.
  tenant_data(const study_config& config, const mix& m);

  [[nodiscard]] const std::vector<tenant_spec>& tenants() const { return tenants_; }
  [[nodiscard]] const std::shared_ptr<backing_store>& image() const { return image_; }
  /// The graph (bfs and cc tenants); null when the mix has none.
  [[nodiscard]] const apps::graph_file* graph() const { return graph_ ? &*graph_ : nullptr; }
  [[nodiscard]] std::uint64_t bfs_source() const { return source_; }
  /// Bytes of all tenants' data.
  [[nodiscard]] std::uint64_t data_bytes() const;

 private:
  std::vector<tenant_spec> tenants_;
  std::shared_ptr<backing_store> image_;
  std::optional<apps::graph_file> graph_;
  std::uint64_t source_ = 0;
};

/// What one tenant did in one run.
struct tenant_run {
  double seconds = 0;        ///< its first run, from launch of its first kernel to its result
  double warm_seconds = 0;   ///< its second run (0: it ran once): the cache is warm then
  std::uint64_t runs = 0;    ///< runs it completed (it relaunches until every tenant is done)
  std::uint64_t digest = 0;  ///< FNV-1a of the first run's depths or labels; gather/scan sum
  /// gather/scan: the sum is right. bfs/cc (set by run_mix): the result equals the tenant's
  /// first alone run, which is the reference.
  bool verified = false;
  tenant_stats frames;                ///< its share of the frame pool and counters, after the run
  cache_stats counters;               ///< its array's counters over every run
  std::vector<std::int32_t> depths;   ///< keep_outputs, bfs
  std::vector<std::uint64_t> labels;  ///< keep_outputs, cc
};

struct run_outcome {
  std::vector<tenant_run> tenants;  ///< in the order asked for
  double wall_seconds = 0;
  compaction_counts compaction;  ///< what the compaction agent did (two_level, agent on)
};

/// Runs tenants `which` (indices into data.tenants()) together on one cache of `cache_bytes`
/// with `translation` (their arrays dense under two_level), each relaunching until all have
/// finished once. Builds and tears down the devices, the cache and (GPU) the runtime. Throws
/// what a tenant threw (bam::nvme_error for an I/O error, ...), after every tenant stopped.
run_outcome run_tenants(const study_config& config, const tenant_data& data,
                        std::span<const std::size_t> which, std::uint64_t cache_bytes,
                        translation_kind translation);

/// Runs tenant `which` alone, twice, over a copy of its data in memory its kernels read
/// directly (device memory on a GPU, host memory on the CPU path): no cache, no translation,
/// no I/O. warm_seconds is its second run, the time of the data alone.
tenant_run run_direct(const study_config& config, const tenant_data& data, std::size_t which);

/// A figure over repetitions: the samples and their median.
struct sampled {
  std::vector<double> samples;
  [[nodiscard]] double median() const;
};

/// A first run split by what its time went to (fractions of it; they sum to 1):
///   data        = direct / first: reading the data with no cache (run_direct);
///   translation = (warm - direct) / first: finding each access's line in a warm cache;
///   misses      = (first - warm) / first: what the cold run adds (loads, fills, frames).
/// With a cache that holds the tenant's data, the warm run hits on every access; with a
/// smaller one its misses count as translation. Empty when a time is missing.
struct time_shares {
  double data = 0;
  double translation = 0;
  double misses = 0;
  static std::optional<time_shares> of(double first, double warm, double direct);
  /// Of the samples' medians.
  static std::optional<time_shares> of(const sampled& first, const sampled& warm,
                                       const sampled& direct) {
    return of(first.median(), warm.median(), direct.median());
  }
};

/// One tenant of a mix across every configuration.
struct tenant_result {
  tenant_spec spec;
  sampled alone;       ///< alone, base translation, cache_bytes / tenants
  sampled alone_warm;  ///< its second runs (measure_shares)
  tenant_run alone_last;
  sampled direct;  ///< alone over its data in memory, no cache (run_direct; measure_shares)
  struct shared_figures {
    translation_kind translation = translation_kind::base;
    sampled seconds;
    sampled warm;     ///< second runs, under the other tenants' runs (measure_shares)
    tenant_run last;  ///< the last repetition's counters and frames
    [[nodiscard]] double slowdown(double alone) const;
  };
  std::vector<shared_figures> shared;  ///< one per translation of the config
};

struct mix_result {
  mix tenants_mix;
  std::uint64_t cache_bytes = 0;
  std::uint64_t data_bytes = 0;
  std::vector<tenant_result> tenants;
  /// Per translation of the config: what the compaction agent did in the last repetition.
  std::vector<compaction_counts> compaction;
  bool verified = true;  ///< every run of every tenant produced the right result
  /// Under config.translations[i], the median over repetitions of each shared run's sum over
  /// tenants of alone (median) / shared.
  [[nodiscard]] double weighted_speedup(std::size_t translation) const;
  /// The median over repetitions of each shared run's largest shared / alone (median).
  [[nodiscard]] double unfairness(std::size_t translation) const;
};

/// Runs a whole mix: alone runs (reused from `alone_cache` across mixes, keyed by kind and
/// share) and shared runs under each translation, `repetitions` times each. `log` gets a line
/// per run (may be empty).
struct alone_key {
  tenant_kind kind;
  std::uint64_t cache_bytes;
  bool operator==(const alone_key&) const = default;
};
struct alone_entry {
  sampled seconds;
  sampled warm;
  tenant_run last;
};
using alone_map = std::vector<std::pair<alone_key, alone_entry>>;

mix_result run_mix(const study_config& config, const mix& m, alone_map& alone_cache,
                   const std::function<void(const std::string&)>& log);

}  // namespace bam::tenants
