// Copyright 2026 The neardup Authors.

#include "store/chunker.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstring>

#include "util/random.h"

namespace neardup::store_internal {
namespace {

// Gear table: 256 pseudo-random words from splitmix64 with a fixed seed, so
// that cut points (and therefore stored chunks) never change between builds.
constexpr std::array<uint64_t, 256> MakeGearTable() {
  std::array<uint64_t, 256> table{};
  uint64_t state = 0x6e65617264757021ULL;  // "neardup!"
  for (uint64_t& entry : table) {
    entry = SplitMix64(state);
    state += kSplitMix64Gamma;
  }
  return table;
}
constexpr std::array<uint64_t, 256> kGear = MakeGearTable();

// A mask of `bits` ones in the high end of the word: the Gear hash shifts left,
// so its high bits depend on the most recent 64 bytes.
constexpr uint64_t HighMask(int bits) {
  return bits <= 0 ? 0 : (bits >= 64 ? ~uint64_t{0} : ~uint64_t{0} << (64 - bits));
}

// Length of the next chunk at the start of p[0, n).
size_t NextCut(const unsigned char* p, size_t n, size_t min_size, size_t avg_size, size_t max_size,
               uint64_t mask_small, uint64_t mask_large) {
  if (n <= min_size) return n;
  if (n > max_size) n = max_size;
  const size_t normal = std::min(avg_size, n);
  uint64_t h = 0;
  size_t i = min_size;
  for (; i < normal; ++i) {
    h = (h << 1) + kGear[p[i]];
    if ((h & mask_small) == 0) return i + 1;
  }
  for (; i < n; ++i) {
    h = (h << 1) + kGear[p[i]];
    if ((h & mask_large) == 0) return i + 1;
  }
  return n;
}

}  // namespace

std::vector<Span> SplitParagraphs(std::string_view text) {
  std::vector<Span> spans;
  size_t start = 0;
  while (start < text.size()) {
    const size_t limit = std::min(text.size(), start + kMaxBlockBytes);
    const void* nl = std::memchr(text.data() + start, '\n', limit - start);
    const size_t end =
        nl ? static_cast<size_t>(static_cast<const char*>(nl) - text.data()) + 1 : limit;
    spans.push_back({start, end - start});
    start = end;
  }
  return spans;
}

std::vector<Span> SplitFixed(std::string_view data, size_t size) {
  assert(size > 0);
  std::vector<Span> spans;
  spans.reserve(data.size() / size + 1);
  for (size_t off = 0; off < data.size(); off += size) {
    spans.push_back({off, std::min(size, data.size() - off)});
  }
  return spans;
}

std::vector<Span> SplitContentDefined(std::string_view data, size_t avg) {
  assert(avg >= 64);
  const int bits = std::bit_width(avg) - 1;  // floor(log2(avg))
  const uint64_t mask_small = HighMask(bits + 2);
  const uint64_t mask_large = HighMask(bits - 2);
  const size_t min_size = avg / 4;
  const size_t max_size = avg * 8;
  std::vector<Span> spans;
  spans.reserve(data.size() / avg + 1);
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t off = 0;
  while (off < data.size()) {
    const size_t len =
        NextCut(p + off, data.size() - off, min_size, avg, max_size, mask_small, mask_large);
    spans.push_back({off, len});
    off += len;
  }
  return spans;
}

}  // namespace neardup::store_internal
