// Copyright 2026 The neardup Authors.
//
// Hand-computed checks of the improved (seed 000), entropy (seed 003) and
// sentence (seed 004) schemes. Each expected value is worked out in the
// comments from the formulas in doc/methods.md, with small IDF tables so the
// arithmetic stays visible.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <set>

#include "neardup/features.h"
#include "neardup/keywords.h"
#include "neardup/pipeline.h"
#include "neardup/presets.h"
#include "neardup/segmenter.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

class WeightsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto seg = Segmenter::Open(SegmenterOptions());
    ASSERT_TRUE(seg.ok()) << seg.status().ToString();
    segmenter_ = seg->release();
  }
  static void TearDownTestSuite() {
    delete segmenter_;
    segmenter_ = nullptr;
  }

  static std::vector<WeightedFeature> Extract(const FeatureOptions& options, const IdfTable& idf,
                                              const MarkerLexicon* markers, std::string_view text,
                                              std::string_view title = {}) {
    auto extractor = FeatureExtractor::Create(options, segmenter_, &idf, markers);
    EXPECT_TRUE(extractor.ok()) << extractor.status().ToString();
    std::vector<WeightedFeature> out;
    (*extractor)->Extract(text, title, &out);
    return out;
  }

  static Segmenter* segmenter_;
};

Segmenter* WeightsTest::segmenter_ = nullptr;

TEST(ImprovedFactorTest, EachTermByHand) {
  // Noun, shortest word, no marker, not in the title: 1 + 3 + 0 = 4.
  EXPECT_DOUBLE_EQ(ImprovedFactor("n", 2, 2, 4, false, false), 4.0);
  // "nr" is a noun tag too.
  EXPECT_DOUBLE_EQ(ImprovedFactor("nr", 2, 2, 4, false, false), 4.0);
  // Verb, longest word (Len 1), marker (5), title (5): 1 + 2 + 1 + 5 + 5 = 14.
  EXPECT_DOUBLE_EQ(ImprovedFactor("v", 4, 2, 4, true, true), 14.0);
  // "vn" counts as a verb: 1 + 2 = 3.
  EXPECT_DOUBLE_EQ(ImprovedFactor("vn", 2, 2, 4, false, false), 3.0);
  // Other tag, length 3 of 2..4 (Len 0.5), in the title: 1 + 1 + 0.5 + 5 = 7.5.
  EXPECT_DOUBLE_EQ(ImprovedFactor("ad", 3, 2, 4, false, true), 7.5);
  // All candidates equally long: Len = 0, not 0/0.
  EXPECT_DOUBLE_EQ(ImprovedFactor("x", 2, 2, 2, false, false), 2.0);
}

TEST(EntropyTest, Base2ByHand) {
  const uint32_t one[] = {4};
  EXPECT_DOUBLE_EQ(Entropy(one), 0.0);
  const uint32_t two[] = {1, 1};
  EXPECT_DOUBLE_EQ(Entropy(two), 1.0);
  // p = 1/2, 1/4, 1/4: 0.5 * 1 + 2 * 0.25 * 2 = 1.5 bits.
  const uint32_t three[] = {2, 1, 1};
  EXPECT_DOUBLE_EQ(Entropy(three), 1.5);
  EXPECT_DOUBLE_EQ(Entropy(std::span<const uint32_t>()), 0.0);
}

