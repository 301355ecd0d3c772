// Copyright 2026 The neardup Authors.
//
// LinearScanIndex: fingerprints in one contiguous array, ids beside them.

#include <algorithm>
#include <unordered_set>

#include "index/index_file.h"
#include "index/word.h"
#include "neardup/index.h"
#include "util/thread_pool.h"

namespace neardup {
namespace {

using index_internal::FromWord;
using index_internal::Popcount;
using index_internal::ToWord;

bool ByDistanceThenId(const Neighbor& x, const Neighbor& y) {
  return x.distance != y.distance ? x.distance < y.distance : x.id < y.id;
}

template <typename W>
class LinearScanIndexImpl final : public LinearScanIndex {
 public:
  static constexpr int kBits = index_internal::kWordBits<W>;

  IndexType type() const override { return IndexType::kLinearScan; }
  int bits() const override { return kBits; }
  int max_k() const override { return kBits; }
  size_t size() const override { return fps_.size(); }
  size_t MemoryBytes() const override { return fps_.capacity() * sizeof(W) + ids_.capacity() * 8; }

  Status Add(uint64_t id, const Fingerprint& fp) override {
    return AddBatch(std::span<const uint64_t>(&id, 1), std::span<const Fingerprint>(&fp, 1));
  }

  Status AddBatch(std::span<const uint64_t> ids, std::span<const Fingerprint> fps) override {
    if (ids.size() != fps.size()) return Status::InvalidArgument("AddBatch: ids/fps size differ");
    for (const Fingerprint& fp : fps) {
      if (fp.bits() != kBits) return Status::InvalidArgument("fingerprint width mismatch");
    }
    if (fps_.size() + fps.size() > kMaxEntries) {
      return Status::ResourceExhausted("index holds at most 2^32 - 2 entries");
    }
    fps_.reserve(fps_.size() + fps.size());
    ids_.insert(ids_.end(), ids.begin(), ids.end());
    for (const Fingerprint& fp : fps) fps_.push_back(ToWord<W>(fp));
    return Status::OK();
  }

  size_t Remove(uint64_t id) override { return RemoveBatch(std::span<const uint64_t>(&id, 1)); }

  size_t RemoveBatch(std::span<const uint64_t> ids) override {
    const std::unordered_set<uint64_t> gone(ids.begin(), ids.end());
    size_t out = 0;
    for (size_t i = 0; i < fps_.size(); ++i) {
      if (gone.count(ids_[i]) != 0) continue;
      fps_[out] = fps_[i];
      ids_[out] = ids_[i];
      ++out;
    }
    const size_t removed = fps_.size() - out;
    fps_.resize(out);
    ids_.resize(out);
    return removed;
  }

  Status Search(const Fingerprint& query, int k, std::vector<Neighbor>* out) const override {
    NEARDUP_RETURN_IF_ERROR(CheckQuery(query, k));
    out->clear();
    Scan(ToWord<W>(query), k, 0, fps_.size(), out);
    std::sort(out->begin(), out->end(), ByDistanceThenId);
    return Status::OK();
  }

  Status SearchBatch(std::span<const Fingerprint> queries, int k, int threads,
                     SearchResults* out) const override {
    for (const Fingerprint& q : queries) NEARDUP_RETURN_IF_ERROR(CheckQuery(q, k));
    // Queries are split into chunks; each chunk's results are concatenated in
    // order afterwards, so the output does not depend on `threads`.
    constexpr size_t kChunk = 64;
    const size_t chunks = (queries.size() + kChunk - 1) / kChunk;
    std::vector<std::vector<Neighbor>> found(chunks);
    std::vector<std::vector<size_t>> counts(chunks);
    ParallelFor(chunks, threads, [&](size_t c, int) {
      // Tiled: each block of entries (sized for L2) is scanned by every query
      // of the chunk before moving on, so large indexes stream from memory
      // once per chunk instead of once per query.
      constexpr size_t kBlock = 16384;
      const size_t q0 = c * kChunk;
      const size_t qn = std::min(queries.size(), q0 + kChunk) - q0;
      std::vector<W> qw(qn);
      for (size_t q = 0; q < qn; ++q) qw[q] = ToWord<W>(queries[q0 + q]);
      std::vector<std::vector<Neighbor>> per(qn);
      for (size_t b = 0; b < fps_.size(); b += kBlock) {
        const size_t e = std::min(fps_.size(), b + kBlock);
        for (size_t q = 0; q < qn; ++q) Scan(qw[q], k, b, e, &per[q]);
      }
      for (auto& one : per) {
        std::sort(one.begin(), one.end(), ByDistanceThenId);
        found[c].insert(found[c].end(), one.begin(), one.end());
        counts[c].push_back(one.size());
      }
    });
    out->offsets.assign(1, 0);
    out->neighbors.clear();
    for (size_t c = 0; c < chunks; ++c) {
      for (size_t n : counts[c]) out->offsets.push_back(out->offsets.back() + n);
      out->neighbors.insert(out->neighbors.end(), found[c].begin(), found[c].end());
    }
    return Status::OK();
  }

