#pragma once
// Helpers for the graph tool tests: a temporary folder per test, small files, small graphs,
// and checks on the errors bad inputs give.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <bam/error.hpp>
#include <bam/graph/csr.hpp>

#include "graph/csr_build.hpp"
#include "graph/formats.hpp"

namespace bam::graph::testing {

/// A fresh folder, removed with everything in it at the end of the test.
class temp_dir {
 public:
  temp_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "bam-graph-test-XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const {
    return path_ / name;
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  /// Names of the files in the folder, sorted (temporary files included: they start with '.').
  [[nodiscard]] std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Little-endian u64 words as bytes (EMOGI files, patched headers).
inline std::string u64_bytes(std::initializer_list<std::uint64_t> words) {
  std::string bytes;
  for (const std::uint64_t w : words) bytes.append(reinterpret_cast<const char*>(&w), sizeof w);
  return bytes;
}

/// The message of the bam::input_error `action` throws; fails the test if it throws none.
template <class Action>
std::string input_error_of(Action&& action) {
  try {
    action();
  } catch (const bam::input_error& e) {
    return e.message();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected bam::input_error, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected bam::input_error, nothing was thrown";
  return {};
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// A sorted CSR of n vertices with the given directed edges (duplicates and loops kept).
inline csr make_graph(std::uint64_t n,
                      std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> edges,
                      std::initializer_list<float> weights = {}) {
  edge_list list;
  list.vertex_count = n;
  for (const auto& [u, v] : edges) {
    list.sources.push_back(u);
    list.targets.push_back(v);
  }
  list.weights.assign(weights.begin(), weights.end());
  list.weighted = weights.size() != 0;
  csr g = build_csr(std::move(list), false);
  sort_lists(g, false, 1);
  return g;
}

/// Every u -> v has as many v -> u.
inline bool is_symmetric(const csr& g) { return (inspect_flags(g) & bcsr_flags::symmetric) != 0; }

}  // namespace bam::graph::testing
