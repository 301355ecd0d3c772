// Copyright 2026 The neardup Authors.
//
// The short-document rule's default (DedupJobOptions::short_features
// nullopt), decided in one place (ResolveShortRule) for every front end: on
// (the sketch rule over every document, Jaccard >= 0.52) for 128-bit SimHash
// methods that keep every feature, in cluster mode at k >= the method's
// default; off for minhash, stream mode, the 64-bit and top-k presets and a
// smaller k; an explicit value as given. A job at the default runs exactly
// the explicit rule, and pairs long documents beyond k as well.

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
    EXPECT_EQ(c.features, 1'000'000u) << text;  // every document in practice
    EXPECT_EQ(c.jaccard, kDefaultShortJaccard) << text;
    EXPECT_EQ(c.jaccard, 0.52) << text;
    EXPECT_EQ(c.rule, ShortRule::kSketch) << text;
    EXPECT_TRUE(c.by_default) << text;
    EXPECT_EQ(c.off_because, "") << text;
    EXPECT_EQ(ShortRuleWords(c), "sketch, every document, Jaccard >= 0.52 (default)");
  }
  DedupJobOptions at_k = WithMethod("chars5u");
  at_k.k = 28;  // the method's k, given
  EXPECT_EQ(ResolveShortRule(at_k).features, kDefaultShortFeatures);
  at_k.k = 32;  // above it
  EXPECT_EQ(ResolveShortRule(at_k).features, kDefaultShortFeatures);
  // A threshold given with the default rule: taken as given.
  DedupJobOptions given_t = WithMethod("chars5u");
  given_t.short_jaccard = 0.6;
  EXPECT_EQ(ResolveShortRule(given_t).features, kDefaultShortFeatures);
  EXPECT_EQ(ResolveShortRule(given_t).jaccard, 0.6);
  EXPECT_EQ(ShortRuleWords(ResolveShortRule(given_t)),
            "sketch, every document, Jaccard >= 0.6 (default)");
  // 0.5 given is taken as given as well: only a threshold not given is the
  // default rule's 0.52.
  DedupJobOptions given_half = WithMethod("chars5u");
  given_half.short_jaccard = 0.5;
  EXPECT_EQ(ResolveShortRule(given_half).jaccard, 0.5);
  EXPECT_EQ(ResolveShortRule(WithMethod("chars5u")).jaccard, kDefaultShortJaccard);
  // Features given without a threshold: kDefaultGivenShortJaccard.
  DedupJobOptions given_m = WithMethod("chars5u");
  given_m.short_features = 300;
  EXPECT_EQ(ResolveShortRule(given_m).jaccard, kDefaultGivenShortJaccard);
  // The exact rule alone given: its own default features (it keeps the
  // participants' feature sets: not every document's), at 0.5.
  DedupJobOptions exact = WithMethod("chars5u");
  exact.short_rule = ShortRule::kExact;
  EXPECT_EQ(ResolveShortRule(exact).features, kDefaultExactShortFeatures);
  EXPECT_EQ(ResolveShortRule(exact).features, 300u);
  EXPECT_EQ(ResolveShortRule(exact).rule, ShortRule::kExact);
  EXPECT_EQ(ResolveShortRule(exact).jaccard, 0.5);
  EXPECT_EQ(ShortRuleWords(ResolveShortRule(exact)), "exact, < 300 features (default)");
  // The job runs the resolved threshold.
  auto job = DedupJob::Create(WithMethod("chars5u"));
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ((*job)->dedup_options().short_features, kDefaultShortFeatures);
  EXPECT_EQ((*job)->dedup_options().short_jaccard, kDefaultShortJaccard);
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
      {"chars5u,k=0", -1, DedupMode::kCluster, "k = 0"},
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
  EXPECT_EQ(c.jaccard, 0.5);  // given features: the threshold as given
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
  explicit_rule.short_features = kDefaultShortFeatures;
  explicit_rule.short_jaccard = kDefaultShortJaccard;
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

// Long texts (~1,000 letters) with copies edited at random characters:
// most copies are beyond k = 28 at a feature-set Jaccard ~0.55-0.6. The
// default (every document) pairs them; the rule over short documents only
// (300 features, the default before) cannot, none of them being short.
std::shared_ptr<const std::vector<Document>> LongCopies() {
  std::mt19937_64 rng(23);
  auto docs = std::make_shared<std::vector<Document>>();
  for (int t = 0; t < 30; ++t) {
    std::string text;
    const size_t n = 900 + rng() % 300;
    for (size_t c = 0; c < n; ++c) text += static_cast<char>('a' + rng() % 26);
    Document d;
    d.id = "t" + std::to_string(t);
    d.text = text;
    docs->push_back(d);
    for (size_t e = 0; e < n * 6 / 100; ++e) text[rng() % n] = '#';
    d.id += "c";
    d.text = std::move(text);
    docs->push_back(std::move(d));
  }
  return docs;
}

TEST(ShortRuleDefaultTest, TheDefaultPairsLongDocumentsBeyondK) {
  const auto docs = LongCopies();
  DedupJobOptions by_default;
  by_default.threads = 2;
  DedupJobOptions short_only = by_default;
  short_only.short_features = 300;
  short_only.short_rule = ShortRule::kSketch;
  size_t default_added = 0, short_added = 0;
  const auto a = PairsOf(by_default, docs, &default_added);
  const auto b = PairsOf(short_only, docs, &short_added);
  EXPECT_EQ(short_added, 0u) << "no document here has fewer than 600 features";
  EXPECT_GE(default_added, 10u) << "long copies beyond k that only the default rule finds";
  // Every pair the default reports is an original with its own copy.
  size_t pairs = 0;
  for (const std::string& line : a) {
    if (line.find("\"distance\"") == std::string::npos ||
        line.find("\"cluster\"") != std::string::npos) {
      continue;
    }
    ++pairs;
    const size_t at = line.find("\"a\":\"") + 5;
    const std::string id = line.substr(at, line.find('"', at) - at);
    EXPECT_NE(line.find("\"" + (id.back() == 'c' ? id.substr(0, id.size() - 1) : id + "c") + "\""),
              std::string::npos)
        << line;
  }
  EXPECT_GE(pairs, default_added);
}

}  // namespace
}  // namespace neardup
