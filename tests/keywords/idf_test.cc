// Copyright 2026 The neardup Authors.
//
// IDF training: document frequencies, both seeds' formulas by hand, the
// round trip through idf.txt, and a corrupt file's error.

#include <gtest/gtest.h>

#include <cmath>

#include "neardup/keywords.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

TEST(IdfTest, FormulasByHand) {
  EXPECT_DOUBLE_EQ(IdfValue(IdfFormula::kSeed003, 3, 2), std::log(1.0));
  EXPECT_DOUBLE_EQ(IdfValue(IdfFormula::kSeed003, 3, 1), std::log(1.5));
  EXPECT_DOUBLE_EQ(IdfValue(IdfFormula::kSeed000, 3, 2), std::log(1.51));
  EXPECT_DOUBLE_EQ(IdfValue(IdfFormula::kSeed000, 3, 1), std::log(3.01));
  EXPECT_EQ(*ParseIdfFormula("seed000"), IdfFormula::kSeed000);
  EXPECT_EQ(IdfFormulaName(*ParseIdfFormula("seed003")), "seed003");
  EXPECT_TRUE(ParseIdfFormula("seed001").status().IsInvalidArgument());
}

class IdfBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto seg = Segmenter::Open(SegmenterOptions());
    ASSERT_TRUE(seg.ok()) << seg.status().ToString();
    segmenter_ = std::move(*seg);
  }
  std::unique_ptr<Segmenter> segmenter_;
};

TEST_F(IdfBuildTest, CountsDocumentsContainingEachCandidate) {
  // Candidates only: single characters (比, 高, ，) and stop words (the, is) do not count.
  std::vector<std::string_view> terms;
  DistinctTerms(*segmenter_, "the cat is a cat", &terms);
  EXPECT_EQ(terms, std::vector<std::string_view>{"cat"});

  IdfBuilder builder(segmenter_.get());
  builder.AddDocument("学生喜欢数学，学生喜欢数学。");  // 学生 喜欢 数学 (once each)
  builder.AddDocument("学生喜欢音乐");                  // 学生 喜欢 音乐
  builder.AddDocument("老师");                          // 老师
  EXPECT_EQ(builder.documents(), 3u);
  EXPECT_EQ(builder.terms(), 5u);
  // N = 3; df: 学生 2, 喜欢 2, 数学 1, 音乐 1, 老师 1.
  const IdfTable t3 = builder.Build(IdfFormula::kSeed003);
  EXPECT_DOUBLE_EQ(*t3.Find("学生"), std::log(3.0 / 3));
  EXPECT_DOUBLE_EQ(*t3.Find("数学"), std::log(3.0 / 2));
  const IdfTable t0 = builder.Build(IdfFormula::kSeed000);
  EXPECT_DOUBLE_EQ(*t0.Find("喜欢"), std::log(3.0 / 2 + 0.01));
  EXPECT_DOUBLE_EQ(*t0.Find("老师"), std::log(3.0 / 1 + 0.01));
  EXPECT_FALSE(t0.Find("，").has_value());
  // First-appearance order.
  const auto entries = t0.Entries();
  ASSERT_EQ(entries.size(), 5u);
  EXPECT_EQ(entries[0].first, "学生");
  EXPECT_EQ(entries[4].first, "老师");

  // Round trip through idf.txt.
  const std::string path = testing::MakeTempDir("idf") + "/idf.txt";
  ASSERT_TRUE(t0.Save(path).ok());
  auto loaded = IdfTable::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const auto back = loaded->Entries();
  ASSERT_EQ(back.size(), entries.size());
  for (size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].first, entries[i].first);
    EXPECT_EQ(back[i].second, entries[i].second);  // shortest round-trip decimals: exact
  }
  EXPECT_EQ(loaded->median(), t0.median());
}

TEST(IdfLoadTest, CorruptFileNamesTheLine) {
  const std::string path = testing::MakeTempDir("idf_bad") + "/idf.txt";
  testing::WriteFile(path, "学生 1.5\n数学 2\n坏行\n");
  auto loaded = IdfTable::Load(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_TRUE(loaded.status().IsCorruption());
  EXPECT_NE(loaded.status().message().find(path + ":3:"), std::string::npos)
      << loaded.status().message();
}

// One nan used to make every weight nan and every fingerprint 0.
TEST(IdfLoadTest, NonFiniteOrHugeValuesNameTheLine) {
  const std::string dir = testing::MakeTempDir("idf_nonfinite");
  int n = 0;
  for (const char* value : {"nan", "-nan", "inf", "-inf", "1e300", "-2e6"}) {
    const std::string path = dir + "/idf" + std::to_string(n++) + ".txt";
    testing::WriteFile(path, std::string("学生 1.5\n数学 ") + value + "\n");
    auto loaded = IdfTable::Load(path);
    ASSERT_FALSE(loaded.ok()) << value;
    EXPECT_TRUE(loaded.status().IsCorruption()) << value;
    EXPECT_NE(loaded.status().message().find(path + ":2:"), std::string::npos)
        << loaded.status().message();
    EXPECT_NE(loaded.status().message().find("finite"), std::string::npos)
        << loaded.status().message();
  }
  // Counted tables can hold small negative values (seed003: a term in every
  // document); they load.
  const std::string ok = dir + "/ok.txt";
  testing::WriteFile(ok, "学生 -0.2876820724517809\n数学 44.3\n");
  EXPECT_TRUE(IdfTable::Load(ok).ok());
}

TEST(IdfLoadTest, SaveRefusesWhatLoadRefuses) {
  const std::string path = testing::MakeTempDir("idf_save_nan") + "/idf.txt";
  const IdfTable table = IdfTable::FromEntries({{"学生", 1.5}, {"数学", std::nan("")}});
  const Status saved = table.Save(path);
  EXPECT_TRUE(saved.IsInvalidArgument()) << saved.ToString();
}

}  // namespace
}  // namespace neardup
