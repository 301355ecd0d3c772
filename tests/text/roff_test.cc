// Copyright 2026 The neardup Authors.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "neardup/text.h"

namespace neardup {
namespace {

TEST(RoffTest, StripsRequestsAndKeepsText) {
  std::string title;
  const std::string text = RoffToText(
      ".TH GREP 1 \"2020\"\n"
      ".SH \"SEE ALSO\"\n"
      ".BR sed (1),\n"
      ".IR awk (1)\n"
      ".PP\n"
      "A \\fIbold\\fR move\\(emreally\\[rq] \\s+2big\\s0 \\*(lqquoted\\*(rq.\\\" a comment\n"
      ".de XX\n"
      "ignored macro body\n"
      "..\n"
      "\\&.dotted line\n",
      &title);
  EXPECT_EQ(title, "GREP");
  EXPECT_EQ(text, "SEE ALSO\nsed(1),\nawk(1)\nA bold move—really” big “quoted”.\n.dotted line\n");
}

bool IsValidUtf8(std::string text) { return RepairUtf8(&text, /*replace_nul=*/false).invalid == 0; }

// Truncated escapes, unterminated quotes and macro definitions, escapes
// followed by multi-byte characters, stray bytes, NUL, CR.
const std::vector<std::string>& HostileFragments() {
  static const std::vector<std::string> fragments = {
      "\\",
      "\\(",
      "\\[",
      "\\s'",
      "\\f",
      ".",
      ".de",
      "\\*(",
      "\"\"\"",
      ".B \"",
      "\\(e",
      "\\[rq",
      "\\s+",
      "\\s(1",
      "\\s[",
      "\\h'",
      "\\w'abc",
      "\\*",
      "\\*[",
      "\\\"",
      ".TH",
      ".TH \"",
      ".TH \\f",
      ".SH \"a\"\"b",
      ".IP",
      ".BR",
      ".UR",
      ".ig",
      ".am x",
      "'\\\"",
      ".\\\"",
      "\\(中文",
      "\\f中",
      "\\s'中'",
      "\\h中x中",
      "\\*中",
      "\\[中",
      "\\中",
      "\\(é",
      ".B \\(中",
      ".SH 标题 \\f中",
      "文字\\",
      "\xff",
      "\xe4\xb8",
      "\x80\\",
      std::string("a\0b", 3),
      "\r",
      "x\r\n",
      "\\\r",
      ".B\t\t\"",
      "\\e",
      "\\0\\~\\ ",
      "\\\\\\\\",
      ".de1 X",
  };
  return fragments;
}

// What any input must give: output no longer than the input plus the one
// line break a last unterminated line gets; valid UTF-8 out of valid UTF-8
// in (title included); every output line ends with a line break.
void ExpectSane(const std::string& in) {
  std::string title;
  const std::string out = RoffToText(in, &title);
  EXPECT_LE(out.size(), in.size() + 1) << ::testing::PrintToString(in);
  EXPECT_LE(title.size(), in.size()) << ::testing::PrintToString(in);
  if (IsValidUtf8(in)) {
    EXPECT_TRUE(IsValidUtf8(out)) << ::testing::PrintToString(in) << " -> "
                                  << ::testing::PrintToString(out);
    EXPECT_TRUE(IsValidUtf8(title)) << ::testing::PrintToString(in);
  }
  if (!out.empty()) {
    EXPECT_EQ(out.back(), '\n') << ::testing::PrintToString(in);
  }
}

TEST(RoffTest, HostileFragments) {
  for (const std::string& h : HostileFragments()) {
    ExpectSane(h);
    // Plain text lines around a hostile line survive it whole: "..\n" ends a
    // macro definition the fragment may have opened and is itself no text.
    const std::string wrapped = "plain before\n" + h + "\n..\nplain after 文字\n";
    ExpectSane(wrapped);
    const std::string out = RoffToText(wrapped);
    EXPECT_TRUE(out.starts_with("plain before\n")) << ::testing::PrintToString(h) << " -> " << out;
    EXPECT_TRUE(out.ends_with("\nplain after 文字\n"))
        << ::testing::PrintToString(h) << " -> " << out;
  }
}

// Random pages built from the fragments, text lines (which must all come out
// unchanged, in order) and known requests.
TEST(RoffTest, RandomHostilePagesKeepTheirTextLines) {
  std::mt19937_64 rng(7);
  const std::vector<std::string>& fragments = HostileFragments();
  for (int round = 0; round < 2000; ++round) {
    std::string page;
    std::vector<std::string> text_lines;
    const int lines = 1 + static_cast<int>(rng() % 12);
    for (int l = 0; l < lines; ++l) {
      switch (rng() % 3) {
        case 0: {  // a plain text line: no escape, no leading '.' or '\''
          const std::string line = "line " + std::to_string(l) + " 文本 ok";
          page += line + (rng() % 2 ? "\n" : "\r\n");
          text_lines.push_back(line);
          break;
        }
        case 1: {  // hostile bytes, then "..": a macro definition it opens ends there
          std::string line;
          for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) {
            line += fragments[rng() % fragments.size()];
          }
          // A newline inside the bytes would start a line of its own; keep one line.
          std::erase(line, '\n');
          page += line + "\n..\n";
          break;
        }
        default:
          page += std::string(rng() % 2 ? ".PP" : ".SH \"NAME\"") + "\n";
          break;
      }
    }
    ExpectSane(page);
    const std::string out = RoffToText(page);
    size_t pos = 0;
    for (const std::string& line : text_lines) {
      const size_t at = out.find(line + "\n", pos);
      ASSERT_NE(at, std::string::npos) << "lost text line '" << line << "' of "
                                       << ::testing::PrintToString(page) << " -> " << out;
      EXPECT_TRUE(at == 0 || out[at - 1] == '\n') << ::testing::PrintToString(page);
      pos = at + line.size() + 1;
    }
  }
}

TEST(RoffTest, EscapesDoNotSplitCharacters) {
  EXPECT_EQ(RoffToText("\\f中x\n"), "x\n");
  EXPECT_EQ(RoffToText("a\\(中文b\n"), "ab\n");
  EXPECT_EQ(RoffToText("a\\h中12中b\n"), "ab\n");
  EXPECT_EQ(RoffToText("\\中\n"), "中\n");
}

}  // namespace
}  // namespace neardup
