// Copyright 2026 The neardup Authors.
//
// The evaluation harness: edit ratio, perturbation, MinHash, metrics.

#include "neardup/eval.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "neardup/features.h"
#include "neardup/method.h"
#include "neardup/presets.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ReadFile;
using ::neardup::testing::WriteFile;

// Plain O(nm) dynamic programme: the oracle of the bit-parallel LCS.
size_t LcsOracle(std::u32string_view a, std::u32string_view b) {
  std::vector<size_t> prev(b.size() + 1, 0), cur(b.size() + 1, 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = a[i - 1] == b[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

TEST(EditRatio, LcsMatchesDynamicProgramme) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t alphabet = 2 + rng() % 6;
    std::u32string a(rng() % 200, U'a'), b(rng() % 200, U'a');
    for (char32_t& c : a) c = U'甲' + static_cast<char32_t>(rng() % alphabet);
    for (char32_t& c : b) c = U'甲' + static_cast<char32_t>(rng() % alphabet);
    ASSERT_EQ(LongestCommonSubsequence(a, b), LcsOracle(a, b)) << "trial " << trial;
  }
}

TEST(EditRatio, HandMadeCases) {
  EXPECT_DOUBLE_EQ(EditRatio(std::string_view(""), std::string_view("")), 0.0);
  EXPECT_DOUBLE_EQ(EditRatio(std::string_view("一二三四"), std::string_view("一二三四")), 0.0);
  // One of four characters replaced.
  EXPECT_DOUBLE_EQ(EditRatio(std::string_view("一二三四"), std::string_view("一二五四")), 0.25);
  // A moved sentence of 3 characters out of 8 counts 3.
  EXPECT_DOUBLE_EQ(
      EditRatio(std::string_view("甲乙丙。丁戊。"), std::string_view("丁戊。甲乙丙。")), 3.0 / 7.0);
  EXPECT_DOUBLE_EQ(EditRatio(std::string_view("abc"), std::string_view("")), 1.0);
  EXPECT_EQ(EncodeUtf8(DecodeUtf8("混合 text ✓")), "混合 text ✓");
}

// Perturbations move sentences as the library's splitter cuts them, with
// closers kept and clause / full-stop ends (the options perturb.cc uses).
TEST(EditRatio, SplitSentences) {
  const std::string text = "第一句。第二句！“引用。”最后 no end";
  SentenceSplitOptions options;
  options.keep_closers = true;
  options.clause_and_period_ends = true;
  const auto s = SplitSentenceSpans(text, options);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(text.substr(s[0].begin, s[0].end - s[0].begin), "第一句。");
  EXPECT_EQ(text.substr(s[2].begin, s[2].end - s[2].begin), "“引用。”");
  EXPECT_EQ(s.back().end, text.size());
}

// A synthetic Chinese corpus: sentences of random characters, so that the
// test runs without the shared data.
std::vector<std::string> SyntheticCorpus(size_t docs, size_t sentences, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> out;
  for (size_t d = 0; d < docs; ++d) {
    std::u32string text;
    for (size_t s = 0; s < sentences; ++s) {
      const size_t len = 8 + rng() % 30;
      for (size_t i = 0; i < len; ++i) text.push_back(U'一' + static_cast<char32_t>(rng() % 3000));
      text.push_back(rng() % 5 == 0 ? U'！' : U'。');
    }
    out.push_back(EncodeUtf8(text));
  }
  return out;
}

std::vector<std::string> CorpusForPerturbation() {
  // Real news when it is there (long documents, as seed 003), else synthetic.
  if (auto path = ::neardup::testing::SharedDataFile("zh_thucnews1000.jsonl")) {
    std::ifstream in(*path);
    std::string line;
    std::vector<std::string> texts;
    while (std::getline(in, line) && texts.size() < 30) {
      const std::string text = nlohmann::json::parse(line)["text"];
      if (DecodeUtf8(text).size() >= 800) texts.push_back(text);
    }
    if (texts.size() >= 10) return texts;
  } else if (::neardup::testing::InCi()) {
    // In CI the data is part of the setup: falling back would hide a broken one.
    ADD_FAILURE() << "shared data file zh_thucnews1000.jsonl is absent and CI=true";
  }
  return SyntheticCorpus(20, 40, 3);
}

TEST(Perturb, AchievedRatioWithinOnePointOfTarget) {
  const std::vector<std::string> corpus = CorpusForPerturbation();
  const Perturber perturber(corpus, {"中国", "经济", "发展", "记者", "今天"});
  for (double target : {0.05, 0.10, 0.15, 0.20}) {
    std::array<int, kNumEditOps> ops{};
    for (size_t i = 0; i < std::min<size_t>(corpus.size(), 12); ++i) {
      const PerturbResult r = perturber.Perturb(i, target, 42);
      // Measured independently of what Perturb reports.
      const double measured = EditRatio(corpus[i], r.text);
      EXPECT_NEAR(measured, target, 0.01) << "doc " << i << " T " << target;
      EXPECT_NEAR(measured, r.ratio, 1e-12);
      EXPECT_NE(r.text, corpus[i]);
      for (int k = 0; k < kNumEditOps; ++k) ops[k] += r.ops_applied[k];
    }
    // Every kind of operation is used.
    for (int k = 0; k < kNumEditOps; ++k) EXPECT_GT(ops[k], 0) << "op " << k << " T " << target;
  }
}

TEST(Perturb, DeterministicBySeed) {
  const std::vector<std::string> corpus = SyntheticCorpus(8, 30, 11);
  const Perturber a(corpus, {"词语", "句子"});
  const Perturber b(corpus, {"词语", "句子"});
  for (size_t i = 0; i < corpus.size(); ++i) {
    EXPECT_EQ(a.Perturb(i, 0.1, 5).text, b.Perturb(i, 0.1, 5).text);
    EXPECT_NE(a.Perturb(i, 0.1, 5).text, a.Perturb(i, 0.1, 6).text);
    EXPECT_NE(a.Perturb(i, 0.1, 5).text, a.Perturb(i, 0.15, 5).text);
  }
}

TEST(Perturb, WithoutWordPoolAndTinyTexts) {
  const std::vector<std::string> corpus = {"短。", "另一个很短的文本。", ""};
  const Perturber p(corpus, {});
  for (size_t i = 0; i < corpus.size(); ++i) {
    const PerturbResult r = p.Perturb(i, 0.5, 1);
    EXPECT_LE(r.ratio, 0.5 + 1.0 / 3 + 1e-9);
    EXPECT_NEAR(EditRatio(corpus[i], r.text), r.ratio, 1e-12);
  }
}

TEST(Metrics, PairCounts) {
  PairCounts c;
  c.true_positives = 6;
  c.false_positives = 2;
  c.false_negatives = 4;
  EXPECT_DOUBLE_EQ(c.precision(), 0.75);
  EXPECT_DOUBLE_EQ(c.recall(), 0.6);
  EXPECT_DOUBLE_EQ(c.f1(), 2 * 0.75 * 0.6 / 1.35);
  PairCounts none;  // nothing predicted, nothing to find
  EXPECT_DOUBLE_EQ(none.precision(), 1.0);
  EXPECT_DOUBLE_EQ(none.recall(), 1.0);
  PairCounts missed;
  missed.false_negatives = 3;
  EXPECT_DOUBLE_EQ(missed.recall(), 0.0);
  EXPECT_DOUBLE_EQ(missed.f1(), 0.0);
}

TEST(Metrics, DedupRate) {
  EXPECT_DOUBLE_EQ(DedupRate({true, true, false, false}, {true, false, false, true}), 0.5);
  EXPECT_DOUBLE_EQ(DedupRate({true, false, false}, {true, false, false}), 1.0);
  EXPECT_DOUBLE_EQ(DedupRate({}, {}), 0.0);
}

TEST(Metrics, RocAucWithTies) {
  // Perfect ranking.
  EXPECT_DOUBLE_EQ(*RocAuc(std::vector<double>{1, 2, 3, 4}, {false, false, true, true}), 1.0);
  // Inverted.
  EXPECT_DOUBLE_EQ(*RocAuc(std::vector<double>{4, 3, 2, 1}, {false, false, true, true}), 0.0);
  // All tied: 1/2.
  EXPECT_DOUBLE_EQ(*RocAuc(std::vector<double>{5, 5, 5, 5}, {true, false, true, false}), 0.5);
  // Positives {0.8, 0.5}, negatives {0.5, 0.2}: 1 + 1 + 1/2 + 1 over 4.
  EXPECT_DOUBLE_EQ(*RocAuc(std::vector<double>{0.8, 0.5, 0.5, 0.2}, {true, true, false, false}),
                   0.875);
  EXPECT_FALSE(RocAuc(std::vector<double>{1, 2}, {true, true}).ok());
  EXPECT_FALSE(RocAuc(std::vector<double>{1}, {true, false}).ok());
}

TEST(Metrics, RocAucMatchesPairCounting) {
  std::mt19937_64 rng(3);
  std::vector<double> scores(300);
  std::vector<bool> labels(300);
  for (size_t i = 0; i < scores.size(); ++i) {
    scores[i] = static_cast<double>(rng() % 10);  // many ties
    labels[i] = rng() % 3 == 0;
  }
  double wins = 0, total = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    for (size_t j = 0; j < scores.size(); ++j) {
      if (!labels[i] || labels[j]) continue;
      wins += scores[i] > scores[j] ? 1 : scores[i] == scores[j] ? 0.5 : 0;
      total += 1;
    }
  }
  EXPECT_NEAR(*RocAuc(scores, labels), wins / total, 1e-12);
}

