// Copyright 2026 The neardup Authors.

#include "util/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace neardup::utf8 {
namespace {

// Code points of `s` as Decode sees them.
std::vector<uint32_t> Decoded(std::string_view s) {
  std::vector<uint32_t> out;
  ForEachCodePoint(s, [&out](uint32_t c) { return out.push_back(c), true; });
  return out;
}

TEST(Utf8Test, ValidSequences) {
  EXPECT_EQ(Decoded("a\xC2\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80"),
            (std::vector<uint32_t>{'a', 0xA9, 0x4E2D, 0x1F600}));
  EXPECT_TRUE(IsValid("\xF4\x8F\xBF\xBF"));  // U+10FFFF
  EXPECT_EQ(CodePointCount("a\xE4\xB8\xAD"), 2u);
}

TEST(Utf8Test, InvalidBytesDecodeOneByOne) {
  // Overlong, surrogate, above U+10FFFF, lone continuation, truncated.
  for (std::string_view bad : {"\xC0\x80", "\xE0\x80\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                               "\x80", "\xE4\xB8", "\xF5\x80\x80\x80", "\xFF"}) {
    EXPECT_FALSE(IsValid(bad)) << bad;
    const std::vector<uint32_t> cps = Decoded(bad);
    ASSERT_EQ(cps.size(), bad.size());
    for (size_t i = 0; i < bad.size(); ++i) {
      EXPECT_EQ(cps[i], kInvalidBase + static_cast<unsigned char>(bad[i]));
    }
    EXPECT_EQ(SequenceLength(bad, 0), 0u);
  }
}

TEST(Utf8Test, MaximalSubpart) {
  int len = 0, subpart = 0;
  // E4 B8 then 'a': the subpart is E4 B8 (two bytes), one U+FFFD in a repair.
  EXPECT_GE(DecodeAt("\xE4\xB8"
                     "a",
                     0, &len, &subpart),
            kInvalidBase);
  EXPECT_EQ(len, 1);
  EXPECT_EQ(subpart, 2);
  // ED A0: A0 is out of ED's range, so the subpart is ED alone.
  DecodeAt("\xED\xA0\x80", 0, &len, &subpart);
  EXPECT_EQ(subpart, 1);
  // F0 9F 98 at the end: three bytes.
  DecodeAt("\xF0\x9F\x98", 0, &len, &subpart);
  EXPECT_EQ(subpart, 3);
  EXPECT_EQ(SequenceLength("\xF0\x9F\x98\x80", 0), 4u);
}

TEST(Utf8Test, NeverReadsPastEnd) {
  const std::string s = "\xE4\xB8\xAD";
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  int len;
  EXPECT_GE(Decode(p, p + 2, &len), kInvalidBase);  // the third byte is outside
  EXPECT_EQ(Decode(p, p + 3, &len), 0x4E2Du);
}

TEST(Utf8Test, ExcerptIsShortPrintableAndOneLine) {
  EXPECT_EQ(Excerpt("word 1.5"), "word 1.5");
  EXPECT_EQ(Excerpt("a\\b\n\x1b[2J\x7f"), "a\\\\b\\x0a\\x1b[2J\\x7f");
  EXPECT_EQ(Excerpt("\xff\xE4\xB8"), "\\xff\\xe4\\xb8");
  // Cut after max_bytes of input, never inside a character.
  EXPECT_EQ(Excerpt(std::string(100, 'S'), 24), std::string(24, 'S') + "...");
  EXPECT_EQ(Excerpt("中文字符", 7), "中文...");
  EXPECT_EQ(Excerpt("", 24), "");
  // Property: no output byte is a control character, whatever the input.
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  const std::string e = Excerpt(all, all.size());
  for (char c : e) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f);
  EXPECT_EQ(e.find("\\x00"), 0u);
}

}  // namespace
}  // namespace neardup::utf8
