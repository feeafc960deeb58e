#include "common/fault_spec.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include <bam/error.hpp>

namespace bam::tools {

namespace {

// Longest late-us: an hour (the controller adds late_us x 1000 ns to a completion's time).
constexpr double max_late_us = 3.6e9;

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::optional<std::uint64_t> whole_number(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return {};
  return value;
}

std::optional<double> finite_number(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    return {};
  }
  return value;
}

enum class fault_key { error_rate, write_error_rate, late_rate, late_us, drop_rate, bad_lba, seed };
constexpr int key_count = 7;

struct key_name {
  std::string_view name;
  fault_key key;
};
constexpr key_name key_names[key_count] = {
    {"error-rate", fault_key::error_rate},
    {"write-error-rate", fault_key::write_error_rate},
    {"late-rate", fault_key::late_rate},
    {"late-us", fault_key::late_us},
    {"drop-rate", fault_key::drop_rate},
    {"bad-lba", fault_key::bad_lba},
    {"seed", fault_key::seed},
};

}  // namespace

fault_plan parse_fault_spec(std::string_view spec) {
  auto fail = [](std::string_view item, const std::string& why) {
    return input_error("item '" + std::string(item) + "': " + why);
  };
  if (trim(spec).empty()) {
    throw input_error(
        "empty fault spec (expected key=value items separated by commas, e.g. "
        "error-rate=0.01,seed=7)");
  }
  fault_plan plan;
  bool seen[key_count] = {};
  std::size_t index = 0;
  while (true) {
    const std::size_t comma = spec.find(',');
    const std::string_view raw = spec.substr(0, comma);
    const std::string_view item = trim(raw);
    ++index;
    if (item.empty()) {
      throw input_error("item " + std::to_string(index) +
                        " is empty (items are key=value, separated by single commas)");
    }
    const std::size_t equals = item.find('=');
    if (equals == std::string_view::npos) {
      throw fail(item, "expected key=value");
    }
    const std::string_view name = trim(item.substr(0, equals));
    const std::string_view value = trim(item.substr(equals + 1));
    const key_name* found = nullptr;
    for (const key_name& k : key_names) {
      if (k.name == name) found = &k;
    }
    if (found == nullptr) {
      throw fail(item, "unknown key '" + std::string(name) +
                           "' (expected error-rate, write-error-rate, late-rate, late-us, "
                           "drop-rate, bad-lba or seed)");
    }
    bool& was_seen = seen[static_cast<int>(found->key)];
    if (was_seen) throw fail(item, std::string(name) + " is given twice");
    was_seen = true;
    if (value.empty()) throw fail(item, "no value after '='");

    auto rate = [&]() {
      const auto r = finite_number(value);
      if (!r) throw fail(item, "'" + std::string(value) + "' is not a number");
      if (*r < 0 || *r > 1) {
        throw fail(item, "a rate is a share of commands, from 0 to 1, not " + std::string(value));
      }
      return *r;
    };
    switch (found->key) {
      case fault_key::error_rate:
        plan.error_rate = rate();
        break;
      case fault_key::write_error_rate:
        plan.write_error_rate = rate();
        break;
      case fault_key::late_rate:
        plan.late_rate = rate();
        break;
      case fault_key::drop_rate:
        plan.drop_rate = rate();
        break;
      case fault_key::late_us: {
        const auto us = finite_number(value);
        if (!us) throw fail(item, "'" + std::string(value) + "' is not a number of microseconds");
        if (*us < 0 || *us > max_late_us) {
          throw fail(item, "late-us must be from 0 to 3600000000 (an hour)");
        }
        plan.late_us = *us;
        break;
      }
      case fault_key::seed: {
        const auto s = whole_number(value);
        if (!s) throw fail(item, "'" + std::string(value) + "' is not a non-negative integer");
        plan.seed = *s;
        break;
      }
      case fault_key::bad_lba: {
        const std::size_t dash = value.find('-');
        if (dash == std::string_view::npos) {
          throw fail(item, "expected a block range A-B (both included), e.g. bad-lba=2048-2055");
        }
        const auto first = whole_number(trim(value.substr(0, dash)));
        const auto last = whole_number(trim(value.substr(dash + 1)));
        if (!first || !last) {
          throw fail(item, "A and B of A-B must be non-negative integers (logical blocks)");
        }
        if (*first > *last) {
          throw fail(item, "the range starts at block " + std::to_string(*first) +
                               ", past its last block " + std::to_string(*last));
        }
        if (*last == std::numeric_limits<std::uint64_t>::max()) {
          throw fail(item, "the last block is too large");
        }
        plan.bad_lba_begin = *first;
        plan.bad_lba_end = *last + 1;
        plan.bad_lba_writes = true;
        break;
      }
    }
    if (comma == std::string_view::npos) break;
    spec.remove_prefix(comma + 1);
  }
  const bool late_rate_given = seen[static_cast<int>(fault_key::late_rate)];
  const bool late_us_given = seen[static_cast<int>(fault_key::late_us)];
  if (late_rate_given && !late_us_given && plan.late_rate > 0) {
    throw input_error("late-rate needs late-us=U (how many microseconds late)");
  }
  if (late_us_given && !late_rate_given) {
    throw input_error("late-us needs late-rate=R (the share of commands that are late)");
  }
  return plan;
}

