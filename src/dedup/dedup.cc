// Copyright 2026 The neardup Authors.

#include "neardup/dedup.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>

#include "neardup/index.h"
#include "util/union_find.h"

namespace neardup {
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

Status Validate(std::span<const DedupDocument> docs, const DedupOptions& opt, int* bits) {
  *bits = 0;
  for (const DedupDocument& d : docs) {
    if (d.empty) continue;
    if (*bits == 0) *bits = d.fingerprint.bits();
    if (d.fingerprint.bits() != *bits) {
      return Status::InvalidArgument("documents mix 64- and 128-bit fingerprints");
    }
  }
  // Without a non-empty document nothing is compared, so any k >= 0 will do
  // (an empty corpus is not a usage error whatever the method's k).
  const int max_k = *bits == 0 ? 128 / 4 : *bits / 4;
  if (opt.k < 0 || opt.k > max_k) {
    return Status::InvalidArgument("k must be in [0, " + std::to_string(max_k) + "], got " +
                                   std::to_string(opt.k));
  }
  if (opt.mode == DedupMode::kStream && opt.keep != KeepPolicy::kFirst) {
    return Status::InvalidArgument(
        "stream mode keeps the first document; use cluster mode for "
        "the longest / field policies");
  }
  return Status::OK();
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

// Identical fingerprints, collapsed: the non-empty positions sorted by
// (fingerprint, position), cut into groups of equal fingerprints. Group g's
// members are members[begin[g] .. begin[g + 1]), in increasing position.
struct Groups {
  std::vector<size_t> members;
  std::vector<size_t> begin;
  std::vector<size_t> of;  // per position: its group, or SIZE_MAX when empty

  size_t size() const { return begin.empty() ? 0 : begin.size() - 1; }
  std::span<const size_t> Members(size_t g) const {
    return std::span<const size_t>(members).subspan(begin[g], begin[g + 1] - begin[g]);
  }
};

Groups GroupIdentical(std::span<const DedupDocument> docs) {
  Groups g;
  const size_t n = docs.size();
  g.of.assign(n, SIZE_MAX);
  for (size_t i = 0; i < n; ++i) {
    if (!docs[i].empty) g.members.push_back(i);
  }
  std::sort(g.members.begin(), g.members.end(), [&docs](size_t a, size_t b) {
    const Fingerprint& fa = docs[a].fingerprint;
    const Fingerprint& fb = docs[b].fingerprint;
    if (fa.hi() != fb.hi()) return fa.hi() < fb.hi();
    if (fa.lo() != fb.lo()) return fa.lo() < fb.lo();
    return a < b;
  });
  for (size_t r = 0; r < g.members.size(); ++r) {
    if (r == 0 || docs[g.members[r]].fingerprint != docs[g.members[r - 1]].fingerprint) {
      g.begin.push_back(r);
    }
    g.of[g.members[r]] = g.begin.size() - 1;
  }
  g.begin.push_back(g.members.size());
  return g;
}

// Every document pair within k, in (i, j) order, from the groups and the
// pairs of groups within k: i's pairs are the later members of its own group
// (distance 0) and the later members of every group within k of its own.
// Memory: one document's pairs at a time.
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

// Memory grows with the documents and the pairs of distinct fingerprints
// within k, never with the pairs of documents: identical fingerprints are
// collapsed before the self-join and their documents united directly.
Status ClusterMode(std::span<const DedupDocument> docs, const DedupOptions& opt, int bits,
                   DedupResult* r) {
  const size_t n = docs.size();
  auto report = [&opt](std::string_view phase, size_t done, size_t total) {
    if (opt.progress) opt.progress(phase, done, total);
  };
  const Groups groups = GroupIdentical(docs);
  std::vector<IdPair> group_pairs;  // ids are group numbers
  report("index", 0, 1);
  if (groups.size() > 0) {
    std::vector<uint64_t> ids(groups.size());
    std::vector<Fingerprint> fps(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) {
      ids[g] = g;
      fps[g] = docs[groups.Members(g).front()].fingerprint;
    }
    PermutedTableOptions popt;
    popt.bits = bits;
    popt.max_k = opt.k;
    popt.build_threads = opt.threads;
    NEARDUP_ASSIGN_OR_RETURN(auto index, PermutedTableIndex::Build(popt, ids, fps));
    report("index", 1, 1);
    report("join", 0, 1);
    NEARDUP_RETURN_IF_ERROR(index->SelfJoin(opt.k, opt.threads, &group_pairs));
  } else {
    report("index", 1, 1);
    report("join", 0, 1);
  }
  report("join", 1, 1);
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
  report("cluster", 0, n);
  r->records.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t root = uf.Find(i);
    DedupRecord& rec = r->records[i];
    rec.empty = docs[i].empty;
    rec.cluster = first[root];
    rec.nearest = kept[root];
    rec.duplicate = kept[root] != i;
    rec.distance =
        rec.duplicate ? HammingDistance(docs[i].fingerprint, docs[rec.nearest].fingerprint) : 0;
    // A kept document within k of a duplicate is joined to it by an edge, so
    // it is in the same cluster: the cluster's kept document is the only one
    // that can be within k.
    if (rec.duplicate && rec.distance <= opt.k) {
      rec.nearest_within_k = rec.nearest;
      rec.distance_within_k = rec.distance;
    }
  }
  report("cluster", n, n);
  if (opt.collect_pairs || opt.pair_sink) {
    EmitDocumentPairs(groups, group_pairs, [&](const DedupPair& p) {
      if (opt.collect_pairs) r->pairs.push_back(p);
      if (opt.pair_sink) opt.pair_sink(p);
    });
  }
  return Status::OK();
}

Status StreamMode(std::span<const DedupDocument> docs, const DedupOptions& opt, int bits,
                  DedupResult* r) {
  const size_t n = docs.size();
  r->records.resize(n);
  PermutedTableOptions popt;
  popt.bits = bits == 0 ? 64 : bits;
  popt.max_k = opt.k;
  popt.expected_size = n;
  popt.build_threads = opt.threads;
  NEARDUP_ASSIGN_OR_RETURN(auto index, PermutedTableIndex::Create(popt));
  std::vector<Neighbor> hits;
  for (size_t i = 0; i < n; ++i) {
    if (opt.progress && i % 65536 == 0) opt.progress("stream", i, n);
    DedupRecord& rec = r->records[i];
    rec.empty = docs[i].empty;
    rec.cluster = i;
    rec.nearest = i;
    if (docs[i].empty) continue;
    NEARDUP_RETURN_IF_ERROR(index->Search(docs[i].fingerprint, opt.k, &hits));
    if (hits.empty()) {
      NEARDUP_RETURN_IF_ERROR(index->Add(i, docs[i].fingerprint));
      continue;
    }
    // Sorted by (distance, id): the first hit is the closest, earliest kept one.
    rec.duplicate = true;
    rec.nearest = hits[0].id;
    rec.distance = hits[0].distance;
    rec.nearest_within_k = rec.nearest;
    rec.distance_within_k = rec.distance;
    rec.cluster = rec.nearest;  // a kept document is its cluster's first member
    if (opt.collect_pairs || opt.pair_sink) r->pairs.push_back({rec.nearest, i, rec.distance});
  }
  if (opt.progress) opt.progress("stream", n, n);
  std::sort(r->pairs.begin(), r->pairs.end(), [](const DedupPair& a, const DedupPair& b) {
    return a.i != b.i ? a.i < b.i : a.j < b.j;
  });
  if (opt.pair_sink) {
    for (const DedupPair& p : r->pairs) opt.pair_sink(p);
    if (!opt.collect_pairs) std::vector<DedupPair>().swap(r->pairs);
  }
  return Status::OK();
}

}  // namespace

