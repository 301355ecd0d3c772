// Copyright 2026 The neardup Authors.
//
// `neardup dedup --boilerplate`: a shared footer no longer makes different
// pages near-duplicates, the summary counts what was left out, standard input
// and files give the same records, and bad flags are usage errors.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "neardup/boilerplate.h"
#include "neardup/document_index.h"
#include "neardup/text_index.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ParseJsonLines;
using ::neardup::testing::ReadFile;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

// 20 pages: a random body of their own (12 lines) and one long shared footer
// (12 lines); page 20 is page 0 with one character changed. (A page of one
// line of its own and 12 of footer is, by its lines, a near copy of the
// others: they would be one group, boilerplate.h, and the footer theirs.)
std::string Corpus() {
  static const char* kChars[] = {"的", "文", "件", "目", "录", "显", "示", "输", "出", "行",
                                 "选", "项", "参", "数", "列", "表", "名", "称", "用", "法"};
  std::mt19937_64 rng(7);
  std::string footer;
  for (int i = 0; i < 12; ++i) {
    footer += "\\n本页面中文版由中文 man 手册页计划提供。第 " + std::to_string(i) + " 行";
  }
  std::string corpus, first;
  for (int i = 0; i < 20; ++i) {
    std::string body;
    for (int c = 0; c < 240; ++c) {
      body += kChars[rng() % 20];
      if (c % 20 == 19) body += "\\n";
    }
    if (i == 0) first = body;
    corpus += "{\"id\": \"p" + std::to_string(i) + "\", \"text\": \"" + body + footer + "\"}\n";
  }
  first.replace(0, 3, "名");
  corpus += "{\"id\": \"copy\", \"text\": \"" + first + footer + "\"}\n";
  return corpus;
}

int Duplicates(const std::vector<nlohmann::json>& records) {
  int n = 0;
  for (const auto& r : records) n += r["duplicate"].get<bool>();
  return n;
}

TEST(BoilerplateCliTest, FooterNoLongerMakesDuplicates) {
  // chars5's count weights: the footer, repeated in every page, outweighs
  // the page's own text (uniform weights, the default, resist it better).
  // The fingerprints alone (verified pairs off).
  const auto off =
      RunCli({"dedup", "-", "--method", "chars5", "--boilerplate", "off", "--verify-jaccard", "0"},
             Corpus());
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_GE(Duplicates(ParseJsonLines(off.out)), 10);  // the footer chains the pages
  EXPECT_EQ(off.err.find("boilerplate:"), std::string::npos) << off.err;
  // Verified pairs (the default) see that the pages share only the footer.
  const auto verified =
      RunCli({"dedup", "-", "--method", "chars5", "--boilerplate", "off"}, Corpus());
  ASSERT_EQ(verified.exit_code, 0) << verified.err;
  EXPECT_EQ(Duplicates(ParseJsonLines(verified.out)), 1);

  const std::string dir = MakeTempDir("boilerplate_cli");
  const auto lines = RunCli({"dedup", "-", "--boilerplate", "lines", "--boilerplate-min-docs", "5",
                             "--boilerplate-stats-out", dir + "/lines.bin"},
                            Corpus());
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  const auto records = ParseJsonLines(lines.out);
  ASSERT_EQ(records.size(), 21u);
  EXPECT_EQ(Duplicates(records), 1);
  EXPECT_EQ(records[20]["duplicate"], true);
  EXPECT_EQ(records[20]["nearest"], "p0");
  // 12 footer lines in all 21 pages.
  EXPECT_NE(lines.err.find("boilerplate: 12 distinct lines in >= 5 of 21 documents, 252 line "
                           "occurrences left out"),
            std::string::npos)
      << lines.err;
  auto stats = LineStats::Load(dir + "/lines.bin");
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->documents(), 21u);
  EXPECT_EQ(stats->LinesAtLeast(5), 12u);  // the footer: in 21 documents, >= 5 groups

  // Read from a file (counted, then read again): the same records.
  WriteFile(dir + "/corpus.jsonl", Corpus());
  const auto file = RunCli({"dedup", dir + "/corpus.jsonl", "--boilerplate", "lines", "-q"});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  const auto from_file = ParseJsonLines(file.out);
  ASSERT_EQ(from_file.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(from_file[i]["fingerprint"], records[i]["fingerprint"]) << i;
    EXPECT_EQ(from_file[i]["duplicate"], records[i]["duplicate"]) << i;
  }
  // The method's key does the same as the flag.
  const auto method =
      RunCli({"dedup", dir + "/corpus.jsonl", "--method", "chars5,boilerplate=lines", "-q"});
  ASSERT_EQ(method.exit_code, 0) << method.err;
  EXPECT_EQ(ParseJsonLines(method.out), from_file);
}

