// The .bcsr format: layout, write/read round trips, flags, and rejection of corrupt files.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include <bam/graph/bcsr.hpp>
#include <bam/graph/bcsr_writer.hpp>
#include <bam/graph/csr.hpp>

#include "graph_test_support.hpp"

namespace bam::graph {
namespace {

using testing::contains;
using testing::input_error_of;
using testing::make_graph;
using testing::read_file;
using testing::temp_dir;
using testing::write_file;

// A graph with an isolated vertex (3), a self loop (1 -> 1), a duplicate edge (0 -> 2 twice)
// and a vertex with only incoming edges (4).
csr awkward_graph() {
  return make_graph(6, {{0, 2}, {0, 2}, {1, 1}, {2, 0}, {5, 4}, {0, 4}, {2, 5}});
}

void check_alignment(const bcsr_header& h) {
  for (const bcsr_section& s : {h.offsets, h.neighbors, h.weights}) {
    EXPECT_EQ(s.offset % 65536, 0u);
  }
  EXPECT_GE(h.offsets.offset, bcsr_header_bytes);
  EXPECT_GE(h.neighbors.offset, h.offsets.offset + h.offsets.bytes);
  EXPECT_EQ(bcsr_file_bytes(h) % 65536, 0u);
}

TEST(graph_bcsr_layout, every_section_starts_on_a_64k_boundary) {
  for (const bcsr_shape shape :
       {bcsr_shape{.vertex_count = 0, .edge_count = 0},
        bcsr_shape{.vertex_count = 1, .edge_count = 1},
        bcsr_shape{.vertex_count = 8191, .edge_count = 12345},
        bcsr_shape{.vertex_count = 8192, .edge_count = 100000, .id_bytes = 4, .weighted = true}}) {
    const bcsr_header h = make_bcsr_header(shape);
    check_alignment(h);
    EXPECT_EQ(h.offsets.bytes, (shape.vertex_count + 1) * 8);
    EXPECT_EQ(h.neighbors.bytes, shape.edge_count * shape.id_bytes);
    EXPECT_EQ(h.weights.bytes, shape.weighted ? shape.edge_count * 4 : 0);
    if (shape.weighted) {
      EXPECT_GE(h.weights.offset, h.neighbors.offset + h.neighbors.bytes);
    }
  }
}

TEST(graph_bcsr_layout, first_section_follows_the_header_at_64k) {
  const bcsr_header h = make_bcsr_header({.vertex_count = 10, .edge_count = 20});
  EXPECT_EQ(h.offsets.offset, 65536u);
  EXPECT_EQ(h.neighbors.offset, 131072u);
  EXPECT_EQ(h.weights.offset, 0u);
  EXPECT_EQ(h.header_bytes, 4096u);
  EXPECT_EQ(h.section_alignment, 65536u);
  EXPECT_EQ(std::memcmp(h.magic.data(), "BAM-BCSR", 8), 0);
}

TEST(graph_bcsr_layout, refuses_ids_that_do_not_fit_four_bytes) {
  const std::string message = input_error_of([] {
    (void)make_bcsr_header({.vertex_count = (1ull << 32) + 1, .edge_count = 0, .id_bytes = 4});
  });
  EXPECT_TRUE(contains(message, "4-byte")) << message;
}

TEST(graph_bcsr_file, write_then_read_gives_the_same_graph) {
  temp_dir dir;
  const csr g = awkward_graph();
  write_csr(dir / "g.bcsr", g);
  EXPECT_EQ(read_csr(dir / "g.bcsr"), g);
  EXPECT_EQ(dir.files(), std::vector<std::string>{"g.bcsr"});  // no temporary left
}

TEST(graph_bcsr_file, four_byte_ids_read_back_the_same) {
  temp_dir dir;
  const csr g = awkward_graph();
  write_csr(dir / "g.bcsr", g, {.id_bytes = 4});
  EXPECT_EQ(read_header(dir / "g.bcsr").id_bytes, 4u);
  EXPECT_EQ(read_csr(dir / "g.bcsr"), g);
}

TEST(graph_bcsr_file, weights_read_back_the_same) {
  temp_dir dir;
  const csr g = make_graph(3, {{0, 1}, {1, 2}, {2, 0}}, {0.5f, -2.0f, 1e-7f});
  write_csr(dir / "w.bcsr", g);
  const bcsr_header h = read_header(dir / "w.bcsr");
  EXPECT_TRUE(h.weighted());
  EXPECT_EQ(h.weight_bytes, 4u);
  check_alignment(h);
  EXPECT_EQ(read_csr(dir / "w.bcsr"), g);
}

TEST(graph_bcsr_file, an_empty_graph_is_a_valid_file) {
  temp_dir dir;
  write_csr(dir / "empty.bcsr", csr{});
  const bcsr_header h = read_header(dir / "empty.bcsr");
  EXPECT_EQ(h.vertex_count, 0u);
  EXPECT_EQ(h.edge_count, 0u);
  EXPECT_EQ(read_csr(dir / "empty.bcsr"), csr{});
}

TEST(graph_bcsr_file, header_records_counts_and_the_flags_found) {
  temp_dir dir;
  write_csr(dir / "g.bcsr", awkward_graph());
  const bcsr_header h = read_header(dir / "g.bcsr");
  EXPECT_EQ(h.vertex_count, 6u);
  EXPECT_EQ(h.edge_count, 7u);
  EXPECT_TRUE(h.sorted());
  EXPECT_FALSE(h.symmetric());  // 0 -> 4 has no 4 -> 0
  EXPECT_FALSE(h.simple());     // self loop and duplicate
  EXPECT_FALSE(h.weighted());
  EXPECT_EQ(std::filesystem::file_size(dir / "g.bcsr"), bcsr_file_bytes(h));
}

TEST(graph_bcsr_flags, symmetry_counts_each_direction_the_same_number_of_times) {
  EXPECT_TRUE(testing::is_symmetric(make_graph(3, {{0, 1}, {1, 0}, {1, 1}, {2, 1}, {1, 2}})));
  // 0 -> 1 twice but 1 -> 0 once.
  EXPECT_FALSE(testing::is_symmetric(make_graph(2, {{0, 1}, {0, 1}, {1, 0}})));
  // An edge from a larger id to a smaller one with no way back.
  EXPECT_FALSE(testing::is_symmetric(make_graph(3, {{0, 1}, {1, 0}, {2, 0}})));
  EXPECT_FALSE(testing::is_symmetric(make_graph(2, {{1, 0}})));
}

TEST(graph_bcsr_flags, simple_means_no_loops_and_no_duplicates) {
  EXPECT_TRUE(inspect_flags(make_graph(3, {{0, 1}, {0, 2}})) & bcsr_flags::simple);
  EXPECT_FALSE(inspect_flags(make_graph(3, {{0, 1}, {0, 1}})) & bcsr_flags::simple);
  EXPECT_FALSE(inspect_flags(make_graph(3, {{2, 2}})) & bcsr_flags::simple);
}

TEST(graph_bcsr_flags, unsorted_lists_are_not_flagged_sorted) {
  csr g = make_graph(3, {{0, 1}, {0, 2}});
  std::swap(g.neighbors[0], g.neighbors[1]);
  EXPECT_FALSE(inspect_flags(g) & bcsr_flags::sorted);
  EXPECT_TRUE(inspect_flags(g) & bcsr_flags::simple);
}

// --- corrupt files --------------------------------------------------------------------------

class graph_bcsr_corrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    write_csr(path_, awkward_graph());
    bytes_ = read_file(path_);
    std::memcpy(&header_, bytes_.data(), sizeof header_);
  }
  // Rewrites the file with `header_` (after the test changed it) and returns read_header's error.
  std::string error_after_patch() {
    std::memcpy(bytes_.data(), &header_, sizeof header_);
    write_file(path_, bytes_);
    return input_error_of([&] { (void)read_header(path_); });
  }
  temp_dir dir_;
  std::filesystem::path path_ = dir_ / "g.bcsr";
  std::string bytes_;
  bcsr_header header_{};
};