TEST(Harness, ParseMethodsAndPairs) {
  auto all = ParseEvalMethods("all");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), Presets().size() + 2);
  for (const Preset& p : Presets()) {
    EXPECT_NE(std::find(all->begin(), all->end(), p.name), all->end());
  }
  EXPECT_EQ(*ParseEvalMethods("minhash,exact"), (std::vector<std::string>{"minhash", "exact"}));
  EXPECT_FALSE(ParseEvalMethods("nosuch").ok());
  auto custom = ParseCustomMethod("c4=chars:4/uniform/0");
  ASSERT_TRUE(custom.ok()) << custom.status().ToString();
  EXPECT_EQ(custom->name, "c4");
  EXPECT_EQ(custom->pipeline.features.kind, FeatureKind::kCharNgrams);
  EXPECT_EQ(custom->pipeline.features.ngram, 4);
  EXPECT_EQ(custom->pipeline.features.weights, WeightScheme::kUniform);
  EXPECT_EQ(custom->pipeline.features.top_k, 0);
  EXPECT_EQ(ParseCustomMethod("w=words/tfidf/10")->pipeline.features.top_k, 10);
  EXPECT_FALSE(ParseCustomMethod("c4=chars:4/tf").ok());
  EXPECT_FALSE(ParseCustomMethod("=chars:4/tf/0").ok());
  EXPECT_FALSE(ParseCustomMethod("x=chars:4/bogus/0").ok());
  // The method text form: a preset with overrides, every setting reachable.
  auto full = ParseCustomMethod("e5=esimhash,entropy_threshold=5,topk=10");
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->pipeline.features.weights, WeightScheme::kEntropy);
  EXPECT_DOUBLE_EQ(full->pipeline.features.entropy_threshold, 5.0);
  EXPECT_EQ(full->pipeline.features.top_k, 10);
  EXPECT_FALSE(ParseCustomMethod("x=chars5,colour=red").ok());

  const std::string dir = MakeTempDir("eval_pairs");
  WriteFile(dir + "/paws.tsv", "id\tsentence1\tsentence2\tlabel\n1\t甲\t乙\t1\n2\t丙\t丁\t0\n");
  WriteFile(dir + "/lcqmc.tsv", "甲\t乙\t0\n丙\t丁\t1\n");
  auto paws = ReadLabelledPairs(dir + "/paws.tsv");
  ASSERT_TRUE(paws.ok()) << paws.status().ToString();
  ASSERT_EQ(paws->size(), 2u);
  EXPECT_EQ((*paws)[0].a, "甲");
  EXPECT_TRUE((*paws)[0].positive);
  auto lcqmc = ReadLabelledPairs(dir + "/lcqmc.tsv");
  ASSERT_TRUE(lcqmc.ok());
  EXPECT_EQ((*lcqmc)[1].b, "丁");
  EXPECT_TRUE((*lcqmc)[1].positive);
  WriteFile(dir + "/bad.tsv", "a\tb\tyes\n");
  EXPECT_FALSE(ReadLabelledPairs(dir + "/bad.tsv").ok());
}

