#include "tenants/mix.hpp"

#include <algorithm>
#include <random>
#include <sstream>

#include <bam/error.hpp>

namespace bam::tenants {

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, separator)) {
    const auto a = part.find_first_not_of(" \t");
    if (a == std::string::npos) continue;
    parts.push_back(part.substr(a, part.find_last_not_of(" \t") - a + 1));
  }
  return parts;
}

// Every set of `size` different kinds, in kind order.
std::vector<mix> combinations(std::size_t size) {
  std::vector<mix> out;
  constexpr std::size_t kinds = std::size(all_kinds);
  for (unsigned bits = 0; bits < (1u << kinds); ++bits) {
    mix m;
    for (std::size_t k = 0; k < kinds; ++k) {
      if (bits & (1u << k)) m.push_back(all_kinds[k]);
    }
    if (m.size() == size) out.push_back(m);
  }
  return out;
}

std::vector<mix> homogeneous() {
  std::vector<mix> out;
  for (const tenant_kind k : all_kinds) {
    for (std::size_t copies = 2; copies <= 4; ++copies) out.emplace_back(copies, k);
  }
  return out;
}

// `count` mixes of 3 to 5 tenants with at least two kinds, sorted within each mix.
std::vector<mix> random_mixes(std::uint64_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> size(3, 5);
  std::uniform_int_distribution<std::size_t> kind(0, std::size(all_kinds) - 1);
  std::vector<mix> out;
  while (out.size() < count) {
    mix m(size(rng));
    for (tenant_kind& k : m) k = all_kinds[kind(rng)];
    std::sort(m.begin(), m.end());
    if (m.front() != m.back()) out.push_back(m);
  }
  return out;
}

std::uint64_t parse_number(const std::string& text, const std::string& what) {
  try {
    std::size_t used = 0;
    const unsigned long long v = std::stoull(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw input_error("--mix: '" + text + "' is not a number (" + what + ")");
}

std::vector<mix> expand_one(const std::string& item) {
  if (item == "homogeneous") return homogeneous();
  if (item == "pairs") return combinations(2);
  if (item == "triples") return combinations(3);
  if (item == "all") return combinations(4);
  if (item == "study") return expand_mixes("homogeneous;pairs;triples;all;random:4");
  if (item.rfind("random:", 0) == 0) {
    const std::vector<std::string> parts = split(item, ':');
    if (parts.size() < 2 || parts.size() > 3) {
      throw input_error("--mix: '" + item + "': random:N or random:N:SEED");
    }
    const std::uint64_t seed = parts.size() == 3 ? parse_number(parts[2], "a seed") : 1;
    return random_mixes(parse_number(parts[1], "a count of mixes"), seed);
  }
  mix m;
  for (const std::string& name : split(item, ',')) m.push_back(parse_kind(name));
  return {m};
}

}  // namespace

const char* to_string(tenant_kind k) {
  switch (k) {
    case tenant_kind::bfs:
      return "bfs";
    case tenant_kind::cc:
      return "cc";
    case tenant_kind::gather:
      return "gather";
    case tenant_kind::scan:
      return "scan";
  }
  return "?";
}

tenant_kind parse_kind(const std::string& name) {
  for (const tenant_kind k : all_kinds) {
    if (name == to_string(k)) return k;
  }
  throw input_error("--mix: '" + name +
                    "' is not a tenant (bfs, cc, gather, scan) or a preset (homogeneous, pairs, "
                    "triples, all, random:N[:SEED], study)");
}

std::string to_string(const mix& m) {
  std::string text;
  for (const tenant_kind k : m) {
    if (!text.empty()) text += ',';
    text += to_string(k);
  }
  return text;
}

std::vector<mix> expand_mixes(const std::string& text, unsigned max_tenants) {
  std::vector<mix> out;
  for (const std::string& item : split(text, ';')) {
    for (mix& m : expand_one(item)) {
      if (m.empty() || m.size() > max_tenants) {
        throw input_error("--mix: '" + to_string(m) + "' has " + std::to_string(m.size()) +
                          " tenants; 1 to " + std::to_string(max_tenants) + " are supported");
      }
      out.push_back(std::move(m));
    }
  }
  if (out.empty()) throw input_error("--mix: no mix given");
  return out;
}

}  // namespace bam::tenants
