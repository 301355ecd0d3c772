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