TEST(Harness, EvaluateDocsOnSyntheticCorpus) {
  std::vector<EvalDocument> corpus;
  const auto texts = SyntheticCorpus(30, 20, 5);
  for (size_t i = 0; i < texts.size(); ++i) corpus.push_back({std::to_string(i), texts[i]});
  corpus.push_back({"copy", texts[0]});  // a natural duplicate
  DocsEvalOptions o;
  o.edits = {0.1};
  o.methods = {"exact", "minhash", "chargram"};
  o.bits = {64};
  o.threads = 2;
  auto report = EvaluateDocs(corpus, o);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->originals, 31u);
  EXPECT_EQ(report->variants, 23u);
  ASSERT_EQ(report->natural_pairs.size(), 1u);
  EXPECT_EQ(report->natural_pairs[0], std::make_pair(std::string("0"), std::string("copy")));
  // exact: 1 row; minhash: 9 thresholds; chargram/64: k = 0..16.
  EXPECT_EQ(report->rows.size(), 1u + 9u + 17u);
  for (const EvalRow& r : report->rows) {
    EXPECT_GE(r.precision, 0);
    EXPECT_LE(r.precision, 1);
    EXPECT_GE(r.dedup_rate, 0);
    EXPECT_LE(r.dedup_rate, 1);
    EXPECT_GT(r.docs_per_s, 0);
    if (r.method == "exact") {
      // The natural copy is found, but it is not counted; no variant is equal.
      EXPECT_EQ(r.counts.true_positives, 0u);
      EXPECT_EQ(r.counts.false_positives, 0u);
      EXPECT_EQ(r.natural_found, 1u);
    }
  }
  ASSERT_EQ(report->histograms.size(), 1u);
  uint64_t dup = 0;
  for (uint64_t c : report->histograms[0].duplicate) dup += c;
  EXPECT_EQ(dup, 23u);
  EXPECT_FALSE(EvaluateDocs(corpus,
                            [] {
                              DocsEvalOptions bad;
                              bad.edits = {1.5};
                              return bad;
                            }())
                   .ok());
}

