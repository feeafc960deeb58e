// .bcsr files (bam graph info / export, the apps' graph reader): the header checks, the
// offsets, the full scan of graph info (flags included), read_csr and an export to an edge
// list.
//
// Input: [header, 128 bytes][payload]. The harness writes the header at byte 0 and the
// payload into the sections the header declares, in order (offsets, neighbours, weights), each
// at its declared offset, as far as the payload reaches; the rest is zeros. The file ends
// where the last declared section does (at most 4 MiB), less 8 x the header's first reserved
// byte, so the fuzzer can also cut a file short. Declarations past 4 MiB stay in the header,
// for the checks to refuse.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include <bam/graph/bcsr.hpp>
#include <bam/graph/csr.hpp>

#include "fuzz_support.hpp"
#include "graph/formats.hpp"
#include "graph/info.hpp"

namespace {

constexpr std::uint64_t max_file_bytes = std::uint64_t{4} << 20;

// Writes the file the input describes; returns its path.
std::filesystem::path build_file(const std::uint8_t* data, std::size_t size) {
  bam::graph::bcsr_header h{};
  std::memcpy(&h, data, std::min(size, sizeof h));
  std::string_view payload;
  if (size > sizeof h) payload = bam::fuzz::as_text(data + sizeof h, size - sizeof h);

  std::uint64_t length = sizeof h;
  for (const bam::graph::bcsr_section& s : {h.offsets, h.neighbors, h.weights}) {
    if (s.offset <= max_file_bytes && s.bytes <= max_file_bytes - s.offset) {
      length = std::max(length, s.offset + s.bytes);
    }
  }
  const std::uint64_t cut = std::uint64_t{h.reserved[0]} * 8;
  length = length > cut ? length - cut : 0;

  const std::filesystem::path path = bam::fuzz::scratch() / "g.bcsr";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + path.string());
  auto put = [&](std::uint64_t at, const void* bytes, std::uint64_t count) {
    if (at >= length) return;
    count = std::min(count, length - at);
    if (::pwrite(fd, bytes, count, static_cast<off_t>(at)) != static_cast<ssize_t>(count)) {
      throw std::runtime_error("cannot write " + path.string());
    }
  };
  if (::ftruncate(fd, static_cast<off_t>(length)) != 0) throw std::runtime_error("ftruncate");
  put(0, &h, std::min<std::uint64_t>(sizeof h, size));
  for (const bam::graph::bcsr_section& s : {h.offsets, h.neighbors, h.weights}) {
    if (payload.empty()) break;
    if (s.offset > max_file_bytes || s.bytes > max_file_bytes) continue;
    const std::uint64_t take = std::min<std::uint64_t>(s.bytes, payload.size());
    put(s.offset, payload.data(), take);
    payload.remove_prefix(take);
  }
  ::close(fd);
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path path = build_file(data, size);
  bam::fuzz::expect_clean([&] { (void)bam::graph::read_header(path); });
  bam::fuzz::expect_clean([&] { (void)bam::graph::load_offsets(path); });
  bam::fuzz::expect_clean([&] { (void)bam::graph::summarize_graph(path, 1); });
  bam::fuzz::expect_clean([&] { (void)bam::graph::read_csr(path); });
  bam::fuzz::expect_clean([&] {
    bam::graph::export_graph(path, bam::fuzz::scratch() / "out.el", bam::graph::graph_format::el);
  });
  return 0;
}
