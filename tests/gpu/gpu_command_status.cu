// One GPU thread sends a script of commands and records each status; the host checks the
// statuses, the bytes (PRP lists, a PRP1 offset, a stripe crossing, the image's tail), a
// write read back, and that a FLUSH reached the file on disk.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "gpu_test.cuh"

namespace bam::gpu_test {
namespace {

constexpr std::uint64_t page = 4096;
constexpr std::uint64_t file_bytes = (2ull << 20) + 1000;  // a partial last block
constexpr std::uint64_t stripe = 64 * 1024;

// Where each buffer sits in the I/O memory (page numbers).
constexpr std::uint64_t page_a = 0, page_c = 8, page_l1 = 20, page_l2 = 21, page_l3 = 22,
                        page_w = 24, page_r = 32, page_t = 40, pages = 48;

enum step : std::uint32_t {
  read_one,
  read_out_of_range,
  bad_opcode,
  bad_namespace,
  bad_prp_offset,
  read_with_list,
  read_across_stripes,
  write_with_list,
  read_back,
  read_bad_lba,
  flush,
  read_tail,
  steps
};

struct script_kernel {
  device_set_ref set;
  std::uint8_t* mem;
  std::uint32_t* statuses;
  std::uint64_t dev0_blocks;
  bool run;

  __device__ std::uint64_t at(std::uint64_t page_number, std::uint64_t offset = 0) const {
    return reinterpret_cast<std::uint64_t>(mem + page_number * page + offset);
  }
  __device__ void list(std::uint64_t list_page, std::uint64_t first_page, int entries) const {
    auto* l = reinterpret_cast<std::uint64_t*>(mem + list_page * page);
    for (int i = 0; i < entries; ++i) l[i] = at(first_page + 1 + i);
  }
  __device__ void send(step s, std::uint32_t device, nvme::submission_entry cmd) const {
    queue_ticket t;
    statuses[s] = set.queue(device, 0).execute(cmd, t).bits();
  }