TEST(Harness, LengthBandsAndTheDedupJob) {
  EXPECT_EQ(LengthBand(0), 0u);
  EXPECT_EQ(LengthBand(299), 0u);
  EXPECT_EQ(LengthBand(300), 1u);
  EXPECT_EQ(LengthBand(799), 1u);
  EXPECT_EQ(LengthBand(800), 2u);
  EXPECT_EQ(LengthBandName(0), "< 300");
  EXPECT_EQ(LengthBandName(1), "300-800");
  EXPECT_EQ(LengthBandName(2), ">= 800");

  // Short (~5 sentences, ~120 characters), medium (~20) and long (~45) documents.
  std::vector<EvalDocument> corpus;
  std::array<size_t, kLengthBands> originals{};
  for (const size_t sentences : {5, 20, 45}) {
    for (const std::string& t : SyntheticCorpus(12, sentences, sentences)) {
      corpus.push_back({std::to_string(corpus.size()), t});
      ++originals[LengthBand(DecodeUtf8(t).size())];
    }
  }
  const std::string dir = MakeTempDir("eval_bands");
  DocsEvalOptions o;
  o.edits = {0.1, 0.2};
  o.methods = {"chargram"};
  o.bits = {128};
  o.threads = 2;
  o.dedup_methods = {"chars5u", "chars5u,k=32"};
  o.dataset_dir = dir + "/dataset";
  auto report = EvaluateDocs(corpus, o);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->band_originals, originals);
  for (size_t b = 0; b < kLengthBands; ++b) EXPECT_GT(originals[b], 0u) << b;
  ASSERT_EQ(report->dedup_rows.size(), 4u);  // 2 methods x 2 edit ratios
  for (const auto* rows : {&report->rows, &report->dedup_rows}) {
    for (const EvalRow& r : *rows) {
      PairCounts sum;
      uint64_t variants = 0;
      for (size_t b = 0; b < kLengthBands; ++b) {
        sum.true_positives += r.bands[b].true_positives;
        sum.false_positives += r.bands[b].false_positives;
        sum.false_negatives += r.bands[b].false_negatives;
        variants += r.band_variants[b];
      }
      EXPECT_EQ(sum.true_positives, r.counts.true_positives) << r.method << " " << r.threshold;
      EXPECT_EQ(sum.false_positives, r.counts.false_positives) << r.method << " " << r.threshold;
      EXPECT_EQ(sum.false_negatives, r.counts.false_negatives) << r.method << " " << r.threshold;
      EXPECT_EQ(variants, report->variants);
    }
  }
  EXPECT_EQ(report->dedup_rows[0].method, "chars5u");
  EXPECT_EQ(report->dedup_rows[0].threshold, 28);
  EXPECT_EQ(report->dedup_rows[1].threshold, 32);

  // The dedup rows against the job run on the written dataset, counted here.
  std::vector<std::string> texts;
  std::vector<std::string> ids;
  std::map<std::string, size_t> position;
  for (const std::string file : {"originals.jsonl", "variants_T20.jsonl"}) {
    std::ifstream in(dir + "/dataset/" + file);
    std::string line;
    while (std::getline(in, line)) {
      const auto j = nlohmann::json::parse(line);
      position[j["id"]] = texts.size();
      ids.push_back(j.value("original", std::string()));
      texts.push_back(j["text"]);
    }
  }
  DedupJobOptions job = DocsEvalOptions::DefaultEvalDedupJob();
  job.threads = 2;
  auto run = RunEvalDedupJob(texts, job);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  std::array<uint64_t, kLengthBands> found{};
  for (const DedupPair& p : run->pairs) {
    if (!ids[p.j].empty() && position[ids[p.j]] == p.i) {
      ++found[LengthBand(DecodeUtf8(texts[p.i]).size())];
    }
  }
  const EvalRow& r20 = report->dedup_rows[2];
  EXPECT_EQ(r20.edit, 0.2);
  for (size_t b = 0; b < kLengthBands; ++b) EXPECT_EQ(r20.bands[b].true_positives, found[b]) << b;

  // bands.csv and the report's band table.
  auto files = WriteDocsReport(*report, dir + "/report");
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  const std::string csv = ReadFile(dir + "/report/" + files->bands);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), kBandsCsvHeader);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'),
            1 + 3 * static_cast<long>(report->rows.size() + report->dedup_rows.size()));
  EXPECT_NE(csv.find("dedup,chars5u,128,28,0.20,< 300,"), std::string::npos);
  EXPECT_NE(csv.find("dedup,\"chars5u,k=32\",128,32,0.20,< 300,"), std::string::npos);
  EXPECT_NE(ReadFile(dir + "/report/report.md").find("| dedup chars5u | 128 | 28 |"),
            std::string::npos);
}