TEST(BoilerplateCliTest, BadFlagsAreUsageErrors) {
  EXPECT_EQ(RunCli({"dedup", "-", "--boilerplate", "pages"}, "").exit_code, 2);
  EXPECT_EQ(RunCli({"dedup", "-", "--boilerplate-min-docs", "1"}, "").exit_code, 2);
  const auto stats_off =
      RunCli({"dedup", "-", "--boilerplate", "off", "--boilerplate-stats-out", "/tmp/x.bin"}, "");
  EXPECT_EQ(stats_off.exit_code, 2);
  EXPECT_NE(stats_off.err.find("--boilerplate-stats-out needs --boilerplate lines"),
            std::string::npos)
      << stats_off.err;
  EXPECT_EQ(RunCli({"dedup", "-", "--method", "chars5,boilerplate_min_docs=0"}, "").exit_code, 2);
}

// The counting pass computes the line keys on the thread pool: over several
// batches (1,200 pages, 512 a batch) the counts are those of one LineCounter
// in input order (the oracle), on one thread or three, from a file or from
// standard input, and so are the records.
TEST(BoilerplateCliTest, CountsAreTheSameOnAnyNumberOfThreads) {
  std::mt19937_64 rng(11);
  std::string corpus;
  LineCounter oracle;
  for (int i = 0; i < 1200; ++i) {
    // A line of its own, one of 40 shared lines, one of 3 footers.
    std::string text = "第 " + std::to_string(i) + " 页 " + std::to_string(rng()) + "\\n" +
                       "共享的行 " + std::to_string(rng() % 40) + "\\n页脚 " +
                       std::to_string(i % 3);
    corpus += "{\"id\": \"p" + std::to_string(i) + "\", \"text\": \"" + text + "\"}\n";
    std::string plain = text;
    for (size_t at; (at = plain.find("\\n")) != std::string::npos;) plain.replace(at, 2, "\n");
    oracle.Add(plain);
  }
  const std::string want = std::move(oracle).Finish().Serialize();
  const std::string dir = MakeTempDir("boilerplate_threads");
  WriteFile(dir + "/corpus.jsonl", corpus);
  std::string first_out;
  for (const char* threads : {"1", "3"}) {
    for (const bool from_stdin : {false, true}) {
      const std::string stats = dir + "/lines" + threads + (from_stdin ? "s" : "f") + ".bin";
      const auto r = RunCli({"dedup", from_stdin ? "-" : dir + "/corpus.jsonl", "--threads",
                             threads, "--boilerplate-stats-out", stats, "-q"},
                            from_stdin ? corpus : "");
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(ReadFile(stats), want) << threads << " threads, stdin " << from_stdin;
      if (first_out.empty()) first_out = r.out;
      EXPECT_EQ(r.out, first_out) << threads << " threads, stdin " << from_stdin;
    }
  }
  EXPECT_EQ(ParseJsonLines(first_out).size(), 1200u);
}

