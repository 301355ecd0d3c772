// Copyright 2026 The neardup Authors.
//
// DictTrie: jieba's prefix dictionary FREQ as a trie over code points. A node
// exists exactly when its string is a key of FREQ (a word or a prefix of a
// word); freq(node) is FREQ[string] (0 for a prefix that is not a word).
//
// Two layouts. While the dictionaries load, edges live in an open-addressing
// hash table keyed by (parent, code point) (the root's children below U+10000
// in a direct table), which takes inserts. Freeze() then renumbers the nodes
// in breadth-first order with each node's children consecutive and sorted by
// code point, and keeps one 8-byte record per node: the code point of its
// edge, its log frequency (an index into the distinct ones) and its first
// child (its children end where the next node's begin). A DAG walk's step
// scans the children of a narrow node (one cache line) or, for a wide one,
// asks a small filter and then binary-searches a sample of the records down
// to one line. jieba's 498k nodes take 4 MB instead of the loading layout's
// 32 MiB plus 1 MiB filter (on the shared 2-core VM the segmenter was no
// faster for it: doc/benchmarks.md). Two more filters, of the two- and
// three-character prefixes and keyed by code points (MayHavePair,
// MayHaveTriple), let a walk skip most absent steps without touching the
// records. Frozen, the trie is only read
// (thread-safe reads); node ids (the segmenter's word ids) are the
// breadth-first ones.

#ifndef NEARDUP_SEGMENT_DICT_TRIE_H_
#define NEARDUP_SEGMENT_DICT_TRIE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace neardup::segment {

class DictTrie {
 public:
  static constexpr int32_t kNone = -1;
  static constexpr uint16_t kNoTag = 0xFFFF;

  // An edge as a DAG walk sees it: the child node, log(freq) of the child
  // when it is a word of positive frequency, else -1 (log(freq) >= 0 for
  // freq >= 1), and whether the child has children of its own.
  struct Edge {
    int32_t child;
    uint32_t has_children;
    double log_freq_or_minus_one;
  };

  DictTrie();
  DictTrie(const DictTrie&) = delete;  // nodes_ points into node_store_
  DictTrie& operator=(const DictTrie&) = delete;

  // What a DAG walk needs of a child: its id, log(freq) when it is a word of
  // positive frequency (else -1), whether it has children.
  struct Step {
    int32_t child;
    bool has_children;
    double log_freq_or_minus_one;
  };
  // The child of `node` by code point `cp` into *step; false when there is none.
  bool Next(int32_t node, uint32_t cp, Step* step) const {
    if (frozen_) return FrozenStep(FrozenChild(node, cp), step);
    return EdgeStep(ChildEdge(node, cp), step);
  }
  // Next(0, cp, step): a walk's first step.
  bool First(uint32_t cp, Step* step) const {
    if (frozen_ && cp < kRootDirect) return FrozenStep(root_child_[cp], step);
    return Next(0, cp, step);
  }
  // A walk's next step in two halves: Prepare narrows down where the child of
  // `node` by `cp` can be and starts loading it; Next(probe, ...) finishes,
  // some other work later.
  struct Probe {
    int32_t node;
    uint32_t lo, hi;  // frozen: the records to scan
  };
  Probe Prepare(int32_t node, uint32_t cp) const {
    if (!frozen_) {
      PrefetchChild(node, cp);
      return Probe{node, 0, 0};
    }
    uint32_t lo = nodes_[node].first_child();
    uint32_t hi = nodes_[node + 1].first_child();
    if (hi - lo > kMaxScan) {
      if (!MayHaveWideChild(node, cp)) return Probe{node, 0, 0};
      WideRange(lo, hi, cp, &lo, &hi);
    }
    __builtin_prefetch(&nodes_[lo]);
    return Probe{node, lo, hi};
  }
  bool Next(const Probe& probe, uint32_t cp, Step* step) const {
    if (!frozen_) return EdgeStep(ChildEdge(probe.node, cp), step);
    return FrozenStep(Scan(probe.lo, probe.hi, cp), step);
  }

