#include "common/machine_info.hpp"

#include <unistd.h>

#include <ctime>
#include <fstream>
#include <thread>

#include <bam/runtime/gpu_info.hpp>

#ifndef BAM_GIT_COMMIT
#define BAM_GIT_COMMIT "unknown"
#endif

namespace bam::tools {

machine_info read_machine_info() {
  machine_info m;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) m.host = host;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) m.cpu = line.substr(colon + 2);
      break;
    }
  }
  m.cpu_threads = std::thread::hardware_concurrency();
  m.gpu = bam::gpu_description();
  m.commit = BAM_GIT_COMMIT;
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  m.time_utc = stamp;
  return m;
}

void write_json(json_writer& j, const machine_info& m) {
  j.begin_object()
      .field("host", m.host)
      .field("cpu", m.cpu)
      .field("cpu_threads", m.cpu_threads)
      .field("gpu", m.gpu)
      .field("commit", m.commit)
      .field("time_utc", m.time_utc)
      .end_object();
}

}  // namespace bam::tools
