// Copyright 2026 The neardup Authors.

#include "dedup/short_join.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <utility>

#include "dedup/sketch_store.h"
#include "neardup/parallel.h"
#include "util/random.h"
#include "util/thread_pool.h"

namespace neardup::dedup_internal {
namespace {

constexpr int kTokenBits = 15;  // a slot (7 bits) and its 8-bit value
constexpr size_t kTokens = size_t{1} << kTokenBits;
static_assert(kSketchSlots == 128, "tokens are 7-bit slots and 8-bit values");
// A single-token key (tiny sets) is marked above the 30 bits of a pair key.
constexpr uint32_t kSingle = uint32_t{1} << (2 * kTokenBits);
// Keys held at once: a pass over the prefixes makes about this many (8 bytes
// each; SetShortJoinKeysPerPass changes it, for tests).
constexpr size_t kKeysPerPass = size_t{4} << 20;
size_t keys_per_pass = kKeysPerPass;
// Sub-buckets of a pass (by the key's hash): sorted and scanned in parallel.
constexpr int kSubBits = 8;

// The largest token set that takes part: kShortSlots / t at t >= 0.4.
constexpr int kMaxSetSize = 40;

uint32_t PairKey(uint16_t r1, uint16_t r2) { return uint32_t{r1} << kTokenBits | r2; }

uint64_t Mix(uint32_t key) { return (uint64_t{key} + 1) * 0x9e3779b97f4a7c15ULL; }

// The token sets: per participating group its tokens as global ranks
// (increasing), alpha = the least overlap with any partner (PairOverlap::Any,
// at least 1), and `own`: the least overlap with a partner at least as large
// (PairOverlap::Longer). A pair's level alpha (where the bucket cutting
// stops) is the larger of its two alphas; its real need is
// PairOverlap::Need(a, b), at least that.
struct TokenSets {
  std::vector<uint32_t> group;  // participating groups, increasing
  std::vector<uint32_t> begin;  // ranks of participant i: [begin[i], begin[i + 1])
  std::vector<uint16_t> rank;
  // alpha and own of a set of each size (they follow from the size alone).
  std::array<uint8_t, kMaxSetSize + 1> alpha_of{}, own_of{};

  std::span<const uint16_t> Of(size_t i) const {
    return std::span<const uint16_t>(rank).subspan(begin[i], begin[i + 1] - begin[i]);
  }
  int Size(size_t i) const { return static_cast<int>(begin[i + 1] - begin[i]); }
  int Alpha(size_t i) const { return alpha_of[begin[i + 1] - begin[i]]; }
  int Own(size_t i) const { return own_of[begin[i + 1] - begin[i]]; }
  // The tokens a pair's first s common ones lie in: min(a, a - alpha + s).
  size_t Prefix(size_t i, int s) const {
    const size_t a = begin[i + 1] - begin[i];
    return std::min(a, a + static_cast<size_t>(s) - static_cast<size_t>(Alpha(i)));
  }
  bool Tiny(size_t i) const { return Alpha(i) == 1; }
  size_t Keys(size_t i) const {
    const size_t p = Prefix(i, 2);
    return p * (p - 1) / 2 + (Tiny(i) ? p : 0);
  }
};

// Calls f(key, lead) for every key of participant i whose first token is
// in [first, last): the pairs of its first Prefix(i, 2) tokens, and for a
// tiny set each token alone. lead: the key's last token lies within the
// first size - own + s (s: the key's tokens), so that i is a lead of the
// key's bucket (BucketJoin::Member).
template <class F>
void ForEachKey(const TokenSets& sets, size_t i, uint32_t first, uint32_t last, const F& f) {
  const std::span<const uint16_t> r = sets.Of(i).first(sets.Prefix(i, 2));
  const size_t lead_end = static_cast<size_t>(sets.Size(i) - sets.Own(i));  // + s
  size_t x = 0;
  while (x < r.size() && r[x] < first) ++x;
  for (; x < r.size() && r[x] < last; ++x) {
    if (sets.Tiny(i)) f(kSingle | r[x], x < lead_end + 1);
    for (size_t y = x + 1; y < r.size(); ++y) f(PairKey(r[x], r[y]), y < lead_end + 2);
  }
}

// The tokens x and y share when their first s common ones are path[0, s)
// (the bucket of that path is where the pair is tested) and they share at
// least `need` (a pair that shares fewer cannot pass verification); -1
// otherwise.
int FirstCommonAre(const TokenSets& sets, size_t x, size_t y, const uint16_t* path, int s,
                   int need) {
  const std::span<const uint16_t> a = sets.Of(x), b = sets.Of(y);
  int found = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      if (found < s && a[i] != path[found]) return -1;
      ++found;
      ++i;
      ++j;
    }
  }
  return found >= s && found >= need ? found : -1;
}

// A bucket larger than this is cut by the next common token (below).
constexpr size_t kRefineAbove = 48;
// The deepest level (tokens in a bucket's path) cut so.
constexpr int kMaxLevel = 16;

// One worker's bucket scan and its results.
struct BucketJoin {
  const TokenSets* sets;
  const PairOverlap* overlap;
  const SimHashPlan* plan;
  SketchView sketches;                                      // per document
  double t = 0;                                             // the lowest verification threshold
  const std::vector<std::pair<uint64_t, uint64_t>>* words;  // group fingerprints
  int k = 0;
  // The sketch short rule's pairs beyond k (ShortRuleBeyondK): 0 when not
  // asked for.
  size_t short_features = 0;
  double short_jaccard = 0;
  std::vector<uint64_t> pairs;   // group a << 32 | group b, a < b
  std::vector<uint64_t> beyond;  // the same, more than k apart
  size_t candidates = 0, tested = 0, rejected = 0, largest = 0;

  // A member of a bucket of level s, gathered once (one cache miss per
  // member, not per pair). pos: where path[s - 1] lies in its tokens.
  // `lead`: path[s - 1] lies within its first size - own + s tokens, so it
  // can be the shorter member (or one of two of equal size) of a pair
  // tested here; a member that is not can only pair with a lead that is
  // strictly shorter, and stays so in every finer bucket (its later common
  // tokens lie further on).
  struct Member {
    uint64_t hi, lo;
    uint32_t x;  // participant
    int size, pos, alpha;
    bool lead;
  };
  // Per level: the members, the (token << 32 | index) cut keys.
  std::vector<std::vector<Member>> local;
  std::vector<std::vector<uint64_t>> scratch;

