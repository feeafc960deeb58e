// `bam graph export`: a .bcsr file streamed out as an edge list, Matrix Market or EMOGI files.

#include <bit>
#include <charconv>
#include <cmath>
#include <memory>
#include <string>

#include <bam/error.hpp>

#include "common/output_paths.hpp"
#include "graph/bcsr_checks.hpp"
#include "graph/formats.hpp"
#include "graph/mapped_file.hpp"
#include "graph/staged_file.hpp"

namespace bam::graph {

namespace {

// Edge-by-edge access to a mapped .bcsr file: the offsets are checked whole before any output
// is created (an offset that drops would send a walk outside the file); each id as it is read.
class bcsr_stream {
 public:
  explicit bcsr_stream(const std::filesystem::path& path)
      : header_(read_header(path)), file_(path) {
    check_offsets(file_, header_);
    file_.advise_sequential();
  }
  [[nodiscard]] const bcsr_header& header() const { return header_; }
  [[nodiscard]] std::uint64_t vertex_count() const { return header_.vertex_count; }
  [[nodiscard]] std::uint64_t edge_count() const { return header_.edge_count; }

  [[nodiscard]] std::uint64_t offset(std::uint64_t v) const {
    return file_.load<std::uint64_t>(header_.offsets.offset + v * 8);
  }
  [[nodiscard]] std::uint64_t neighbor(std::uint64_t e) const {
    const std::uint64_t at = header_.neighbors.offset + e * header_.id_bytes;
    const std::uint64_t v =
        header_.id_bytes == 8 ? file_.load<std::uint64_t>(at) : file_.load<std::uint32_t>(at);
    if (v >= header_.vertex_count) {
      throw input_error(file_.name() + ": byte " + std::to_string(at) + ": neighbour id " +
                        std::to_string(v) + " is not below the vertex count " +
                        std::to_string(header_.vertex_count));
    }
    return v;
  }
  [[nodiscard]] float weight(std::uint64_t e) const {
    return file_.load<float>(header_.weights.offset + e * sizeof(float));
  }

  /// Calls visit(source, target, edge index) for every edge in file order.
  template <class Visit>
  void for_each_edge(Visit visit) const {
    std::uint64_t begin = offset(0);
    for (std::uint64_t u = 0; u < vertex_count(); ++u) {
      const std::uint64_t end = offset(u + 1);
      for (std::uint64_t e = begin; e < end; ++e) visit(u, neighbor(e), e);
      begin = end;
    }
  }

 private:
  bcsr_header header_;
  mapped_file file_;
};

// One text line built in a small buffer.
class line_builder {
 public:
  line_builder& number(std::uint64_t value) {
    separate();
    at_ = std::to_chars(at_, end(), value).ptr;
    return *this;
  }
  line_builder& number(float value) {
    separate();
    at_ = std::to_chars(at_, end(), value).ptr;  // shortest text that reads back exactly
    return *this;
  }
  [[nodiscard]] std::string_view finish() {
    *at_++ = '\n';
    const std::string_view line(text_, static_cast<std::size_t>(at_ - text_));
    at_ = text_;
    return line;
  }