TEST_F(graph_bcsr_corrupt, bad_magic_is_rejected) {
  header_.magic[0] = 'X';
  const std::string message = error_after_patch();
  EXPECT_TRUE(contains(message, path_.string())) << message;
  EXPECT_TRUE(contains(message, "magic")) << message;
}

TEST_F(graph_bcsr_corrupt, unknown_version_is_rejected) {
  header_.version = 2;
  EXPECT_TRUE(contains(error_after_patch(), "version 2"));
}

TEST_F(graph_bcsr_corrupt, unknown_flags_are_rejected) {
  header_.flags |= 1u << 20;
  EXPECT_TRUE(contains(error_after_patch(), "flag"));
}

TEST_F(graph_bcsr_corrupt, misaligned_section_is_rejected) {
  header_.neighbors.offset += 8;
  const std::string message = error_after_patch();
  EXPECT_TRUE(contains(message, "neighbors section")) << message;
  EXPECT_TRUE(contains(message, "multiple of 65536")) << message;
}

TEST_F(graph_bcsr_corrupt, section_inside_the_header_is_rejected) {
  header_.offsets.offset = 0;
  EXPECT_TRUE(contains(error_after_patch(), "inside the header"));
}

TEST_F(graph_bcsr_corrupt, section_size_not_matching_the_counts_is_rejected) {
  header_.edge_count += 1;
  EXPECT_TRUE(contains(error_after_patch(), "the counts need"));
}

