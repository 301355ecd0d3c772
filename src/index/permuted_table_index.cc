// Copyright 2026 The neardup Authors.
//
// PermutedTableIndex (Manku, Jain, Das Sarma 2007), for 64- and 128-bit
// fingerprints held as machine words (index/word.h).
//
// Layout. The f bits are cut into b contiguous blocks, block 0 holding the most
// significant bits. Table t is a choice of (b - max_k) "key" blocks, in
// lexicographic order; its permutation moves the key blocks, in order, to the
// top of the word and the other blocks below them. Table 0's key blocks are
// the top blocks, so its permutation is the identity.
//
// Exactness. Table t "finds" x for query q iff the top key_bits bits of the
// permuted words agree, i.e. (q ^ x) & key_mask[t] == 0 in original bit
// positions. Every x within max_k of q differs in at most max_k blocks, so it
// agrees on all key blocks of some table and is found there. It is reported by
// the first table that finds it (a candidate whose XOR agrees on an earlier
// table's mask is skipped), so each entry is reported once without a hash set.
//
// Storage per segment. Table 0 is the primary store: fingerprints sorted, ids
// beside them. Tables 1..T-1 hold permuted fingerprints only, sorted. Every
// table has a radix directory over the top dir_bits of its words (dir_bits <=
// every key width, so a directory slot never splits a key). A hit in table
// t > 0 is un-permuted and looked up in the primary store to get its ids; a run
// of equal words is handled once.

#include <algorithm>
#include <bit>
#include <cmath>
#include <mutex>
#include <numeric>
#include <unordered_set>

#include "index/index_file.h"
#include "index/word.h"
#include "neardup/index.h"
#include "util/thread_pool.h"

namespace neardup {
namespace {

using index_internal::FromWord;
using index_internal::LowMask;
using index_internal::Popcount;
using index_internal::ToWord;

constexpr size_t kMaxEntries = 0xfffffffeu;
// Inserts are buffered unsorted up to this many before becoming a segment.
constexpr size_t kDeltaCap = 2048;
constexpr int kMaxDirBits = 24;

// Bits [src, src + len) of the input go to [dst, dst + len) of the output.
struct BitMove {
  int src = 0;
  int len = 0;
  int dst = 0;
};

template <typename W>
W ApplyMoves(W x, const std::vector<BitMove>& moves) {
  W out = 0;
  for (const BitMove& m : moves) out |= ((x >> m.src) & LowMask<W>(m.len)) << m.dst;
  return out;
}

template <typename W>
struct TableSpec {
  std::vector<BitMove> fwd;  // original -> permuted
  std::vector<BitMove> inv;  // permuted -> original
  int key_bits = 0;          // width of the lookup key: top key_bits of the permuted word
  W key_mask = 0;            // the same bits in original positions
};

uint64_t Binomial(int n, int k) {
  // Exact while <= 2^40; saturates above (only compared with kMaxTables).
  uint64_t c = 1;
  for (int i = 1; i <= k; ++i) {
    c = c * static_cast<uint64_t>(n - k + i) / static_cast<uint64_t>(i);
    if (c > (uint64_t{1} << 40)) return c;
  }
  return c;
}

template <typename W>
std::vector<TableSpec<W>> MakeTables(int b, int k) {
  constexpr int kF = index_internal::kWordBits<W>;
  std::vector<int> start(b), len(b);
  int pos = kF;
  for (int i = 0; i < b; ++i) {
    len[i] = kF / b + (i < kF % b ? 1 : 0);
    start[i] = pos - len[i];
    pos = start[i];
  }
  const int m = b - k;
  std::vector<int> combo(m);
  std::iota(combo.begin(), combo.end(), 0);
  std::vector<TableSpec<W>> tables;
  while (true) {
    std::vector<bool> in_key(b, false);
    for (int c : combo) in_key[c] = true;
    std::vector<int> order(combo);
    for (int i = 0; i < b; ++i) {
      if (!in_key[i]) order.push_back(i);
    }
    TableSpec<W> spec;
    int dst = kF;
    int key_width = 0;
    for (int c : combo) key_width += len[c];
    for (int blk : order) {
      dst -= len[blk];
      const BitMove mv{start[blk], len[blk], dst};
      if (!spec.fwd.empty() && spec.fwd.back().src == mv.src + mv.len &&
          spec.fwd.back().dst == mv.dst + mv.len) {
        spec.fwd.back().src = mv.src;
        spec.fwd.back().dst = mv.dst;
        spec.fwd.back().len += mv.len;
      } else {
        spec.fwd.push_back(mv);
      }
    }
    for (const BitMove& mv : spec.fwd) spec.inv.push_back({mv.dst, mv.len, mv.src});
    spec.key_bits = std::min(key_width, 64);
    spec.key_mask = ApplyMoves(LowMask<W>(spec.key_bits) << (kF - spec.key_bits), spec.inv);
    tables.push_back(std::move(spec));
    // Next combination in lexicographic order.
    int i = m - 1;
    while (i >= 0 && combo[i] == b - m + i) --i;
    if (i < 0) break;
    ++combo[i];
    for (int j = i + 1; j < m; ++j) combo[j] = combo[j - 1] + 1;
  }
  return tables;
}

Status ValidateOptions(const PermutedTableOptions& o) {
  if (o.bits != 64 && o.bits != 128) {
    return Status::InvalidArgument("fingerprint width must be 64 or 128, got " +
                                   std::to_string(o.bits));
  }
  if (o.max_k < 0 || o.max_k > o.bits / 4) {
    return Status::InvalidArgument("max_k must be in [0, " + std::to_string(o.bits / 4) +
                                   "], got " + std::to_string(o.max_k));
  }
  if (o.blocks != 0) {
    if (o.blocks <= o.max_k || o.blocks > o.bits) {
      return Status::InvalidArgument("blocks must be in [max_k + 1, bits], got " +
                                     std::to_string(o.blocks));
    }
    if (Binomial(o.blocks, o.max_k) > static_cast<uint64_t>(PermutedTableIndex::kMaxTables)) {
      return Status::InvalidArgument("C(blocks, max_k) exceeds " +
                                     std::to_string(PermutedTableIndex::kMaxTables) + " tables");
    }
  }
  return Status::OK();
}

bool ByDistanceThenId(const Neighbor& x, const Neighbor& y) {
  return x.distance != y.distance ? x.distance < y.distance : x.id < y.id;
}
// Pairs on their way to a SelfJoinStream sink, handed over in pieces of
// kSelfJoinPiece (and the rest when it goes out of scope).
class PairPieces {
 public:
  explicit PairPieces(const PermutedTableIndex::PairPieceSink& sink) : sink_(sink) {}
  PairPieces(const PairPieces&) = delete;
  PairPieces& operator=(const PairPieces&) = delete;
  ~PairPieces() { Flush(); }