TEST_F(WeightsTest, ImprovedWeightsByHand) {
  // 因此(c) 学生(n) 学习(v) 数学(n) ， 学生(n) 喜欢(v) 数学(n) 。
  // Candidates (counts): 因此 1, 学生 2, 学习 1, 数学 2, 喜欢 1; total 7.
  // All two characters long: Len = 0. Marker: 因此 (Logo 5). Title 数学之美
  // contains 数学 (Title 5).
  const IdfTable idf =
      IdfTable::FromEntries({{"因此", 1}, {"学生", 2}, {"学习", 3}, {"数学", 4}, {"喜欢", 5}});
  const MarkerLexicon markers = MarkerLexicon::FromWords({"因此", "总之"});
  FeatureOptions options;
  options.weights = WeightScheme::kImproved;
  options.top_k = 0;
  const auto f = Extract(options, idf, &markers, "因此学生学习数学，学生喜欢数学。", "数学之美");
  ASSERT_EQ(f.size(), 5u);
  // 数学: tf*idf = 2 * 4/7, factor 1 + CX 3 + Title 5 = 9       -> 72/7
  // 学生: 2 * 2/7, factor 1 + 3 = 4                              -> 16/7
  // 喜欢: 1 * 5/7, factor 1 + 2 = 3                              -> 15/7
  // 学习: 1 * 3/7, factor 3                                      ->  9/7
  // 因此: 1 * 1/7, factor 1 + CX 1 (tag c) + Logo 5 = 7          ->  1
  EXPECT_EQ(f[0].text, "数学");
  EXPECT_DOUBLE_EQ(f[0].weight, 72.0 / 7);
  EXPECT_EQ(f[1].text, "学生");
  EXPECT_DOUBLE_EQ(f[1].weight, 16.0 / 7);
  EXPECT_EQ(f[2].text, "喜欢");
  EXPECT_DOUBLE_EQ(f[2].weight, 15.0 / 7);
  EXPECT_EQ(f[3].text, "学习");
  EXPECT_DOUBLE_EQ(f[3].weight, 9.0 / 7);
  EXPECT_EQ(f[4].text, "因此");
  EXPECT_DOUBLE_EQ(f[4].weight, 1.0);
  for (const auto& w : f) EXPECT_EQ(w.position, -1);

  // Without a title 数学 loses Title: 8/7 * 4 = 32/7.
  const auto untitled = Extract(options, idf, &markers, "因此学生学习数学，学生喜欢数学。");
  ASSERT_EQ(untitled.size(), 5u);
  EXPECT_EQ(untitled[0].text, "数学");
  EXPECT_DOUBLE_EQ(untitled[0].weight, 32.0 / 7);
  // top_k 2 keeps the two heaviest.
  options.top_k = 2;
  const auto top = Extract(options, idf, &markers, "因此学生学习数学，学生喜欢数学。", "数学之美");
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[1].text, "学生");
}

TEST_F(WeightsTest, ImprovedLengthAndMarkerContainment) {
  // 总而言之(c, 4 chars) ， 学生(n) 喜欢(v) 数学(n) 。 — total 4, idf 1 each:
  // tf*idf = 0.25. Len: min 2, max 4 -> 总而言之 1, the others 0.
  // 总而言之 contains the marker 言之: factor 1 + 1 + 1 + 5 = 8 -> 2.0
  // 学生, 数学: 1 + 3 = 4 -> 1.0 (tie: first occurrence first); 喜欢: 3 -> 0.75.
  const IdfTable idf =
      IdfTable::FromEntries({{"总而言之", 1}, {"学生", 1}, {"喜欢", 1}, {"数学", 1}});
  const MarkerLexicon markers = MarkerLexicon::FromWords({"言之"});
  FeatureOptions options;
  options.weights = WeightScheme::kImproved;
  const auto f = Extract(options, idf, &markers, "总而言之，学生喜欢数学。");
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].text, "总而言之");
  EXPECT_DOUBLE_EQ(f[0].weight, 2.0);
  EXPECT_EQ(f[1].text, "学生");
  EXPECT_DOUBLE_EQ(f[1].weight, 1.0);
  EXPECT_EQ(f[2].text, "数学");
  EXPECT_DOUBLE_EQ(f[2].weight, 1.0);
  EXPECT_EQ(f[3].text, "喜欢");
  EXPECT_DOUBLE_EQ(f[3].weight, 0.75);
}

