// Matrix Market coordinate files: a banner, comments, "rows cols nnz", then nnz 1-based entries.

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "graph/formats.hpp"
#include "graph/text_lines.hpp"

namespace bam::graph {

namespace {

constexpr std::uint64_t max_dimension = std::uint64_t{1} << 48;

enum class mm_field { pattern, integer, real };

struct mm_banner {
  mm_field field = mm_field::pattern;
  bool symmetric = false;
};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

mm_banner parse_banner(text_lines& lines) {
  std::string_view line;
  if (!lines.next(line)) lines.fail("empty file (expected a %%MatrixMarket banner)");
  std::array<std::string_view, 5> words;
  const std::size_t count = split_fields(line, words);
  if (count == 0 || lower(words[0]) != "%%matrixmarket") {
    lines.fail("not a Matrix Market file (the first line must start with %%MatrixMarket)");
  }
  if (count != 5) {
    lines.fail("the banner needs 'matrix coordinate <field> <symmetry>' after %%MatrixMarket");
  }
  if (lower(words[1]) != "matrix") lines.fail("object " + quoted(words[1]) + " is not 'matrix'");
  if (lower(words[2]) != "coordinate") {
    lines.fail("format " + quoted(words[2]) + " is not supported (a graph needs 'coordinate')");
  }
  mm_banner banner;
  const std::string field = lower(words[3]);
  if (field == "pattern") {
    banner.field = mm_field::pattern;
  } else if (field == "integer") {
    banner.field = mm_field::integer;
  } else if (field == "real" || field == "double") {
    banner.field = mm_field::real;
  } else {
    lines.fail("field " + quoted(words[3]) + " is not supported (pattern, integer or real)");
  }
  const std::string symmetry = lower(words[4]);
  if (symmetry == "symmetric") {
    banner.symmetric = true;
  } else if (symmetry != "general") {
    lines.fail("symmetry " + quoted(words[4]) + " is not supported (general or symmetric)");
  }
  return banner;
}

}  // namespace

edge_list read_matrix_market(const std::filesystem::path& path) {
  const mapped_file file(path);
  text_lines lines(file);
  const mm_banner banner = parse_banner(lines);

  // The size line: the first line that is neither blank nor a comment.
  std::string_view line;
  std::array<std::string_view, 3> fields;
  do {
    if (!lines.next(line)) lines.fail("file ends before the size line 'rows cols entries'");
  } while (is_blank_or_comment(line, "%"));
  if (split_fields(line, fields) != 3) lines.fail("expected the size line 'rows cols entries'");
  std::array<std::uint64_t, 3> size{};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto value = parse_unsigned(fields[i]);
    if (!value) lines.fail(quoted(fields[i]) + " is not a count in the size line");
    size[i] = *value;
  }
  const auto [rows, cols, declared] = size;
  const std::uint64_t size_line = lines.number();
  if (rows > max_dimension || cols > max_dimension) {
    lines.fail("matrix too large for a graph (at most 2^48 rows and columns)");
  }
  if (banner.symmetric && rows != cols) {
    lines.fail("a symmetric matrix must be square, this one is " + std::to_string(rows) + " x " +
               std::to_string(cols));
  }

  edge_list edges;
  edges.vertex_count = std::max(rows, cols);
  edges.weighted = banner.field != mm_field::pattern;
  // Each entry takes at least 4 bytes ("1 1\n"): a lying count cannot reserve much.
  const std::uint64_t expected = std::min(declared, file.size() / 4) * (banner.symmetric ? 2 : 1);
  edges.sources.reserve(expected);
  edges.targets.reserve(expected);
  if (edges.weighted) edges.weights.reserve(expected);

  const std::size_t entry_fields = banner.field == mm_field::pattern ? 2 : 3;
  std::uint64_t entries = 0;
  while (lines.next(line)) {
    if (is_blank_or_comment(line, "%")) continue;
    if (entries == declared) {
      lines.fail("more entries than the " + std::to_string(declared) + " the size line (line " +
                 std::to_string(size_line) + ") declares");
    }
    const std::size_t count = split_fields(line, fields);
    if (count != entry_fields) {
      lines.fail("expected " + std::string(entry_fields == 2 ? "'row col'" : "'row col value'") +
                 ", found " + std::to_string(count) + " fields");
    }
    std::array<std::uint64_t, 2> index{};
    const std::array<std::uint64_t, 2> limit{rows, cols};
    for (std::size_t i = 0; i < 2; ++i) {
      const auto value = parse_unsigned(fields[i]);
      if (!value) lines.fail(quoted(fields[i]) + " is not an index (a positive integer)");
      if (*value < 1 || *value > limit[i]) {
        lines.fail(std::string(i == 0 ? "row" : "column") + " index " + std::to_string(*value) +
                   " is outside 1.." + std::to_string(limit[i]) + " (the size line, line " +
                   std::to_string(size_line) + ")");
      }
      index[i] = *value - 1;
    }
    float weight = 0;
    if (banner.field == mm_field::integer) {
      const auto value = parse_signed(fields[2]);
      if (!value) lines.fail(quoted(fields[2]) + " is not an integer value");
      weight = static_cast<float>(*value);
    } else if (banner.field == mm_field::real) {
      const auto value = parse_float(fields[2]);
      if (!value) lines.fail(quoted(fields[2]) + " is not a finite real value");
      weight = *value;
    }
    auto add = [&](std::uint64_t from, std::uint64_t to) {
      edges.sources.push_back(from);
      edges.targets.push_back(to);
      if (edges.weighted) edges.weights.push_back(weight);
    };
    add(index[0], index[1]);
    // Symmetric storage keeps one triangle: an off-diagonal entry stands for both directions.
    if (banner.symmetric && index[0] != index[1]) add(index[1], index[0]);
    ++entries;
  }
  if (entries != declared) {
    lines.fail("file ends after " + std::to_string(entries) + " of the " +
               std::to_string(declared) + " entries the size line (line " +
               std::to_string(size_line) + ") declares");
  }
  return edges;
}

}  // namespace bam::graph
