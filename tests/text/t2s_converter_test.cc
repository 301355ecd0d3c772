// Copyright 2026 The neardup Authors.
//
// The Traditional-to-Simplified conversion (src/text/t2s_converter.h, tables
// built from OpenCC's dictionaries) against opencc::SimpleConverter itself,
// byte for byte: every zh_TW man page of manpages-zh as the quick start reads
// it (roff text), a tenth of them as raw roff source, seeded random splices of
// their text (new junctions between phrases), and edge cases. Then the
// normalizer as a whole (NFKC_Casefold + tw2sp) against ICU + OpenCC.

#include "text/t2s_converter.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "neardup/text.h"
#include "tests/testing/test_util.h"
#include "tests/testing/text_oracle.h"

namespace neardup {
namespace {

constexpr char kManDir[] = "/usr/share/man/zh_TW";

std::vector<Document> ReadPages(InputFormat format) {
  ReadOptions options;
  options.format = format;
  auto reader = DocumentReader::Open({kManDir}, options);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  std::vector<Document> docs;
  Document doc;
  while ((*reader)->Next(&doc)) docs.push_back(doc);
  return docs;
}

class T2sConverterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::is_directory(kManDir)) {
      NEARDUP_SKIP_OUTSIDE_CI(std::string(kManDir) + " is absent (apt-get install manpages-zh)");
    }
    auto converter = text::T2sConverter::Create("tw2sp.json");
    ASSERT_TRUE(converter.ok()) << converter.status().ToString();
    converter_ = std::move(*converter);
  }

  std::unique_ptr<text::T2sConverter> converter_;
  testing::OpenccOracle opencc_{"tw2sp.json"};
};

TEST_F(T2sConverterTest, EveryZhTwManPage) {
  const std::vector<Document> pages = ReadPages(InputFormat::kRoff);
  EXPECT_GE(pages.size(), 700u);
  size_t changed = 0;
  for (const Document& page : pages) {
    const std::string expected = opencc_.Convert(page.text);
    ASSERT_EQ(converter_->Convert(page.text), expected) << page.id;
    changed += expected != page.text ? 1 : 0;
  }
  EXPECT_GT(changed, pages.size() / 2);  // the pages are Traditional: most change
}

TEST_F(T2sConverterTest, RawRoffSource) {
  const std::vector<Document> pages = ReadPages(InputFormat::kText);
  for (size_t i = 0; i < pages.size(); i += 10) {
    ASSERT_EQ(converter_->Convert(pages[i].text), opencc_.Convert(pages[i].text)) << pages[i].id;
  }
}

TEST_F(T2sConverterTest, RandomSplices) {
  const std::vector<Document> pages = ReadPages(InputFormat::kRoff);
  ASSERT_FALSE(pages.empty());
  std::mt19937_64 rng(2);
  auto piece = [&]() {
    const std::string& t = pages[rng() % pages.size()].text;
    size_t b = rng() % (t.size() + 1), e = b + rng() % 40;
    while (b > 0 && (static_cast<unsigned char>(t[b]) & 0xC0) == 0x80) --b;
    e = std::min(e, t.size());
    while (e < t.size() && (static_cast<unsigned char>(t[e]) & 0xC0) == 0x80) ++e;
    return t.substr(b, e - b);
  };
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    for (int k = static_cast<int>(rng() % 5); k >= 0; --k) text += piece();
    ASSERT_EQ(converter_->Convert(text), opencc_.Convert(text)) << "'" << text << "'";
  }
}

TEST_F(T2sConverterTest, EdgeCases) {
  for (const std::string& text :
       {std::string(), std::string("ascii only"), std::string("軟體"), std::string("在軟體中"),
        std::string("滑鼠與記憶體，資料夾"), std::string("臺灣的軟體\0後面", 20),
        std::string("𠀀軟體😀"), std::string("\xe8\xbb\x9f")}) {
    EXPECT_EQ(converter_->Convert(text), opencc_.Convert(text)) << "'" << text << "'";
  }
}

TEST_F(T2sConverterTest, NormalizerMatchesIcuThenOpencc) {
  NormalizeOptions options;
  options.t2s = "tw2sp";
  auto norm = Normalizer::Create(options);
  ASSERT_TRUE(norm.ok()) << norm.status().ToString();
  const std::vector<Document> pages = ReadPages(InputFormat::kRoff);
  for (size_t i = 0; i < pages.size(); i += 3) {
    const std::string nfkc = testing::IcuNfkcCasefold(pages[i].text);
    ASSERT_EQ((*norm)->Normalize(pages[i].text), opencc_.Convert(nfkc)) << pages[i].id;
  }
}

}  // namespace
}  // namespace neardup