  __device__ void operator()(thread_index t) const {
    if (t.id != 0 || !run) return;
    using nvme::io_opcode;
    send(read_one, 0, nvme::make_rw(io_opcode::read, 1, 0, 1, at(page_a), 0));
    send(read_out_of_range, 0, nvme::make_rw(io_opcode::read, 1, dev0_blocks, 1, at(page_a), 0));
    auto bad = nvme::make_rw(io_opcode::read, 1, 0, 1, at(page_a), 0);
    bad.opcode = 0x7f;
    send(bad_opcode, 0, bad);
    send(bad_namespace, 0, nvme::make_rw(io_opcode::read, 2, 0, 1, at(page_a), 0));
    send(bad_prp_offset, 0, nvme::make_rw(io_opcode::read, 1, 0, 1, at(page_a, 2), 0));
    // 16 KiB into four pages: PRP1 and a list of three.
    list(page_l1, page_a, 3);
    send(read_with_list, 0, nvme::make_rw(io_opcode::read, 1, 64, 32, at(page_a), at(page_l1)));
    // 16 KiB from PRP1 at offset 512 (five pages, a list of four), crossing device 1's stripe
    // boundary at 64 KiB, so the image side splits too.
    list(page_l2, page_c, 4);
    send(read_across_stripes, 1,
         nvme::make_rw(io_opcode::read, 1, 112, 32, at(page_c, 512), at(page_l2)));
    list(page_l3, page_w, 3);
    send(write_with_list, 0, nvme::make_rw(io_opcode::write, 1, 256, 32, at(page_w), at(page_l3)));
    list(page_l3, page_r, 3);
    send(read_back, 0, nvme::make_rw(io_opcode::read, 1, 256, 32, at(page_r), at(page_l3)));
    send(read_bad_lba, 0, nvme::make_rw(io_opcode::read, 1, 1000, 1, at(page_a), 0));
    send(flush, 0, nvme::make_flush(1));
    // Device 0's stripe 16 is the image's last, partial stripe: 1000 bytes, then zeros.
    send(read_tail, 0, nvme::make_rw(io_opcode::read, 1, 2048, 4, at(page_t), 0));
  }
};

// The bytes a read of device `device` at device byte `b` returns (host reference).
std::vector<std::uint8_t> expected(const std::vector<std::uint8_t>& file, std::uint32_t device,
                                   std::uint64_t b, std::uint64_t n) {
  std::vector<std::uint8_t> out(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t d = b + i;
    const std::uint64_t image = ((d / stripe) * 2 + device) * stripe + d % stripe;
    out[i] = image < file.size() ? file[image] : 0;
  }
  return out;
}

std::string status_text(std::uint32_t bits) {
  const io_status s = io_status::from_bits(bits);
  return std::string(s.name()) + " (bits " + std::to_string(bits) + ")";
}

void run(checker& c, controller_placement placement, const options&) {
  const std::string p = name(placement);
  gpu_runtime rt(test_runtime_config());
  if (!c.expect(rt.gpu(), "a GPU is present: " + rt.message())) return;

  char path[] = "/tmp/bam_command_status_XXXXXX";
  const int fd = ::mkstemp(path);
  if (!c.expect(fd >= 0, "a temporary file")) return;
  std::vector<std::uint8_t> file(file_bytes);
  fill_pattern(file.data(), file_bytes);
  c.expect(::pwrite(fd, file.data(), file_bytes, 0) == static_cast<ssize_t>(file_bytes),
           "writing the image file");
  ::close(fd);

  storage_config cfg;
  cfg.devices = 2;
  cfg.queues_per_device = 1;
  cfg.queue_depth = 8;
  cfg.stripe_bytes = stripe;
  cfg.model = device_model::unlimited();
  cfg.model.latency_us = 1;
  cfg.faults.bad_lba_begin = 1000;
  cfg.faults.bad_lba_end = 1010;
  cfg.timeout_ns = 20'000'000'000ull;
  cfg.placement = placement;
  auto image = backing_store::from_file(path, true, memory_kind::pinned);
  emulated_storage ssd(cfg, image, &rt);
  const std::uint64_t dev0_blocks = 17 * (stripe / cfg.block_bytes);  // 33 stripes, 17 on dev 0

  io_memory mem(placement, pages * page);
  // Mapped memory: readable even after a kernel fault, to show how far the script got.
  pinned_memory statuses(sizeof(std::uint32_t) * steps);
  std::vector<std::uint8_t> written(16384);
  for (std::size_t i = 0; i < written.size(); ++i)
    written[i] = static_cast<std::uint8_t>(i * 7 + 3);
  copy_async(mem.data() + page_w * page, written.data(), written.size(), rt.stream());
  for (std::uint32_t i = 0; i < steps; ++i) statuses.as<std::uint32_t>()[i] = 0xdeadbeefu;
  rt.synchronize(rt.stream());

  script_kernel k{ssd.ref(), mem.data(), statuses.as<std::uint32_t>(), dev0_blocks, false};
  rt.preload({kernel_function<script_kernel>()});
  rt.warm_up([&](stream_handle s) { launch(s, 1, 32, k); });
  k.run = true;
  stop_guard guard(rt);
  rt.start();
  launch(rt.stream(), 1, 32, k);
  try {
    rt.synchronize(rt.stream(), 0, "the command script");
  } catch (...) {
    for (std::uint32_t i = 0; i < steps; ++i) {
      c.note(p + ": step " + std::to_string(i) + " ended with " +
             status_text(static_cast<volatile std::uint32_t*>(statuses.as<std::uint32_t>())[i]));
    }
    throw;
  }
  // The FLUSH completed: the file must hold the written block now, controller still running.
  std::vector<std::uint8_t> on_disk(16384);
  const int rfd = ::open(path, O_RDONLY);
  const std::uint64_t write_image = ((256 * 512ull) / stripe * 2 + 0) * stripe;
  const bool read_ok =
      rfd >= 0 && ::pread(rfd, on_disk.data(), on_disk.size(), static_cast<off_t>(write_image)) ==
                      static_cast<ssize_t>(on_disk.size());
  if (rfd >= 0) ::close(rfd);
  const storage_stats stats = ssd.stats();
  rt.check();
  rt.stop();
  ::unlink(path);

  const std::vector<std::uint32_t> st(statuses.as<std::uint32_t>(),
                                      statuses.as<std::uint32_t>() + steps);
  std::vector<std::uint8_t> m(pages * page);
  copy_async(m.data(), mem.data(), m.size(), rt.stream());
  rt.synchronize(rt.stream());

  auto expect_status = [&](step s, std::uint32_t want, const char* what) {
    c.expect(st[s] == want,
             p + ": " + what + ": got " + status_text(st[s]) + ", expected " + status_text(want));
  };
  using nvme::generic_status;
  using nvme::make_status_field;
  expect_status(read_one, 0, "one-block read");
  expect_status(read_out_of_range, make_status_field(generic_status::lba_out_of_range, true),
                "read past the namespace");
  expect_status(bad_opcode, make_status_field(generic_status::invalid_opcode, true),
                "unknown opcode");
  expect_status(bad_namespace, make_status_field(generic_status::invalid_namespace, true),
                "namespace 2");
  expect_status(bad_prp_offset, make_status_field(generic_status::prp_offset_invalid, true),
                "PRP1 not dword aligned");
  expect_status(read_with_list, 0, "16 KiB read with a PRP list");
  expect_status(read_across_stripes, 0, "read across a stripe boundary with PRP1 offset");
  expect_status(write_with_list, 0, "16 KiB write with a PRP list");
  expect_status(read_back, 0, "read back");
  expect_status(read_bad_lba, make_status_field(nvme::media_status::unrecovered_read_error),
                "read of an injected bad LBA");
  expect_status(flush, 0, "FLUSH");
  expect_status(read_tail, 0, "read of the image's tail");

  auto compare = [&](const std::uint8_t* got, const std::vector<std::uint8_t>& want,
                     const std::string& what) {
    c.expect(std::memcmp(got, want.data(), want.size()) == 0, p + ": bytes of " + what);
  };
  compare(m.data() + page_a * page, expected(file, 0, 64 * 512, 16384), "the PRP-list read");
  compare(m.data() + page_c * page + 512, expected(file, 1, 112 * 512, 16384),
          "the stripe-crossing read");
  compare(m.data() + page_r * page, written, "the read-back");
  compare(m.data() + page_t * page, expected(file, 0, 2048 * 512, 2048), "the tail read");
  c.expect(read_ok && on_disk == written, p + ": the FLUSH wrote the block to the file");
  const device_stats total = stats.total();
  c.equal(total.invalid, std::uint64_t{4}, p + ": commands the controller rejected");
  c.equal(total.injected_errors, std::uint64_t{1}, p + ": injected errors");
  c.equal(total.flushes, std::uint64_t{1}, p + ": flushes");
}

// Sends `count` one-block reads on device 0's queue 0, a status each.
struct reads_kernel {
  device_set_ref set;
  std::uint8_t* mem;
  std::uint32_t* statuses;
  std::uint32_t count;
  bool run;

