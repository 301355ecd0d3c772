// Copyright 2026 The neardup Authors.
//
// Unit tests of the segment module on small handmade jieba directories: the
// DAG route, the block and whitespace rules, the HMM path, POS fallbacks,
// user dictionaries, data loading errors, IdfTable and KeywordExtractor.

#include "neardup/segmenter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "neardup/keywords.h"
#include "segment/dict_trie.h"
#include "tests/testing/test_util.h"
#include "util/utf8.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::WriteFile;

// A minimal HMM: B/E/M/S with jieba's start and transition values and
// emission probabilities for a few characters.
constexpr char kProbStart[] =
    "P={'B': -0.26268660809250016,\n 'E': -3.14e+100,\n 'M': -3.14e+100,\n"
    " 'S': -1.4652633398537678}\n";
constexpr char kProbTrans[] =
    "P={'B': {'E': -0.510825623765990, 'M': -0.916290731874155},\n"
    " 'E': {'B': -0.5897149736854513, 'S': -0.8085250474669937},\n"
    " 'M': {'E': -0.33344856811948514, 'M': -1.2603623820268226},\n"
    " 'S': {'B': -0.7211965654669841, 'S': -0.6658631448798212}}\n";
// 戊 likes to begin a word and 己 to end one; 庚 is a single-character word.
constexpr char kProbEmit[] =
    "from __future__ import unicode_literals\n\n"
    "P={'B': {'\\u620a': -1.0, '\\u5df1': -9.0, '\\u5e9a': -9.0},\n"
    " 'E': {'\\u620a': -9.0, '\\u5df1': -1.0, '\\u5e9a': -9.0},\n"
    " 'M': {'\\u620a': -9.0, '\\u5df1': -9.0, '\\u5e9a': -9.0},\n"
    " 'S': {'\\u620a': -9.0, '\\u5df1': -9.0, '\\u5e9a': -0.5, '\\u2236': -15.8}}\n";

std::string MakeJiebaDir(const std::string& name, const std::string& dict) {
  const std::string dir = MakeTempDir(name);
  std::filesystem::create_directories(dir + "/finalseg");
  std::filesystem::create_directories(dir + "/analyse");
  WriteFile(dir + "/dict.txt", dict);
  WriteFile(dir + "/finalseg/prob_start.py", kProbStart);
  WriteFile(dir + "/finalseg/prob_trans.py", kProbTrans);
  WriteFile(dir + "/finalseg/prob_emit.py", kProbEmit);
  WriteFile(dir + "/analyse/idf.txt", "甲乙 2.5\n丙 1.5\n北京 3.0\n");
  return dir;
}

constexpr char kTinyDict[] =
    "甲 10 n\n甲乙 10 nr\n乙丙 10 v\n丙 10 n\n北京 50 ns\n北京大学 40 nt\n大学 30 n\n"
    "AT&T 3 nz\nc# 3 nz\n";

std::unique_ptr<Segmenter> OpenTiny(const std::string& name, bool hmm = true,
                                    std::vector<std::string> user_dicts = {}) {
  SegmenterOptions options;
  options.jieba_dir = MakeJiebaDir(name, kTinyDict);
  options.hmm = hmm;
  options.user_dicts = std::move(user_dicts);
  auto seg = Segmenter::Open(options);
  EXPECT_TRUE(seg.ok()) << seg.status().ToString();
  return seg.ok() ? std::move(*seg) : nullptr;
}

std::vector<std::string> CutToStrings(const Segmenter& seg, std::string_view text) {
  std::vector<std::string_view> words;
  seg.Cut(text, &words);
  return std::vector<std::string>(words.begin(), words.end());
}

using Words = std::vector<std::string>;

TEST(SegmenterTest, RouteTieGoesToTheLongerFirstWord) {
  // 甲|乙丙 and 甲乙|丙 have bitwise-equal log probabilities; Python's max over
  // (prob, end) tuples picks the larger end index.
  auto seg = OpenTiny("tie", /*hmm=*/false);
  ASSERT_NE(seg, nullptr);
  EXPECT_EQ(CutToStrings(*seg, "甲乙丙"), (Words{"甲乙", "丙"}));
}

