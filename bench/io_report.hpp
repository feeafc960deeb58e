#pragma once
/// @file
/// What the GPU benchmarks (`bam bench io`, `bam bench cache --side gpu`) print and write: a
/// figure is a list of records (points, ceilings), each a list of named values; the table shows
/// chosen columns, the JSON every field. Plain C++.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace bam::bench {

/// One named value of a record.
using report_value = std::variant<std::uint64_t, double, std::string>;

/// A row of a figure: named values in insertion order.
struct report_record {
  std::vector<std::pair<std::string, report_value>> fields;

  report_record& set(const std::string& name, report_value v);
  report_record& set(const std::string& name, double v) { return set(name, report_value{v}); }
  report_record& set(const std::string& name, std::uint64_t v) {
    return set(name, report_value{v});
  }
  report_record& set(const std::string& name, const std::string& v) {
    return set(name, report_value{v});
  }
  report_record& set(const std::string& name, std::uint32_t v) {
    return set(name, report_value{std::uint64_t{v}});
  }
  report_record& set(const std::string& name, int v) {
    return set(name, report_value{static_cast<std::uint64_t>(v)});
  }
  report_record& set(const std::string& name, const char* v) {
    return set(name, report_value{std::string(v)});
  }
  /// The value of `name`, or null.
  [[nodiscard]] const report_value* find(const std::string& name) const;
  /// A number field as a double (0 when absent or text).
  [[nodiscard]] double number(const std::string& name) const;
};

/// A figure: its configuration, the ceilings measured beside it, its points and notes.
struct report {
  std::string benchmark;  ///< "io", "cache"
  std::string figure;
  report_record configuration;
  std::vector<report_record> ceilings;
  std::vector<report_record> points;
  std::vector<report_record> samples;  ///< optional per-stage statistics (decompose)
  std::vector<std::string> notes;

  /// Prints the ceilings, the points (only `columns` of them, all when empty), the samples and
  /// the notes as tables and lines.
  void print(std::ostream& out, const std::vector<std::string>& columns = {}) const;
  /// Writes everything as one JSON object, with the machine description.
  void save(const std::string& path) const;
};

/// Sorted-sample statistics of `values` (which it sorts): count, median, p90, p99, mean, max.
report_record distribution(const std::string& name, std::vector<double> values);

/// Prints `r` (the chosen columns) to stdout and writes its JSON to `json` (if not empty), then
/// throws bam::error naming `bench` if any point counts failed `things` or wrong bytes.
void finish_report(const report& r, const std::vector<std::string>& columns,
                   const std::string& json, const std::string& bench, const std::string& things);

}  // namespace bam::bench
