// Copyright 2026 The neardup Authors.
//
// The normalizer's UTF-8 NFKC_Casefold (cut at normalization boundaries,
// precomputed per BMP code point) against ICU normalizing the whole text
// through UTF-16 (tests/testing/text_oracle.h): byte-identical output for
// every BMP code point in contexts that interact with it, for seeded random
// strings of characters that compose, decompose, reorder and case-fold, and
// for the THUCNews and BBC samples.

#include <gtest/gtest.h>
#include <unicode/utf8.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "neardup/text.h"
#include "tests/testing/test_util.h"
#include "tests/testing/text_oracle.h"

namespace neardup {
namespace {

std::string Utf8(UChar32 c) {
  char buf[4];
  int32_t len = 0;
  UBool error = false;
  U8_APPEND(buf, len, 4, c, error);
  EXPECT_FALSE(error);
  return std::string(buf, static_cast<size_t>(len));
}

std::unique_ptr<Normalizer> NfkcOnly() {
  auto norm = Normalizer::Create({});
  EXPECT_TRUE(norm.ok()) << norm.status().ToString();
  return std::move(*norm);
}

TEST(NfkcFastTest, EveryBmpCodePointInContext) {
  const auto norm = NfkcOnly();
  // Before and after: a letter that composes with marks, a combining acute and
  // diaeresis (reordered by combining class), Hangul jamo, full-width forms.
  const std::string contexts[][2] = {
      {"", ""},
      {"A", "\u0301b"},
      {"\u1100", "\u0308\u0323"},
      {"\uff21\uff0c", "\u11a8\u4e2d"},
  };
  for (UChar32 c = 0x80; c < 0x10000; ++c) {
    if (U_IS_SURROGATE(c)) continue;
    for (const auto& [before, after] : contexts) {
      const std::string text = before + Utf8(c) + after;
      ASSERT_EQ(norm->Normalize(text), testing::IcuNfkcCasefold(text))
          << "U+" << std::hex << c << " in '" << text << "'";
    }
  }
}

TEST(NfkcFastTest, RandomInteractingStrings) {
  const auto norm = NfkcOnly();
  const std::vector<UChar32> alphabet = {
      'a',    'A',    's',    'S',     '<',     '=',     ' ',     '1',    0x00DF /*ß*/,
      0x00C5, 0x0130, 0x03A3, 0x03C2,  0x1E9E,  0x0300,  0x0301,  0x0308, 0x0323,
      0x0338, 0x0345, 0x093C, 0x1100,  0x1161,  0x11A8,  0xAC00,  0xAC01, 0x3131,
      0xFB01, 0xFDFA, 0xF900, 0xFF21,  0xFF41,  0xFF0C,  0xFF65,  0x3002, 0x4E2D,
      0x2460, 0x2126, 0x212B, 0x1D400, 0x1F600, 0x2F800, 0x10400, 0x0F73, 0x0F71,
      0x0F72, 0x1F80, 0x0399, 0x0345,  0xFFA0,  0x3099,  0x304B,  0x309A, 0x00A0};
  std::mt19937_64 rng(42);
  for (int round = 0; round < 20000; ++round) {
    const size_t length = rng() % 12;
    std::string text;
    for (size_t i = 0; i < length; ++i) text += Utf8(alphabet[rng() % alphabet.size()]);
    ASSERT_EQ(norm->Normalize(text), testing::IcuNfkcCasefold(text)) << "'" << text << "'";
  }
}

TEST(NfkcFastTest, InvalidUtf8StillBecomesReplacementCharacters) {
  const auto norm = NfkcOnly();
  for (const std::string& text :
       {std::string("\xff\xfe中文"), std::string("中\xe4\xb8"), std::string("Ａ\xed\xa0\x80z")}) {
    EXPECT_EQ(norm->Normalize(text), testing::IcuNfkcCasefold(text));
  }
}

void CompareFile(const std::string& path) {
  const auto norm = NfkcOnly();
  std::ifstream in(path);
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    const std::string text = nlohmann::json::parse(line).at("text");
    ASSERT_EQ(norm->Normalize(text), testing::IcuNfkcCasefold(text)) << path << ":" << checked + 1;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(NfkcFastTest, ThucNews) {
  NEARDUP_REQUIRE_SHARED_DATA(path, "zh_thucnews1000.jsonl");
  CompareFile(path);
}

TEST(NfkcFastTest, Bbc) {
  NEARDUP_REQUIRE_SHARED_DATA(path, "en_bbc2225.jsonl");
  CompareFile(path);
}

}  // namespace
}  // namespace neardup
