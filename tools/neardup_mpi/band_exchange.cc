// Copyright 2026 The neardup Authors.

#include "band_exchange.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>

namespace neardup::mpi {
namespace {

// One group's bucket of one band, on its way to the bucket's rank.
struct Entry {
  uint64_t bucket = 0;
  uint64_t group = 0;
  uint32_t band = 0;
  uint32_t owner = 0;  // the rank that holds the group's signature
};
static_assert(sizeof(Entry) == 24 && std::is_trivially_copyable_v<Entry>);

// An entry with its group's signature, when signatures are small
// (kInlineWords words at most: SimHash's fingerprint): no fetch.
constexpr size_t kInlineWords = 4;
struct InlineEntry {
  Entry entry;
  uint32_t signature[kInlineWords] = {};
};
static_assert(sizeof(InlineEntry) == 40 && std::is_trivially_copyable_v<InlineEntry>);

bool EntryLess(const Entry& x, const Entry& y) {
  if (x.band != y.band) return x.band < y.band;
  if (x.bucket != y.bucket) return x.bucket < y.bucket;
  return x.group < y.group;
}
bool SameBucket(const Entry& x, const Entry& y) { return x.band == y.band && x.bucket == y.bucket; }

// Verifies the bucket of `m` groups members[0..m) (increasing) whose
// signatures are sig(i), i < m: the test reads them by position in the
// bucket (no lookup per test); the pairs of groups appended to *pairs.
template <class Sig>
void VerifyMembers(const DedupJoinPlan& plan, const BandJoinOptions& verify,
                   std::span<const uint64_t> members, const Sig& sig, std::vector<uint64_t>* local,
                   std::vector<IdPair>* scratch, std::vector<IdPair>* pairs, BandJoinStats* stats) {
  local->resize(members.size());
  std::iota(local->begin(), local->end(), uint64_t{0});
  scratch->clear();
  const auto signature = [&sig](uint64_t i) { return sig(static_cast<size_t>(i)); };
  plan.VerifyBucket(*local, signature, verify, scratch, stats);
  // Positions increase with the groups: the pairs keep their order.
  for (const IdPair& q : *scratch) {
    pairs->push_back({members[q.a], members[q.b], q.distance});
  }
}

// The hash that spreads (band, bucket) over the ranks and parts (which rank
// verifies a bucket: the pairs do not depend on it).
uint64_t Spread(uint32_t band, uint64_t bucket) {
  return XXH3_64bits_withSeed(&bucket, sizeof bucket, band);
}

// The signatures fetched for a round: group -> num_perm words.
class SignatureTable {
 public:
  SignatureTable(std::vector<uint64_t> groups, std::vector<uint32_t> words, size_t perm)
      : groups_(std::move(groups)), words_(std::move(words)), perm_(perm) {
    order_.resize(groups_.size());
    std::iota(order_.begin(), order_.end(), size_t{0});
    std::sort(order_.begin(), order_.end(),
              [this](size_t x, size_t y) { return groups_[x] < groups_[y]; });
    sorted_.resize(groups_.size());
    for (size_t i = 0; i < order_.size(); ++i) sorted_[i] = groups_[order_[i]];
  }
  std::span<const uint32_t> Of(uint64_t group) const {
    const size_t i = static_cast<size_t>(std::lower_bound(sorted_.begin(), sorted_.end(), group) -
                                         sorted_.begin());
    return std::span<const uint32_t>(words_).subspan(order_[i] * perm_, perm_);
  }

