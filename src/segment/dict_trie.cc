// Copyright 2026 The neardup Authors.

#include "segment/dict_trie.h"

#include <bit>

#include "segment/char_class.h"

namespace neardup::segment {

DictTrie::DictTrie() : root_direct_(kRootDirect, kNone) {
  slots_.assign(1024, Slot{kEmptyKey, kNone, 0});
  mask_ = 1023;
  shift_ = 64 - 10;
  // Node 0 is the root: the empty string, which is not a key of FREQ.
  freq_.push_back(0);
  log_freq_.push_back(0.0);
  route_.push_back(RouteInfo{-1.0, 0, 0});
  tag_.push_back(kNoTag);
  force_split_.push_back(0);
}

int32_t DictTrie::FindUtf8(std::string_view word) const {
  const auto* p = reinterpret_cast<const unsigned char*>(word.data());
  const auto* end = p + word.size();
  if (p == end) return kNone;
  int32_t node = 0;
  while (p < end) {
    int len;
    const uint32_t cp = utf8::Decode(p, end, &len);
    if (cp >= utf8::kInvalidBase) return kNone;
    node = Child(node, cp);
    if (node == kNone) return kNone;
    p += len;
  }
  return node;
}

void DictTrie::PutEdge(uint64_t key, int32_t value) {
  size_t slot = Hash(key);
  while (slots_[slot].key != kEmptyKey) slot = (slot + 1) & mask_;
  slots_[slot] = Slot{key, value, 0};
}

void DictTrie::Grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  const size_t capacity = old.size() * 2;
  slots_.assign(capacity, Slot{kEmptyKey, kNone, 0});
  mask_ = capacity - 1;
  shift_ = 64 - std::countr_zero(capacity);
  for (const Slot& e : old) {
    if (e.key != kEmptyKey) PutEdge(e.key, e.child);
  }
}

int32_t DictTrie::Insert(const uint32_t* cps, size_t n) {
  int32_t node = 0;
  for (size_t i = 0; i < n; ++i) {
    const int32_t child = Child(node, cps[i]);
    if (child != kNone) {
      node = child;
      continue;
    }
    const auto id = static_cast<int32_t>(freq_.size());
    freq_.push_back(0);
    log_freq_.push_back(0.0);
    route_.push_back(RouteInfo{-1.0, 0, 0});
    route_[node].has_children = 1;
    tag_.push_back(kNoTag);
    force_split_.push_back(0);
    if (node == 0 && cps[i] < kRootDirect) {
      root_direct_[cps[i]] = id;
    } else {
      if ((edge_count_ + 1) * 2 > slots_.size()) Grow();
      PutEdge((static_cast<uint64_t>(node) << 22) | cps[i], id);
      ++edge_count_;
    }
    node = id;
  }
  return node;
}

void DictTrie::set_tag(int32_t node, std::string_view tag) {
  if (tag.empty()) return;
  auto it = tag_index_.find(std::string(tag));
  if (it == tag_index_.end()) {
    if (tags_.size() + 1 >= kNoTag) return;  // absurdly many distinct tags: drop
    tags_.emplace_back(tag);
    it = tag_index_.emplace(std::string(tag), static_cast<uint16_t>(tags_.size() - 1)).first;
  }
  tag_[node] = it->second;
}

}  // namespace neardup::segment
