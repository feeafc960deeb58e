// Format names, extension guessing and EMOGI file names.

#include "graph/formats.hpp"

#include <string>

#include <bam/error.hpp>

namespace bam::graph {

namespace {

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

graph_format parse_graph_format(std::string_view name) {
  if (name == "el") return graph_format::el;
  if (name == "mtx") return graph_format::mtx;
  if (name == "bel") return graph_format::bel;
  throw input_error("unknown graph format '" + std::string(name) + "' (expected el, mtx or bel)");
}

graph_format guess_graph_format(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  for (const std::string_view suffix : {".bel", ".bel.col", ".bel.dst"}) {
    if (ends_with(name, suffix)) return graph_format::bel;
  }
  if (ends_with(name, ".mtx")) return graph_format::mtx;
  for (const std::string_view suffix : {".el", ".wel", ".txt", ".edges"}) {
    if (ends_with(name, suffix)) return graph_format::el;
  }
  throw input_error("cannot tell the format of '" + path.string() +
                    "' from its name; pass --format el, mtx or bel");
}

bel_value_type parse_bel_value_type(std::string_view name) {
  if (name == "u32") return bel_value_type::u32;
  if (name == "f32") return bel_value_type::f32;
  throw input_error("unknown .bel value type '" + std::string(name) + "' (expected u32 or f32)");
}

bel_paths bel_paths_for(const std::filesystem::path& path) {
  std::string base = path.string();
  for (const std::string_view suffix : {".col", ".dst", ".val"}) {
    if (ends_with(base, std::string(".bel") + std::string(suffix))) {
      base.resize(base.size() - suffix.size());
      break;
    }
  }
  return {base + ".col", base + ".dst", base + ".val"};
}

}  // namespace bam::graph
