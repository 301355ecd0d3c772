// Copyright 2026 The neardup Authors.

#include "dedup/cluster.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "util/union_find.h"

namespace neardup::dedup_internal {
namespace {

// True when document a should be kept in preference to b (a != b).
bool Better(const DocumentView& docs, size_t a, size_t b, KeepPolicy policy) {
  switch (policy) {
    case KeepPolicy::kFirst:
      break;
    case KeepPolicy::kLongest: {
      const uint64_t la = docs.length(a), lb = docs.length(b);
      if (la != lb) return la > lb;
      break;
    }
    case KeepPolicy::kField: {
      const std::optional<double> sa = docs.score(a), sb = docs.score(b);
      const bool ha = sa.has_value() && !std::isnan(*sa);
      const bool hb = sb.has_value() && !std::isnan(*sb);
      if (ha != hb) return ha;
      if (ha && *sa != *sb) return *sa > *sb;
      break;
    }
  }
  return a < b;
}

// Adjacency of groups, compressed rows: group g's neighbours are
// to[begin[g] .. begin[g + 1]) (and, when asked for, their distances at the
// same places), in no particular order. Node holds a group number, Offset an
// entry number (uint32_t when they fit: at 10M short records the adjacency
// of 14.6M pairs is 4 bytes a direction instead of 16).
template <typename Node, typename Offset>
struct GroupAdjacency {
  std::vector<Offset> begin;
  std::vector<Node> to;
  std::vector<int> distance;  // empty unless built with distances

  std::span<const Node> Row(size_t g) const {
    return std::span<const Node>(to).subspan(begin[g], begin[g + 1] - begin[g]);
  }
};

// Built by a counting sort in place: begin[g] counts g's entries, then
// holds the end of g's row, and each entry placed moves it down to the
// row's start (no second array of fill positions).
template <typename Node, typename Offset>
GroupAdjacency<Node, Offset> Adjacency(size_t ng, std::span<const IdPair> group_pairs,
                                       bool with_distance) {
  GroupAdjacency<Node, Offset> a;
  a.begin.assign(ng + 1, 0);
  for (const IdPair& p : group_pairs) {
    ++a.begin[p.a];
    ++a.begin[p.b];
  }
  for (size_t g = 1; g < ng; ++g) a.begin[g] += a.begin[g - 1];
  if (ng > 0) a.begin[ng] = a.begin[ng - 1];
  a.to.resize(a.begin[ng]);
  if (with_distance) a.distance.resize(a.begin[ng]);
  for (const IdPair& p : group_pairs) {
    const Offset ea = --a.begin[p.a];
    const Offset eb = --a.begin[p.b];
    a.to[ea] = static_cast<Node>(p.b);
    a.to[eb] = static_cast<Node>(p.a);
    if (with_distance) a.distance[ea] = a.distance[eb] = p.distance;
  }
  return a;
}

// Calls f.template operator()<Node, Offset>() with the narrowest types that
// hold ng groups and both directions of the pairs.
template <typename F>
void WithAdjacencyTypes(size_t ng, size_t pairs, F&& f) {
  constexpr size_t kMax32 = std::numeric_limits<uint32_t>::max();
  const bool narrow_nodes = ng < kMax32;
  const bool narrow_offsets = pairs < kMax32 / 2;
  if (narrow_nodes && narrow_offsets) return f.template operator()<uint32_t, uint32_t>();
  if (narrow_nodes) return f.template operator()<uint32_t, uint64_t>();
  return f.template operator()<uint64_t, uint64_t>();
}

}  // namespace

void EmitDocumentPairs(const Groups& groups, std::span<const IdPair> group_pairs,
                       const std::function<void(const DedupPair&)>& sink) {
  WithAdjacencyTypes(groups.size(), group_pairs.size(), [&]<typename Node, typename Offset>() {
    const GroupAdjacency<Node, Offset> ga =
        Adjacency<Node, Offset>(groups.size(), group_pairs, /*with_distance=*/true);
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
      for (Offset e = ga.begin[g]; e < ga.begin[g + 1]; ++e) add_later(ga.to[e], ga.distance[e]);
      // Each j is in one group, and a group is i's neighbour once: the js
      // are distinct, so the order does not depend on the rows' order.
      std::sort(mine.begin(), mine.end(),
                [](const DedupPair& a, const DedupPair& b) { return a.j < b.j; });
      for (const DedupPair& p : mine) sink(p);
    }
  });
}

