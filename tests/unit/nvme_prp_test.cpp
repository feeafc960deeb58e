// PRP construction and walking: every case a transfer can take, round trip through both.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <bam/nvme/prp.hpp>

namespace {

using bam::nvme::build_prps;
using bam::nvme::generic_status;
using bam::nvme::prp_pair;
using bam::nvme::walk_prps;

struct segment {
  std::uint64_t dma;
  std::uint64_t length;
};

// A PRP list in simulated memory at DMA address `dma`; the walker reads it through read().
struct list_memory {
  std::uint64_t dma;
  std::vector<std::uint64_t> entries;
  std::uint64_t reads = 0;
  bool out_of_range = false;

  list_memory(std::uint64_t at, std::size_t capacity) : dma(at), entries(capacity, ~0ull) {}

  std::uint64_t read(std::uint64_t address) {
    ++reads;
    if (address < dma || address >= dma + entries.size() * 8 || (address - dma) % 8 != 0) {
      out_of_range = true;
      return 0;
    }
    return entries[(address - dma) / 8];
  }
};

struct walk_result {
  generic_status status;
  std::vector<segment> segments;
};

walk_result walk(const prp_pair& p, std::uint64_t bytes, std::uint32_t page, list_memory& list) {
  walk_result r;
  r.status = walk_prps(
      p.prp1, p.prp2, bytes, page, [&](std::uint64_t a) { return list.read(a); },
      [&](std::uint64_t dma, std::uint64_t len) {
        r.segments.push_back({dma, len});
        return true;
      });
  return r;
}

// The segments describe [addr, addr + bytes) in order, one memory page at most each, every
// one after the first starting on a page.
void expect_covers(const std::vector<segment>& segs, std::uint64_t addr, std::uint64_t bytes,
                   std::uint32_t page) {
  ASSERT_FALSE(segs.empty());
  EXPECT_EQ(segs.front().dma, addr);
  std::uint64_t next = addr, total = 0;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    EXPECT_EQ(segs[i].dma, next) << "segment " << i;
    if (i > 0) {
      EXPECT_EQ(segs[i].dma % page, 0u) << "segment " << i;
    }
    EXPECT_LE(segs[i].dma % page + segs[i].length, page) << "segment " << i << " crosses a page";
    next = segs[i].dma + segs[i].length;
    total += segs[i].length;
  }
  EXPECT_EQ(total, bytes);
}

// Builds the PRPs of a transfer, walks them back, and checks the walk covers the buffer.
// Returns the list entries the walker fetched.
std::uint64_t round_trip(std::uint64_t addr, std::uint64_t bytes, std::uint32_t page,
                         std::uint64_t list_dma, std::size_t list_capacity = 4096) {
  list_memory list(list_dma, list_capacity);
  prp_pair p;
  EXPECT_TRUE(build_prps(addr, bytes, page, list.entries.data(), list.dma, list.entries.size(), p));
  const walk_result r = walk(p, bytes, page, list);
  EXPECT_EQ(r.status, generic_status::success);
  EXPECT_FALSE(list.out_of_range);
  expect_covers(r.segments, addr, bytes, page);
  return list.reads;
}

constexpr std::uint64_t buffer = 0x7f0000000000ull;  // page-aligned simulated DMA address
constexpr std::uint64_t list_at = 0x100000ull;

TEST(PrpPages, CountsEveryPageATransferTouches) {
  EXPECT_EQ(bam::nvme::prp_pages(buffer, 4096, 4096), 1u);
  EXPECT_EQ(bam::nvme::prp_pages(buffer, 4097, 4096), 2u);
  EXPECT_EQ(bam::nvme::prp_pages(buffer + 4000, 200, 4096), 2u);
  EXPECT_EQ(bam::nvme::prp_pages(buffer + 4000, 96, 4096), 1u);
  EXPECT_EQ(bam::nvme::prp_pages(buffer + 8, 3 * 4096, 4096), 4u);
}

