#pragma once
/// @file
/// The synthetic taxi-trip table of `bam table gen` and `bam query`: one little-endian binary
/// file per column, DIR/<column>.bin, rows generated from a seed so any row can be made alone.
/// Distributions (docs/analytics.md gives the selectivity each query's predicates have):
///   pickup_s     u32  uniform over the seconds of a 365-day year
///   distance_m   u32  exponential, mean 5 km, capped at 200 km
///   fare_cents   u32  300 + distance_m / 5 + uniform 0..199
///   tip_cents    u32  card: fare_cents x uniform [0, 0.3); cash and other: 0
///   passengers   u8   1..6 with shares 70, 14, 5, 3, 5, 3 %
///   payment      u8   1 card 65 %, 2 cash 33 %, 3 other 2 %
///   pickup_zone  u16  0..262, skewed to low zones (263 u^2)
///   dropoff_zone u16  the pickup zone 10 % of the time, else uniform 0..262

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace bam::tools {

struct taxi_row {
  std::uint32_t pickup_s;
  std::uint32_t distance_m;
  std::uint32_t fare_cents;
  std::uint32_t tip_cents;
  std::uint8_t passengers;
  std::uint8_t payment;
  std::uint16_t pickup_zone;
  std::uint16_t dropoff_zone;
};

/// A column: its file name (without .bin) and element size.
struct taxi_column {
  const char* name;
  std::uint32_t bytes;
};
inline constexpr std::array<taxi_column, 8> taxi_columns{{{"pickup_s", 4},
                                                          {"distance_m", 4},
                                                          {"fare_cents", 4},
                                                          {"tip_cents", 4},
                                                          {"passengers", 1},
                                                          {"payment", 1},
                                                          {"pickup_zone", 2},
                                                          {"dropoff_zone", 2}}};
inline constexpr std::uint32_t taxi_zones = 263;

/// Row `row` of the table of `seed`.
taxi_row taxi_row_at(std::uint64_t row, std::uint64_t seed);

/// Writes the table's columns into `dir` (made if missing), each under a temporary name first.
/// Throws bam::input_error for a folder that cannot be written.
void generate_taxi_table(const std::string& dir, std::uint64_t rows, std::uint64_t seed);

/// One group of a query's answer.
struct query_group {
  std::uint64_t key = 0;
  std::uint64_t count = 0;
  std::uint64_t sum = 0;
};

/// The queries q0..q5 (docs/analytics.md): whether a query groups (q3: pickup zone, q4: hour,
/// q5: pickup zone) and how many groups it has (1 for the others).
std::uint32_t query_groups(std::uint32_t query);

/// The columns query `query` reads, a bit per index into taxi_columns (bit 0: pickup_s): what
/// the column-copy baseline copies.
std::uint32_t query_columns(std::uint32_t query);

/// The answer computed on the host from whole rows, for tests: groups with a count, in key
/// order.
std::vector<query_group> reference_answer(std::uint32_t query, const std::vector<taxi_row>& rows);

/// The answer as `bam query` prints it: "count sum" (q0..q2) or "key count sum" per group.
std::string format_answer(std::uint32_t query, const std::vector<query_group>& groups);

}  // namespace bam::tools
