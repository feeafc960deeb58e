// The image of a mix: every tenant's own copy of its data, one region each.

#include <algorithm>
#include <cstring>

#include <bam/error.hpp>

#include "apps/gather_scan.hpp"
#include "tenants/study.hpp"

namespace bam::tenants {

namespace {

// Regions start on a large frame (2 MiB), so a dense tenant's pieces line up with frames.
constexpr std::uint64_t region_align = 2ull << 20;

std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

}  // namespace

tenant_data::tenant_data(const study_config& config, const mix& m) {
  const bool needs_graph = std::any_of(m.begin(), m.end(), uses_graph);
  std::shared_ptr<backing_store> graph_image;
  if (needs_graph) {
    if (config.graph.empty()) {
      throw input_error("the mix '" + to_string(m) + "' has bfs or cc tenants: give --graph");
    }
    graph_.emplace(apps::graph_file::open(config.graph));
    if (graph_->edge_count() == 0) throw input_error("the graph has no edges");
    graph_image = backing_store::from_file(config.graph.string(), false);
    source_ = apps::max_degree_vertex(graph_->offset_span());
  }
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < m.size(); ++i) {
    tenant_spec t;
    t.kind = m[i];
    t.name = std::string(to_string(m[i])) + "." + std::to_string(i);
    t.offset = at;
    if (uses_graph(t.kind)) {
      t.bytes = graph_->neighbour_bytes();
      t.elements = graph_->edge_count();
    } else {
      const std::uint64_t bytes =
          t.kind == tenant_kind::gather ? config.gather_bytes : config.scan_bytes;
      t.elements = std::max<std::uint64_t>(bytes / sizeof(std::uint64_t), 1);
      t.bytes = t.elements * sizeof(std::uint64_t);
    }
    at = round_up(at + t.bytes, region_align);
    tenants_.push_back(t);
  }
  // The devices read whole lines: the image ends on a region boundary.
  image_ = backing_store::in_memory(std::max(at, region_align),
                                    config.gpu ? memory_kind::pinned : memory_kind::host);
  for (tenant_spec& t : tenants_) {
    std::uint8_t* dst = image_->data() + t.offset;
    if (uses_graph(t.kind)) {
      std::memcpy(dst, graph_image->data() + graph_->header.neighbors.offset, t.bytes);
      continue;
    }
    auto* values = reinterpret_cast<std::uint64_t*>(dst);
    for (std::uint64_t i = 0; i < t.elements; ++i) values[i] = apps::synthetic_value(i);
    const std::uint64_t reads = config.gather_reads ? config.gather_reads : t.elements;
    t.expected = t.kind == tenant_kind::gather ? apps::expected_gather(t.elements, reads)
                                               : apps::expected_scan(t.elements);
  }
}

std::uint64_t tenant_data::data_bytes() const {
  std::uint64_t total = 0;
  for (const tenant_spec& t : tenants_) total += t.bytes;
  return total;
}

}  // namespace bam::tenants
