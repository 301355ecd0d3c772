// Copyright 2026 The neardup Authors.

#include "dedup/cluster.h"

#include <algorithm>
#include <cmath>

#include "util/union_find.h"

namespace neardup::dedup_internal {
namespace {

// True when document a should be kept in preference to b (a != b).
bool Better(const DedupDocument& da, size_t a, const DedupDocument& db, size_t b,
            KeepPolicy policy) {
  switch (policy) {
    case KeepPolicy::kFirst:
      break;
    case KeepPolicy::kLongest:
      if (da.length != db.length) return da.length > db.length;
      break;
    case KeepPolicy::kField: {
      const bool ha = da.score.has_value() && !std::isnan(*da.score);
      const bool hb = db.score.has_value() && !std::isnan(*db.score);
      if (ha != hb) return ha;
      if (ha && *da.score != *db.score) return *da.score > *db.score;
      break;
    }
  }
  return a < b;
}

// Every document pair, in (i, j) order, from the groups and the pairs of
// groups: i's pairs are the later members of its own group (distance 0) and
// the later members of every group paired with its own. Memory: one
// document's pairs at a time.
void EmitDocumentPairs(const Groups& groups, std::span<const IdPair> group_pairs,
                       const std::function<void(const DedupPair&)>& sink) {
  const size_t ng = groups.size();
  // Adjacency of groups, compressed rows.
  std::vector<size_t> adj_begin(ng + 1, 0);
  for (const IdPair& p : group_pairs) {
    ++adj_begin[p.a + 1];
    ++adj_begin[p.b + 1];
  }
  for (size_t g = 0; g < ng; ++g) adj_begin[g + 1] += adj_begin[g];
  std::vector<std::pair<size_t, int>> adj(adj_begin[ng]);
  std::vector<size_t> fill(adj_begin.begin(), adj_begin.end() - 1);
  for (const IdPair& p : group_pairs) {
    adj[fill[p.a]++] = {p.b, p.distance};
    adj[fill[p.b]++] = {p.a, p.distance};
  }
  std::vector<DedupPair> mine;
  for (size_t i = 0; i < groups.of.size(); ++i) {
    const size_t g = groups.of[i];
    if (g == SIZE_MAX) continue;
    mine.clear();
    auto add_later = [&](size_t group, int distance) {
      const std::span<const size_t> m = groups.Members(group);
      for (auto it = std::upper_bound(m.begin(), m.end(), i); it != m.end(); ++it) {
        mine.push_back({i, *it, distance});
      }
    };
    add_later(g, 0);
    for (size_t e = adj_begin[g]; e < adj_begin[g + 1]; ++e) add_later(adj[e].first, adj[e].second);
    std::sort(mine.begin(), mine.end(),
              [](const DedupPair& a, const DedupPair& b) { return a.j < b.j; });
    for (const DedupPair& p : mine) sink(p);
  }
}

}  // namespace

Groups GroupByKey(std::span<const DedupDocument> docs, const IdentityKey& key) {
  Groups g;
  const size_t n = docs.size();
  g.of.assign(n, SIZE_MAX);
  struct Keyed {
    std::pair<uint64_t, uint64_t> key;
    size_t position;
  };
  std::vector<Keyed> keyed;
  for (size_t i = 0; i < n; ++i) {
    if (!docs[i].empty) keyed.push_back({key(i), i});
  }
  std::sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
    return a.key != b.key ? a.key < b.key : a.position < b.position;
  });
  g.members.reserve(keyed.size());
  for (size_t r = 0; r < keyed.size(); ++r) {
    if (r == 0 || keyed[r].key != keyed[r - 1].key) g.begin.push_back(r);
    g.members.push_back(keyed[r].position);
    g.of[keyed[r].position] = g.begin.size() - 1;
  }
  g.begin.push_back(g.members.size());
  return g;
}

Groups GroupIdentical(std::span<const DedupDocument> docs) {
  return GroupByKey(docs, [&docs](size_t i) {
    return std::pair<uint64_t, uint64_t>(docs[i].fingerprint.hi(), docs[i].fingerprint.lo());
  });
}

void Summarize(DedupResult* r) {
  DedupSummary& s = r->summary;
  s = DedupSummary{};
  s.documents = r->records.size();
  std::vector<size_t> members(r->records.size(), 0);
  for (const DedupRecord& rec : r->records) {
    if (rec.empty) ++s.empty;
    if (rec.duplicate) ++s.duplicates;
    ++members[rec.cluster];
  }
  s.kept = s.documents - s.duplicates;
  for (size_t m : members) {
    if (m > 0) ++s.clusters;
    if (m > 1) ++s.clusters_with_duplicates;
  }
}

void AssembleClusters(std::span<const DedupDocument> docs, const Groups& groups,
                      std::span<const IdPair> group_pairs, const AssembleOptions& opt,
                      DedupResult* r) {
  const size_t n = docs.size();
  UnionFind uf(n);
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::span<const size_t> m = groups.Members(g);
    for (size_t x : m.subspan(1)) uf.Union(m.front(), x);
  }
  for (const IdPair& p : group_pairs) {
    uf.Union(groups.Members(p.a).front(), groups.Members(p.b).front());
  }
  // Per root: first member (cluster id) and kept member.
  std::vector<size_t> first(n, SIZE_MAX), kept(n, SIZE_MAX);
  for (size_t i = 0; i < n; ++i) {
    const size_t root = uf.Find(i);
    if (first[root] == SIZE_MAX) first[root] = i;
    if (kept[root] == SIZE_MAX || Better(docs[i], i, docs[kept[root]], kept[root], opt.keep)) {
      kept[root] = i;
    }
  }
  if (opt.progress) opt.progress("cluster", 0, n);
  r->records.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (opt.progress && i > 0 && i % (size_t{1} << 18) == 0) opt.progress("cluster", i, n);
    const size_t root = uf.Find(i);
    DedupRecord& rec = r->records[i];
    rec.empty = docs[i].empty;
    rec.cluster = first[root];
    rec.nearest = kept[root];
    rec.duplicate = kept[root] != i;
    rec.distance = rec.duplicate ? opt.distance(i, rec.nearest) : 0;
    // A kept document within the threshold of a duplicate is joined to it by
    // an edge, so it is in the same cluster: the cluster's kept document is
    // the only one that can be within it.
    if (rec.duplicate && rec.distance <= opt.max_distance) {
      rec.nearest_within_k = rec.nearest;
      rec.distance_within_k = rec.distance;
    }
  }
  if (opt.progress) opt.progress("cluster", n, n);
  if (opt.collect_pairs || opt.pair_sink) {
    EmitDocumentPairs(groups, group_pairs, [&](const DedupPair& p) {
      if (opt.collect_pairs) r->pairs.push_back(p);
      if (opt.pair_sink) opt.pair_sink(p);
    });
  }
  Summarize(r);
}

}  // namespace neardup::dedup_internal
