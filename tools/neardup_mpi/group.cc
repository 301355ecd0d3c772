// Copyright 2026 The neardup Authors.

#include "group.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>

#include "shard.h"

namespace neardup::mpi {
namespace {

using Key = std::pair<uint64_t, uint64_t>;

// One rank's documents of one key, on their way to the key's rank.
struct Entry {
  uint64_t hi = 0;
  uint64_t lo = 0;
  uint64_t first = 0;  // the smallest position among them
  uint64_t count = 0;
};
static_assert(sizeof(Entry) == 32 && std::is_trivially_copyable_v<Entry>);

// The key's rank's answer to an entry.
struct Reply {
  uint64_t group = 0;
  uint64_t flags = 0;  // DistributedGroups::kShared, kFirst
};
static_assert(sizeof(Reply) == 16 && std::is_trivially_copyable_v<Reply>);

// A clustered document on its way to rank 0.
struct Clustered {
  uint64_t position = 0;
  uint64_t group = 0;
  PackedDocument doc;
};
static_assert(std::is_trivially_copyable_v<Clustered>);

// The P - 1 splitters of the keys: every rank's regular sample of its
// (sorted, distinct) keys, all-gathered and cut evenly.
std::vector<Key> Splitters(const World& world, const std::vector<Entry>& entries,
                           Traffic* traffic) {
  const size_t want = std::max<size_t>(static_cast<size_t>(world.size), 64);
  const size_t n = std::min(entries.size(), want);
  std::string sample;
  for (size_t k = 0; k < n; ++k) {
    const Entry& e = entries[(2 * k + 1) * entries.size() / (2 * n)];
    AppendPod(e.hi, &sample);
    AppendPod(e.lo, &sample);
  }
  const std::vector<uint64_t> words = DecodePods<uint64_t>(AllGatherBytes(world, sample, traffic));
  std::vector<Key> all;
  all.reserve(words.size() / 2);
  for (size_t i = 0; i + 1 < words.size(); i += 2) all.emplace_back(words[i], words[i + 1]);
  std::sort(all.begin(), all.end());
  std::vector<Key> splitters;
  if (all.empty()) return splitters;
  for (size_t o = 1; o < static_cast<size_t>(world.size); ++o) {
    splitters.push_back(all[o * all.size() / static_cast<size_t>(world.size)]);
  }
  return splitters;
}

}  // namespace

Status GroupOverRanks(const World& world, std::span<const DedupDocument> docs,
                      const DocumentKey& key, uint64_t first_position, DistributedGroups* out,
                      Traffic* traffic) {
  const auto ranks = static_cast<size_t>(world.size);
  // Each step frees what the next does not need: the copies of the
  // exchanges are the memory's peak.
  // 1. Own documents by (key, position), equal keys collapsed into entries;
  // out->group holds each document's entry until the replies come.
  constexpr uint8_t kFirstOfEntry = 4;
  out->group.assign(docs.size(), UINT64_MAX);
  out->flags.assign(docs.size(), 0);
  std::vector<Entry> entries;
  {
    struct Local {
      Key key;
      uint64_t index;
    };
    std::vector<Local> local;
    for (size_t i = 0; i < docs.size(); ++i) {
      if (!docs[i].empty) local.push_back({key(i), i});
    }
    std::sort(local.begin(), local.end(), [](const Local& a, const Local& b) {
      return a.key != b.key ? a.key < b.key : a.index < b.index;
    });
    for (size_t r = 0; r < local.size(); ++r) {
      const size_t i = local[r].index;
      if (r == 0 || local[r].key != local[r - 1].key) {
        entries.push_back({local[r].key.first, local[r].key.second, first_position + i, 0});
        out->flags[i] = kFirstOfEntry;
      }
      ++entries.back().count;
      out->group[i] = entries.size() - 1;
    }
  }
  // 2. Each entry to the rank of its key range (entries are sorted: each
  // rank's are contiguous, and the replies come back in this order).
  const size_t sent = entries.size();
  std::vector<std::string> to(ranks);
  {
    const std::vector<Key> splitters = Splitters(world, entries, traffic);
    for (const Entry& e : entries) {
      const auto owner = static_cast<size_t>(
          std::upper_bound(splitters.begin(), splitters.end(), Key{e.hi, e.lo}) -
          splitters.begin());
      AppendPod(e, &to[owner]);
    }
    std::vector<Entry>().swap(entries);
  }
  std::vector<uint64_t> from_sizes;
  std::string got = AllToAllBytes(world, to, traffic, &from_sizes);
  for (std::string& s : to) std::string().swap(s);
  const auto entry = [&got](size_t k) {
    Entry e;
    std::memcpy(&e, got.data() + k * sizeof e, sizeof e);
    return e;
  };
  // 3. The keys of this range merged: groups in key order, their size and
  // first position.
  std::vector<Reply> replies(got.size() / sizeof(Entry));
  {
    std::vector<size_t> order(replies.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&entry](size_t x, size_t y) {
      const Entry a = entry(x), b = entry(y);
      if (a.hi != b.hi) return a.hi < b.hi;
      if (a.lo != b.lo) return a.lo < b.lo;
      return a.first < b.first;
    });
    out->owned_keys.clear();
    for (size_t r = 0; r < order.size();) {
      const Entry head = entry(order[r]);
      size_t end = r;
      uint64_t count = 0;
      for (; end < order.size(); ++end) {
        const Entry e = entry(order[end]);
        if (e.hi != head.hi || e.lo != head.lo) break;
        count += e.count;
      }
      for (size_t k = r; k < end; ++k) {
        Reply& reply = replies[order[k]];
        reply.group = out->owned_keys.size();  // made global below
        if (count >= 2) reply.flags |= DistributedGroups::kShared;
        if (k == r) reply.flags |= DistributedGroups::kFirst;
      }
      out->owned_keys.push_back({head.hi, head.lo});
      r = end;
    }
  }
  std::string().swap(got);
  const std::vector<uint64_t> counts = AllGatherU64(world, out->owned_keys.size());
  out->first_owned = std::accumulate(counts.begin(), counts.begin() + world.rank, uint64_t{0});
  out->groups = std::accumulate(counts.begin(), counts.end(), uint64_t{0});
  // 4. The replies, back to each entry's rank in the order it sent them.
  size_t at = 0;
  for (size_t s = 0; s < ranks; ++s) {
    const size_t n = from_sizes.empty() ? 0 : from_sizes[s] / sizeof(Entry);
    for (size_t k = at; k < at + n; ++k) {
      replies[k].group += out->first_owned;
      AppendPod(replies[k], &to[s]);
    }
    at += n;
  }
  std::vector<Reply>().swap(replies);
  const std::string mine = AllToAllBytes(world, to, traffic);
  for (std::string& s : to) std::string().swap(s);
  if (mine.size() != sent * sizeof(Reply)) {
    return Status::Corruption("group: replies lost in the exchange");
  }
  for (size_t i = 0; i < docs.size(); ++i) {
    if (out->group[i] == UINT64_MAX) continue;
    Reply reply;
    std::memcpy(&reply, mine.data() + out->group[i] * sizeof reply, sizeof reply);
    out->group[i] = reply.group;
    out->flags[i] = static_cast<uint8_t>(
        reply.flags & ((out->flags[i] & kFirstOfEntry) != 0
                           ? DistributedGroups::kShared | DistributedGroups::kFirst
                           : DistributedGroups::kShared));
  }
  return Status::OK();
}

