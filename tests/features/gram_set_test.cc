// Copyright 2026 The neardup Authors.
//
// The fused pass's distinct-n-gram sets (src/features/gram_set.inc: buckets
// of one cache line, generations instead of clearing) against
// std::unordered_set, for both builds (slots compared one at a time, and
// with AVX2 where the CPU has it): random key streams in random batches,
// many documents on one table (stale slots of earlier documents, keys that
// come back), keys crowded into one home bucket (full buckets, the probe on
// to the next, the wrap from the last bucket to the first), growth within a
// document, and the generation's wrap-around (the table zeroed).

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <unordered_set>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GRAM_SET_TEST_X86 1
#else
#define GRAM_SET_TEST_X86 0
#endif

namespace neardup {
namespace {

__extension__ using U128 = unsigned __int128;

namespace scalar_set {
#define NEARDUP_GRAM_SET_AVX2 0
#include "features/gram_set.inc"
#undef NEARDUP_GRAM_SET_AVX2
}  // namespace scalar_set

#if GRAM_SET_TEST_X86
#pragma GCC push_options
#pragma GCC target("avx2,popcnt")
namespace avx2_set {
#define NEARDUP_GRAM_SET_AVX2 1
#include "features/gram_set.inc"
#undef NEARDUP_GRAM_SET_AVX2
}  // namespace avx2_set
#pragma GCC pop_options
#endif

bool HaveAvx2() {
#if GRAM_SET_TEST_X86
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
#else
  return false;
#endif
}

// A key of either slot type as two words (an ASCII key in `lo`).
struct Key {
  uint64_t lo, hi;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  size_t operator()(const Key& k) const { return k.lo * 31 + k.hi; }
};

template <typename Slot>
Slot MakeSlot(const Key& k) {
  if constexpr (requires { Slot{}.v; }) {
    return Slot{k.lo};
  } else {
    return Slot{k.lo, k.hi};
  }
}

// A random key of the slot's width: 35 bits (ASCII), or 64 + 41 bits.
template <typename Slot>
Key RandomKey(std::mt19937_64& rng) {
  const uint64_t lo = rng();
  if constexpr (requires { Slot{}.v; }) {
    return {lo & ((uint64_t{1} << 35) - 1), 0};
  } else {
    return {lo, rng() & ((uint64_t{1} << 41) - 1)};
  }
}

// Feeds `keys` to `set` in batches of random sizes (1 to 144, the pass's
// chunk) and to a std::unordered_set: the keys each batch reports new must
// be the same, in order. Returns the number of distinct keys.
template <typename Set, typename GramT, typename Slot>
size_t Feed(Set& set, const std::vector<Key>& keys, size_t expected, size_t slots_per_gram,
            std::mt19937_64& rng, const char* what) {
  set.Begin(expected, slots_per_gram);
  std::unordered_set<Key, KeyHash> reference;
  std::vector<GramT> grams;
  std::vector<uint32_t> fresh(144);
  size_t i = 0;
  while (i < keys.size()) {
    const size_t m = std::min<size_t>(keys.size() - i, 1 + rng() % 144);
    grams.clear();
    std::vector<uint32_t> want;
    for (size_t g = 0; g < m; ++g) {
      const Slot s = MakeSlot<Slot>(keys[i + g]);
      grams.push_back({s, s.Mix(), 0, 0});
      if (reference.insert(keys[i + g]).second) want.push_back(static_cast<uint32_t>(g));
    }
    const size_t r = set.InsertAllOutOfLine(grams.data(), m, fresh.data());
    EXPECT_EQ(std::vector<uint32_t>(fresh.begin(), fresh.begin() + static_cast<long>(r)), want)
        << what << " at key " << i;
    if (::testing::Test::HasFailure()) return reference.size();
    i += m;
  }
  EXPECT_EQ(set.size(), reference.size()) << what;
  return reference.size();
}

template <typename Slot>
std::vector<Key> RandomStream(std::mt19937_64& rng, size_t n, size_t alphabet) {
  // Keys drawn from `alphabet` distinct ones: repeats at any distance.
  std::vector<Key> pool(alphabet);
  for (Key& k : pool) k = RandomKey<Slot>(rng);
  std::vector<Key> keys(n);
  for (Key& k : keys) k = pool[rng() % alphabet];
  return keys;
}

// Random documents on one table: sizes from 0 to 5,000 keys, repeats from
// none to most, the expected size right, too small (growth) or too large.
template <template <typename> class SetT, template <typename> class GramT, typename Slot>
void RandomDocumentsOn(uint64_t seed, const char* what) {
  std::mt19937_64 rng(seed);
  SetT<Slot> set;
  for (int doc = 0; doc < 300; ++doc) {
    const size_t n = rng() % 4 == 0 ? rng() % 40 : rng() % 5000;
    const size_t alphabet = 1 + rng() % (n + 1);
    const std::vector<Key> keys = RandomStream<Slot>(rng, n, alphabet);
    const size_t expected = rng() % 3 == 0 ? rng() % (n / 8 + 1) : n + rng() % (n + 1);
    const size_t slots_per_gram = 2 + rng() % 15;  // quarters
    Feed<SetT<Slot>, GramT<Slot>, Slot>(set, keys, expected, slots_per_gram, rng, what);
    if (::testing::Test::HasFailure()) return;
  }
}

// The same keys document after document: each time all new (the slots of
// the document before are free), the repeats within a document found.
template <template <typename> class SetT, template <typename> class GramT, typename Slot>
void SameKeysEveryDocument(uint64_t seed, const char* what) {
  std::mt19937_64 rng(seed);
  SetT<Slot> set;
  const std::vector<Key> keys = RandomStream<Slot>(rng, 3000, 2000);
  for (int doc = 0; doc < 20; ++doc) {
    Feed<SetT<Slot>, GramT<Slot>, Slot>(set, keys, keys.size(), 8, rng, what);
    if (::testing::Test::HasFailure()) return;
  }
}

// Keys that share a home bucket: more than a bucket holds, so they spill
// into the next ones; the home the last bucket, so they wrap to the first.
// Then the same keys again (all there), and other keys that land in the
// buckets they spilled into.
template <template <typename> class SetT, template <typename> class GramT, typename Slot>
void CrowdedBuckets(uint64_t seed, const char* what) {
  std::mt19937_64 rng(seed);
  SetT<Slot> set;
  for (int doc = 0; doc < 40; ++doc) {
    const size_t expected = 64 + rng() % 200;
    set.Begin(expected, 8);
    const size_t buckets = set.buckets();
    set.SetGenerationForTest(set.generation() - 1);  // Feed's Begin: the same buckets
    const size_t home = doc % 2 == 0 ? buckets - 1 : rng() % buckets;
    const size_t crowd = 3 * SetT<Slot>::kSlots + rng() % (2 * SetT<Slot>::kSlots);
    std::vector<Key> keys;
    while (keys.size() < crowd) {
      const Key k = RandomKey<Slot>(rng);
      if (SetT<Slot>::Home(MakeSlot<Slot>(k).Mix(), buckets) == home) keys.push_back(k);
    }
    const size_t spilled = keys.size();
    // Keys of the next buckets, and repeats of the crowd.
    while (keys.size() < spilled + 3 * SetT<Slot>::kSlots) {
      const Key k = RandomKey<Slot>(rng);
      const size_t h = SetT<Slot>::Home(MakeSlot<Slot>(k).Mix(), buckets);
      if (h == (home + 1) % buckets || h == (home + 2) % buckets) keys.push_back(k);
    }
    for (size_t j = 0; j < spilled; ++j) keys.push_back(keys[rng() % spilled]);
    std::shuffle(keys.begin() + static_cast<long>(spilled), keys.end(), rng);
    Feed<SetT<Slot>, GramT<Slot>, Slot>(set, keys, expected, 8, rng, what);
    ASSERT_EQ(set.buckets(), buckets) << what << ": grew, the crowd was not tested";
    if (::testing::Test::HasFailure()) return;
  }
}

// The generation wraps: the table is zeroed, and documents go on right.
template <template <typename> class SetT, template <typename> class GramT, typename Slot>
void GenerationWraps(uint64_t seed, const char* what) {
  std::mt19937_64 rng(seed);
  SetT<Slot> set;
  const std::vector<Key> keys = RandomStream<Slot>(rng, 2000, 1500);
  Feed<SetT<Slot>, GramT<Slot>, Slot>(set, keys, keys.size(), 8, rng, what);
  set.SetGenerationForTest(SetT<Slot>::kMaxGeneration - 2);
  for (int doc = 0; doc < 6; ++doc) {
    Feed<SetT<Slot>, GramT<Slot>, Slot>(set, keys, keys.size() / (1 + doc % 3), 8, rng, what);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_LT(set.generation(), 10u) << what;
}

// Runs `test` on both key widths for the scalar build and, where the CPU
// has it, the AVX2 build.
#define GRAM_SET_BOTH_BUILDS(test, seed)                                                   \
  do {                                                                                     \
    test<scalar_set::GramSet, scalar_set::Gram, scalar_set::AsciiSlot>(seed, "scalar ascii"); \
    test<scalar_set::GramSet, scalar_set::Gram, scalar_set::WideSlot>(seed, "scalar wide");   \
    if (HaveAvx2()) {                                                                      \
      GRAM_SET_AVX2(test, seed);                                                           \
    }                                                                                      \
  } while (false)
#if GRAM_SET_TEST_X86
#define GRAM_SET_AVX2(test, seed)                                                        \
  test<avx2_set::GramSet, avx2_set::Gram, avx2_set::AsciiSlot>(seed, "avx2 ascii");     \
  test<avx2_set::GramSet, avx2_set::Gram, avx2_set::WideSlot>(seed, "avx2 wide")
#else
#define GRAM_SET_AVX2(test, seed) (void)0
#endif

TEST(GramSetTest, RandomDocumentsMatchUnorderedSet) {
  GRAM_SET_BOTH_BUILDS(RandomDocumentsOn, 1);
  GRAM_SET_BOTH_BUILDS(RandomDocumentsOn, 2);
}

TEST(GramSetTest, KeysComeBackNewEveryDocument) { GRAM_SET_BOTH_BUILDS(SameKeysEveryDocument, 3); }

TEST(GramSetTest, CrowdedBucketsSpillAndWrap) { GRAM_SET_BOTH_BUILDS(CrowdedBuckets, 4); }

TEST(GramSetTest, GenerationWrapsAround) { GRAM_SET_BOTH_BUILDS(GenerationWraps, 5); }

TEST(GramSetTest, BuildsPlaceSlotsAlike) {
  // Both builds report the same new keys for the same stream (each was
  // checked against std::unordered_set above); here the buckets' counts
  // after growth agree too.
  if (!HaveAvx2()) GTEST_SKIP() << "no AVX2";
#if GRAM_SET_TEST_X86
  std::mt19937_64 rng(6);
  scalar_set::GramSet<scalar_set::WideSlot> a;
  avx2_set::GramSet<avx2_set::WideSlot> b;
  const std::vector<Key> keys = RandomStream<scalar_set::WideSlot>(rng, 20000, 15000);
  std::mt19937_64 ra(7), rb(7);
  Feed<decltype(a), scalar_set::Gram<scalar_set::WideSlot>, scalar_set::WideSlot>(a, keys, 100, 8,
                                                                                  ra, "scalar");
  Feed<decltype(b), avx2_set::Gram<avx2_set::WideSlot>, avx2_set::WideSlot>(b, keys, 100, 8, rb,
                                                                           "avx2");
  EXPECT_EQ(a.buckets(), b.buckets());
  EXPECT_GT(a.buckets(), 100u);  // it grew
#endif
}

}  // namespace
}  // namespace neardup