TEST(SegmenterTest, RouteMaximizesLogProbability) {
  auto seg = OpenTiny("route");
  ASSERT_NE(seg, nullptr);
  // freq(北京大学) = 40 beats 北京 50 * 大学 30 / total.
  EXPECT_EQ(CutToStrings(*seg, "北京大学"), (Words{"北京大学"}));
  EXPECT_EQ(CutToStrings(*seg, "AT&T和c#"), (Words{"AT&T", "和", "c#"}));
}

TEST(SegmenterTest, HmmJoinsUnknownCharacters) {
  auto seg = OpenTiny("hmm");
  ASSERT_NE(seg, nullptr);
  // 戊己 is not in the dictionary: B E by the emission table; 庚 is S.
  EXPECT_EQ(CutToStrings(*seg, "戊己庚"), (Words{"戊己", "庚"}));
  // Without HMM every unknown character stays alone.
  auto no_hmm = OpenTiny("no_hmm", /*hmm=*/false);
  ASSERT_NE(no_hmm, nullptr);
  EXPECT_EQ(CutToStrings(*no_hmm, "戊己庚"), (Words{"戊", "己", "庚"}));
  // finalseg's re_skip keeps letters, digits, decimals and % together.
  EXPECT_EQ(CutToStrings(*seg, "ab12.5%x"), (Words{"ab12.5%", "x"}));
  EXPECT_EQ(CutToStrings(*seg, "1.2.3"), (Words{"1.2", ".", "3"}));
  EXPECT_EQ(CutToStrings(*seg, "a+#b"), (Words{"a", "+#", "b"}));
  EXPECT_EQ(CutToStrings(*no_hmm, "ab12.5%x"), (Words{"ab12", ".", "5", "%", "x"}));
}

TEST(SegmenterTest, NonHanTextAndWhitespace) {
  auto seg = OpenTiny("space");
  ASSERT_NE(seg, nullptr);
  EXPECT_EQ(CutToStrings(*seg, "a b\r\nc\n\r\t"),
            (Words{"a", " ", "b", "\r\n", "c", "\n", "\r", "\t"}));
  EXPECT_EQ(CutToStrings(*seg, "，。😀\u3000\u00a0"), (Words{"，", "。", "😀", "\u3000", "\u00a0"}));
  EXPECT_EQ(CutToStrings(*seg, "  "), (Words{" ", " "}));
  EXPECT_EQ(CutToStrings(*seg, ""), Words{});
}

TEST(SegmenterTest, InvalidUtf8BytesAreSingleTokens) {
  auto seg = OpenTiny("invalid");
  ASSERT_NE(seg, nullptr);
  EXPECT_EQ(CutToStrings(*seg, "甲\xff\xc0\x80乙"), (Words{"甲", "\xff", "\xc0", "\x80", "乙"}));
  EXPECT_EQ(CutToStrings(*seg, "\xe4\xb8"), (Words{"\xe4", "\xb8"}));              // truncated 中
  EXPECT_EQ(CutToStrings(*seg, "\xed\xa0\x80"), (Words{"\xed", "\xa0", "\x80"}));  // surrogate

  // Random bytes: tokens are non-empty and concatenate to the input.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255), len(0, 64);
  std::vector<std::string_view> words;
  std::vector<Token> tokens;
  for (int i = 0; i < 3000; ++i) {
    std::string s(static_cast<size_t>(len(rng)), '\0');
    for (char& c : s) c = static_cast<char>(byte(rng));
    seg->Cut(s, &words);
    std::string joined;
    for (std::string_view w : words) {
      ASSERT_FALSE(w.empty());
      joined += w;
    }
    ASSERT_EQ(joined, s);
    seg->CutWithPos(s, &tokens);
    ASSERT_EQ(tokens.size(), words.size());
  }
}