  // Tests the pairs of `ms` (leads first, then the others by increasing
  // size) of level s (path[0, s): the tokens
  // they share) whose level alpha is in [lo, hi], once per pair: in the
  // bucket of their first s common tokens. Before the distance: the prefix
  // and positional filters with the pair's own need.
  void Test(std::span<const Member> ms, size_t leads, const uint16_t* path, int s, int lo, int hi) {
    // The non-leads, by increasing size: a lead's partners among them are
    // those longer than it.
    const std::span<const Member> others = ms.subspan(leads);
    for (size_t u = 0; u < leads; ++u) {
      const Member& mx = ms[u];
      for (size_t v = u + 1; v < leads; ++v) TestPair(mx, ms[v], path, s, lo, hi);
      const auto longer = std::partition_point(
          others.begin(), others.end(), [&mx](const Member& m) { return m.size <= mx.size; });
      for (auto v = longer; v != others.end(); ++v) TestPair(mx, *v, path, s, lo, hi);
    }
  }
  void TestPair(const Member& mx, const Member& my, const uint16_t* path, int s, int lo, int hi) {
    ++candidates;
    const int alpha = std::max(mx.alpha, my.alpha);
    if (alpha < lo || alpha > hi) return;
    const int need = overlap->Need(mx.size, my.size);
    // path[s - 1] within each one's first size - need + s tokens, and
    // enough tokens after it.
    if (mx.pos >= mx.size - need + s || my.pos >= my.size - need + s) return;
    if (s + std::min(mx.size - mx.pos, my.size - my.pos) - 1 < need) return;
    ++tested;
    const int d = std::popcount(mx.hi ^ my.hi) + std::popcount(mx.lo ^ my.lo);
    if (d > k && short_features == 0) return;
    const int matches = FirstCommonAre(*sets, mx.x, my.x, path, s, need);
    if (matches < 0) return;
    const uint32_t ga = sets->group[mx.x], gb = sets->group[my.x];
    if (d > k) {
      // The sketch short rule's test (ShortSketchPairs): the smaller set
      // under short_features, the sizes within the ratio, the estimate.
      const size_t da = plan->groups.Members(ga).front();
      const size_t db = plan->groups.Members(gb).front();
      const uint32_t fa = sketches.features(da), fb = sketches.features(db);
      const uint32_t lo = std::min(fa, fb);
      const uint32_t hi = std::max(fa, fb);
      if (lo == 0 || lo >= short_features) return;
      if (static_cast<double>(hi) > static_cast<double>(lo) / short_jaccard + 1e-9) return;
      // SketchJaccard bit for bit (PackedSketches::Jaccard): the shared
      // tokens are the equal non-empty slots, all counted (matches).
      if (PackedSketches::Estimate(sketches.Occupancy(da), sketches.Occupancy(db), matches) >=
          short_jaccard) {
        beyond.push_back(uint64_t{std::min(ga, gb)} << 32 | std::max(ga, gb));
      }
      return;
    }
    // The verifier's estimate from the matches and the two occupancies (a
    // margin for rounding): most pairs that reach here and fail
    // verification stop here, before they are held and verified.
    const std::array<uint64_t, 2> fa = sketches.Occupancy(plan->groups.Members(ga).front());
    const std::array<uint64_t, 2> fb = sketches.Occupancy(plan->groups.Members(gb).front());
    int slots = 0, both = 0;
    for (size_t w = 0; w < fa.size(); ++w) {
      slots += std::popcount(fa[w] | fb[w]);
      both += std::popcount(fa[w] & fb[w]);
    }
    constexpr double r = 1.0 / 256;
    if ((matches - r * both) / (slots * (1 - r)) < t - 1e-9) {
      ++rejected;
      return;
    }
    pairs.push_back(uint64_t{std::min(ga, gb)} << 32 | std::max(ga, gb));
  }

  // A bucket of level s >= 1 (members: participants). Pairs whose alpha is
  // below s were tested in an ancestor. Members that can pair with none of
  // the others here are dropped (above). A small bucket tests the rest; a
  // large one tests those of alpha s and cuts the others by their (s + 1)-th
  // common token, which lies after path[s - 1] in each member's first
  // Prefix(x, s + 1) tokens.
  void Bucket(std::span<const uint32_t> members, uint16_t* path, int s) {
    const TokenSets& ts = *sets;
    if (local.empty()) {
      local.resize(kMaxLevel + 1);
      scratch.resize(kMaxLevel + 1);
    }
    std::vector<Member>& ms = local[static_cast<size_t>(s)];
    ms.clear();
    // The smallest position of path[s - 1] among the leads of each size.
    std::array<int8_t, kMaxSetSize + 1> lead_pos;
    lead_pos.fill(INT8_MAX);
    int shortest_lead = INT32_MAX;
    // Members are scattered: their offsets and groups are prefetched 8
    // ahead, their tokens and fingerprints 4 ahead.
    for (size_t i = 0; i < members.size(); ++i) {
      if (i + 8 < members.size()) {
        __builtin_prefetch(&ts.begin[members[i + 8]]);
        __builtin_prefetch(&ts.group[members[i + 8]]);
      }
      if (i + 4 < members.size()) {
        const uint32_t y = members[i + 4];
        __builtin_prefetch(&ts.rank[ts.begin[y]]);
        __builtin_prefetch(&(*words)[ts.group[y]]);
      }
      const uint32_t x = members[i];
      const std::span<const uint16_t> r = ts.Of(x);
      const int size = static_cast<int>(r.size());
      // Where path[s - 1] lies: the tokens below it (branch-free: the sets
      // are short, and a binary search mispredicts at every step).
      int pos = 0;
      for (const uint16_t t : r) pos += t < path[s - 1];
      const bool lead = pos < size - ts.Own(x) + s;
      if (lead) {
        shortest_lead = std::min(shortest_lead, size);
        int8_t& p = lead_pos[static_cast<size_t>(size)];
        p = static_cast<int8_t>(std::min<int>(p, pos));
      }
      const auto& w = (*words)[ts.group[x]];
      ms.push_back({w.first, w.second, x, size, pos, ts.Alpha(x), lead});
    }
    // Leads first, then the others that can pair with a strictly shorter
    // lead: path[s - 1] within both one's first size - need + s tokens.
    size_t leads = 0;
    for (size_t i = 0; i < ms.size(); ++i) {
      if (ms[i].lead) std::swap(ms[leads++], ms[i]);
    }
    const auto viable = [&](const Member& m) {
      for (int a = shortest_lead; a < m.size; ++a) {
        const int need = overlap->Need(a, m.size);
        if (m.pos < m.size - need + s && lead_pos[static_cast<size_t>(a)] < a - need + s) {
          return true;
        }
      }
      return false;
    };
    size_t kept = leads;
    for (size_t i = leads; i < ms.size(); ++i) {
      if (ms[i].size > shortest_lead && viable(ms[i])) ms[kept++] = ms[i];
    }
    ms.resize(kept);
    std::sort(ms.begin() + static_cast<ptrdiff_t>(leads), ms.end(),
              [](const Member& x, const Member& y) { return x.size < y.size; });
    if (leads == 0 || ms.size() < 2) return;
    largest = std::max(largest, ms.size());
    if (ms.size() <= kRefineAbove || s >= kMaxLevel || s < 2) {
      Test(ms, leads, path, s, s, INT32_MAX);
      return;
    }
    // The pairs of level alpha s: among the members of alpha <= s (the
    // copy keeps the order: leads first, then the others by size).
    {
      std::vector<Member>& low = local[0];  // level 0 is never a bucket's
      low.clear();
      size_t low_leads = 0;
      for (size_t i = 0; i < ms.size(); ++i) {
        if (ms[i].alpha <= s) {
          low.push_back(ms[i]);
          low_leads += i < leads;
        }
      }
      Test(low, low_leads, path, s, s, s);
    }
    std::vector<uint64_t>& sub = scratch[static_cast<size_t>(s)];
    sub.clear();
    for (const Member& m : ms) {
      const std::span<const uint16_t> r = ts.Of(m.x).first(ts.Prefix(m.x, s + 1));
      for (size_t i = static_cast<size_t>(m.pos) + 1; i < r.size(); ++i) {
        sub.push_back(uint64_t{r[i]} << 32 | m.x);
      }
    }
    std::sort(sub.begin(), sub.end());
    std::vector<uint32_t> child;
    for (size_t i = 0; i < sub.size();) {
      size_t j = i + 1;
      while (j < sub.size() && (sub[j] >> 32) == (sub[i] >> 32)) ++j;
      if (j - i >= 2) {
        child.clear();
        for (size_t c = i; c < j; ++c) child.push_back(static_cast<uint32_t>(sub[c]));
        path[s] = static_cast<uint16_t>(sub[i] >> 32);
        Bucket(child, path, s + 1);
      }
      i = j;
    }
  }
};

}  // namespace

