// Every app gives the reference's answer whatever it reads through: each cache mode (none,
// naive, optimized), 512 B and 4 KiB lines, caches of a few lines (4 lines: the launch falls
// back to uncached reads; 16: every list evicts another), 4- and 8-byte ids, striped devices,
// a modelled latency, more pool threads than lines, and ids read in place (host memory).

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <bam/graph/csr.hpp>

#include "app_support.hpp"
#include "apps/graph_file.hpp"

namespace bam::apps::testing {
namespace {

struct matrix_case {
  storage_shape shape;
  std::uint32_t id_bytes;
};

void PrintTo(const matrix_case& c, std::ostream* out) {
  *out << to_string(c.shape) << " with " << c.id_bytes << "-byte ids";
}

std::vector<matrix_case> cases() {
  std::vector<matrix_case> out;
  for (const auto mode : {cache_mode::none, cache_mode::naive, cache_mode::optimized}) {
    for (const std::uint32_t line : {512u, 4096u}) {
      for (const std::uint64_t lines : {4u, 16u, 256u}) {
        storage_shape s;
        s.mode = mode;
        s.line_bytes = line;
        s.cache_lines = lines;
        out.push_back({s, lines == 16 ? 4u : 8u});
      }
    }
  }
  storage_shape host;
  host.host_memory = true;
  out.push_back({host, 4});
  storage_shape striped;
  striped.devices = 2;
  striped.line_bytes = 512;
  striped.cache_lines = 32;
  out.push_back({striped, 8});
  storage_shape slow;
  slow.latency_us = 11;
  out.push_back({slow, 8});
  storage_shape crowded;
  crowded.workers = 32;
  crowded.cache_lines = 64;
  crowded.line_bytes = 512;
  out.push_back({crowded, 4});
  return out;
}

// The graphs, written once for the whole suite.
class AppStorageMatrix : public ::testing::TestWithParam<matrix_case> {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<temp_dir>();
    for (const std::uint32_t id_bytes : {4u, 8u}) {
      paths_.push_back(make_generated(dir_->path(), graph::graph_kind::kron, 9, 8, 4, id_bytes));
      paths_.push_back(make_bcsr(star(1500), input_format::bcsr, dir_->path(), id_bytes));
      paths_.push_back(
          make_bcsr(directed_forward(800, 2500, 4), input_format::bcsr, dir_->path(), id_bytes));
    }
  }
  static void TearDownTestSuite() {
    paths_.clear();
    dir_.reset();
  }

  static std::vector<std::filesystem::path> graphs_with(std::uint32_t id_bytes) {
    std::vector<std::filesystem::path> out;
    for (const auto& p : paths_) {
      if (graph::read_header(p).id_bytes == id_bytes) out.push_back(p);
    }
    return out;
  }

  static inline std::unique_ptr<temp_dir> dir_;
  static inline std::vector<std::filesystem::path> paths_;
};

TEST_P(AppStorageMatrix, EveryAppMatchesTheReference) {
  const matrix_case& c = GetParam();
  for (const auto& path : graphs_with(c.id_bytes)) {
    SCOPED_TRACE(path.filename().string() + " on " + to_string(c.shape));
    const graph::csr g = graph::read_csr(path);
    const std::uint64_t source = max_degree_vertex(g.offsets);

    const std::vector<std::int32_t> depths = reference_bfs(g, source);
    std::uint64_t bfs_moved = 0;
    std::uint64_t bfs_errors = 0;
    for (const bfs_variant& variant : bfs_variants) {
      SCOPED_TRACE(variant.name);
      app_request bfs;
      bfs.source = source;
      variant.apply(bfs);
      const app_outcome b = run_app(path, c.shape, bfs);
      bfs_moved += b.stats.bytes_moved;
      bfs_errors += b.stats.errors;
      EXPECT_EQ(b.bfs.depths, depths);
      if (!c.shape.host_memory) {
        EXPECT_EQ(b.stats.bytes_requested, b.bfs.edges_read * c.id_bytes);
      }
    }

    const std::vector<std::uint64_t> labels = reference_cc(g);
    for (const cc_algorithm algorithm : cc_algorithms) {
      SCOPED_TRACE(to_string(algorithm));
      app_request cc;
      cc.app = app_request::kind::cc;
      cc.cc = algorithm;
      const app_outcome out = run_app(path, c.shape, cc);
      EXPECT_EQ(out.cc.labels, labels);
      if (!c.shape.host_memory) {
        EXPECT_EQ(out.stats.bytes_requested, out.cc.edges_read * c.id_bytes);
      }
    }

    app_request pr;
    pr.app = app_request::kind::pagerank;
    pr.iterations = 4;
    const rank_error e =
        compare_ranks(run_app(path, c.shape, pr).pagerank.ranks, reference_pagerank(g, 4, 0.85));
    EXPECT_LE(e.l1, rank_l1_tolerance);
    EXPECT_LE(e.max_abs, rank_max_tolerance);

    if (!c.shape.host_memory) {
      EXPECT_EQ(bfs_errors, 0u);
      EXPECT_GT(bfs_moved, 0u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, AppStorageMatrix, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<matrix_case>& param) {
                           std::string name = to_string(param.param.shape) + "_id" +
                                              std::to_string(param.param.id_bytes);
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace bam::apps::testing
