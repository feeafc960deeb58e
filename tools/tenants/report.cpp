#include "tenants/report.hpp"

#include <cstdio>

#include "common/machine_info.hpp"
#include "common/sizes.hpp"
#include "common/table.hpp"

namespace bam::tenants {

namespace {

std::string fixed(double v, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

std::string bytes_text(std::uint64_t b) { return tools::format_bytes(static_cast<double>(b)); }

// two_level over base weighted speedup, when both ran; else negative.
double speedup_ratio(const study_config& config, const mix_result& r) {
  const int two = translation_index(config, translation_kind::two_level);
  const int base = translation_index(config, translation_kind::base);
  if (two < 0 || base < 0) return -1;
  const double b = r.weighted_speedup(static_cast<std::size_t>(base));
  return b > 0 ? r.weighted_speedup(static_cast<std::size_t>(two)) / b : -1;
}

void write_samples(tools::json_writer& j, const sampled& s) {
  j.field("seconds", s.median()).key("samples").begin_array();
  for (const double v : s.samples) j.value(v);
  j.end_array();
}

// The second runs' median and the first run's time shares (null when not measured).
void write_shares(tools::json_writer& j, const sampled& first, const sampled& warm,
                  const sampled& direct) {
  j.field("warm_seconds", warm.median());
  const std::optional<time_shares> s = time_shares::of(first, warm, direct);
  j.key("shares");
  if (!s) {
    j.null();
    return;
  }
  j.begin_object()
      .field("data", s->data)
      .field("translation", s->translation)
      .field("misses", s->misses)
      .end_object();
}

void write_run(tools::json_writer& j, const tenant_run& run) {
  const cache_stats& c = run.counters;
  const tenant_stats& f = run.frames;
  j.field("runs", run.runs)
      .field("verified", run.verified)
      .field("digest", run.digest)
      .key("cache")
      .begin_object()
      .field("hits", c.hits)
      .field("misses", c.misses)
      .field("hit_rate", c.hit_rate())
      .field("loads", c.loads)
      .field("evictions", c.evictions)
      .field("bytes_fetched", c.bytes_fetched)
      .field("bytes_moved", c.bytes_moved)
      .field("coalesces", c.coalesces)
      .field("promotions", c.promotions)
      .field("splinters", c.splinters)
      .field("bytes_compacted", c.bytes_compacted)
      .field("fills", c.fills)
      .end_object()
      .key("frames")
      .begin_object()
      .field("tenant", f.tenant)
      .field("frame_quota", f.frame_quota)
      .field("frames_held", f.frames_held())
      .field("frames_coalesced", f.frames_coalesced)
      .field("frames_reserved", f.frames_reserved)
      .field("frames_shared", f.frames_shared)
      .field("resident_bytes", f.resident_bytes)
      .field("bloat_bytes", f.bloat_bytes)
      .end_object();
}

void write_mix(tools::json_writer& j, const study_config& config, const mix_result& r) {
  j.begin_object()
      .field("mix", to_string(r.tenants_mix))
      .field("tenant_count", static_cast<std::uint64_t>(r.tenants.size()))
      .field("cache_bytes", r.cache_bytes)
      .field("alone_cache_bytes", r.cache_bytes / r.tenants.size())
      .field("data_bytes", r.data_bytes)
      .field("verified", r.verified);
  j.key("tenants").begin_array();
  for (const tenant_result& t : r.tenants) {
    j.begin_object()
        .field("name", t.spec.name)
        .field("kind", std::string(to_string(t.spec.kind)))
        .field("data_bytes", t.spec.bytes)
        .field("direct_seconds", t.direct.median());
    j.key("alone").begin_object().field("translation", "base");
    write_samples(j, t.alone);
    write_shares(j, t.alone, t.alone_warm, t.direct);
    write_run(j, t.alone_last);
    j.end_object();
    j.key("shared").begin_object();
    for (const auto& s : t.shared) {
      j.key(to_string(s.translation)).begin_object();
      write_samples(j, s.seconds);
      j.field("slowdown", s.slowdown(t.alone.median()));
      write_shares(j, s.seconds, s.warm, t.direct);
      write_run(j, s.last);
      j.end_object();
    }
    j.end_object().end_object();
  }
  j.end_array();
  j.key("weighted_speedup").begin_object();
  for (std::size_t i = 0; i < config.translations.size(); ++i) {
    j.field(to_string(config.translations[i]), r.weighted_speedup(i));
  }
  j.end_object().key("unfairness").begin_object();
  for (std::size_t i = 0; i < config.translations.size(); ++i) {
    j.field(to_string(config.translations[i]), r.unfairness(i));
  }
  j.end_object().key("compaction").begin_object();
  for (std::size_t i = 0; i < r.compaction.size() && i < config.translations.size(); ++i) {
    const compaction_counts& c = r.compaction[i];
    j.key(to_string(config.translations[i]))
        .begin_object()
        .field("pieces_moved", c.pieces_moved)
        .field("frames_freed", c.frames_freed)
        .field("retries", c.retries)
        .field("passes", c.passes)
        .end_object();
  }
  j.end_object().key("weighted_speedup_ratio");
  const double ratio = speedup_ratio(config, r);
  if (ratio >= 0) {
    j.value(ratio);
  } else {
    j.null();
  }
  j.end_object();
}

}  // namespace

int translation_index(const study_config& config, translation_kind t) {
  for (std::size_t i = 0; i < config.translations.size(); ++i) {
    if (config.translations[i] == t) return static_cast<int>(i);
  }
  return -1;
}

void print_mix(std::ostream& out, const study_config& config, const mix_result& r) {
  out << "mix " << to_string(r.tenants_mix) << ": cache " << bytes_text(r.cache_bytes)
      << " shared (" << bytes_text(r.cache_bytes / r.tenants.size()) << " each alone, base), data "
      << bytes_text(r.data_bytes) << ", " << (r.verified ? "results verified" : "RESULTS DIFFER")
      << '\n';
  // d/t/m: the first run's shares of data, translation and misses in percent (time_shares).
  auto shares_text = [](const sampled& first, const sampled& warm, const sampled& direct) {
    const std::optional<time_shares> s = time_shares::of(first, warm, direct);
    if (!s) return std::string("-");
    return fixed(100 * s->data, 0) + "/" + fixed(100 * s->translation, 0) + "/" +
           fixed(100 * s->misses, 0);
  };
  std::vector<std::string> header = {"tenant", "direct s", "alone s", "d/t/m %"};
  for (const translation_kind t : config.translations) {
    header.push_back(std::string(to_string(t)) + " s");
    header.push_back("slowdown");
    header.push_back("d/t/m %");
    header.push_back("bloat");
  }
  tools::table table(header);
  for (const tenant_result& t : r.tenants) {
    std::vector<std::string> row = {t.spec.name, fixed(t.direct.median(), 3),
                                    fixed(t.alone.median(), 3),
                                    shares_text(t.alone, t.alone_warm, t.direct)};
    for (const auto& s : t.shared) {
      row.push_back(fixed(s.seconds.median(), 3));
      row.push_back(fixed(s.slowdown(t.alone.median()), 2) + "x");
      row.push_back(shares_text(s.seconds, s.warm, t.direct));
      row.push_back(bytes_text(s.last.frames.bloat_bytes));
    }
    table.add_row(row);
  }
  table.print(out);
  out << "  weighted speedup:";
  for (std::size_t i = 0; i < config.translations.size(); ++i) {
    out << ' ' << to_string(config.translations[i]) << ' ' << fixed(r.weighted_speedup(i), 3)
        << " (unfairness " << fixed(r.unfairness(i), 2) << "x)";
  }
  const double ratio = speedup_ratio(config, r);
  if (ratio >= 0) out << "; two_level / base " << fixed(ratio, 3);
  out << "\n\n";
}

void write_study_json(tools::json_writer& j, const study_config& config,
                      const std::vector<mix_result>& mixes) {
  j.begin_object().field("command", "tenants").key("machine");
  tools::write_json(j, tools::read_machine_info());
  j.key("config")
      .begin_object()
      .field("target", config.gpu ? "gpu" : "cpu")
      .field("graph", config.graph.string())
      .field("line_bytes", config.cache.line_bytes)
      .field("cache_bytes", config.cache.capacity_bytes)
      .field("frame_bytes", config.cache.frame_bytes)
      .field("frame_percent", config.cache.frame_percent)
      .field("fill_percent", config.cache.fill_percent)
      .field("splinter_percent", config.cache.splinter_percent)
      .field("promote_percent", config.cache.promote_percent)
      .field("base_first", config.cache.base_first)
      .field("pinning", to_string(config.cache.pinning))
      .field("frame_quota", config.frame_quota)
      .field("compaction_agent", config.compaction)
      .field("measure_shares", config.measure_shares)
      .field("gather_bytes", config.gather_bytes)
      .field("gather_reads", config.gather_reads)
      .field("scan_bytes", config.scan_bytes)
      .field("repetitions", config.repetitions)
      .field("devices", config.storage.devices)
      .field("queues", config.storage.queues_per_device)
      .field("depth", config.storage.queue_depth)
      .field("latency_us", config.storage.model.latency_us)
      .field("controller_sms", config.gpu ? config.runtime.controller_sms : 0u)
      .field("caps", config.storage.model.caps)
      .field("cpu_workers_per_tenant", config.cpu_workers)
      .key("translations")
      .begin_array();
  for (const translation_kind t : config.translations) j.value(to_string(t));
  j.end_array().end_object();
  j.key("mixes").begin_array();
  for (const mix_result& r : mixes) write_mix(j, config, r);
  j.end_array().end_object();
}

}  // namespace bam::tenants
