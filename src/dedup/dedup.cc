// Copyright 2026 The neardup Authors.

#include "neardup/dedup.h"

#include <algorithm>
#include <cmath>

#include "dedup/union_find.h"
#include "neardup/index.h"

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
  const int max_k = (*bits == 0 ? 64 : *bits) / 4;
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

Status ClusterMode(std::span<const DedupDocument> docs, const DedupOptions& opt, int bits,
                   DedupResult* r) {
  const size_t n = docs.size();
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
  for (size_t i = 0; i < n; ++i) {
    if (docs[i].empty) continue;
    ids.push_back(i);
    fps.push_back(docs[i].fingerprint);
  }
  auto report = [&opt](std::string_view phase, size_t done, size_t total) {
    if (opt.progress) opt.progress(phase, done, total);
  };
  std::vector<IdPair> pairs;
  report("index", 0, 1);
  if (!ids.empty()) {
    PermutedTableOptions popt;
    popt.bits = bits;
    popt.max_k = opt.k;
    popt.build_threads = opt.threads;
    auto index = PermutedTableIndex::Build(popt, ids, fps);
    if (!index.ok()) return index.status();
    report("index", 1, 1);
    report("join", 0, 1);
    NEARDUP_RETURN_IF_ERROR((*index)->SelfJoin(opt.k, opt.threads, &pairs));
  } else {
    report("index", 1, 1);
    report("join", 0, 1);
  }
  report("join", 1, 1);
  dedup_internal::UnionFind uf(n);
  for (const IdPair& p : pairs) uf.Union(p.a, p.b);

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
  }
  // Closest kept document within k, from the pair list.
  for (const IdPair& p : pairs) {
    for (int side = 0; side < 2; ++side) {
      const size_t dup = side == 0 ? p.a : p.b;
      const size_t other = side == 0 ? p.b : p.a;
      DedupRecord& rec = r->records[dup];
      if (!rec.duplicate || r->records[other].duplicate) continue;
      if (!rec.nearest_within_k || p.distance < rec.distance_within_k ||
          (p.distance == rec.distance_within_k && other < *rec.nearest_within_k)) {
        rec.nearest_within_k = other;
        rec.distance_within_k = p.distance;
      }
    }
  }
  report("cluster", n, n);
  if (opt.collect_pairs) {
    r->pairs.reserve(pairs.size());
    for (const IdPair& p : pairs) r->pairs.push_back({p.a, p.b, p.distance});
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
  auto index = PermutedTableIndex::Create(popt);
  if (!index.ok()) return index.status();
  std::vector<Neighbor> hits;
  for (size_t i = 0; i < n; ++i) {
    if (opt.progress && i % 65536 == 0) opt.progress("stream", i, n);
    DedupRecord& rec = r->records[i];
    rec.empty = docs[i].empty;
    rec.cluster = i;
    rec.nearest = i;
    if (docs[i].empty) continue;
    NEARDUP_RETURN_IF_ERROR((*index)->Search(docs[i].fingerprint, opt.k, &hits));
    if (hits.empty()) {
      NEARDUP_RETURN_IF_ERROR((*index)->Add(i, docs[i].fingerprint));
      continue;
    }
    // Sorted by (distance, id): the first hit is the closest, earliest kept one.
    rec.duplicate = true;
    rec.nearest = hits[0].id;
    rec.distance = hits[0].distance;
    rec.nearest_within_k = rec.nearest;
    rec.distance_within_k = rec.distance;
    rec.cluster = rec.nearest;  // a kept document is its cluster's first member
    if (opt.collect_pairs) r->pairs.push_back({rec.nearest, i, rec.distance});
  }
  if (opt.progress) opt.progress("stream", n, n);
  std::sort(r->pairs.begin(), r->pairs.end(), [](const DedupPair& a, const DedupPair& b) {
    return a.i != b.i ? a.i < b.i : a.j < b.j;
  });
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

}  // namespace neardup