  // A one-sided filter of the dictionary's three-character prefixes, keyed by
  // the code points alone (two bits of one word each, 256 KiB), so that a
  // walk can ask for its third step before it knows its second node: most
  // third steps are for words that do not exist (81 % on THUCNews), and each
  // would otherwise load the second node's children, a miss into the 4 MB of
  // records. TripleHash, then PrefetchTriple some work ahead, then
  // MayHaveTriple. Always true before Freeze().
  static uint64_t TripleHash(const uint32_t* cps) {
    const uint64_t key =
        cps[0] | static_cast<uint64_t>(cps[1]) << 21 | static_cast<uint64_t>(cps[2]) << 42;
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    return h * 0xD6E8FEB86659FD93ull;
  }
  void PrefetchTriple(uint64_t h) const {
    if (frozen_) triple_filter_.Prefetch(h);
  }
  bool MayHaveTriple(uint64_t h) const { return !frozen_ || triple_filter_.MayHave(h); }

  // The same for the two-character prefixes (a third code point no string
  // has marks them), in a filter of their own: a walk asks it for its second
  // step before it has found its first node (about half of the second steps
  // on THUCNews are for strings that are not in the dictionary).
  static uint64_t PairHash(const uint32_t* cps) {
    const uint32_t key[3] = {cps[0], cps[1], 0x1FFFFF};
    return TripleHash(key);
  }
  void PrefetchPair(uint64_t h) const {
    if (frozen_) pair_filter_.Prefetch(h);
  }
  bool MayHavePair(uint64_t h) const { return !frozen_ || pair_filter_.MayHave(h); }

  // The child of `node` by code point `cp`, or kNone.
  int32_t Child(int32_t node, uint32_t cp) const {
    if (frozen_) return FrozenChild(node, cp);
    const Edge* e = ChildEdge(node, cp);
    return e == nullptr ? kNone : e->child;
  }

  // Builds the read-only layout (see above) and frees the hash table. Node
  // ids change; no Insert or set_* afterwards.
  void Freeze();
  bool frozen() const { return frozen_; }

  // The node of the code point string [cps, cps + n), or kNone.
  int32_t Find(const uint32_t* cps, size_t n) const {
    int32_t node = 0;
    for (size_t i = 0; i < n && node != kNone; ++i) node = Child(node, cps[i]);
    return n == 0 ? kNone : node;
  }
  // Same for a UTF-8 string (kNone when it is not valid UTF-8).
  int32_t FindUtf8(std::string_view word) const;

  // Creates the nodes of [cps, cps + n) and its prefixes (freq 0 for new
  // ones) and returns the last. REQUIRES: n > 0, !frozen()
  int32_t Insert(const uint32_t* cps, size_t n);

  int64_t freq(int32_t node) const { return freq_[node]; }
  // log(freq), or 0 (= log 1) when freq is 0.
  double log_freq(int32_t node) const { return log_freq_[node]; }
  // REQUIRES (all set_*): !frozen()
  void set_freq(int32_t node, int64_t f);
  bool force_split(int32_t node) const { return force_split_[node] != 0; }
  void set_force_split(int32_t node) { force_split_[node] = 1; }

  // The node's POS tag, or an empty view when it has none.
  std::string_view tag(int32_t node) const {
    const uint16_t t = tag_[node];
    return t == kNoTag ? std::string_view() : std::string_view(tags_[t]);
  }
  void set_tag(int32_t node, std::string_view tag);

  size_t node_count() const { return freq_.size(); }

 private:
  static constexpr uint32_t kRootDirect = 0x10000;
  static constexpr uint64_t kEmptyKey = ~uint64_t{0};

  // The loading layout's edge from `node` by code point `cp`, or nullptr.
  const Edge* ChildEdge(int32_t node, uint32_t cp) const {
    if (node == 0 && cp < kRootDirect) {
      const Edge* e = &root_direct_[cp];
      return e->child == kNone ? nullptr : e;
    }
    const uint64_t key = EdgeKey(node, cp);
    if (!MayHaveEdge(key)) return nullptr;
    size_t slot = Hash(key);
    while (true) {
      const Slot& s = slots_[slot];
      if (s.key == key) return &s.edge;
      if (s.key == kEmptyKey) return nullptr;
      slot = (slot + 1) & mask_;
    }
  }
  // Starts loading what ChildEdge(node, cp) will read.
  void PrefetchChild(int32_t node, uint32_t cp) const {
    if (node == 0 && cp < kRootDirect) return;
    const uint64_t key = EdgeKey(node, cp);
    if (MayHaveEdge(key)) __builtin_prefetch(&slots_[Hash(key)]);
  }

