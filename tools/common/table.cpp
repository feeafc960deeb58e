#include "common/table.hpp"

#include <algorithm>
#include <iomanip>

namespace bam::tools {

void table::print(std::ostream& out) const {
  std::vector<std::size_t> widths(header_.size());
  for (std::size_t c = 0; c < header_.size(); ++c) widths[c] = header_[c].size();
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size() && c < widths.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < widths.size(); ++c) {
      const std::string& cell = c < cells.size() ? cells[c] : std::string();
      out << (c ? "  " : "") << std::setw(static_cast<int>(widths[c]))
          << (c == 0 ? std::left : std::right) << cell;
    }
    out << std::right << '\n';
  };
  line(header_);
  std::size_t total = 0;
  for (const std::size_t w : widths) total += w + 2;
  out << std::string(total > 2 ? total - 2 : 0, '-') << '\n';
  for (const auto& row : rows_) line(row);
}

}  // namespace bam::tools