TEST_F(WeightsTest, EntropyWeightsByHand) {
  // Tokens: 学生 喜欢 数学 ， 老师 喜欢 音乐 。 学生 喜欢 数学
  // Candidates (counts): 学生 2, 喜欢 3, 数学 2, 老师 1, 音乐 1; total 9; idf 1.
  // Neighbours (<s>/</s>: document boundaries):
  //   学生: left {<s>, 。} -> 1 bit; right {喜欢, 喜欢} -> 0; H = 0.5
  //   喜欢: left {学生 x2, 老师} and right {数学 x2, 音乐} -> h3 each; H = h3
  //         with h3 = -(2/3 log2 2/3 + 1/3 log2 1/3) = 0.9182958340544896
  //   数学: left {喜欢 x2} -> 0; right {，, </s>} -> 1; H = 0.5
  //   老师, 音乐: one occurrence each -> H = 0
  // w = sqrt((tfidf^2 + H^2) / 2), tfidf = count / 9.
  const IdfTable idf =
      IdfTable::FromEntries({{"学生", 1}, {"喜欢", 1}, {"数学", 1}, {"老师", 1}, {"音乐", 1}});
  const std::string text = "学生喜欢数学，老师喜欢音乐。学生喜欢数学";
  const double h3 = -(2.0 / 3 * std::log2(2.0 / 3) + 1.0 / 3 * std::log2(1.0 / 3));
  const double w_student = std::sqrt((std::pow(2.0 / 9, 2) + 0.25) / 2);  // 0.3869
  const double w_like = std::sqrt((std::pow(3.0 / 9, 2) + h3 * h3) / 2);  // 0.6908
  const double w_teacher = std::sqrt(std::pow(1.0 / 9, 2) / 2);           // 0.0786
  FeatureOptions options;
  options.weights = WeightScheme::kEntropy;
  options.top_k = 0;
  options.entropy_threshold = 90;  // no clipping
  auto f = Extract(options, idf, nullptr, text);
  ASSERT_EQ(f.size(), 5u);
  // In order of first occurrence, position = rank.
  const char* order[] = {"学生", "喜欢", "数学", "老师", "音乐"};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(f[static_cast<size_t>(i)].text, order[i]);
    EXPECT_EQ(f[static_cast<size_t>(i)].position, i);
  }
  EXPECT_NEAR(f[0].weight, w_student, 1e-12);
  EXPECT_NEAR(f[1].weight, w_like, 1e-12);
  EXPECT_NEAR(f[2].weight, w_student, 1e-12);
  EXPECT_NEAR(f[3].weight, w_teacher, 1e-12);
  EXPECT_NEAR(f[4].weight, w_teacher, 1e-12);

  // W_t = 0.4 clips 喜欢 (0.6908) to 0.4 and leaves 学生 (0.3869).
  options.entropy_threshold = 0.4;
  f = Extract(options, idf, nullptr, text);
  ASSERT_EQ(f.size(), 5u);
  EXPECT_DOUBLE_EQ(f[1].weight, 0.4);
  EXPECT_NEAR(f[0].weight, w_student, 1e-12);

  // top_k 2: the heaviest 喜欢, then 学生 (tie with 数学: first occurrence),
  // output in document order with ranks 0, 1.
  options.entropy_threshold = 90;
  options.top_k = 2;
  f = Extract(options, idf, nullptr, text);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].text, "学生");
  EXPECT_EQ(f[0].position, 0);
  EXPECT_EQ(f[1].text, "喜欢");
  EXPECT_EQ(f[1].position, 1);
}

TEST_F(WeightsTest, EntropyIgnoresWhiteSpaceNeighbours) {
  // "学生 喜欢 学生。喜欢": white space tokens are not neighbours, so 喜欢's
  // left neighbours are {学生, 。} (1 bit) and its right {学生, </s>} (1 bit):
  // H = 1. 学生: left {<s>, 喜欢} 1 bit, right {喜欢, 。} 1 bit: H = 1.
  // Counts 2 and 2 of 4, idf 1: tfidf 0.5; w = sqrt((0.25 + 1) / 2).
  const IdfTable idf = IdfTable::FromEntries({{"学生", 1}, {"喜欢", 1}});
  FeatureOptions options;
  options.weights = WeightScheme::kEntropy;
  options.entropy_threshold = 90;
  const auto f = Extract(options, idf, nullptr, "学生 喜欢 学生。喜欢");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_NEAR(f[0].weight, std::sqrt(1.25 / 2), 1e-12);
  EXPECT_NEAR(f[1].weight, std::sqrt(1.25 / 2), 1e-12);
}