  void push_back(const IdPair& p) {
    pairs_.push_back(p);
    if (pairs_.size() >= PermutedTableIndex::kSelfJoinPiece) Flush();
  }
  void Flush() {
    if (pairs_.empty()) return;
    sink_(pairs_);
    pairs_.clear();
  }

 private:
  const PermutedTableIndex::PairPieceSink& sink_;
  std::vector<IdPair> pairs_;
};

bool ByIds(const IdPair& x, const IdPair& y) {
  if (x.a != y.a) return x.a < y.a;
  return x.b != y.b ? x.b < y.b : x.distance < y.distance;
}

template <typename W>
struct Segment {
  std::vector<W> fps;  // table 0 = primary store, sorted
  std::vector<uint64_t> ids;
  std::vector<std::vector<W>> tables;  // table t >= 1 at [t - 1], sorted permuted words
  int dir_bits = 0;
  std::vector<std::vector<uint32_t>> dirs;  // per table: 2^dir_bits + 1 offsets
  std::vector<uint64_t> dead;               // tombstone bitset; empty while none
  size_t num_dead = 0;

  size_t live() const { return fps.size() - num_dead; }
  const std::vector<W>& table(size_t t) const { return t == 0 ? fps : tables[t - 1]; }
  bool is_dead(size_t row) const {
    return !dead.empty() && ((dead[row >> 6] >> (row & 63)) & 1) != 0;
  }
  size_t MemoryBytes() const {
    size_t bytes = fps.capacity() * sizeof(W) + ids.capacity() * 8 + dead.capacity() * 8;
    for (const auto& t : tables) bytes += t.capacity() * sizeof(W);
    for (const auto& d : dirs) bytes += d.capacity() * 4;
    return bytes;
  }
};

template <typename W>
class PermutedTableIndexImpl final : public PermutedTableIndex {
 public:
  static constexpr int kF = index_internal::kWordBits<W>;

  PermutedTableIndexImpl(const PermutedTableOptions& options, const TableLayout& layout)
      : options_(options), layout_(layout), specs_(MakeTables<W>(layout.blocks, layout.max_k)) {
    min_key_bits_ = kF;
    for (const auto& s : specs_) min_key_bits_ = std::min(min_key_bits_, s.key_bits);
  }