namespace {

// ClusterRule::kCenter: root[i] = document i's centre (kept document), i
// for empty documents. Documents are visited in keep order; one not yet
// assigned becomes a centre and takes every unassigned document within k
// (its own group and the groups paired with it). A group is scanned whole
// once, so the work is O(documents + group pairs). The neighbours' order in
// a row does not matter: every unassigned member of a neighbour takes c.
template <typename Index, typename Node, typename Offset>
void AssignCenters(const DocumentView& docs, const Groups& groups,
                   const GroupAdjacency<Node, Offset>& ga, KeepPolicy keep,
                   std::vector<Index>* root) {
  const size_t n = docs.size();
  constexpr Index kNone = std::numeric_limits<Index>::max();
  std::vector<Index> order;
  order.reserve(n - std::count(groups.of.begin(), groups.of.end(), SIZE_MAX));
  for (size_t i = 0; i < n; ++i) {
    if (groups.of[i] != SIZE_MAX) order.push_back(static_cast<Index>(i));
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](Index a, Index b) { return Better(docs, a, b, keep); });
  std::vector<Index>& center = *root;
  center.assign(n, kNone);
  std::vector<char> done(groups.size(), 0);  // every member assigned
  const auto take = [&](size_t g, Index c) {
    if (done[g]) return;
    done[g] = 1;
    for (size_t x : groups.Members(g)) {
      if (center[x] == kNone) center[x] = c;
    }
  };
  for (const Index c : order) {
    if (center[c] != kNone) continue;
    center[c] = c;
    const size_t g = groups.of[c];
    take(g, c);
    for (const Node h : ga.Row(g)) take(h, c);
  }
  for (size_t i = 0; i < n; ++i) {
    if (center[i] == kNone) center[i] = static_cast<Index>(i);
  }
}

}  // namespace

Groups GroupByKey(DocumentView docs, const IdentityKey& key) {
  Groups g;
  const size_t n = docs.size();
  struct Keyed {
    std::pair<uint64_t, uint64_t> key;
    size_t position;
  };
  std::vector<Keyed> keyed;
  for (size_t i = 0; i < n; ++i) {
    if (!docs.empty(i)) keyed.push_back({key(i), i});
  }
  std::sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
    return a.key != b.key ? a.key < b.key : a.position < b.position;
  });
  // The arrays sized once; `of` after the keys are freed (their peak is
  // the sort's: 24 bytes a document).
  size_t groups = 0;
  for (size_t r = 0; r < keyed.size(); ++r) groups += r == 0 || keyed[r].key != keyed[r - 1].key;
  g.begin.reserve(groups + 1);
  g.members.reserve(keyed.size());
  for (size_t r = 0; r < keyed.size(); ++r) {
    if (r == 0 || keyed[r].key != keyed[r - 1].key) g.begin.push_back(r);
    g.members.push_back(keyed[r].position);
  }
  g.begin.push_back(g.members.size());
  std::vector<Keyed>().swap(keyed);
  IndexGroupMembers(n, &g);
  return g;
}

void IndexGroupMembers(size_t n, Groups* g) {
  g->of.assign(n, SIZE_MAX);
  for (size_t group = 0; group < g->size(); ++group) {
    for (size_t r = g->begin[group]; r < g->begin[group + 1]; ++r) g->of[g->members[r]] = group;
  }
}

Groups GroupIdentical(DocumentView docs) { return GroupByKey(docs, DocumentIdentity(docs, {}, 0)); }

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
    s.largest_cluster = std::max(s.largest_cluster, m);
  }
}