TEST(PositionMaskTest, FrozenSplitMix64) {
  // SplitMix64's first output for state 0 is 0xE220A8397B1DCDAF.
  EXPECT_EQ(PositionMask(0, 64).lo, 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(PositionMask(0, 64).hi, 0u);
  EXPECT_EQ(PositionMask(0, 128).lo, 0xE220A8397B1DCDAFULL);
  EXPECT_NE(PositionMask(0, 128).hi, 0u);
  std::set<uint64_t> seen;
  for (int r = 0; r < 1000; ++r) seen.insert(PositionMask(r, 64).lo);
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(PositionMaskTest, SimHashMixesThePosition) {
  // One feature: its fingerprint is its hash (weight > 0), XORed with the mask.
  const std::vector<WeightedFeature> plain = {{"能力", 1.0, -1}};
  const std::vector<WeightedFeature> ranked = {{"能力", 1.0, 3}};
  const FeatureHash h = HashFeature("能力", 64);
  EXPECT_EQ(SimHash(plain, 64).lo(), h.lo);
  EXPECT_EQ(SimHash(ranked, 64).lo(), h.lo ^ PositionMask(3, 64).lo);
}

TEST(PositionMaskTest, HashWeightedFeatureIsWhatSimHashAccumulates) {
  for (int bits : {64, 128}) {
    for (int position : {-1, 0, 7}) {
      const WeightedFeature f{"学历", 2.5, position};
      const FeatureHash h = HashWeightedFeature(f, bits);
      const Fingerprint fp = SimHash(std::vector<WeightedFeature>{f}, bits);
      for (int j = 0; j < bits; ++j) EXPECT_EQ(h.bit(j), fp.bit(j)) << bits << " " << j;
      const FeatureHash md5 = HashWeightedFeature(f, bits, FeatureHashAlgorithm::kMd5);
      EXPECT_EQ(SimHash(std::vector<WeightedFeature>{f}, bits, FeatureHashAlgorithm::kMd5).lo(),
                md5.lo);
    }
  }
}

TEST_F(WeightsTest, Seed003WordOrderPair) {
  // Seed 003's example: swapping 能力 and 学历 keeps the words (plain tfidf:
  // the same fingerprint) but changes their positions (entropy: different).
  for (const char* method : {"tfidf", "esimhash"}) {
    auto preset = FindPreset(method);
    ASSERT_TRUE(preset.ok());
    auto pipeline = Pipeline::Create(preset->pipeline);
    ASSERT_TRUE(pipeline.ok()) << pipeline.status().ToString();
    const auto a = (*pipeline)->Fingerprint("能力比学历重要性高");
    const auto b = (*pipeline)->Fingerprint("学历比能力重要性高");
    EXPECT_EQ(a.features, 3u);
    if (std::string(method) == "tfidf") {
      EXPECT_EQ(a.fingerprint, b.fingerprint);
    } else {
      EXPECT_NE(a.fingerprint, b.fingerprint);
      EXPECT_GT(HammingDistance(a.fingerprint, b.fingerprint), 10);
    }
  }
}

TEST(SentencesTest, SplitByHand) {
  std::vector<std::string_view> s;
  SplitSentences("你好。今天天气好吗？！好的!\r\n第二行\n\n  最后", &s);
  const std::vector<std::string_view> expected = {"你好。", "今天天气好吗？！", "好的!", "第二行",
                                                  "最后"};
  EXPECT_EQ(s, expected);
  SplitSentences("  \n\n 。", &s);
  EXPECT_EQ(s, std::vector<std::string_view>{"。"});
  SplitSentences("", &s);
  EXPECT_TRUE(s.empty());
  SplitSentences("没有结尾", &s);
  EXPECT_EQ(s, std::vector<std::string_view>{"没有结尾"});
}

std::vector<std::string> SpanPieces(std::string_view text, const std::vector<SentenceSpan>& spans) {
  std::vector<std::string> out;
  for (const SentenceSpan& s : spans) out.emplace_back(text.substr(s.begin, s.end - s.begin));
  return out;
}

// The spans tile the text, and SplitSentences is exactly their trimmed,
// non-empty pieces, on text with every kind of sentence end, closers, white
// space and invalid UTF-8.
TEST(SentencesTest, SpansTileAndTrimToSplitSentences) {
  static const char* kPieces[] = {"今天", "天气", "。", "！",   "？",   "\n",      "\r\n",
                                  "a",    "?",    "!",  "”",    "」",   ")",       "\xff\xfe",
                                  " ",    "；",   ". ", "很好", "\x80", "\xe3\x80"};
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::string text;
    const size_t n = rng() % 400;
    while (text.size() < n) text += kPieces[rng() % std::size(kPieces)];
    for (int o = 0; o < 4; ++o) {
      SentenceSplitOptions options;
      options.keep_closers = (o & 1) != 0;
      options.clause_and_period_ends = (o & 2) != 0;
      size_t pos = 0;
      for (const SentenceSpan& s : SplitSentenceSpans(text, options)) {
        ASSERT_EQ(s.begin, pos) << text;
        ASSERT_GT(s.end, s.begin) << text;
        pos = s.end;
      }
      EXPECT_EQ(pos, text.size());
    }
    std::vector<std::string_view> trimmed;
    for (const SentenceSpan& s : SplitSentenceSpans(text)) {
      SplitSentences(text.substr(s.begin, s.end - s.begin), &trimmed);
      EXPECT_LE(trimmed.size(), 1u) << "a span is at most one sentence";
    }
  }
  EXPECT_TRUE(SplitSentenceSpans("").empty());
}

// Seed 004's rules by hand, and what each option changes.
TEST(SentencesTest, SpansByHandAndOptions) {
  const std::string text = "他说：“好。”然后呢？！Yes! ok?\r\n尾巴；还有. End";
  EXPECT_EQ(SpanPieces(text, SplitSentenceSpans(text)),
            (std::vector<std::string>{"他说：“好。", "”然后呢？！", "Yes!", " ok?", "\r\n",
                                      "尾巴；还有. End"}));
  SentenceSplitOptions closers;
  closers.keep_closers = true;
  EXPECT_EQ(SpanPieces(text, SplitSentenceSpans(text, closers)),
            (std::vector<std::string>{"他说：“好。”", "然后呢？！", "Yes!", " ok?", "\r\n",
                                      "尾巴；还有. End"}));
  SentenceSplitOptions clauses;
  clauses.clause_and_period_ends = true;
  EXPECT_EQ(SpanPieces(text, SplitSentenceSpans(text, clauses)),
            (std::vector<std::string>{"他说：“好。", "”然后呢？！", "Yes!", " ok?", "\r\n",
                                      "尾巴；", "还有.", " End"}));
  std::vector<std::string_view> s;
  SplitSentences(text, &s);
  EXPECT_EQ(s, (std::vector<std::string_view>{"他说：“好。", "”然后呢？！", "Yes!", "ok?",
                                              "尾巴；还有. End"}));
}

TEST(SentencesTest, UniformAndTfWeights) {
  FeatureOptions options;
  ASSERT_TRUE(ParseFeatureKind("sentences", &options).ok());
  EXPECT_EQ(FeatureKindName(options), "sentences");
  options.weights = WeightScheme::kUniform;
  options.top_k = 0;
  auto extractor = FeatureExtractor::Create(options, nullptr, nullptr);
  ASSERT_TRUE(extractor.ok());
  std::vector<WeightedFeature> f;
  (*extractor)->Extract("好。好。坏。", &f);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].text, "好。");
  EXPECT_EQ(f[0].weight, 1.0);
  EXPECT_EQ(f[1].text, "坏。");
  options.weights = WeightScheme::kTf;
  extractor = FeatureExtractor::Create(options, nullptr, nullptr);
  ASSERT_TRUE(extractor.ok());
  (*extractor)->Extract("好。好。坏。", &f);
  EXPECT_EQ(f[0].weight, 2.0);
  // The MD5 sentence fingerprint is SimHash over MD5 of each sentence.
  SimHasher hasher(64);
  hasher.Add(HashFeature("好。", 64, FeatureHashAlgorithm::kMd5), 2.0);
  hasher.Add(HashFeature("坏。", 64, FeatureHashAlgorithm::kMd5), 1.0);
  EXPECT_EQ(SimHash(f, 64, FeatureHashAlgorithm::kMd5), hasher.Finish());
}

