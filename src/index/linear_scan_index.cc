// Copyright 2026 The neardup Authors.
//
// LinearScanIndex: fingerprints in one contiguous array, ids beside them.
// Queries run the exact SIMD scan of hamming_scan.h.

#include <algorithm>
#include <unordered_set>

#include "index/hamming_scan.h"
#include "index/index_file.h"
#include "index/word.h"
#include "neardup/index.h"
#include "util/thread_pool.h"

namespace neardup {
namespace {

using index_internal::FromWord;
using index_internal::Popcount;
using index_internal::RowsView;
using index_internal::ScanHit;
using index_internal::ScanRows;
using index_internal::ScanRowsTiled;

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
  size_t size() const override { return ids_.size(); }
  size_t MemoryBytes() const override { return words_.capacity() * 8 + ids_.capacity() * 8; }

  Status Add(uint64_t id, const Fingerprint& fp) override {
    return AddBatch(std::span<const uint64_t>(&id, 1), std::span<const Fingerprint>(&fp, 1));
  }

  Status AddBatch(std::span<const uint64_t> ids, std::span<const Fingerprint> fps) override {
    if (ids.size() != fps.size()) return Status::InvalidArgument("AddBatch: ids/fps size differ");
    for (const Fingerprint& fp : fps) {
      if (fp.bits() != kBits) return Status::InvalidArgument("fingerprint width mismatch");
    }
    if (ids_.size() + fps.size() > kMaxEntries) {
      return Status::ResourceExhausted("index holds at most 2^32 - 2 entries");
    }
    words_.reserve(words_.size() + fps.size() * kWords);
    ids_.insert(ids_.end(), ids.begin(), ids.end());
    for (const Fingerprint& fp : fps) {
      words_.push_back(fp.lo());
      if (kWords == 2) words_.push_back(fp.hi());
    }
    return Status::OK();
  }

  size_t Remove(uint64_t id) override { return RemoveBatch(std::span<const uint64_t>(&id, 1)); }

  size_t RemoveBatch(std::span<const uint64_t> ids) override {
    const std::unordered_set<uint64_t> gone(ids.begin(), ids.end());
    size_t out = 0;
    const size_t n = ids_.size();
    for (size_t i = 0; i < n; ++i) {
      if (gone.count(ids_[i]) != 0) continue;
      for (size_t w = 0; w < kWords; ++w) words_[out * kWords + w] = words_[i * kWords + w];
      ids_[out] = ids_[i];
      ++out;
    }
    const size_t removed = n - out;
    words_.resize(out * kWords);
    ids_.resize(out);
    return removed;
  }

  Status Search(const Fingerprint& query, int k, std::vector<Neighbor>* out) const override {
    NEARDUP_RETURN_IF_ERROR(CheckQuery(query, k));
    out->clear();
    thread_local std::vector<ScanHit> hits;
    hits.clear();
    const uint64_t q_hi = query.hi();
    const uint64_t q_lo = query.lo();
    ScanRows(Rows(), 0, ids_.size(), std::span<const uint64_t>(&q_hi, 1),
             std::span<const uint64_t>(&q_lo, 1), k, &hits);
    for (const ScanHit& h : hits) out->push_back({ids_[h.row], static_cast<int>(h.distance)});
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
      // Tiled (ScanRowsTiled): each block of entries is compared with every
      // query of the chunk before the next is read, so a large index streams
      // from memory once per chunk instead of once per query.
      const size_t q0 = c * kChunk;
      const size_t qn = std::min(queries.size(), q0 + kChunk) - q0;
      std::vector<uint64_t> q_hi(qn), q_lo(qn);
      for (size_t q = 0; q < qn; ++q) {
        q_hi[q] = queries[q0 + q].hi();
        q_lo[q] = queries[q0 + q].lo();
      }
      std::vector<std::vector<ScanHit>> per(qn);
      ScanRowsTiled(Rows(), q_hi, q_lo, k, per.data());
      std::vector<Neighbor> one;
      for (const auto& hits : per) {
        one.clear();
        for (const ScanHit& h : hits) one.push_back({ids_[h.row], static_cast<int>(h.distance)});
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
    const size_t n = ids_.size();
    // Row i is compared with rows (i, n); rows are dealt out in strides so the
    // triangular work is balanced.
    constexpr size_t kRowsPerTask = 256;
    const size_t tasks = (n + kRowsPerTask - 1) / kRowsPerTask;
    std::vector<std::vector<IdPair>> found(tasks);
    ParallelFor(tasks, threads, [&](size_t t, int) {
      for (size_t i = t * kRowsPerTask; i < std::min(n, (t + 1) * kRowsPerTask); ++i) {
        const W x = At(i);
        for (size_t j = i + 1; j < n; ++j) {
          const int d = Popcount(x ^ At(j));
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
    std::vector<IndexEntry> entries(ids_.size());
    for (size_t i = 0; i < ids_.size(); ++i) entries[i] = {ids_[i], FromWord(At(i))};
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

  static constexpr size_t kWords = sizeof(W) / 8;

  // Entry i as a word.
  W At(size_t i) const {
    if constexpr (kWords == 1) {
      return words_[i];
    } else {
      return (static_cast<W>(words_[2 * i + 1]) << 64) | words_[2 * i];
    }
  }

  RowsView Rows() const {
    RowsView r;
    r.bits = kBits;
    r.n = ids_.size();
    r.lo = words_.data();
    r.hi = kWords == 2 ? words_.data() + 1 : nullptr;
    r.stride = kWords;
    return r;
  }

  // kWords words an entry: lo, then hi for 128 bits.
  std::vector<uint64_t> words_;
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