void SetShortJoinKeysPerPass(size_t keys) { keys_per_pass = keys > 0 ? keys : kKeysPerPass; }

PairOverlap::PairOverlap(double t, int max_size)
    : n_(max_size + 1), need_(static_cast<size_t>(n_ * n_)), any_(n_), longer_(n_) {
  constexpr double r = 1.0 / 256;
  for (int a = 1; a < n_; ++a) {
    for (int b = 1; b < n_; ++b) {
      int m = 1;
      const int lo = std::min(a, b);
      for (; m <= lo; ++m) {
        bool can = false;
        for (int both = m; both <= std::min(lo, m + kSlotClashes) && !can; ++both) {
          // The verifier's expression, with a margin for its rounding.
          can = (m - r * both) / ((a + b - both) * (1 - r)) >= t - 1e-9;
        }
        if (can) break;
      }
      need_[static_cast<size_t>(a * n_ + b)] = static_cast<uint8_t>(m <= lo ? m : kNever);
    }
  }
  for (int a = 1; a < n_; ++a) {
    int any = kNever, longer = kNever;
    for (int b = 1; b < n_; ++b) {
      any = std::min(any, Need(a, b));
      if (b >= a) longer = std::min(longer, Need(a, b));
    }
    any_[static_cast<size_t>(a)] = static_cast<uint8_t>(any);
    longer_[static_cast<size_t>(a)] = static_cast<uint8_t>(longer);
  }
}

double LowestVerifyThreshold(const DedupOptions& options) {
  if (!Verifying(options)) return 0;
  double t = options.verify_jaccard;
  if (options.verify_short_features > 0) t = std::min(t, options.verify_short_jaccard);
  return t;
}

bool RouteShortDocuments(const SimHashPlan& plan, const DedupOptions& options) {
  if (!plan.report.banded || LowestVerifyThreshold(options) < 0.4) return false;
  const SketchView sketches = SketchesOf(options);
  if (sketches.size() != plan.groups.of.size()) return false;
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    const int a = sketches.NonEmpty(plan.groups.Members(g).front());
    if (a >= 1 && a <= kShortSlots) return true;
  }
  return false;
}

bool ShortRuleBeyondK(const DedupOptions& options) {
  return options.short_features > 0 && options.short_rule == ShortRule::kSketch &&
         options.short_jaccard >= LowestVerifyThreshold(options);
}