  // The frozen layout's record of a node, 64 bits: the code point of the
  // edge into it (21 bits), its first child (26 bits; its children end where
  // the next node's begin) and the index of its log frequency in lf_ (17 bits;
  // 0, whose entry is -1, when it is not a word). A trie beyond these limits
  // stays in the loading layout.
  static constexpr int kCpBits = 21, kChildBits = 26, kLfBits = 17;
  struct Node {
    uint64_t bits;
    uint32_t cp() const { return static_cast<uint32_t>(bits & ((uint64_t{1} << kCpBits) - 1)); }
    uint32_t first_child() const {
      return static_cast<uint32_t>((bits >> kCpBits) & ((uint64_t{1} << kChildBits) - 1));
    }
    uint32_t lf_index() const { return static_cast<uint32_t>(bits >> (kCpBits + kChildBits)); }
  };
  // Children are found by a scan of their records when a node has at most
  // kMaxScan of them; a wider node's are found by a binary search over
  // sample_ (the code point of every eighth record of nodes_, small enough to
  // stay in L2) down to one cache line of eight records (nodes_ is aligned).
  static constexpr uint32_t kMaxScan = 8;
  static constexpr uint32_t kLine = 8;  // records per cache line
  // Where the child of a wide node [first, end) by `cp` must lie: [*lo, *hi).
  void WideRange(uint32_t first, uint32_t end, uint32_t cp, uint32_t* lo, uint32_t* hi) const {
    uint32_t j = (first + kLine - 1) / kLine;  // the first sampled record at or after first
    if (sample_[j] > cp) {
      *lo = first;
      *hi = j * kLine;
      return;
    }
    // The last sample <= cp among [j, last]: a branchless binary search.
    uint32_t count = (end - 1) / kLine - j + 1;
    while (count > 1) {
      const uint32_t half = count / 2;
      j = sample_[j + half] <= cp ? j + half : j;
      count -= half;
    }
    *lo = j * kLine;
    *hi = std::min(end, *lo + kLine);
  }
  // A one-sided filter of the wide nodes' children (a bit per hash of
  // (node, code point), 256 KiB): most probes of a walk's second step are for
  // words that do not exist, and the filter answers those without a search.
  static constexpr int kWideFilterBits = 21;
  static size_t WideFilterBit(int32_t node, uint32_t cp) {
    const uint64_t key = (static_cast<uint64_t>(node) << 21) | cp;
    return static_cast<size_t>((key * 0xD6E8FEB86659FD93ull) >> (64 - kWideFilterBits));
  }
  bool MayHaveWideChild(int32_t node, uint32_t cp) const {
    const size_t bit = WideFilterBit(node, cp);
    return (wide_filter_[bit >> 6] >> (bit & 63)) & 1;
  }
  // The prefix filters' bits: 2^21 (256 KiB), two bits of one word a key.
  class PrefixFilter {
   public:
    void Clear() { words_.assign((size_t{1} << kBits) / 64, 0); }
    void Add(uint64_t h) { words_[Word(h)] |= Mask(h); }
    void Prefetch(uint64_t h) const { __builtin_prefetch(&words_[Word(h)]); }
    bool MayHave(uint64_t h) const {
      const uint64_t mask = Mask(h);
      return (words_[Word(h)] & mask) == mask;
    }