TEST(BuildPrps, OnePageNeedsOnlyPrp1) {
  prp_pair p;
  ASSERT_TRUE(build_prps(buffer, 4096, 4096, nullptr, 0, 0, p));
  EXPECT_EQ(p.prp1, buffer);
  EXPECT_EQ(p.prp2, 0u);
}

TEST(BuildPrps, TwoPagesPutTheSecondPageInPrp2) {
  prp_pair p;
  ASSERT_TRUE(build_prps(buffer, 8192, 4096, nullptr, 0, 0, p));
  EXPECT_EQ(p.prp1, buffer);
  EXPECT_EQ(p.prp2, buffer + 4096);
}

TEST(BuildPrps, AnUnalignedFirstPageKeepsItsOffsetInPrp1Only) {
  prp_pair p;
  ASSERT_TRUE(build_prps(buffer + 4000, 200, 4096, nullptr, 0, 0, p));
  EXPECT_EQ(p.prp1, buffer + 4000);
  EXPECT_EQ(p.prp2, buffer + 4096);
}

TEST(BuildPrps, ThreePagesUseAListOfTheSecondAndThirdPages) {
  std::uint64_t list[4] = {};
  prp_pair p;
  ASSERT_TRUE(build_prps(buffer, 3 * 4096, 4096, list, list_at, 4, p));
  EXPECT_EQ(p.prp1, buffer);
  EXPECT_EQ(p.prp2, list_at);
  EXPECT_EQ(list[0], buffer + 4096);
  EXPECT_EQ(list[1], buffer + 8192);
}

TEST(BuildPrps, AFullListPageEndsWithAChainPointerToTheNextListPage) {
  // 512-byte pages hold 64 entries: 65 data pages after the first need a second list page.
  std::vector<std::uint64_t> list(128, 0);
  prp_pair p;
  ASSERT_TRUE(build_prps(buffer, 66 * 512, 512, list.data(), list_at, list.size(), p));
  EXPECT_EQ(list[62], buffer + 63 * 512);
  EXPECT_EQ(list[63], list_at + 64 * 8) << "last entry of the list page chains";
  EXPECT_EQ(list[64], buffer + 64 * 512);
  EXPECT_EQ(list[65], buffer + 65 * 512);
}

TEST(BuildPrps, AListThatExactlyFillsItsPageHasNoChainPointer) {
  std::vector<std::uint64_t> list(128, 0);
  prp_pair p;
  ASSERT_TRUE(build_prps(buffer, 65 * 512, 512, list.data(), list_at, list.size(), p));
  EXPECT_EQ(list[63], buffer + 64 * 512);
}

TEST(BuildPrps, RejectsADwordMisalignedBuffer) {
  std::uint64_t list[4] = {};
  prp_pair p;
  EXPECT_FALSE(build_prps(buffer + 2, 512, 4096, list, list_at, 4, p));
  EXPECT_FALSE(build_prps(buffer + 1, 3 * 4096, 4096, list, list_at, 4, p));
}

TEST(BuildPrps, RejectsAnEmptyTransfer) {
  prp_pair p;
  EXPECT_FALSE(build_prps(buffer, 0, 4096, nullptr, 0, 0, p));
}

TEST(BuildPrps, RejectsAListThatDoesNotFit) {
  std::uint64_t list[2] = {};
  prp_pair p;
  EXPECT_FALSE(build_prps(buffer, 4 * 4096, 4096, list, list_at, 2, p));
}

TEST(BuildPrps, RejectsAListThatIsNotQwordAligned) {
  std::uint64_t list[4] = {};
  prp_pair p;
  EXPECT_FALSE(build_prps(buffer, 3 * 4096, 4096, list, list_at + 4, 4, p));
}

TEST(PrpRoundTrip, OnePage) { EXPECT_EQ(round_trip(buffer, 4096, 4096, list_at), 0u); }

TEST(PrpRoundTrip, PartOfOnePageAtAnOffset) {
  EXPECT_EQ(round_trip(buffer + 512, 1024, 4096, list_at), 0u);
}

TEST(PrpRoundTrip, TwoPages) { EXPECT_EQ(round_trip(buffer, 8192, 4096, list_at), 0u); }

