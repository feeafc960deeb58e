#pragma once
// Support for the GPU tests: each test is a program that checks its own invariants and
// returns non-zero on failure. Options:
//   --placement gpu_kernel|host_thread|both   which controller serves the queues (default both)
//   --small                                   a configuration small enough for compute-sanitizer
//   --image pinned|device                     where the gpu_kernel placement's image lives

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <bam/error.hpp>
#include <bam/platform/launch.cuh>
#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>
#include <bam/storage/emulated_storage.hpp>

namespace bam::gpu_test {

struct options {
  std::vector<controller_placement> placements{controller_placement::gpu_kernel,
                                               controller_placement::host_thread};
  bool small = false;
  memory_kind image = memory_kind::pinned;
};

inline options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const std::string next = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--small") {
      o.small = true;
    } else if (a == "--placement") {
      ++i;
      if (next == "gpu_kernel") {
        o.placements = {controller_placement::gpu_kernel};
      } else if (next == "host_thread") {
        o.placements = {controller_placement::host_thread};
      } else if (next != "both") {
        throw input_error("--placement must be gpu_kernel, host_thread or both");
      }
    } else if (a == "--image") {
      ++i;
      if (next == "device") {
        o.image = memory_kind::device;
      } else if (next != "pinned") {
        throw input_error("--image must be pinned or device");
      }
    } else {
      throw input_error("unknown option '" + a + "'");
    }
  }
  return o;
}

inline const char* name(controller_placement p) {
  return p == controller_placement::gpu_kernel ? "gpu_kernel" : "host_thread";
}

/// Counts failed expectations and prints each.
class checker {
 public:
  explicit checker(std::string test) : test_(std::move(test)) {}
  bool expect(bool ok, const std::string& what) {
    if (!ok) {
      ++failures_;
      std::fprintf(stderr, "%s: FAIL: %s\n", test_.c_str(), what.c_str());
    }
    return ok;
  }
  template <class A, class B>
  bool equal(const A& a, const B& b, const std::string& what) {
    return expect(a == b, what + ": got " + std::to_string(a) + ", expected " + std::to_string(b));
  }
  void note(const std::string& line) const {
    std::printf("%s: %s\n", test_.c_str(), line.c_str());
    std::fflush(stdout);  // a later hang must not swallow what came before it
  }
  [[nodiscard]] int result() const {
    std::printf("%s: %s (%d failures)\n", test_.c_str(), failures_ ? "FAILED" : "passed",
                failures_);
    return failures_ ? 1 : 0;
  }
  [[nodiscard]] int failures() const { return failures_; }

 private:
  std::string test_;
  int failures_ = 0;
};

/// The generator every image is filled with: the 8-byte word at image byte `offset`.
BAM_HD inline std::uint64_t pattern_word(std::uint64_t offset) {
  std::uint64_t x = offset + 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  return x ^ (x >> 27);
}

/// The image byte of device byte `b` of `device` (device_set_ref's striping, inverted).
BAM_HD inline std::uint64_t image_byte(const device_set_ref& set, std::uint32_t device,
                                       std::uint64_t b) {
  if (set.devices == 1 || set.replicated) return b;
  const std::uint64_t stripe = b / set.stripe_bytes;
  return (stripe * set.devices + device) * set.stripe_bytes + b % set.stripe_bytes;
}

/// Fills a host buffer of `bytes` with the pattern.
inline void fill_pattern(std::uint8_t* host, std::uint64_t bytes) {
  for (std::uint64_t o = 0; o + 8 <= bytes; o += 8) {
    const std::uint64_t w = pattern_word(o);
    std::memcpy(host + o, &w, 8);
  }
}

/// Copies `bytes` between host and GPU memory on a stream of its own and waits (bounded): the
/// copy runs beside whatever the runtime's streams run, the controller included.
inline void copy_beside(gpu_runtime& rt, void* dst, const void* src, std::uint64_t bytes,
                        const std::string& what) {
  const owned_stream s = owned_stream::create_non_blocking();
  copy_async(dst, src, bytes, s.get());
  rt.synchronize(s.get(), 0, what);
}