TEST_F(graph_bcsr_corrupt, truncated_file_is_rejected) {
  write_file(path_, bytes_.substr(0, header_.neighbors.offset + 8));
  const std::string message = input_error_of([&] { (void)read_header(path_); });
  EXPECT_TRUE(contains(message, path_.string())) << message;
  EXPECT_TRUE(contains(message, "past the end")) << message;
}

TEST_F(graph_bcsr_corrupt, file_shorter_than_the_header_is_rejected) {
  write_file(path_, bytes_.substr(0, 100));
  EXPECT_TRUE(contains(input_error_of([&] { (void)read_header(path_); }), "too short"));
}

TEST_F(graph_bcsr_corrupt, last_offset_must_equal_the_edge_count) {
  const std::uint64_t wrong = 6;
  std::memcpy(bytes_.data() + header_.offsets.offset + header_.vertex_count * 8, &wrong, 8);
  write_file(path_, bytes_);
  EXPECT_TRUE(contains(input_error_of([&] { (void)read_header(path_); }), "offsets[n] is 6"));
}

TEST_F(graph_bcsr_corrupt, decreasing_offsets_are_rejected_with_their_byte_offset) {
  const std::uint64_t big = 7;  // offsets[2] = 7 > offsets[3]
  const std::uint64_t at = header_.offsets.offset + 2 * 8;
  std::memcpy(bytes_.data() + at, &big, 8);
  write_file(path_, bytes_);
  const std::string message = input_error_of([&] { (void)load_offsets(path_); });
  EXPECT_TRUE(contains(message, "byte " + std::to_string(at + 8))) << message;
}

TEST_F(graph_bcsr_corrupt, neighbour_past_the_vertex_count_is_rejected_with_its_byte_offset) {
  const std::uint64_t bad = 99;
  const std::uint64_t at = header_.neighbors.offset + 3 * 8;
  std::memcpy(bytes_.data() + at, &bad, 8);
  write_file(path_, bytes_);
  const std::string message = input_error_of([&] { (void)read_csr(path_); });
  EXPECT_TRUE(contains(message, "byte " + std::to_string(at))) << message;
  EXPECT_TRUE(contains(message, "99")) << message;
}

TEST(graph_bcsr_file, a_missing_file_is_named_in_the_error) {
  const std::string message = input_error_of([] { (void)read_header("/nonexistent/g.bcsr"); });
  EXPECT_TRUE(contains(message, "/nonexistent/g.bcsr")) << message;
}

TEST(graph_bcsr_writer, an_uncommitted_file_is_removed) {
  temp_dir dir;
  {
    bcsr_writer out(dir / "g.bcsr", {.vertex_count = 4, .edge_count = 2});
    ASSERT_EQ(dir.files().size(), 1u);
    EXPECT_EQ(dir.files()[0].rfind(".g.bcsr.tmp-", 0), 0u);  // hidden, beside the destination
  }
  EXPECT_TRUE(dir.files().empty());
}

TEST(graph_bcsr_writer, shrinking_moves_the_weights_and_cuts_the_file) {
  temp_dir dir;
  bcsr_writer out(dir / "g.bcsr", {.vertex_count = 2, .edge_count = 5, .weighted = true});
  const std::uint64_t offsets[] = {0, 2, 3};
  std::copy(std::begin(offsets), std::end(offsets), out.offsets().begin());
  const std::uint64_t ids[] = {0, 1, 1, 9, 9};
  std::copy(std::begin(ids), std::end(ids), out.neighbors64().begin());
  const float weights[] = {0.5f, 1.5f, 2.5f, 9.0f, 9.0f};
  std::copy(std::begin(weights), std::end(weights), out.weights().begin());
  out.shrink_edges(3);
  out.commit();
  EXPECT_EQ(read_csr(dir / "g.bcsr"), make_graph(2, {{0, 0}, {0, 1}, {1, 1}}, {0.5f, 1.5f, 2.5f}));
  EXPECT_EQ(std::filesystem::file_size(dir / "g.bcsr"),
            bcsr_file_bytes(read_header(dir / "g.bcsr")));
}

TEST(graph_bcsr_file, a_failed_write_leaves_no_file) {
  temp_dir dir;
  const std::string message =
      input_error_of([&] { write_csr(dir / "g.bcsr", awkward_graph(), {.id_bytes = 3}); });
  EXPECT_FALSE(message.empty());
  EXPECT_TRUE(dir.files().empty());
}

}  // namespace
}  // namespace bam::graph
