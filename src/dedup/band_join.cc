// Copyright 2026 The neardup Authors.

#include "neardup/band_join.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <numeric>

#include "util/random.h"
#include "util/thread_pool.h"

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
  size_t candidates = 0;
  size_t tested = 0;
  size_t large = 0;
  size_t largest = 0;
};

}  // namespace

Status BandJoin(size_t n, const BandKeyFunction& keys, const PairTest& test,
                const BandJoinOptions& options, std::vector<IdPair>* pairs, BandJoinStats* stats) {
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
  const int pbits = PartitionBits(n);
  const size_t parts = size_t{1} << pbits;
  // Key chunks: enough for the workers to balance; histograms per chunk.
  const size_t chunks = std::min(n, workers * 4);
  std::vector<uint64_t> key(n);
  std::vector<uint64_t> word(n);  // (hashed key's next 32 bits << 32) | document
  std::vector<uint32_t> hist(chunks * parts);
  std::vector<uint64_t> part_begin(parts + 1);
  // Partition tasks: runs of partitions of about equal size.
  const size_t part_tasks = std::min(parts, workers * 16);
  std::vector<TaskOut> outs(part_tasks);
  std::vector<IdPair> pending;
  const size_t max_bucket = std::max<size_t>(options.max_bucket, 2);
  const size_t max_reps = std::max<size_t>(options.max_representatives, 1);

  auto confirmed_before = [&](uint32_t a, uint32_t b) {
    if (!options.skip_confirmed) return false;
    const IdPair probe{a, b, 0};
    return std::binary_search(pairs->begin(), pairs->end(), probe, ById);
  };

  for (int band = 0; band < bands; ++band) {
    report(static_cast<size_t>(band));
    // 1. Keys, hashed, and per-chunk histograms of their top bits.
    pool.ParallelFor(chunks, [&](size_t c, int) {
      const size_t begin = n * c / chunks, end = n * (c + 1) / chunks;
      keys(band, begin, end, key.data() + begin);
      uint32_t* h = hist.data() + c * parts;
      std::fill(h, h + parts, 0);
      for (size_t i = begin; i < end; ++i) {
        key[i] = SplitMix64(key[i]);
        ++h[pbits == 0 ? 0 : key[i] >> (64 - pbits)];
      }
    });
    // 2. Scatter into partitions (chunk order within a partition).
    uint64_t total = 0;
    for (size_t p = 0; p < parts; ++p) {
      part_begin[p] = total;
      for (size_t c = 0; c < chunks; ++c) {
        const uint32_t count = hist[c * parts + p];
        hist[c * parts + p] = static_cast<uint32_t>(total);
        total += count;
      }
    }
    part_begin[parts] = total;
    pool.ParallelFor(chunks, [&](size_t c, int) {
      const size_t begin = n * c / chunks, end = n * (c + 1) / chunks;
      uint32_t* h = hist.data() + c * parts;
      for (size_t i = begin; i < end; ++i) {
        const uint64_t k = key[i];
        const uint64_t w = ((k << pbits) & ~uint64_t{0xffffffff}) | i;
        word[h[pbits == 0 ? 0 : k >> (64 - pbits)]++] = w;
      }
    });
    // 3. Sort each partition; buckets are runs of equal upper words. Two
    //    documents whose keys hash alike only in these 32 + pbits bits are a
    //    spurious candidate, which the test rejects.
    pool.ParallelFor(part_tasks, [&](size_t t, int) {
      TaskOut& out = outs[t];
      const size_t p0 = parts * t / part_tasks, p1 = parts * (t + 1) / part_tasks;
      for (size_t p = p0; p < p1; ++p) {
        uint64_t* w = word.data() + part_begin[p];
        const size_t m = part_begin[p + 1] - part_begin[p];
        std::sort(w, w + m);
        for (size_t s = 0; s < m;) {
          size_t e = s + 1;
          while (e < m && (w[e] >> 32) == (w[s] >> 32)) ++e;
          const size_t size = e - s;
          out.largest = std::max(out.largest, size);
          if (size <= max_bucket) {
            out.candidates += size * (size - 1) / 2;
            for (size_t x = s; x < e; ++x) {
              const uint32_t a = static_cast<uint32_t>(w[x]);
              for (size_t y = x + 1; y < e; ++y) {
                const uint32_t b = static_cast<uint32_t>(w[y]);
                if (confirmed_before(a, b)) continue;
                ++out.tested;
                const int score = test(a, b);
                if (score >= 0) out.pairs.push_back({a, b, score});
              }
            }
          } else if (size > 1) {
            ++out.large;
            std::vector<uint32_t> reps{static_cast<uint32_t>(w[s])};
            for (size_t x = s + 1; x < e; ++x) {
              const uint32_t b = static_cast<uint32_t>(w[x]);
              bool matched = false;
              for (uint32_t a : reps) {
                ++out.candidates;
                if (confirmed_before(a, b)) {
                  matched = true;
                  continue;
                }
                ++out.tested;
                const int score = test(a, b);
                if (score >= 0) {
                  out.pairs.push_back({a, b, score});
                  matched = true;
                }
              }
              if (!matched && reps.size() < max_reps) reps.push_back(b);
            }
          }
          s = e;
        }
      }
    });
    for (TaskOut& out : outs) {
      st.candidates += out.candidates;
      st.tested += out.tested;
      st.large_buckets += out.large;
      st.largest_bucket = std::max(st.largest_bucket, out.largest);
      pending.insert(pending.end(), out.pairs.begin(), out.pairs.end());
      out = TaskOut{};
    }
    // Confirmed pairs recur in most bands: fold them in when the pending ones
    // outgrow the distinct ones, so memory stays with the distinct pairs.
    if (options.skip_confirmed || pending.size() > std::max<size_t>(pairs->size(), 1 << 20)) {
      MergeUnique(&pending, pairs);
    }
  }
  MergeUnique(&pending, pairs);
  report(static_cast<size_t>(bands));
  st.confirmed = pairs->size();
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (stats != nullptr) *stats = st;
  return Status::OK();
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
constexpr double kKeyNs = 35.0;
constexpr double kTestNs = 18.0;
// The exact self-join: per unit of PermutedTableIndex::ChooseLayout's query
// cost (one table probe), per query.
constexpr double kProbeNs = 11.0;

}  // namespace

SimHashBands ChooseSimHashBands(size_t n, int f, int k, double recall,
                                const std::vector<int>& sample_distances, uint64_t seed) {
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
  for (int r = 1; r <= f - k; ++r) {
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
    const double cost = bands * (nn * kKeyNs + per_band * kTestNs) * 1e-9;
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