/// An image of `bytes` filled with the pattern, in `kind` memory (set-up only).
inline std::shared_ptr<backing_store> pattern_image(std::uint64_t bytes, memory_kind kind,
                                                    gpu_runtime& rt) {
  auto image = backing_store::in_memory(bytes, kind);
  if (kind == memory_kind::device) {
    std::vector<std::uint8_t> staging(bytes);
    fill_pattern(staging.data(), bytes);
    copy_beside(rt, image->data(), staging.data(), bytes, "loading the image");
  } else {
    fill_pattern(image->data(), bytes);
  }
  return image;
}

/// Memory the placement's controller can move data into: GPU memory for the kernel, pinned
/// memory for a host thread. Page aligned (neither allocator promises 4 KiB alignment: seen
/// on the H200, a small cudaHostAlloc was not page aligned, which broke PRP lists).
class io_memory {
 public:
  io_memory(controller_placement p, std::uint64_t bytes) {
    std::uint8_t* raw = nullptr;
    if (p == controller_placement::gpu_kernel) {
      device_ = device_memory(bytes + 4096);
      raw = device_.as<std::uint8_t>();
    } else {
      pinned_ = pinned_memory(bytes + 4096);
      raw = pinned_.as<std::uint8_t>();
    }
    data_ = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(raw) + 4095) &
                                            ~std::uintptr_t{4095});
  }
  [[nodiscard]] std::uint8_t* data() const { return data_; }

 private:
  device_memory device_;
  pinned_memory pinned_;
  std::uint8_t* data_ = nullptr;
};

/// The runtime settings the tests use: a watchdog that speaks up after a few seconds.
inline runtime_config test_runtime_config() {
  runtime_config c;
  c.watchdog_period_ns = 500'000'000;
  c.stuck_after_ns = 5'000'000'000;
  c.wait_timeout_ns = 60'000'000'000;
  return c;
}

/// Copies `count` values of T from GPU (or pinned) memory to the host and waits.
template <class T>
std::vector<T> download(gpu_runtime& rt, const T* from, std::size_t count) {
  std::vector<T> out(count);
  copy_async(out.data(), from, count * sizeof(T), rt.stream());
  rt.synchronize(rt.stream(), 0, "copying results");
  return out;
}

/// Runs `body` and turns exceptions into failures, so one placement's error does not hide
/// the other's result.
/// BAM_GPU_TEST_ONLY=TEXT runs only the cases whose name contains TEXT.
template <class Body>
void guarded(checker& c, const std::string& what, Body&& body) {
  const char* only = std::getenv("BAM_GPU_TEST_ONLY");
  if (only != nullptr && what.find(only) == std::string::npos) return;
  c.note("begin: " + what);
  try {
    body();
  } catch (const std::exception& e) {
    c.expect(false, what + ": " + e.what());
  }
  c.note("end: " + what);
}

/// Prints the watchdog's lines and ends the process: a kernel that did not finish can be
/// neither stopped nor freed (a free waits for it), so cleanup would hang.
[[noreturn]] inline void exit_without_cleanup(gpu_runtime& rt, const std::string& what) {
  for (const std::string& line : rt.watchdog_reports())
    std::fprintf(stderr, "  %s\n", line.c_str());
  std::fprintf(stderr, "%s: a kernel did not finish; exiting without cleanup\n", what.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(2);
}

/// Waits for the kernels on the runtime's stream. A kernel that does not finish can be neither
/// stopped nor freed (a free waits for it), so a timeout ends the process with the reason and
/// the watchdog's lines rather than hanging in destructors.
inline void wait_or_exit(checker& c, gpu_runtime& rt, const std::string& what,
                         std::uint64_t timeout_ns = 0) {
  try {
    rt.synchronize(rt.stream(), timeout_ns, what);
  } catch (const std::exception& e) {
    c.expect(false, e.what());
    exit_without_cleanup(rt, what);
  }
}

/// The main() of a test that runs `run(checker, placement, options)` once per placement the
/// command line asks for; returns the program's exit code.
template <class Run>
int run_per_placement(int argc, char** argv, const char* test, Run&& run) {
  checker c(test);
  try {
    const options o = parse(argc, argv);
    for (controller_placement p : o.placements) {
      guarded(c, name(p), [&] { run(c, p, o); });
    }
  } catch (const std::exception& e) {
    c.expect(false, e.what());
  }
  return c.result();
}

}  // namespace bam::gpu_test