// The segmenter decodes the common three-byte sequences itself: on random
// text of three-byte leads (CJK's excepted), continuation bytes and others,
// where every character is a token of its own (no han block), the tokens are
// exactly utf8::Decode's sequences and invalid bytes.
TEST(SegmenterTest, DecodingMatchesUtf8Decode) {
  auto seg = OpenTiny("decode");
  ASSERT_NE(seg, nullptr);
  const unsigned char alphabet[] = {0xE0, 0xE1, 0xE3, 0xEC, 0xED, 0xEE, 0xEF, 0xF0,
                                    0xC2, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0x20, 0x21};
  std::mt19937 rng(15);
  std::uniform_int_distribution<size_t> pick(0, sizeof(alphabet) - 1), len(0, 24);
  std::vector<std::string_view> words;
  for (int i = 0; i < 4000; ++i) {
    std::string s(len(rng), '\0');
    for (char& c : s) c = static_cast<char>(alphabet[pick(rng)]);
    Words expected;
    for (size_t pos = 0; pos < s.size();) {
      int n;
      utf8::DecodeAt(s, pos, &n);
      expected.push_back(s.substr(pos, static_cast<size_t>(n)));
      pos += static_cast<size_t>(n);
    }
    ASSERT_EQ(CutToStrings(*seg, s), expected) << i;
  }
}

// The frozen trie's filters of two- and three-character prefixes are
// one-sided: every such prefix of a dictionary word passes them (seeded random
// words over a small alphabet, so that many share their first characters).
TEST(DictTrieTest, PrefixFiltersPassEveryPrefix) {
  segment::DictTrie trie;
  std::mt19937 rng(3);
  std::uniform_int_distribution<uint32_t> ch(0x4E00, 0x4E00 + 40), len(1, 6);
  std::vector<std::vector<uint32_t>> words;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint32_t> w(len(rng));
    for (uint32_t& c : w) c = ch(rng);
    trie.set_freq(trie.Insert(w.data(), w.size()), 1 + i % 7);
    words.push_back(std::move(w));
  }
  trie.Freeze();
  ASSERT_TRUE(trie.frozen());
  size_t rejected = 0, absent = 0;
  for (const auto& w : words) {
    if (w.size() >= 2) {
      EXPECT_TRUE(trie.MayHavePair(segment::DictTrie::PairHash(w.data())));
    }
    if (w.size() >= 3) {
      EXPECT_TRUE(trie.MayHaveTriple(segment::DictTrie::TripleHash(w.data())));
    }
    const uint32_t other[3] = {w[0] + 100, 0x4E00, 0x4E01};  // never a prefix
    ++absent;
    rejected += !trie.MayHaveTriple(segment::DictTrie::TripleHash(other));
    rejected += !trie.MayHavePair(segment::DictTrie::PairHash(other));
    absent += 1;
  }
  EXPECT_GT(rejected, absent * 9 / 10);  // and they do reject most absent ones
}

// CutWithWordIds gives Cut's tokens, each with WordId(token), on seeded random
// text whose han blocks span several of the route's 64-character chunks.
TEST(SegmenterTest, WordIdsAlongTheCutAreWordIdOfEachToken) {
  auto seg = OpenTiny("ids");
  ASSERT_NE(seg, nullptr);
  EXPECT_EQ(seg->WordId(""), -1);
  EXPECT_EQ(seg->WordId("戊"), -1);
  EXPECT_EQ(seg->WordId("\xFF"), -1);
  const int32_t beijing = seg->WordId("北京");
  const int32_t prefix = seg->WordId("北京大");  // a prefix of a word has an id too
  ASSERT_GE(beijing, 0);
  ASSERT_GE(prefix, 0);
  EXPECT_NE(beijing, prefix);
  EXPECT_LT(static_cast<size_t>(prefix), seg->word_id_count());
  const std::vector<std::string> pieces = {"甲", "乙", "丙", "北", "京", "大", "学",   "北京大学",
                                           "戊", "己", "庚", " ",  "a",  "7",  "\xFF", "，"};
  std::mt19937 rng(15);
  std::vector<std::string_view> words, cut;
  std::vector<int32_t> ids;
  for (int round = 0; round < 200; ++round) {
    std::string text;
    const int count = static_cast<int>(rng() % 300);
    for (int k = 0; k < count; ++k) text += pieces[rng() % (round % 2 ? 11 : pieces.size())];
    seg->Cut(text, &cut);
    seg->CutWithWordIds(text, &words, &ids);
    ASSERT_EQ(words, cut);
    ASSERT_EQ(ids.size(), words.size());
    for (size_t i = 0; i < words.size(); ++i) ASSERT_EQ(ids[i], seg->WordId(words[i])) << words[i];
  }
}

