// Copyright 2026 The neardup Authors.
//
// Option values that name something the run cannot use are usage errors
// (exit 2, the option and the value named) when the options are parsed,
// never a run that skips every file or ignores the option: an unknown
// --encoding, and an --idf table given to a method whose weights use none
// (the rule is Method::Parse's, so Python's idf= key gets it too:
// python/tests/test_option_values.py).

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

class OptionValuesCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("cli_option_values");
    WriteFile(dir_ + "/a.jsonl",
              "{\"id\": \"a\", \"text\": \"网页去重是搜索引擎的基础工作之一\"}\n"
              "{\"id\": \"b\", \"text\": \"近似重复的网页会浪费存储和带宽\"}\n");
    // A two-word IDF table in jieba's format.
    WriteFile(dir_ + "/small.idf", "网页 5.0\n搜索引擎 7.5\n");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
};

TEST_F(OptionValuesCliTest, UnknownEncodingIsAUsageError) {
  for (const char* command : {"dedup", "fingerprint"}) {
    const auto r = RunCli({command, "--encoding", "nope", dir_ + "/a.jsonl"});
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.err;
    EXPECT_NE(r.err.find("--encoding"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'nope'"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("skipped"), std::string::npos) << r.err;
  }
  // A name ICU knows, in any case, and UTF-8 itself are read.
  for (const char* encoding : {"gb18030", "UTF-8"}) {
    const auto r = RunCli({"fingerprint", "--encoding", encoding, dir_ + "/a.jsonl"});
    EXPECT_EQ(r.exit_code, 0) << encoding << "\n" << r.err;
  }
}

TEST_F(OptionValuesCliTest, IdfForAMethodWithoutIdfIsAUsageError) {
  const std::string idf = dir_ + "/small.idf";
  // The default method (chars5u) and minhash weigh without IDF.
  for (const char* method : {"chars5u", "minhash"}) {
    const auto r = RunCli({"dedup", "--method", method, "--idf", idf, dir_ + "/a.jsonl"});
    EXPECT_EQ(r.exit_code, 2) << method << "\n" << r.err;
    EXPECT_NE(r.err.find("idf " + idf), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("uses no IDF table"), std::string::npos) << r.err;
  }
  {
    const auto r = RunCli({"fingerprint", "--idf", idf, dir_ + "/a.jsonl"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
  }
  // Where the weights use it, it is used: another table, other fingerprints.
  const auto with = RunCli({"fingerprint", "--method", "tfidf", "--idf", idf, dir_ + "/a.jsonl"});
  ASSERT_EQ(with.exit_code, 0) << with.err;
  const auto without = RunCli({"fingerprint", "--method", "tfidf", dir_ + "/a.jsonl"});
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_NE(with.out, without.out);
}

// segment and idf build read no IDF table: they refuse --idf rather than
// ignore it; keywords uses it.
TEST_F(OptionValuesCliTest, IdfWhereNoTableIsReadIsAUsageError) {
  const std::string idf = dir_ + "/small.idf";
  {
    const auto r = RunCli({"segment", "--idf", idf, dir_ + "/a.jsonl"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--idf"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  {
    const auto r =
        RunCli({"idf", "build", "--idf", idf, "-o", dir_ + "/out.idf", dir_ + "/a.jsonl"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir_ + "/out.idf"));
  }
  const auto r = RunCli({"keywords", "--idf", idf, dir_ + "/a.jsonl"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace neardup