TEST(SchemeOptionsTest, WordOnlySchemesAndRequirements) {
  const IdfTable idf = IdfTable::FromEntries({{"a", 1}});
  FeatureOptions options;
  options.kind = FeatureKind::kCharNgrams;
  options.weights = WeightScheme::kEntropy;
  EXPECT_TRUE(FeatureExtractor::Create(options, nullptr, &idf).status().IsInvalidArgument());
  options.kind = FeatureKind::kWords;
  options.weights = WeightScheme::kImproved;
  auto seg = Segmenter::Open(SegmenterOptions());
  ASSERT_TRUE(seg.ok());
  // improved without a marker lexicon
  EXPECT_TRUE(FeatureExtractor::Create(options, seg->get(), &idf).status().IsInvalidArgument());
  options.weights = WeightScheme::kEntropy;
  options.entropy_threshold = 0;
  EXPECT_TRUE(FeatureExtractor::Create(options, seg->get(), &idf).status().IsInvalidArgument());
  for (const char* name : {"uniform", "tf", "tfidf", "improved", "entropy"}) {
    auto w = ParseWeightScheme(name);
    ASSERT_TRUE(w.ok()) << name;
    EXPECT_EQ(WeightSchemeName(*w), name);
  }
  EXPECT_FALSE(ParseWeightScheme("bm25").ok());
}

