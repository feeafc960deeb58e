// `bam bench ...`: benchmark programs. Each prints a table and, with --json, writes its figures.

#include <memory>

#include "bam/commands.hpp"
#include "cache_bench.hpp"
#include "ceilings.hpp"
#include "queue_bench.hpp"

namespace bam::tools {

namespace {

// bench cache: random reads through a bam::array (bench/cache_bench.hpp).
void add_cache_bench(CLI::App& bench) {
  auto o = std::make_shared<bench::cache_bench_options>();
  CLI::App* c = bench.add_subcommand(
      "cache", "Random element reads through a bam::array and its page cache (hit or miss)");
  c->add_option("--pattern", o->pattern,
                "hit (data fits the cache and is read once first) or miss (data many times the "
                "cache)")
      ->check(CLI::IsMember({"hit", "miss"}))
      ->capture_default_str();
  c->add_option("--line-bytes", o->line_bytes, "Cache line, a power of two from 512 to 64K")
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--cache-bytes", o->cache_bytes, "Cache capacity")
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--data-bytes", o->data_bytes, "Data read (0: hit 1/2 the cache, miss 16x)")
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--element-bytes", o->element_bytes, "Element size, 4 or 8")
      ->check(CLI::IsMember({4u, 8u}))
      ->capture_default_str();
  c->add_option("--accesses", o->accesses, "Timed reads in total")->capture_default_str();
  c->add_option("--threads", o->threads, "CPU threads")->capture_default_str();
  c->add_option("--cache-mode", o->mode, "none | naive | optimized")
      ->check(CLI::IsMember({"none", "naive", "optimized"}))
      ->capture_default_str();
  c->add_option("--latency-us", o->latency_us, "Modelled device latency in microseconds")
      ->capture_default_str();
  add_json_option(*c, o->json);
  c->callback([o] { bench::run_cache_bench(*o); });
}

// bench ceilings: copy bandwidths and random-read rates everything else is compared to.
void add_ceilings_bench(CLI::App& bench) {
  auto o = std::make_shared<bench::ceilings_options>();
  CLI::App* c = bench.add_subcommand(
      "ceilings", "HBM and host copy bandwidths, random zero-copy and HBM read rates (GPU)");
  c->add_option("--footprint", o->footprints, "Host footprints of the zero-copy reads (list)")
      ->delimiter(',')
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--line-bytes", o->line_bytes, "Line sizes of the random line reads (list)")
      ->delimiter(',')
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--seconds", o->seconds, "Length of one timed repetition")->capture_default_str();
  c->add_option("--repetitions", o->repetitions, "Timed repetitions per figure (median)")
      ->capture_default_str();
  c->add_option("--hbm-bytes", o->hbm_bytes, "HBM buffer of the random reads")
      ->transform(size_transformer())
      ->capture_default_str();
  c->add_option("--copy-bytes", o->copy_bytes, "Bytes per cudaMemcpyAsync of the copy ceilings")
      ->transform(size_transformer())
      ->capture_default_str();
  add_json_option(*c, o->json);
  c->callback([o] { bench::run_ceilings(*o); });
}

}  // namespace

void add_bench_commands(CLI::App& app) {
  CLI::App* bench =
      app.add_subcommand("bench", "Benchmarks (print a table, --json FILE for figures)");
  bench->require_subcommand(1);

  auto q = std::make_shared<bench::queue_bench_options>();
  CLI::App* queue = bench->add_subcommand(
      "queue", "Commands per second through the NVMe queue protocol (ticketed or naive)");
  queue
      ->add_option("--side", q->side,
                   "gpu (GPU threads, GPU controller kernel) or cpu (CPU threads, CPU "
                   "controller); default gpu when a GPU is present")
      ->check(CLI::IsMember({"gpu", "cpu"}));
  queue->add_option("--protocol", q->protocol, "ticket or naive")
      ->check(CLI::IsMember({"ticket", "naive"}))
      ->capture_default_str();
  queue
      ->add_option("--threads", q->threads,
                   "Submitting threads (0: cpu 64, gpu every resident thread)")
      ->capture_default_str();
  queue->add_option("--commands", q->commands, "Commands in total")->capture_default_str();
  queue->add_option("--depth", q->depth, "Entries per queue, 2..65535 (0: cpu 64, gpu 1024)")
      ->capture_default_str();
  queue->add_option("--queues", q->queues, "Queue pairs per device (0: cpu 4, gpu 128)")
      ->capture_default_str();
  queue->add_option("--devices", q->devices, "Emulated devices (gpu side)")->capture_default_str();
  queue->add_option("--image", q->image, "gpu side: the image in pinned host or GPU memory")
      ->check(CLI::IsMember({"pinned", "device"}))
      ->capture_default_str();
  queue
      ->add_option("--controller-sms", q->controller_sms,
                   "gpu side: SMs of the controller's green context")
      ->capture_default_str();
  queue->add_option("--io-bytes", q->io_bytes, "Bytes per read (512..4096)")
      ->transform(size_transformer())
      ->capture_default_str();
  queue->add_option("--latency-us", q->latency_us, "Modelled device latency in microseconds")
      ->capture_default_str();
  add_json_option(*queue, q->json);
  queue->callback([q] { bench::run_queue_bench(*q); });
  add_cache_bench(*bench);
  add_ceilings_bench(*bench);
}

}  // namespace bam::tools
