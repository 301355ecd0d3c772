// Copyright 2026 The neardup Authors.
//
// End-to-end checks of how the neardup tool reads hostile or missing input and
// refuses outputs that would destroy it.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ParseJsonLines;
using ::neardup::testing::ReadFile;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

const char* kDoc = "{\"id\":\"a\",\"text\":\"近似重复检测需要稳定的指纹\"}\n";

TEST(InputCliTest, NumberTooLargeForADoubleDoesNotEndTheRun) {
  const std::string input = "{\"id\":\"x\",\"text\":\"hello\",\"n\":1e400}\n" + std::string(kDoc) +
                            "{\"id\":\"y\",\"text\":\"z\",\"n\":1e2222222222222222223e}\n";
  const auto f = RunCli({"fingerprint", "-"}, input);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  const auto lines = ParseJsonLines(f.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["id"], "x");
  EXPECT_NE(f.err.find("-:3: malformed JSON"), std::string::npos) << f.err;

  const auto d = RunCli({"dedup", "--keep", "field:n", "-"}, input);
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(ParseJsonLines(d.out).size(), 2u);

  const std::string dir = MakeTempDir("cli_bignum");
  WriteFile(dir + "/in.jsonl", input);
  const auto b = RunCli({"index", "build", dir + "/in.jsonl", "-o", dir + "/idx"});
  EXPECT_EQ(b.exit_code, 0) << b.err;
}

TEST(InputCliTest, DeeplyNestedIdOrKeptFieldIsMalformed) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string input = "{\"id\":" + deep + ",\"text\":\"a\"}\n" + kDoc +
                            "{\"id\":\"b\",\"text\":\"b\",\"s\":" + deep + "}\n";
  const auto f = RunCli({"fingerprint", "-"}, input);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(ParseJsonLines(f.out).size(), 1u);
  EXPECT_NE(f.err.find("-:1: malformed JSON: nested deeper than 256 levels"), std::string::npos)
      << f.err.substr(0, 2000);
  // (A record that is read has the kept field: one that none has is an error.)
  const auto d = RunCli({"dedup", "--keep", "field:s", "--strict", "-"},
                        input + "{\"id\":\"c\",\"text\":\"c\",\"s\":2}\n");
  EXPECT_EQ(d.exit_code, 3) << d.err.substr(0, 2000);
  EXPECT_EQ(ParseJsonLines(d.out).size(), 2u);
}

