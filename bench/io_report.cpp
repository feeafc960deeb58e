#include "io_report.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <ostream>

#include <bam/error.hpp>

#include "common/json_writer.hpp"
#include "common/machine_info.hpp"
#include "common/table.hpp"

namespace bam::bench {

namespace {

std::string text(const report_value& v) {
  if (const auto* u = std::get_if<std::uint64_t>(&v)) return std::to_string(*u);
  if (const auto* d = std::get_if<double>(&v)) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4g", *d);
    return buffer;
  }
  return std::get<std::string>(v);
}

void print_records(std::ostream& out, const std::vector<report_record>& records,
                   const std::vector<std::string>& wanted) {
  if (records.empty()) return;
  std::vector<std::string> columns = wanted;
  if (columns.empty()) {
    for (const report_record& r : records) {
      for (const auto& [name, value] : r.fields) {
        if (std::find(columns.begin(), columns.end(), name) == columns.end()) {
          columns.push_back(name);
        }
      }
    }
  }
  tools::table t(columns);
  for (const report_record& r : records) {
    std::vector<std::string> row;
    for (const std::string& c : columns) {
      const report_value* v = r.find(c);
      row.push_back(v ? text(*v) : "-");
    }
    t.add_row(std::move(row));
  }
  t.print(out);
}

void write_record(tools::json_writer& j, const report_record& r) {
  j.begin_object();
  for (const auto& [name, value] : r.fields) {
    j.key(name);
    std::visit([&j](const auto& v) { j.value(v); }, value);
  }
  j.end_object();
}

void write_records(tools::json_writer& j, const char* name,
                   const std::vector<report_record>& records) {
  j.key(name).begin_array();
  for (const report_record& r : records) write_record(j, r);
  j.end_array();
}

double at_fraction(const std::vector<double>& sorted, double f) {
  const auto i = static_cast<std::size_t>(f * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

}  // namespace

report_record& report_record::set(const std::string& name, report_value v) {
  for (auto& [n, value] : fields) {
    if (n == name) {
      value = std::move(v);
      return *this;
    }
  }
  fields.emplace_back(name, std::move(v));
  return *this;
}

const report_value* report_record::find(const std::string& name) const {
  for (const auto& [n, value] : fields) {
    if (n == name) return &value;
  }
  return nullptr;
}

double report_record::number(const std::string& name) const {
  const report_value* v = find(name);
  if (!v) return 0;
  if (const auto* u = std::get_if<std::uint64_t>(v)) return static_cast<double>(*u);
  if (const auto* d = std::get_if<double>(v)) return *d;
  return 0;
}

void report::print(std::ostream& out, const std::vector<std::string>& columns) const {
  out << benchmark << " " << figure << "\n";
  if (!ceilings.empty()) {
    out << "ceilings (same run):\n";
    print_records(out, ceilings, {});
  }
  print_records(out, points, columns);
  if (!samples.empty()) {
    out << "stages (ns):\n";
    print_records(out, samples, {});
  }
  for (const std::string& n : notes) out << "note: " << n << "\n";
}

void report::save(const std::string& path) const {
  tools::json_writer j;
  j.begin_object().field("benchmark", benchmark).field("figure", figure).key("machine");
  tools::write_json(j, tools::read_machine_info());
  j.key("configuration");
  write_record(j, configuration);
  write_records(j, "ceilings", ceilings);
  write_records(j, "points", points);
  write_records(j, "stages", samples);
  j.key("notes").begin_array();
  for (const std::string& n : notes) j.value(n);
  j.end_array().end_object();
  j.save(path);
}

report_record distribution(const std::string& name, std::vector<double> values) {
  report_record r;
  r.set("stage", name).set("count", static_cast<std::uint64_t>(values.size()));
  if (values.empty()) return r;
  std::sort(values.begin(), values.end());
  const double mean =
      std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  r.set("median", at_fraction(values, 0.5))
      .set("p90", at_fraction(values, 0.9))
      .set("p99", at_fraction(values, 0.99))
      .set("mean", mean)
      .set("max", values.back());
  return r;
}

void finish_report(const report& r, const std::vector<std::string>& columns,
                   const std::string& json, const std::string& bench, const std::string& things) {
  r.print(std::cout, columns);
  if (!json.empty()) r.save(json);
  std::uint64_t failed = 0, wrong = 0;
  for (const report_record& p : r.points) {
    failed += static_cast<std::uint64_t>(p.number("failed"));
    wrong += static_cast<std::uint64_t>(p.number("wrong"));
  }
  if (failed || wrong) {
    throw error(bench + " " + r.figure + ": " + std::to_string(failed) + " " + things +
                " failed, " + std::to_string(wrong) + " returned wrong bytes");
  }
}

}  // namespace bam::bench
