#pragma once
/// @file
/// What a result was measured on: host, CPU, GPU (when present), bam commit. Written into
/// every benchmark's JSON.

#include <string>

#include "common/json_writer.hpp"

namespace bam::tools {

struct machine_info {
  std::string host;
  std::string cpu;
  unsigned cpu_threads = 0;
  std::string gpu;  ///< empty on the CPU path
  std::string commit;
  std::string time_utc;
};

/// Reads the machine (the GPU part comes from the runtime when one is present).
machine_info read_machine_info();

/// Writes `info` as the value of the current key.
void write_json(json_writer& j, const machine_info& info);

}  // namespace bam::tools
