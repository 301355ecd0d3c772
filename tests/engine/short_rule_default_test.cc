// Copyright 2026 The neardup Authors.
//
// The short-document rule's default (DedupJobOptions::short_features
// nullopt), decided in one place (ResolveShortRule) for every front end: on
// (300, the sketch rule) for 128-bit SimHash methods that keep every
// feature, in cluster mode at k >= the method's default; off for minhash,
// stream mode, the 64-bit and top-k presets and a smaller k; an explicit
// value as given. A job at the default runs exactly the explicit rule.

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "neardup/dedup_job.h"

namespace neardup {
namespace {

DedupJobOptions WithMethod(const std::string& text) {
  DedupJobOptions o;
  auto method = Method::Parse(text);
  EXPECT_TRUE(method.ok()) << text << ": " << method.status().message();
  if (method.ok()) o.method = *method;
  o.method_text = text;
  return o;
}

TEST(ShortRuleDefaultTest, OnForFullFeature128BitSimHashInClusterModeAtTheMethodsK) {
  for (const std::string text : {"", "chars5u", "chars5", "chars5u,k=32"}) {
    const ShortRuleChoice c = ResolveShortRule(text.empty() ? DedupJobOptions{} : WithMethod(text));
    EXPECT_EQ(c.features, kDefaultShortFeatures) << text;
    EXPECT_EQ(c.rule, ShortRule::kSketch) << text;
    EXPECT_TRUE(c.by_default) << text;
    EXPECT_EQ(c.off_because, "") << text;
    EXPECT_EQ(ShortRuleWords(c), "sketch, < 300 features (default)");
  }
  DedupJobOptions at_k = WithMethod("chars5u");
  at_k.k = 28;  // the method's k, given
  EXPECT_EQ(ResolveShortRule(at_k).features, 300u);
  at_k.k = 32;  // above it
  EXPECT_EQ(ResolveShortRule(at_k).features, 300u);
  // The rule alone given: the default's features by that rule.
  DedupJobOptions exact = WithMethod("chars5u");
  exact.short_rule = ShortRule::kExact;
  EXPECT_EQ(ResolveShortRule(exact).features, 300u);
  EXPECT_EQ(ResolveShortRule(exact).rule, ShortRule::kExact);
}

TEST(ShortRuleDefaultTest, OffWhereTheRuleDoesNotFit) {
  struct Case {
    std::string method;
    int k;
    DedupMode mode;
    std::string because;
  };
  const std::vector<Case> cases = {
      {"minhash", -1, DedupMode::kCluster, "minhash"},
      {"chars5u", -1, DedupMode::kStream, "stream mode"},
      {"classic", -1, DedupMode::kCluster, "64-bit fingerprints"},
      {"tfidf", -1, DedupMode::kCluster, "64-bit fingerprints"},
      {"chars5u,bits=64", -1, DedupMode::kCluster, "64-bit fingerprints"},
      {"esimhash", -1, DedupMode::kCluster, "top-20 features"},
      {"tfidf,bits=128", -1, DedupMode::kCluster, "top-20 features"},
      {"sentence,bits=128", -1, DedupMode::kCluster, "sentence features"},
      {"chars5u", 27, DedupMode::kCluster, "k below the method's 28"},
      {"chars5u", 0, DedupMode::kCluster, "k below the method's 28"},
      {"chars5u,k=32", 28, DedupMode::kCluster, "k below the method's 32"},
  };
  for (const Case& c : cases) {
    DedupJobOptions o = WithMethod(c.method);
    o.k = c.k;
    o.mode = c.mode;
    const ShortRuleChoice r = ResolveShortRule(o);
    EXPECT_EQ(r.features, 0u) << c.method << " " << c.k;
    EXPECT_TRUE(r.by_default);
    EXPECT_EQ(r.off_because, c.because) << c.method << " " << c.k;
    EXPECT_EQ(ShortRuleWords(r), "off (default: " + c.because + ")");
    // Such a job is created (an off default is no error) and runs it off.
    if (c.method == "minhash") o.k = -1;
    auto job = DedupJob::Create(o);
    ASSERT_TRUE(job.ok()) << c.method << ": " << job.status().message();
    EXPECT_EQ((*job)->dedup_options().short_features, 0u);
  }
}

TEST(ShortRuleDefaultTest, AnExplicitValueIsTakenAsGiven) {
  DedupJobOptions o = WithMethod("chars5u");
  o.short_features = 0;
  ShortRuleChoice c = ResolveShortRule(o);
  EXPECT_EQ(c.features, 0u);
  EXPECT_FALSE(c.by_default);
  EXPECT_EQ(ShortRuleWords(c), "off");
  o.short_features = 200;  // the exact rule unless the rule is given, as before the default
  c = ResolveShortRule(o);
  EXPECT_EQ(c.features, 200u);
  EXPECT_EQ(c.rule, ShortRule::kExact);
  EXPECT_EQ(ShortRuleWords(c), "exact, < 200 features");
  o.short_rule = ShortRule::kSketch;
  EXPECT_EQ(ResolveShortRule(o).rule, ShortRule::kSketch);
  // Given at a k below the method's, or for a 64-bit method: on.
  o.k = 3;
  EXPECT_EQ(ResolveShortRule(o).features, 200u);
  // Given where it cannot apply: an error, as before.
  o.k = -1;
  o.mode = DedupMode::kStream;
  EXPECT_FALSE(DedupJob::Create(o).ok());
  DedupJobOptions minhash = WithMethod("minhash");
  minhash.short_features = 300;
  EXPECT_FALSE(DedupJob::Create(minhash).ok());
}

TEST(ShortRuleDefaultTest, OptionWords) {
  EXPECT_EQ(*ParseShortFeatures("auto"), std::nullopt);
  EXPECT_EQ(*ParseShortFeatures("0"), std::optional<size_t>(0));
  EXPECT_EQ(*ParseShortFeatures("300"), std::optional<size_t>(300));
  for (const char* bad : {"", "-1", "30x", " 30", "on"}) {
    EXPECT_FALSE(ParseShortFeatures(bad).ok()) << bad;
  }
  EXPECT_EQ(*ParseShortRuleOption("auto"), std::nullopt);
  EXPECT_EQ(*ParseShortRuleOption("exact"), std::optional<ShortRule>(ShortRule::kExact));
  EXPECT_EQ(*ParseShortRuleOption("sketch"), std::optional<ShortRule>(ShortRule::kSketch));
  EXPECT_FALSE(ParseShortRuleOption("fast").ok());
}

// Short texts (20-60 letters) with copies edited in two places: many
// beyond k = 28 with feature-set Jaccard >= 0.5.
std::shared_ptr<const std::vector<Document>> ShortCopies() {
  std::mt19937_64 rng(11);
  auto docs = std::make_shared<std::vector<Document>>();
  for (int t = 0; t < 60; ++t) {
    std::string text;
    const size_t n = 20 + rng() % 41;
    for (size_t c = 0; c < n; ++c) text += static_cast<char>('a' + rng() % 26);
    const auto add = [&docs](std::string id, std::string body) {
      Document d;
      d.id = std::move(id);
      d.text = std::move(body);
      docs->push_back(std::move(d));
    };
    add("t" + std::to_string(t), text);
    for (int copy = 0; copy < 2; ++copy) {
      std::string edited = text;
      edited[rng() % (n / 2)] = '#';
      edited[n / 2 + rng() % (n / 2)] = '#';
      add("t" + std::to_string(t) + "c" + std::to_string(copy), edited);
    }
  }
  return docs;
}

// Pairs of a job's run, as JSON lines.
std::vector<std::string> PairsOf(const DedupJobOptions& o,
                                 const std::shared_ptr<const std::vector<Document>>& docs,
                                 size_t* short_pairs) {
  auto job = DedupJob::Create(o);
  EXPECT_TRUE(job.ok()) << job.status().message();
  if (!job.ok()) return {};
  std::vector<std::string> pairs, records;
  DedupJobOutputs outputs;
  outputs.pairs = [&](std::string_view l) { pairs.emplace_back(l); };
  outputs.records = [&](std::string_view l) { records.emplace_back(l); };
  auto summary = (*job)->Run(DocumentsInput(docs), outputs);
  EXPECT_TRUE(summary.ok()) << summary.status().message();
  if (summary.ok()) *short_pairs = summary->result.join.short_pairs;
  pairs.insert(pairs.end(), records.begin(), records.end());
  return pairs;
}

TEST(ShortRuleDefaultTest, TheDefaultRunsTheExplicitSketchRule) {
  const auto docs = ShortCopies();
  DedupJobOptions by_default;
  by_default.threads = 2;
  DedupJobOptions explicit_rule = by_default;
  explicit_rule.short_features = 300;
  explicit_rule.short_rule = ShortRule::kSketch;
  DedupJobOptions off = by_default;
  off.short_features = 0;
  size_t default_added = 0, explicit_added = 0, off_added = 0;
  const auto a = PairsOf(by_default, docs, &default_added);
  const auto b = PairsOf(explicit_rule, docs, &explicit_added);
  const auto c = PairsOf(off, docs, &off_added);
  EXPECT_EQ(a, b);
  EXPECT_EQ(default_added, explicit_added);
  EXPECT_GE(default_added, 10u) << "pairs beyond k that only the rule finds";
  EXPECT_EQ(off_added, 0u);
  EXPECT_NE(a, c);
  // Stream mode at the default: the rule off, no error.
  DedupJobOptions stream = by_default;
  stream.mode = DedupMode::kStream;
  size_t stream_added = 0;
  EXPECT_FALSE(PairsOf(stream, docs, &stream_added).empty());
  EXPECT_EQ(stream_added, 0u);
}

}  // namespace
}  // namespace neardup
