#pragma once
/// @file
/// The study's output: a table per mix on a stream, and the JSON document (the benchmarks'
/// style: "command", "machine", "config", then one object per mix).

#include <ostream>
#include <string>
#include <vector>

#include "common/json_writer.hpp"
#include "tenants/study.hpp"

namespace bam::tenants {

/// Per tenant: alone, shared and slowdown under each translation; then weighted speedups, their
/// ratio (two_level / base, when both ran) and unfairness.
void print_mix(std::ostream& out, const study_config& config, const mix_result& r);

/// The whole study as JSON.
void write_study_json(tools::json_writer& j, const study_config& config,
                      const std::vector<mix_result>& mixes);

/// Index of `t` in config.translations, or -1.
int translation_index(const study_config& config, translation_kind t);

}  // namespace bam::tenants