  __device__ void operator()(thread_index t) const {
    if (t.id != 0 || !run) return;
    for (std::uint32_t k = 0; k < count; ++k) {
      queue_ticket ticket;
      const auto cmd =
          nvme::make_rw(nvme::io_opcode::read, 1, k, 1, reinterpret_cast<std::uint64_t>(mem), 0);
      statuses[k] = set.queue(0, 0).execute(cmd, ticket).bits();
    }
  }
};

// An injected error is a transient fault: the same commands sent again after a queue reset
// (what bam copy does before it retries) must not meet the same errors again. The GPU
// controller reset a queue's draw sequence with the rest of its cursor, so commands sent
// again in the same order met the same injected errors again.
void run_reset_draws(checker& c, controller_placement placement, const options&) {
  const std::string p = name(placement);
  gpu_runtime rt(test_runtime_config());
  if (!c.expect(rt.gpu(), "a GPU is present: " + rt.message())) return;
  constexpr std::uint32_t count = 64;
  storage_config cfg;
  cfg.devices = 1;
  cfg.queues_per_device = 1;
  cfg.queue_depth = 8;
  cfg.model = device_model::unlimited();
  cfg.model.latency_us = 1;
  cfg.faults.error_rate = 0.5;
  cfg.faults.seed = 5;
  cfg.timeout_ns = 20'000'000'000ull;
  cfg.placement = placement;
  auto image = backing_store::in_memory(1 << 20, memory_kind::pinned);
  emulated_storage ssd(cfg, image, &rt);
  io_memory mem(placement, page);
  pinned_memory statuses(sizeof(std::uint32_t) * count);
  reads_kernel k{ssd.ref(), mem.data(), statuses.as<std::uint32_t>(), count, false};
  rt.preload({kernel_function<reads_kernel>()});
  rt.warm_up([&](stream_handle s) { launch(s, 1, 32, k); });
  k.run = true;
  std::vector<std::uint32_t> rounds[2];
  for (auto& round : rounds) {
    {
      stop_guard guard(rt);
      rt.start();
      launch(rt.stream(), 1, 32, k);
      rt.synchronize(rt.stream(), 0, "the reads");
      rt.check();
    }
    round.assign(statuses.as<std::uint32_t>(), statuses.as<std::uint32_t>() + count);
    (void)ssd.reset_queue(0, 0);
  }
  std::uint32_t failed[2] = {0, 0};
  for (int r = 0; r < 2; ++r) {
    for (const std::uint32_t bits : rounds[r]) failed[r] += bits != 0 ? 1 : 0;
  }
  c.expect(failed[0] > 0 && failed[0] < count,
           p + ": some reads failed, some did not (" + std::to_string(failed[0]) + " of 64)");
  c.expect(rounds[0] != rounds[1],
           p + ": after a queue reset the same reads met other injected errors");
}

void run_all(checker& c, controller_placement placement, const options& o) {
  run(c, placement, o);
  run_reset_draws(c, placement, o);
}

}  // namespace
}  // namespace bam::gpu_test

int main(int argc, char** argv) {
  return bam::gpu_test::run_per_placement(argc, argv, "gpu_command_status", bam::gpu_test::run_all);
}
