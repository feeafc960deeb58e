// Edge list text: "u v" or "u v w" per line, 0-based ids, '#' and '%' comment lines.

#include <algorithm>
#include <array>
#include <string>

#include <bam/error.hpp>

#include "graph/formats.hpp"
#include "graph/text_lines.hpp"

namespace bam::graph {

namespace {

// The largest id a .bcsr file can hold (2^48 vertices).
constexpr std::uint64_t max_vertex_id = (std::uint64_t{1} << 48) - 1;

}  // namespace

edge_list read_edge_list(const std::filesystem::path& path) {
  const mapped_file file(path);
  text_lines lines(file);
  edge_list edges;
  std::uint64_t fields_per_line = 0;  // set by the first edge
  std::uint64_t first_edge_line = 0;
  std::uint64_t largest_id = 0;
  bool any_edge = false;
  std::array<std::string_view, 3> fields;
  std::string_view line;
  while (lines.next(line)) {
    if (is_blank_or_comment(line, "#%")) continue;
    const std::size_t count = split_fields(line, fields);
    if (count != 2 && count != 3) {
      lines.fail("expected 'source target' or 'source target weight', found " +
                 std::to_string(count) + " fields");
    }
    if (fields_per_line == 0) {
      fields_per_line = count;
      first_edge_line = lines.number();
      edges.weighted = count == 3;
    } else if (count != fields_per_line) {
      lines.fail("found " + std::to_string(count) + " fields, but the first edge (line " +
                 std::to_string(first_edge_line) + ") has " + std::to_string(fields_per_line));
    }
    std::array<std::uint64_t, 2> ids{};
    for (std::size_t i = 0; i < 2; ++i) {
      const auto id = parse_unsigned(fields[i]);
      if (!id) lines.fail(quoted(fields[i]) + " is not a vertex id (a non-negative integer)");
      if (*id > max_vertex_id) {
        lines.fail("vertex id " + std::string(fields[i]) +
                   " is too large (ids must be below 2^48)");
      }
      ids[i] = *id;
    }
    if (edges.weighted) {
      const auto weight = parse_float(fields[2]);
      if (!weight) lines.fail(quoted(fields[2]) + " is not a finite number (the edge weight)");
      edges.weights.push_back(*weight);
    }
    edges.sources.push_back(ids[0]);
    edges.targets.push_back(ids[1]);
    largest_id = std::max({largest_id, ids[0], ids[1]});
    any_edge = true;
  }
  if (!any_edge) {
    // An edge list's vertex count comes from its edges: without any it describes no graph,
    // and is far more often a failed download or the wrong file than a wish for n = 0. The
    // same rule as Matrix Market, whose empty file is refused (a size line "0 0 0" is the
    // way to ask for an empty graph there).
    throw input_error(lines.name() +
                      ": no edges (the file is empty or holds only blank and "
                      "comment lines); an edge list's vertex count comes from its edges");
  }
  edges.vertex_count = largest_id + 1;
  return edges;
}

}  // namespace bam::graph