TEST(SegmenterTest, PosTags) {
  auto seg = OpenTiny("pos");
  ASSERT_NE(seg, nullptr);
  std::vector<Token> tokens;
  seg->CutWithPos("北京大学abc 123 3.14，戊己", &tokens);
  std::vector<std::pair<std::string, std::string>> got;
  for (const Token& t : tokens) got.emplace_back(t.word, t.pos);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"北京大学", "nt"}, {"abc", "eng"}, {" ", "x"},  {"123", "m"},
      {" ", "x"},         {"3.14", "m"},  {"，", "x"}, {"戊己", "x"}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(seg->Tag("甲乙"), std::optional<std::string_view>("nr"));
  EXPECT_EQ(seg->Tag("北京大"), std::nullopt);  // a prefix, not a word
  EXPECT_EQ(seg->Tag("a1b2"), std::nullopt);
  EXPECT_EQ(seg->TagOrFallback("a1b2"), "eng");
  EXPECT_EQ(seg->TagOrFallback("1a.2"), "x");
  EXPECT_EQ(seg->Frequency("北京"), 50);
  EXPECT_EQ(seg->Frequency("北京大"), 0);
  EXPECT_EQ(seg->total_frequency(), 10 + 10 + 10 + 10 + 50 + 40 + 30 + 3 + 3);
}

TEST(SegmenterTest, UserDictionaries) {
  const std::string dir = MakeTempDir("userdict_unit");
  WriteFile(dir + "/u.txt", "\xEF\xBB\xBF戊己庚 7 nz\n\n丙丁\n甲乙 0\nfoo bar 5\n");
  auto seg = OpenTiny("userdict_seg", true, {dir + "/u.txt"});
  ASSERT_NE(seg, nullptr);
  EXPECT_EQ(seg->Frequency("戊己庚"), 7);
  EXPECT_EQ(seg->Tag("戊己庚"), std::optional<std::string_view>("nz"));
  EXPECT_EQ(seg->Frequency("foo bar"), 5);
  // suggest_freq("丙丁", False): cut(HMM=False) = 丙|丁; freq = 10/T * 1/T;
  // max(int(freq * T) + 1, FREQ.get(word, 1)).
  const double total = 166 + 7;
  const int64_t want =
      std::max<int64_t>(static_cast<int64_t>((1.0 * (10 / total) * (1 / total)) * total) + 1, 1);
  EXPECT_EQ(seg->Frequency("丙丁"), want);
  EXPECT_EQ(CutToStrings(*seg, "戊己庚丙丁"), (Words{"戊己庚", "丙丁"}));
  // freq 0: the word no longer wins the route.
  EXPECT_EQ(seg->Frequency("甲乙"), 0);

  SegmenterOptions missing;
  missing.jieba_dir = MakeJiebaDir("userdict_missing", kTinyDict);
  missing.user_dicts = {dir + "/nope.txt"};
  auto bad = Segmenter::Open(missing);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsNotFound());
  EXPECT_NE(bad.status().message().find("nope.txt"), std::string::npos);
}

