// Copyright 2026 The neardup Authors.
//
// `neardup index build` is the library's TextIndex::Build: the boilerplate
// counting pass and the fingerprint pass are the engine's (one
// implementation, neardup/document_pass.h), so the CLI's index is the
// engine's, from a file, a .gz file or standard input alike, and the
// counting pass shows a percentage of the compressed bytes read.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <zlib.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "neardup/method.h"
#include "neardup/text_index.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

constexpr char kMethod[] = "chars5,boilerplate=lines";

std::string Gzip(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// n documents of random letters; every 4th ends with a shared two-line
// footer (boilerplate), every 50th is a near copy of the one before.
std::string Corpus(int n) {
  std::mt19937_64 rng(23);
  std::string corpus, last;
  for (int i = 0; i < n; ++i) {
    std::string text;
    if (i % 50 == 49) {
      text = last;
      text[3] = 'z';
    } else {
      for (int j = 0; j < 160; ++j) text += "abcdefghijklmnop"[rng() % 16];
    }
    last = text;
    if (i % 4 == 0) text += "\\n本文来源：新华通讯社\\n责任编辑：王小明";
    corpus += "{\"id\":\"d" + std::to_string(i) + "\",\"text\":\"" + text + "\"}\n";
  }
  return corpus;
}

// The percentages of the plain progress lines of `phase` in `err`.
std::vector<int> Percents(const std::string& err, const std::string& phase) {
  const std::string prefix = "neardup: progress: " + phase + " ";
  std::vector<int> percents;
  for (size_t at = 0; (at = err.find(prefix, at)) != std::string::npos;) {
    at += prefix.size();
    const size_t end = err.find('\n', at);
    const std::string line = err.substr(at, end - at);
    EXPECT_NE(line.find("% ("), std::string::npos) << line;
    percents.push_back(std::atoi(line.c_str()));
  }
  return percents;
}

// Every document's matches in `index`, one line each.
std::vector<std::string> Answers(const std::string& path, const std::vector<std::string>& texts) {
  auto index = TextIndex::Open(path, {});
  EXPECT_TRUE(index.ok()) << index.status().message();
  if (!index.ok()) return {};
  std::vector<DocumentFingerprint> fps;
  for (const std::string& t : texts) fps.push_back((*index)->Fingerprint(t));
  std::vector<TextIndexResult> results;
  EXPECT_TRUE((*index)->Query(fps, -1, &results).ok());
  std::vector<std::string> out;
  for (const TextIndexResult& r : results) {
    std::string line = r.empty ? "empty" : "";
    for (const DocumentMatch& m : r.matches) line += m.id + ":" + std::to_string(m.distance) + " ";
    out.push_back(line);
  }
  return out;
}

// The texts of the corpus (the JSON escapes undone), for the queries.
std::vector<std::string> Texts(const std::string& path) {
  std::vector<std::string> texts;
  auto reader = DocumentReader::Open({path}, {});
  EXPECT_TRUE(reader.ok());
  Document doc;
  while ((*reader)->Next(&doc)) texts.push_back(doc.text);
  return texts;
}

TEST(IndexBuildCliTest, CountingPassShowsAPercentageOfCompressedBytes) {
  const std::string dir = MakeTempDir("index_build_gz");
  const std::string gz = Gzip(Corpus(20000));
  ASSERT_GT(gz.size(), 1u << 20);
  WriteFile(dir + "/c.jsonl.gz", gz);
  setenv("NEARDUP_PROGRESS_INTERVAL", "0", 1);
  const auto r = RunCli({"index", "build", "--method", kMethod, "--progress", "plain",
                         dir + "/c.jsonl.gz", "-o", dir + "/idx"});
  unsetenv("NEARDUP_PROGRESS_INTERVAL");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* phase : {"counting lines (boilerplate)", "reading + fingerprints"}) {
    const std::vector<int> percents = Percents(r.err, phase);
    ASSERT_GE(percents.size(), 10u) << phase << "\n" << r.err;
    EXPECT_LT(percents.front(), 60) << phase << "\n" << r.err;
    for (size_t i = 1; i < percents.size(); ++i) EXPECT_GE(percents[i], percents[i - 1]);
    EXPECT_LE(percents.back(), 100);
    EXPECT_GT(percents.back(), 80) << phase << "\n" << r.err;
  }
}

TEST(IndexBuildCliTest, CliBuildIsTheEnginesBuildFromAnyInput) {
  const std::string dir = MakeTempDir("index_build_engine");
  const std::string corpus = Corpus(2000);
  const std::string plain = dir + "/c.jsonl";
  WriteFile(plain, corpus);
  WriteFile(dir + "/c.jsonl.gz", Gzip(corpus));

  // The engine, in this process.
  auto method = Method::Parse(kMethod);
  ASSERT_TRUE(method.ok()) << method.status().message();
  DedupInput input;
  input.open = [&plain](bool) { return DocumentReader::Open({plain}, {}); };
  std::vector<std::string> phases;
  TextIndexBuildSummary summary;
  auto built = TextIndex::Build(
      dir + "/engine.idx", *method, {}, input,
      [&](std::string_view phase, double, double, std::string_view) {
        if (phases.empty() || phases.back() != phase) phases.emplace_back(phase);
      },
      &summary);
  ASSERT_TRUE(built.ok()) << built.status().message();
  EXPECT_EQ(summary.documents, 2000u);
  EXPECT_EQ(summary.input.documents, 2000u);
  EXPECT_EQ(phases,
            (std::vector<std::string>{"counting lines (boilerplate)", "reading + fingerprints"}));
  const TextIndexStats engine = (*built)->Stats();
  EXPECT_EQ(engine.boilerplate_lines, 2u);  // the footer's two lines
  const std::string attachment = (*built)->documents().header().attachment;  // the line counts
  built->reset();

  // The CLI, from the file, the .gz file and standard input (held once).
  const auto a = RunCli({"index", "build", "-q", "--method", kMethod, plain, "-o", dir + "/a.idx"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto b = RunCli(
      {"index", "build", "-q", "--method", kMethod, dir + "/c.jsonl.gz", "-o", dir + "/b.idx"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto c =
      RunCli({"index", "build", "-q", "--method", kMethod, "-o", dir + "/c.idx"}, corpus);
  ASSERT_EQ(c.exit_code, 0) << c.err;

  const std::vector<std::string> texts = Texts(plain);
  ASSERT_EQ(texts.size(), 2000u);
  const std::vector<std::string> want = Answers(dir + "/engine.idx", texts);
  size_t matched = 0;
  for (const std::string& line : want) matched += line.find(' ') != line.rfind(' ');
  EXPECT_GE(matched, 60u);  // the near copies find each other
  for (const char* idx : {"a.idx", "b.idx", "c.idx"}) {
    auto index = TextIndex::Open(dir + "/" + idx, {});
    ASSERT_TRUE(index.ok()) << index.status().message();
    const TextIndexStats s = (*index)->Stats();
    EXPECT_EQ(s.method, engine.method) << idx;
    EXPECT_EQ(s.documents, engine.documents) << idx;
    EXPECT_EQ(s.boilerplate_lines, engine.boilerplate_lines) << idx;
    EXPECT_EQ((*index)->documents().header().attachment, attachment) << idx;
    index->reset();
    EXPECT_EQ(Answers(dir + "/" + idx, texts), want) << idx;
  }
}

}  // namespace
}  // namespace neardup
