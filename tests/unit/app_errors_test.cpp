// The apps fail loudly on bad data: an unreadable neighbour section gives bam::nvme_error, an
// id past the vertex count gives bam::input_error; and their per-vertex outputs read back.

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <bam/error.hpp>
#include <bam/graph/bcsr.hpp>
#include <bam/graph/csr.hpp>

#include "app_support.hpp"
#include "apps/outputs.hpp"

namespace bam::apps::testing {
namespace {

app_request request(app_request::kind k) {
  app_request r;
  r.app = k;
  r.iterations = 2;
  return r;
}

constexpr app_request::kind every_app[] = {app_request::kind::bfs, app_request::kind::cc,
                                           app_request::kind::pagerank};

TEST(AppErrors, AnUnreadableNeighbourSectionThrowsNvmeError) {
  temp_dir dir;
  const auto path = make_bcsr(star(2000), input_format::bcsr, dir.path(), 8);
  const graph::bcsr_header h = graph::read_header(path);
  storage_shape shape;
  shape.bad_lba_begin = h.neighbors.offset / 512;
  shape.bad_lba_end = (h.neighbors.offset + h.neighbors.bytes) / 512 + 1;
  for (const auto k : every_app) {
    EXPECT_THROW((void)run_app(path, shape, request(k)), nvme_error);
  }
}

TEST(AppErrors, AnIdPastTheVertexCountThrowsInputError) {
  temp_dir dir;
  const auto path = make_bcsr(mixed_graph(), input_format::bcsr, dir.path(), 8);
  const graph::bcsr_header h = graph::read_header(path);
  {
    // Vertex 0's first neighbour becomes 1000 in a graph of 14 vertices.
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    const std::uint64_t bad = 1000;
    f.seekp(static_cast<std::streamoff>(h.neighbors.offset));
    f.write(reinterpret_cast<const char*>(&bad), sizeof bad);
  }
  for (const auto k : every_app) {
    try {
      (void)run_app(path, {}, request(k));
      ADD_FAILURE() << "no error";
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find("not below the vertex count 14"), std::string::npos)
          << e.what();
    }
  }
}

std::vector<std::string> lines_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(AppOutputs, WriteOneValuePerVertexInVertexOrder) {
  temp_dir dir;
  const auto depths = dir.path() / "depths.txt";
  write_depths(depths.string(), std::vector<std::int32_t>{0, -1, 2});
  EXPECT_EQ(lines_of(depths), (std::vector<std::string>{"0", "-1", "2"}));
  const auto labels = dir.path() / "labels.txt";
  write_labels(labels.string(), std::vector<std::uint64_t>{0, 0, 18446744073709551615ull});
  EXPECT_EQ(lines_of(labels), (std::vector<std::string>{"0", "0", "18446744073709551615"}));
  const auto ranks = dir.path() / "ranks.txt";
  const std::vector<double> values = {0.1, 1.0 / 3};
  write_ranks(ranks.string(), values);
  const std::vector<std::string> text = lines_of(ranks);
  ASSERT_EQ(text.size(), 2u);
  EXPECT_EQ(std::stod(text[0]), values[0]);  // 17 digits read back exactly
  EXPECT_EQ(std::stod(text[1]), values[1]);
}

TEST(AppOutputs, AnUnwritablePathThrowsInputError) {
  EXPECT_THROW(write_depths("/nonexistent-dir/depths.txt", std::vector<std::int32_t>{0}),
               input_error);
}

}  // namespace
}  // namespace bam::apps::testing