 private:
  std::vector<uint64_t> groups_;  // in the order of words_
  std::vector<uint32_t> words_;
  size_t perm_;
  std::vector<size_t> order_;     // positions of groups_ in increasing group
  std::vector<uint64_t> sorted_;  // groups_ sorted
};

}  // namespace

std::vector<ExchangeRound> PlanExchange(const World& world, const ExchangeOptions& options,
                                        size_t my_reps) {
  uint64_t most = 0;
  for (const uint64_t r : AllGatherU64(world, my_reps)) most = std::max(most, r);
  const uint64_t entry =
      options.signature_words <= kInlineWords ? sizeof(InlineEntry) : sizeof(Entry);
  const uint64_t per_band = std::max<uint64_t>(most, 1) * entry;
  const uint64_t budget = std::max<uint64_t>(options.round_bytes, entry);
  std::vector<ExchangeRound> rounds;
  if (per_band <= budget) {
    // Bands per round: as many as the budget holds, and few enough for
    // min_rounds rounds (a kill redoes one round).
    const int bounded = std::max(
        1, (options.bands + std::max(options.min_rounds, 1) - 1) / std::max(options.min_rounds, 1));
    const int step = static_cast<int>(
        std::min<uint64_t>(budget / per_band, static_cast<uint64_t>(std::max(bounded, 1))));
    for (int b = 0; b < options.bands; b += step) {
      rounds.push_back({b, std::min(options.bands, b + step), 0, 1});
    }
  } else {
    const auto parts = static_cast<uint32_t>((per_band + budget - 1) / budget);
    for (int b = 0; b < options.bands; ++b) {
      for (uint32_t q = 0; q < parts; ++q) rounds.push_back({b, b + 1, q, parts});
    }
  }
  return rounds;
}

void JoinRound(const World& world, const DedupJoinPlan& plan, const ExchangeOptions& options,
               const ExchangeRound& round, std::span<const GroupRep> reps,
               std::span<const uint32_t> signatures, std::vector<IdPair>* pairs,
               BandJoinStats* stats, ExchangeTraffic* traffic, BandBuckets* cache) {
  const auto p = static_cast<size_t>(world.size);
  const size_t perm = options.signature_words;
  const auto own = [&](uint64_t local) { return signatures.subspan(local * perm, perm); };
  const auto bucket_of = [&](const GroupRep& r, int band) {
    return plan.BandBucket(own(r.local), band);
  };
  // A band cut into parts (a round of one band): its buckets once.
  const bool cached = cache != nullptr && round.parts > 1;
  if (cached && cache->band != round.band_begin) {
    cache->buckets.resize(reps.size());
    for (size_t k = 0; k < reps.size(); ++k)
      cache->buckets[k] = bucket_of(reps[k], round.band_begin);
    cache->band = round.band_begin;
  }
  BandJoinOptions verify;
  verify.components_only = options.components_only;
  verify.max_bucket = options.max_bucket;
  verify.max_representatives = options.max_representatives;
  std::vector<uint64_t> members, local;
  std::vector<IdPair> scratch;
  if (perm <= kInlineWords) {
    // Small signatures travel with the entries (40 bytes each): each bucket
    // is verified where it lands, with no fetch.
    std::vector<std::string> to(p);
    for (size_t k = 0; k < reps.size(); ++k) {
      const GroupRep& r = reps[k];
      for (int band = round.band_begin; band < round.band_end; ++band) {
        InlineEntry x;
        x.entry.bucket = cached ? cache->buckets[k] : bucket_of(r, band);
        x.entry.group = r.group;
        x.entry.band = static_cast<uint32_t>(band);
        x.entry.owner = static_cast<uint32_t>(world.rank);
        const uint64_t h = Spread(x.entry.band, x.entry.bucket);
        if (round.parts > 1 && (h / p) % round.parts != round.part) continue;
        const std::span<const uint32_t> sig = own(r.local);
        std::copy(sig.begin(), sig.end(), x.signature);
        AppendPod(x, &to[h % p]);
      }
    }
    std::string bytes = AllToAllBytes(world, to, &traffic->keys);
    std::vector<std::string>().swap(to);  // before the copy: two copies at most
    std::vector<InlineEntry> got = DecodePods<InlineEntry>(bytes);
    std::string().swap(bytes);
    std::sort(got.begin(), got.end(), [](const InlineEntry& x, const InlineEntry& y) {
      return EntryLess(x.entry, y.entry);
    });
    for (size_t s = 0; s < got.size();) {
      size_t e = s + 1;
      while (e < got.size() && SameBucket(got[s].entry, got[e].entry)) ++e;
      if (e - s >= 2) {
        members.clear();
        for (size_t i = s; i < e; ++i) members.push_back(got[i].entry.group);
        const auto sig = [&got, s, perm](size_t i) {
          return std::span<const uint32_t>(got[s + i].signature, perm);
        };
        VerifyMembers(plan, verify, members, sig, &local, &scratch, pairs, stats);
      }
      s = e;
    }
    return;
  }
  // 1. Each group's buckets of the round's bands, to the buckets' ranks.
  std::vector<Entry> entries;
  {
    std::vector<std::string> to(p);
    for (size_t k = 0; k < reps.size(); ++k) {
      const GroupRep& r = reps[k];
      for (int band = round.band_begin; band < round.band_end; ++band) {
        Entry e;
        e.bucket = cached ? cache->buckets[k] : bucket_of(r, band);
        e.group = r.group;
        e.band = static_cast<uint32_t>(band);
        e.owner = static_cast<uint32_t>(world.rank);
        const uint64_t h = Spread(e.band, e.bucket);
        if (round.parts > 1 && (h / p) % round.parts != round.part) continue;
        AppendPod(e, &to[h % p]);
      }
    }
    entries = DecodePods<Entry>(AllToAllBytes(world, to, &traffic->keys));
  }
  // 2. Buckets: runs of equal (band, bucket), groups increasing.
  std::sort(entries.begin(), entries.end(), EntryLess);
  const auto same = SameBucket;
  // 3. The buckets of two or more, in batches whose signatures take at most
  //    round_bytes (one bucket at least); every rank runs as many batches as
  //    the rank with the most (the exchanges are collective).
  std::vector<std::pair<size_t, size_t>> buckets;
  std::vector<size_t> batch_begin = {0};
  const uint64_t row = perm * sizeof(uint32_t);
  uint64_t held = 0;
  for (size_t s = 0; s < entries.size();) {
    size_t e = s + 1;
    while (e < entries.size() && same(entries[s], entries[e])) ++e;
    if (e - s >= 2) {
      const uint64_t bytes = (e - s) * row;
      if (held > 0 && held + bytes > options.round_bytes) {
        batch_begin.push_back(buckets.size());
        held = 0;
      }
      held += bytes;
      buckets.emplace_back(s, e);
    }
    s = e;
  }
  batch_begin.push_back(buckets.size());
  uint64_t batches = 0;
  for (const uint64_t n : AllGatherU64(world, batch_begin.size() - 1))
    batches = std::max(batches, n);
  std::vector<std::span<const uint32_t>> spans;
  for (uint64_t t = 0; t < batches; ++t) {
    const size_t first = t + 1 < batch_begin.size() ? batch_begin[t] : buckets.size();
    const size_t last = t + 1 < batch_begin.size() ? batch_begin[t + 1] : buckets.size();
    // The signatures of the batch's groups, from their owners (each asked
    // once per batch).
    std::vector<std::vector<uint64_t>> ask(p);
    for (size_t k = first; k < last; ++k) {
      for (size_t i = buckets[k].first; i < buckets[k].second; ++i) {
        ask[entries[i].owner].push_back(entries[i].group);
      }
    }
    std::vector<std::string> requests(p);
    for (size_t r = 0; r < p; ++r) {
      std::sort(ask[r].begin(), ask[r].end());
      ask[r].erase(std::unique(ask[r].begin(), ask[r].end()), ask[r].end());
      for (const uint64_t g : ask[r]) AppendPod(g, &requests[r]);
    }
    std::vector<uint64_t> from;
    const std::string asked = AllToAllBytes(world, requests, &traffic->signatures, &from);
    std::vector<std::string>().swap(requests);
    std::vector<std::string> replies(p);
    size_t at = 0;
    for (size_t r = 0; r < p; ++r) {
      for (const uint64_t g : DecodePods<uint64_t>(std::string_view(asked).substr(at, from[r]))) {
        // Every group asked for is one of this rank's (the entry's owner).
        const auto it =
            std::lower_bound(reps.begin(), reps.end(), g,
                             [](const GroupRep& x, uint64_t group) { return x.group < group; });
        const std::span<const uint32_t> sig = own(it->local);
        replies[r].append(reinterpret_cast<const char*>(sig.data()), sig.size_bytes());
      }
      at += from[r];
    }
    std::vector<uint64_t> order;
    for (const std::vector<uint64_t>& x : ask) order.insert(order.end(), x.begin(), x.end());
    std::vector<std::vector<uint64_t>>().swap(ask);
    const SignatureTable table(
        std::move(order), DecodePods<uint32_t>(AllToAllBytes(world, replies, &traffic->signatures)),
        perm);
    std::vector<std::string>().swap(replies);
    // 4. Verify each bucket of the batch (each member's signature looked
    //    up once).
    for (size_t k = first; k < last; ++k) {
      members.clear();
      spans.clear();
      for (size_t i = buckets[k].first; i < buckets[k].second; ++i) {
        members.push_back(entries[i].group);
        spans.push_back(table.Of(entries[i].group));
      }
      const auto sig = [&spans](size_t i) { return spans[i]; };
      VerifyMembers(plan, verify, members, sig, &local, &scratch, pairs, stats);
    }
  }
}

}  // namespace neardup::mpi
