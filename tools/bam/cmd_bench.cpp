// `bam bench ...`: benchmark programs. Each prints a table and, with --json, writes its figures.

#include <memory>

#include "bam/commands.hpp"
#include "queue_bench.hpp"

namespace bam::tools {

void add_bench_commands(CLI::App& app) {
  CLI::App* bench =
      app.add_subcommand("bench", "Benchmarks (print a table, --json FILE for figures)");
  bench->require_subcommand(1);

  auto q = std::make_shared<bench::queue_bench_options>();
  CLI::App* queue = bench->add_subcommand(
      "queue", "Commands per second through the NVMe queue protocol (ticketed or naive)");
  queue->add_option("--protocol", q->protocol, "ticket or naive")
      ->check(CLI::IsMember({"ticket", "naive"}))
      ->capture_default_str();
  queue->add_option("--threads", q->threads, "Submitting threads")->capture_default_str();
  queue->add_option("--commands", q->commands, "Commands in total")->capture_default_str();
  queue->add_option("--depth", q->depth, "Entries per queue (2..65535)")->capture_default_str();
  queue->add_option("--queues", q->queues, "Queue pairs")->capture_default_str();
  queue->add_option("--io-bytes", q->io_bytes, "Bytes per read (512..4096)")
      ->transform(size_transformer())
      ->capture_default_str();
  queue->add_option("--latency-us", q->latency_us, "Modelled device latency in microseconds")
      ->capture_default_str();
  add_json_option(*queue, q->json);
  queue->callback([q] { bench::run_queue_bench(*q); });
}

}  // namespace bam::tools