TEST(MarkerLexiconTest, ShippedLexiconAndErrors) {
  auto path = FindDataFile(kMarkerWordsFile, testing::SourceDir() + "/data");
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  auto lexicon = MarkerLexicon::Load(*path);
  ASSERT_TRUE(lexicon.ok()) << lexicon.status().ToString();
  EXPECT_GE(lexicon->words().size(), 50u);
  for (const char* w : {"综上所述", "总之", "总而言之", "因此", "所以", "但是", "然而", "可见",
                        "由此可见", "总的来说"}) {
    EXPECT_TRUE(lexicon->Matches(w)) << w;
  }
  EXPECT_FALSE(lexicon->Matches("学生"));
  for (const std::string& w : lexicon->words()) EXPECT_NE(w[0], '#');

  const std::string dir = testing::MakeTempDir("markers");
  auto missing = FindDataFile(kMarkerWordsFile, dir);
  EXPECT_TRUE(missing.status().IsNotFound());
  EXPECT_NE(missing.status().message().find("marker_words.txt"), std::string::npos);
  testing::WriteFile(dir + "/empty.txt", "# nothing\n\n");
  EXPECT_TRUE(MarkerLexicon::Load(dir + "/empty.txt").status().IsCorruption());
  EXPECT_TRUE(MarkerLexicon::Load(dir + "/none.txt").status().IsNotFound());

  // A pipeline with improved weights and no lexicon fails clearly.
  PipelineOptions options = FindPreset("improved")->pipeline;
  options.data_dir = dir;
  auto pipeline = Pipeline::Create(options);
  ASSERT_FALSE(pipeline.ok());
  EXPECT_NE(pipeline.status().message().find("marker_words.txt"), std::string::npos);
}

TEST(PresetsTest, NewPresetsHaveTheirDocumentedSettings) {
  struct Expected {
    const char* name;
    FeatureKind kind;
    WeightScheme weights;
    int top_k, bits;
    FeatureHashAlgorithm hash;
    int default_k;
    int ngram = 3;
  };
  const Expected expected[] = {
      {"classic", FeatureKind::kWords, WeightScheme::kTf, 0, 64, FeatureHashAlgorithm::kXxh3, 3},
      {"tfidf", FeatureKind::kWords, WeightScheme::kTfidf, 20, 64, FeatureHashAlgorithm::kXxh3, 3},
      {"chargram", FeatureKind::kCharNgrams, WeightScheme::kTf, 0, 64, FeatureHashAlgorithm::kXxh3,
       3},
      {"improved", FeatureKind::kWords, WeightScheme::kImproved, 20, 64,
       FeatureHashAlgorithm::kXxh3, 3},
      {"esimhash", FeatureKind::kWords, WeightScheme::kEntropy, 20, 128,
       FeatureHashAlgorithm::kXxh3, 10},
      {"sentence", FeatureKind::kSentences, WeightScheme::kUniform, 0, 64,
       FeatureHashAlgorithm::kMd5, 3},
      {"chars5", FeatureKind::kCharNgrams, WeightScheme::kTf, 0, 128, FeatureHashAlgorithm::kXxh3,
       24, 5},
      {"chars5u", FeatureKind::kCharNgrams, WeightScheme::kUniform, 0, 128,
       FeatureHashAlgorithm::kXxh3, 28, 5},
  };
  ASSERT_EQ(Presets().size(), std::size(expected));
  for (const Expected& e : expected) {
    auto p = FindPreset(e.name);
    ASSERT_TRUE(p.ok()) << e.name;
    EXPECT_EQ(p->pipeline.features.kind, e.kind) << e.name;
    EXPECT_EQ(p->pipeline.features.weights, e.weights) << e.name;
    EXPECT_EQ(p->pipeline.features.top_k, e.top_k) << e.name;
    EXPECT_EQ(p->pipeline.bits, e.bits) << e.name;
    EXPECT_EQ(p->pipeline.hash, e.hash) << e.name;
    EXPECT_EQ(p->default_k, e.default_k) << e.name;
    EXPECT_EQ(p->pipeline.features.entropy_threshold, kDefaultEntropyThreshold) << e.name;
    EXPECT_EQ(p->pipeline.features.ngram, e.ngram) << e.name;
  }
  EXPECT_EQ(kDefaultMethod, "chars5u");
  EXPECT_EQ(kDefaultEntropyThreshold, 2.0);
}

}  // namespace
}  // namespace neardup
