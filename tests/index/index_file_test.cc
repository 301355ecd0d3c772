// Copyright 2026 The neardup Authors.
//
// The index file format: round trips, and hostile files (truncated, flipped
// bytes, wrong magic / version / type) give a clear error, never a crash.

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "neardup/index.h"
#include "tests/testing/hamming_oracle.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using testing::FlipBits;
using testing::RandomFingerprint;

struct Corpus {
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
};

Corpus MakeCorpus(int bits, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Corpus c;
  for (size_t i = 0; i < n; ++i) {
    c.ids.push_back(rng());
    c.fps.push_back(i % 2 == 1 ? FlipBits(c.fps.back(), static_cast<int>(i % 4), rng)
                               : RandomFingerprint(bits, rng));
  }
  return c;
}

// Every query answer and the self-join, for comparing two indexes.
std::vector<std::vector<Neighbor>> Answers(const HammingIndex& index, const Corpus& c, int k) {
  std::vector<std::vector<Neighbor>> out;
  for (const Fingerprint& q : c.fps) {
    out.emplace_back();
    EXPECT_TRUE(index.Search(q, k, &out.back()).ok());
  }
  std::vector<IdPair> pairs;
  EXPECT_TRUE(index.SelfJoin(k, 1, &pairs).ok());
  out.emplace_back();
  for (const IdPair& p : pairs) out.back().push_back({p.a ^ p.b, p.distance});
  return out;
}

class IndexFileTest : public ::testing::TestWithParam<std::tuple<int, IndexType>> {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir("index_file"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<HammingIndex> Make(const Corpus& c) {
    const auto [bits, type] = GetParam();
    if (type == IndexType::kLinearScan)
      return std::move(*LinearScanIndex::Build(bits, c.ids, c.fps));
    PermutedTableOptions opt;
    opt.bits = bits;
    opt.max_k = 3;
    return std::move(*PermutedTableIndex::Build(opt, c.ids, c.fps));
  }

  std::string dir_;
};

TEST_P(IndexFileTest, RoundTrip) {
  const auto [bits, type] = GetParam();
  const Corpus c = MakeCorpus(bits, 500, 1);
  auto index = Make(c);
  const std::string path = dir_ + "/a.ndx";
  ASSERT_TRUE(index->Save(path).ok());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  auto loaded = LoadIndex(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->type(), type);
  EXPECT_EQ((*loaded)->bits(), bits);
  EXPECT_EQ((*loaded)->size(), c.ids.size());
  EXPECT_EQ(Answers(**loaded, c, 3), Answers(*index, c, 3));
  // Header + entries + checksum.
  EXPECT_EQ(std::filesystem::file_size(path), 40 + 500 * (bits == 64 ? 16u : 24u) + 8);

  // An empty index round-trips too.
  auto empty = Make(Corpus{});
  ASSERT_TRUE(empty->Save(path).ok());
  auto loaded_empty = LoadIndex(path);
  ASSERT_TRUE(loaded_empty.ok());
  EXPECT_EQ((*loaded_empty)->size(), 0u);
}

TEST_P(IndexFileTest, TruncatedAndFlippedFilesGiveClearErrors) {
  const auto [bits, type] = GetParam();
  const Corpus c = MakeCorpus(bits, 40, 2);
  auto index = Make(c);
  const std::string path = dir_ + "/b.ndx";
  ASSERT_TRUE(index->Save(path).ok());
  const std::string good = testing::ReadFile(path);
  const auto want = Answers(*index, c, 3);

  for (size_t len = 0; len < good.size(); ++len) {
    auto r = LoadIndexFromMemory(std::string_view(good).substr(0, len), "trunc.ndx");
    ASSERT_FALSE(r.ok()) << "length " << len;
    EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
    EXPECT_NE(r.status().message().find("trunc.ndx"), std::string::npos);
  }
  // One more byte is corruption as well.
  EXPECT_TRUE(LoadIndexFromMemory(good + "x", "long.ndx").status().IsCorruption());

  std::mt19937_64 rng(3);
  for (size_t pos = 0; pos < good.size(); ++pos) {
    for (int trial = 0; trial < 2; ++trial) {
      std::string bad = good;
      bad[pos] = static_cast<char>(bad[pos] ^ static_cast<char>(1 + rng() % 255));
      auto r = LoadIndexFromMemory(bad, "flip.ndx");
      if (r.ok()) {
        // Only possible if the checksum collided: then the answers must agree.
        EXPECT_EQ(Answers(**r, c, 3), want) << "byte " << pos;
        continue;
      }
      EXPECT_TRUE(r.status().IsCorruption() || r.status().IsNotSupported())
          << r.status().ToString();
      EXPECT_NE(r.status().message().find("flip.ndx"), std::string::npos);
      if (pos >= 8 && pos < 12) {
        EXPECT_TRUE(r.status().IsNotSupported()) << "version byte " << pos;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, IndexFileTest,
                         ::testing::Combine(::testing::Values(64, 128),
                                            ::testing::Values(IndexType::kLinearScan,
                                                              IndexType::kPermutedTable)));

TEST(IndexFileErrorsTest, SpecificMessages) {
  auto missing = LoadIndex("/nonexistent/dir/x.ndx");
  EXPECT_TRUE(missing.status().IsIOError());
  EXPECT_NE(missing.status().message().find("/nonexistent/dir/x.ndx"), std::string::npos);
  const std::string a_dir = testing::MakeTempDir("index_file_dir");
  auto directory = LoadIndex(a_dir);
  EXPECT_TRUE(directory.status().IsIOError()) << directory.status().ToString();

  EXPECT_NE(LoadIndexFromMemory("hello world, this is not an index at all.......", "m")
                .status()
                .message()
                .find("bad magic"),
            std::string::npos);

  auto index = LinearScanIndex::Create(64);
  const std::string dir = testing::MakeTempDir("index_file_errors");
  ASSERT_TRUE((*index)->Save(dir + "/e.ndx").ok());
  std::string bytes = testing::ReadFile(dir + "/e.ndx");
  bytes[8] = 2;  // version 2
  auto v = LoadIndexFromMemory(bytes, "v.ndx");
  EXPECT_TRUE(v.status().IsNotSupported());
  EXPECT_NE(v.status().message().find("version 2"), std::string::npos);

  // A huge entry count must not allocate: it fails the size check.
  bytes = testing::ReadFile(dir + "/e.ndx");
  for (int i = 32; i < 40; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>(0xff);
  auto huge = LoadIndexFromMemory(bytes, "huge.ndx");
  EXPECT_TRUE(huge.status().IsCorruption());
  EXPECT_NE(huge.status().message().find("size mismatch"), std::string::npos);

  // Unwritable destination.
  EXPECT_TRUE((*index)->Save("/nonexistent/dir/out.ndx").IsIOError());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace neardup