TEST(SegmenterTest, LoadingErrorsNameTheFileAndThePackage) {
  SegmenterOptions options;
  options.jieba_dir = MakeTempDir("empty_jieba");
  auto seg = Segmenter::Open(options);
  ASSERT_FALSE(seg.ok());
  EXPECT_TRUE(seg.status().IsNotFound());
  EXPECT_NE(seg.status().message().find("dict.txt"), std::string::npos);
  EXPECT_NE(seg.status().message().find("apt-get install python3-jieba"), std::string::npos);
  EXPECT_NE(seg.status().message().find("NEARDUP_JIEBA_DIR"), std::string::npos);

  options.jieba_dir = MakeJiebaDir("bad_dict", "甲 10 n\n乙 ten n\n");
  seg = Segmenter::Open(options);
  ASSERT_FALSE(seg.ok());
  EXPECT_TRUE(seg.status().IsCorruption());
  EXPECT_NE(seg.status().message().find("dict.txt:2"), std::string::npos)
      << seg.status().ToString();

  options.jieba_dir = MakeJiebaDir("bad_emit", kTinyDict);
  std::filesystem::remove(options.jieba_dir + "/finalseg/prob_emit.py");
  seg = Segmenter::Open(options);
  ASSERT_FALSE(seg.ok());
  EXPECT_NE(seg.status().message().find("prob_emit.py"), std::string::npos);

  options.jieba_dir = MakeJiebaDir("bad_trans", kTinyDict);
  WriteFile(options.jieba_dir + "/finalseg/prob_trans.py", "P={'B': {'E': -0.5,\n 'M': oops}}\n");
  seg = Segmenter::Open(options);
  ASSERT_FALSE(seg.ok());
  EXPECT_TRUE(seg.status().IsCorruption());
  EXPECT_NE(seg.status().message().find("prob_trans.py:2"), std::string::npos)
      << seg.status().ToString();

  options.jieba_dir = MakeJiebaDir("bad_start", kTinyDict);
  WriteFile(options.jieba_dir + "/finalseg/prob_start.py", "P={'B': -0.2, 'S': -1.4}\n");
  seg = Segmenter::Open(options);
  ASSERT_FALSE(seg.ok());
  EXPECT_NE(seg.status().message().find("prob_start.py"), std::string::npos);
}

TEST(SegmenterTest, DefaultDirFromEnvironment) {
  const std::string dir = MakeJiebaDir("env_dir", kTinyDict);
  const char* old = std::getenv("NEARDUP_JIEBA_DIR");
  const std::string saved = old ? old : "";
  setenv("NEARDUP_JIEBA_DIR", dir.c_str(), 1);
  EXPECT_EQ(DefaultJiebaDir(), dir);
  auto seg = Segmenter::Open(SegmenterOptions());
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  EXPECT_EQ((*seg)->options().jieba_dir, dir);
  auto idf = IdfTable::LoadDefault();
  ASSERT_TRUE(idf.ok());
  EXPECT_EQ(idf->size(), 3u);
  if (old) {
    setenv("NEARDUP_JIEBA_DIR", saved.c_str(), 1);
  } else {
    unsetenv("NEARDUP_JIEBA_DIR");
  }
}

TEST(SegmenterTest, ConcurrentCutsAgree) {
  auto seg = OpenTiny("threads");
  ASSERT_NE(seg, nullptr);
  std::string text;
  for (int i = 0; i < 200; ++i) text += "北京大学甲乙丙戊己庚 AT&T abc 1.5%，";
  const Words want = CutToStrings(*seg, text);
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      bool same = true;
      for (int i = 0; i < 50; ++i) same = same && CutToStrings(*seg, text) == want;
      ok[t] = same;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, std::vector<int>(4, 1));
}

