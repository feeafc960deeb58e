// The .bcsr header: layout for a shape, validation, and the cheap reads (header, offsets).

#include <bam/graph/bcsr.hpp>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include <bam/error.hpp>

#include "graph/bcsr_checks.hpp"
#include "graph/mapped_file.hpp"

namespace bam::graph {

// The format is little endian and the code stores native integers into it.
static_assert(std::endian::native == std::endian::little,
              "bam's .bcsr code needs a little-endian host");

namespace {

// Caps that keep every byte count below 2^63, so the layout arithmetic cannot overflow.
constexpr std::uint64_t max_vertex_count = std::uint64_t{1} << 48;
constexpr std::uint64_t max_edge_count = std::uint64_t{1} << 52;

constexpr std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

void check_section(const std::string& name, const char* section, const bcsr_section& s,
                   std::uint64_t expected_bytes, std::uint64_t earliest, std::uint64_t alignment,
                   std::uint64_t file_bytes) {
  auto bad = [&](const std::string& what) {
    return input_error(name + ": " + section + " section " + what);
  };
  if (s.bytes != expected_bytes) {
    throw bad("is " + std::to_string(s.bytes) + " bytes; the counts need " +
              std::to_string(expected_bytes));
  }
  if (s.offset % alignment != 0) {
    throw bad("starts at byte " + std::to_string(s.offset) + ", not a multiple of " +
              std::to_string(alignment));
  }
  if (s.offset < earliest) {
    throw bad("starts at byte " + std::to_string(s.offset) +
              ", inside the header or the section before it (which ends at " +
              std::to_string(earliest) + ")");
  }
  if (s.offset > file_bytes || s.bytes > file_bytes - s.offset) {
    throw bad("ends at byte " + std::to_string(s.offset + s.bytes) + ", past the end of the " +
              std::to_string(file_bytes) + "-byte file (truncated?)");
  }
}

// The end of the last section before the hubs section (neighbours, or weights when weighted).
std::uint64_t end_before_hubs(const bcsr_header& h) {
  return h.weighted() ? h.weights.offset + h.weights.bytes : h.neighbors.offset + h.neighbors.bytes;
}

}  // namespace

bcsr_header make_bcsr_header(const bcsr_shape& shape) {
  if (shape.id_bytes != 4 && shape.id_bytes != 8) {
    throw input_error("vertex ids are 4 or 8 bytes, not " + std::to_string(shape.id_bytes));
  }
  if (shape.vertex_count > max_vertex_count || shape.edge_count > max_edge_count) {
    throw input_error("graph too large for a .bcsr file: " + std::to_string(shape.vertex_count) +
                      " vertices, " + std::to_string(shape.edge_count) + " edges");
  }
  if (shape.id_bytes == 4 && shape.vertex_count > (std::uint64_t{1} << 32)) {
    throw input_error(std::to_string(shape.vertex_count) +
                      " vertices do not fit 4-byte vertex ids (use 8)");
  }
  bcsr_header h{};
  h.magic = bcsr_magic;
  h.version = bcsr_version;
  h.flags = shape.weighted ? bcsr_flags::weighted : 0;
  h.vertex_count = shape.vertex_count;
  h.edge_count = shape.edge_count;
  h.id_bytes = shape.id_bytes;
  h.weight_bytes = shape.weighted ? sizeof(float) : 0;
  h.header_bytes = bcsr_header_bytes;
  h.section_alignment = bcsr_section_alignment;
  h.offsets = {align_up(bcsr_header_bytes, bcsr_section_alignment),
               (shape.vertex_count + 1) * sizeof(std::uint64_t)};
  h.neighbors = {align_up(h.offsets.offset + h.offsets.bytes, bcsr_section_alignment),
                 shape.edge_count * shape.id_bytes};
  if (shape.weighted) {
    h.weights = {align_up(h.neighbors.offset + h.neighbors.bytes, bcsr_section_alignment),
                 shape.edge_count * sizeof(float)};
  }
  if (shape.hub_count > bcsr_max_hub_count) {
    throw input_error(std::to_string(shape.hub_count) + " hubs per vertex: at most " +
                      std::to_string(bcsr_max_hub_count));
  }
  if (shape.hub_count != 0) {
    h.flags |= bcsr_flags::hubs;
    h.hub_count = shape.hub_count;
    h.hubs = {align_up(end_before_hubs(h), bcsr_section_alignment),
              shape.vertex_count * shape.hub_count * shape.id_bytes};
  }
  return h;
}

std::uint64_t bcsr_file_bytes(const bcsr_header& h) {
  const std::uint64_t end =
      std::max({h.offsets.offset + h.offsets.bytes, h.neighbors.offset + h.neighbors.bytes,
                h.weights.offset + h.weights.bytes, h.hubs.offset + h.hubs.bytes});
  return align_up(end, h.section_alignment);
}

void validate_header(const bcsr_header& h, std::uint64_t file_bytes, const std::string& name) {
  auto bad = [&](const std::string& what) { return input_error(name + ": " + what); };
  if (h.magic != bcsr_magic) throw bad("not a bam .bcsr graph (bad magic bytes)");
  if (h.version != bcsr_version) {
    throw bad("format version " + std::to_string(h.version) +
              " is not supported (this build reads version " + std::to_string(bcsr_version) + ")");
  }
  if ((h.flags & ~bcsr_flags::all) != 0) {
    throw bad("unknown flag bits " + hex(h.flags & ~bcsr_flags::all));
  }
  if (h.header_bytes != bcsr_header_bytes) {
    throw bad("header size " + std::to_string(h.header_bytes) + " is not " +
              std::to_string(bcsr_header_bytes));
  }
  if (h.section_alignment < bcsr_section_alignment || !std::has_single_bit(h.section_alignment)) {
    throw bad("section alignment " + std::to_string(h.section_alignment) +
              " is not a power of two of at least " + std::to_string(bcsr_section_alignment));
  }
  if (h.id_bytes != 4 && h.id_bytes != 8) {
    throw bad("vertex id width " + std::to_string(h.id_bytes) + " is not 4 or 8 bytes");
  }
  if (h.weight_bytes != (h.weighted() ? sizeof(float) : 0)) {
    throw bad("weight width " + std::to_string(h.weight_bytes) + " does not match the " +
              (h.weighted() ? "weighted" : "unweighted") + " flag");
  }
  if (h.vertex_count > max_vertex_count || h.edge_count > max_edge_count) {
    throw bad("implausible counts: " + std::to_string(h.vertex_count) + " vertices, " +
              std::to_string(h.edge_count) + " edges");
  }
  if (h.id_bytes == 4 && h.vertex_count > (std::uint64_t{1} << 32)) {
    throw bad(std::to_string(h.vertex_count) + " vertices cannot have 4-byte ids");
  }
  const std::uint64_t a = h.section_alignment;
  check_section(name, "offsets", h.offsets, (h.vertex_count + 1) * sizeof(std::uint64_t),
                h.header_bytes, a, file_bytes);
  check_section(name, "neighbors", h.neighbors, h.edge_count * h.id_bytes,
                h.offsets.offset + h.offsets.bytes, a, file_bytes);
  if (h.weighted()) {
    check_section(name, "weights", h.weights, h.edge_count * sizeof(float),
                  h.neighbors.offset + h.neighbors.bytes, a, file_bytes);
  } else if (h.weights.offset != 0 || h.weights.bytes != 0) {
    throw bad("an unweighted graph has a weights section");
  }
  if (h.hub_count > bcsr_max_hub_count) {
    throw bad(std::to_string(h.hub_count) + " hubs per vertex (at most " +
              std::to_string(bcsr_max_hub_count) + ")");
  }
  if (h.has_hubs()) {
    check_section(name, "hubs", h.hubs, h.vertex_count * h.hubs_per_vertex() * h.id_bytes,
                  end_before_hubs(h), a, file_bytes);
  } else if (h.hubs.offset != 0 || h.hubs.bytes != 0 || h.hub_count != 0) {
    throw bad("a hubs section or hub count without the hubs flag");
  }
}

namespace {

bcsr_header checked_header(const mapped_file& file) {
  if (file.size() < bcsr_header_bytes) {
    throw input_error(file.name() + ": " + std::to_string(file.size()) +
                      " bytes, too short for the " + std::to_string(bcsr_header_bytes) +
                      "-byte .bcsr header (truncated, or not a .bcsr file)");
  }
  const auto h = file.load<bcsr_header>(0);
  validate_header(h, file.size(), file.name());
  const auto first = file.load<std::uint64_t>(h.offsets.offset);
  const auto last =
      file.load<std::uint64_t>(h.offsets.offset + h.vertex_count * sizeof(std::uint64_t));
  if (first != 0) {
    throw input_error(file.name() + ": offsets[0] is " + std::to_string(first) + ", not 0");
  }
  if (last != h.edge_count) {
    throw input_error(file.name() + ": offsets[n] is " + std::to_string(last) +
                      " but the header says " + std::to_string(h.edge_count) + " edges");
  }
  return h;
}

// Throws for the first of offsets[1..n] that is less than the one before it. With
// offsets[0] == 0 and offsets[n] == m (checked already), offsets that never decrease all lie
// in [0, m]. `offset(v)` reads offsets[v].
template <class Offset>
void check_offset_order(const std::string& name, const bcsr_header& h, Offset&& offset) {
  std::uint64_t previous = offset(0);
  for (std::uint64_t v = 1; v <= h.vertex_count; ++v) {
    const std::uint64_t value = offset(v);
    if (value < previous) {
      throw input_error(name + ": byte " +
                        std::to_string(h.offsets.offset + v * sizeof(std::uint64_t)) +
                        ": offsets[" + std::to_string(v) + "] = " + std::to_string(value) +
                        " is less than offsets[" + std::to_string(v - 1) +
                        "] = " + std::to_string(previous) + " (offsets never decrease)");
    }
    previous = value;
  }
}

}  // namespace

void check_offsets(const mapped_file& file, const bcsr_header& h) {
  check_offset_order(file.name(), h, [&](std::uint64_t v) {
    return file.load<std::uint64_t>(h.offsets.offset + v * sizeof(std::uint64_t));
  });
}

bcsr_header read_header(const std::filesystem::path& path) {
  const mapped_file file(path);
  return checked_header(file);
}

std::vector<std::uint64_t> load_offsets(const std::filesystem::path& path) {
  const mapped_file file(path);
  const bcsr_header h = checked_header(file);
  std::vector<std::uint64_t> offsets(h.vertex_count + 1);
  std::memcpy(offsets.data(), file.data() + h.offsets.offset, h.offsets.bytes);
  check_offset_order(file.name(), h, [&](std::uint64_t v) { return offsets[v]; });
  return offsets;
}

hub_table hub_table::first(std::uint32_t k) const {
  if (k > per_vertex) {
    throw input_error("asked for " + std::to_string(k) + " hubs per vertex, but the file holds " +
                      std::to_string(per_vertex));
  }
  if (k == per_vertex) return *this;
  hub_table kept{.per_vertex = k, .ids = {}};
  if (k == 0) return kept;
  const std::uint64_t n = ids.size() / per_vertex;
  kept.ids.resize(n * k);
  for (std::uint64_t v = 0; v < n; ++v) {
    std::copy_n(ids.begin() + static_cast<std::ptrdiff_t>(v * per_vertex), k,
                kept.ids.begin() + static_cast<std::ptrdiff_t>(v * k));
  }
  return kept;
}

hub_table load_hubs(const std::filesystem::path& path) {
  const mapped_file file(path);
  const bcsr_header h = checked_header(file);
  if (!h.has_hubs()) return {};
  hub_table hubs{.per_vertex = h.hubs_per_vertex(),
                 .ids = std::vector<std::uint64_t>(h.vertex_count * h.hubs_per_vertex())};
  const std::byte* at = file.data() + h.hubs.offset;
  if (h.id_bytes == 8) {
    std::memcpy(hubs.ids.data(), at, h.hubs.bytes);
  } else {
    for (std::uint64_t i = 0; i < hubs.ids.size(); ++i) {
      std::uint32_t id;
      std::memcpy(&id, at + i * sizeof id, sizeof id);
      hubs.ids[i] = id;
    }
  }
  for (std::uint64_t i = 0; i < hubs.ids.size(); ++i) {
    if (hubs.ids[i] >= h.vertex_count) {
      throw input_error(file.name() + ": byte " + std::to_string(h.hubs.offset + i * h.id_bytes) +
                        ": hub " + std::to_string(i % hubs.per_vertex) + " of vertex " +
                        std::to_string(i / hubs.per_vertex) + " is " + std::to_string(hubs.ids[i]) +
                        ", not below the vertex count " + std::to_string(h.vertex_count));
    }
  }
  return hubs;
}

}  // namespace bam::graph
