#include <bam/error.hpp>

#include <cstdio>

#include <bam/nvme/status.hpp>

namespace bam {

namespace {
std::string located(const std::string& what, const std::source_location& where) {
  std::string file = where.file_name();
  const auto slash = file.find_last_of('/');
  if (slash != std::string::npos) file = file.substr(slash + 1);
  return file + ":" + std::to_string(where.line()) + ": " + what;
}

std::string describe(const nvme_error::details& d, const std::string& context) {
  const io_status s = io_status::from_bits(d.status);
  char status_hex[16];
  std::snprintf(status_hex, sizeof status_hex, "0x%04x", s.status_field());
  std::string text = (context.empty() ? std::string() : context + ": ") + s.name();
  if (s.source() == status_source::device) {
    text += " (SCT " + std::to_string(s.sct()) + ", SC " + std::to_string(s.sc()) +
            ", status field " + status_hex + ")";
  }
  text += " on device " + std::to_string(d.device) + ", queue " + std::to_string(d.queue) +
          ", command id " + std::to_string(d.command_id) + ", LBA " + std::to_string(d.lba);
  return text;
}
}  // namespace

error::error(const std::string& what, std::source_location where)
    : std::runtime_error(located(what, where)), message_(what) {}

nvme_error::nvme_error(const details& d, const std::string& context, std::source_location where)
    : error(describe(d, context), where), details_(d) {}

}  // namespace bam