  Status SelfJoin(int k, int threads, std::vector<IdPair>* out) const override {
    if (k < 0 || k > kBits) return Status::InvalidArgument("SelfJoin: k out of range");
    const size_t n = fps_.size();
    // Row i is compared with rows (i, n); rows are dealt out in strides so the
    // triangular work is balanced.
    constexpr size_t kRowsPerTask = 256;
    const size_t tasks = (n + kRowsPerTask - 1) / kRowsPerTask;
    std::vector<std::vector<IdPair>> found(tasks);
    ParallelFor(tasks, threads, [&](size_t t, int) {
      for (size_t i = t * kRowsPerTask; i < std::min(n, (t + 1) * kRowsPerTask); ++i) {
        const W x = fps_[i];
        for (size_t j = i + 1; j < n; ++j) {
          const int d = Popcount(x ^ fps_[j]);
          if (d <= k && ids_[i] != ids_[j]) {
            found[t].push_back({std::min(ids_[i], ids_[j]), std::max(ids_[i], ids_[j]), d});
          }
        }
      }
    });
    out->clear();
    for (auto& f : found) out->insert(out->end(), f.begin(), f.end());
    std::sort(out->begin(), out->end(), [](const IdPair& x, const IdPair& y) {
      if (x.a != y.a) return x.a < y.a;
      return x.b != y.b ? x.b < y.b : x.distance < y.distance;
    });
    return Status::OK();
  }

  std::vector<IndexEntry> Entries() const override {
    std::vector<IndexEntry> entries(fps_.size());
    for (size_t i = 0; i < fps_.size(); ++i) entries[i] = {ids_[i], FromWord(fps_[i])};
    return entries;
  }

  Status Save(const std::string& path) const override {
    index_internal::IndexFileHeader h;
    h.type = IndexType::kLinearScan;
    h.bits = kBits;
    h.max_k = kBits;
    h.blocks = 0;
    return index_internal::WriteIndexFile(path, h, Entries());
  }

 private:
  static constexpr size_t kMaxEntries = 0xfffffffeu;

  Status CheckQuery(const Fingerprint& q, int k) const {
    if (q.bits() != kBits) return Status::InvalidArgument("query width mismatch");
    if (k < 0 || k > kBits) return Status::InvalidArgument("k out of range");
    return Status::OK();
  }

  // Appends every entry of rows [begin, end) within k of q, in storage order.
  void Scan(W q, int k, size_t begin, size_t end, std::vector<Neighbor>* out) const {
    const W* f = fps_.data();
    const size_t n = end;
    size_t i = begin;
    for (; i + 4 <= n; i += 4) {
      const int d0 = Popcount(q ^ f[i]);
      const int d1 = Popcount(q ^ f[i + 1]);
      const int d2 = Popcount(q ^ f[i + 2]);
      const int d3 = Popcount(q ^ f[i + 3]);
      // One well-predicted branch for the common all-miss case.
      if ((d0 <= k) | (d1 <= k) | (d2 <= k) | (d3 <= k)) {
        if (d0 <= k) out->push_back({ids_[i], d0});
        if (d1 <= k) out->push_back({ids_[i + 1], d1});
        if (d2 <= k) out->push_back({ids_[i + 2], d2});
        if (d3 <= k) out->push_back({ids_[i + 3], d3});
      }
    }
    for (; i < n; ++i) {
      const int d = Popcount(q ^ f[i]);
      if (d <= k) out->push_back({ids_[i], d});
    }
  }

  std::vector<W> fps_;
  std::vector<uint64_t> ids_;
};

}  // namespace

Result<std::unique_ptr<LinearScanIndex>> LinearScanIndex::Create(int bits) {
  if (bits == 64) return std::unique_ptr<LinearScanIndex>(new LinearScanIndexImpl<uint64_t>());
  if (bits == 128) {
    return std::unique_ptr<LinearScanIndex>(new LinearScanIndexImpl<index_internal::Uint128>());
  }
  return Status::InvalidArgument("fingerprint width must be 64 or 128, got " +
                                 std::to_string(bits));
}

Result<std::unique_ptr<LinearScanIndex>> LinearScanIndex::Build(int bits,
                                                                std::span<const uint64_t> ids,
                                                                std::span<const Fingerprint> fps) {
  NEARDUP_ASSIGN_OR_RETURN(auto index, Create(bits));
  NEARDUP_RETURN_IF_ERROR(index->AddBatch(ids, fps));
  return index;
}

}  // namespace neardup