 private:
  void separate() {
    if (at_ != text_) *at_++ = ' ';
  }
  char* end() { return text_ + sizeof text_; }
  char text_[96];
  char* at_ = text_;
};

void write_edge_list(const bcsr_stream& in, const std::filesystem::path& out) {
  staged_file file(out);
  file_writer writer(file);
  line_builder line;
  in.for_each_edge([&](std::uint64_t u, std::uint64_t v, std::uint64_t e) {
    line.number(u).number(v);
    if (in.header().weighted()) line.number(in.weight(e));
    writer.write(line.finish());
  });
  writer.flush();
  file.commit();
}

void write_matrix_market(const bcsr_stream& in, const std::filesystem::path& out) {
  staged_file file(out);
  file_writer writer(file);
  const bool weighted = in.header().weighted();
  // Always "general": every stored edge is written, so reading the file back gives the same
  // lists whether or not the graph is symmetric.
  writer.write(weighted ? "%%MatrixMarket matrix coordinate real general\n"
                        : "%%MatrixMarket matrix coordinate pattern general\n");
  writer.write("% written by bam graph export from a .bcsr file\n");
  line_builder line;
  writer.write(
      line.number(in.vertex_count()).number(in.vertex_count()).number(in.edge_count()).finish());
  in.for_each_edge([&](std::uint64_t u, std::uint64_t v, std::uint64_t e) {
    line.number(u + 1).number(v + 1);
    if (weighted) line.number(in.weight(e));
    writer.write(line.finish());
  });
  writer.flush();
  file.commit();
}

std::uint32_t bel_value_bits(const bcsr_stream& in, std::uint64_t e, bel_value_type type) {
  const float w = in.weight(e);
  if (type == bel_value_type::f32) return std::bit_cast<std::uint32_t>(w);
  if (!(w >= 0.0f && w <= 4294967295.0f) || std::floor(w) != w) {
    std::string text(32, '\0');
    text.resize(static_cast<std::size_t>(std::to_chars(text.data(), text.data() + 32, w).ptr -
                                         text.data()));
    throw input_error("edge " + std::to_string(e) + " has weight " + text +
                      ", which .bel u32 values cannot hold (use --bel-values f32)");
  }
  return static_cast<std::uint32_t>(w);
}

void write_bel(const bcsr_stream& in, const std::filesystem::path& out, bel_value_type type) {
  const bel_paths paths = bel_paths_for(out);
  constexpr std::uint64_t type_word = 0;  // EMOGI writes 0 and never reads it
  {
    // Offsets and ids go to separate files; write each in one sequential sweep.
    staged_file col(paths.col);
    file_writer col_out(col);
    col_out.write_u64(in.vertex_count() + 1);
    col_out.write_u64(type_word);
    for (std::uint64_t v = 0; v <= in.vertex_count(); ++v) col_out.write_u64(in.offset(v));
    col_out.flush();

    staged_file dst(paths.dst);
    file_writer dst_out(dst);
    dst_out.write_u64(in.edge_count());
    dst_out.write_u64(type_word);
    for (std::uint64_t e = 0; e < in.edge_count(); ++e) dst_out.write_u64(in.neighbor(e));
    dst_out.flush();

    std::unique_ptr<staged_file> val;
    if (in.header().weighted()) {
      val = std::make_unique<staged_file>(paths.val);
      file_writer val_out(*val);
      val_out.write_u64(in.edge_count());
      val_out.write_u64(type_word);
      for (std::uint64_t e = 0; e < in.edge_count(); ++e) {
        const std::uint32_t bits = bel_value_bits(in, e, type);
        val_out.write_raw(&bits, sizeof bits);
      }
      val_out.flush();
    }
    // Only once every file is complete does any of them appear.
    col.commit();
    dst.commit();
    if (val) val->commit();
  }
  if (!in.header().weighted()) {
    // A stale X.bel.val from an earlier weighted export would make readers see weights.
    std::error_code ec;
    std::filesystem::remove(paths.val, ec);
  }
}

}  // namespace

void export_graph(const std::filesystem::path& bcsr_path, const std::filesystem::path& out,
                  graph_format format, bel_value_type values) {
  if (format == graph_format::bel) {
    const bel_paths paths = bel_paths_for(out);
    for (const auto& path : {paths.col, paths.dst, paths.val}) {
      tools::refuse_same_file(bcsr_path, "input", path, "output");
    }
  } else {
    tools::refuse_same_file(bcsr_path, "input", out, "output");
  }
  const bcsr_stream in(bcsr_path);
  switch (format) {
    case graph_format::el:
      write_edge_list(in, out);
      break;
    case graph_format::mtx:
      write_matrix_market(in, out);
      break;
    case graph_format::bel:
      write_bel(in, out, values);
      break;
  }
}

}  // namespace bam::graph