// Puts a fake `gnuplot` that records its calls in `log` first on PATH for the
// scope of the object.
class FakeGnuplotOnPath {
 public:
  FakeGnuplotOnPath(const std::string& dir, const std::string& log) {
    std::filesystem::create_directories(dir);
    WriteFile(dir + "/gnuplot", "#!/bin/sh\necho \"$*\" >> '" + log + "'\n");
    std::filesystem::permissions(dir + "/gnuplot", std::filesystem::perms::owner_all);
    const char* old = std::getenv("PATH");
    old_ = old ? old : "";
    setenv("PATH", (dir + ":" + old_).c_str(), 1);
  }
  ~FakeGnuplotOnPath() { setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

TEST(Report, LibraryWritesPlotScriptsAndRunsNoProcess) {
  const std::string dir = MakeTempDir("eval_report_lib");
  FakeGnuplotOnPath fake(dir + "/bin", dir + "/gnuplot.log");

  DocsEvalReport docs;
  docs.options.edits = {0.1};
  for (int k = 0; k <= 2; ++k) {
    EvalRow r;
    r.method = "chargram";
    r.bits = 64;
    r.threshold = k;
    r.edit = 0.1;
    r.f1 = 0.5;
    docs.rows.push_back(r);
  }
  docs.histograms.push_back(
      {"chargram", 64, 0.1, std::vector<uint64_t>(65, 1), std::vector<uint64_t>(65, 2)});
  auto files = WriteDocsReport(docs, dir + "/docs");
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(files->dir, dir + "/docs");
  EXPECT_EQ(files->plot_scripts, std::vector<std::string>{"plots.gp"});
  EXPECT_EQ(files->plots, (std::vector<std::string>{"f1_T10.png", "hist_chargram_64_T10.png"}));
  const std::string script = ReadFile(dir + "/docs/plots.gp");
  for (const std::string& png : files->plots) {
    EXPECT_NE(script.find("set output '" + png + "'"), std::string::npos) << png;
    EXPECT_FALSE(std::filesystem::exists(dir + "/docs/" + png)) << png;
  }
  for (const std::string& dat : files->data) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/docs/" + dat)) << dat;
    EXPECT_NE(script.find("'" + dat + "'"), std::string::npos) << dat;
  }
  const std::string md = ReadFile(dir + "/docs/report.md");
  EXPECT_NE(md.find("](f1_T10.png)"), std::string::npos);
  // The Plots section is last: a note lands in it.
  ASSERT_TRUE(AppendReportNote(*files, "no plots here").ok());
  const std::string noted = ReadFile(dir + "/docs/report.md");
  EXPECT_GT(noted.rfind("no plots here\n"), noted.rfind("## Plots"));

  PairsEvalReport pairs;
  pairs.methods.push_back({"minhash", 0, 0.5, {}, {}, {}});
  auto none = WritePairsReport(pairs, dir + "/pairs_none");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->plot_scripts.empty());  // nothing to plot, no script
  EXPECT_FALSE(std::filesystem::exists(dir + "/pairs_none/plots.gp"));
  pairs.methods.push_back(
      {"chargram", 64, 0.9, {}, std::vector<uint64_t>(65, 1), std::vector<uint64_t>(65, 1)});
  auto some = WritePairsReport(pairs, dir + "/pairs");
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(some->plot_scripts, std::vector<std::string>{"plots.gp"});
  EXPECT_EQ(some->plots, std::vector<std::string>{"hist_chargram_64.png"});
  EXPECT_TRUE(std::filesystem::exists(dir + "/pairs/data/hist_chargram_64.dat"));

  // No gnuplot (nor anything else) was run.
  EXPECT_FALSE(std::filesystem::exists(dir + "/gnuplot.log"));
}

}  // namespace
}  // namespace neardup
