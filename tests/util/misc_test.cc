// Copyright 2026 The neardup Authors.
//
// SplitMix64, UnionFind and OrderedStringIndex.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/ordered_string_index.h"
#include "util/random.h"
#include "util/union_find.h"

namespace neardup {
namespace {

TEST(SplitMix64Test, FrozenValues) {
  static_assert(SplitMix64(0) == 0xE220A8397B1DCDAFULL);
  // The reference generator: state += gamma, then the finalizer.
  uint64_t state = 0x6e65617264757021ULL, z;
  state += 0x9e3779b97f4a7c15ULL;
  z = state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  EXPECT_EQ(SplitMix64(0x6e65617264757021ULL), z);
}

TEST(UnionFindTest, GroupsAndSizes) {
  UnionFind uf(6);
  EXPECT_TRUE(uf.Union(0, 1));
  EXPECT_TRUE(uf.Union(2, 1));
  EXPECT_FALSE(uf.Union(0, 2));
  EXPECT_TRUE(uf.Union(4, 5));
  EXPECT_EQ(uf.Find(0), uf.Find(2));
  EXPECT_NE(uf.Find(0), uf.Find(4));
  EXPECT_EQ(uf.SizeOf(1), 3u);
  EXPECT_EQ(uf.SizeOf(3), 1u);
  EXPECT_EQ(uf.SizeOf(5), 2u);
}

TEST(OrderedStringIndexTest, EntriesInOrderOfFirstInsertion) {
  const std::vector<std::string> words = {"b", "a", "b", "c", "a", "d"};
  OrderedStringIndex index;
  for (int round = 0; round < 2; ++round) {  // a Reset forgets everything
    index.Reset(words.size());
    std::vector<std::pair<uint32_t, bool>> got;
    for (const std::string& w : words) got.push_back(index.Insert(w));
    EXPECT_EQ(got, (std::vector<std::pair<uint32_t, bool>>{
                       {0, true}, {1, true}, {0, false}, {2, true}, {1, false}, {3, true}}));
    EXPECT_EQ(index.size(), 4u);
  }
  // Many distinct keys (more than the minimum table).
  std::vector<std::string> many;
  for (int i = 0; i < 1000; ++i) many.push_back(std::to_string(i));
  index.Reset(many.size());
  for (size_t i = 0; i < many.size(); ++i) EXPECT_EQ(index.Insert(many[i]).first, i);
  for (size_t i = 0; i < many.size(); ++i) EXPECT_FALSE(index.Insert(many[i]).second);
}

}  // namespace
}  // namespace neardup
