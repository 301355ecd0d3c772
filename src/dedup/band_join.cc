// Copyright 2026 The neardup Authors.

#include "neardup/band_join.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>

#include "dedup/band_bucket.h"
#include "dedup/band_keys.h"
#include "dedup/stages.h"
#include "util/random.h"
#include "util/thread_pool.h"
#include "util/union_find.h"

namespace neardup {
namespace {

bool ById(const IdPair& x, const IdPair& y) { return x.a != y.a ? x.a < y.a : x.b < y.b; }

// Partition bits for n sort words: partitions of about 1,024 words, so that
// each sorts in cache.
int PartitionBits(size_t n) {
  int p = 0;
  while (p < 16 && (n >> p) > 1024) ++p;
  return p;
}

// Merges sorted, duplicate-free `add` into sorted, duplicate-free `into`.
void MergeUnique(std::vector<IdPair>* add, std::vector<IdPair>* into) {
  std::sort(add->begin(), add->end(), ById);
  add->erase(std::unique(add->begin(), add->end(),
                         [](const IdPair& x, const IdPair& y) { return x.a == y.a && x.b == y.b; }),
             add->end());
  if (add->empty()) return;
  std::vector<IdPair> merged;
  merged.reserve(into->size() + add->size());
  auto i = into->begin(), j = add->begin();
  while (i != into->end() || j != add->end()) {
    if (j == add->end() || (i != into->end() && ById(*i, *j))) {
      merged.push_back(*i++);
    } else if (i == into->end() || ById(*j, *i)) {
      merged.push_back(*j++);
    } else {
      merged.push_back(*i++);  // the same pair: scores agree
      ++j;
    }
  }
  into->swap(merged);
  add->clear();
}

struct TaskOut {
  std::vector<IdPair> pairs;
  dedup_internal::BucketTally tally;
  std::vector<uint32_t> local;   // components_only: a bucket's union-find
  std::vector<uint64_t> hi, lo;  // a bucket's fingerprints (BucketWords)
};

// Keys are computed in blocks of this many documents.
constexpr size_t kKeyBlock = 1024;
// The scan of a sorted partition prefetches the test's data of the members
// up to this many words past the end of the bucket it tests.
constexpr size_t kPrefetchAhead = 16;

// Prefetches the data the test reads for document i (base + i * stride).
struct Prefetcher {
  const char* base = nullptr;
  size_t stride = 0;
  void operator()(uint32_t i) const {
    if (base != nullptr) __builtin_prefetch(base + static_cast<size_t>(i) * stride);
  }
  // The same, for a use further away (into L2).
  void Early(uint32_t i) const {
    if (base != nullptr) __builtin_prefetch(base + static_cast<size_t>(i) * stride, 0, 2);
  }
};

// SimHash fingerprints for the buckets' tests: set (SimHashBandJoinWords),
// a bucket of at most max_bucket members, all pairs wanted (not components
// only, nothing skipped), has its members' fingerprints gathered into two
// arrays and tested by BucketPairs* (band_keys.h): the pairs, distances and
// counts of VerifyBucket with the test "distance <= k".
struct BucketWords {
  const dedup_internal::FingerprintWords* words = nullptr;
  int k = 0;
};

// Sorts the sort words w[0, m) by their bits [low, 64) (the bucket key; the
// bits below, down to 32, are zero or part of it), stable, so that words of
// equal keys keep their order (increasing document). LSD radix sort with
// digits of at most 10 bits; tmp holds m words. Returns where the sorted
// words are (w or tmp).
uint64_t* SortWords(uint64_t* w, uint64_t* tmp, size_t m, int low) {
  if (m < 2) return w;
  if (m <= 32) {
    // Insertion sort on the whole word: (key, document) order, as the stable
    // sort of the key gives (documents are increasing in a partition).
    for (size_t i = 1; i < m; ++i) {
      const uint64_t v = w[i];
      size_t j = i;
      for (; j > 0 && w[j - 1] > v; --j) w[j] = w[j - 1];
      w[j] = v;
    }
    return w;
  }
  const int bits = 64 - low;
  if (bits <= 0) return w;
  const int passes = (bits + 9) / 10;
  const int digit = (bits + passes - 1) / passes;
  uint32_t count[1 << 10];
  for (int p = 0; p < passes; ++p) {
    const int shift = low + p * digit;
    const int width = std::min(digit, 64 - shift);
    const uint64_t mask = (uint64_t{1} << width) - 1;
    const size_t buckets = size_t{1} << width;
    std::fill(count, count + buckets, 0u);
    for (size_t i = 0; i < m; ++i) ++count[(w[i] >> shift) & mask];
    if (count[(w[0] >> shift) & mask] == m) continue;  // one digit: nothing moves
    uint32_t sum = 0;
    for (size_t b = 0; b < buckets; ++b) {
      const uint32_t c = count[b];
      count[b] = sum;
      sum += c;
    }
    for (size_t i = 0; i < m; ++i) tmp[count[(w[i] >> shift) & mask]++] = w[i];
    std::swap(w, tmp);
  }
  return w;
}

// The engine. Keys: keys(band, begin, end, out); test(a, b) -> score or -1.
// key_bits 0: any 64-bit keys (hashed; a bucket is a run of 32 + partition
// bits of the hash, spurious members are rejected by the test); 1..32: keys
// are below 2^key_bits and a bucket is exactly one key. recompute_keys: keys
// are cheap, compute them twice rather than keep them (8 bytes per document).
template <class Keys, class Test>
Status Run(size_t n, const Keys& keys, const Test& test, int key_bits, bool recompute_keys,
           Prefetcher prefetch, BucketWords bucket_words, const BandJoinOptions& options,
           std::vector<IdPair>* pairs, BandJoinStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  if (options.bands < 1) return Status::InvalidArgument("band join needs at least one band");
  if (n >= (uint64_t{1} << 32)) {
    return Status::InvalidArgument("band join takes fewer than 2^32 documents");
  }
  pairs->clear();
  BandJoinStats st;
  const int bands = options.bands;
  auto report = [&](size_t done) {
    if (options.progress) options.progress("bands", done, static_cast<size_t>(bands));
  };
  if (n < 2) {
    report(static_cast<size_t>(bands));
    if (stats != nullptr) *stats = st;
    return Status::OK();
  }
  ThreadPool pool(options.threads);
  const size_t workers = static_cast<size_t>(pool.threads());
  // The bucket key is the top `significant` bits of a 64-bit word h: the
  // partition's pbits, then up to 32 bits sorted inside the partition.
  const int significant = key_bits > 0 ? key_bits : 64;
  const int pbits = std::min(PartitionBits(n), significant);
  const int low = 64 - std::min(32, significant - pbits);  // lowest sorted bit of a word
  const uint64_t key_mask = key_bits > 0 && key_bits < 64 ? (uint64_t{1} << key_bits) - 1 : 0;
  const auto spread = [&](uint64_t key) -> uint64_t {
    if (key_bits == 0) return SplitMix64(key);
    // A bijection of the key_bits-bit keys whose top bits depend on every
    // bit (balanced partitions), placed at the top of the word.
    return ((key * 0x9e3779b97f4a7c15ULL) & key_mask) << (64 - key_bits);
  };
  const size_t parts = size_t{1} << pbits;
  // Key chunks: enough for the workers to balance; histograms per chunk.
  const size_t chunks = std::min(n, workers * 4);
  std::vector<uint64_t> key(recompute_keys ? 0 : n);
  std::vector<uint64_t> word(n);  // (bucket key bits << 32) | document
  std::vector<uint32_t> hist(chunks * parts);
  std::vector<uint64_t> part_begin(parts + 1);
  // Partition tasks: runs of partitions of about equal size.
  const size_t part_tasks = std::min(parts, workers * 16);
  std::vector<TaskOut> outs(part_tasks);
  std::vector<IdPair> pending;
  const size_t max_bucket = std::max<size_t>(options.max_bucket, 2);
  const size_t max_reps = std::max<size_t>(options.max_representatives, 1);
  const bool gather =
      bucket_words.words != nullptr && !options.components_only && !options.skip_confirmed;
  const auto bucket_pairs = dedup_internal::HaveAvx512Popcount()
                                ? dedup_internal::BucketPairsAvx512
                                : dedup_internal::BucketPairsScalar;
  // Radix scratch, one per worker (sized to the largest partition).
  std::vector<std::vector<uint64_t>> scratch(workers);

  // components_only: the union-find of the bands so far, and its roots as a
  // flat array that the band's workers read (frozen while a band runs).
  const bool forest = options.components_only;
  UnionFind uf(forest ? n : 0);
  std::vector<uint32_t> comp(forest ? n : 0);
  std::iota(comp.begin(), comp.end(), 0u);
  size_t confirmed_forest = 0, unions_since_refresh = 0;
  auto confirmed_before = [&](uint32_t a, uint32_t b) {
    if (forest) return comp[a] == comp[b];
    if (!options.skip_confirmed) return false;
    const IdPair probe{a, b, 0};
    return std::binary_search(pairs->begin(), pairs->end(), probe, ById);
  };

  for (int band = 0; band < bands; ++band) {
    report(static_cast<size_t>(band));
    // 1. Keys, spread, and per-chunk histograms of their top bits. With
    //    recompute_keys the keys are computed in blocks and not kept (they
    //    are computed again for the scatter): 8 bytes per document less.
    pool.ParallelFor(chunks, [&](size_t c, int) {
      const size_t begin = n * c / chunks, end = n * (c + 1) / chunks;
      uint32_t* h = hist.data() + c * parts;
      std::fill(h, h + parts, 0);
      uint64_t block[kKeyBlock];
      for (size_t b = begin; b < end; b += kKeyBlock) {
        const size_t e = std::min(end, b + kKeyBlock);
        uint64_t* k = recompute_keys ? block : key.data() + b;
        keys(band, b, e, k);
        for (size_t i = 0; i < e - b; ++i) {
          k[i] = spread(k[i]);
          ++h[pbits == 0 ? 0 : k[i] >> (64 - pbits)];
        }
      }
    });
    // 2. Scatter into partitions (chunk order within a partition, so that
    //    documents increase in each partition).
    uint64_t total = 0;
    size_t largest_part = 0;
    for (size_t p = 0; p < parts; ++p) {
      part_begin[p] = total;
      for (size_t c = 0; c < chunks; ++c) {
        const uint32_t count = hist[c * parts + p];
        hist[c * parts + p] = static_cast<uint32_t>(total);
        total += count;
      }
      largest_part = std::max<size_t>(largest_part, total - part_begin[p]);
    }
    part_begin[parts] = total;
    pool.ParallelFor(chunks, [&](size_t c, int) {
      const size_t begin = n * c / chunks, end = n * (c + 1) / chunks;
      uint32_t* h = hist.data() + c * parts;
      uint64_t block[kKeyBlock];
      for (size_t b = begin; b < end; b += kKeyBlock) {
        const size_t e = std::min(end, b + kKeyBlock);
        const uint64_t* kb = key.data() + b;
        if (recompute_keys) {
          keys(band, b, e, block);
          for (size_t i = 0; i < e - b; ++i) block[i] = spread(block[i]);
          kb = block;
        }
        for (size_t i = b; i < e; ++i) {
          const uint64_t k = kb[i - b];
          const uint64_t w = ((k << pbits) & ~uint64_t{0xffffffff}) | i;
          word[h[pbits == 0 ? 0 : k >> (64 - pbits)]++] = w;
        }
      }
    });
    // 3. Sort each partition; buckets are runs of equal upper words.
    pool.ParallelFor(part_tasks, [&](size_t t, int worker) {
      TaskOut& out = outs[t];
      std::vector<uint64_t>& tmp = scratch[static_cast<size_t>(worker)];
      if (tmp.size() < largest_part) tmp.resize(largest_part);
      const size_t p0 = parts * t / part_tasks, p1 = parts * (t + 1) / part_tasks;
      // The test's data of a partition's members is fetched (into L2) while
      // the partition before it is sorted and scanned: the members of the
      // task's first partition here, those of partition p + 1 before p.
      const auto fetch_part = [&](size_t p) {
        for (size_t i = part_begin[p]; i < part_begin[p + 1]; ++i) {
          prefetch.Early(static_cast<uint32_t>(word[i]));
        }
      };
      fetch_part(p0);
      for (size_t p = p0; p < p1; ++p) {
        const size_t m = part_begin[p + 1] - part_begin[p];
        if (p + 1 < p1) fetch_part(p + 1);
        const uint64_t* w = SortWords(word.data() + part_begin[p], tmp.data(), m, low);
        // And into L1 some documents ahead of the scan.
        size_t fetched = 0;
        for (size_t s = 0; s < m;) {
          size_t e = s + 1;
          while (e < m && (w[e] >> 32) == (w[s] >> 32)) ++e;
          const size_t size = e - s;
          if (size == 1) {
            s = e;
            continue;
          }
          for (fetched = std::max(fetched, s); fetched < std::min(m, e + kPrefetchAhead);
               ++fetched) {
            prefetch(static_cast<uint32_t>(w[fetched]));
          }
          if (gather && size <= max_bucket) {
            out.hi.resize(size);
            out.lo.resize(size);
            for (size_t i = 0; i < size; ++i) {
              const auto& fp = bucket_words.words[static_cast<uint32_t>(w[s + i])];
              out.hi[i] = fp.first;
              out.lo[i] = fp.second;
            }
            const size_t first = out.pairs.size();
            bucket_pairs(out.hi.data(), out.lo.data(), size, bucket_words.k, &out.pairs);
            for (size_t i = first; i < out.pairs.size(); ++i) {
              out.pairs[i].a = static_cast<uint32_t>(w[s + out.pairs[i].a]);
              out.pairs[i].b = static_cast<uint32_t>(w[s + out.pairs[i].b]);
            }
            out.tally.largest = std::max(out.tally.largest, size);
            out.tally.candidates += size * (size - 1) / 2;
            out.tally.tested += size * (size - 1) / 2;
            s = e;
            continue;
          }
          dedup_internal::VerifyBucket(
              size, [w, s](size_t i) { return static_cast<uint32_t>(w[s + i]); }, test,
              confirmed_before, forest, max_bucket, max_reps, &out.local, &out.pairs, &out.tally);
          s = e;
        }
      }
    });
    for (TaskOut& out : outs) {
      st.candidates += out.tally.candidates;
      st.tested += out.tally.tested;
      st.large_buckets += out.tally.large;
      st.largest_bucket = std::max(st.largest_bucket, out.tally.largest);
      pending.insert(pending.end(), out.pairs.begin(), out.pairs.end());
      out.pairs.clear();
      out.pairs.shrink_to_fit();
      out.tally = {};
    }
    if (forest) {
      // Sorted first: the forest does not depend on the thread count.
      std::sort(pending.begin(), pending.end(), ById);
      confirmed_forest += pending.size();
      for (const IdPair& p : pending) {
        if (uf.Union(p.a, p.b)) {
          pairs->push_back(p);
          ++unions_since_refresh;
        }
      }
      pending.clear();
      // A stale comp is still right (equal: connected), it only skips fewer
      // tests: refreshed (O(n)) once enough has been joined since.
      if (unions_since_refresh > n / 256) {
        for (size_t i = 0; i < n; ++i) comp[i] = static_cast<uint32_t>(uf.Find(i));
        unions_since_refresh = 0;
      }
      continue;
    }
    // Confirmed pairs recur in most bands: fold them in when the pending ones
    // outgrow the distinct ones (or n / 8: 3 bytes per document), so memory
    // stays with the distinct pairs.
    if (options.skip_confirmed || pending.size() > std::max<size_t>(pairs->size(), n / 8)) {
      MergeUnique(&pending, pairs);
    }
  }
  if (forest) {
    std::sort(pairs->begin(), pairs->end(), ById);
    st.confirmed = confirmed_forest;
  } else {
    MergeUnique(&pending, pairs);
    st.confirmed = pairs->size();
  }
  report(static_cast<size_t>(bands));
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (stats != nullptr) *stats = st;
  return Status::OK();
}

}  // namespace

Status BandJoin(size_t n, const BandKeyFunction& keys, const PairTest& test,
                const BandJoinOptions& options, std::vector<IdPair>* pairs, BandJoinStats* stats) {
  return Run(n, keys, test, 0, false, Prefetcher{}, BucketWords{}, options, pairs, stats);
}

Status SimHashBandJoin(std::span<const Fingerprint> fps, int k, const SimHashBands& layout,
                       const BandJoinOptions& options, std::vector<IdPair>* pairs,
                       BandJoinStats* stats, int first_band, int end_band) {
  if (layout.bands < 1 || layout.band_bits < 1 || layout.band_bits > layout.bits) {
    return Status::InvalidArgument("SimHashBandJoin: bands >= 1 and 1 <= band_bits <= bits");
  }
  if (end_band < 0) end_band = layout.bands;
  if (first_band < 0 || first_band >= end_band || end_band > layout.bands) {
    return Status::InvalidArgument("SimHashBandJoin: band range outside [0, bands)");
  }
  // 16 bytes per fingerprint (a Fingerprint is 24): the tests load two at
  // random places, so fewer cache lines matter.
  std::vector<std::pair<uint64_t, uint64_t>> words(fps.size());
  for (size_t i = 0; i < fps.size(); ++i) words[i] = {fps[i].hi(), fps[i].lo()};
  return dedup_internal::SimHashBandJoinWords(words, k, layout, options, pairs, stats, first_band,
                                              end_band);
}

Status dedup_internal::SimHashBandJoinWords(std::span<const std::pair<uint64_t, uint64_t>> words,
                                            int k, const SimHashBands& layout,
                                            const BandJoinOptions& options,
                                            std::vector<IdPair>* pairs, BandJoinStats* stats,
                                            int first_band, int end_band) {
  if (layout.bands < 1 || layout.band_bits < 1 || layout.band_bits > layout.bits) {
    return Status::InvalidArgument("SimHashBandJoin: bands >= 1 and 1 <= band_bits <= bits");
  }
  if (end_band < 0) end_band = layout.bands;
  if (first_band < 0 || first_band >= end_band || end_band > layout.bands) {
    return Status::InvalidArgument("SimHashBandJoin: band range outside [0, bands)");
  }
  const size_t n = words.size();
  auto masks = SimHashBandMasks(layout);
  masks.erase(masks.begin() + end_band, masks.end());
  masks.erase(masks.begin(), masks.begin() + first_band);
  const auto test = [&words, k](size_t i, size_t j) {
    const int d = std::popcount(words[i].first ^ words[j].first) +
                  std::popcount(words[i].second ^ words[j].second);
    return d <= k ? d : -1;
  };
  const Prefetcher prefetch{reinterpret_cast<const char*>(words.data()), sizeof(words[0])};
  const BucketWords bucket_words{words.data(), k};
  BandJoinOptions opt = options;
  opt.bands = end_band - first_band;
  if (layout.band_bits <= 32) {
    // Packed keys of band_bits bits: buckets are exact, no hashing.
    std::vector<std::unique_ptr<dedup_internal::BandByteTables>> tables;
    const bool pext = dedup_internal::HaveFastPext();
    if (!pext) {
      for (const auto& [mhi, mlo] : masks)
        tables.push_back(dedup_internal::MakeBandByteTables(mhi, mlo));
    }
    const auto keys = [&](int band, size_t begin, size_t end, uint64_t* out) {
      const auto b = static_cast<size_t>(band);
      if (pext) {
        dedup_internal::PackKeysPext(words.data() + begin, end - begin, masks[b].first,
                                     masks[b].second, out);
      } else {
        dedup_internal::PackKeysTable(*tables[b], words.data() + begin, end - begin, out);
      }
    };
    return Run(n, keys, test, layout.band_bits, true, prefetch, bucket_words, opt, pairs, stats);
  }
  const auto keys = [&](int band, size_t begin, size_t end, uint64_t* out) {
    const uint64_t mhi = masks[static_cast<size_t>(band)].first;
    const uint64_t mlo = masks[static_cast<size_t>(band)].second;
    for (size_t i = begin; i < end; ++i) {
      out[i - begin] = (words[i].second & mlo) ^ SplitMix64(words[i].first & mhi);
    }
  };
  return Run(n, keys, test, 0, false, prefetch, bucket_words, opt, pairs, stats);
}

// ---------------------------------------------------------------------------

double BitSamplingCollision(int f, int d, int r) {
  // C(f - d, r) / C(f, r) = prod_{i < r} (f - d - i) / (f - i).
  if (r > f - d) return 0.0;
  double p = 1.0;
  for (int i = 0; i < r; ++i) p *= static_cast<double>(f - d - i) / (f - i);
  return p;
}

double BandRecall(double p, int bands) {
  if (p >= 1.0) return 1.0;
  return -std::expm1(bands * std::log1p(-p));
}

namespace {

// Cost model, in nanoseconds on one thread of the benchmark machine (see
// doc/benchmarks.md): per document and band (key, scatter, sort, scan) and per
// candidate pair (a test of two fingerprints in random places).
constexpr double kKeyNs = 17.0;
constexpr double kTestNs = 2.4;
// The exact self-join: per unit of PermutedTableIndex::ChooseLayout's query
// cost (one table probe), per query.
constexpr double kProbeNs = 11.0;

}  // namespace

namespace {

// (r, L) of the lowest cost(r, L, mean p(D) of a random pair) among r in
// [1, max_r] (see ChooseSimHashBands).
template <class Cost>
SimHashBands ChooseBands(size_t n, int f, int k, double recall,
                         const std::vector<int>& sample_distances, uint64_t seed, int max_r,
                         const Cost& cost_of) {
  // The distance distribution of a random pair: the sample's, or (none)
  // that of independent random fingerprints, Binomial(f, 1/2).
  std::vector<double> weight(static_cast<size_t>(f) + 1, 0.0);
  if (sample_distances.empty()) {
    for (int d = 0; d <= f; ++d) {
      weight[static_cast<size_t>(d)] = std::exp(std::lgamma(f + 1.0) - std::lgamma(d + 1.0) -
                                                std::lgamma(f - d + 1.0) - f * std::log(2.0));
    }
  } else {
    for (int d : sample_distances) {
      weight[static_cast<size_t>(std::clamp(d, 0, f))] += 1.0 / sample_distances.size();
    }
  }
  // Recall at k - 4 is held to 1 - (1 - recall) / 100 (0.9999 for 0.99) too.
  const double close_target = 1 - (1 - recall) / 100;
  const int close_d = std::max(k - 4, 0);
  const double nn = static_cast<double>(n);
  SimHashBands best;
  best.bits = f;
  best.seed = seed;
  bool have = false;
  for (int r = 1; r <= std::min(f - k, max_r); ++r) {
    const double pk = BitSamplingCollision(f, k, r);
    if (pk <= 0) break;
    const double pc = BitSamplingCollision(f, close_d, r);
    const double l = std::max(std::ceil(std::log1p(-recall) / std::log1p(-pk)),
                              std::ceil(std::log1p(-close_target) / std::log1p(-pc)));
    if (l > 4096) continue;
    const int bands = std::max(1, static_cast<int>(l));
    double mean_p = 0;
    for (int d = 0; d <= f; ++d) {
      if (weight[static_cast<size_t>(d)] > 0) {
        mean_p += weight[static_cast<size_t>(d)] * BitSamplingCollision(f, d, r);
      }
    }
    const double per_band = nn * (nn - 1) / 2 * mean_p;
    const double cost = cost_of(bands, per_band);
    if (!have || cost < best.estimated_seconds) {
      have = true;
      best.band_bits = r;
      best.bands = bands;
      best.estimated_candidates = bands * per_band;
      best.estimated_seconds = cost;
    }
  }
  best.recall_at_k = BandRecall(BitSamplingCollision(f, k, best.band_bits), best.bands);
  best.recall_at_k_minus_4 =
      BandRecall(BitSamplingCollision(f, std::max(k - 4, 0), best.band_bits), best.bands);
  return best;
}

// Stream mode (dedup/stream_bands.h): per document and band, a probe of each
// level and its share of the merges; per candidate, a test of a fingerprint
// in a random place.
constexpr double kStreamProbeNs = 12.0;
constexpr double kStreamMergeNs = 3.0;
constexpr double kStreamTestNs = 4.0;

}  // namespace

SimHashBands ChooseSimHashBands(size_t n, int f, int k, double recall,
                                const std::vector<int>& sample_distances, uint64_t seed) {
  const double nn = static_cast<double>(n);
  return ChooseBands(n, f, k, recall, sample_distances, seed, f, [nn](int bands, double per_band) {
    return bands * (nn * kKeyNs + per_band * kTestNs) * 1e-9;
  });
}

SimHashBands ChooseSimHashStreamBands(size_t n, int f, int k, double recall,
                                      const std::vector<int>& sample_distances, uint64_t seed) {
  const double nn = static_cast<double>(n);
  // Levels of leveling with growth 4 over batches of 4,096 (stream_bands.h).
  const double levels = std::max(1.0, std::ceil(std::log(nn / 4096) / std::log(4.0)));
  const double per_doc = levels * (kStreamProbeNs + 2 * kStreamMergeNs);
  return ChooseBands(n, f, k, recall, sample_distances, seed, 32,
                     [nn, per_doc](int bands, double per_band) {
                       return bands * (nn * per_doc + per_band * kStreamTestNs) * 1e-9;
                     });
}

std::vector<std::pair<uint64_t, uint64_t>> SimHashBandMasks(const SimHashBands& bands) {
  std::vector<std::pair<uint64_t, uint64_t>> masks;
  masks.reserve(static_cast<size_t>(bands.bands));
  std::vector<int> pos(static_cast<size_t>(bands.bits));
  for (int b = 0; b < bands.bands; ++b) {
    std::iota(pos.begin(), pos.end(), 0);
    uint64_t state = bands.seed + static_cast<uint64_t>(b) * kSplitMix64Gamma;
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < bands.band_bits; ++i) {
      state = SplitMix64(state);
      const int j = i + static_cast<int>(state % static_cast<uint64_t>(bands.bits - i));
      std::swap(pos[static_cast<size_t>(i)], pos[static_cast<size_t>(j)]);
      const int bit = pos[static_cast<size_t>(i)];
      if (bit < 64) {
        lo |= uint64_t{1} << bit;
      } else {
        hi |= uint64_t{1} << (bit - 64);
      }
    }
    masks.push_back({hi, lo});
  }
  return masks;
}

double EstimateExactJoinSeconds(size_t n, int f, int k) {
  const TableLayout layout = PermutedTableIndex::ChooseLayout(f, k, n, 64);
  const double cand_cost = f == 64 ? 0.05 : 0.08;
  const double per_query =
      layout.tables *
      (1.0 + static_cast<double>(n) * std::ldexp(1.0, -layout.min_key_bits) * cand_cost);
  return static_cast<double>(n) * per_query * kProbeNs * 1e-9;
}

}  // namespace neardup