Status CollectClustered(const World& world, std::span<const DedupDocument> docs,
                        const DistributedGroups& groups, uint64_t first_position,
                        std::span<const IdPair> pairs, std::span<const uint32_t> signatures,
                        size_t num_perm, Collected* result, Traffic* traffic,
                        const std::vector<JaccardSketch>* sketches) {
  // The groups in pairs, from rank 0.
  std::string paired_bytes;
  if (world.rank == 0) {
    std::vector<uint64_t> paired;
    paired.reserve(2 * pairs.size());
    for (const IdPair& p : pairs) paired.insert(paired.end(), {p.a, p.b});
    std::sort(paired.begin(), paired.end());
    paired.erase(std::unique(paired.begin(), paired.end()), paired.end());
    paired_bytes.assign(reinterpret_cast<const char*>(paired.data()),
                        paired.size() * sizeof(uint64_t));
  }
  BroadcastBytes(world, &paired_bytes, 0, traffic);
  const std::vector<uint64_t> paired = DecodePods<uint64_t>(paired_bytes);
  std::string().swap(paired_bytes);
  // This rank's documents of clusters of two or more, in position order.
  std::string mine, mine_signatures, mine_sketches;
  std::vector<uint64_t> empty = {0};
  for (size_t i = 0; i < docs.size(); ++i) {
    empty[0] += docs[i].empty ? 1 : 0;
    const uint64_t g = groups.group[i];
    if (g == UINT64_MAX) continue;
    if ((groups.flags[i] & DistributedGroups::kShared) == 0 &&
        !std::binary_search(paired.begin(), paired.end(), g)) {
      continue;
    }
    AppendPod(Clustered{first_position + i, g, Pack(docs[i])}, &mine);
    if (sketches != nullptr) AppendPod((*sketches)[i], &mine_sketches);
    if (num_perm > 0 && (groups.flags[i] & DistributedGroups::kFirst) != 0) {
      AppendPod(g, &mine_signatures);
      mine_signatures.append(reinterpret_cast<const char*>(signatures.data() + i * num_perm),
                             num_perm * sizeof(uint32_t));
    }
  }
  Collected& out = *result;
  out = Collected();
  AllReduceSum(world, &empty);
  out.empty = empty[0];
  const std::vector<Clustered> got = DecodePods<Clustered>(GatherBytes(world, mine, 0, traffic));
  std::string().swap(mine);
  const std::string got_signatures =
      num_perm > 0 ? GatherBytes(world, mine_signatures, 0, traffic) : std::string();
  const std::string got_sketches =
      sketches != nullptr ? GatherBytes(world, mine_sketches, 0, traffic) : std::string();
  if (world.rank != 0) return Status::OK();
  // As SelectClustered: the chosen groups in increasing number, each one's
  // members (indexes into positions) in increasing position.
  ClusteredDocuments& c = out.clustered;
  std::vector<uint64_t> chosen;
  c.positions.reserve(got.size());
  c.docs.reserve(got.size());
  for (const Clustered& x : got) {
    c.positions.push_back(x.position);
    c.docs.push_back(Unpack(x.doc));
    chosen.push_back(x.group);
  }
  std::vector<size_t> by_group(got.size());
  std::iota(by_group.begin(), by_group.end(), size_t{0});
  std::stable_sort(by_group.begin(), by_group.end(),
                   [&got](size_t x, size_t y) { return got[x].group < got[y].group; });
  std::sort(chosen.begin(), chosen.end());
  chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  DedupGroups& sub = c.groups;
  sub.of.assign(got.size(), SIZE_MAX);
  for (size_t k = 0; k < by_group.size(); ++k) {
    const size_t i = by_group[k];
    if (k == 0 || got[i].group != got[by_group[k - 1]].group) sub.begin.push_back(k);
    sub.members.push_back(i);
    sub.of[i] = sub.begin.size() - 1;
  }
  sub.begin.push_back(sub.members.size());
  const auto index = [&chosen](uint64_t g) {
    return static_cast<size_t>(std::lower_bound(chosen.begin(), chosen.end(), g) - chosen.begin());
  };
  for (const IdPair& p : pairs) {
    const size_t a = index(p.a), b = index(p.b);
    if (b >= chosen.size() || chosen[a] != p.a || chosen[b] != p.b) {
      return Status::Corruption("cluster: a paired group's documents lost in the exchange");
    }
    c.pairs.push_back({a, b, p.distance});
  }
  c.chosen = std::move(chosen);
  if (sketches != nullptr) {
    // In the order of `got` (gathered the same way), as c.docs.
    out.sketches = DecodePods<JaccardSketch>(got_sketches);
    if (out.sketches.size() != c.docs.size()) {
      return Status::Corruption("cluster: sketches lost in the exchange");
    }
  }
  // The signatures, by group.
  const size_t stride = sizeof(uint64_t) + num_perm * sizeof(uint32_t);
  if (num_perm > 0) {
    const size_t n = got_signatures.size() / stride;
    std::vector<std::pair<uint64_t, size_t>> at(n);
    for (size_t k = 0; k < n; ++k) {
      std::memcpy(&at[k].first, got_signatures.data() + k * stride, sizeof(uint64_t));
      at[k].second = k;
    }
    std::sort(at.begin(), at.end());
    out.signatures.resize(n * num_perm);
    for (size_t k = 0; k < n; ++k) {
      out.signature_groups.push_back(at[k].first);
      std::memcpy(out.signatures.data() + k * num_perm,
                  got_signatures.data() + at[k].second * stride + sizeof(uint64_t),
                  num_perm * sizeof(uint32_t));
    }
  }
  return Status::OK();
}

}  // namespace neardup::mpi