Status SimHashJoinRouted(const SimHashPlan& plan, const DedupOptions& opt,
                         std::vector<IdPair>* pairs, BandJoinStats* band_stats,
                         ShortJoinStats* short_stats, std::vector<IdPair>* beyond_k) {
  pairs->clear();
  if (beyond_k != nullptr) beyond_k->clear();
  const bool beyond = beyond_k != nullptr && ShortRuleBeyondK(opt);
  // beyond_k == pairs: the rule's pairs go with the others (one array).
  const bool together = beyond && beyond_k == pairs;
  *band_stats = BandJoinStats();
  ShortJoinStats st;
  const size_t n = plan.groups.size();
  const double t = LowestVerifyThreshold(opt);
  if (!(t > 0)) return Status::InvalidArgument("the routed join needs verified pairs");
  if (n >= (uint64_t{1} << 32)) {
    return Status::InvalidArgument("the routed join takes fewer than 2^32 fingerprints");
  }
  const SketchView sketches = SketchesOf(opt);
  const auto first = [&](size_t g) { return plan.groups.Members(g).front(); };
  // A set of more than this many tokens shares too few with a short one (*).
  // (At most kMaxSetSize: RouteShortDocuments asks t >= 0.4.)
  const int medium = std::min(kMaxSetSize, static_cast<int>(std::floor(kShortSlots / t + 1e-9)));
  ThreadPool pool(opt.threads);
  const size_t workers = static_cast<size_t>(pool.threads());

  // 1. Who takes part, its tokens (one pass over the sketches: the set
  // bits of the non-empty slots), the tokens' frequencies and their global
  // order.
  // (Counted first, so that the arrays are allocated once, at their size.)
  std::vector<uint32_t> long_groups;
  TokenSets sets;
  {
    size_t participants = 0, tokens = 0;
    for (size_t g = 0; g < n; ++g) {
      const int a = sketches.NonEmpty(first(g));
      if (a < 1 || a > medium) continue;
      ++participants;
      tokens += static_cast<size_t>(a);
    }
    if (tokens >= (uint64_t{1} << 32)) {
      return Status::InvalidArgument("the routed join takes fewer than 2^32 short-document tokens");
    }
    sets.group.reserve(participants);
    sets.begin.reserve(participants + 1);
    sets.rank.reserve(tokens);
  }
  sets.begin.push_back(0);
  std::vector<uint32_t> freq(kTokens, 0);
  for (size_t g = 0; g < n; ++g) {
    const size_t d = first(g);
    const int a = sketches.NonEmpty(d);
    if (a > kShortSlots) long_groups.push_back(static_cast<uint32_t>(g));
    if (a < 1 || a > medium) continue;  // no features: nothing passes verification
    (a <= kShortSlots ? st.short_groups : st.medium_groups) += 1;
    sets.group.push_back(static_cast<uint32_t>(g));
    sketches.ForEachSlot(d, [&](size_t i, uint8_t value) {
      const auto token = static_cast<uint16_t>(i << 8 | value);
      ++freq[token];
      sets.rank.push_back(token);
    });
    sets.begin.push_back(static_cast<uint32_t>(sets.rank.size()));
  }
  std::vector<uint16_t> rank_of(kTokens);
  {
    std::vector<uint16_t> order(kTokens);
    std::iota(order.begin(), order.end(), uint16_t{0});
    std::sort(order.begin(), order.end(), [&freq](uint16_t x, uint16_t y) {
      return freq[x] != freq[y] ? freq[x] < freq[y] : x < y;
    });
    for (size_t r = 0; r < kTokens; ++r) rank_of[order[r]] = static_cast<uint16_t>(r);
  }
  // 2. The sets as increasing ranks, their alphas (TokenSets), and the keys
  // per first token (a key's first token is its lower rank).
  const size_t m = sets.group.size();
  std::vector<size_t> keys_of(kTokens, 0);
  const PairOverlap overlap(t, medium);
  for (int a = 1; a <= medium; ++a) {
    // At most a: a set no partner can pass with keeps a valid (longer)
    // prefix.
    sets.alpha_of[static_cast<size_t>(a)] = static_cast<uint8_t>(std::clamp(overlap.Any(a), 1, a));
    sets.own_of[static_cast<size_t>(a)] = static_cast<uint8_t>(std::clamp(overlap.Longer(a), 1, a));
  }
  for (size_t i = 0; i < m; ++i) {
    const auto r =
        std::span<uint16_t>(sets.rank).subspan(sets.begin[i], sets.begin[i + 1] - sets.begin[i]);
    for (uint16_t& x : r) x = rank_of[x];
    std::sort(r.begin(), r.end());
    st.keys += sets.Keys(i);
    const size_t p = sets.Prefix(i, 2);
    for (size_t x = 0; x < p; ++x) keys_of[r[x]] += p - 1 - x + (sets.Tiny(i) ? 1 : 0);
  }
  // 3. Passes over the keys, of about kKeysPerPass each: a pass takes the
  // keys whose first token is in a range of ranks (a set's tokens in it are
  // contiguous: the passes cost the keys they make, not all keys each), and
  // a first token with more keys than a pass is split by the keys' hash
  // (mod passes of that token). A key's sub-bucket comes from its hash.
  struct Pass {
    uint32_t first, last, mod, residue;
  };
  std::vector<Pass> plan_passes;
  {
    uint32_t start = 0;
    size_t held = 0;
    for (uint32_t tok = 0; tok < kTokens; ++tok) {
      const size_t c = keys_of[tok];
      if (c > keys_per_pass || held + c > keys_per_pass) {
        if (held > 0) plan_passes.push_back({start, tok, 1, 0});
        start = tok;
        held = 0;
      }
      if (c > keys_per_pass) {
        const auto mod = static_cast<uint32_t>((c + keys_per_pass - 1) / keys_per_pass);
        for (uint32_t res = 0; res < mod; ++res) plan_passes.push_back({tok, tok + 1, mod, res});
        start = tok + 1;
      } else {
        held += c;
      }
    }
    if (held > 0) plan_passes.push_back({start, static_cast<uint32_t>(kTokens), 1, 0});
  }
  std::vector<size_t>().swap(keys_of);
  const size_t passes = std::max<size_t>(1, plan_passes.size());
  st.passes = passes;
  constexpr size_t kSubs = size_t{1} << kSubBits;
  const size_t chunks = std::min(std::max<size_t>(m, 1), workers * 4);
  std::vector<uint32_t> hist(chunks * kSubs);
  std::vector<size_t> sub_begin(kSubs + 1);
  // key << 33 | lead << 32 | participant (ForEachKey)
  std::vector<uint64_t> word;
  std::vector<BucketJoin> outs(workers);
  for (BucketJoin& out : outs) {
    out.sets = &sets;
    out.overlap = &overlap;
    out.plan = &plan;
    out.sketches = sketches;
    out.t = t;
    out.words = &plan.words;
    out.k = opt.k;
    if (beyond) {
      out.short_features = opt.short_features;
      out.short_jaccard = opt.short_jaccard;
    }
  }
  for (size_t pass = 0; pass < plan_passes.size() && m >= 2; ++pass) {
    if (opt.progress) opt.progress("short join", pass, passes);
    const Pass ps = plan_passes[pass];
    const auto place = [&](uint32_t key, size_t* sub) {
      const uint64_t h = Mix(key);
      if (ps.mod > 1 && (h & 0xffffffff) % ps.mod != ps.residue) return false;
      *sub = static_cast<size_t>(h >> (64 - kSubBits));
      return true;
    };
    pool.ParallelFor(chunks, [&](size_t c, int) {
      uint32_t* hc = hist.data() + c * kSubs;
      std::fill(hc, hc + kSubs, 0u);
      for (size_t i = m * c / chunks; i < m * (c + 1) / chunks; ++i) {
        ForEachKey(sets, i, ps.first, ps.last, [&](uint32_t key, bool) {
          size_t sub;
          if (place(key, &sub)) ++hc[sub];
        });
      }
    });
    size_t total = 0;
    for (size_t s = 0; s < kSubs; ++s) {
      sub_begin[s] = total;
      for (size_t c = 0; c < chunks; ++c) {
        const uint32_t count = hist[c * kSubs + s];
        hist[c * kSubs + s] = static_cast<uint32_t>(total);
        total += count;
      }
    }
    sub_begin[kSubs] = total;
    word.resize(total);
    pool.ParallelFor(chunks, [&](size_t c, int) {
      uint32_t* hc = hist.data() + c * kSubs;
      for (size_t i = m * c / chunks; i < m * (c + 1) / chunks; ++i) {
        ForEachKey(sets, i, ps.first, ps.last, [&](uint32_t key, bool lead) {
          size_t sub;
          if (place(key, &sub)) word[hc[sub]++] = uint64_t{key} << 33 | uint64_t{lead} << 32 | i;
        });
      }
    });
    // Sort each sub-bucket and join every run of equal keys that has a
    // lead: without one, no pair of the run can be tested in its bucket
    // (nor in a finer one), and its members are not looked at.
    pool.ParallelFor(kSubs, [&](size_t s, int worker) {
      BucketJoin& out = outs[static_cast<size_t>(worker)];
      uint64_t* b = word.data() + sub_begin[s];
      uint64_t* e = word.data() + sub_begin[s + 1];
      std::sort(b, e);
      std::vector<uint32_t> members;
      uint16_t path[kMaxLevel + 1];
      for (uint64_t* x = b; x < e;) {
        uint64_t* y = x + 1;
        bool lead = false;
        for (; y < e && (*y >> 33) == (*x >> 33); ++y) lead |= (*y >> 32 & 1) != 0;
        if (y - x >= 2 && (lead || (*x >> 32 & 1) != 0)) {
          members.clear();
          for (uint64_t* u = x; u < y; ++u) members.push_back(static_cast<uint32_t>(*u));
          const auto key = static_cast<uint32_t>(*x >> 33);
          if (key & kSingle) {
            path[0] = static_cast<uint16_t>(key);
            out.Bucket(members, path, 1);
          } else {
            path[0] = static_cast<uint16_t>(key >> kTokenBits);
            path[1] = static_cast<uint16_t>(key & (kTokens - 1));
            out.Bucket(members, path, 2);
          }
        }
        x = y;
      }
    });
  }
  if (opt.progress) opt.progress("short join", passes, passes);
  std::vector<uint64_t>().swap(word);
  // The token sets are read no more: freed before the pairs are gathered.
  sets = TokenSets();
  for (const BucketJoin& out : outs) {
    st.candidates += out.candidates;
    st.tested += out.tested;
    st.rejected += out.rejected;
    st.largest_bucket = std::max(st.largest_bucket, out.largest);
    st.confirmed += out.pairs.size();
    st.beyond_k += out.beyond.size();
  }

  // 4. The long groups: the plan's bands over them alone.
  std::vector<IdPair> long_pairs;
  if (long_groups.size() >= 2) {
    std::vector<Fingerprint> fps(long_groups.size());
    for (size_t i = 0; i < long_groups.size(); ++i) {
      const auto& [hi, lo] = plan.words[long_groups[i]];
      fps[i] = plan.bits == 64 ? Fingerprint::From64(lo) : Fingerprint::From128(hi, lo);
    }
    BandJoinOptions bopt;
    bopt.threads = opt.threads;
    bopt.progress = opt.progress;
    bopt.components_only = ComponentsOnly(opt);
    NEARDUP_RETURN_IF_ERROR(
        SimHashBandJoin(fps, opt.k, plan.report.bands, bopt, &long_pairs, band_stats));
  }
  // The pairs at their size (24 bytes), with their distances (those of the
  // words, as tested), each worker's freed once copied; then sorted, each
  // once.
  pairs->reserve(st.confirmed + long_pairs.size() + (together ? st.beyond_k : 0));
  if (beyond && !together) beyond_k->reserve(st.beyond_k);
  // A worker's pairs (group a << 32 | group b) appended to `to` and freed.
  const auto take = [&plan](std::vector<uint64_t>& from, std::vector<IdPair>* to) {
    for (const uint64_t p : from) {
      const auto ga = static_cast<uint32_t>(p >> 32), gb = static_cast<uint32_t>(p);
      const auto& wa = plan.words[ga];
      const auto& wb = plan.words[gb];
      const int d = std::popcount(wa.first ^ wb.first) + std::popcount(wa.second ^ wb.second);
      to->push_back({ga, gb, d});
    }
    std::vector<uint64_t>().swap(from);
  };
  for (BucketJoin& out : outs) {
    take(out.pairs, pairs);
    take(out.beyond, beyond_k);
  }
  if (beyond && !together) {
    MergePairs(beyond_k);
    st.beyond_k = beyond_k->size();
  }
  for (const IdPair& p : long_pairs) {
    pairs->push_back({long_groups[p.a], long_groups[p.b], p.distance});
  }
  MergePairs(pairs);
  if (together) {
    // Each pair once: those beyond k are the rule's.
    st.beyond_k = static_cast<size_t>(std::count_if(
        pairs->begin(), pairs->end(), [&opt](const IdPair& p) { return p.distance > opt.k; }));
  }
  *short_stats = st;
  return Status::OK();
}

