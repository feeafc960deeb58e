#pragma once
/// @file
/// The binary CSR graph file (`.bcsr`) that bam's graph apps read. Host only, plain C++.
///
/// Layout (little endian; docs/graph-format.md is the reference):
///
///     [0, 4096)          header (bcsr_header, then zeros)
///     offsets section    n+1 u64: vertex v's neighbours are [offsets[v], offsets[v+1])
///     neighbors section  m vertex ids, id_bytes (8 or 4) each
///     weights section    m f32 (only when the weighted flag is set)
///     hubs section       n x k vertex ids, id_bytes each (only when the hubs flag is set;
///                        k = hubs_per_vertex())
///
/// Every section starts at a multiple of `section_alignment` (65536), so for any cache line
/// size up to 64 KiB a line aligned to the file's byte addresses never splits an element, and
/// each section's first element starts a line.

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

namespace bam::graph {

/// The first 8 bytes of every .bcsr file.
inline constexpr std::array<char, 8> bcsr_magic{'B', 'A', 'M', '-', 'B', 'C', 'S', 'R'};
/// The only format version this build reads and writes.
inline constexpr std::uint32_t bcsr_version = 1;
/// Bytes reserved for the header at the start of the file (the struct, then zeros).
inline constexpr std::uint32_t bcsr_header_bytes = 4096;
/// Every section starts at a multiple of this (the largest cache line the apps use).
inline constexpr std::uint32_t bcsr_section_alignment = 65536;

/// Bits of bcsr_header::flags. Unknown bits make a reader reject the file.
namespace bcsr_flags {
/// For every u->v there is a v->u, as many times (the graph is undirected, stored both ways).
inline constexpr std::uint32_t symmetric = 1u << 0;
/// A weights section (one f32 per edge, in neighbour order) follows the neighbours.
inline constexpr std::uint32_t weighted = 1u << 1;
/// Each adjacency list is in ascending neighbour order.
inline constexpr std::uint32_t sorted = 1u << 2;
/// No self loops and no duplicate edges.
inline constexpr std::uint32_t simple = 1u << 3;
/// A hubs section follows the others: per vertex, its k neighbours of highest out-degree
/// (bcsr_header::hub_count; ties to the smallest id), highest first, the vertex itself filling
/// the places its list has no neighbour for. A bottom-up BFS step looks there first (on a
/// power-law graph a hub is usually a parent) and reads the list only when none is.
inline constexpr std::uint32_t hubs = 1u << 4;
inline constexpr std::uint32_t all = symmetric | weighted | sorted | simple | hubs;
}  // namespace bcsr_flags

/// The most hubs per vertex a file may hold (bcsr_header::hub_count).
inline constexpr std::uint32_t bcsr_max_hub_count = 8;
/// Hubs per vertex that `bam graph gen` and `convert` write unless told otherwise (`--hubs K`).
/// Two: on a power-law graph the first is most vertices' parent, and a second finds most of the
/// rest on a uniform random graph, whose lists are then left unread (H100, 4 devices: urand25
/// BFS 0.181 s against 0.309 s with one, kron25 0.027 s against 0.073 s; docs/apps.md, "Hubs").
/// Each costs n ids in the file and in the GPU's memory.
inline constexpr std::uint32_t bcsr_default_hub_count = 2;

/// Where one section lies in the file.
struct bcsr_section {
  std::uint64_t offset;  ///< first byte; a multiple of section_alignment
  std::uint64_t bytes;   ///< length without padding
};

/// The header at byte 0 of a .bcsr file, exactly as stored (little endian, no padding).
struct bcsr_header {
  std::array<char, 8> magic;              ///< bcsr_magic
  std::uint32_t version;                  ///< bcsr_version
  std::uint32_t flags;                    ///< bcsr_flags bits
  std::uint64_t vertex_count;             ///< n
  std::uint64_t edge_count;               ///< m: directed edges stored (entries in neighbors)
  std::uint32_t id_bytes;                 ///< bytes per neighbour id: 8, or 4 when n <= 2^32
  std::uint32_t weight_bytes;             ///< 4 (f32) when weighted, else 0
  std::uint32_t header_bytes;             ///< bcsr_header_bytes
  std::uint32_t section_alignment;        ///< bcsr_section_alignment
  bcsr_section offsets;                   ///< (n+1) x u64
  bcsr_section neighbors;                 ///< m x id_bytes
  bcsr_section weights;                   ///< m x f32, or {0, 0} when unweighted
  bcsr_section hubs;                      ///< n x k x id_bytes, or {0, 0} without the hubs flag
  std::uint32_t hub_count;                ///< k, hubs per vertex; 0 reads as 1 (older files)
  std::array<std::uint8_t, 12> reserved;  ///< zero