   private:
    static constexpr int kBits = 21;
    static size_t Word(uint64_t h) { return static_cast<size_t>(h >> (64 - (kBits - 6))); }
    static uint64_t Mask(uint64_t h) {
      return (uint64_t{1} << ((h >> 20) & 63)) | (uint64_t{1} << ((h >> 26) & 63));
    }
    std::vector<uint64_t> words_;
  };
  int32_t Scan(uint32_t c, uint32_t end, uint32_t cp) const {
    for (; c < end; ++c) {
      const uint32_t x = nodes_[c].cp();
      if (x >= cp) return x == cp ? static_cast<int32_t>(c) : kNone;
    }
    return kNone;
  }
  int32_t FrozenChild(int32_t node, uint32_t cp) const {
    if (node == 0 && cp < kRootDirect) return root_child_[cp];
    uint32_t lo = nodes_[node].first_child();
    uint32_t hi = nodes_[node + 1].first_child();
    if (hi - lo > kMaxScan) {
      if (!MayHaveWideChild(node, cp)) return kNone;
      WideRange(lo, hi, cp, &lo, &hi);
    }
    return Scan(lo, hi, cp);
  }
  bool FrozenStep(int32_t c, Step* step) const {
    if (c == kNone) return false;
    const Node n = nodes_[c];
    *step = Step{c, nodes_[c + 1].first_child() != n.first_child(), lf_[n.lf_index()]};
    return true;
  }
  static bool EdgeStep(const Edge* e, Step* step) {
    if (e == nullptr) return false;
    *step = Step{e->child, e->has_children != 0, e->log_freq_or_minus_one};
    return true;
  }

  struct alignas(32) Slot {
    uint64_t key;
    Edge edge;
  };
  static uint64_t EdgeKey(int32_t node, uint32_t cp) {
    return (static_cast<uint64_t>(node) << 22) | cp;
  }
  size_t Hash(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }
  // A one-sided filter of the hashed edges (a bit per hash of the key, 1 MiB,
  // fits in L2): most probes of a DAG walk are for edges that do not exist,
  // and the filter answers those without touching the table.
  static constexpr int kFilterBits = 23;
  static size_t FilterBit(uint64_t key) {
    return static_cast<size_t>((key * 0xD6E8FEB86659FD93ull) >> (64 - kFilterBits));
  }
  bool MayHaveEdge(uint64_t key) const {
    const size_t bit = FilterBit(key);
    return (filter_[bit >> 6] >> (bit & 63)) & 1;
  }
  void Grow();
  void PutEdge(const Slot& slot);
  // The edge that leads to `node` (not the root), for updating.
  Edge* MutableEdge(int32_t node);

  bool frozen_ = false;
  std::vector<Node> node_store_;       // frozen: the records, with room to align them
  Node* nodes_ = nullptr;              // frozen: node_count() + 1 records (the last a sentinel)
  std::vector<double> lf_;             // frozen: the distinct log frequencies, -1 first
  std::vector<int32_t> root_child_;    // frozen: the root's child by code point below U+10000
  std::vector<uint32_t> sample_;       // frozen: nodes_[kLine * j].cp() at j
  std::vector<uint64_t> wide_filter_;  // frozen: see MayHaveWideChild
  PrefixFilter triple_filter_;         // frozen: see MayHaveTriple
  PrefixFilter pair_filter_;           // frozen: see MayHavePair

  std::vector<Edge> root_direct_;
  struct Free {
    void operator()(Slot* p) const;
  };
  // `capacity` empty slots; big tables on transparent huge pages (a walk's
  // probes land anywhere in tens of MB: with 4 KiB pages, each is a TLB miss).
  static std::unique_ptr<Slot[], Free> NewSlots(size_t capacity);

  std::unique_ptr<Slot[], Free> slots_;
  size_t capacity_ = 0;
  size_t mask_ = 0;
  int shift_ = 0;
  size_t edge_count_ = 0;
  std::vector<uint64_t> filter_;

  std::vector<uint64_t> edge_key_;  // per node: EdgeKey(parent, cp) of its edge
  std::vector<int64_t> freq_;
  std::vector<double> log_freq_;
  std::vector<uint16_t> tag_;
  std::vector<uint8_t> force_split_;
  std::deque<std::string> tags_;  // distinct tags (stable addresses); tag_ indexes them
  std::unordered_map<std::string, uint16_t> tag_index_;
};

}  // namespace neardup::segment

#endif  // NEARDUP_SEGMENT_DICT_TRIE_H_