namespace {

// The second layout's order of the slots: a fixed Fisher-Yates shuffle.
std::array<uint8_t, kSketchSlots> ShuffledSlots() {
  std::array<uint8_t, kSketchSlots> order;
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint8_t>(i);
  uint64_t state = 0x73686f727462616eULL;
  for (size_t i = order.size() - 1; i > 0; --i) {
    state = SplitMix64(state);
    std::swap(order[i], order[state % (i + 1)]);
  }
  return order;
}

// The key of the band at positions first..first + 3 of a layout's slot
// order (`order`) of sketch s: 4 values (8 bits each, 0 where empty) and the
// 4 empty marks above them. With one value only, 8 bits (and where the
// others are empty) are too weak a key (tiny sketches met by chance in most
// such bands): for a sparse sketch (at most kSparseValues values), the
// next two slots after the band (in the layout's order, circular) that hold
// a value extend it (their distances and values, mixed into 24 bits in the
// empty bytes); otherwise (bands of two values or more are many) no key. kNoKey when the
// band holds no value.
constexpr uint64_t kNoKey = ~uint64_t{0};
uint64_t BandKey(const JaccardSketch& s, const std::array<uint8_t, kSketchSlots>& order, int first,
                 const uint64_t* held) {
  // held: the slots holding a value, in the layout's order (2 words).
  const uint64_t bits = (held[first / 64] >> (first % 64)) & 0xF;
  if (bits == 0) return kNoKey;
  const int n = std::popcount(bits);
  const bool sparse = std::popcount(held[0]) + std::popcount(held[1]) <= kSparseValues;
  if (n == 1 && !sparse) return kNoKey;
  uint64_t values = 0;
  for (uint64_t m = bits; m != 0; m &= m - 1) {
    const int i = std::countr_zero(m);
    values |= uint64_t{s.slot[order[static_cast<size_t>(first + i)]]} << (8 * i);
  }
  if (n == 1) {
    // The next two values (their distances and values), mixed into the 24
    // bits the empty bytes leave.
    uint64_t ext = 0;
    int found = 0;
    const auto scan = [&](int lo, int hi) {  // positions [lo, hi), ascending
      for (int w = lo / 64; lo < hi && w <= (hi - 1) / 64 && found < 2; ++w) {
        uint64_t m = held[w];
        if (w * 64 < lo) m &= ~uint64_t{0} << (lo - w * 64);
        if ((w + 1) * 64 > hi) m &= (uint64_t{1} << (hi - w * 64)) - 1;
        for (; m != 0 && found < 2; m &= m - 1) {
          const int q = w * 64 + std::countr_zero(m);
          const int d = (q - first + kSketchSlots) % kSketchSlots;
          ext = ext << 16 | uint64_t(d) << 8 | s.slot[order[static_cast<size_t>(q)]];
          ++found;
        }
      }
    };
    scan(first + kShortBandSlots, kSketchSlots);
    scan(0, first);
    values = values >> (8 * std::countr_zero(bits)) | (SplitMix64(ext) & 0xFFFFFF) << 8;
  }
  return (~bits & 0xF) << 32 | values;
}

// The key BandKey gives a band of two values or more (bits: its slots
// holding a value), from the band's 4 slot values in the layout's order:
// the values (0 where empty) and the empty marks.
uint64_t FullBandKey(const uint8_t* v, uint32_t bits) {
  uint64_t values = 0;
  for (int i = 0; i < kShortBandSlots; ++i) {
    values |= uint64_t{(bits >> i & 1) != 0 ? v[i] : uint8_t{0}} << (8 * i);
  }
  return (~uint64_t{bits} & 0xF) << 32 | values;
}

// Sorts the entries (key << id_bits | id, ids increasing in the input) as
// std::sort would: a stable LSD radix sort of the key bits, 12 at a time
// (the ids stay in order within a key). scratch, counts: buffers it
// reuses.
void SortByKey(std::vector<uint64_t>* entries, int id_bits, std::vector<uint64_t>* scratch,
               std::vector<uint32_t>* counts) {
  constexpr int kDigitBits = 12;
  constexpr size_t kDigits = size_t{1} << kDigitBits;
  std::vector<uint64_t>& a = *entries;
  if (a.size() < 256) {
    std::sort(a.begin(), a.end());
    return;
  }
  const int passes = (64 - id_bits + kDigitBits - 1) / kDigitBits;
  std::vector<uint32_t>& count = *counts;
  count.assign(kDigits * static_cast<size_t>(passes), 0);
  for (const uint64_t e : a) {
    for (int p = 0; p < passes; ++p) {
      ++count[static_cast<size_t>(p) * kDigits + (e >> (id_bits + kDigitBits * p) & (kDigits - 1))];
    }
  }
  scratch->resize(a.size());
  uint64_t* from = a.data();
  uint64_t* to = scratch->data();
  for (int p = 0; p < passes; ++p) {
    uint32_t* c = count.data() + static_cast<size_t>(p) * kDigits;
    if (c[from[0] >> (id_bits + kDigitBits * p) & (kDigits - 1)] == a.size())
      continue;  // one digit
    uint32_t total = 0;
    for (size_t d = 0; d < kDigits; ++d) total += std::exchange(c[d], total);
    const int shift = id_bits + kDigitBits * p;
    for (size_t i = 0; i < a.size(); ++i) to[c[from[i] >> shift & (kDigits - 1)]++] = from[i];
    std::swap(from, to);
  }
  if (from != a.data()) std::memcpy(a.data(), from, a.size() * sizeof(uint64_t));
}

// Layout 0's order of the slots and layout 1's.
const std::array<std::array<uint8_t, kSketchSlots>, 2>& LayoutOrders() {
  static const std::array<std::array<uint8_t, kSketchSlots>, 2> orders = [] {
    std::array<std::array<uint8_t, kSketchSlots>, 2> o;
    for (size_t i = 0; i < kSketchSlots; ++i) o[0][i] = static_cast<uint8_t>(i);
    o[1] = ShuffledSlots();
    return o;
  }();
  return orders;
}

}  // namespace

