// Copyright 2026 The neardup Authors.
//
// Cluster assembly, shared by every dedup method: documents grouped by an
// identity key (identical fingerprints, identical signatures), pairs of
// groups confirmed by a join (exact or banded) -> union-find -> the keep
// policy -> one DedupRecord per document, the summary, and the document pairs
// (DedupOptions::collect_pairs / pair_sink).
//
//   dedup_internal::Groups groups = dedup_internal::GroupByKey(docs, key);
//   std::vector<IdPair> group_pairs = ...;       // a < b are group numbers
//   dedup_internal::AssembleOptions a;
//   a.keep = options.keep;
//   a.distance = [&](size_t i, size_t kept) { ... };   // a duplicate's distance
//   a.max_distance = k;
//   dedup_internal::AssembleClusters(docs, groups, group_pairs, a, &result);
//
// Internal to the library (src/, not installed).

#ifndef NEARDUP_DEDUP_CLUSTER_H_
#define NEARDUP_DEDUP_CLUSTER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "dedup/documents.h"
#include "neardup/dedup.h"
#include "neardup/dedup_groups.h"
#include "neardup/index.h"

namespace neardup::dedup_internal {

// Documents with equal identity keys, collapsed (neardup/dedup_groups.h).
using Groups = DedupGroups;

// A 128-bit identity key of a non-empty document (hi, lo).
using IdentityKey = std::function<std::pair<uint64_t, uint64_t>(size_t position)>;

// Groups the non-empty documents (DedupDocument::empty false) by key.
Groups GroupByKey(DocumentView docs, const IdentityKey& key);
// Fills g->of (n positions) from g->members and g->begin: what GroupByKey
// does last, and what a caller that freed `of` while it was not read (the
// join) does to get it back.
void IndexGroupMembers(size_t n, Groups* g);
// What neardup dedup groups identical documents by, for either method
// (estimate only): perm == 0, SimHash: the fingerprint (GroupIdentical's
// key); perm > 0, MinHash: the MinHashIdentity (stages.h) of document i's signature
// (signatures: perm words per document). The documents and the spans must
// outlive the key.
IdentityKey DocumentIdentity(DocumentView docs, std::span<const uint32_t> signatures, size_t perm);
// GroupByKey on the fingerprints (DocumentIdentity's SimHash key).
Groups GroupIdentical(DocumentView docs);

struct AssembleOptions {
  KeepPolicy keep = KeepPolicy::kFirst;
  ClusterRule rule = ClusterRule::kComponents;
  // The distance of a duplicate `i` to its cluster's kept document (it may
  // exceed max_distance: clusters are transitive). REQUIRES: set.
  std::function<int(size_t i, size_t kept)> distance;
  // The estimated Jaccard of documents i and j (DedupRecord::jaccard and
  // DedupPair::jaccard); empty: none (-1).
  std::function<double(size_t i, size_t j)> jaccard;
  // Called once when `jaccard` will not be called again (after the
  // duplicates' estimates and the pairs, before the records are built); may
  // be empty.
  std::function<void()> jaccard_done;
  // Called once when `group_pairs` will not be read again (after the
  // clusters' adjacency or union-find, or after the document pairs when
  // those are asked for), so that their owner may free them; may be empty.
  // The span passed to AssembleClusters is not read after the call.
  std::function<void()> pairs_done;
  // DedupRecord::nearest_within_k is set when distance <= max_distance.
  int max_distance = 0;
  // As DedupOptions: the document pairs (the groups' members expanded).
  bool collect_pairs = false;
  std::function<void(const DedupPair&)> pair_sink;
  // Phase "cluster" (documents).
  std::function<void(std::string_view phase, size_t done, size_t total)> progress;
};

// Fills result->records (one per document of `docs`), result->pairs (when
// collect_pairs) and result->summary. Memory besides the records: 4 bytes
// per document for each of a root, first and kept member (8 bytes each from
// 2^32 - 1 documents), and the union-find's 16 bytes per document before
// those of first and kept; the centre rule's adjacency of the groups takes
// 4 bytes per group and per direction of a pair, below 2^32 - 1 of each
// (8 bytes from there), and its visiting order 4 bytes per document, both
// freed before first and kept. `group_pairs` hold group numbers (a <
// b), each pair once; their distance is the pairs' emitted distance. Members
// of a group are at distance 0 of each other.
void AssembleClusters(DocumentView docs, const Groups& groups, std::span<const IdPair> group_pairs,
                      const AssembleOptions& options, DedupResult* result);

// Every document pair, in (i, j) order, from the groups and the pairs of
// groups (each once): i's pairs are the later members of its own group
// (distance 0) and the later members of every group paired with its own.
// Memory: one document's pairs at a time, and the groups' adjacency (4
// bytes per group, 8 per direction of a pair, below 2^32 - 1 of each).
void EmitDocumentPairs(const Groups& groups, std::span<const IdPair> group_pairs,
                       const std::function<void(const DedupPair&)>& sink);

// Recomputes result->summary from result->records.
void Summarize(DedupResult* result);

}  // namespace neardup::dedup_internal

#endif  // NEARDUP_DEDUP_CLUSTER_H_
