// The multi-tenant study on the CPU path (`bam tenants`, tools/tenants/): a tiny mix of a BFS
// and a gather tenant (and CC with a scan) sharing one cache under both translations; every
// tenant's result must be right in every run, and the JSON must carry the study's fields. No
// timed assertions: the CPU path checks the harness, the GPU measures it.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <bam/error.hpp>
#include <bam/graph/csr.hpp>

#include "app_support.hpp"
#include "common/json_writer.hpp"
#include "tenants/report.hpp"
#include "tenants/study.hpp"

namespace bam::tenants {
namespace {

using apps::testing::temp_dir;

// Small enough for two cores: a scale-10 graph (64 KiB of ids per copy), a 512 KiB gather and
// a 256 KiB scan array, a 256 KiB cache (frames of 32 KiB: the pool holds 8) below the data.
study_config tiny_config(const std::filesystem::path& graph) {
  study_config c;
  c.graph = graph;
  c.storage.devices = 1;
  c.storage.queues_per_device = 4;
  c.storage.queue_depth = 64;
  c.storage.model = device_model::unlimited();
  c.cache.line_bytes = 4096;
  c.cache.capacity_bytes = 256 << 10;
  c.cache.frame_bytes = 64 << 10;
  c.cache.frame_percent = 100;
  c.cpu_workers = 2;
  c.gather_bytes = 512 << 10;
  c.gather_reads = 8192;
  c.scan_bytes = 256 << 10;
  c.repetitions = 2;
  c.keep_outputs = true;
  return c;
}

std::filesystem::path scale10(const temp_dir& dir) {
  return apps::testing::make_generated(dir.path(), graph::graph_kind::kron, 10, 8, 3, 4);
}

TEST(TenantMixes, PresetsExpandToTheStudysSets) {
  EXPECT_EQ(expand_mixes("homogeneous").size(), 12u);
  EXPECT_EQ(expand_mixes("pairs").size(), 6u);
  EXPECT_EQ(expand_mixes("triples").size(), 4u);
  EXPECT_EQ(expand_mixes("all").size(), 1u);
  EXPECT_EQ(expand_mixes("bfs,gather;scan").size(), 2u);
  const std::vector<mix> random = expand_mixes("random:5:7");
  ASSERT_EQ(random.size(), 5u);
  for (const mix& m : random) {
    EXPECT_GE(m.size(), 3u);
    EXPECT_LE(m.size(), 5u);
    EXPECT_NE(m.front(), m.back());  // sorted, so at least two kinds
  }
  EXPECT_EQ(expand_mixes("random:5:7"), random);  // the seed decides
  EXPECT_EQ(expand_mixes("study").size(), 12u + 6u + 4u + 1u + 4u);
}

TEST(TenantMixes, UnknownNamesAreInputErrors) {
  EXPECT_THROW(expand_mixes("bfs,sssp"), input_error);
  EXPECT_THROW(expand_mixes("random:x"), input_error);
  EXPECT_THROW(expand_mixes(""), input_error);
}

TEST(TenantStudy, EveryTenantIsRightInEveryRunUnderBothTranslations) {
  temp_dir dir;
  const std::filesystem::path path = scale10(dir);
  const graph::csr g = graph::read_csr(path);
  const study_config config = tiny_config(path);
  alone_map alone;
  const mix_result r = run_mix(config, {tenant_kind::bfs, tenant_kind::gather}, alone, {});
  EXPECT_TRUE(r.verified);
  ASSERT_EQ(r.tenants.size(), 2u);
  const tenant_result& bfs = r.tenants[0];
  const tenant_result& gather = r.tenants[1];
  const tenant_data data(config, {tenant_kind::bfs});
  const auto reference = apps::testing::reference_bfs(g, data.bfs_source());
  EXPECT_EQ(bfs.alone_last.depths, reference);
  ASSERT_EQ(bfs.shared.size(), 2u);
  for (const auto& s : bfs.shared) {
    SCOPED_TRACE(to_string(s.translation));
    EXPECT_EQ(s.last.depths, reference);
    EXPECT_TRUE(s.last.verified);
    EXPECT_EQ(s.seconds.samples.size(), 2u);
    EXPECT_GE(s.last.runs, 1u);
  }
  EXPECT_TRUE(gather.alone_last.verified);
  for (const auto& s : gather.shared) EXPECT_TRUE(s.last.verified);
  // Under two_level every tenant is dense: it holds frames and counts its fetches.
  EXPECT_NE(bfs.shared[0].last.frames.tenant, 0u);
  EXPECT_GT(gather.shared[0].last.counters.bytes_fetched, 0u);
  EXPECT_EQ(bfs.shared[1].last.frames.tenant, 0u);  // base: no tenant
  EXPECT_GT(r.weighted_speedup(0), 0.0);
  EXPECT_GT(r.unfairness(1), 0.0);
}

// Every tenant runs twice (its second run timed) and once alone over its data in memory, and
// the three times split its first run into shares that sum to one.
TEST(TenantStudy, FirstRunsSplitIntoDataTranslationAndMisses) {
  temp_dir dir;
  const std::filesystem::path path = scale10(dir);
  study_config config = tiny_config(path);
  config.repetitions = 1;
  alone_map alone;
  const mix_result r = run_mix(config, {tenant_kind::bfs, tenant_kind::scan}, alone, {});
  EXPECT_TRUE(r.verified);
  for (const tenant_result& t : r.tenants) {
    SCOPED_TRACE(t.spec.name);
    ASSERT_EQ(t.direct.samples.size(), 1u);
    EXPECT_GT(t.direct.median(), 0.0);
    ASSERT_EQ(t.alone_warm.samples.size(), 1u);
    EXPECT_GE(t.alone_last.runs, 2u);
    for (const auto& s : t.shared) {
      SCOPED_TRACE(to_string(s.translation));
      EXPECT_GE(s.last.runs, 2u);
      ASSERT_EQ(s.warm.samples.size(), 1u);
      const auto shares = time_shares::of(s.seconds, s.warm, t.direct);
      ASSERT_TRUE(shares.has_value());
      EXPECT_NEAR(shares->data + shares->translation + shares->misses, 1.0, 1e-9);
      EXPECT_GT(shares->data, 0.0);
    }
  }
  // One direct run per kind, kept beside the alone runs under a share of 0.
  EXPECT_EQ(std::count_if(alone.begin(), alone.end(),
                          [](const auto& e) { return e.first.cache_bytes == 0; }),
            2);
  EXPECT_FALSE(time_shares::of(1.0, 0.0, 0.5).has_value());
  const auto half = time_shares::of(4.0, 2.0, 1.0);
  ASSERT_TRUE(half.has_value());
  EXPECT_DOUBLE_EQ(half->data, 0.25);
  EXPECT_DOUBLE_EQ(half->translation, 0.25);
  EXPECT_DOUBLE_EQ(half->misses, 0.5);
}

TEST(TenantStudy, WithoutSharesEachTenantRunsUntilAllFinishedOnce) {
  temp_dir dir;
  const std::filesystem::path path = scale10(dir);
  study_config config = tiny_config(path);
  config.repetitions = 1;
  config.measure_shares = false;
  const tenant_data data(config, {tenant_kind::scan});
  const std::size_t one[] = {0};
  const run_outcome out =
      run_tenants(config, data, one, config.cache.capacity_bytes, translation_kind::base);
  EXPECT_EQ(out.tenants[0].runs, 1u);
  EXPECT_EQ(out.tenants[0].warm_seconds, 0.0);
  EXPECT_TRUE(out.tenants[0].verified);
}

// Weighted speedup and unfairness are figures of one shared run, then a median over runs: a
// mix that favours a different tenant in each run must not look worse than every run.
TEST(TenantStudy, WeightedSpeedupIsTakenPerRunThenTheMedian) {
  mix_result r;
  for (int k = 0; k < 2; ++k) {
    tenant_result t;
    t.alone.samples = {1.0};
    t.shared.push_back(
        {.translation = translation_kind::base, .seconds = {}, .warm = {}, .last = {}});
    r.tenants.push_back(t);
  }
  // Run 0 favours tenant 0, runs 1 and 2 tenant 1.
  r.tenants[0].shared[0].seconds.samples = {1.0, 2.0, 4.0};
  r.tenants[1].shared[0].seconds.samples = {2.0, 1.0, 1.0};
  // Per run: 1.5, 1.5, 1.25; the medians of each tenant's times (2.0 and 1.0) would give 1.5
  // too, so the third run tells them apart through unfairness: 2, 2, 4 -> 2.
  EXPECT_DOUBLE_EQ(r.weighted_speedup(0), 1.5);
  EXPECT_DOUBLE_EQ(r.unfairness(0), 2.0);
  r.tenants[0].shared[0].seconds.samples = {1.0, 2.0};
  r.tenants[1].shared[0].seconds.samples = {2.0, 1.0};
  // Per run 1.5 and 1.5; the medians of each tenant's times (1.5 and 1.5) would give 1.333.
  EXPECT_DOUBLE_EQ(r.weighted_speedup(0), 1.5);
}

TEST(TenantStudy, ConnectedComponentsAndScanShareACache) {
  temp_dir dir;
  const std::filesystem::path path = scale10(dir);
  const graph::csr g = graph::read_csr(path);
  study_config config = tiny_config(path);
  config.repetitions = 1;
  const tenant_data data(config, {tenant_kind::cc, tenant_kind::scan, tenant_kind::cc});
  for (const translation_kind t : {translation_kind::two_level, translation_kind::base}) {
    SCOPED_TRACE(to_string(t));
    const std::size_t all[] = {0, 1, 2};
    const run_outcome out = run_tenants(config, data, all, config.cache.capacity_bytes, t);
    const auto labels = apps::testing::reference_cc(g);
    EXPECT_EQ(out.tenants[0].labels, labels);
    EXPECT_EQ(out.tenants[2].labels, labels);
    EXPECT_TRUE(out.tenants[1].verified);
  }
}

TEST(TenantStudy, JsonCarriesTheStudysFields) {
  temp_dir dir;
  const std::filesystem::path path = scale10(dir);
  study_config config = tiny_config(path);
  config.repetitions = 1;
  config.keep_outputs = false;
  alone_map alone;
  const std::vector<mix_result> mixes = {
      run_mix(config, {tenant_kind::gather, tenant_kind::bfs}, alone, {})};
  tools::json_writer j;
  write_study_json(j, config, mixes);
  const std::string& text = j.str();
  for (const char* field : {"\"command\":",
                            "\"machine\":",
                            "\"config\":",
                            "\"mixes\":",
                            "\"mix\":",
                            "\"weighted_speedup\":",
                            "\"weighted_speedup_ratio\":",
                            "\"unfairness\":",
                            "\"alone\":",
                            "\"shared\":",
                            "\"two_level\":",
                            "\"base\":",
                            "\"slowdown\":",
                            "\"bloat_bytes\":",
                            "\"frames_held\":",
                            "\"hits\":",
                            "\"misses\":",
                            "\"bytes_fetched\":",
                            "\"bytes_compacted\":",
                            "\"fills\":",
                            "\"verified\":",
                            "\"samples\":",
                            "\"direct_seconds\":",
                            "\"warm_seconds\":",
                            "\"shares\":",
                            "\"translation\":",
                            "\"compaction\":",
                            "\"frames_freed\":"}) {
    EXPECT_NE(text.find(field), std::string::npos) << field;
  }
}

}  // namespace
}  // namespace bam::tenants
