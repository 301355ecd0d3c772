// Copyright 2026 The neardup Authors.
//
// The exit status rule (README, "Exit statuses"): a run that read no
// document while it skipped records fails and says what the records hold;
// an empty input is an empty result; standard input is read whole whether
// it is named (-) or not.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ParseJsonLines;
using ::neardup::testing::ReadFile;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

// Three records with their text in meta.body, none with "text".
const char* kNested =
    "{\"url\":\"u1\",\"meta\":{\"body\":\"第一篇文档的正文\",\"lang\":\"zh\"}}\n"
    "{\"url\":\"u2\",\"meta\":{\"body\":\"第二篇文档的正文\",\"lang\":\"zh\"}}\n"
    "{\"url\":\"u3\",\"meta\":{\"body\":\"第三篇文档的正文\",\"lang\":\"zh\"}}\n";

std::string Corpus(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += "{\"id\":\"d" + std::to_string(i) + "\",\"text\":\"文档" + std::to_string(i % 7) +
           " 近似重复检测需要稳定的指纹 " + std::to_string(i % 7 * 7919) + "\"}\n";
  }
  return out;
}

TEST(StatusCliTest, EveryRecordWithoutTheTextFieldFailsAndNamesTheFields) {
  const std::string dir = MakeTempDir("cli_status_fields");
  WriteFile(dir + "/in.jsonl", kNested);
  const auto r = RunCli({"dedup", dir + "/in.jsonl", "-o", dir + "/out.jsonl"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("no document was read"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("read as jsonl"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("meta.body, meta.lang, url"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--text-field"), std::string::npos) << r.err;
  const auto strict = RunCli({"dedup", "--strict", "-"}, kNested);
  EXPECT_EQ(strict.exit_code, 3) << strict.err;
  // Every command that reads documents keeps the rule.
  const auto f = RunCli({"fingerprint", "-"}, kNested);
  EXPECT_EQ(f.exit_code, 1) << f.err;
  EXPECT_NE(f.err.find("meta.body"), std::string::npos) << f.err;
  // Named, the field reads.
  const auto ok = RunCli({"dedup", "--text-field", "meta.body", dir + "/in.jsonl"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ParseJsonLines(ok.out).size(), 3u);
}

TEST(StatusCliTest, EveryLineMalformedFails) {
  const auto r = RunCli({"dedup", "--input-format", "jsonl", "-"}, "a,b\n1,2\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("2 malformed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--input-format"), std::string::npos) << r.err;
}

TEST(StatusCliTest, EmptyInputIsAnEmptyResultAtEveryMethodAndMode) {
  const std::string dir = MakeTempDir("cli_status_empty");
  WriteFile(dir + "/empty.jsonl", "");
  const std::vector<std::vector<std::string>> runs = {
      {},
      {"--mode", "stream"},
      {"--mode", "stream", "--exact"},
      {"--mode", "stream", "--banded"},
      {"--cluster", "center"},
      {"--method", "classic"},
      {"--method", "classic", "--mode", "stream"},
      {"--method", "minhash"},
  };
  for (const auto& extra : runs) {
    for (const bool piped : {false, true}) {
      std::vector<std::string> args = {"dedup", "-q"};
      args.insert(args.end(), extra.begin(), extra.end());
      if (!piped) args.push_back(dir + "/empty.jsonl");
      const auto r = RunCli(args, "");
      EXPECT_EQ(r.exit_code, 0) << ::testing::PrintToString(args) << r.err;
      EXPECT_EQ(r.out, "") << ::testing::PrintToString(args);
    }
  }
}

TEST(StatusCliTest, PipedInputReadsLikeTheFile) {
  const std::string dir = MakeTempDir("cli_status_pipe");
  const std::string corpus = Corpus(40);
  WriteFile(dir + "/in.jsonl", corpus);
  const auto file = RunCli({"dedup", "-q", dir + "/in.jsonl"});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  ASSERT_EQ(ParseJsonLines(file.out).size(), 40u);
  // No input named: standard input, counted once for boilerplate and read
  // once for the fingerprints.
  const auto piped = RunCli({"dedup", "-q", "-o", dir + "/out.jsonl"}, corpus);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  const std::string out = ReadFile(dir + "/out.jsonl");
  const auto lines = ParseJsonLines(out);
  ASSERT_EQ(lines.size(), 40u);
  const auto named = RunCli({"dedup", "-q", "-"}, corpus);
  EXPECT_EQ(named.out, out);
  // The ids differ ("-:3" vs "FILE:3") only where the records have none.
  EXPECT_EQ(file.out, out);
}

TEST(StatusCliTest, KeepFieldThatNoRecordHasIsAnError) {
  const std::string corpus = Corpus(10);
  const auto r = RunCli({"dedup", "--keep", "field:nosuch", "-"}, corpus);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("field:nosuch"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("id, text"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  // A field some records have is a policy.
  const std::string scored = corpus + "{\"id\":\"s\",\"text\":\"x\",\"score\":3}\n";
  const auto ok = RunCli({"dedup", "-q", "--keep", "field:score", "-"}, scored);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

}  // namespace
}  // namespace neardup
