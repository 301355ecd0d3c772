// Copyright 2026 The neardup Authors.
//
// Character-shingle MinHash with LSH banding (seed 000's "Shingle" baseline).

#include <xxhash.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "neardup/eval.h"
#include "util/random.h"

namespace neardup {

MinHasher::MinHasher(const MinHashOptions& options) : options_(options) {
  seeds_.reserve(static_cast<size_t>(std::max(options_.permutations, 0)));
  uint64_t x = options_.seed;
  for (int i = 0; i < options_.permutations; ++i) {
    x = SplitMix64(x);
    seeds_.push_back(x);
  }
}

std::vector<uint64_t> MinHasher::Shingles(std::string_view text) const {
  const std::u32string cps = DecodeUtf8(text);
  std::vector<uint64_t> out;
  if (cps.empty()) return out;
  const size_t n = static_cast<size_t>(std::max(options_.shingle, 1));
  if (cps.size() <= n) {
    out.push_back(XXH3_64bits(text.data(), text.size()));
    return out;
  }
  // Byte offsets of every code point, so that a shingle hashes its UTF-8 bytes.
  std::vector<size_t> offsets;
  offsets.reserve(cps.size() + 1);
  size_t byte = 0;
  for (char32_t c : cps) {
    offsets.push_back(byte);
    byte += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  offsets.push_back(byte);
  const std::string utf8 = EncodeUtf8(cps);  // == text when text is valid UTF-8
  out.reserve(cps.size() - n + 1);
  for (size_t i = 0; i + n <= cps.size(); ++i) {
    out.push_back(XXH3_64bits(utf8.data() + offsets[i], offsets[i + n] - offsets[i]));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<uint64_t> MinHasher::Signature(std::span<const uint64_t> shingles) const {
  std::vector<uint64_t> sig(seeds_.size(), std::numeric_limits<uint64_t>::max());
  for (uint64_t h : shingles) {
    for (size_t i = 0; i < seeds_.size(); ++i) {
      sig[i] = std::min(sig[i], SplitMix64(h ^ seeds_[i]));
    }
  }
  return sig;
}

double EstimatedJaccard(std::span<const uint64_t> a, std::span<const uint64_t> b) {
  if (a.empty()) return 0;
  size_t equal = 0;
  for (size_t i = 0; i < a.size(); ++i) equal += a[i] == b[i] ? 1 : 0;
  return static_cast<double>(equal) / static_cast<double>(a.size());
}

double ExactJaccard(std::span<const uint64_t> a, std::span<const uint64_t> b) {
  size_t i = 0, j = 0, common = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j]) {
      ++common;
      ++i;
      ++j;
    } else if (a[i] < b[j]) {
      ++i;
    } else {
      ++j;
    }
  }
  const size_t uni = a.size() + b.size() - common;
  return uni == 0 ? 0 : static_cast<double>(common) / static_cast<double>(uni);
}

std::vector<std::pair<uint32_t, uint32_t>> LshCandidates(
    const std::vector<std::vector<uint64_t>>& signatures, int bands) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  if (signatures.empty() || bands <= 0) return out;
  const size_t rows = signatures[0].size() / static_cast<size_t>(bands);
  for (int band = 0; band < bands; ++band) {
    std::unordered_map<uint64_t, std::vector<uint32_t>> buckets;
    for (size_t d = 0; d < signatures.size(); ++d) {
      const uint64_t* begin = signatures[d].data() + band * rows;
      buckets[XXH3_64bits(begin, rows * sizeof(uint64_t))].push_back(static_cast<uint32_t>(d));
    }
    for (const auto& [key, members] : buckets) {
      for (size_t i = 0; i < members.size(); ++i) {
        for (size_t j = i + 1; j < members.size(); ++j) out.emplace_back(members[i], members[j]);
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace neardup
