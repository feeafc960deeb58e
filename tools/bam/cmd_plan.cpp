// `bam plan`: what a cache and its translation will cost before anything is allocated:
// metadata bytes against the GPU's L2 and memory, and the smallest cache a launch needs.

#include <iostream>
#include <memory>

#include <bam/cache.hpp>
#include <bam/error.hpp>

#include "bam/commands.hpp"
#include "common/json_writer.hpp"
#include "common/sizes.hpp"
#include "common/table.hpp"

namespace bam::tools {

namespace {

struct plan_options {
  std::uint64_t data_bytes = 0;
  std::uint64_t cache_bytes = 0;
  std::uint64_t line_bytes = 4096;
  std::uint64_t warps = 132 * 64;                // every resident warp of an H200
  std::uint64_t l2_bytes = 60ull << 20;          // H200 L2 as the runtime reports it
  std::uint64_t gpu_bytes = 141'000'000'000ull;  // H200 HBM3e
  std::uint32_t bounce_buffers = 0;
  std::string json;
};

std::string ratio(std::uint64_t a, std::uint64_t b) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3gx",
                b ? static_cast<double>(a) / static_cast<double>(b) : 0.0);
  return text;
}

void plan(const plan_options& o) {
  if (o.data_bytes == 0) throw input_error("--data-bytes must be positive");
  cache_config c;
  c.line_bytes = static_cast<std::uint32_t>(o.line_bytes);
  c.capacity_bytes = o.cache_bytes;
  c.bounce_buffers = o.bounce_buffers;
  const cache_plan p = plan_cache(c, o.data_bytes, o.warps);
  table t({"item", "bytes", "vs L2", "vs GPU memory"});
  auto row = [&](const std::string& name, std::uint64_t bytes) {
    t.add_row({name, format_bytes(static_cast<double>(bytes)), ratio(bytes, o.l2_bytes),
               ratio(bytes, o.gpu_bytes)});
  };
  row("cache lines (data)", p.lines * o.line_bytes);
  row("line state + CLOCK", p.line_state_bytes);
  row("PRP lists", p.prp_list_bytes);
  row("bounce buffers", p.bounce_bytes);
  row("page tables (4 B per page)", p.page_table_bytes);
  row("metadata in all", p.metadata_bytes);
  row("cache + metadata", p.lines * o.line_bytes + p.metadata_bytes);
  t.print(std::cout);
  std::cout << p.lines << " lines of " << format_bytes(static_cast<double>(o.line_bytes))
            << " over " << format_bytes(static_cast<double>(o.data_bytes)) << " of data ("
            << ratio(o.data_bytes, p.lines * o.line_bytes) << " the cache)\n"
            << "smallest cache for a launch of " << o.warps
            << " concurrent warps: " << p.min_lines_for_launch << " lines ("
            << format_bytes(static_cast<double>(p.min_lines_for_launch * o.line_bytes)) << ")"
            << (p.lines < p.min_lines_for_launch
                    ? "; this cache is smaller: read-only arrays fall back to "
                      "uncached reads, writable ones are refused\n"
                    : "; this cache is large enough\n");
  if (!o.json.empty()) {
    json_writer j;
    j.begin_object()
        .field("data_bytes", o.data_bytes)
        .field("cache_bytes", p.lines * o.line_bytes)
        .field("line_bytes", o.line_bytes)
        .field("lines", p.lines)
        .field("line_state_bytes", p.line_state_bytes)
        .field("prp_list_bytes", p.prp_list_bytes)
        .field("bounce_bytes", p.bounce_bytes)
        .field("page_table_bytes", p.page_table_bytes)
        .field("metadata_bytes", p.metadata_bytes)
        .field("l2_bytes", o.l2_bytes)
        .field("gpu_bytes", o.gpu_bytes)
        .field("concurrent_warps", o.warps)
        .field("min_lines_for_launch", p.min_lines_for_launch)
        .end_object();
    j.save(o.json);
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto o = std::make_shared<plan_options>();
  CLI::App* c = app.add_subcommand(
      "plan", "Metadata a cache needs against L2 and GPU memory, before allocating");
  c->add_option("--data-bytes", o->data_bytes, "Bytes of array data")
      ->required()
      ->transform(size_transformer());
  c->add_option("--cache-bytes", o->cache_bytes, "Cache capacity, more than 0")
      ->required()
      ->transform(size_transformer())
      ->check(nonzero_size());
  c->add_option("--line-bytes", o->line_bytes, "Cache line size")
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--warps", o->warps, "Warps a launch runs at once (default: all of an H200)")
      ->transform(whole_number())
      ->capture_default_str();
  c->add_option("--l2-bytes", o->l2_bytes, "GPU L2 size (default: H200)")
      ->transform(size_transformer());
  c->add_option("--gpu-bytes", o->gpu_bytes, "GPU memory (default: H200)")
      ->transform(size_transformer());
  c->add_option("--bounce-buffers", o->bounce_buffers, "Read-through buffers of 4 KiB");
  add_json_option(*c, o->json);
  c->callback([o] { plan(*o); });
}

}  // namespace bam::tools
