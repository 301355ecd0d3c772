// Copyright 2026 The neardup Authors.

#include "dedup/stream_bands.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <memory>
#include <string>

#include "dedup/band_keys.h"
#include "dedup/sketch_store.h"
#include "dedup/stages.h"
#include "util/random.h"

namespace neardup::dedup_internal {
namespace {

// Level i holds at most kStreamBatch * kGrowth^(i + 1) entries per band.
constexpr size_t kGrowth = 4;

// A 32-bit key of a band: the r <= 32 sampled bits through a bijection whose
// top bits depend on every bit (balanced directories), top-aligned; wider
// bands are hashed (a spurious match is rejected by the distance test).
uint32_t Spread(uint64_t packed, int band_bits) {
  const uint64_t mask = band_bits >= 32 ? 0xffffffffULL : (uint64_t{1} << band_bits) - 1;
  return static_cast<uint32_t>(((packed * kSplitMix64Gamma) & mask)
                               << (32 - std::min(band_bits, 32)));
}

int Distance(const StreamBandIndex::Words& a, const StreamBandIndex::Words& b) {
  return std::popcount(a.first ^ b.first) + std::popcount(a.second ^ b.second);
}

bool Closer(int d, uint32_t id, const StreamBandIndex::Best& best) {
  return d < best.distance || (d == best.distance && id < best.id);
}

}  // namespace

StreamBandIndex::StreamBandIndex(const SimHashBands& layout, std::span<const Words> words)
    : words_(words),
      key_bits_(std::min(layout.band_bits, 32)),
      packed_(layout.band_bits <= 32),
      masks_(SimHashBandMasks(layout)) {}

void StreamBandIndex::Keys(std::span<const uint32_t> ids, ThreadPool* pool,
                           std::vector<uint32_t>* out) const {
  const size_t m = ids.size();
  out->resize(masks_.size() * m);
  std::vector<Words> gathered(m);
  for (size_t j = 0; j < m; ++j) gathered[j] = words_[ids[j]];
  const bool pext = HaveFastPext();
  pool->ParallelFor(masks_.size(), [&](size_t b, int) {
    const auto [mhi, mlo] = masks_[b];
    uint32_t* o = out->data() + b * m;
    if (!packed_) {
      for (size_t j = 0; j < m; ++j) {
        const uint64_t h =
            SplitMix64((gathered[j].second & mlo) ^ SplitMix64(gathered[j].first & mhi));
        o[j] = static_cast<uint32_t>(h >> 32);
      }
      return;
    }
    std::vector<uint64_t> packed(m);
    if (pext) {
      PackKeysPext(gathered.data(), m, mhi, mlo, packed.data());
    } else {
      PackKeysTable(*MakeBandByteTables(mhi, mlo), gathered.data(), m, packed.data());
    }
    for (size_t j = 0; j < m; ++j) o[j] = Spread(packed[j], key_bits_);
  });
}

void StreamBandIndex::Query(uint32_t q, int k, const uint32_t* keys, size_t stride, Best* best,
                            Counts* counts) const {
  const Words& w = words_[q];
  // Per level, in three passes over the bands, so that the cache misses of
  // different bands overlap: directory slots, then the buckets, then the
  // candidates' fingerprints.
  constexpr size_t kMaxBands = 64;
  size_t slot[kMaxBands];
  uint32_t begin[kMaxBands], end[kMaxBands];
  for (const std::vector<Run>& level : levels_) {
    for (size_t b0 = 0; b0 < level.size(); b0 += kMaxBands) {
      const size_t nb = std::min(kMaxBands, level.size() - b0);
      for (size_t i = 0; i < nb; ++i) {
        const Run& run = level[b0 + i];
        const uint32_t key = keys[(b0 + i) * stride];
        slot[i] = run.dir_bits == 0 ? 0 : key >> (32 - run.dir_bits);
        __builtin_prefetch(run.dir.data() + slot[i]);
      }
      for (size_t i = 0; i < nb; ++i) {
        const Run& run = level[b0 + i];
        begin[i] = run.dir[slot[i]];
        end[i] = run.dir[slot[i] + 1];
        if (begin[i] == end[i]) continue;
        __builtin_prefetch(run.ids.data() + begin[i]);
        if (!run.keys.empty()) __builtin_prefetch(run.keys.data() + begin[i]);
      }
      for (size_t i = 0; i < nb; ++i) {
        const Run& run = level[b0 + i];
        const uint32_t key = keys[(b0 + i) * stride];
        for (uint32_t x = begin[i]; x < end[i]; ++x) {
          if (!run.keys.empty() && run.keys[x] != key) continue;
          ++counts->candidates;
          ++counts->tested;
          const uint32_t id = run.ids[x];
          const int d = Distance(w, words_[id]);
          if (d <= k && Closer(d, id, *best) &&
              (verify_ == nullptr || PassesVerification(*verify_, id, q))) {
            *best = {id, d};
          }
        }
      }
    }
  }
}

std::vector<uint64_t> StreamBandIndex::RunWords(const Run& run) const {
  std::vector<uint64_t> out(run.size());
  if (!run.keys.empty()) {
    for (size_t x = 0; x < run.size(); ++x) out[x] = uint64_t{run.keys[x]} << 32 | run.ids[x];
    return out;
  }
  // t == key_bits: a directory bucket is one key.
  const int t = run.dir_bits;
  for (size_t j = 0; j + 1 < run.dir.size(); ++j) {
    const uint64_t key = t == 0 ? 0 : (uint64_t{j} << (32 - t));
    for (uint32_t x = run.dir[j]; x < run.dir[j + 1]; ++x) out[x] = key << 32 | run.ids[x];
  }
  return out;
}

StreamBandIndex::Run StreamBandIndex::BuildRun(const std::vector<uint64_t>& words) const {
  Run run;
  const size_t m = words.size();
  int t = 0;
  while (t < key_bits_ && (size_t{4} << (t + 1)) <= m) ++t;
  run.dir_bits = t;
  run.dir.assign((size_t{1} << t) + 1, 0);
  run.ids.resize(m);
  if (t < key_bits_) run.keys.resize(m);
  for (size_t x = 0; x < m; ++x) {
    const auto key = static_cast<uint32_t>(words[x] >> 32);
    run.ids[x] = static_cast<uint32_t>(words[x]);
    if (!run.keys.empty()) run.keys[x] = key;
    ++run.dir[(t == 0 ? 0 : key >> (32 - t)) + 1];
  }
  for (size_t j = 1; j < run.dir.size(); ++j) run.dir[j] += run.dir[j - 1];
  return run;
}

void StreamBandIndex::Add(std::span<const uint32_t> ids, std::span<const uint32_t> keys,
                          ThreadPool* pool) {
  const size_t m = ids.size();
  if (m == 0) return;
  if (levels_.empty()) levels_.emplace_back(masks_.size());
  // The new run, merged into level 0.
  pool->ParallelFor(masks_.size(), [&](size_t b, int) {
    std::vector<uint64_t> add(m);
    for (size_t j = 0; j < m; ++j) add[j] = uint64_t{keys[b * m + j]} << 32 | ids[j];
    std::sort(add.begin(), add.end());
    const std::vector<uint64_t> old = RunWords(levels_[0][b]);
    std::vector<uint64_t> merged(old.size() + m);
    std::merge(old.begin(), old.end(), add.begin(), add.end(), merged.begin());
    levels_[0][b] = BuildRun(merged);
  });
  size_ += m;
  // Cascade: a full level is merged into the next one.
  size_t cap = kStreamBatch * kGrowth;
  for (size_t i = 0; i < levels_.size(); ++i, cap *= kGrowth) {
    if (levels_[i][0].size() <= cap) break;
    if (i + 1 == levels_.size()) levels_.emplace_back(masks_.size());
    pool->ParallelFor(masks_.size(), [&](size_t b, int) {
      const std::vector<uint64_t> x = RunWords(levels_[i][b]);
      const std::vector<uint64_t> y = RunWords(levels_[i + 1][b]);
      std::vector<uint64_t> merged(x.size() + y.size());
      std::merge(x.begin(), x.end(), y.begin(), y.end(), merged.begin());
      levels_[i + 1][b] = BuildRun(merged);
      levels_[i][b] = BuildRun({});
    });
  }
}

size_t StreamBandIndex::MemoryBytes() const {
  size_t bytes = 0;
  for (const std::vector<Run>& level : levels_) {
    for (const Run& run : level) {
      bytes += 4 * (run.keys.capacity() + run.ids.capacity() + run.dir.capacity());
    }
  }
  return bytes;
}

Status BandedStream(DocumentView docs, const DedupOptions& opt, const SimHashBands& layout,
                    DedupResult* r) {
  const size_t n = docs.size();
  if (n >= (uint64_t{1} << 32) - 1) {
    return Status::InvalidArgument("banded stream mode takes fewer than 2^32 - 1 documents");
  }
  if (layout.bands < 1 || layout.band_bits < 1 || layout.band_bits > layout.bits) {
    return Status::InvalidArgument("stream bands: bands >= 1 and 1 <= band_bits <= bits");
  }
  std::vector<StreamBandIndex::Words> words(n);
  std::vector<uint32_t> positions;  // the non-empty documents
  r->records.resize(n);
  for (size_t i = 0; i < n; ++i) {
    DedupRecord& rec = r->records[i];
    rec.empty = docs.empty(i);
    rec.cluster = i;
    rec.nearest = i;
    if (rec.empty) continue;
    const Fingerprint fp = docs.fingerprint(i);
    words[i] = {fp.hi(), fp.lo()};
    positions.push_back(static_cast<uint32_t>(i));
  }
  StreamBandIndex index(layout, words);
  if (Verifying(opt)) index.set_verify(&opt);
  ThreadPool pool(opt.threads);
  const size_t tasks = static_cast<size_t>(pool.threads()) * 8;
  const int k = opt.k;
  std::vector<uint32_t> keys, kept_keys, kept_ids;
  std::vector<StreamBandIndex::Best> best;
  std::vector<StreamBandIndex::Counts> counts(tasks);
  // In-batch pairs within k, per task: (later, earlier, distance), by later.
  struct Near {
    uint32_t later, earlier;
    int distance;
  };
  std::vector<std::vector<Near>> near(tasks);
  std::vector<char> kept;
  std::vector<size_t> kept_at;
  const size_t total = positions.size();
  for (size_t s = 0; s < total; s += kStreamBatch) {
    if (opt.progress) opt.progress("stream", positions[s], n);
    const std::span<const uint32_t> batch(positions.data() + s, std::min(kStreamBatch, total - s));
    const size_t m = batch.size();
    index.Keys(batch, &pool, &keys);
    best.assign(m, {});
    for (std::vector<Near>& v : near) v.clear();
    // 1. Each document against the levels (earlier batches' kept documents),
    //    and against the earlier documents of its batch, every pair exactly.
    pool.ParallelFor(std::min(tasks, m), [&](size_t t, int) {
      const size_t j0 = m * t / std::min(tasks, m), j1 = m * (t + 1) / std::min(tasks, m);
      for (size_t j = j0; j < j1; ++j) {
        index.Query(batch[j], k, keys.data() + j, m, &best[j], &counts[t]);
        const StreamBandIndex::Words& w = words[batch[j]];
        for (size_t i = 0; i < j; ++i) {
          const int d = Distance(w, words[batch[i]]);
          if (d <= k) near[t].push_back({static_cast<uint32_t>(j), static_cast<uint32_t>(i), d});
        }
        counts[t].tested += j;
      }
    });
    // 2. In order: kept unless a kept document lies within k.
    kept.assign(m, 0);
    kept_ids.clear();
    kept_at.clear();
    size_t t = 0, e = 0;
    for (size_t j = 0; j < m; ++j) {
      StreamBandIndex::Best b = best[j];
      for (;; ++e) {
        while (t < near.size() && e == near[t].size()) ++t, e = 0;
        if (t == near.size() || near[t][e].later != j) break;
        const Near& p = near[t][e];
        if (kept[p.earlier] && Closer(p.distance, batch[p.earlier], b) &&
            PassesVerification(opt, batch[p.earlier], batch[j])) {
          b = {batch[p.earlier], p.distance};
        }
      }
      const size_t i = batch[j];
      if (b.id == UINT32_MAX) {
        kept[j] = 1;
        kept_ids.push_back(batch[j]);
        kept_at.push_back(j);
        continue;
      }
      DedupRecord& rec = r->records[i];
      rec.duplicate = true;
      rec.nearest = b.id;
      rec.distance = b.distance;
      rec.nearest_within_k = rec.nearest;
      rec.distance_within_k = rec.distance;
      rec.cluster = rec.nearest;  // a kept document is its cluster's first member
      if (Verifying(opt)) rec.jaccard = SketchesOf(opt).Jaccard(rec.nearest, i);
      if (opt.collect_pairs || opt.pair_sink) {
        r->pairs.push_back({rec.nearest, i, rec.distance, rec.jaccard});
      }
    }
    // 3. The kept ones join the index.
    const size_t kn = kept_ids.size();
    kept_keys.resize(static_cast<size_t>(index.bands()) * kn);
    for (size_t b = 0; b < static_cast<size_t>(index.bands()); ++b) {
      for (size_t x = 0; x < kn; ++x) kept_keys[b * kn + x] = keys[b * m + kept_at[x]];
    }
    index.Add(kept_ids, kept_keys, &pool);
  }
  for (const StreamBandIndex::Counts& c : counts) {
    r->join.candidates += c.candidates;
    r->join.tested += c.tested;
  }
  if (opt.progress) opt.progress("stream", n, n);
  return Status::OK();
}

}  // namespace neardup::dedup_internal
