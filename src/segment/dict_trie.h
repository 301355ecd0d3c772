// Copyright 2026 The neardup Authors.
//
// DictTrie: jieba's prefix dictionary FREQ as a trie over code points. A node
// exists exactly when its string is a key of FREQ (a word or a prefix of a
// word); freq(node) is FREQ[string] (0 for a prefix that is not a word).
//
// Edges live in one open-addressing hash table keyed by (parent, code point);
// the root's children below U+10000 also have a direct table, since every
// DAG walk starts there. An edge carries what a DAG walk needs of the child
// (its id, log frequency, whether it has children), so each step of a walk
// reads one 32-byte slot: one cache miss, not one for the edge and another
// for the node. Built once, then only read (thread-safe reads).

#ifndef NEARDUP_SEGMENT_DICT_TRIE_H_
#define NEARDUP_SEGMENT_DICT_TRIE_H_

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

  // The edge from `node` by code point `cp`, or nullptr.
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
  // The child of `node` by code point `cp`, or kNone.
  int32_t Child(int32_t node, uint32_t cp) const {
    const Edge* e = ChildEdge(node, cp);
    return e == nullptr ? kNone : e->child;
  }
  // Starts loading what ChildEdge(node, cp) will read.
  void PrefetchChild(int32_t node, uint32_t cp) const {
    if (node == 0 && cp < kRootDirect) return;
    const uint64_t key = EdgeKey(node, cp);
    if (MayHaveEdge(key)) __builtin_prefetch(&slots_[Hash(key)]);
  }

  // The node of the code point string [cps, cps + n), or kNone.
  int32_t Find(const uint32_t* cps, size_t n) const {
    int32_t node = 0;
    for (size_t i = 0; i < n && node != kNone; ++i) node = Child(node, cps[i]);
    return n == 0 ? kNone : node;
  }
  // Same for a UTF-8 string (kNone when it is not valid UTF-8).
  int32_t FindUtf8(std::string_view word) const;

  // Creates the nodes of [cps, cps + n) and its prefixes (freq 0 for new
  // ones) and returns the last. REQUIRES: n > 0
  int32_t Insert(const uint32_t* cps, size_t n);

  int64_t freq(int32_t node) const { return freq_[node]; }
  // log(freq), or 0 (= log 1) when freq is 0.
  double log_freq(int32_t node) const { return log_freq_[node]; }
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