lba_range device_lba_range(lba_range set, const set_striping& s, std::uint32_t device) {
  if (set.empty() || device >= s.devices) return {};
  if (s.replicated || s.devices == 1) return set;
  const std::uint64_t unit = s.stripe_bytes / s.block_bytes;  // blocks per stripe unit
  const std::uint64_t n = s.devices;
  // The first set block at or after set.begin that the device holds.
  std::uint64_t first = set.begin;
  const std::uint64_t first_stripe = first / unit;
  if (first_stripe % n != device) {
    const std::uint64_t ahead = (device + n - first_stripe % n) % n;
    if (first_stripe + ahead > (std::numeric_limits<std::uint64_t>::max() / unit) - 1) return {};
    first = (first_stripe + ahead) * unit;
  }
  // The last set block before set.end that the device holds.
  std::uint64_t last = set.end - 1;
  const std::uint64_t last_stripe = last / unit;
  if (last_stripe % n != device) {
    const std::uint64_t behind = (last_stripe % n + n - device) % n;
    if (last_stripe < behind) return {};
    last = (last_stripe - behind) * unit + unit - 1;
  }
  if (first >= set.end || last < set.begin || last < first) return {};
  auto on_device = [&](std::uint64_t block) { return (block / unit / n) * unit + block % unit; };
  return {on_device(first), on_device(last) + 1};
}

fault_plan bad_lba_for_devices(fault_plan plan, const set_striping& striping) {
  const lba_range set{plan.bad_lba_begin, plan.bad_lba_end};
  if (set.empty()) return plan;
  const lba_range share = device_lba_range(set, striping, 0);
  for (std::uint32_t d = 1; d < striping.devices; ++d) {
    const lba_range other = device_lba_range(set, striping, d);
    if (other == share) continue;
    const std::uint64_t row =
        std::uint64_t{striping.devices} * striping.stripe_bytes / striping.block_bytes;
    auto shown = [](const lba_range& r) {
      return r.empty() ? std::string("none")
                       : std::to_string(r.begin) + "-" + std::to_string(r.end - 1);
    };
    throw input_error(
        "--faults bad-lba=" + std::to_string(set.begin) + "-" + std::to_string(set.end - 1) +
        ": on " + std::to_string(striping.devices) + " striped devices this range is blocks " +
        shown(share) + " of device 0 but " + shown(other) + " of device " + std::to_string(d) +
        ", and the emulated devices share one bad range; give whole rows of stripe units (" +
        std::to_string(row) + " blocks each, starting at a multiple of " + std::to_string(row) +
        "), or use --devices 1");
  }
  plan.bad_lba_begin = share.begin;
  plan.bad_lba_end = share.end;
  return plan;
}

}  // namespace bam::tools
