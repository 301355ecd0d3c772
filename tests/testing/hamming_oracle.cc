// Copyright 2026 The neardup Authors.

#include "tests/testing/hamming_oracle.h"

#include <algorithm>

namespace neardup::testing {

int SlowDistance(const Fingerprint& a, const Fingerprint& b) {
  int d = 0;
  for (int j = 0; j < a.bits(); ++j) d += a.bit(j) != b.bit(j) ? 1 : 0;
  return d;
}

std::vector<Neighbor> OracleSearch(const std::vector<IndexEntry>& entries, const Fingerprint& q,
                                   int k) {
  std::vector<Neighbor> out;
  for (const IndexEntry& e : entries) {
    const int d = SlowDistance(e.fingerprint, q);
    if (d <= k) out.push_back({e.id, d});
  }
  std::sort(out.begin(), out.end(), [](const Neighbor& x, const Neighbor& y) {
    return x.distance != y.distance ? x.distance < y.distance : x.id < y.id;
  });
  return out;
}

std::vector<IdPair> OraclePairs(const std::vector<IndexEntry>& entries, int k) {
  std::vector<IdPair> out;
  for (size_t i = 0; i < entries.size(); ++i) {
    for (size_t j = i + 1; j < entries.size(); ++j) {
      if (entries[i].id == entries[j].id) continue;
      const int d = SlowDistance(entries[i].fingerprint, entries[j].fingerprint);
      if (d <= k) {
        out.push_back(
            {std::min(entries[i].id, entries[j].id), std::max(entries[i].id, entries[j].id), d});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const IdPair& x, const IdPair& y) {
    if (x.a != y.a) return x.a < y.a;
    return x.b != y.b ? x.b < y.b : x.distance < y.distance;
  });
  return out;
}

Fingerprint RandomFingerprint(int bits, std::mt19937_64& rng) {
  return bits == 64 ? Fingerprint::From64(rng()) : Fingerprint::From128(rng(), rng());
}

Fingerprint FlipBits(const Fingerprint& fp, int flips, std::mt19937_64& rng) {
  std::vector<int> positions(static_cast<size_t>(fp.bits()));
  for (int j = 0; j < fp.bits(); ++j) positions[static_cast<size_t>(j)] = j;
  std::shuffle(positions.begin(), positions.end(), rng);
  uint64_t hi = fp.hi();
  uint64_t lo = fp.lo();
  for (int i = 0; i < flips; ++i) {
    const int j = positions[static_cast<size_t>(i)];
    if (j < 64) {
      lo ^= uint64_t{1} << j;
    } else {
      hi ^= uint64_t{1} << (j - 64);
    }
  }
  return fp.bits() == 64 ? Fingerprint::From64(lo) : Fingerprint::From128(hi, lo);
}

PlantedRows MakePlantedRows(size_t random_rows, size_t queries, const std::vector<int>& planted,
                            uint64_t seed) {
  std::mt19937_64 rng(seed);
  PlantedRows d;
  for (size_t i = 0; i < random_rows; ++i) d.fps.push_back(RandomFingerprint(128, rng));
  for (size_t q = 0; q < queries; ++q) {
    d.queries.push_back(RandomFingerprint(128, rng));
    for (int dist : planted) d.fps.push_back(FlipBits(d.queries.back(), dist, rng));
  }
  std::shuffle(d.fps.begin(), d.fps.end(), rng);
  for (size_t i = 0; i < d.fps.size(); ++i) {
    d.ids.push_back(i * 2 + 1);
    d.lo.push_back(d.fps[i].lo());
    d.hi.push_back(d.fps[i].hi());
    d.names.push_back("doc" + std::to_string(i));
    d.entries.push_back(IndexEntry{d.ids.back(), d.fps[i]});
  }
  return d;
}

}  // namespace neardup::testing