  [[nodiscard]] bool symmetric() const { return (flags & bcsr_flags::symmetric) != 0; }
  [[nodiscard]] bool weighted() const { return (flags & bcsr_flags::weighted) != 0; }
  [[nodiscard]] bool sorted() const { return (flags & bcsr_flags::sorted) != 0; }
  [[nodiscard]] bool simple() const { return (flags & bcsr_flags::simple) != 0; }
  [[nodiscard]] bool has_hubs() const { return (flags & bcsr_flags::hubs) != 0; }
  /// k: the hubs section's entries per vertex (0 without one).
  [[nodiscard]] std::uint32_t hubs_per_vertex() const {
    return has_hubs() ? (hub_count == 0 ? 1 : hub_count) : 0;
  }
};

// The apps and docs/graph-format.md rely on these byte positions.
static_assert(sizeof(bcsr_section) == 16);
static_assert(sizeof(bcsr_header) == 128);
static_assert(std::is_trivially_copyable_v<bcsr_header> && std::is_standard_layout_v<bcsr_header>);
static_assert(offsetof(bcsr_header, version) == 8);
static_assert(offsetof(bcsr_header, flags) == 12);
static_assert(offsetof(bcsr_header, vertex_count) == 16);
static_assert(offsetof(bcsr_header, edge_count) == 24);
static_assert(offsetof(bcsr_header, id_bytes) == 32);
static_assert(offsetof(bcsr_header, weight_bytes) == 36);
static_assert(offsetof(bcsr_header, header_bytes) == 40);
static_assert(offsetof(bcsr_header, section_alignment) == 44);
static_assert(offsetof(bcsr_header, offsets) == 48);
static_assert(offsetof(bcsr_header, neighbors) == 64);
static_assert(offsetof(bcsr_header, weights) == 80);
static_assert(offsetof(bcsr_header, hubs) == 96);
static_assert(offsetof(bcsr_header, hub_count) == 112);
static_assert(offsetof(bcsr_header, reserved) == 116);
static_assert(sizeof(bcsr_header) <= bcsr_header_bytes);

/// What a graph file holds, before its layout is known.
struct bcsr_shape {
  std::uint64_t vertex_count = 0;
  std::uint64_t edge_count = 0;
  std::uint32_t id_bytes = 8;  ///< 8, or 4 when every id fits in 32 bits
  bool weighted = false;
  std::uint32_t hub_count = 0;  ///< hubs per vertex (bcsr_flags::hubs); 0: no hubs section
};

/// The header a writer stores for `shape`: sections in the order offsets, neighbours, weights,
/// hubs, each at the next multiple of 64 KiB. Flags other than `weighted` and `hubs` are left
/// clear. Throws bam::input_error when the shape cannot be stored (id width, counts too large,
/// more than bcsr_max_hub_count hubs per vertex).
[[nodiscard]] bcsr_header make_bcsr_header(const bcsr_shape& shape);

/// The file length a writer gives `header`: the end of the last section, rounded up to the
/// section alignment (so a reader may fetch whole 64 KiB lines without running off the end).
[[nodiscard]] std::uint64_t bcsr_file_bytes(const bcsr_header& header);

/// Checks everything in `header` that needs no more of the file than its length: magic,
/// version, flags, widths, every section aligned, sized for n and m, in order, inside the
/// file. Throws bam::input_error starting with `name` and saying what is wrong.
void validate_header(const bcsr_header& header, std::uint64_t file_bytes, const std::string& name);

/// Reads and validates the header of `path` (validate_header, plus offsets[0] == 0 and
/// offsets[n] == m). Throws bam::input_error naming the file and the problem.
[[nodiscard]] bcsr_header read_header(const std::filesystem::path& path);

/// Reads the n+1 vertex offsets of `path`, checking they never decrease. Throws
/// bam::input_error naming the file and the byte offset of the first bad value.
[[nodiscard]] std::vector<std::uint64_t> load_offsets(const std::filesystem::path& path);

/// A file's hubs section in memory: vertex v's hubs are ids[v * per_vertex + j], j < per_vertex.
struct hub_table {
  std::uint32_t per_vertex = 0;    ///< k (0: the file has no hubs)
  std::vector<std::uint64_t> ids;  ///< n x k, widened to u64

  [[nodiscard]] bool empty() const { return ids.empty(); }
  /// The first k of each vertex's hubs (the k of highest degree); k at most per_vertex.
  [[nodiscard]] hub_table first(std::uint32_t k) const;
};

/// Reads the hubs section of `path` (empty when the file has none), checking that every id is
/// below n. Throws bam::input_error naming the file and the first bad entry. Whether the hubs
/// are each vertex's neighbours of highest degree is checked by `bam graph info`, which reads
/// the lists; a reader trusts them as it trusts the lists.
[[nodiscard]] hub_table load_hubs(const std::filesystem::path& path);

}  // namespace bam::graph
