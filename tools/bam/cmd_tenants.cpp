// `bam tenants`: the multi-tenant study (issue 9, docs/mosaic.md "Tenants study"). Tenants
// (bfs, cc, gather, scan) share one page cache, each on its own stream (GPU) or host thread
// (CPU); each mix runs under two-level and base-page translation and against each tenant alone
// with its share of the cache, giving weighted speedup and unfairness. The work is in
// tools/tenants/; this file reads the options and prints.

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <bam/error.hpp>

#include "bam/commands.hpp"
#include "bam/storage_options.hpp"
#include "common/json_writer.hpp"
#include "tenants/report.hpp"
#include "tenants/study.hpp"

namespace bam::tools {

namespace {

struct tenants_options {
  std::vector<std::string> mixes = {"bfs,gather"};
  std::string translation = "both";
  std::string graph;
  std::string pinning = "frame_pins";
  std::uint64_t frame_bytes = cache_config{}.frame_bytes;
  std::uint32_t frame_percent = 0;  // 0: 100, or 50 under --base-first (its base pool)
  // 1 and 3 won on the H200 for dense tenants, 12 less (docs/results.md, 2026-12-04).
  std::uint32_t fill_percent = 1;
  std::uint32_t splinter_percent = cache_config{}.splinter_percent;
  std::uint32_t promote_percent = cache_config{}.promote_percent;
  bool base_first = false;
  tenants::study_config study;
  storage_options storage;
  std::string json;
};

// Progress and per-run lines go to stderr, marked, beside the tables on stdout.
void log_line(const std::string& line) { std::cerr << "# " << line << '\n'; }

tenants::study_config make_config(tenants_options& o) {
  if (o.storage.backend != "emulated-ssd") {
    throw input_error("bam tenants reads through the page cache: --backend emulated-ssd");
  }
  o.storage.validate();
  const named_path inputs[] = {{"--graph", o.graph}};
  const named_path outputs[] = {{"--json", o.json}};
  refuse_overlaps(inputs, outputs);
  tenants::study_config c = o.study;
  c.gpu = o.storage.use_gpu();
  c.storage = o.storage.storage();
  c.cache = o.storage.cache(0);
  c.cache.capacity_bytes = o.storage.cache_bytes;  // 0: 1/8 of each mix's data
  c.cache.frame_bytes = o.frame_bytes;
  c.cache.frame_percent = o.frame_percent != 0 ? o.frame_percent : o.base_first ? 50 : 100;
  c.cache.fill_percent = o.fill_percent;
  c.cache.splinter_percent = o.splinter_percent;
  c.cache.promote_percent = o.promote_percent;
  c.cache.base_first = o.base_first;
  // Before the first (base) runs, not only when the first two_level cache opens.
  check_policy_percents(c.cache);
  c.cache.pinning = o.pinning == "epochs" ? pinning_kind::epochs : pinning_kind::frame_pins;
  c.runtime.controller_sms = o.storage.controller_sms;
  c.runtime.quiet = true;
  c.cpu_workers = o.storage.workers ? o.storage.workers : 4;
  c.graph = o.graph;
  c.progress = log_line;
  if (o.translation == "both") {
    // Base first: its shared runs are printed before two-level's, whatever happens to those.
    c.translations = {translation_kind::base, translation_kind::two_level};
  } else if (o.translation == "two_level") {
    c.translations = {translation_kind::two_level};
  } else {
    c.translations = {translation_kind::base};
  }
  return c;
}

void run_tenants_command(tenants_options& o) {
  const tenants::study_config config = make_config(o);
  std::vector<tenants::mix> mixes;
  for (const std::string& text : o.mixes) {
    for (tenants::mix& m : tenants::expand_mixes(text)) mixes.push_back(std::move(m));
  }
  std::cout << "bam tenants: " << mixes.size() << " mix(es), "
            << (config.gpu ? "each tenant on its own GPU stream"
                           : "each tenant on its own host thread and CPU stream")
            << ", " << config.repetitions << " repetition(s), medians\n\n";
  tenants::alone_map alone;
  std::vector<tenants::mix_result> results;
  bool all_verified = true;
  for (const tenants::mix& m : mixes) {
    results.push_back(tenants::run_mix(config, m, alone, log_line));
    tenants::print_mix(std::cout, config, results.back());
    all_verified = all_verified && results.back().verified;
    if (!o.json.empty()) {  // rewritten after every mix, so a cut-off run keeps what it did
      json_writer j;
      tenants::write_study_json(j, config, results);
      j.save(o.json);
    }
  }
  if (!all_verified) throw error("a tenant's result differed between runs (see the tables)");
}

}  // namespace

void add_tenants_command(CLI::App& app) {
  auto o = std::make_shared<tenants_options>();
  CLI::App* c = app.add_subcommand(
      "tenants",
      "Multi-tenant study: bfs, cc, gather and scan tenants share one page cache; weighted "
      "speedup under two-level vs base translation against each tenant alone");
  c->add_option("--mix", o->mixes,
                "A mix: tenants separated by commas (bfs,cc,gather,scan), or a preset: "
                "homogeneous, pairs, triples, all, random:N[:SEED], study; several with ';' or "
                "by repeating --mix")
      ->capture_default_str();
  c->add_option("--translation", o->translation,
                "Shared runs under two_level, base, or both (and their ratio)")
      ->check(CLI::IsMember({"two_level", "base", "both"}))
      ->capture_default_str();
  c->add_option("--repetitions", o->study.repetitions, "Runs of each configuration (medians)")
      ->check(CLI::Range(1u, 100u))
      ->capture_default_str();
  c->add_option("--graph", o->graph, "Graph file (.bcsr) for bfs and cc tenants")
      ->check(CLI::ExistingFile);
  c->add_option("--gather-bytes", o->study.gather_bytes, "Each gather tenant's array")
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--gather-reads", o->study.gather_reads,
                "Random 8-byte reads per gather run (0: one per element)")
      ->transform(whole_number())
      ->capture_default_str();
  c->add_option("--scan-bytes", o->study.scan_bytes, "Each scan tenant's array")
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--frame-bytes", o->frame_bytes, "Large frame (two_level)")
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--frame-percent", o->frame_percent,
                "Share of the cache carved into frames (two_level; every tenant is dense). "
                "Default 100, or 50 with --base-first, whose pieces start in the rest")
      ->check(CLI::Range(1u, 100u));
  c->add_option("--fill-percent", o->fill_percent,
                "Load the rest of a piece once this share of it is resident, in multi-page "
                "commands (two_level; 0: never)")
      ->check(CLI::Range(0u, 100u))
      ->capture_default_str();
  c->add_option("--splinter-percent", o->splinter_percent,
                "Splinter a piece evicted holding at most this share of its frame (two_level; "
                "0: never)")
      ->check(CLI::Range(0u, 100u))
      ->capture_default_str();
  c->add_option("--promote-percent", o->promote_percent,
                "Promote a splintered piece back to a frame past this share (two_level)")
      ->check(CLI::Range(1u, 100u))
      ->capture_default_str();
  c->add_flag("--base-first", o->base_first,
              "Start pieces on base pages of the base pool and promote them into frames past "
              "--promote-percent (two_level; needs --frame-percent below 100)");
  c->add_option("--pinning", o->pinning, "frame_pins or epochs (two_level)")
      ->check(CLI::IsMember({"frame_pins", "epochs"}))
      ->capture_default_str();
  c->add_option("--frame-quota", o->study.frame_quota, "Frames each tenant may hold (0: none)")
      ->capture_default_str();
  c->add_option("--progress-s", o->study.progress_interval_s,
                "Seconds between progress lines of a shared run (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c->add_flag("!--no-compaction", o->study.compaction,
              "two_level: no compaction agent beside the tenants (a host thread on the CPU "
              "path, one GPU thread on a GPU)");
  c->add_flag("!--no-shares", o->study.measure_shares,
              "Do not split first runs into data, translation and misses (skips each tenant's "
              "timed second run and its run over memory with no cache)");
  o->storage.add_to(*c);
  add_json_option(*c, o->json);
  c->callback([o] { run_tenants_command(*o); });
}

}  // namespace bam::tools