  IndexType type() const override { return IndexType::kPermutedTable; }
  int bits() const override { return kF; }
  int max_k() const override { return layout_.max_k; }
  size_t size() const override {
    size_t n = delta_fps_.size();
    for (const auto& s : segments_) n += s->live();
    return n;
  }
  size_t MemoryBytes() const override {
    size_t bytes = (delta_fps_.capacity() * sizeof(W)) + (delta_ids_.capacity() * 8);
    for (const auto& s : segments_) bytes += s->MemoryBytes();
    return bytes;
  }
  const TableLayout& layout() const override { return layout_; }
  size_t num_segments() const override { return segments_.size() + (delta_fps_.empty() ? 0 : 1); }

  Status Add(uint64_t id, const Fingerprint& fp) override {
    return AddBatch(std::span<const uint64_t>(&id, 1), std::span<const Fingerprint>(&fp, 1));
  }

  Status AddBatch(std::span<const uint64_t> ids, std::span<const Fingerprint> fps) override {
    if (ids.size() != fps.size()) return Status::InvalidArgument("AddBatch: ids/fps size differ");
    for (const Fingerprint& fp : fps) {
      if (fp.bits() != kF) return Status::InvalidArgument("fingerprint width mismatch");
    }
    if (size() + fps.size() > kMaxEntries) {
      return Status::ResourceExhausted("index holds at most 2^32 - 2 entries");
    }
    if (fps.size() >= kDeltaCap) {
      std::vector<W> words(fps.size());
      for (size_t i = 0; i < fps.size(); ++i) words[i] = ToWord<W>(fps[i]);
      segments_.push_back(BuildSegment(std::move(words), {ids.begin(), ids.end()}));
      Rebalance();
      return Status::OK();
    }
    for (size_t i = 0; i < fps.size(); ++i) {
      delta_fps_.push_back(ToWord<W>(fps[i]));
      delta_ids_.push_back(ids[i]);
    }
    if (delta_fps_.size() >= kDeltaCap) {
      segments_.push_back(BuildSegment(std::move(delta_fps_), std::move(delta_ids_)));
      delta_fps_.clear();
      delta_ids_.clear();
      Rebalance();
    }
    return Status::OK();
  }

  size_t Remove(uint64_t id) override { return RemoveBatch(std::span<const uint64_t>(&id, 1)); }

