#pragma once
/// @file
/// A short aligned text table for command and benchmark output.

#include <ostream>
#include <string>
#include <vector>

namespace bam::tools {

class table {
 public:
  explicit table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace bam::tools
