#include <bam/graph/bcsr_writer.hpp>

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include <bam/error.hpp>

#include "graph/staged_file.hpp"

namespace bam::graph {

bcsr_writer::bcsr_writer(const std::filesystem::path& destination, const bcsr_shape& shape)
    : header_(make_bcsr_header(shape)) {
  file_ = std::make_unique<staged_file>(destination);
  mapped_bytes_ = bcsr_file_bytes(header_);
  file_->reserve(mapped_bytes_);
  void* map = ::mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, file_->fd(), 0);
  if (map == MAP_FAILED) {
    throw error("cannot map '" + file_->temporary().string() + "' (" +
                std::to_string(mapped_bytes_) + " bytes): " + std::strerror(errno));
  }
  map_ = static_cast<std::byte*>(map);
}

bcsr_writer::~bcsr_writer() {
  if (map_ != nullptr) ::munmap(map_, mapped_bytes_);
}

std::span<std::uint64_t> bcsr_writer::offsets() {
  return {reinterpret_cast<std::uint64_t*>(map_ + header_.offsets.offset),
          header_.vertex_count + 1};
}

std::span<std::uint64_t> bcsr_writer::neighbors64() {
  if (header_.id_bytes != 8) throw error("neighbors64() on a file with 4-byte ids");
  return {reinterpret_cast<std::uint64_t*>(map_ + header_.neighbors.offset), header_.edge_count};
}

std::span<std::uint32_t> bcsr_writer::neighbors32() {
  if (header_.id_bytes != 4) throw error("neighbors32() on a file with 8-byte ids");
  return {reinterpret_cast<std::uint32_t*>(map_ + header_.neighbors.offset), header_.edge_count};
}

std::span<float> bcsr_writer::weights() {
  if (!header_.weighted()) return {};
  return {reinterpret_cast<float*>(map_ + header_.weights.offset), header_.edge_count};
}

std::span<std::uint64_t> bcsr_writer::hubs64() {
  if (!header_.has_hubs() || header_.id_bytes != 8) {
    throw error("hubs64() on a file without hubs or with 4-byte ids");
  }
  return {reinterpret_cast<std::uint64_t*>(map_ + header_.hubs.offset),
          header_.vertex_count * header_.hubs_per_vertex()};
}

std::span<std::uint32_t> bcsr_writer::hubs32() {
  if (!header_.has_hubs() || header_.id_bytes != 4) {
    throw error("hubs32() on a file without hubs or with 8-byte ids");
  }
  return {reinterpret_cast<std::uint32_t*>(map_ + header_.hubs.offset),
          header_.vertex_count * header_.hubs_per_vertex()};
}

void bcsr_writer::shrink_edges(std::uint64_t edge_count) {
  if (edge_count > header_.edge_count) throw error("shrink_edges() cannot grow the graph");
  bcsr_header smaller = make_bcsr_header({.vertex_count = header_.vertex_count,
                                          .edge_count = edge_count,
                                          .id_bytes = header_.id_bytes,
                                          .weighted = header_.weighted(),
                                          .hub_count = header_.hubs_per_vertex()});
  smaller.flags = header_.flags;
  // The sections after the (now shorter) neighbours move down, weights first: each lands
  // below where it was, so the weights never overwrite hubs not yet moved.
  if (header_.weighted()) {
    std::memmove(map_ + smaller.weights.offset, map_ + header_.weights.offset,
                 smaller.weights.bytes);
  }
  if (header_.has_hubs()) {
    std::memmove(map_ + smaller.hubs.offset, map_ + header_.hubs.offset, smaller.hubs.bytes);
  }
  header_ = smaller;
}

void bcsr_writer::commit() {
  std::memcpy(map_, &header_, sizeof header_);
  // Bytes past the struct, padding and anything shrink_edges() left behind the last section
  // are zeroed so the file's bytes depend only on the graph.
  std::memset(map_ + sizeof header_, 0, header_.offsets.offset - sizeof header_);
  const std::uint64_t final_bytes = bcsr_file_bytes(header_);
  auto zero_gap = [&](std::uint64_t from, std::uint64_t to) {
    if (to > from) std::memset(map_ + from, 0, to - from);
  };
  zero_gap(header_.offsets.offset + header_.offsets.bytes, header_.neighbors.offset);
  std::uint64_t end = header_.neighbors.offset + header_.neighbors.bytes;
  for (const bcsr_section* s : {&header_.weights, &header_.hubs}) {
    if (s->bytes == 0 && s->offset == 0) continue;
    zero_gap(end, s->offset);
    end = s->offset + s->bytes;
  }
  zero_gap(end, final_bytes);
  if (::munmap(map_, mapped_bytes_) != 0) {
    throw error("cannot unmap '" + file_->temporary().string() + "': " + std::strerror(errno));
  }
  map_ = nullptr;
  if (final_bytes != mapped_bytes_) file_->truncate(final_bytes);
  file_->commit();
}

}  // namespace bam::graph