// A persistent index built with boilerplate=lines keeps the line counts in
// its own commit (the ids file's attachment: no IDX.lines); query, check and
// add strip the same lines, so a query's distance is dedup's distance for the
// same corpus, and the footer matches nothing.
TEST(BoilerplateCliTest, IndexKeepsLineCountsInItsCommit) {
  const std::string dir = MakeTempDir("boilerplate_index");
  WriteFile(dir + "/corpus.jsonl", Corpus());
  const std::string idx = dir + "/idx";
  auto r = RunCli({"index", "build", "--method", "chars5,boilerplate=lines", dir + "/corpus.jsonl",
                   "-o", idx, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(idx + ".lines"));
  {
    auto index = TextIndex::Open(idx, {});
    ASSERT_TRUE(index.ok()) << index.status().message();
    EXPECT_TRUE((*index)->strips_boilerplate());
    EXPECT_EQ((*index)->Stats().boilerplate_lines, 12u);  // the footer: in 21 documents
    auto kept = LineStats::Deserialize((*index)->documents().header().attachment, "attachment");
    ASSERT_TRUE(kept.ok()) << kept.status().message();
    EXPECT_EQ(kept->documents(), 21u);
    EXPECT_EQ(kept->distinct_lines(), 12u);  // only the lines left out are kept
  }
  r = RunCli({"index", "stats", idx, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["boilerplate"]["lines"], 12);

  // dedup of the same corpus: the copy's distance to p0.
  const auto dedup = RunCli(
      {"dedup", dir + "/corpus.jsonl", "--method", "chars5", "--boilerplate", "lines", "-q"});
  ASSERT_EQ(dedup.exit_code, 0) << dedup.err;
  const int want = ParseJsonLines(dedup.out)[20]["distance"].get<int>();

  const std::string corpus = Corpus();
  const std::string copy = corpus.substr(corpus.rfind("{\"id\": \"copy\""));
  // A new page: a body of its own and the shared footer.
  std::string page = copy;
  const size_t body = page.find("\"text\": \"") + 9;
  for (size_t c = 0; c < 60 * 3; c += 3) page.replace(body + c, 3, c % 2 ? "鱼" : "鸟");
  page.replace(page.find("\"copy\""), 6, "\"page\"");
  r = RunCli({"index", "query", idx, "-", "-q"}, copy + page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = ParseJsonLines(r.out);
  ASSERT_EQ(out.size(), 2u);
  bool found_p0 = false;
  for (const auto& m : out[0]["matches"]) {
    if (m["id"] == "p0") {
      found_p0 = true;
      EXPECT_EQ(m["distance"].get<int>(), want);
    }
  }
  EXPECT_TRUE(found_p0) << r.out;
  EXPECT_TRUE(out[1]["matches"].empty()) << r.out;  // the footer alone matches nothing

  r = RunCli({"index", "check", idx, "-", "-q"}, page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(ParseJsonLines(r.out)[0]["matches"].empty()) << r.out;
  r = RunCli({"index", "add", idx, "-", "-q"}, page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A compaction keeps the counts (they travel with every commit).
  r = RunCli({"index", "compact", idx, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunCli({"index", "query", idx, "-", "-q"}, page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  out = ParseJsonLines(r.out);
  ASSERT_EQ(out[0]["matches"].size(), 1u) << r.out;
  EXPECT_EQ(out[0]["matches"][0]["distance"], 0);
}

// An index written before the counts were committed with it (no attachment,
// IDX.lines beside it) is still read; without IDX.lines its fingerprints
// cannot be reproduced: an error naming the file.
TEST(BoilerplateCliTest, OlderIndexReadsItsLinesFile) {
  const std::string dir = MakeTempDir("boilerplate_index_v2");
  const std::string idx = dir + "/idx";
  auto method = Method::Parse("chars5,boilerplate=lines");
  ASSERT_TRUE(method.ok());
  const std::string footer = "版权所有 转载必究\n本站声明：文章仅代表作者观点";
  LineCounter counter;
  for (int i = 0; i < 10; ++i) {
    std::string page;
    for (int j = 0; j < 10; ++j) page += "正文第" + std::to_string(i * 10 + j) + "段\n";
    counter.Add(page + footer);
  }
  ASSERT_TRUE(std::move(counter).Finish().Save(idx + ".lines").ok());
  DocumentIndexHeader header;
  header.pipeline_json =
      nlohmann::json{{"method", method->ToString()}, {"bits", method->pipeline.bits}}.dump();
  PermutedTableOptions options;
  options.bits = method->pipeline.bits;
  options.max_k = method->default_k;
  auto pipeline = Pipeline::Create(method->pipeline);
  ASSERT_TRUE(pipeline.ok());
  const std::string body = "一段很长的正文内容，讲的是城市的交通和天气，还有别的事情。";
  const std::vector<std::string> ids = {"a"};
  const std::vector<Fingerprint> fps = {(*pipeline)->Fingerprint(body).fingerprint};
  auto built = DocumentIndex::Build(idx, header, options, ids, fps);
  ASSERT_TRUE(built.ok()) << built.status().message();
  ASSERT_TRUE((*built)->Commit().ok());
  built->reset();
  const std::string page = nlohmann::json{{"id", "q"}, {"text", body + "\n" + footer}}.dump();
  auto r = RunCli({"index", "query", idx, "-", "-q", "-k", "0"}, page + "\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseJsonLines(r.out)[0]["matches"].size(), 1u) << r.out;  // the footer left out

  ASSERT_EQ(std::rename((idx + ".lines").c_str(), (dir + "/moved").c_str()), 0);
  r = RunCli({"index", "query", idx, "-", "-q"}, page + "\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(idx + ".lines"), std::string::npos) << r.err;
  // A damaged one: Corruption, also named.
  WriteFile(idx + ".lines", "not line counts");
  r = RunCli({"index", "query", idx, "-", "-q"}, page + "\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(idx + ".lines"), std::string::npos) << r.err;
}

// The line counts are committed with the index, at its one commit point:
// `index build` of corpus B over an index of corpus A, killed before each of
// its write steps (or failing it with ENOSPC), leaves an index that opens
// with A's documents and A's counts or B's documents and B's counts, never
// B's documents with A's counts (or none), as when IDX.lines was written
// after the commit.
TEST(BoilerplateCliTest, LineCountsCommitAtomicallyWithTheIndex) {
  const std::string dir = MakeTempDir("boilerplate_index_crash");
  const auto corpus = [](const std::string& prefix, const std::string& footer) {
    std::string jsonl;
    for (int i = 0; i < 8; ++i) {
      const std::string text = prefix + "的正文第" + std::to_string(i) + "篇，" +
                               std::string(i % 2 ? "讲城市交通的变化" : "讲乡村天气的故事") +
                               "和别的内容。\n" + footer;
      jsonl += nlohmann::json{{"id", prefix + std::to_string(i)}, {"text", text}}.dump() + "\n";
    }
    return jsonl;
  };
  const std::string footer_a = "甲网版权所有\n甲网编辑部\n甲网声明";
  const std::string footer_b = "乙站来源说明\n乙站责任编辑";
  WriteFile(dir + "/a.jsonl", corpus("a", footer_a));
  WriteFile(dir + "/b.jsonl", corpus("b", footer_b));
  const std::string old_idx = dir + "/old";
  auto r = RunCli({"index", "build", "--method", "chars5,boilerplate=lines", dir + "/a.jsonl", "-o",
                   old_idx, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The state an index is in: "a" or "b" with its own counts, else a failure.
  const auto state = [&](const std::string& idx) -> std::string {
    auto index = TextIndex::Open(idx, {});
    if (!index.ok()) return "unreadable: " + index.status().message();
    const bool a = (*index)->Contains("a0"), b = (*index)->Contains("b0");
    if (a == b || (*index)->size() != 8) return "a mix of documents";
    const std::string& footer = a ? footer_a : footer_b;
    const std::string body =
        std::string(a ? "a" : "b") + "的正文第0篇，讲乡村天气的故事和别的内容。";
    // Its own footer left out (its counts), the other corpus's footer kept.
    if ((*index)->Fingerprint(body + "\n" + footer).fingerprint !=
        (*index)->Fingerprint(body).fingerprint) {
      return std::string(a ? "a" : "b") + "'s documents without its line counts";
    }
    if ((*index)->Stats().boilerplate_lines != (a ? 3u : 2u)) return "other line counts";
    return a ? "a" : "b";
  };
  ASSERT_EQ(state(old_idx), "a");
  for (const char* fault : {"NEARDUP_FAULT_KILL_AT", "NEARDUP_FAULT_FAIL_AT"}) {
    bool finished = false;
    for (int step = 1; step <= 60 && !finished; ++step) {
      const std::string idx = dir + "/run";
      for (const char* suffix : {"", ".ids", ".lines", ".lock", ".tmp"}) {
        std::filesystem::remove(idx + suffix);
      }
      std::filesystem::copy_file(old_idx, idx);
      std::filesystem::copy_file(old_idx + ".ids", idx + ".ids");
      setenv(fault, std::to_string(step).c_str(), 1);
      r = RunCli({"index", "build", "--method", "chars5,boilerplate=lines", dir + "/b.jsonl", "-o",
                  idx, "-q"});
      unsetenv(fault);
      finished = r.exit_code == 0;
      const std::string got = state(idx);
      EXPECT_TRUE(got == "a" || got == "b") << fault << "=" << step << ": " << got;
      if (finished) {
        EXPECT_EQ(got, "b") << fault << "=" << step;
      }
    }
    EXPECT_TRUE(finished) << fault << ": still failing after 60 steps";
  }
}

}  // namespace
}  // namespace neardup
