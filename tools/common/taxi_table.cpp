#include "common/taxi_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include <bam/error.hpp>

namespace bam::tools {

namespace {

std::uint64_t mix64(std::uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// A uniform draw in [0, 1) for field `field` of `row`.
double unit(std::uint64_t row, std::uint64_t seed, std::uint32_t field) {
  return static_cast<double>(mix64(mix64(row * 16 + field) ^ seed) >> 11) * 0x1.0p-53;
}

}  // namespace

taxi_row taxi_row_at(std::uint64_t row, std::uint64_t seed) {
  taxi_row r{};
  r.pickup_s = static_cast<std::uint32_t>(unit(row, seed, 0) * 365.0 * 86400.0);
  r.distance_m = static_cast<std::uint32_t>(
      std::min(200000.0, std::floor(-5000.0 * std::log1p(-unit(row, seed, 1)))));
  const double p = unit(row, seed, 2);
  r.passengers = p < 0.70 ? 1 : p < 0.84 ? 2 : p < 0.89 ? 3 : p < 0.92 ? 4 : p < 0.97 ? 5 : 6;
  const double pay = unit(row, seed, 3);
  r.payment = pay < 0.65 ? 1 : pay < 0.98 ? 2 : 3;
  r.fare_cents = 300 + r.distance_m / 5 + static_cast<std::uint32_t>(unit(row, seed, 4) * 200.0);
  r.tip_cents =
      r.payment == 1 ? static_cast<std::uint32_t>(r.fare_cents * 0.3 * unit(row, seed, 5)) : 0;
  const double z = unit(row, seed, 6);
  r.pickup_zone = static_cast<std::uint16_t>(std::min<double>(taxi_zones - 1, taxi_zones * z * z));
  r.dropoff_zone = unit(row, seed, 7) < 0.1
                       ? r.pickup_zone
                       : static_cast<std::uint16_t>(unit(row, seed, 8) * taxi_zones);
  return r;
}

void generate_taxi_table(const std::string& dir, std::uint64_t rows, std::uint64_t seed) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir)) throw input_error("--out '" + dir + "' is not a folder bam can make");
  std::vector<std::unique_ptr<std::ofstream>> out;
  std::vector<std::string> temporary;
  for (const taxi_column& c : taxi_columns) {
    temporary.push_back((fs::path(dir) / (std::string(".") + c.name + ".bin.tmp")).string());
    out.push_back(std::make_unique<std::ofstream>(temporary.back(), std::ios::binary));
    if (!*out.back()) throw input_error("cannot write '" + temporary.back() + "'");
  }
  constexpr std::uint64_t chunk = 1 << 16;
  std::vector<std::vector<char>> bufs(taxi_columns.size());
  for (std::uint64_t first = 0; first < rows; first += chunk) {
    const std::uint64_t n = std::min(chunk, rows - first);
    for (std::size_t k = 0; k < bufs.size(); ++k) bufs[k].resize(n * taxi_columns[k].bytes);
    for (std::uint64_t i = 0; i < n; ++i) {
      const taxi_row r = taxi_row_at(first + i, seed);
      const void* fields[] = {&r.pickup_s,   &r.distance_m, &r.fare_cents,  &r.tip_cents,
                              &r.passengers, &r.payment,    &r.pickup_zone, &r.dropoff_zone};
      for (std::size_t k = 0; k < bufs.size(); ++k) {
        std::memcpy(bufs[k].data() + i * taxi_columns[k].bytes, fields[k], taxi_columns[k].bytes);
      }
    }
    for (std::size_t k = 0; k < bufs.size(); ++k) {
      out[k]->write(bufs[k].data(), static_cast<std::streamsize>(bufs[k].size()));
    }
  }
  for (std::size_t k = 0; k < out.size(); ++k) {
    out[k]->close();
    if (!*out[k]) throw error("writing '" + temporary[k] + "' failed (disk full?)");
    fs::rename(temporary[k], fs::path(dir) / (std::string(taxi_columns[k].name) + ".bin"));
  }
}

std::uint32_t query_columns(std::uint32_t query) {
  // Bits by taxi_columns index: 0 pickup_s, 1 distance_m, 2 fare_cents, 3 tip_cents,
  // 4 passengers, 5 payment, 6 pickup_zone, 7 dropoff_zone.
  constexpr std::uint32_t by_query[6] = {
      0b0000'0100,  // q0: fare
      0b0010'1000,  // q1: payment, tip
      0b0000'0110,  // q2: distance, fare
      0b0101'0110,  // q3: distance, passengers, zone, fare
      0b1110'1011,  // q4: distance, payment, zones, pickup time, tip
      0b0111'1110,  // q5: distance, passengers, payment, fare, tip, zone
  };
  return query < 6 ? by_query[query] : 0u;
}

std::uint32_t query_groups(std::uint32_t query) {
  return query == 3 || query == 5 ? taxi_zones : query == 4 ? 24u : 1u;
}

std::vector<query_group> reference_answer(std::uint32_t query, const std::vector<taxi_row>& rows) {
  std::vector<query_group> g(query_groups(query));
  for (std::uint64_t k = 0; k < g.size(); ++k) g[k].key = k;
  for (const taxi_row& r : rows) {
    std::uint64_t key = 0;
    std::uint64_t value = 0;
    switch (query) {
      case 0:
        value = r.fare_cents;
        break;
      case 1:
        if (r.payment != 1) continue;
        value = r.tip_cents;
        break;
      case 2:
        if (r.distance_m <= 20000) continue;
        value = r.fare_cents;
        break;
      case 3:
        if (r.distance_m <= 20000 || r.passengers < 3) continue;
        key = r.pickup_zone;
        value = r.fare_cents;
        break;
      case 4:
        if (r.distance_m <= 20000 || r.payment != 1 || r.dropoff_zone == r.pickup_zone) continue;
        key = r.pickup_s / 3600 % 24;
        value = r.tip_cents;
        break;
      default:
        if (r.distance_m <= 30000 || r.passengers < 4 || r.payment != 1 ||
            std::uint64_t{r.tip_cents} * 5 <= r.fare_cents) {
          continue;
        }
        key = r.pickup_zone;
        value = r.tip_cents;
    }
    ++g[key].count;
    g[key].sum += value;
  }
  std::vector<query_group> out;
  for (const query_group& x : g) {
    if (x.count != 0 || query_groups(query) == 1) out.push_back(x);
  }
  return out;
}

std::string format_answer(std::uint32_t query, const std::vector<query_group>& groups) {
  std::string s;
  for (const query_group& g : groups) {
    if (query_groups(query) > 1) {
      if (g.count == 0) continue;
      s += std::to_string(g.key) + " ";
    }
    s += std::to_string(g.count) + " " + std::to_string(g.sum) + "\n";
  }
  return s;
}

}  // namespace bam::tools
