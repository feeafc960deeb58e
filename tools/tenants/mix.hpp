#pragma once
/// @file
/// Tenant mixes for the multi-tenant study (`bam tenants`): which workloads share one cache.
/// A mix is a list of tenant kinds ("bfs,gather"); presets name the study's sets of mixes.

#include <cstdint>
#include <string>
#include <vector>

namespace bam::tenants {

/// A tenant's workload: BFS or connected components over a graph's neighbour ids, a random
/// gather or a sequential scan over an array of 8-byte values.
enum class tenant_kind : std::uint8_t { bfs, cc, gather, scan };

inline constexpr tenant_kind all_kinds[] = {tenant_kind::bfs, tenant_kind::cc, tenant_kind::gather,
                                            tenant_kind::scan};

const char* to_string(tenant_kind k);
/// Throws bam::input_error for a name that is not bfs, cc, gather or scan.
tenant_kind parse_kind(const std::string& name);
[[nodiscard]] inline bool uses_graph(tenant_kind k) {
  return k == tenant_kind::bfs || k == tenant_kind::cc;
}

using mix = std::vector<tenant_kind>;

/// "bfs,gather".
std::string to_string(const mix& m);

/// Expands one --mix value into mixes. Accepted, several separated by ';':
///   a list of kinds           "bfs,cc,gather"
///   homogeneous               2, 3 and 4 copies of each kind (12 mixes)
///   pairs | triples | all     every set of 2, 3 or 4 different kinds (6, 4, 1)
///   random:N[:SEED]           N mixes of 3 to 5 tenants drawn at random (at least two kinds)
///   study                     homogeneous; pairs; triples; all; random:4
/// Throws bam::input_error for anything else, or a mix of fewer than 1 or more than
/// `max_tenants` tenants.
std::vector<mix> expand_mixes(const std::string& text, unsigned max_tenants = 8);

}  // namespace bam::tenants