  size_t RemoveBatch(std::span<const uint64_t> ids) override {
    if (ids.empty()) return 0;
    const std::unordered_set<uint64_t> gone(ids.begin(), ids.end());
    size_t removed = 0;
    for (auto& s : segments_) {
      for (size_t r = 0; r < s->ids.size(); ++r) {
        if (s->is_dead(r) || gone.count(s->ids[r]) == 0) continue;
        if (s->dead.empty()) s->dead.assign((s->ids.size() + 63) / 64, 0);
        s->dead[r >> 6] |= uint64_t{1} << (r & 63);
        ++s->num_dead;
        ++removed;
      }
    }
    size_t out = 0;
    for (size_t i = 0; i < delta_fps_.size(); ++i) {
      if (gone.count(delta_ids_[i]) != 0) continue;
      delta_fps_[out] = delta_fps_[i];
      delta_ids_[out] = delta_ids_[i];
      ++out;
    }
    removed += delta_fps_.size() - out;
    delta_fps_.resize(out);
    delta_ids_.resize(out);
    // Rebuild segments that are mostly dead; drop empty ones.
    for (size_t i = 0; i < segments_.size();) {
      Segment<W>& s = *segments_[i];
      if (s.live() == 0) {
        segments_.erase(segments_.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      if (s.num_dead * 2 > s.fps.size()) {
        std::vector<W> w;
        std::vector<uint64_t> d;
        AppendLive(s, &w, &d);
        segments_[i] = BuildSegment(std::move(w), std::move(d));
      }
      ++i;
    }
    return removed;
  }

  void Compact() override {
    if (segments_.size() == 1 && delta_fps_.empty() && segments_[0]->num_dead == 0) return;
    std::vector<W> w;
    std::vector<uint64_t> d;
    for (const auto& s : segments_) AppendLive(*s, &w, &d);
    w.insert(w.end(), delta_fps_.begin(), delta_fps_.end());
    d.insert(d.end(), delta_ids_.begin(), delta_ids_.end());
    segments_.clear();
    delta_fps_.clear();
    delta_ids_.clear();
    if (!w.empty()) segments_.push_back(BuildSegment(std::move(w), std::move(d)));
  }

  Status Search(const Fingerprint& query, int k, std::vector<Neighbor>* out) const override {
    NEARDUP_RETURN_IF_ERROR(CheckQuery(query, k));
    out->clear();
    const W q = ToWord<W>(query);
    auto emit = [out](uint64_t id, int d) { out->push_back({id, d}); };
    for (const auto& s : segments_) QuerySegment(*s, q, k, emit);
    ScanDelta(q, k, 0, emit);
    std::sort(out->begin(), out->end(), ByDistanceThenId);
    return Status::OK();
  }

  Status SearchBatch(std::span<const Fingerprint> queries, int k, int threads,
                     SearchResults* out) const override {
    for (const Fingerprint& q : queries) NEARDUP_RETURN_IF_ERROR(CheckQuery(q, k));
    constexpr size_t kChunk = 1024;
    const size_t chunks = (queries.size() + kChunk - 1) / kChunk;
    std::vector<std::vector<Neighbor>> found(chunks);
    std::vector<std::vector<size_t>> counts(chunks);
    ParallelFor(chunks, threads, [&](size_t c, int) {
      const size_t begin = c * kChunk;
      const size_t end = std::min(queries.size(), begin + kChunk);
      SearchChunk(queries.subspan(begin, end - begin), k, &found[c], &counts[c]);
    });
    out->offsets.assign(1, 0);
    out->neighbors.clear();
    size_t total = 0;
    for (const auto& f : found) total += f.size();
    out->neighbors.reserve(total);
    out->offsets.reserve(queries.size() + 1);
    for (size_t c = 0; c < chunks; ++c) {
      for (size_t n : counts[c]) out->offsets.push_back(out->offsets.back() + n);
      out->neighbors.insert(out->neighbors.end(), found[c].begin(), found[c].end());
    }
    return Status::OK();
  }

  Status SelfJoin(int k, int threads, std::vector<IdPair>* out) const override {
    out->clear();
    std::mutex mu;
    NEARDUP_RETURN_IF_ERROR(SelfJoinStream(k, threads, [&](std::span<const IdPair> piece) {
      std::lock_guard<std::mutex> lock(mu);
      out->insert(out->end(), piece.begin(), piece.end());
    }));
    std::sort(out->begin(), out->end(), ByIds);
    return Status::OK();
  }

  Status SelfJoinStream(int k, int threads, const PairPieceSink& sink) const override {
    if (k < 0 || k > layout_.max_k) {
      return Status::InvalidArgument("k must be in [0, " + std::to_string(layout_.max_k) +
                                     "], got " + std::to_string(k));
    }
    const int workers = ResolveThreadCount(threads);
    // 1. Pairs inside each segment: (table, directory-slot range) tasks.
    for (const auto& seg : segments_) {
      const Segment<W>& s = *seg;
      const size_t slots = size_t{1} << s.dir_bits;
      const size_t pieces = std::min(slots, static_cast<size_t>(workers) * 16);
      const size_t tasks = specs_.size() * pieces;
      ParallelFor(tasks, workers, [&](size_t task, int) {
        const size_t t = task / pieces;
        const size_t p = task % pieces;
        PairPieces out(sink);
        JoinTableSlots(s, t, slots * p / pieces, slots * (p + 1) / pieces, k, &out);
      });
    }
    // 2. Pairs across segments, and with the insert buffer: query the older
    //    structure with every live entry of the newer one.
    for (size_t j = 1; j < segments_.size(); ++j) {
      const Segment<W>& sj = *segments_[j];
      constexpr size_t kRows = 4096;
      const size_t tasks = (sj.fps.size() + kRows - 1) / kRows;
      ParallelFor(tasks, workers, [&](size_t task, int) {
        PairPieces f(sink);
        for (size_t r = task * kRows; r < std::min(sj.fps.size(), (task + 1) * kRows); ++r) {
          if (sj.is_dead(r)) continue;
          const uint64_t id = sj.ids[r];
          auto emit = [&f, id](uint64_t other, int d) {
            if (other != id) f.push_back({std::min(id, other), std::max(id, other), d});
          };
          for (size_t i = 0; i < j; ++i) QuerySegment(*segments_[i], sj.fps[r], k, emit);
        }
      });
    }
    PairPieces f(sink);
    for (size_t p = 0; p < delta_fps_.size(); ++p) {
      const uint64_t id = delta_ids_[p];
      auto emit = [&f, id](uint64_t other, int d) {
        if (other != id) f.push_back({std::min(id, other), std::max(id, other), d});
      };
      for (const auto& s : segments_) QuerySegment(*s, delta_fps_[p], k, emit);
      ScanDelta(delta_fps_[p], k, p + 1, emit);
    }
    return Status::OK();
  }

  std::vector<IndexEntry> Entries() const override {
    std::vector<IndexEntry> entries;
    entries.reserve(size());
    for (const auto& s : segments_) {
      for (size_t r = 0; r < s->fps.size(); ++r) {
        if (!s->is_dead(r)) entries.push_back({s->ids[r], FromWord(s->fps[r])});
      }
    }
    for (size_t i = 0; i < delta_fps_.size(); ++i) {
      entries.push_back({delta_ids_[i], FromWord(delta_fps_[i])});
    }
    return entries;
  }

  Status Save(const std::string& path) const override {
    index_internal::IndexFileHeader h;
    h.type = IndexType::kPermutedTable;
    h.bits = kF;
    h.max_k = layout_.max_k;
    h.blocks = layout_.blocks;
    return index_internal::WriteIndexFile(path, h, Entries());
  }

 private:
  Status CheckQuery(const Fingerprint& q, int k) const {
    if (q.bits() != kF) return Status::InvalidArgument("query width mismatch");
    if (k < 0 || k > layout_.max_k) {
      return Status::InvalidArgument("k must be in [0, " + std::to_string(layout_.max_k) +
                                     "], got " + std::to_string(k));
    }
    return Status::OK();
  }

  static size_t Slot(W x, int dir_bits) {
    return dir_bits == 0 ? 0 : static_cast<size_t>(x >> (kF - dir_bits));
  }

  // True when an earlier table than t also finds a pair whose XOR (in
  // original bit positions) is odiff.
  bool FoundEarlier(W odiff, size_t t) const {
    for (size_t e = 0; e < t; ++e) {
      if ((odiff & specs_[e].key_mask) == 0) return true;
    }
    return false;
  }

  template <typename Emit>
  void EmitRows(const Segment<W>& s, W x, int d, Emit& emit) const {
    const size_t slot = Slot(x, s.dir_bits);
    const uint32_t* dir = s.dirs[0].data();
    auto it = std::lower_bound(s.fps.begin() + dir[slot], s.fps.begin() + dir[slot + 1], x);
    for (size_t r = static_cast<size_t>(it - s.fps.begin()); r < s.fps.size() && s.fps[r] == x;
         ++r) {
      if (!s.is_dead(r)) emit(s.ids[r], d);
    }
  }

  // Candidates of table t in [begin, end) for query q (qp = q permuted).
  template <typename Emit>
  void ScanRange(const Segment<W>& s, size_t t, W q, W qp, int k, size_t begin, size_t end,
                 Emit& emit) const {
    const W* tab = s.table(t).data();
    const int key_shift = kF - specs_[t].key_bits;
    for (size_t i = begin; i < end; ++i) {
      const W diff = tab[i] ^ qp;
      const int d = Popcount(diff);
      if (d > k) continue;
      if ((diff >> key_shift) != 0) continue;  // outside this table's key
      if (t == 0) {
        if (!s.is_dead(i)) emit(s.ids[i], d);
        continue;
      }
      if (i > begin && tab[i - 1] == tab[i]) continue;  // run handled at its start
      const W x = ApplyMoves(tab[i], specs_[t].inv);
      if (FoundEarlier(x ^ q, t)) continue;
      EmitRows(s, x, d, emit);
    }
  }

  template <typename Emit>
  void QuerySegment(const Segment<W>& s, W q, int k, Emit& emit) const {
    for (size_t t = 0; t < specs_.size(); ++t) {
      const W qp = t == 0 ? q : ApplyMoves(q, specs_[t].fwd);
      const size_t slot = Slot(qp, s.dir_bits);
      const uint32_t* dir = s.dirs[t].data();
      ScanRange(s, t, q, qp, k, dir[slot], dir[slot + 1], emit);
    }
  }

  template <typename Emit>
  void ScanDelta(W q, int k, size_t from, Emit& emit) const {
    for (size_t i = from; i < delta_fps_.size(); ++i) {
      const int d = Popcount(q ^ delta_fps_[i]);
      if (d <= k) emit(delta_ids_[i], d);
    }
  }

  // Batch kernel: groups of queries go through the tables in three passes
  // (permute + prefetch the directory slot, read the slot + prefetch the
  // bucket, scan) so that the cache misses of a group overlap.
  void SearchChunk(std::span<const Fingerprint> queries, int k, std::vector<Neighbor>* found,
                   std::vector<size_t>* counts) const {
    constexpr size_t kGroup = 16;
    const size_t nt = specs_.size();
    std::vector<W> qp(kGroup * nt);
    std::vector<uint32_t> lo(kGroup * nt), hi(kGroup * nt);
    std::vector<std::vector<Neighbor>> per(kGroup);
    for (size_t g0 = 0; g0 < queries.size(); g0 += kGroup) {
      const size_t gn = std::min(kGroup, queries.size() - g0);
      for (size_t g = 0; g < gn; ++g) per[g].clear();
      for (const auto& seg : segments_) {
        const Segment<W>& s = *seg;
        for (size_t g = 0; g < gn; ++g) {
          const W q = ToWord<W>(queries[g0 + g]);
          for (size_t t = 0; t < nt; ++t) {
            const W p = t == 0 ? q : ApplyMoves(q, specs_[t].fwd);
            qp[g * nt + t] = p;
            __builtin_prefetch(s.dirs[t].data() + Slot(p, s.dir_bits));
          }
        }
        for (size_t g = 0; g < gn; ++g) {
          for (size_t t = 0; t < nt; ++t) {
            const size_t slot = Slot(qp[g * nt + t], s.dir_bits);
            lo[g * nt + t] = s.dirs[t][slot];
            hi[g * nt + t] = s.dirs[t][slot + 1];
            __builtin_prefetch(s.table(t).data() + lo[g * nt + t]);
          }
        }
        for (size_t g = 0; g < gn; ++g) {
          auto emit = [&per, g](uint64_t id, int d) { per[g].push_back({id, d}); };
          const W q = qp[g * nt];
          for (size_t t = 0; t < nt; ++t) {
            ScanRange(s, t, q, qp[g * nt + t], k, lo[g * nt + t], hi[g * nt + t], emit);
          }
        }
      }
      for (size_t g = 0; g < gn; ++g) {
        auto emit = [&per, g](uint64_t id, int d) { per[g].push_back({id, d}); };
        ScanDelta(ToWord<W>(queries[g0 + g]), k, 0, emit);
        std::sort(per[g].begin(), per[g].end(), ByDistanceThenId);
        found->insert(found->end(), per[g].begin(), per[g].end());
        counts->push_back(per[g].size());
      }
    }
  }

  // Emits the pairs between the rows holding word a and the rows holding
  // word b of segment s (both original words, a != b), at distance d.
  void EmitCross(const Segment<W>& s, W a, W b, int d, PairPieces* out) const {
    std::vector<uint64_t> ra;
    auto collect = [&ra](uint64_t id, int) { ra.push_back(id); };
    EmitRows(s, a, d, collect);
    if (ra.empty()) return;
    auto pair_up = [&ra, out](uint64_t id, int dist) {
      for (uint64_t x : ra) {
        if (x != id) out->push_back({std::min(x, id), std::max(x, id), dist});
      }
    };
    EmitRows(s, b, d, pair_up);
  }

  // Self-join of table t over directory slots [slot_begin, slot_end).
  void JoinTableSlots(const Segment<W>& s, size_t t, size_t slot_begin, size_t slot_end, int k,
                      PairPieces* out) const {
    const std::vector<W>& tab = s.table(t);
    const uint32_t* dir = s.dirs[t].data();
    const size_t end = dir[slot_end];
    const int key_shift = kF - specs_[t].key_bits;
    std::vector<size_t> runs;  // run starts within the current bucket
    size_t i = dir[slot_begin];
    while (i < end) {
      const W key = tab[i] >> key_shift;
      runs.clear();
      size_t j = i;
      for (; j < end && (tab[j] >> key_shift) == key; ++j) {
        if (j == i || tab[j] != tab[j - 1]) runs.push_back(j);
      }
      runs.push_back(j);  // sentinel: end of the bucket
      for (size_t a = 0; a + 1 < runs.size(); ++a) {
        const size_t ra = runs[a];
        if (t == 0) {
          // Equal words: every pair of live rows, distance 0, found by table 0 only.
          for (size_t x = ra; x < runs[a + 1]; ++x) {
            if (s.is_dead(x)) continue;
            for (size_t y = x + 1; y < runs[a + 1]; ++y) {
              if (s.is_dead(y) || s.ids[x] == s.ids[y]) continue;
              out->push_back({std::min(s.ids[x], s.ids[y]), std::max(s.ids[x], s.ids[y]), 0});
            }
          }
        }
        const W wa = tab[ra];
        for (size_t b = a + 1; b + 1 < runs.size(); ++b) {
          const W diff = wa ^ tab[runs[b]];
          const int d = Popcount(diff);
          if (d > k) continue;
          if (t == 0) {
            for (size_t x = ra; x < runs[a + 1]; ++x) {
              if (s.is_dead(x)) continue;
              for (size_t y = runs[b]; y < runs[b + 1]; ++y) {
                if (s.is_dead(y) || s.ids[x] == s.ids[y]) continue;
                out->push_back({std::min(s.ids[x], s.ids[y]), std::max(s.ids[x], s.ids[y]), d});
              }
            }
            continue;
          }
          if (FoundEarlier(ApplyMoves(diff, specs_[t].inv), t)) continue;
          EmitCross(s, ApplyMoves(wa, specs_[t].inv), ApplyMoves(tab[runs[b]], specs_[t].inv), d,
                    out);
        }
      }
      i = j;
    }
  }

  static void AppendLive(const Segment<W>& s, std::vector<W>* w, std::vector<uint64_t>* d) {
    for (size_t r = 0; r < s.fps.size(); ++r) {
      if (s.is_dead(r)) continue;
      w->push_back(s.fps[r]);
      d->push_back(s.ids[r]);
    }
  }

  std::unique_ptr<Segment<W>> BuildSegment(std::vector<W> words, std::vector<uint64_t> ids) const {
    auto s = std::make_unique<Segment<W>>();
    const size_t n = words.size();
    {
      // Primary store: sort (word, id) so the order is deterministic.
      std::vector<std::pair<W, uint64_t>> rows(n);
      for (size_t i = 0; i < n; ++i) rows[i] = {words[i], ids[i]};
      std::vector<W>().swap(words);
      std::vector<uint64_t>().swap(ids);
      std::sort(rows.begin(), rows.end());
      s->fps.resize(n);
      s->ids.resize(n);
      for (size_t i = 0; i < n; ++i) {
        s->fps[i] = rows[i].first;
        s->ids[i] = rows[i].second;
      }
    }
    s->dir_bits = DirBits(n);
    const size_t nt = specs_.size();
    s->tables.resize(nt - 1);
    s->dirs.resize(nt);
    ParallelFor(nt, options_.build_threads, [&](size_t t, int) {
      if (t > 0) {
        std::vector<W>& tab = s->tables[t - 1];
        tab.resize(n);
        for (size_t i = 0; i < n; ++i) tab[i] = ApplyMoves(s->fps[i], specs_[t].fwd);
        std::sort(tab.begin(), tab.end());
      }
      BuildDirectory(s.get(), t);
    });
    return s;
  }

  int DirBits(size_t n) const {
    const int bw = static_cast<int>(std::bit_width(n));
    return std::clamp(bw - 3, 0, std::min(min_key_bits_, kMaxDirBits));
  }

  static void BuildDirectory(Segment<W>* s, size_t t) {
    const std::vector<W>& tab = s->table(t);
    std::vector<uint32_t>& dir = s->dirs[t];
    dir.assign((size_t{1} << s->dir_bits) + 1, 0);
    for (const W& x : tab) ++dir[Slot(x, s->dir_bits) + 1];
    for (size_t i = 1; i < dir.size(); ++i) dir[i] += dir[i - 1];
  }

  // Merges two segments into one. Without tombstones every table is a linear
  // merge of two sorted arrays; otherwise the live entries are rebuilt.
  std::unique_ptr<Segment<W>> MergeSegments(const Segment<W>& a, const Segment<W>& b) const {
    if (a.num_dead != 0 || b.num_dead != 0) {
      std::vector<W> w;
      std::vector<uint64_t> d;
      AppendLive(a, &w, &d);
      AppendLive(b, &w, &d);
      return BuildSegment(std::move(w), std::move(d));
    }
    auto s = std::make_unique<Segment<W>>();
    const size_t n = a.fps.size() + b.fps.size();
    s->fps.resize(n);
    s->ids.resize(n);
    size_t i = 0, j = 0;
    for (size_t o = 0; o < n; ++o) {
      const bool take_a = j == b.fps.size() ||
                          (i < a.fps.size() &&
                           (a.fps[i] < b.fps[j] || (a.fps[i] == b.fps[j] && a.ids[i] <= b.ids[j])));
      if (take_a) {
        s->fps[o] = a.fps[i];
        s->ids[o] = a.ids[i++];
      } else {
        s->fps[o] = b.fps[j];
        s->ids[o] = b.ids[j++];
      }
    }
    s->dir_bits = DirBits(n);
    const size_t nt = specs_.size();
    s->tables.resize(nt - 1);
    s->dirs.resize(nt);
    ParallelFor(nt, options_.build_threads, [&](size_t t, int) {
      if (t > 0) {
        std::vector<W>& tab = s->tables[t - 1];
        tab.resize(n);
        std::merge(a.tables[t - 1].begin(), a.tables[t - 1].end(), b.tables[t - 1].begin(),
                   b.tables[t - 1].end(), tab.begin());
      }
      BuildDirectory(s.get(), t);
    });
    return s;
  }

  // Logarithmic method: merge the newest segment into the previous one while
  // it holds at least half as many live entries.
  void Rebalance() {
    while (segments_.size() >= 2 &&
           segments_.back()->live() * 2 >= segments_[segments_.size() - 2]->live()) {
      auto merged = MergeSegments(*segments_[segments_.size() - 2], *segments_.back());
      segments_.pop_back();
      segments_.back() = std::move(merged);
    }
  }

  PermutedTableOptions options_;
  TableLayout layout_;
  std::vector<TableSpec<W>> specs_;
  int min_key_bits_ = 64;
  std::vector<std::unique_ptr<Segment<W>>> segments_;  // oldest (largest) first
  std::vector<W> delta_fps_;                           // insert buffer, unsorted
  std::vector<uint64_t> delta_ids_;
};

}  // namespace

TableLayout PermutedTableIndex::ChooseLayout(int bits, int k, size_t n,
                                             size_t max_bytes_per_fingerprint) {
  const double cand_cost = bits == 64 ? 0.05 : 0.08;
  const size_t word = static_cast<size_t>(bits) / 8;
  TableLayout best;
  double best_cost = 0;
  bool have = false;
  for (int b = k + 1; b <= std::min(bits, k + 16); ++b) {
    const uint64_t tables = Binomial(b, k);
    if (tables > static_cast<uint64_t>(kMaxTables)) break;
    const size_t bytes = word + 8 + (static_cast<size_t>(tables) - 1) * word;
    if (b > k + 1 && bytes > max_bytes_per_fingerprint) continue;
    const int key_bits = std::min((b - k) * (bits / b), 64);
    const double cost = static_cast<double>(tables) *
                        (1.0 + static_cast<double>(n) * std::ldexp(1.0, -key_bits) * cand_cost);
    if (!have || cost < best_cost) {
      have = true;
      best_cost = cost;
      best = {bits, k, b, static_cast<int>(tables), key_bits, bytes};
    }
  }
  return best;
}

Result<std::unique_ptr<PermutedTableIndex>> PermutedTableIndex::Create(
    const PermutedTableOptions& options) {
  NEARDUP_RETURN_IF_ERROR(ValidateOptions(options));
  const size_t n = options.expected_size == 0 ? size_t{1} << 20 : options.expected_size;
  TableLayout layout =
      ChooseLayout(options.bits, options.max_k, n, options.max_bytes_per_fingerprint);
  if (options.blocks != 0) {
    const int b = options.blocks;
    const size_t word = static_cast<size_t>(options.bits) / 8;
    layout.blocks = b;
    layout.tables = static_cast<int>(Binomial(b, options.max_k));
    layout.min_key_bits = std::min((b - options.max_k) * (options.bits / b), 64);
    layout.bytes_per_fingerprint = word + 8 + (static_cast<size_t>(layout.tables) - 1) * word;
  }
  if (options.bits == 64) {
    return std::unique_ptr<PermutedTableIndex>(
        new PermutedTableIndexImpl<uint64_t>(options, layout));
  }
  return std::unique_ptr<PermutedTableIndex>(
      new PermutedTableIndexImpl<index_internal::Uint128>(options, layout));
}

Result<std::unique_ptr<PermutedTableIndex>> PermutedTableIndex::Build(
    PermutedTableOptions options, std::span<const uint64_t> ids, std::span<const Fingerprint> fps) {
  if (options.expected_size == 0) options.expected_size = std::max<size_t>(fps.size(), 1);
  NEARDUP_ASSIGN_OR_RETURN(auto index, Create(options));
  NEARDUP_RETURN_IF_ERROR(index->AddBatch(ids, fps));
  return index;
}

}  // namespace neardup