TEST(PrpRoundTrip, TwoPagesFromAnUnalignedStart) {
  EXPECT_EQ(round_trip(buffer + 4092, 8, 4096, list_at), 0u);
}

TEST(PrpRoundTrip, AListInOnePage) { EXPECT_EQ(round_trip(buffer, 16 * 4096, 4096, list_at), 15u); }

TEST(PrpRoundTrip, AListFromAnUnalignedStartWithAShortLastPage) {
  EXPECT_EQ(round_trip(buffer + 100, 10 * 4096, 4096, list_at), 10u);
}

TEST(PrpRoundTrip, ChainedListsAcrossSeveralListPages) {
  // 200 data pages after the first with 64 entries per list page: three chain pointers.
  EXPECT_EQ(round_trip(buffer, 201 * 512, 512, list_at), 203u);
}

TEST(PrpRoundTrip, AListStartingInsideAPageChainsAtThatPagesEnd) {
  // The list begins 16 bytes before a page boundary: its second entry is the chain pointer.
  EXPECT_EQ(round_trip(buffer, 6 * 512, 512, list_at + 512 - 16), 6u);
}

TEST(PrpRoundTrip, ListEntriesFetchedMatchPrpListEntries) {
  for (std::uint32_t page : {512u, 4096u}) {
    for (std::uint64_t offset : {0ull, 4ull, 508ull}) {
      for (std::uint64_t bytes = 4; bytes < 300ull * page; bytes = bytes * 3 / 2 + 4) {
        const std::uint64_t addr = buffer + offset;
        SCOPED_TRACE(testing::Message()
                     << "page " << page << " offset " << offset << " bytes " << bytes);
        EXPECT_EQ(round_trip(addr, bytes, page, list_at),
                  bam::nvme::prp_list_entries(addr, bytes, page));
      }
    }
  }
}

TEST(WalkPrps, RejectsADwordMisalignedPrp1) {
  list_memory list(list_at, 4);
  EXPECT_EQ(walk({buffer + 2, 0}, 64, 4096, list).status, generic_status::prp_offset_invalid);
}

TEST(WalkPrps, RejectsAnUnalignedSecondPage) {
  list_memory list(list_at, 4);
  EXPECT_EQ(walk({buffer, buffer + 4096 + 8}, 8192, 4096, list).status,
            generic_status::prp_offset_invalid);
}

TEST(WalkPrps, RejectsAListPointerThatIsNotQwordAligned) {
  list_memory list(list_at, 4);
  EXPECT_EQ(walk({buffer, list_at + 4}, 3 * 4096, 4096, list).status,
            generic_status::prp_offset_invalid);
}

TEST(WalkPrps, RejectsAListEntryThatIsNotPageAligned) {
  list_memory list(list_at, 4);
  list.entries[0] = buffer + 4096;
  list.entries[1] = buffer + 8192 + 64;
  const walk_result r = walk({buffer, list_at}, 3 * 4096, 4096, list);
  EXPECT_EQ(r.status, generic_status::prp_offset_invalid);
  EXPECT_EQ(r.segments.size(), 2u) << "the pages before the bad entry were transferred";
}

TEST(WalkPrps, RejectsAChainPointerThatIsNotQwordAligned) {
  std::vector<std::uint64_t> good(128, 0);
  prp_pair p;
  ASSERT_TRUE(build_prps(buffer, 70 * 512, 512, good.data(), list_at, good.size(), p));
  list_memory list(list_at, 128);
  list.entries = good;
  list.entries[63] += 4;
  EXPECT_EQ(walk(p, 70 * 512, 512, list).status, generic_status::prp_offset_invalid);
}

TEST(WalkPrps, ReportsADataTransferErrorWhenASegmentFails) {
  list_memory list(list_at, 4);
  const auto s = walk_prps(
      buffer, buffer + 4096, 8192, 4096, [&](std::uint64_t a) { return list.read(a); },
      [](std::uint64_t dma, std::uint64_t) { return dma == buffer; });
  EXPECT_EQ(s, generic_status::data_transfer_error);
}

}  // namespace
