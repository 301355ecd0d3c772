// Copyright 2026 The neardup Authors.

#include "segment/dict_trie.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdlib>
#include <new>

#include "segment/char_class.h"

namespace neardup::segment {

DictTrie::DictTrie() : root_direct_(kRootDirect, Edge{kNone, 0, -1.0}) {
  filter_.assign((size_t{1} << kFilterBits) / 64, 0);
  slots_ = NewSlots(1024);
  capacity_ = 1024;
  mask_ = 1023;
  shift_ = 64 - 10;
  // Node 0 is the root: the empty string, which is not a key of FREQ.
  edge_key_.push_back(kEmptyKey);
  freq_.push_back(0);
  log_freq_.push_back(0.0);
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

void DictTrie::Free::operator()(Slot* p) const { std::free(p); }

std::unique_ptr<DictTrie::Slot[], DictTrie::Free> DictTrie::NewSlots(size_t capacity) {
  constexpr size_t kHugePage = size_t{2} << 20;
  const size_t bytes = capacity * sizeof(Slot);
  const size_t align = bytes >= kHugePage ? kHugePage : alignof(Slot);
  void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (bytes >= kHugePage) madvise(p, bytes, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
  auto* slots = static_cast<Slot*>(p);
  for (size_t i = 0; i < capacity; ++i) new (&slots[i]) Slot{kEmptyKey, Edge{kNone, 0, -1.0}};
  return std::unique_ptr<Slot[], Free>(slots);
}

void DictTrie::PutEdge(const Slot& s) {
  size_t slot = Hash(s.key);
  while (slots_[slot].key != kEmptyKey) slot = (slot + 1) & mask_;
  slots_[slot] = s;
}

void DictTrie::Grow() {
  std::unique_ptr<Slot[], Free> old = std::move(slots_);
  const size_t old_capacity = capacity_;
  capacity_ *= 2;
  slots_ = NewSlots(capacity_);
  mask_ = capacity_ - 1;
  shift_ = 64 - std::countr_zero(capacity_);
  for (size_t i = 0; i < old_capacity; ++i) {
    if (old[i].key != kEmptyKey) PutEdge(old[i]);
  }
}

DictTrie::Edge* DictTrie::MutableEdge(int32_t node) {
  const uint64_t key = edge_key_[node];
  const uint64_t cp = key & ((uint64_t{1} << 22) - 1);
  if ((key >> 22) == 0 && cp < kRootDirect) return &root_direct_[cp];
  size_t slot = Hash(key);
  while (slots_[slot].key != key) slot = (slot + 1) & mask_;
  return &slots_[slot].edge;
}

int32_t DictTrie::Insert(const uint32_t* cps, size_t n) {
  assert(!frozen_);
  int32_t node = 0;
  for (size_t i = 0; i < n; ++i) {
    const int32_t child = Child(node, cps[i]);
    if (child != kNone) {
      node = child;
      continue;
    }
    const auto id = static_cast<int32_t>(freq_.size());
    const uint64_t key = EdgeKey(node, cps[i]);
    edge_key_.push_back(key);
    freq_.push_back(0);
    log_freq_.push_back(0.0);
    tag_.push_back(kNoTag);
    force_split_.push_back(0);
    if (node != 0) MutableEdge(node)->has_children = 1;
    const Edge edge{id, 0, -1.0};
    if (node == 0 && cps[i] < kRootDirect) {
      root_direct_[cps[i]] = edge;
    } else {
      if ((edge_count_ + 1) * 2 > capacity_) Grow();
      PutEdge(Slot{key, edge});
      const size_t bit = FilterBit(key);
      filter_[bit >> 6] |= uint64_t{1} << (bit & 63);
      ++edge_count_;
    }
    node = id;
  }
  return node;
}

void DictTrie::set_freq(int32_t node, int64_t f) {
  assert(!frozen_);
  freq_[node] = f;
  log_freq_[node] = f > 0 ? std::log(static_cast<double>(f)) : 0.0;
  if (node != 0) MutableEdge(node)->log_freq_or_minus_one = f > 0 ? log_freq_[node] : -1.0;
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

void DictTrie::Freeze() {
  if (frozen_) return;
  const size_t n = node_count();
  constexpr uint64_t kCpMask = (uint64_t{1} << 22) - 1;
  // Each node's children, grouped by parent (counting sort) and sorted by
  // code point.
  std::vector<uint32_t> begin(n + 1, 0);
  for (size_t t = 1; t < n; ++t) ++begin[(edge_key_[t] >> 22) + 1];
  for (size_t i = 0; i < n; ++i) begin[i + 1] += begin[i];
  std::vector<uint32_t> children(n > 0 ? n - 1 : 0);
  {
    std::vector<uint32_t> pos(begin.begin(), begin.end() - 1);
    for (size_t t = 1; t < n; ++t) children[pos[edge_key_[t] >> 22]++] = static_cast<uint32_t>(t);
  }
  for (size_t p = 0; p < n; ++p) {
    std::sort(children.begin() + begin[p], children.begin() + begin[p + 1],
              [&](uint32_t a, uint32_t b) {
                return (edge_key_[a] & kCpMask) < (edge_key_[b] & kCpMask);
              });
  }
  if (n + 1 >= (size_t{1} << kChildBits)) return;  // too many nodes for the records
  // The distinct log frequencies of words.
  lf_.assign(1, -1.0);
  std::unordered_map<int64_t, uint32_t> lf_index;
  for (size_t t = 1; t < n; ++t) {
    if (freq_[t] > 0 && lf_index.emplace(freq_[t], static_cast<uint32_t>(lf_.size())).second) {
      lf_.push_back(log_freq_[t]);
    }
  }
  if (lf_.size() >= (size_t{1} << kLfBits)) {  // too many distinct frequencies
    std::vector<double>().swap(lf_);
    return;
  }
  // Breadth-first numbering: the children of the node numbered u get the
  // next free numbers, in code point order.
  std::vector<uint32_t> old_of(n);
  std::vector<uint32_t> new_of(n);
  node_store_.assign(n + 1 + kLine, Node{0});
  {
    const auto addr = reinterpret_cast<uintptr_t>(node_store_.data());
    nodes_ = node_store_.data() + (64 - addr % 64) % 64 / sizeof(Node);
  }
  std::vector<uint32_t> parent(n + 1, 0);  // by new number
  old_of[0] = 0;
  new_of[0] = 0;
  uint32_t next = 1;
  auto record = [](uint64_t cp, uint64_t first_child, uint64_t lf) {
    return Node{cp | first_child << kCpBits | lf << (kCpBits + kChildBits)};
  };
  for (size_t u = 0; u < n; ++u) {
    const uint32_t old = old_of[u];
    const uint32_t first = next;
    for (uint32_t i = begin[old]; i < begin[old + 1]; ++i) {
      old_of[next] = children[i];
      new_of[children[i]] = next;
      parent[next] = static_cast<uint32_t>(u);
      ++next;
    }
    nodes_[u] = record(u == 0 ? 0 : edge_key_[old] & kCpMask, first,
                       freq_[old] > 0 ? lf_index[freq_[old]] : 0);
  }
  nodes_[n] = record(0, n, 0);
  root_child_.assign(kRootDirect, kNone);
  for (uint32_t c = nodes_[0].first_child(); c < nodes_[1].first_child(); ++c) {
    const uint32_t cp = nodes_[c].cp();
    if (cp < kRootDirect) root_child_[cp] = static_cast<int32_t>(c);
  }
  wide_filter_.assign((size_t{1} << kWideFilterBits) / 64, 0);
  for (size_t u = 0; u < n; ++u) {
    const uint32_t first = nodes_[u].first_child(), end = nodes_[u + 1].first_child();
    if (end - first <= kMaxScan) continue;
    for (uint32_t c = first; c < end; ++c) {
      const size_t bit = WideFilterBit(static_cast<int32_t>(u), nodes_[c].cp());
      wide_filter_[bit >> 6] |= uint64_t{1} << (bit & 63);
    }
  }
  // Breadth-first numbering puts the two-character prefixes right after the
  // root's children, and the three-character ones after those.
  pair_filter_.Clear();
  for (size_t c = nodes_[1].first_child(); c < n && parent[parent[c]] == 0; ++c) {
    const uint32_t cps[2] = {nodes_[parent[c]].cp(), nodes_[c].cp()};
    pair_filter_.Add(PairHash(cps));
  }
  triple_filter_.Clear();
  for (size_t c = nodes_[nodes_[1].first_child()].first_child(); c < n; ++c) {
    const uint32_t p2 = parent[c], p1 = parent[p2];
    if (parent[p1] != 0) break;  // past the third level
    const uint32_t cps[3] = {nodes_[p1].cp(), nodes_[p2].cp(), nodes_[c].cp()};
    triple_filter_.Add(TripleHash(cps));
  }
  sample_.resize(n / kLine + 2);
  for (size_t j = 0; j < sample_.size(); ++j) {
    sample_[j] = j * kLine <= n ? nodes_[j * kLine].cp() : 0;
  }
  auto permute = [&](auto* v) {
    auto copy = *v;
    for (size_t t = 0; t < n; ++t) (*v)[new_of[t]] = copy[t];
  };
  permute(&freq_);
  permute(&log_freq_);
  permute(&tag_);
  permute(&force_split_);
  // The loading layout is no longer needed.
  slots_.reset();
  capacity_ = mask_ = 0;
  edge_count_ = 0;
  std::vector<uint64_t>().swap(filter_);
  std::vector<uint64_t>().swap(edge_key_);
  std::vector<Edge>().swap(root_direct_);
  frozen_ = true;
}

}  // namespace neardup::segment