const std::array<uint8_t, kSketchSlots>& ShortBandOrder(int layout) {
  return LayoutOrders()[layout == 0 ? 0 : 1];
}

Result<std::vector<std::pair<uint32_t, uint32_t>>> ShortSketchPairs(SketchView sketches,
                                                                    std::span<const size_t> who,
                                                                    size_t short_features, double t,
                                                                    int threads) {
  static_assert(kSketchSlots % kShortBandSlots == 0 &&
                kShortBands == 2 * (kSketchSlots / kShortBandSlots));
  constexpr int kIdBits = 28;
  if (who.size() >= (size_t{1} << kIdBits)) {
    return Status::InvalidArgument("the sketch short rule takes fewer than 2^28 documents");
  }
  if (!(t > 0 && t <= 1)) return Status::InvalidArgument("short_jaccard must be in (0, 1]");
  const double limit = static_cast<double>(short_features) / t;
  std::vector<uint32_t> part;  // the participants, positions in `who`
  for (size_t i = 0; i < who.size(); ++i) {
    const uint32_t f = sketches.features(who[i]);
    if (f > 0 && static_cast<double>(f) < limit) part.push_back(static_cast<uint32_t>(i));
  }
  std::vector<std::pair<uint32_t, uint32_t>> out;
  if (part.size() < 2 || short_features == 0) return out;
  // Per participant, what the bands and the buckets read, in one row (48
  // bytes): its sketch (an array's element, or a packed store's position:
  // unpacked where read), its feature count (the size filter) and, per
  // layout, the slots holding a value in the layout's order (the band keys;
  // layout 0's give the buckets' bound on the estimate).
  struct Row {
    std::array<uint64_t, 4> held;
    size_t doc;  // its sketch: dense[doc], or the packed store's
    uint32_t features;
  };
  const bool packed = sketches.packed();
  const JaccardSketch* dense = sketches.dense().data();
  constexpr int kPerLayout = kSketchSlots / kShortBandSlots;
  constexpr uint64_t kIdMask = (uint64_t{1} << kIdBits) - 1;
  const auto& orders = LayoutOrders();
  // Layout 1's occupancy from layout 0's, 8 slots at a time: for slots
  // 8c..8c + 7 holding the values of the byte, the positions of layout 1
  // they take (16 tables of 256; 64 KB).
  std::vector<std::array<uint64_t, 2>> spread(kSketchSlots / 8 * 256, {0, 0});
  {
    std::array<uint8_t, kSketchSlots> where;  // slot -> its position in layout 1
    for (size_t q = 0; q < kSketchSlots; ++q) where[orders[1][q]] = static_cast<uint8_t>(q);
    for (size_t c = 0; c < kSketchSlots / 8; ++c) {
      for (size_t byte = 0; byte < 256; ++byte) {
        std::array<uint64_t, 2>& m = spread[c * 256 + byte];
        for (size_t bit = 0; bit < 8; ++bit) {
          if ((byte >> bit & 1) == 0) continue;
          const size_t q = where[8 * c + bit];
          m[q / 64] |= uint64_t{1} << (q % 64);
        }
      }
    }
  }
  std::vector<Row> rows(part.size());
  for (size_t i = 0; i < part.size(); ++i) {
    const size_t doc = who[part[i]];
    const std::array<uint64_t, 2> full = sketches.Occupancy(doc);
    const uint64_t w0 = full[0], w1 = full[1];
    uint64_t p[2] = {0, 0};  // layout 1, in registers (not through memory)
    for (size_t c = 0; c < kSketchSlots / 8; ++c) {
      const auto byte = static_cast<size_t>(((c < 8 ? w0 : w1) >> (8 * (c % 8))) & 0xFF);
      const std::array<uint64_t, 2>& m = spread[c * 256 + byte];
      p[0] |= m[0];
      p[1] |= m[1];
    }
    rows[i] = {{w0, w1, p[0], p[1]}, doc, sketches.features(doc)};
  }
  // Participant i's sketch: the array's, or unpacked into *local.
  const auto sketch = [&](uint32_t i, JaccardSketch* local) -> const JaccardSketch& {
    if (!packed) return dense[rows[i].doc];
    *local = sketches.Get(rows[i].doc);
    return *local;
  };
  const auto key_of = [&](uint32_t i, int b) {
    const int layout = b / kPerLayout;
    JaccardSketch local;
    return BandKey(sketch(i, &local), orders[static_cast<size_t>(layout)],
                   (b % kPerLayout) * kShortBandSlots,
                   rows[i].held.data() + 2 * static_cast<size_t>(layout));
  };
  // A bucket's member: its feature count, position and layout 0's
  // occupancy masks (the bound on the estimate), in one array.
  struct Member {
    uint32_t features, id;
    std::array<uint64_t, 2> held;
  };
  constexpr int kBandsPerTask = 8;
  constexpr int kSeenBits = 16;
  constexpr uint64_t kPassed = uint64_t{1} << 63;  // pairs use 2 x 28 bits
  struct Worker {
    std::vector<std::pair<uint32_t, uint32_t>> found;  // positions in `part`
    std::vector<Member> members;
    // Recent estimates: pair + 1 (0: none), kPassed when it passed.
    std::vector<uint64_t> seen = std::vector<uint64_t>(size_t{1} << kSeenBits, 0);
    std::vector<uint64_t> scratch;                          // SortByKey's
    std::vector<uint32_t> counts;                           // SortByKey's
    std::array<std::vector<uint64_t>, kBandsPerTask> keys;  // a task's, per band
  };
  // The pairs of a bucket (entries: key << kIdBits | position), its members
  // by feature count: the smaller member (under short_features) first, its
  // partners up to its count / t. One larger than the cap is cut by the
  // next band of its layout (depth: bands taken so far).
  const double inv_t = 1 / t;
  std::function<void(std::span<uint64_t>, int, int, Worker*)> bucket = [&](std::span<uint64_t> run,
                                                                           int b, int depth,
                                                                           Worker* w) {
    if (run.size() <= kShortBucketCap || depth == kPerLayout) {
      auto& m = w->members;
      m.clear();
      for (size_t u = 0; u < run.size(); ++u) {
        const auto i = static_cast<uint32_t>(run[u] & kIdMask);
        const Row& row = rows[i];
        m.push_back({row.features, i, {row.held[0], row.held[1]}});
      }
      std::sort(m.begin(), m.end(), [](const Member& x, const Member& y) {
        return x.features != y.features ? x.features < y.features : x.id < y.id;
      });
      for (size_t x = 0; x < m.size() && m[x].features < short_features; ++x) {
        const double most = static_cast<double>(m[x].features) * inv_t + 1e-9;
        for (size_t y = x + 1; y < m.size() && static_cast<double>(m[y].features) <= most; ++y) {
          const uint32_t a = m[x].id, c = m[y].id;
          // The estimate is at most both / slots (matches <= both):
          // from the occupancy masks alone, most pairs of a bucket cut
          // by shared words stop here (89 % of the short records').
          const uint64_t* ha = m[x].held.data();
          const uint64_t* hc = m[y].held.data();
          const int both = std::popcount(ha[0] & hc[0]) + std::popcount(ha[1] & hc[1]);
          const int slots = std::popcount(ha[0] | hc[0]) + std::popcount(ha[1] | hc[1]);
          if (static_cast<double>(both) < (t - 1e-9) * slots) continue;
          // A pair that meets in several bands is estimated once per
          // worker while it stays in the worker's table of recent
          // outcomes (and held once: a pair found again is not).
          const uint64_t pk = uint64_t{std::min(a, c)} << 32 | std::max(a, c);
          uint64_t& seen = w->seen[(pk * 0x9e3779b97f4a7c15ULL) >> (64 - kSeenBits)];
          if ((seen & ~kPassed) == pk + 1) continue;
          const bool pass = (packed ? sketches.Jaccard(rows[a].doc, rows[c].doc)
                                    : SketchJaccard(dense[rows[a].doc], dense[rows[c].doc])) >= t;
          seen = (pk + 1) | (pass ? kPassed : 0);
          if (pass) w->found.emplace_back(std::min(a, c), std::max(a, c));
        }
      }
      return;
    }
    const int layout = b / kPerLayout;
    const int next = layout * kPerLayout + (b % kPerLayout + depth) % kPerLayout;
    for (uint64_t& e : run) {
      const auto i = static_cast<uint32_t>(e & kIdMask);
      const uint64_t k = key_of(i, next);
      // An empty band matches an empty band here: the bucket agrees so far.
      e = (k == kNoKey ? (uint64_t{1} << 36) - 1 : k) << kIdBits | i;
    }
    std::sort(run.begin(), run.end());
    for (size_t i = 0; i < run.size();) {
      size_t j = i + 1;
      while (j < run.size() && (run[j] >> kIdBits) == (run[i] >> kIdBits)) ++j;
      if (j - i > 1) bucket(run.subspan(i, j - i), b, depth + 1, w);
      i = j;
    }
  };
  // Bands in tasks of kBandsPerTask: one pass over the sketches gives a
  // task's keys (the sketches are read once a task, not once a band).
  static_assert(kShortBands % kBandsPerTask == 0);
  constexpr int kTasks = kShortBands / kBandsPerTask;
  const int workers = std::max(1, std::min(ResolveThreadCount(threads), kTasks));
  std::vector<Worker> work(static_cast<size_t>(workers));
  ParallelFor(static_cast<size_t>(kTasks), workers, [&](size_t task, int worker) {
    Worker& w = work[static_cast<size_t>(worker)];
    // The worker's buffers, kept from task to task (not given back to the
    // system and faulted in again: that was 9 % of a run).
    auto& keys = w.keys;
    for (auto& k : keys) k.clear();
    const int first = static_cast<int>(task) * kBandsPerTask;
    const int layout = first / kPerLayout;
    const auto& order = orders[static_cast<size_t>(layout)];
    // The task's 32 positions of its layout: one 32-bit word of `held`.
    constexpr int kTaskSlots = kBandsPerTask * kShortBandSlots;
    static_assert(kTaskSlots == 32 && kPerLayout % kBandsPerTask == 0);
    const int pos0 = (first % kPerLayout) * kShortBandSlots;
    constexpr uint32_t kAhead = 8;
    for (uint32_t i = 0; i < part.size(); ++i) {
      // The task reads 32 bytes (layout 0) or the 128 slots (layout 1) of
      // each sketch: fetched ahead (it waited on them: a third of its time).
      if (!packed && i + kAhead < part.size()) {
        const JaccardSketch& next = dense[rows[i + kAhead].doc];
        if (layout == 0) {
          __builtin_prefetch(next.slot.data() + pos0);
        } else {
          __builtin_prefetch(next.slot.data());
          __builtin_prefetch(next.slot.data() + 64);
        }
      }
      const uint64_t* h = rows[i].held.data() + 2 * static_cast<size_t>(layout);
      const auto task_bits = static_cast<uint32_t>(h[pos0 / 64] >> (pos0 % 64));
      if (task_bits == 0) continue;
      JaccardSketch local;
      const JaccardSketch& sk = sketch(i, &local);
      const bool sparse = std::popcount(h[0]) + std::popcount(h[1]) <= kSparseValues;
      // The task's slot values in the layout's order.
      std::array<uint8_t, kTaskSlots> v;
      if (layout == 0) {
        std::memcpy(v.data(), sk.slot.data() + pos0, kTaskSlots);
      } else {
        for (int q = 0; q < kTaskSlots; ++q) {
          v[static_cast<size_t>(q)] = sk.slot[order[static_cast<size_t>(pos0 + q)]];
        }
      }
      for (int d = 0; d < kBandsPerTask; ++d) {
        const uint32_t bits = task_bits >> (kShortBandSlots * d) & 0xF;
        if (bits == 0) continue;
        uint64_t key;
        if (std::has_single_bit(bits)) {
          if (!sparse) continue;
          key = BandKey(sk, order, pos0 + kShortBandSlots * d, h);
        } else {
          key = FullBandKey(v.data() + kShortBandSlots * d, bits);
        }
        keys[static_cast<size_t>(d)].push_back(key << kIdBits | i);
      }
    }
    for (int d = 0; d < kBandsPerTask; ++d) {
      std::vector<uint64_t>& k = keys[static_cast<size_t>(d)];
      SortByKey(&k, kIdBits, &w.scratch, &w.counts);
      // The entries of buckets of two or more, moved to the front (most keys
      // are alone), so that their rows and sketches, scattered, can be
      // fetched ahead of the buckets that read them.
      size_t kept = 0;
      for (size_t i = 0; i < k.size();) {
        size_t j = i + 1;
        while (j < k.size() && (k[j] >> kIdBits) == (k[i] >> kIdBits)) ++j;
        if (j - i > 1) {
          for (size_t u = i; u < j; ++u) k[kept++] = k[u];
        }
        i = j;
      }
      constexpr size_t kRowsAhead = 16, kSketchesAhead = 8;
      for (size_t u = 0; u < std::min(kept, kRowsAhead); ++u) {
        __builtin_prefetch(&rows[k[u] & kIdMask]);
      }
      for (size_t i = 0; i < kept;) {
        size_t j = i + 1;
        while (j < kept && (k[j] >> kIdBits) == (k[i] >> kIdBits)) ++j;
        for (size_t u = i; u < j; ++u) {
          if (u + kRowsAhead < kept) __builtin_prefetch(&rows[k[u + kRowsAhead] & kIdMask]);
          if (!packed && u + kSketchesAhead < kept) {
            const auto* next =
                reinterpret_cast<const char*>(&dense[rows[k[u + kSketchesAhead] & kIdMask].doc]);
            __builtin_prefetch(next);
            __builtin_prefetch(next + 64);
            __builtin_prefetch(next + 128);
          }
        }
        bucket(std::span<uint64_t>(k).subspan(i, j - i), first + d, 1, &w);
        i = j;
      }
      k.clear();
      // A pair found in several bands is held once per band: merged now and
      // then so that a worker's list stays near its distinct pairs.
      if (w.found.size() > 4 * (part.size() + 1024)) {
        std::sort(w.found.begin(), w.found.end());
        w.found.erase(std::unique(w.found.begin(), w.found.end()), w.found.end());
      }
    }
  });
  for (Worker& w : work) {
    w.keys = {};  // the buffers, freed before the pairs are gathered
    std::vector<uint64_t>().swap(w.scratch);
    for (const auto& [a, c] : w.found) out.emplace_back(part[a], part[c]);
    std::vector<std::pair<uint32_t, uint32_t>>().swap(w.found);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool TakesPartInShortSketchRule(const DedupOptions& options, const JaccardSketch& sketch) {
  return TakesPartInShortSketchRule(options, sketch.features);
}

bool TakesPartInShortSketchRule(const DedupOptions& options, uint32_t features) {
  if (options.short_features == 0 || !(options.short_jaccard > 0)) return false;
  const double limit = static_cast<double>(options.short_features) / options.short_jaccard;
  return features > 0 && static_cast<double>(features) < limit;
}

Result<size_t> AddShortSketchRulePairs(SketchView sketches, std::span<const size_t> who,
                                       std::span<const uint64_t> groups,
                                       const std::function<Fingerprint(size_t)>& fingerprint,
                                       std::span<const IdPair> routed, const DedupOptions& options,
                                       std::vector<IdPair>* group_pairs) {
  NEARDUP_ASSIGN_OR_RETURN(const auto pairs,
                           ShortSketchPairs(sketches, who, options.short_features,
                                            options.short_jaccard, options.threads));
  const size_t before = group_pairs->size();
  // Reserved once: no doubling of the join's pairs while the old block is held.
  group_pairs->reserve(before + routed.size() + pairs.size());
  group_pairs->insert(group_pairs->end(), routed.begin(), routed.end());
  for (const auto& [a, b] : pairs) {
    const int d = HammingDistance(fingerprint(a), fingerprint(b));
    if (d <= options.k) continue;
    group_pairs->push_back({groups[a], groups[b], d});
  }
  // Counted once merged (a routed pair may also come from the bands).
  if (group_pairs->size() > before) MergePairs(group_pairs);
  return group_pairs->size() - before;
}

}  // namespace neardup::dedup_internal
