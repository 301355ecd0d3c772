// Copyright 2026 The neardup Authors.

#include "store/chunker.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

namespace neardup::store_internal {
namespace {

// Spans must tile the input: in order, no gap, no overlap, nothing empty.
void ExpectTiles(std::string_view data, const std::vector<Span>& spans) {
  size_t pos = 0;
  for (const Span& s : spans) {
    ASSERT_EQ(s.offset, pos);
    ASSERT_GT(s.length, 0u);
    pos += s.length;
  }
  EXPECT_EQ(pos, data.size());
}

std::string RandomText(std::mt19937_64& rng, size_t n) {
  static const char* kPieces[] = {"今天", "天气", "。", "！",       "？", "\n",   "\r\n", "a",
                                  "?",    "!",    "”",  "\xff\xfe", " ",  "很好", "\x80"};
  std::string out;
  while (out.size() < n) out += kPieces[rng() % std::size(kPieces)];
  return out;
}

TEST(ChunkerTest, EverySplitterTilesItsInput) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    const std::string text = RandomText(rng, rng() % 5000);
    ExpectTiles(text, SplitParagraphs(text));
    ExpectTiles(text, SplitFixed(text, 1 + rng() % 300 + 16));
    ExpectTiles(text, SplitContentDefined(text, 64 << (rng() % 4)));
  }
  EXPECT_TRUE(SplitParagraphs("").empty());
  EXPECT_TRUE(SplitFixed("", 16).empty());
  EXPECT_TRUE(SplitContentDefined("", 64).empty());
}

std::vector<std::string> Pieces(std::string_view text, const std::vector<Span>& spans) {
  std::vector<std::string> out;
  for (const Span& s : spans) out.emplace_back(text.substr(s.offset, s.length));
  return out;
}

TEST(ChunkerTest, ParagraphsKeepTheirLineBreaks) {
  const std::string text = "一\r\n\n二。三\n四";
  EXPECT_EQ(Pieces(text, SplitParagraphs(text)),
            (std::vector<std::string>{"一\r\n", "\n", "二。三\n", "四"}));
}

TEST(ChunkerTest, LongParagraphsAreCut) {
  const std::string text(kMaxBlockBytes * 2 + 5, 'x');
  const auto spans = SplitParagraphs(text);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].length, kMaxBlockBytes);
  EXPECT_EQ(spans[2].length, 5u);
}

TEST(ChunkerTest, FixedSizeChunks) {
  const std::string text(100, 'a');
  const auto spans = SplitFixed(text, 30);
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[3].length, 10u);
}

TEST(ChunkerTest, ContentDefinedChunksRespectBoundsAndResync) {
  std::mt19937_64 rng(11);
  std::string data(1 << 20, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  const size_t avg = 1024;
  const auto spans = SplitContentDefined(data, avg);
  for (size_t i = 0; i + 1 < spans.size(); ++i) {
    EXPECT_GE(spans[i].length, avg / 4);
    EXPECT_LE(spans[i].length, avg * 8);
  }
  // Mean chunk size lands near the target.
  const double mean = static_cast<double>(data.size()) / static_cast<double>(spans.size());
  EXPECT_GT(mean, avg * 0.5);
  EXPECT_LT(mean, avg * 2.0);
  // Inserting bytes at the front moves only the first few boundaries.
  const std::string shifted = "XYZ" + data;
  std::set<std::string> before;
  for (const auto& p : Pieces(data, spans)) before.insert(p);
  size_t shared = 0;
  const auto after = Pieces(shifted, SplitContentDefined(shifted, avg));
  for (const auto& p : after) shared += before.count(p);
  EXPECT_GT(shared, after.size() * 9 / 10);
}

}  // namespace
}  // namespace neardup::store_internal
