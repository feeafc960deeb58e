// A mix of the study: alone runs (the baseline), shared runs under each translation, medians,
// weighted speedup and unfairness.

#include <algorithm>
#include <cstdio>

#include <bam/error.hpp>

#include "tenants/study.hpp"

namespace bam::tenants {

namespace {

// 1/8 of the mix's data (as `bam bfs` sizes its default cache), at least 64 lines per tenant.
std::uint64_t shared_cache_bytes(const study_config& config, const tenant_data& data) {
  if (config.cache.capacity_bytes != 0) return config.cache.capacity_bytes;
  const std::uint64_t floor = std::uint64_t{64} * config.cache.line_bytes * data.tenants().size();
  return std::max(data.data_bytes() / 8, floor);
}

// bfs and cc: every run must give the result the tenant's first alone run gave (the apps'
// results do not depend on timing). gather and scan check their own sums.
bool matches(const tenant_spec& t, const tenant_run& run, const tenant_run& reference) {
  return uses_graph(t.kind) ? run.digest == reference.digest : run.verified;
}

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f s", s);
  return text;
}

}  // namespace

double sampled::median() const {
  if (samples.empty()) return 0;
  std::vector<double> v = samples;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

std::optional<time_shares> time_shares::of(double first, double warm, double direct) {
  if (first <= 0 || warm <= 0 || direct <= 0) return std::nullopt;
  return time_shares{.data = direct / first,
                     .translation = (warm - direct) / first,
                     .misses = (first - warm) / first};
}

double tenant_result::shared_figures::slowdown(double alone) const {
  return alone > 0 ? seconds.median() / alone : 0.0;
}

// A figure of each repetition of the shared run under `translation` (the tenants' samples
// with the same index belong to one run), then their median. Per run, because which tenant
// a mix favours changes from run to run: the median of each tenant's times would mix runs.
template <class PerRun>
double median_over_runs(const std::vector<tenant_result>& tenants, std::size_t translation,
                        PerRun&& per_run) {
  if (tenants.empty()) return 0;
  std::size_t runs = tenants.front().shared[translation].seconds.samples.size();
  for (const tenant_result& t : tenants) {
    runs = std::min(runs, t.shared[translation].seconds.samples.size());
  }
  sampled figures;
  for (std::size_t r = 0; r < runs; ++r) {
    double figure = 0;
    for (const tenant_result& t : tenants) {
      const double shared = t.shared[translation].seconds.samples[r];
      if (shared > 0) figure = per_run(figure, t.alone.median() / shared);
    }
    figures.samples.push_back(figure);
  }
  return figures.median();
}

double mix_result::weighted_speedup(std::size_t translation) const {
  return median_over_runs(tenants, translation, [](double sum, double s) { return sum + s; });
}

double mix_result::unfairness(std::size_t translation) const {
  // The largest slowdown (shared / alone) of each run.
  return median_over_runs(tenants, translation,
                          [](double worst, double s) { return std::max(worst, 1 / s); });
}

mix_result run_mix(const study_config& config, const mix& m, alone_map& alone_cache,
                   const std::function<void(const std::string&)>& log) {
  if (config.repetitions == 0) throw input_error("--repetitions must be at least 1");
  const tenant_data data(config, m);
  mix_result result;
  result.tenants_mix = m;
  result.data_bytes = data.data_bytes();
  result.cache_bytes = shared_cache_bytes(config, data);
  const std::size_t n = m.size();
  const std::uint64_t share = result.cache_bytes / n;
  auto say = [&](const std::string& line) {
    if (log) log(line);
  };

  // Alone: each tenant with 1/n of the cache under base-page translation (BaM's).
  for (std::size_t i = 0; i < n; ++i) {
    tenant_result t;
    t.spec = data.tenants()[i];
    const alone_key key{t.spec.kind, share};
    auto found = std::find_if(alone_cache.begin(), alone_cache.end(),
                              [&](const auto& e) { return e.first == key; });
    if (found == alone_cache.end()) {
      alone_entry entry;
      for (unsigned r = 0; r < config.repetitions; ++r) {
        const std::size_t which[] = {i};
        run_outcome out = run_tenants(config, data, which, share, translation_kind::base);
        entry.seconds.samples.push_back(out.tenants[0].seconds);
        if (out.tenants[0].warm_seconds > 0) {
          entry.warm.samples.push_back(out.tenants[0].warm_seconds);
        }
        // The first alone run of a bfs or cc tenant is its reference (the tests compare it
        // with a sequential one).
        tenant_run& run = out.tenants[0];
        run.verified = r == 0 && uses_graph(t.spec.kind) ? true : matches(t.spec, run, entry.last);
        if (!run.verified) result.verified = false;
        entry.last = std::move(out.tenants[0]);
        say("alone " + t.spec.name + " (1/" + std::to_string(n) +
            " of the cache, base): " + seconds_text(entry.seconds.samples.back()));
      }
      alone_cache.emplace_back(key, std::move(entry));
      found = alone_cache.end() - 1;
    }
    t.alone = found->second.seconds;
    t.alone_warm = found->second.warm;
    t.alone_last = found->second.last;
    if (!t.alone_last.verified) result.verified = false;
    // Alone over its data in memory (no cache): kept under a share of 0.
    const alone_key direct_key{t.spec.kind, 0};
    auto direct = std::find_if(alone_cache.begin(), alone_cache.end(),
                               [&](const auto& e) { return e.first == direct_key; });
    if (config.measure_shares && direct == alone_cache.end()) {
      alone_entry entry;
      for (unsigned r = 0; r < config.repetitions; ++r) {
        tenant_run run = run_direct(config, data, i);
        run.verified = matches(t.spec, run, t.alone_last);
        if (!run.verified) result.verified = false;
        entry.seconds.samples.push_back(run.warm_seconds);
        entry.last = std::move(run);
        say("direct " + t.spec.name +
            " (its data in memory, no cache): " + seconds_text(entry.seconds.samples.back()));
      }
      alone_cache.emplace_back(direct_key, std::move(entry));
      direct = alone_cache.end() - 1;
    }
    if (direct != alone_cache.end()) {
      t.direct = direct->second.seconds;
      if (!direct->second.last.verified) result.verified = false;
    }
    result.tenants.push_back(std::move(t));
  }

  // Shared: every tenant at once on the whole cache, under each translation.
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  for (const translation_kind translation : config.translations) {
    for (tenant_result& t : result.tenants) {
      t.shared.push_back({.translation = translation, .seconds = {}, .warm = {}, .last = {}});
    }
    result.compaction.emplace_back();
    for (unsigned r = 0; r < config.repetitions; ++r) {
      run_outcome out = run_tenants(config, data, all, result.cache_bytes, translation);
      std::string line = std::string("shared ") + to_string(m) + " (" + to_string(translation) +
                         ", " + seconds_text(out.wall_seconds) + " in all):";
      for (std::size_t i = 0; i < n; ++i) {
        tenant_result& t = result.tenants[i];
        out.tenants[i].verified = matches(t.spec, out.tenants[i], t.alone_last);
        if (!out.tenants[i].verified) result.verified = false;
        t.shared.back().seconds.samples.push_back(out.tenants[i].seconds);
        if (out.tenants[i].warm_seconds > 0) {
          t.shared.back().warm.samples.push_back(out.tenants[i].warm_seconds);
        }
        t.shared.back().last = std::move(out.tenants[i]);
        line += " " + t.spec.name + " " + seconds_text(t.shared.back().seconds.samples.back());
      }
      result.compaction.back() = out.compaction;
      say(line);
    }
  }
  return result;
}

}  // namespace bam::tenants
