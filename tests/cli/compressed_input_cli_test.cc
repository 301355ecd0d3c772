// Copyright 2026 The neardup Authors.
//
// xz and bzip2 input reads like plain input (by content, whatever the name);
// archives are refused with a reason; progress counts compressed bytes.

#include <bzlib.h>
#include <gtest/gtest.h>
#include <lzma.h>
#include <stdlib.h>

#include <random>
#include <string>
#include <vector>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ParseJsonLines;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

std::string Corpus() {
  std::string out;
  for (int i = 0; i < 300; ++i) {
    out += "{\"id\":\"d" + std::to_string(i) + "\",\"text\":\"第" + std::to_string(i % 40) +
           "篇 近似重复检测需要稳定的指纹 " + std::to_string(i % 40 * 7919) + "\"}\n";
  }
  return out;
}

std::string Xz(const std::string& data) {
  std::string out(lzma_stream_buffer_bound(data.size()), '\0');
  size_t pos = 0;
  EXPECT_EQ(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr,
                                    reinterpret_cast<const uint8_t*>(data.data()), data.size(),
                                    reinterpret_cast<uint8_t*>(out.data()), &pos, out.size()),
            LZMA_OK);
  out.resize(pos);
  return out;
}

std::string Bzip2(const std::string& data) {
  std::string out(data.size() + data.size() / 100 + 600, '\0');
  auto size = static_cast<unsigned>(out.size());
  EXPECT_EQ(BZ2_bzBuffToBuffCompress(out.data(), &size, const_cast<char*>(data.data()),
                                     static_cast<unsigned>(data.size()), 9, 0, 0),
            BZ_OK);
  out.resize(size);
  return out;
}

TEST(CompressedInputCliTest, XzAndBzip2GiveTheSameRecordsAsPlainInput) {
  const std::string dir = MakeTempDir("cli_xz_bz2");
  const std::string corpus = Corpus();
  WriteFile(dir + "/plain.jsonl", corpus);
  WriteFile(dir + "/c.jsonl.xz", Xz(corpus));
  WriteFile(dir + "/c.jsonl.bz2", Bzip2(corpus));
  // Two streams one after the other (pxz, pbzip2), and a name that says nothing.
  const size_t cut = corpus.find('\n', corpus.size() / 2) + 1;
  WriteFile(dir + "/two.jsonl.xz", Xz(corpus.substr(0, cut)) + Xz(corpus.substr(cut)));
  WriteFile(dir + "/two.jsonl.bz2", Bzip2(corpus.substr(0, cut)) + Bzip2(corpus.substr(cut)));
  WriteFile(dir + "/noname.jsonl", Xz(corpus));
  const auto plain = RunCli({"dedup", "-q", dir + "/plain.jsonl"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(ParseJsonLines(plain.out).size(), 300u);
  for (const char* name :
       {"c.jsonl.xz", "c.jsonl.bz2", "two.jsonl.xz", "two.jsonl.bz2", "noname.jsonl"}) {
    const auto r = RunCli({"dedup", "-q", "--strict", dir + "/" + name});
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_EQ(r.out, plain.out) << name;
  }
  // Standard input too.
  const auto piped = RunCli({"dedup", "-q", "--strict", "-"}, Xz(corpus));
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.out, plain.out);
}

TEST(CompressedInputCliTest, TruncatedXzAndBzip2AreBadInput) {
  const std::string dir = MakeTempDir("cli_xz_cut");
  const std::string corpus = Corpus();
  for (const auto& [name, data] : std::vector<std::pair<std::string, std::string>>{
           {"cut.jsonl.xz", Xz(corpus)}, {"cut.jsonl.bz2", Bzip2(corpus)}}) {
    WriteFile(dir + "/" + name, data.substr(0, data.size() * 2 / 3));
    const auto r = RunCli({"dedup", "-q", "--strict", dir + "/" + name});
    EXPECT_EQ(r.exit_code, 3) << name << ": " << r.err;
    EXPECT_NE(r.err.find("truncated"), std::string::npos) << name << ": " << r.err;
  }
}

TEST(CompressedInputCliTest, ArchivesAreRefused) {
  const std::string dir = MakeTempDir("cli_archives");
  // A zip's local file header, a 7z signature, a tar header (ustar at 257).
  WriteFile(dir + "/corpus.zip", std::string("PK\x03\x04\x14\x00\x00\x00", 8) + "corpus.jsonl");
  WriteFile(dir + "/corpus.7z", std::string("7z\xBC\xAF\x27\x1C\x00\x04", 8) + "payload");
  std::string tar(1024, '\0');
  tar.replace(0, 12, "corpus.jsonl");
  tar.replace(257, 6, std::string("ustar\0", 6));
  WriteFile(dir + "/corpus.tar", tar);
  WriteFile(dir + "/corpus.tar.xz", Xz(tar));
  for (const auto& [name, kind] : std::vector<std::pair<std::string, std::string>>{
           {"corpus.zip", "a zip archive"},
           {"corpus.7z", "a 7z archive"},
           {"corpus.tar", "a tar archive"},
           {"corpus.tar.xz", "a tar archive (xz-compressed)"}}) {
    const auto r = RunCli({"dedup", dir + "/" + name});
    EXPECT_EQ(r.exit_code, 1) << name << ": " << r.err;
    EXPECT_NE(r.err.find(name + ": " + kind), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("extract it"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << name;
  }
}

// The reading phase's progress on compressed input: the compressed bytes
// read against the file's size, a percentage that grows from well below
// 100 % (it used to have no total at all for a compressed file).
TEST(CompressedInputCliTest, ProgressCountsCompressedBytes) {
  std::mt19937_64 rng(25);
  std::string corpus;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    for (int j = 0; j < 120; ++j) text += "abcdefghijklmnop"[rng() % 16];
    corpus += "{\"id\":\"d" + std::to_string(i) + "\",\"text\":\"" + text + "\"}\n";
  }
  const std::string dir = MakeTempDir("cli_progress_bz2");
  const std::string bz2 = Bzip2(corpus);
  ASSERT_GT(bz2.size(), 1u << 20);
  WriteFile(dir + "/c.jsonl.bz2", bz2);
  setenv("NEARDUP_PROGRESS_INTERVAL", "0", 1);
  const auto r = RunCli({"dedup", "--progress", "plain", dir + "/c.jsonl.bz2", "-o", "/dev/null"});
  unsetenv("NEARDUP_PROGRESS_INTERVAL");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string prefix = "neardup: progress: reading + fingerprints ";
  std::vector<int> percents;
  for (size_t at = 0; (at = r.err.find(prefix, at)) != std::string::npos;) {
    at += prefix.size();
    const size_t end = r.err.find('\n', at);
    const std::string line = r.err.substr(at, end - at);
    ASSERT_NE(line.find("% ("), std::string::npos) << line;
    percents.push_back(std::stoi(line));
  }
  ASSERT_GE(percents.size(), 10u) << r.err;
  EXPECT_LT(percents.front(), 60) << r.err;
  for (size_t i = 1; i < percents.size(); ++i) EXPECT_GE(percents[i], percents[i - 1]);
  EXPECT_LE(percents.back(), 100);
  EXPECT_GT(percents.back(), 80) << r.err;
}

}  // namespace
}  // namespace neardup
