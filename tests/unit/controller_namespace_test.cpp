// How an emulated device's namespace maps onto the set's image (striped and replicated), and
// the data a read or write moves through its PRPs.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include <bam/nvme/command.hpp>
#include <bam/nvme/prp.hpp>
#include <bam/storage/device_set.hpp>

#include "storage/emulated/command_engine.hpp"

namespace {

using bam::emulated::namespace_view;

namespace_view striped(std::uint8_t* image, std::uint64_t bytes, std::uint32_t devices,
                       std::uint32_t index, std::uint64_t stripe, std::uint32_t block = 512) {
  namespace_view ns;
  ns.image = image;
  ns.image_bytes = bytes;
  ns.devices = devices;
  ns.index = index;
  ns.stripe_bytes = stripe;
  ns.block_bytes = block;
  ns.capacity_blocks = namespace_view::blocks_for(bytes, devices, index, stripe, false, block);
  ns.max_transfer_bytes = 1u << 20;
  ns.page_bytes = 4096;
  return ns;
}

bam::device_set_ref set_of(std::uint32_t devices, std::uint64_t stripe, std::uint64_t bytes) {
  bam::device_set_ref s;
  s.devices = devices;
  s.stripe_bytes = stripe;
  s.capacity_bytes = bytes;
  return s;
}

class NamespaceStriping : public testing::TestWithParam<std::uint32_t> {};

TEST_P(NamespaceStriping, MapsEveryImageByteToExactlyOneDeviceByte) {
  const std::uint32_t devices = GetParam();
  const std::uint64_t stripe = 2048, bytes = 37 * stripe + 1024;  // a partial last stripe
  std::vector<int> hits(bytes, 0);
  for (std::uint32_t d = 0; d < devices; ++d) {
    const namespace_view ns = striped(nullptr, bytes, devices, d, stripe);
    for (std::uint64_t b = 0; b < ns.capacity_blocks * ns.block_bytes; ++b) {
      std::uint64_t contiguous = 0;
      const std::uint64_t at = ns.image_byte(b, contiguous);
      if (at < bytes) ++hits[at];
    }
  }
  for (std::uint64_t i = 0; i < bytes; ++i) ASSERT_EQ(hits[i], 1) << "image byte " << i;
}

TEST_P(NamespaceStriping, IsTheInverseOfTheDeviceSetsLocate) {
  const std::uint32_t devices = GetParam();
  const std::uint64_t stripe = 4096, bytes = 50 * stripe;
  const bam::device_set_ref set = set_of(devices, stripe, bytes);
  for (std::uint64_t image_byte = 0; image_byte < bytes; image_byte += 509) {
    const bam::device_location where = set.locate(image_byte);
    ASSERT_LT(where.device, devices);
    const namespace_view ns = striped(nullptr, bytes, devices, where.device, stripe);
    std::uint64_t contiguous = 0;
    EXPECT_EQ(ns.image_byte(where.byte, contiguous), image_byte);
    if (devices > 1) {
      EXPECT_EQ(contiguous, stripe - image_byte % stripe);
    }
  }
}

TEST_P(NamespaceStriping, GivesTheDevicesTheStripesInRoundRobin) {
  const std::uint32_t devices = GetParam();
  const std::uint64_t stripe = 1024;
  for (std::uint32_t d = 0; d < devices; ++d) {
    const namespace_view ns = striped(nullptr, 100 * stripe, devices, d, stripe);
    std::uint64_t contiguous = 0;
    // Device byte k * stripe is the start of the device's k-th stripe: image stripe k*N + d.
    for (std::uint64_t k = 0; k < 3; ++k) {
      EXPECT_EQ(ns.image_byte(k * stripe, contiguous), (k * devices + d) * stripe);
    }
  }
}

TEST_P(NamespaceStriping, SizesDevicesToTheirShareOfStripes) {
  const std::uint32_t devices = GetParam();
  const std::uint64_t stripe = 4096, stripes = 10;
  std::uint64_t total = 0;
  for (std::uint32_t d = 0; d < devices; ++d) {
    const std::uint64_t blocks =
        namespace_view::blocks_for(stripes * stripe, devices, d, stripe, false, 512);
    EXPECT_EQ(blocks % (stripe / 512), 0u);
    const std::uint64_t mine = stripes / devices + (d < stripes % devices ? 1 : 0);
    EXPECT_EQ(blocks, mine * (stripe / 512)) << "device " << d;
    total += blocks;
  }
  EXPECT_EQ(total * 512, stripes * stripe);
}

INSTANTIATE_TEST_SUITE_P(Devices, NamespaceStriping, testing::Values(1u, 2u, 3u, 4u, 7u));

TEST(Namespace, ReplicatedDevicesEachHoldTheWholeImage) {
  namespace_view ns;
  ns.devices = 4;
  ns.index = 2;
  ns.replicated = true;
  ns.stripe_bytes = 4096;
  std::uint64_t contiguous = 0;
  EXPECT_EQ(ns.image_byte(123457, contiguous), 123457u);
  EXPECT_EQ(contiguous, ~0ull);
  EXPECT_EQ(namespace_view::blocks_for(10000, 4, 2, 4096, true, 512), 20u);
}

// An image whose every byte names its own offset, for reading back through a namespace.
std::vector<std::uint8_t> numbered_image(std::uint64_t bytes) {
  std::vector<std::uint8_t> image(bytes);
  for (std::uint64_t i = 0; i < bytes; ++i) image[i] = static_cast<std::uint8_t>(i * 7 + i / 251);
  return image;
}

TEST(MoveBytes, AReadSpanningStripesGathersFromEachStripeOfTheDevice) {
  auto image = numbered_image(16 * 1024);
  const namespace_view ns = striped(image.data(), image.size(), 2, 1, 1024);
  std::vector<std::uint8_t> out(1536, 0);
  // Device 1 bytes [512, 2048): the second half of image stripe 1 and the first half of stripe 3.
  bam::emulated::move_bytes<true>(ns, 512, out.data(), out.size());
  EXPECT_EQ(0, std::memcmp(out.data(), image.data() + 1024 + 512, 512));
  EXPECT_EQ(0, std::memcmp(out.data() + 512, image.data() + 3 * 1024, 1024));
}

TEST(MoveBytes, BytesPastTheEndOfTheImageReadAsZero) {
  auto image = numbered_image(1000);
  namespace_view ns;
  ns.image = image.data();
  ns.image_bytes = image.size();
  std::vector<std::uint8_t> out(512, 0xee);
  bam::emulated::move_bytes<true>(ns, 512, out.data(), out.size());
  EXPECT_EQ(0, std::memcmp(out.data(), image.data() + 512, 488));
  for (std::size_t i = 488; i < 512; ++i) ASSERT_EQ(out[i], 0u) << "byte " << i;
}

TEST(MoveBytes, AWriteLandsInTheDevicesStripesAndMarksTheirChunksDirty) {
  std::vector<std::uint8_t> image(8 * 1024, 0);
  std::uint32_t dirty[1] = {0};
  namespace_view ns = striped(image.data(), image.size(), 2, 0, 1024);
  ns.dirty = dirty;
  ns.chunk_shift = 10;  // 1 KiB chunks: one per stripe
  std::vector<std::uint8_t> data(2048);
  std::iota(data.begin(), data.end(), std::uint8_t{1});
  bam::emulated::move_bytes<false>(ns, 0, data.data(), data.size());  // device 0 stripes 0, 1
  EXPECT_EQ(0, std::memcmp(image.data(), data.data(), 1024));
  EXPECT_EQ(0, std::memcmp(image.data() + 2048, data.data() + 1024, 1024));
  EXPECT_EQ(image[1024], 0u) << "device 1's stripe is untouched";
  EXPECT_EQ(dirty[0], 0b101u);
}

TEST(MoveBytes, AWritePastTheEndOfTheImageIsDropped) {
  std::vector<std::uint8_t> storage(1024 + 64, 0xaa);  // 64 guard bytes past the image
  namespace_view ns;
  ns.image = storage.data();
  ns.image_bytes = 1024;
  std::vector<std::uint8_t> data(512, 0x55);
  bam::emulated::move_bytes<false>(ns, 768, data.data(), data.size());
  EXPECT_EQ(storage[1023], 0x55u);
  for (std::size_t i = 1024; i < storage.size(); ++i) ASSERT_EQ(storage[i], 0xaau);
}

TEST(Transfer, AReadThroughAPrpListFillsEveryPageOfTheBuffer) {
  auto image = numbered_image(64 * 1024);
  namespace_view ns = striped(image.data(), image.size(), 1, 0, 0);
  alignas(4096) static std::uint8_t out[4 * 4096];
  alignas(4096) static std::uint64_t list[8];
  std::memset(out, 0, sizeof out);
  const std::uint64_t addr = reinterpret_cast<std::uint64_t>(out) + 100;  // unaligned start
  bam::nvme::prp_pair p;
  ASSERT_TRUE(bam::nvme::build_prps(addr, 3 * 4096, 4096, list,
                                    reinterpret_cast<std::uint64_t>(list), 8, p));
  const auto c = bam::nvme::make_rw(bam::nvme::io_opcode::read, 1, 5, 24, p.prp1, p.prp2);
  ASSERT_EQ(bam::emulated::transfer(c, ns), 0u);
  EXPECT_EQ(0, std::memcmp(out + 100, image.data() + 5 * 512, 3 * 4096));
  EXPECT_EQ(out[99], 0u);
}

TEST(Transfer, AWriteThroughTwoPagesStoresTheBuffer) {
  std::vector<std::uint8_t> image(64 * 1024, 0);
  namespace_view ns = striped(image.data(), image.size(), 1, 0, 0);
  alignas(4096) static std::uint8_t in[2 * 4096];
  for (std::size_t i = 0; i < sizeof in; ++i) in[i] = static_cast<std::uint8_t>(i % 253);
  const auto base = reinterpret_cast<std::uint64_t>(in);
  const auto c = bam::nvme::make_rw(bam::nvme::io_opcode::write, 1, 16, 16, base, base + 4096);
  ASSERT_EQ(bam::emulated::transfer(c, ns), 0u);
  EXPECT_EQ(0, std::memcmp(image.data() + 16 * 512, in, sizeof in));
}

TEST(Transfer, AnUnalignedSecondPageFailsWithPrpOffsetInvalid) {
  std::vector<std::uint8_t> image(64 * 1024, 0);
  namespace_view ns = striped(image.data(), image.size(), 1, 0, 0);
  alignas(4096) static std::uint8_t out[3 * 4096];
  const auto base = reinterpret_cast<std::uint64_t>(out);
  const auto c = bam::nvme::make_rw(bam::nvme::io_opcode::read, 1, 0, 16, base, base + 4096 + 16);
  EXPECT_EQ(bam::emulated::transfer(c, ns),
            bam::nvme::make_status_field(bam::nvme::generic_status::prp_offset_invalid, true));
}

}  // namespace
