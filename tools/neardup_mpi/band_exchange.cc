// Copyright 2026 The neardup Authors.

#include "band_exchange.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <stdexcept>
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
// (kInlineWords words at most: SimHash's fingerprint): no fetch, and no
// owner (nothing is asked of it). The band (relative to the round's first)
// and the bucket share one word, the sort key: (band, bucket) order is the
// key's order, so the buckets are sorted by a radix sort of (key, position)
// pairs instead of the 32-byte entries.
constexpr size_t kInlineWords = 4;
constexpr int kBucketBits = 48;  // BandBucket's: at most 32 bits, or 32 + 16 partition bits
constexpr int kInlineBandsPerRound = 1 << (64 - kBucketBits);
struct InlineEntry {
  uint64_t key = 0;  // (band - round.band_begin) << kBucketBits | bucket
  uint64_t group = 0;
  uint32_t signature[kInlineWords] = {};
};
static_assert(sizeof(InlineEntry) == 32 && std::is_trivially_copyable_v<InlineEntry>);

// The entries that `bytes` holds, sorted by key (stable: an LSD radix
// sort over the bits that some key has, at most 11 a pass). Memory: the
// bytes and one copy of the entries, then two copies of the entries.
std::vector<InlineEntry> SortByKey(std::string bytes) {
  const size_t n = bytes.size() / sizeof(InlineEntry);
  const auto key_at = [&bytes](size_t i) {
    uint64_t key;
    std::memcpy(&key, bytes.data() + i * sizeof(InlineEntry), sizeof key);
    return key;
  };
  uint64_t any = 0;
  for (size_t i = 0; i < n; ++i) any |= key_at(i);
  const int bits = std::bit_width(any);
  if (bits == 0) return DecodePods<InlineEntry>(bytes);
  const int passes = (bits + 10) / 11;
  const int digit = (bits + passes - 1) / passes;
  const uint64_t mask = (uint64_t{1} << digit) - 1;
  std::vector<size_t> count(mask + 2);
  const auto offsets = [&](int shift, const auto& key) {
    std::fill(count.begin(), count.end(), 0);
    for (size_t i = 0; i < n; ++i) ++count[((key(i) >> shift) & mask) + 1];
    for (size_t d = 1; d < count.size(); ++d) count[d] += count[d - 1];
  };
  // The first pass reads the bytes, the others the last pass's entries.
  std::vector<InlineEntry> sorted(n), spare;
  offsets(0, key_at);
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(&sorted[count[key_at(i) & mask]++], bytes.data() + i * sizeof(InlineEntry),
                sizeof(InlineEntry));
  }
  std::string().swap(bytes);
  for (int shift = digit; shift < bits; shift += digit) {
    spare.resize(n);
    offsets(shift, [&sorted](size_t i) { return sorted[i].key; });
    for (const InlineEntry& x : sorted) spare[count[(x.key >> shift) & mask]++] = x;
    sorted.swap(spare);
  }
  return sorted;
}

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
  // An inline entry counts twice: the received entries are held twice
  // while sorted (SortByKey), so a round peaks at what it did with 40-byte
  // entries held once.
  const uint64_t entry =
      options.signature_words <= kInlineWords ? 2 * sizeof(InlineEntry) : sizeof(Entry);
  const uint64_t per_band = std::max<uint64_t>(most, 1) * entry;
  const uint64_t budget = std::max<uint64_t>(options.round_bytes, entry);
  std::vector<ExchangeRound> rounds;
  if (per_band <= budget) {
    // Bands per round: as many as the budget holds, and few enough for
    // min_rounds rounds (a kill redoes one round).
    // An inline entry's key holds the band within the round in 16 bits.
    int bounded = std::max(
        1, (options.bands + std::max(options.min_rounds, 1) - 1) / std::max(options.min_rounds, 1));
    if (options.signature_words <= kInlineWords) bounded = std::min(bounded, kInlineBandsPerRound);
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
    // Small signatures travel with the entries (32 bytes each): each bucket
    // is verified where it lands, with no fetch.
    std::vector<std::string> to(p);
    const auto bands = static_cast<uint64_t>(round.band_end - round.band_begin);
    const uint64_t expect = reps.size() * bands / round.parts / p * sizeof(InlineEntry);
    for (std::string& t : to) t.reserve(expect + expect / 16 + 1024);
    for (size_t k = 0; k < reps.size(); ++k) {
      const GroupRep& r = reps[k];
      const std::span<const uint32_t> sig = own(r.local);
      for (int band = round.band_begin; band < round.band_end; ++band) {
        const uint64_t bucket = cached ? cache->buckets[k] : bucket_of(r, band);
        if ((bucket >> kBucketBits) != 0) {
          throw std::logic_error("band exchange: a bucket of more than 48 bits");
        }
        const uint64_t h = Spread(static_cast<uint32_t>(band), bucket);
        if (round.parts > 1 && (h / p) % round.parts != round.part) continue;
        InlineEntry x;
        x.key = static_cast<uint64_t>(band - round.band_begin) << kBucketBits | bucket;
        x.group = r.group;
        std::copy(sig.begin(), sig.end(), x.signature);
        AppendPod(x, &to[h % p]);
      }
    }
    std::string bytes = AllToAllBytes(world, to, &traffic->keys);
    std::vector<std::string>().swap(to);
    std::vector<InlineEntry> got = SortByKey(std::move(bytes));
    for (size_t s = 0; s < got.size();) {
      size_t e = s + 1;
      while (e < got.size() && got[e].key == got[s].key) ++e;
      if (e - s >= 2) {
        const auto first = got.begin() + static_cast<std::ptrdiff_t>(s);
        const auto last = got.begin() + static_cast<std::ptrdiff_t>(e);
        const auto by_group = [](const InlineEntry& x, const InlineEntry& y) {
          return x.group < y.group;
        };
        // Groups increasing: the ranks send theirs in increasing order and
        // the sort is stable, so this sort is rarely needed.
        if (!std::is_sorted(first, last, by_group)) std::sort(first, last, by_group);
        members.clear();
        for (size_t i = s; i < e; ++i) members.push_back(got[i].group);
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
