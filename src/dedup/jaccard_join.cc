// Copyright 2026 The neardup Authors.
//
// The exact Jaccard join of sets (JaccardJoin) and the short-document rule
// built on it (ShortDocumentPairs, declared in dedup.h; its pairs of groups,
// AddShortRulePairs, in dedup/stages.h).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "dedup/stages.h"
#include "neardup/dedup.h"
#include "neardup/fingerprint.h"
#include "neardup/minhash.h"
#include "neardup/parallel.h"

namespace neardup {

Result<std::vector<JaccardPair>> JaccardJoin(std::span<const std::vector<uint64_t>> sets,
                                             double threshold, int threads) {
  if (!(threshold > 0 && threshold <= 1)) {
    return Status::InvalidArgument("Jaccard threshold must be in (0, 1]");
  }
  const size_t n = sets.size();
  if (n > UINT32_MAX) return Status::InvalidArgument("too many sets for the Jaccard join");
  // Element ranks: rarest first (ties by value), so prefixes hold rare
  // elements and inverted lists stay short. Every element with its set,
  // sorted by value: the runs are the distinct elements and their
  // frequencies; each set then gets its elements' ranks in one pass.
  // The sort is by the elements' top bits into buckets first (one pass),
  // then the buckets in parallel: an element's copies share a bucket.
  constexpr int kBucketBits = 10;
  std::vector<size_t> bucket_begin((size_t{1} << kBucketBits) + 1, 0);
  const auto bucket = [](uint64_t e) { return static_cast<size_t>(e >> (64 - kBucketBits)); };
  for (const auto& s : sets) {
    for (uint64_t e : s) ++bucket_begin[bucket(e) + 1];
  }
  for (size_t b = 0; b + 1 < bucket_begin.size(); ++b) bucket_begin[b + 1] += bucket_begin[b];
  std::vector<std::pair<uint64_t, uint32_t>> all(bucket_begin.back());  // (element, set)
  {
    std::vector<size_t> fill(bucket_begin.begin(), bucket_begin.end() - 1);
    for (size_t i = 0; i < n; ++i) {
      for (uint64_t e : sets[i]) all[fill[bucket(e)]++] = {e, static_cast<uint32_t>(i)};
    }
  }
  ParallelFor(bucket_begin.size() - 1, threads, [&](size_t b, int) {
    std::sort(all.begin() + static_cast<std::ptrdiff_t>(bucket_begin[b]),
              all.begin() + static_cast<std::ptrdiff_t>(bucket_begin[b + 1]));
  });
  std::vector<size_t> run_begin;                       // distinct element -> first in `all`
  std::vector<std::pair<uint32_t, uint32_t>> by_rank;  // (frequency, distinct element)
  for (size_t i = 0; i < all.size();) {
    size_t e = i + 1;
    while (e < all.size() && all[e].first == all[i].first) ++e;
    by_rank.emplace_back(static_cast<uint32_t>(e - i), static_cast<uint32_t>(run_begin.size()));
    run_begin.push_back(i);
    i = e;
  }
  run_begin.push_back(all.size());
  std::sort(by_rank.begin(), by_rank.end());  // by frequency, then value (= distinct order)
  std::vector<std::vector<uint32_t>> ranked(n);
  for (size_t i = 0; i < n; ++i) ranked[i].reserve(sets[i].size());
  for (size_t r = 0; r < by_rank.size(); ++r) {
    const size_t d = by_rank[r].second;
    for (size_t at = run_begin[d]; at < run_begin[d + 1]; ++at) {
      ranked[all[at].second].push_back(static_cast<uint32_t>(r));
    }
  }
  std::vector<std::pair<uint64_t, uint32_t>>().swap(all);
  std::vector<size_t>().swap(run_begin);
  // In rank order already: the ranks were handed out in increasing order.

  // Sets in increasing size: a probe meets only sets no larger than itself,
  // and only those before it in this order.
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sets[a].size() < sets[b].size(); });
  // Prefixes (Bayardo et al. 2007; Xiao et al. 2008, PPJoin): two sets at
  // Jaccard >= t share o >= t / (1 + t) (|x| + |y|) elements. A probe x
  // meets only sets y before it (|y| <= |x|), so o >= ceil(t |x|) (with the
  // size filter |y| >= t |x|) and o >= 2t / (1 + t) |y|: x probes its first
  // |x| - ceil(t |x|) + 1 elements, y is indexed by its first
  // |y| - ceil(2t / (1 + t) |y|) + 1, and the pair shares an element of both.
  const auto need = [](double bound) {
    return std::max<size_t>(static_cast<size_t>(std::ceil(bound - 1e-9)), 1);
  };
  const auto probe_prefix = [&](size_t size) {
    return size - need(threshold * static_cast<double>(size)) + 1;
  };
  const auto index_prefix = [&](size_t size) {
    return size - need(2 * threshold / (1 + threshold) * static_cast<double>(size)) + 1;
  };
  // The index of every set's prefix (rank -> (position in `order`, place of
  // the element in the set), positions increasing), built first so that the
  // probes can run in parallel: the probe of the set at position q reads
  // each list up to q, which is what a join that indexes each set after
  // probing it would hold then.
  struct Entry {
    uint32_t q;
    uint32_t at;
  };
  std::vector<size_t> list_begin(by_rank.size() + 1, 0);
  for (size_t q = 0; q < n; ++q) {
    const size_t x = order[q];
    const size_t px = sets[x].empty() ? 0 : index_prefix(sets[x].size());
    for (size_t p = 0; p < px; ++p) ++list_begin[ranked[x][p] + 1];
  }
  for (size_t r = 0; r < by_rank.size(); ++r) list_begin[r + 1] += list_begin[r];
  std::vector<Entry> lists(list_begin.back());
  {
    std::vector<size_t> fill(list_begin.begin(), list_begin.end() - 1);
    for (size_t q = 0; q < n; ++q) {
      const size_t x = order[q];
      const size_t px = sets[x].empty() ? 0 : index_prefix(sets[x].size());
      for (size_t p = 0; p < px; ++p) {
        lists[fill[ranked[x][p]]++] = {static_cast<uint32_t>(q), static_cast<uint32_t>(p)};
      }
    }
  }
  // Probes in chunks of positions, handed out dynamically; each worker has
  // its own marks and overlap counts. Positional filter: when x's element
  // at place i meets y's at place j, the pair can share at most the common
  // prefix elements counted so far plus min(|x| - i, |y| - j); a candidate
  // that cannot reach o is dropped. Candidates are verified on the ranked
  // sets, stopping once o is out of reach. The pairs are sorted at the end,
  // so the result does not depend on the threads.
  constexpr size_t kChunk = 512;
  constexpr uint32_t kPruned = UINT32_MAX;
  const size_t chunks = (n + kChunk - 1) / kChunk;
  const int workers = std::max(1, std::min(ResolveThreadCount(threads), static_cast<int>(chunks)));
  struct Scratch {
    std::vector<size_t> mark;     // the probe that last met the set
    std::vector<uint32_t> count;  // common prefix elements met, or kPruned
  };
  std::vector<Scratch> scratch(static_cast<size_t>(workers));
  std::vector<std::vector<JaccardPair>> found(chunks);
  const double ratio = threshold / (1 + threshold);
  ParallelFor(chunks, workers, [&](size_t chunk, int worker) {
    Scratch& w = scratch[static_cast<size_t>(worker)];
    if (w.mark.empty()) {
      w.mark.assign(n, SIZE_MAX);
      w.count.assign(n, 0);
    }
    std::vector<size_t> candidates;
    std::vector<JaccardPair>& out = found[chunk];
    const size_t end = std::min(n, (chunk + 1) * kChunk);
    for (size_t q = chunk * kChunk; q < end; ++q) {
      const size_t x = order[q];
      const size_t sx = sets[x].size();
      if (sx == 0) continue;
      const std::vector<uint32_t>& rx = ranked[x];
      const size_t px = probe_prefix(sx);
      const double smallest = threshold * static_cast<double>(sx) - 1e-9;  // size filter
      candidates.clear();
      for (size_t i = 0; i < px; ++i) {
        const uint32_t r = rx[i];
        for (size_t e = list_begin[r]; e < list_begin[r + 1] && lists[e].q < q; ++e) {
          const size_t y = order[lists[e].q];
          const size_t sy = sets[y].size();
          if (w.mark[y] != x) {
            w.mark[y] = x;
            if (static_cast<double>(sy) < smallest) {
              w.count[y] = kPruned;
              continue;
            }
            w.count[y] = 0;
            candidates.push_back(y);
          } else if (w.count[y] == kPruned) {
            continue;
          }
          const size_t o = need(ratio * static_cast<double>(sx + sy));
          const size_t rest = std::min(sx - i, sy - lists[e].at);
          if (w.count[y] + rest < o) {
            w.count[y] = kPruned;
          } else {
            ++w.count[y];
          }
        }
      }
      for (size_t y : candidates) {
        if (w.count[y] == kPruned) continue;
        // The overlap of the ranked sets, stopping once o is out of reach.
        const std::vector<uint32_t>& ry = ranked[y];
        const size_t sy = ry.size();
        const size_t o = need(ratio * static_cast<double>(sx + sy));
        size_t a = 0, b = 0, common = 0;
        while (a < sx && b < sy && common + std::min(sx - a, sy - b) >= o) {
          if (rx[a] == ry[b]) {
            ++common;
            ++a;
            ++b;
          } else if (rx[a] < ry[b]) {
            ++a;
          } else {
            ++b;
          }
        }
        if (common < o) continue;
        const double j = static_cast<double>(common) / static_cast<double>(sx + sy - common);
        if (j >= threshold) out.push_back({std::min(x, y), std::max(x, y), j});
      }
    }
  });
  std::vector<JaccardPair> out;
  {
    size_t total = 0;
    for (const auto& f : found) total += f.size();
    out.reserve(total);
  }
  for (auto& f : found) {
    out.insert(out.end(), f.begin(), f.end());
    std::vector<JaccardPair>().swap(f);
  }
  std::sort(out.begin(), out.end(), [](const JaccardPair& a, const JaccardPair& b) {
    return a.a != b.a ? a.a < b.a : a.b < b.b;
  });
  return out;
}

