// Edge lists and Matrix Market files: what they read as, and the errors malformed ones give.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/convert.hpp"
#include "graph/formats.hpp"
#include "graph_test_support.hpp"

namespace bam::graph {
namespace {

using testing::contains;
using testing::input_error_of;
using testing::make_graph;
using testing::temp_dir;
using testing::write_file;

csr convert_and_read(const temp_dir& dir, const std::string& name, const std::string& text,
                     const convert_options& options = {}) {
  write_file(dir / name, text);
  convert_graph(dir / name, dir / "out.bcsr", options);
  return read_csr(dir / "out.bcsr");
}

TEST(graph_edge_list, comments_blank_lines_tabs_and_crlf_are_accepted) {
  temp_dir dir;
  const csr g = convert_and_read(dir, "g.el",
                                 "# a comment\n"
                                 "% another\n"
                                 "\n"
                                 "0 1\r\n"
                                 "  2\t0  \n"
                                 "1 1\n"
                                 "0 1\n");
  EXPECT_EQ(g, make_graph(3, {{0, 1}, {2, 0}, {1, 1}, {0, 1}}));
}

TEST(graph_edge_list, vertex_count_is_the_largest_id_plus_one) {
  temp_dir dir;
  const csr g = convert_and_read(dir, "g.el", "7 2\n");
  EXPECT_EQ(g.vertex_count(), 8u);
  EXPECT_EQ(g.degree(7), 1u);
  EXPECT_EQ(g.degree(0), 0u);
}

TEST(graph_edge_list, a_third_column_gives_weights) {
  temp_dir dir;
  const csr g = convert_and_read(dir, "g.wel", "0 1 2.5\n1 0 -1e3\n");
  EXPECT_EQ(g, make_graph(2, {{0, 1}, {1, 0}}, {2.5f, -1000.0f}));
}

TEST(graph_edge_list, undirected_adds_every_reverse_edge) {
  temp_dir dir;
  const csr g = convert_and_read(dir, "g.el", "0 1\n1 2\n2 2\n", {.undirected = true});
  EXPECT_EQ(g, make_graph(3, {{0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 2}, {2, 2}}));
  EXPECT_TRUE(read_header(dir / "out.bcsr").symmetric());
}

TEST(graph_edge_list, dedup_drops_duplicates_and_self_loops) {
  temp_dir dir;
  const csr g = convert_and_read(dir, "g.el", "0 1\n0 1\n1 1\n1 0\n", {.dedup = true});
  EXPECT_EQ(g, make_graph(2, {{0, 1}, {1, 0}}));
  EXPECT_TRUE(read_header(dir / "out.bcsr").simple());
}

TEST(graph_edge_list, dedup_keeps_the_smallest_weight) {
  temp_dir dir;
  const csr g = convert_and_read(dir, "g.el", "0 1 5\n0 1 2\n0 1 9\n", {.dedup = true});
  EXPECT_EQ(g, make_graph(2, {{0, 1}}, {2.0f}));
}

TEST(graph_edge_list, a_file_without_edges_is_refused_as_an_empty_matrix_market_file_is) {
  temp_dir dir;
  write_file(dir / "g.el", "# nothing\n");
  const std::string message =
      input_error_of([&] { convert_graph(dir / "g.el", dir / "out.bcsr", {}); });
  EXPECT_TRUE(contains(message, "no edges")) << message;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.bcsr"));
}

TEST(graph_matrix_market, pattern_general_is_one_based) {
  temp_dir dir;
  const csr g = convert_and_read(dir, "g.mtx",
                                 "%%MatrixMarket matrix coordinate pattern general\n"
                                 "% comment\n"
                                 "4 4 3\n"
                                 "1 2\n"
                                 "4 1\n"
                                 "2 2\n");
  EXPECT_EQ(g, make_graph(4, {{0, 1}, {3, 0}, {1, 1}}));
}

TEST(graph_matrix_market, symmetric_entries_stand_for_both_directions_except_the_diagonal) {
  temp_dir dir;
  const csr g = convert_and_read(dir, "g.mtx",
                                 "%%MatrixMarket matrix coordinate pattern symmetric\n"
                                 "3 3 3\n"
                                 "2 1\n"
                                 "3 3\n"
                                 "3 1\n");
  EXPECT_EQ(g, make_graph(3, {{1, 0}, {0, 1}, {2, 2}, {2, 0}, {0, 2}}));
  EXPECT_TRUE(read_header(dir / "out.bcsr").symmetric());
}

TEST(graph_matrix_market, integer_and_real_values_become_weights) {
  temp_dir dir;
  EXPECT_EQ(convert_and_read(dir, "i.mtx",
                             "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 -7\n"),
            make_graph(2, {{0, 1}}, {-7.0f}));
  EXPECT_EQ(convert_and_read(dir, "r.mtx",
                             "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n2 1 0.25\n"),
            make_graph(2, {{1, 0}, {0, 1}}, {0.25f, 0.25f}));
}

TEST(graph_matrix_market, a_rectangular_matrix_has_the_larger_dimension_as_vertex_count) {
  temp_dir dir;
  const csr g = convert_and_read(dir, "g.mtx",
                                 "%%MatrixMarket matrix coordinate pattern general\n2 5 1\n1 5\n");
  EXPECT_EQ(g.vertex_count(), 5u);
}

// --- malformed input ------------------------------------------------------------------------

struct malformed_case {
  const char* name;     // file name (the extension picks the format)
  const char* text;     // contents
  const char* where;    // expected "file:line" suffix of the message's start
  const char* problem;  // expected words from the message
};

void PrintTo(const malformed_case& c, std::ostream* out) { *out << c.name << " " << c.where; }

class graph_malformed_text : public ::testing::TestWithParam<malformed_case> {};

TEST_P(graph_malformed_text, error_names_file_and_line_and_leaves_no_output) {
  const malformed_case& c = GetParam();
  temp_dir dir;
  write_file(dir / c.name, c.text);
  const std::string message =
      input_error_of([&] { convert_graph(dir / c.name, dir / "out.bcsr", {}); });
  EXPECT_TRUE(contains(message, (dir / c.name).string() + ":" + c.where + ": ")) << message;
  EXPECT_TRUE(contains(message, c.problem)) << message;
  EXPECT_EQ(dir.files(), std::vector<std::string>{c.name});  // no output, no temporary
}

constexpr const char* mm_pattern = "%%MatrixMarket matrix coordinate pattern general\n";

INSTANTIATE_TEST_SUITE_P(
    edge_lists, graph_malformed_text,
    ::testing::Values(malformed_case{"a.el", "0 1\n1 2\nx 3\n", "3", "'x' is not a vertex id"},
                      malformed_case{"b.el", "0 1\n-1 2\n", "2", "'-1' is not a vertex id"},
                      malformed_case{"c.el", "# c\n0\n", "2", "found 1 fields"},
                      malformed_case{"d.el", "0 1 2 3\n", "1", "found 4 fields"},
                      malformed_case{"e.el", "0 1\n1 2 3.5\n", "2",
                                     "the first edge (line 1) has 2"},
                      malformed_case{"f.el", "0 1 abc\n", "1", "'abc' is not a finite number"},
                      malformed_case{"g.el", "0 1 nan\n", "1", "is not a finite number"},
                      malformed_case{"h.el", "0 99999999999999999999\n", "1", "is not a vertex id"},
                      malformed_case{"i.el", "0 1x\n", "1", "'1x' is not a vertex id"},
                      malformed_case{"j.el", "0 281474976710656\n", "1", "too large"}));

INSTANTIATE_TEST_SUITE_P(
    matrix_market, graph_malformed_text,
    ::testing::Values(
        malformed_case{"a.mtx", "", "1", "empty file"},
        malformed_case{"b.mtx", "1 2 3\n", "1", "not a Matrix Market file"},
        malformed_case{"c.mtx", "%%MatrixMarket matrix array real general\n", "1",
                       "'array' is not supported"},
        malformed_case{"d.mtx", "%%MatrixMarket matrix coordinate complex general\n", "1",
                       "'complex' is not supported"},
        malformed_case{"e.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n", "1",
                       "'skew-symmetric' is not supported"},
        malformed_case{"f.mtx", "%%MatrixMarket matrix coordinate\n", "1", "the banner needs"},
        malformed_case{"g.mtx", "%%MatrixMarket matrix coordinate pattern general\n% only\n", "2",
                       "file ends before the size line"},
        malformed_case{"h.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3\n", "2",
                       "size line"},
        malformed_case{"i.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 x 1\n", "2",
                       "'x' is not a count"},
        malformed_case{"j.mtx",
                       "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n4 1\n", "4",
                       "row index 4 is outside 1..3"},
        malformed_case{"k.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 2 1\n1 3\n",
                       "3", "column index 3 is outside 1..2"},
        malformed_case{"l.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n0 1\n",
                       "3", "row index 0 is outside"},
        malformed_case{"m.mtx",
                       "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n", "4",
                       "file ends after 2 of the 3 entries"},
        malformed_case{"n.mtx",
                       "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n2 3\n", "4",
                       "more entries than the 1"},
        malformed_case{"o.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2\n", "3",
                       "expected 'row col value', found 2 fields"},
        malformed_case{"p.mtx",
                       "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 1.5\n", "3",
                       "'1.5' is not an integer"},
        malformed_case{"q.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 4 0\n", "2",
                       "must be square"},
        malformed_case{"r.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 b\n",
                       "3", "'b' is not an index"}));

TEST(graph_formats, an_unknown_extension_asks_for_format) {
  const std::string message = input_error_of([] { (void)guess_graph_format("graph.dat"); });
  EXPECT_TRUE(contains(message, "--format")) << message;
  EXPECT_EQ(guess_graph_format("x/g.mtx"), graph_format::mtx);
  EXPECT_EQ(guess_graph_format("g.bel"), graph_format::bel);
  EXPECT_EQ(guess_graph_format("g.bel.col"), graph_format::bel);
  EXPECT_EQ(guess_graph_format("g.el"), graph_format::el);
}

TEST(graph_formats, an_explicit_format_overrides_the_extension) {
  temp_dir dir;
  const csr g = convert_and_read(dir, "g.dat", std::string(mm_pattern) + "2 2 1\n1 2\n",
                                 {.format = graph_format::mtx});
  EXPECT_EQ(g, make_graph(2, {{0, 1}}));
}

TEST(graph_formats, a_missing_input_file_is_named) {
  temp_dir dir;
  const std::string message =
      input_error_of([&] { convert_graph(dir / "none.el", dir / "out.bcsr", {}); });
  EXPECT_TRUE(contains(message, (dir / "none.el").string())) << message;
  EXPECT_TRUE(dir.files().empty());
}

}  // namespace
}  // namespace bam::graph
