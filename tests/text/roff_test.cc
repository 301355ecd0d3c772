// Copyright 2026 The neardup Authors.

#include <gtest/gtest.h>

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

TEST(RoffTest, HostileInputDoesNotCrash) {
  for (const char* s : {"\\", "\\(", "\\[", "\\s'", "\\f", ".", ".de", "\\*(", "\"\"\"", ".B \""}) {
    RoffToText(s);
  }
  SUCCEED();
}

}  // namespace
}  // namespace neardup