TEST(IdfTableTest, LoadMedianOverrideAndErrors) {
  const std::string dir = MakeTempDir("idf");
  WriteFile(dir + "/idf.txt", "甲 4.0\n乙 1.0\n\n丙 3.0\r\n甲 2.0\n丁 +5e0\n");
  auto idf = IdfTable::Load(dir + "/idf.txt");
  ASSERT_TRUE(idf.ok()) << idf.status().ToString();
  EXPECT_EQ(idf->size(), 4u);
  EXPECT_EQ(idf->Idf("甲"), 2.0);  // the later line wins
  EXPECT_EQ(idf->Find("戊"), std::nullopt);
  // sorted([2, 1, 3, 5])[4 // 2] == 3
  EXPECT_EQ(idf->median(), 3.0);
  EXPECT_EQ(idf->Idf("戊"), 3.0);
  const auto entries = idf->Entries();
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].first, "甲");
  EXPECT_EQ(entries[3].first, "丁");

  WriteFile(dir + "/bad.txt", "甲 4.0\n乙 1.0\n丙 three\n");
  auto bad = IdfTable::Load(dir + "/bad.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsCorruption());
  EXPECT_NE(bad.status().message().find("bad.txt:3"), std::string::npos) << bad.status().ToString();
  WriteFile(dir + "/bad2.txt", "甲 4.0 extra\n");
  EXPECT_TRUE(IdfTable::Load(dir + "/bad2.txt").status().IsCorruption());
  auto missing = IdfTable::Load(dir + "/missing.txt");
  EXPECT_TRUE(missing.status().IsNotFound());
  EXPECT_NE(missing.status().message().find("python3-jieba"), std::string::npos);
}

TEST(IdfTableTest, SaveRoundTripsExactly) {
  const std::string dir = MakeTempDir("idf_save");
  const IdfTable table = IdfTable::FromEntries(
      {{"甲", 0.1}, {"乙", 1.0 / 3.0}, {"丙", 13.900677652}, {"乙", 2.5e-300}});
  ASSERT_TRUE(table.Save(dir + "/out.txt").ok());
  auto back = IdfTable::Load(dir + "/out.txt");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->Entries(), table.Entries());
  EXPECT_EQ(back->median(), table.median());
  EXPECT_EQ(IdfTable().median(), 0.0);
}

TEST(KeywordExtractorTest, WeightsOrderAndStopWords) {
  auto seg = OpenTiny("kw");
  ASSERT_NE(seg, nullptr);
  const IdfTable idf = IdfTable::FromEntries({{"甲乙", 2.5}, {"北京", 3.0}, {"AT&T", 1.0}});
  KeywordExtractor extractor(seg.get(), &idf);
  std::vector<Keyword> kw;
  // Candidates (>= 2 characters, not stop words): 甲乙 x2, 北京 x1, AT&T x1,
  // c# x1 (median idf); "the"/"THE" are stop words; 丙 is too short.
  extractor.Extract("甲乙，北京 the THE 甲乙 AT&T c# 丙", 0, &kw);
  const double total = 5;
  const double median = idf.median();  // sorted([2.5, 3, 1])[1] == 2.5
  ASSERT_EQ(median, 2.5);
  std::vector<std::pair<std::string, double>> got;
  for (const auto& k : kw) got.emplace_back(k.word, k.weight);
  const std::vector<std::pair<std::string, double>> want = {
      {"甲乙", 2.0 * (2.5 / total)},
      {"北京", 1.0 * (3.0 / total)},
      {"c#", 1.0 * (median / total)},
      {"AT&T", 1.0 * (1.0 / total)},
  };
  // 甲乙 = 1.0, 北京 = 0.6, c# = 0.5, AT&T = 0.2
  EXPECT_EQ(got, want);
  extractor.Extract("甲乙，北京 the THE 甲乙 AT&T c# 丙", 2, &kw);
  ASSERT_EQ(kw.size(), 2u);
  EXPECT_EQ(kw[1].word, "北京");
  // Ties keep first-occurrence order.
  extractor.Extract("北京大学 c#", 0, &kw);  // both median / 2
  ASSERT_EQ(kw.size(), 2u);
  EXPECT_EQ(kw[0].weight, kw[1].weight);
  EXPECT_EQ(kw[0].word, "北京大学");
  EXPECT_EQ(kw[1].word, "c#");
  extractor.Extract("c# 北京大学", 0, &kw);
  ASSERT_EQ(kw.size(), 2u);
  EXPECT_EQ(kw[0].word, "c#");
  EXPECT_EQ(kw[1].word, "北京大学");
  extractor.Extract("", 20, &kw);
  EXPECT_TRUE(kw.empty());
  EXPECT_TRUE(KeywordExtractor::IsStopWord("which"));
  EXPECT_FALSE(KeywordExtractor::IsStopWord("Which"));
}

}  // namespace
}  // namespace neardup