namespace {

// AssembleClusters with document positions as Index (uint32_t when they fit:
// the per-document arrays are its largest state besides the records).
template <typename Index>
void Assemble(const DocumentView& docs, const Groups& groups, std::span<const IdPair> group_pairs,
              const AssembleOptions& opt, DedupResult* r) {
  const size_t n = docs.size();
  constexpr Index kNone = std::numeric_limits<Index>::max();
  // Per document: the root whose cluster it is in; per root: first member
  // (cluster id) and kept member.
  std::vector<Index> root;
  const bool emit_pairs = opt.collect_pairs || opt.pair_sink;
  if (opt.rule == ClusterRule::kCenter) {
    // The adjacency holds what the centres need of the pairs: when no
    // document pairs are asked for, the pairs may be freed before the
    // centres' own arrays are allocated.
    WithAdjacencyTypes(groups.size(), group_pairs.size(), [&]<typename Node, typename Offset>() {
      const GroupAdjacency<Node, Offset> ga =
          Adjacency<Node, Offset>(groups.size(), group_pairs, /*with_distance=*/false);
      if (!emit_pairs && opt.pairs_done) opt.pairs_done();
      AssignCenters(docs, groups, ga, opt.keep, &root);
    });
  } else {
    root.resize(n);
    UnionFind uf(n);
    for (size_t g = 0; g < groups.size(); ++g) {
      const std::span<const size_t> m = groups.Members(g);
      for (size_t x : m.subspan(1)) uf.Union(m.front(), x);
    }
    for (const IdPair& p : group_pairs) {
      uf.Union(groups.Members(p.a).front(), groups.Members(p.b).front());
    }
    if (!emit_pairs && opt.pairs_done) opt.pairs_done();
    for (size_t i = 0; i < n; ++i) root[i] = static_cast<Index>(uf.Find(i));
  }
  std::vector<Index> first(n, kNone), kept(n, kNone);
  for (size_t i = 0; i < n; ++i) {
    const size_t c = root[i];
    if (first[c] == kNone) first[c] = static_cast<Index>(i);
    if (opt.rule == ClusterRule::kCenter) {
      kept[c] = static_cast<Index>(c);
    } else if (kept[c] == kNone || Better(docs, i, kept[c], opt.keep)) {
      kept[c] = static_cast<Index>(i);
    }
  }
  if (opt.progress) opt.progress("cluster", 0, n);
  // The last reads of the sketches (through opt.jaccard): the duplicates'
  // estimates, in document order, and the document pairs; then their owner
  // may free them before the records are built.
  std::vector<double> jaccards;
  if (opt.jaccard) {
    for (size_t i = 0; i < n; ++i) {
      const size_t nearest = kept[root[i]];
      if (nearest != i) jaccards.push_back(opt.jaccard(i, nearest));
    }
  }
  if (emit_pairs) {
    EmitDocumentPairs(groups, group_pairs, [&](DedupPair p) {
      if (opt.jaccard) p.jaccard = opt.jaccard(p.i, p.j);
      if (opt.collect_pairs) r->pairs.push_back(p);
      if (opt.pair_sink) opt.pair_sink(p);
    });
    if (opt.pairs_done) opt.pairs_done();
  }
  if (opt.jaccard_done) opt.jaccard_done();
  r->records.resize(n);
  size_t next_jaccard = 0;
  for (size_t i = 0; i < n; ++i) {
    if (opt.progress && i > 0 && i % (size_t{1} << 18) == 0) opt.progress("cluster", i, n);
    DedupRecord& rec = r->records[i];
    rec.empty = docs.empty(i);
    rec.cluster = first[root[i]];
    rec.nearest = kept[root[i]];
    rec.duplicate = rec.nearest != i;
    rec.distance = rec.duplicate ? opt.distance(i, rec.nearest) : 0;
    if (rec.duplicate && opt.jaccard) rec.jaccard = jaccards[next_jaccard++];
    // Components: a kept document within the threshold of a duplicate is
    // joined to it by an edge, so it is in the same cluster: the cluster's
    // kept document is the only one that can be within it. Centres: the
    // duplicate is within k of its centre, which is the nearest_within_k
    // (another centre may be as close; ties are not searched).
    if (rec.duplicate && rec.distance <= opt.max_distance) {
      rec.nearest_within_k = rec.nearest;
      rec.distance_within_k = rec.distance;
    }
  }
  if (opt.progress) opt.progress("cluster", n, n);
}

}  // namespace

void AssembleClusters(DocumentView docs, const Groups& groups, std::span<const IdPair> group_pairs,
                      const AssembleOptions& opt, DedupResult* r) {
  if (docs.size() < std::numeric_limits<uint32_t>::max()) {
    Assemble<uint32_t>(docs, groups, group_pairs, opt, r);
  } else {
    Assemble<size_t>(docs, groups, group_pairs, opt, r);
  }
  Summarize(r);
}

}  // namespace neardup::dedup_internal
