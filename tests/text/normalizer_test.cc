// Copyright 2026 The neardup Authors.

#include <gtest/gtest.h>

#include "neardup/text.h"

namespace neardup {
namespace {

TEST(NormalizerTest, NfkcCasefoldsFullWidthForms) {
  auto norm = Normalizer::Create({});
  ASSERT_TRUE(norm.ok()) << norm.status().ToString();
  EXPECT_EQ((*norm)->Normalize("ＡＢＣ１２３，Hello"), "abc123,hello");
  EXPECT_EQ((*norm)->Normalize("ASCII Only"), "ascii only");
  EXPECT_EQ((*norm)->Normalize("中文不变"), "中文不变");
}

TEST(NormalizerTest, TraditionalToSimplified) {
  NormalizeOptions options;
  options.t2s = "t2s";
  auto norm = Normalizer::Create(options);
  ASSERT_TRUE(norm.ok()) << norm.status().ToString();
  EXPECT_EQ((*norm)->Normalize("列出目錄內容"), "列出目录内容");
  options.t2s = "tw2sp";
  auto tw = Normalizer::Create(options);
  ASSERT_TRUE(tw.ok()) << tw.status().ToString();
  EXPECT_EQ((*tw)->Normalize("軟體"), "软件");
}

TEST(NormalizerTest, UnknownConversionIsAnError) {
  NormalizeOptions options;
  options.t2s = "klingon";
  EXPECT_TRUE(Normalizer::Create(options).status().IsInvalidArgument());
}

TEST(NormalizerTest, CollapseWhitespace) {
  NormalizeOptions options;
  options.nfkc_casefold = false;
  options.collapse_whitespace = true;
  auto norm = Normalizer::Create(options);
  ASSERT_TRUE(norm.ok());
  EXPECT_EQ((*norm)->Normalize("  a \t\n b\u3000c  "), "a b c");
}

TEST(NormalizerTest, OffIsIdentity) {
  NormalizeOptions options;
  options.nfkc_casefold = false;
  auto norm = Normalizer::Create(options);
  ASSERT_TRUE(norm.ok());
  EXPECT_EQ((*norm)->Normalize("ＡＢＣ"), "ＡＢＣ");
}

}  // namespace
}  // namespace neardup

namespace neardup {
namespace {

// tw2sp2 (OpenCC tw2sp twice): the zh_TW and zh_CN wording of one sentence
// end in the same text, where one pass leaves them apart (檔案 -> 文件, but
// 文件 -> 文档); and applying it to its own output changes nothing more here.
TEST(NormalizerTest, Tw2sp2BringsBothScriptsToOneForm) {
  NormalizeOptions once;
  once.t2s = "tw2sp";
  NormalizeOptions twice;
  twice.t2s = "tw2sp2";
  auto n1 = Normalizer::Create(once);
  auto n2 = Normalizer::Create(twice);
  ASSERT_TRUE(n1.ok()) << n1.status().ToString();
  ASSERT_TRUE(n2.ok()) << n2.status().ToString();
  const std::string tw = "更改檔案的屬主";
  const std::string cn = "更改文件的属主";
  EXPECT_NE((*n1)->Normalize(tw), (*n1)->Normalize(cn));
  EXPECT_EQ((*n2)->Normalize(tw), (*n2)->Normalize(cn));
  EXPECT_EQ((*n2)->Normalize(tw), (*n1)->Normalize((*n1)->Normalize(tw)));
}

}  // namespace
}  // namespace neardup
