// Copyright 2026 The neardup Authors.
//
// The exact Jaccard join of sets (JaccardJoin) and the short-document rule
// built on it (ShortDocumentPairs, declared in dedup.h; its pairs of groups,
// AddShortRulePairs, in dedup/stages.h).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "dedup/stages.h"
#include "neardup/dedup.h"
#include "neardup/fingerprint.h"
#include "neardup/minhash.h"
#include "neardup/parallel.h"

namespace neardup {

Result<std::vector<JaccardPair>> JaccardJoin(std::span<const std::vector<uint64_t>> all_sets,
                                             double threshold, int threads) {
  if (!(threshold > 0 && threshold <= 1)) {
    return Status::InvalidArgument("Jaccard threshold must be in (0, 1]");
  }
  // The sets that are not empty (empty sets pair with nothing): the join's
  // arrays are sized by them (the short-document rule passes one set per
  // document, empty for the long ones: on a corpus of long texts nearly
  // all), and its pairs are mapped back at the end.
  std::vector<size_t> live;
  for (size_t i = 0; i < all_sets.size(); ++i) {
    if (!all_sets[i].empty()) live.push_back(i);
  }
  const size_t n = live.size();
  if (n > UINT32_MAX) return Status::InvalidArgument("too many sets for the Jaccard join");
  std::vector<std::span<const uint64_t>> sets(n);
  for (size_t i = 0; i < n; ++i) sets[i] = all_sets[live[i]];
  // Element ranks: rarest first, so prefixes hold rare elements and
  // inverted lists stay short (any one order of the elements gives the same
  // pairs; this one keeps the join fast). The elements are counted in
  // blocks of the value range (their top bits; a set's elements of a block
  // are a run of it, the sets being sorted): a block's distinct elements get
  // ids in the order they are met (sets in order) from an open-addressing
  // table of the block's elements, which stays small enough to sit in
  // cache; each element's id is written at its place in `ranked`, and each
  // id's frequency counted. Blocks run in parallel, each worker with its own
  // table (12 bytes a slot, at most half full). Then the ids, in block
  // order, are sorted by (frequency, id) into ranks, and each set's ids
  // become ranks, sorted. No array of every element is built.
  size_t total = 0;
  for (const auto& s : sets) {
    if (s.size() > UINT32_MAX) {
      return Status::InvalidArgument("a set too large for the Jaccard join");
    }
    total += s.size();
  }
  // About 2^20 elements a block, but no more blocks than half the mean set
  // size: every block visits every set, which must not cost more than the
  // elements themselves (millions of tiny sets).
  int block_bits = 0;
  while (block_bits < 12 && (total >> (20 + block_bits)) > 0 &&
         (size_t{2} << block_bits) <= total / std::max<size_t>(n, 1) / 2) {
    ++block_bits;
  }
  const size_t blocks = size_t{1} << block_bits;
  const auto block = [block_bits](uint64_t e) {
    return block_bits == 0 ? size_t{0} : static_cast<size_t>(e >> (64 - block_bits));
  };
  // Each set's element ids, then ranks, flat: set i at [start[i], start[i + 1]).
  std::vector<size_t> start(n + 1, 0);
  for (size_t i = 0; i < n; ++i) start[i + 1] = start[i] + sets[i].size();
  std::vector<uint32_t> ranked(start[n]);
  std::vector<std::vector<uint32_t>> frequency(blocks);  // per block, by id
  {
    const int ranking_workers =
        std::max(1, std::min(ResolveThreadCount(threads), static_cast<int>(blocks)));
    struct BlockScratch {
      std::vector<uint64_t> key;     // the table's elements
      std::vector<uint32_t> id;      // their ids; UINT32_MAX: an empty slot
      std::vector<uint32_t> cursor;  // per set: its first element not in an earlier block
      size_t last = SIZE_MAX;        // the block this worker did last
    };
    std::vector<BlockScratch> scratch(static_cast<size_t>(ranking_workers));
    const auto slot_of = [](uint64_t e, int bits) {
      return static_cast<size_t>((e * 0x9e3779b97f4a7c15ULL) >> (64 - bits));
    };
    ParallelFor(blocks, ranking_workers, [&](size_t b, int worker) {
      BlockScratch& w = scratch[static_cast<size_t>(worker)];
      // A worker takes blocks in increasing order (the pool hands out tasks
      // in order); its cursors only move forward, and are reset otherwise.
      if (w.cursor.empty() || (w.last != SIZE_MAX && b < w.last)) w.cursor.assign(n, 0);
      w.last = b;
      int bits = 12;
      w.key.assign(size_t{1} << bits, 0);
      w.id.assign(size_t{1} << bits, UINT32_MAX);
      std::vector<uint32_t>& freq = frequency[b];
      for (size_t i = 0; i < n; ++i) {
        // The block's part of a set a few sets ahead: the sets' data are
        // read in jumps, which the hardware does not foresee.
        if (i + 8 < n && w.cursor[i + 8] < sets[i + 8].size()) {
          __builtin_prefetch(sets[i + 8].data() + w.cursor[i + 8]);
        }
        const std::span<const uint64_t> s = sets[i];
        uint32_t at = w.cursor[i];
        while (at < s.size() && block(s[at]) < b) ++at;
        for (; at < s.size() && block(s[at]) == b; ++at) {
          const uint64_t e = s[at];
          size_t slot = slot_of(e, bits);
          const size_t mask = (size_t{1} << bits) - 1;
          while (w.id[slot] != UINT32_MAX && w.key[slot] != e) slot = (slot + 1) & mask;
          if (w.id[slot] == UINT32_MAX) {
            w.key[slot] = e;
            w.id[slot] = static_cast<uint32_t>(freq.size());
            freq.push_back(0);
            if (2 * freq.size() > mask + 1) {  // over half full: double the table
              std::vector<uint64_t> old_key = std::move(w.key);
              std::vector<uint32_t> old_id = std::move(w.id);
              ++bits;
              w.key.assign(size_t{1} << bits, 0);
              w.id.assign(size_t{1} << bits, UINT32_MAX);
              const size_t new_mask = (size_t{1} << bits) - 1;
              for (size_t o = 0; o < old_id.size(); ++o) {
                if (old_id[o] == UINT32_MAX) continue;
                size_t at2 = slot_of(old_key[o], bits);
                while (w.id[at2] != UINT32_MAX) at2 = (at2 + 1) & new_mask;
                w.key[at2] = old_key[o];
                w.id[at2] = old_id[o];
              }
              slot = slot_of(e, bits);
              while (w.key[slot] != e || w.id[slot] == UINT32_MAX) slot = (slot + 1) & new_mask;
            }
          }
          ranked[start[i] + at] = w.id[slot];
          ++freq[w.id[slot]];
        }
        w.cursor[i] = at;
      }
    });
  }
  std::vector<size_t> block_offset(blocks + 1, 0);  // block -> its first id
  for (size_t b = 0; b < blocks; ++b) block_offset[b + 1] = block_offset[b] + frequency[b].size();
  const size_t distinct = block_offset[blocks];
  if (distinct > UINT32_MAX) {
    return Status::InvalidArgument("too many distinct elements for the Jaccard join");
  }
  std::vector<uint32_t> rank_of(distinct);  // id -> rank
  // Ranks below unique_ranks are elements of one set only: they are neither
  // indexed nor probed (they meet no other set), but keep their places.
  size_t unique_ranks = 0;
  {
    std::vector<std::pair<uint32_t, uint32_t>> by_rank;  // (frequency, id)
    by_rank.reserve(distinct);
    for (size_t b = 0; b < blocks; ++b) {
      for (size_t d = 0; d < frequency[b].size(); ++d) {
        by_rank.emplace_back(frequency[b][d], static_cast<uint32_t>(block_offset[b] + d));
      }
      std::vector<uint32_t>().swap(frequency[b]);
    }
    std::sort(by_rank.begin(), by_rank.end());  // by frequency, then id
    while (unique_ranks < distinct && by_rank[unique_ranks].first == 1) ++unique_ranks;
    for (size_t r = 0; r < distinct; ++r) rank_of[by_rank[r].second] = static_cast<uint32_t>(r);
  }
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
  // Each set's ranks, sorted; then only its probe prefix is kept (the
  // index prefix is shorter): the candidates are verified on the sets.
  ParallelFor((n + 4095) / 4096, threads, [&](size_t chunk, int) {
    const size_t end = std::min(n, (chunk + 1) * 4096);
    for (size_t i = chunk * 4096; i < end; ++i) {
      uint32_t* r = ranked.data() + start[i];
      for (size_t p = 0; p < sets[i].size(); ++p) {
        r[p] = rank_of[block_offset[block(sets[i][p])] + r[p]];
      }
      std::sort(r, r + sets[i].size());
    }
  });
  std::vector<uint32_t>().swap(rank_of);
  std::vector<size_t> prefix_start(n + 1, 0);  // set i's prefix at [prefix_start[i], ...)
  for (size_t i = 0; i < n; ++i) {
    const size_t px = sets[i].empty() ? 0 : probe_prefix(sets[i].size());
    std::memmove(ranked.data() + prefix_start[i], ranked.data() + start[i], px * sizeof(uint32_t));
    prefix_start[i + 1] = prefix_start[i] + px;
  }
  ranked.resize(prefix_start[n]);
  ranked.shrink_to_fit();
  std::vector<size_t>().swap(start);

  // Sets in increasing size: a probe meets only sets no larger than itself,
  // and only those before it in this order.
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sets[a].size() < sets[b].size(); });
  // The index of every set's prefix (rank -> (position in `order`, place of
  // the element in the set), positions increasing), built first so that the
  // probes can run in parallel: the probe of the set at position q reads
  // each list up to q, which is what a join that indexes each set after
  // probing it would hold then.
  struct Entry {
    uint32_t q;
    uint32_t at;
  };
  std::vector<uint32_t> size_at(n);  // position -> the set's size (increasing)
  for (size_t q = 0; q < n; ++q) size_at[q] = static_cast<uint32_t>(sets[order[q]].size());
  std::vector<size_t> list_begin(distinct + 1, 0);
  for (size_t q = 0; q < n; ++q) {
    const size_t x = order[q];
    const size_t px = sets[x].empty() ? 0 : index_prefix(sets[x].size());
    for (size_t p = 0; p < px; ++p) {
      const uint32_t r = ranked[prefix_start[x] + p];
      if (r >= unique_ranks) ++list_begin[r + 1];
    }
  }
  for (size_t r = 0; r < distinct; ++r) list_begin[r + 1] += list_begin[r];
  std::vector<Entry> lists(list_begin.back());
  {
    std::vector<size_t> fill(list_begin.begin(), list_begin.end() - 1);
    for (size_t q = 0; q < n; ++q) {
      const size_t x = order[q];
      const size_t px = sets[x].empty() ? 0 : index_prefix(sets[x].size());
      for (size_t p = 0; p < px; ++p) {
        const uint32_t r = ranked[prefix_start[x] + p];
        if (r < unique_ranks) continue;
        lists[fill[r]++] = {static_cast<uint32_t>(q), static_cast<uint32_t>(p)};
      }
    }
  }
  // Probes in chunks of positions, handed out dynamically; each worker has
  // its own marks and overlap counts (by position). Size filter: a list's
  // entries before the first position of size >= t |x| are skipped (a
  // binary search in a long list). Positional filter: when x's element at
  // place i meets y's at place j, the pair can share at most the common
  // prefix elements counted so far plus min(|x| - i, |y| - j); a candidate
  // that cannot reach o is dropped. Candidates are verified on the sets
  // (by value), stopping once o is out of reach. The lists of the elements a few
  // places ahead are prefetched (the probe waits on memory, not on
  // arithmetic). The pairs are sorted at the end, so the result does not
  // depend on the threads.
  constexpr size_t kChunk = 512;
  constexpr uint32_t kPruned = UINT32_MAX;
  constexpr size_t kAhead = 8;      // places ahead whose list bounds are prefetched
  constexpr size_t kLongList = 16;  // entries from which a list is searched, not walked
  const size_t chunks = (n + kChunk - 1) / kChunk;
  const int workers = std::max(1, std::min(ResolveThreadCount(threads), static_cast<int>(chunks)));
  struct Scratch {
    std::vector<uint32_t> mark;   // the probe (position) that last met the position
    std::vector<uint32_t> count;  // common prefix elements met, or kPruned
  };
  std::vector<Scratch> scratch(static_cast<size_t>(workers));
  std::vector<std::vector<JaccardPair>> found(chunks);
  const double ratio = threshold / (1 + threshold);
  ParallelFor(chunks, workers, [&](size_t chunk, int worker) {
    Scratch& w = scratch[static_cast<size_t>(worker)];
    if (w.mark.empty()) {
      w.mark.assign(n, UINT32_MAX);
      w.count.assign(n, 0);
    }
    std::vector<uint32_t> candidates;
    std::vector<JaccardPair>& out = found[chunk];
    const size_t end = std::min(n, (chunk + 1) * kChunk);
    for (size_t q = chunk * kChunk; q < end; ++q) {
      const size_t x = order[q];
      const size_t sx = size_at[q];
      if (sx == 0) continue;
      const uint32_t* rx = ranked.data() + prefix_start[x];
      const size_t px = prefix_start[x + 1] - prefix_start[x];
      const double smallest = threshold * static_cast<double>(sx) - 1e-9;  // size filter
      // The first position whose size passes the size filter.
      const auto lo = static_cast<uint32_t>(
          std::partition_point(size_at.begin(), size_at.begin() + static_cast<std::ptrdiff_t>(q),
                               [&](uint32_t sy) { return static_cast<double>(sy) < smallest; }) -
          size_at.begin());
      candidates.clear();
      const size_t first =
          std::lower_bound(rx, rx + px,
                           static_cast<uint32_t>(std::min<size_t>(unique_ranks, UINT32_MAX))) -
          rx;
      for (size_t i = first; i < std::min(px, first + kAhead); ++i) {
        __builtin_prefetch(&list_begin[rx[i]]);
      }
      for (size_t i = first; i < px; ++i) {
        if (i + kAhead < px) __builtin_prefetch(&list_begin[rx[i + kAhead]]);
        if (i + kAhead / 2 < px) __builtin_prefetch(lists.data() + list_begin[rx[i + kAhead / 2]]);
        const uint32_t r = rx[i];
        size_t e = list_begin[r];
        const size_t list_end = list_begin[r + 1];
        if (list_end - e > kLongList) {
          e = static_cast<size_t>(
              std::partition_point(lists.begin() + static_cast<std::ptrdiff_t>(e),
                                   lists.begin() + static_cast<std::ptrdiff_t>(list_end),
                                   [lo](const Entry& entry) { return entry.q < lo; }) -
              lists.begin());
        }
        for (; e < list_end && lists[e].q < q; ++e) {
          const uint32_t qy = lists[e].q;
          if (qy < lo) continue;
          const size_t sy = size_at[qy];
          if (w.mark[qy] != q) {
            w.mark[qy] = static_cast<uint32_t>(q);
            w.count[qy] = 0;
            candidates.push_back(qy);
          } else if (w.count[qy] == kPruned) {
            continue;
          }
          const size_t o = need(ratio * static_cast<double>(sx + sy));
          const size_t rest = std::min(sx - i, sy - lists[e].at);
          if (w.count[qy] + rest < o) {
            w.count[qy] = kPruned;
          } else {
            ++w.count[qy];
          }
        }
      }
      for (uint32_t qy : candidates) {
        if (w.count[qy] == kPruned) continue;
        // The overlap of the sets, stopping once o is out of reach.
        const size_t y = order[qy];
        const std::span<const uint64_t> vx = sets[x];
        const std::span<const uint64_t> vy = sets[y];
        const size_t sy = vy.size();
        const size_t o = need(ratio * static_cast<double>(sx + sy));
        size_t a = 0, b = 0, common = 0;
        while (a < sx && b < sy && common + std::min(sx - a, sy - b) >= o) {
          if (vx[a] == vy[b]) {
            ++common;
            ++a;
            ++b;
          } else if (vx[a] < vy[b]) {
            ++a;
          } else {
            ++b;
          }
        }
        if (common < o) continue;
        const double j = static_cast<double>(common) / static_cast<double>(sx + sy - common);
        if (j >= threshold) out.push_back({live[std::min(x, y)], live[std::max(x, y)], j});
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
