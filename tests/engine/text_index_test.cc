// Copyright 2026 The neardup Authors.
//
// TextIndex (text_index.h): the method read from every header version, the
// line counts committed with the index, one empty-document policy, one
// stats object, Create refusing an existing index.

#include "neardup/text_index.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;

const char* kText = "网页去重是搜索引擎的基础工作之一，近似重复的网页会浪费存储和带宽。";

TEST(TextIndexTest, ReadsAHeaderWrittenBeforeTheMethodWasStored) {
  // The command line's settings one by one (doc/index_format.md): Python's
  // Index refused these ("rebuild it"), the CLI read them.
  const std::string dir = MakeTempDir("text_index_old_header");
  DocumentIndexHeader header;
  header.pipeline_json = R"({"normalize": "nfkc", "bits": 64, "topk": 0})";
  PermutedTableOptions options;
  options.bits = 64;
  options.max_k = 3;
  auto want = Method::Parse("", {{"normalize", "nfkc"}, {"bits", "64"}, {"topk", "0"}});
  ASSERT_TRUE(want.ok()) << want.status().message();
  auto pipeline = Pipeline::Create(want->pipeline);
  ASSERT_TRUE(pipeline.ok());
  const std::vector<std::string> ids = {"a"};
  const std::vector<Fingerprint> fps = {(*pipeline)->Fingerprint(kText).fingerprint};
  auto built = DocumentIndex::Build(dir + "/old.idx", header, options, ids, fps);
  ASSERT_TRUE(built.ok()) << built.status().message();
  ASSERT_TRUE((*built)->Commit().ok());
  built->reset();

  auto index = TextIndex::Open(dir + "/old.idx", {});
  ASSERT_TRUE(index.ok()) << index.status().message();
  EXPECT_EQ((*index)->method(), *want);
  std::vector<TextIndexResult> results;
  const DocumentFingerprint fp = (*index)->Fingerprint(kText);
  ASSERT_TRUE((*index)->Query({&fp, 1}, 0, &results).ok());
  ASSERT_EQ(results.size(), 1u);
  ASSERT_EQ(results[0].matches.size(), 1u);
  EXPECT_EQ(results[0].matches[0].id, "a");
  // The stats name the method by its text form.
  EXPECT_EQ(nlohmann::json::parse(TextIndexStatsJson((*index)->Stats()))["method"],
            want->ToString());
}

// Headers of the settings form recorded the command line's --idf whatever
// the weights. Method::Parse now refuses an IDF table for weights that use
// none; such an index still opens, with the method it was built with (the
// table was ignored then), and an IDF method keeps its table.
TEST(TextIndexTest, OldHeaderWithAnIdfTheWeightsNeverUsedStillOpens) {
  auto tf = TextIndex::MethodOfHeader(
      R"({"normalize": "nfkc", "bits": 64, "weights": "tf", "idf": "/no/such.idf"})");
  ASSERT_TRUE(tf.ok()) << tf.status().message();
  auto want = Method::Parse("", {{"normalize", "nfkc"}, {"bits", "64"}, {"weights", "tf"}});
  ASSERT_TRUE(want.ok()) << want.status().message();
  EXPECT_EQ(*tf, *want);
  EXPECT_TRUE(tf->pipeline.idf_path.empty());
  auto tfidf = TextIndex::MethodOfHeader(
      R"({"normalize": "nfkc", "bits": 64, "weights": "tfidf", "idf": "/no/such.idf"})");
  ASSERT_TRUE(tfidf.ok()) << tfidf.status().message();
  EXPECT_TRUE(tfidf->uses_idf());
  EXPECT_EQ(tfidf->pipeline.idf_path, "/no/such.idf");
}

TEST(TextIndexTest, EmptyDocumentsAreNeverAddedAndChangeNothing) {
  const std::string dir = MakeTempDir("text_index_empty");
  auto method = Method::Parse("chars5,bits=64");
  ASSERT_TRUE(method.ok());
  auto index = TextIndex::Create(dir + "/e.idx", *method, {});
  ASSERT_TRUE(index.ok()) << index.status().message();
  TextIndex& idx = **index;
  const std::vector<std::string> ids = {"full", "empty", "blank"};
  const std::vector<DocumentFingerprint> fps = {idx.Fingerprint(kText), idx.Fingerprint(""),
                                                idx.Fingerprint(" \n ")};
  ASSERT_FALSE(fps[0].empty());
  ASSERT_TRUE(fps[1].empty() && fps[2].empty());
  std::vector<TextIndexResult> results;
  ASSERT_TRUE(idx.Check(ids, fps, CheckOptions{}, &results).ok());
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].added);
  for (size_t i : {1u, 2u}) {
    EXPECT_FALSE(results[i].added);
    EXPECT_TRUE(results[i].empty);
    EXPECT_TRUE(results[i].matches.empty());
  }
  EXPECT_EQ(idx.size(), 1u);
  EXPECT_FALSE(idx.Contains("empty"));
  ASSERT_TRUE(idx.Add(std::vector<std::string>{"e2"}, std::vector<DocumentFingerprint>{fps[1]},
                      false, &results)
                  .ok());
  EXPECT_FALSE(results[0].added);
  EXPECT_TRUE(results[0].empty);
  ASSERT_TRUE(idx.Query(fps, -1, &results).ok());
  EXPECT_EQ(results[0].matches.size(), 1u);
  EXPECT_TRUE(results[1].empty && results[1].matches.empty());
  EXPECT_EQ(idx.size(), 1u);
}