Result<std::vector<JaccardPair>> ShortDocumentPairs(std::span<const std::vector<uint64_t>> sets,
                                                    size_t short_features, double jaccard,
                                                    int threads) {
  NEARDUP_ASSIGN_OR_RETURN(std::vector<JaccardPair> pairs, JaccardJoin(sets, jaccard, threads));
  std::erase_if(pairs, [&](const JaccardPair& p) {
    return std::min(sets[p.a].size(), sets[p.b].size()) >= short_features;
  });
  return pairs;
}

namespace dedup_internal {

Result<size_t> AddShortRulePairs(std::span<const std::vector<uint64_t>> sets,
                                 const std::function<uint64_t(size_t)>& group,
                                 const std::function<Fingerprint(size_t)>& fingerprint,
                                 const DedupOptions& options, std::vector<IdPair>* group_pairs) {
  NEARDUP_ASSIGN_OR_RETURN(
      std::vector<JaccardPair> pairs,
      ShortDocumentPairs(sets, options.short_features, options.short_jaccard, options.threads));
  const size_t before = group_pairs->size();
  for (const JaccardPair& p : pairs) {
    const uint64_t ga = group(p.a), gb = group(p.b);
    if (ga == UINT64_MAX || gb == UINT64_MAX || ga == gb) continue;
    const int d = HammingDistance(fingerprint(p.a), fingerprint(p.b));
    if (d <= options.k) continue;  // within k: the join has it (or its forest joins it)
    group_pairs->push_back({std::min(ga, gb), std::max(ga, gb), d});
  }
  if (group_pairs->size() == before) return size_t{0};
  MergePairs(group_pairs);
  return group_pairs->size() - before;
}

}  // namespace dedup_internal

}  // namespace neardup