TEST(InputCliTest, InvalidUtf8InsideJsonKeepsTheDocument) {
  const auto r = RunCli({"fingerprint", "-"}, "{\"id\":\"u\",\"text\":\"ab\xff\xfe\"}\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseJsonLines(r.out).size(), 1u);
  EXPECT_NE(r.err.find("invalid UTF-8: 2 sequence(s)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\xff'), std::string::npos);
}

TEST(InputCliTest, TruncatedGzipIsBadInput) {
  const std::string dir = MakeTempDir("cli_gzcut");
  std::string jsonl;
  for (int i = 0; i < 500; ++i) {
    jsonl += "{\"id\":\"" + std::to_string(i) + "\",\"text\":\"第" + std::to_string(i * 7919) +
             "篇文档\"}\n";
  }
  gzFile gz = gzopen((dir + "/whole.jsonl.gz").c_str(), "wb");
  gzwrite(gz, jsonl.data(), static_cast<unsigned>(jsonl.size()));
  gzclose(gz);
  const std::string whole = ReadFile(dir + "/whole.jsonl.gz");
  WriteFile(dir + "/cut.jsonl.gz", whole.substr(0, whole.size() * 2 / 3));
  const auto r = RunCli({"fingerprint", "--strict", dir + "/cut.jsonl.gz"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("truncated gzip stream"), std::string::npos) << r.err;
  const auto lines = ParseJsonLines(r.out);
  ASSERT_GT(lines.size(), 0u);
  EXPECT_LT(lines.size(), 500u);
  EXPECT_EQ(lines.back()["id"], std::to_string(lines.size() - 1));
}

TEST(InputCliTest, FifoInADirectoryIsSkippedAndDevicesRefused) {
  const std::string dir = MakeTempDir("cli_fifo");
  WriteFile(dir + "/a.txt", "近似重复检测");
  ASSERT_EQ(mkfifo((dir + "/pipe").c_str(), 0600), 0);
  const auto r = RunCli({"fingerprint", dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseJsonLines(r.out).size(), 1u);
  EXPECT_NE(r.err.find("special file(s) in directories skipped"), std::string::npos) << r.err;

  const auto zero = RunCli({"fingerprint", "/dev/zero"});
  EXPECT_EQ(zero.exit_code, 1) << zero.err;
  EXPECT_NE(zero.err.find("/dev/zero: a device"), std::string::npos) << zero.err;
  EXPECT_EQ(RunCli({"fingerprint", "--input-format", "jsonl", "/dev/zero"}).exit_code, 1);
}

TEST(InputCliTest, MaxDocumentBytesOption) {
  const std::string dir = MakeTempDir("cli_max");
  WriteFile(dir + "/big.txt", std::string(5000, 'a'));
  WriteFile(dir + "/small.txt", "近似重复");
  const auto r =
      RunCli({"fingerprint", "--max-document-bytes", "1000", dir + "/big.txt", dir + "/small.txt"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseJsonLines(r.out).size(), 1u);
  EXPECT_NE(r.err.find("larger than the limit of 1000 bytes"), std::string::npos) << r.err;
  EXPECT_NE(RunCli({"fingerprint", "--max-document-bytes", "0", dir}).exit_code, 0);
  EXPECT_NE(RunCli({"fingerprint", "--max-document-bytes", "-3", dir}).exit_code, 0);
  EXPECT_NE(RunCli({"fingerprint", "--help"}).out.find("--max-document-bytes"), std::string::npos);
}

TEST(InputCliTest, MissingInputIsAnErrorBeforeAnyOutput) {
  const std::string dir = MakeTempDir("cli_missing");
  WriteFile(dir + "/a.jsonl", kDoc);
  const auto f = RunCli({"fingerprint", dir + "/a.jsonl", dir + "/nope.txt", "-o", dir + "/out"});
  EXPECT_EQ(f.exit_code, 1) << f.err;
  EXPECT_NE(f.err.find("nope.txt: No such file"), std::string::npos) << f.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out"));
  const auto b = RunCli({"index", "build", dir + "/nope.txt", "-o", dir + "/idx"});
  EXPECT_EQ(b.exit_code, 1) << b.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/idx"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/idx.ids"));
  EXPECT_EQ(RunCli({"dedup", dir + "/nope.txt"}).exit_code, 1);
}

TEST(InputCliTest, InvalidFileNameGivesAnEscapedId) {
  const std::string dir = MakeTempDir("cli_names");
  WriteFile(dir + "/\xc4\xe3.txt", "你");
  WriteFile(dir + "/\xba\xc3.txt", "好");
  const auto r = RunCli({"fingerprint", dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = ParseJsonLines(r.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["id"], dir + "/\\xBA\\xC3.txt");
  EXPECT_EQ(lines[1]["id"], dir + "/\\xC4\\xE3.txt");
  EXPECT_NE(r.err.find("not valid UTF-8"), std::string::npos) << r.err;
}

TEST(InputCliTest, OutputThatIsAnInputIsRefused) {
  const std::string dir = MakeTempDir("cli_clobber");
  const std::string in = dir + "/in.jsonl";
  WriteFile(in, kDoc);
  std::filesystem::create_hard_link(in, dir + "/link.jsonl");
  const std::vector<std::vector<std::string>> cases = {
      {"fingerprint", in, "-o", in},
      {"fingerprint", in, "-o", dir + "/link.jsonl"},
      {"segment", in, "-o",
       dir + "/../" + std::filesystem::path(dir).filename().string() + "/in.jsonl"},
      {"fingerprint", dir, "-o", dir + "/new.jsonl"},
      {"dedup", in, "-o", in},
      {"dedup", in, "--unique-out", in},
      {"dedup", in, "--pairs-out", dir + "/link.jsonl"},
      {"dedup", dir, "--clusters-out", dir + "/clusters.jsonl"},
      {"index", "build", in, "-o", in},
      {"idf", "build", in, "-o", in},
  };
  for (const auto& args : cases) {
    const auto r = RunCli(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args.back() << ": " << r.err;
    EXPECT_NE(r.err.find("neardup: error: the output"), std::string::npos) << r.err;
    EXPECT_EQ(ReadFile(in), kDoc) << args[0] << " " << args.back();
    EXPECT_FALSE(std::filesystem::exists(dir + "/new.jsonl"));
    EXPECT_FALSE(std::filesystem::exists(dir + "/clusters.jsonl"));
  }
  // Elsewhere is fine.
  const std::string other = MakeTempDir("cli_clobber_out");
  EXPECT_EQ(RunCli({"fingerprint", in, "-o", other + "/out.jsonl"}).exit_code, 0);
  EXPECT_EQ(RunCli({"fingerprint", in, "-o", "/dev/null"}).exit_code, 0);
}

}  // namespace
}  // namespace neardup