TEST(TextIndexTest, CreateRefusesAnExistingIndexUnlessOverwrite) {
  const std::string dir = MakeTempDir("text_index_create");
  auto method = Method::Parse("chars5,bits=64");
  ASSERT_TRUE(method.ok());
  const std::string path = dir + "/c.idx";
  {
    auto index = TextIndex::Create(path, *method, {});
    ASSERT_TRUE(index.ok()) << index.status().message();
    ASSERT_TRUE((*index)->Commit().ok());
  }
  auto again = TextIndex::Create(path, *method, {});
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(again.status().IsInvalidArgument());
  EXPECT_NE(again.status().message().find("exists"), std::string::npos);
  TextIndexOptions overwrite;
  overwrite.overwrite = true;
  EXPECT_TRUE(TextIndex::Create(path, *method, overwrite).ok());
}

TEST(TextIndexTest, StatsJsonHasOneSetOfNames) {
  const std::string dir = MakeTempDir("text_index_stats");
  auto method = Method::Parse("chars5,boilerplate=lines");
  ASSERT_TRUE(method.ok());
  LineCounter counter;
  // Pages with text of their own (near copies of one text would count as
  // one group, boilerplate.h) and a two-line footer.
  for (int i = 0; i < 10; ++i) {
    std::string page;
    for (int j = 0; j < 10; ++j) page += "正文" + std::to_string(i * 10 + j) + "\n";
    counter.Add(page + "页脚一行\n页脚两行");
  }
  const LineStats lines = std::move(counter).Finish();
  auto index = TextIndex::Create(dir + "/s.idx", *method, {}, &lines);
  ASSERT_TRUE(index.ok()) << index.status().message();
  ASSERT_TRUE((*index)->Commit().ok());
  const auto j = nlohmann::ordered_json::parse(TextIndexStatsJson((*index)->Stats()));
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"path", "documents", "bits", "max_k", "memory_bytes",
                                      "file_bytes", "log_bytes", "log_records", "evicted", "method",
                                      "fingerprints_input", "boilerplate", "tables"}));
  EXPECT_EQ(j["boilerplate"]["mode"], "lines");
  EXPECT_EQ(j["boilerplate"]["lines"], 2);
  // Reopened: the counts came back with the commit.
  auto reopened = TextIndex::Open(dir + "/s.idx", {});
  ASSERT_TRUE(reopened.ok()) << reopened.status().message();
  EXPECT_TRUE((*reopened)->strips_boilerplate());
  EXPECT_EQ((*reopened)->Fingerprint("独有的正文内容很长很长\n页脚一行\n页脚两行").fingerprint,
            (*reopened)->Fingerprint("独有的正文内容很长很长").fingerprint);
}

// The two-level filter (kind "filter", no tables) states its first level's
// threshold beside its recall.
TEST(TextIndexTest, StatsJsonStatesTheFiltersThreshold) {
  TextIndexStats s;
  s.tables.kind = "filter";
  s.tables.probe_radius = 20;
  s.tables.recall_at_k = 0.9976;
  const auto j = nlohmann::json::parse(TextIndexStatsJson(s));
  EXPECT_EQ(j["tables"]["kind"], "filter");
  EXPECT_EQ(j["tables"]["low_word_threshold"], 20);
  EXPECT_DOUBLE_EQ(j["tables"]["recall_at_k"].get<double>(), 0.9976);
  EXPECT_FALSE(j["tables"].contains("probe_radius"));
  s.tables.kind = "scan";
  EXPECT_FALSE(
      nlohmann::json::parse(TextIndexStatsJson(s))["tables"].contains("low_word_threshold"));
}

// The probe tables (kind "probe") state their layout: L tables of b-bit
// keys probed within r, the filter words' threshold t, and the tables'
// bytes per fingerprint; the bands' and the filter's names are not printed.
TEST(TextIndexTest, StatsJsonStatesTheProbeTablesLayout) {
  TextIndexStats s;
  s.tables.kind = "probe";
  s.tables.tables = 8;
  s.tables.band_bits = 14;
  s.tables.probe_radius = 2;
  s.tables.filter_threshold = 13;
  s.tables.bytes_per_fingerprint = 96.5;
  s.tables.recall_at_k = 0.99012;
  for (const int indent : {-1, 2}) {
    const auto j = nlohmann::json::parse(TextIndexStatsJson(s, indent))["tables"];
    EXPECT_EQ(j["kind"], "probe");
    EXPECT_EQ(j["tables"], 8);
    EXPECT_EQ(j["key_bits"], 14);
    EXPECT_EQ(j["probe_radius"], 2);
    EXPECT_EQ(j["filter_threshold"], 13);
    EXPECT_DOUBLE_EQ(j["bytes_per_fingerprint"].get<double>(), 96.5);
    EXPECT_DOUBLE_EQ(j["recall_at_k"].get<double>(), 0.99012);
    for (const char* name : {"band_bits", "seed", "low_word_threshold", "blocks"}) {
      EXPECT_FALSE(j.contains(name)) << name;
    }
  }
  // Without tables there are no table bytes to state.
  s.tables.kind = "scan";
  const auto scan = nlohmann::json::parse(TextIndexStatsJson(s))["tables"];
  EXPECT_FALSE(scan.contains("bytes_per_fingerprint"));
  EXPECT_FALSE(scan.contains("filter_threshold"));
}

}  // namespace
}  // namespace neardup