Result<DedupResult> Dedup(std::span<const DedupDocument> documents, const DedupOptions& options) {
  int bits = 0;
  NEARDUP_RETURN_IF_ERROR(Validate(documents, options, &bits));
  DedupResult r;
  if (options.mode == DedupMode::kCluster) {
    NEARDUP_RETURN_IF_ERROR(ClusterMode(documents, options, bits, &r));
  } else {
    NEARDUP_RETURN_IF_ERROR(StreamMode(documents, options, bits, &r));
  }
  Summarize(&r);
  return r;
}

ClusterRows ClusterMembers(const DedupResult& result) {
  const std::vector<DedupRecord>& records = result.records;
  const size_t n = records.size();
  // Counting sort by cluster id: begin[c] .. begin[c + 1] holds cluster c.
  std::vector<size_t> begin(n + 1, 0);
  for (const DedupRecord& r : records) ++begin[r.cluster + 1];
  for (size_t c = 0; c < n; ++c) begin[c + 1] += begin[c];
  std::vector<size_t> sorted(n);
  {
    std::vector<size_t> fill(begin.begin(), begin.end() - 1);
    for (size_t i = 0; i < n; ++i) sorted[fill[records[i].cluster]++] = i;
  }
  ClusterRows rows;
  rows.offsets.push_back(0);
  for (size_t cluster = 0; cluster < n; ++cluster) {
    if (begin[cluster + 1] - begin[cluster] < 2) continue;
    size_t kept = sorted[begin[cluster]];
    for (size_t m = begin[cluster]; m < begin[cluster + 1]; ++m) {
      rows.members.push_back(sorted[m]);
      if (!records[sorted[m]].duplicate) kept = sorted[m];
    }
    rows.ids.push_back(cluster);
    rows.kept.push_back(kept);
    rows.offsets.push_back(rows.members.size());
  }
  return rows;
}

}  // namespace neardup
