// Copyright 2026 The neardup Authors.
//
// DictTrie: jieba's prefix dictionary FREQ as a trie over code points. A node
// exists exactly when its string is a key of FREQ (a word or a prefix of a
// word); freq(node) is FREQ[string] (0 for a prefix that is not a word).
// Edges live in one open-addressing hash table keyed by (parent, code point),
// key and child in one 16-byte slot (one cache line per probe); the root's
// children below U+10000 also have a direct table, since every DAG walk
// starts there. What the route needs of a node (its log frequency and whether
// it has children) sits in one 16-byte record, so a step of a DAG walk touches
// two cache lines. Built once, then only read (thread-safe reads).

#ifndef NEARDUP_SEGMENT_DICT_TRIE_H_
#define NEARDUP_SEGMENT_DICT_TRIE_H_

#include <cmath>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace neardup::segment {

class DictTrie {
 public:
  static constexpr int32_t kNone = -1;
  static constexpr uint16_t kNoTag = 0xFFFF;

  DictTrie();

  // The child of `node` by code point `cp`, or kNone.
  int32_t Child(int32_t node, uint32_t cp) const {
    if (node == 0 && cp < kRootDirect) return root_direct_[cp];
    const uint64_t key = EdgeKey(node, cp);
    size_t slot = Hash(key);
    while (true) {
      const Slot& e = slots_[slot];
      if (e.key == key) return e.child;
      if (e.key == kEmptyKey) return kNone;
      slot = (slot + 1) & mask_;
    }
  }
  // The root's child by `cp` (Child(0, cp)).
  int32_t RootChild(uint32_t cp) const {
    return cp < kRootDirect ? root_direct_[cp] : Child(0, cp);
  }
  // Starts loading what Child(node, cp) will read.
  void PrefetchChild(int32_t node, uint32_t cp) const {
    __builtin_prefetch(&slots_[Hash(EdgeKey(node, cp))]);
  }

  // What a DAG walk reads of a node: log(freq) when the node is a word of
  // positive frequency, else -1 (log(freq) >= 0 for freq >= 1); and whether
  // the node has children.
  struct RouteInfo {
    double log_freq_or_minus_one;
    uint32_t has_children;
    uint32_t unused;
  };
  const RouteInfo& route_info(int32_t node) const { return route_[node]; }

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
  void set_freq(int32_t node, int64_t f) {
    freq_[node] = f;
    log_freq_[node] = f > 0 ? std::log(static_cast<double>(f)) : 0.0;
    route_[node].log_freq_or_minus_one = f > 0 ? log_freq_[node] : -1.0;
  }
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

  struct Slot {
    uint64_t key;
    int32_t child;
    int32_t unused;
  };
  static uint64_t EdgeKey(int32_t node, uint32_t cp) {
    return (static_cast<uint64_t>(node) << 22) | cp;
  }
  size_t Hash(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }
  void Grow();
  void PutEdge(uint64_t key, int32_t value);

  std::vector<int32_t> root_direct_;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  int shift_ = 0;
  size_t edge_count_ = 0;

  std::vector<int64_t> freq_;
  std::vector<double> log_freq_;
  std::vector<RouteInfo> route_;
  std::vector<uint16_t> tag_;
  std::vector<uint8_t> force_split_;
  std::deque<std::string> tags_;  // distinct tags (stable addresses); tag_ indexes them
  std::unordered_map<std::string, uint16_t> tag_index_;
};

}  // namespace neardup::segment

#endif  // NEARDUP_SEGMENT_DICT_TRIE_H_
