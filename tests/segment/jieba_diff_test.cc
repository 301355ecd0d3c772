// Copyright 2026 The neardup Authors.
//
// Differential tests against python3-jieba itself: the same texts go through
// bench/jieba_reference.py (Debian's /usr/bin/python3 with python3-jieba) and
// through neardup's Segmenter / KeywordExtractor; token sequences and
// extract_tags(topK=20, withWeight=True) results are compared document by
// document. Skipped when python3-jieba or the jieba data are not installed.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "neardup/keywords.h"
#include "neardup/segmenter.h"
#include "neardup/text.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

constexpr char kPython[] = "/usr/bin/python3";

bool PythonJiebaAvailable() {
  const std::string cmd = std::string(kPython) + " -c 'import jieba.analyse' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

struct Reference {
  std::vector<std::string> cut;
  std::vector<std::pair<std::string, double>> tags;
};

// Runs jieba_reference.py dump on `texts`; returns false (with *error) on failure.
bool RunReference(const std::vector<std::string>& texts, const std::string& name,
                  const std::vector<std::string>& extra_args, std::vector<Reference>* out,
                  std::string* error) {
  const std::string dir = testing::MakeTempDir("jieba_diff_" + name);
  const std::string in_path = dir + "/in.jsonl";
  const std::string out_path = dir + "/out.jsonl";
  {
    std::ofstream in(in_path, std::ios::binary);
    for (const std::string& t : texts) in << nlohmann::json{{"text", t}}.dump() << "\n";
  }
  std::string cmd = std::string(kPython) + " '" + testing::SourceDir() +
                    "/bench/jieba_reference.py' dump '" + in_path + "' '" + out_path + "'";
  for (const std::string& a : extra_args) cmd += " '" + a + "'";
  cmd += " 2>'" + dir + "/stderr.txt'";
  if (std::system(cmd.c_str()) != 0) {
    *error = "reference failed: " + cmd + "\n" + testing::ReadFile(dir + "/stderr.txt");
    return false;
  }
  std::ifstream in(out_path, std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    Reference r;
    r.cut = j.at("cut").get<std::vector<std::string>>();
    for (const auto& t : j.at("tags"))
      r.tags.emplace_back(t[0].get<std::string>(), t[1].get<double>());
    out->push_back(std::move(r));
  }
  if (out->size() != texts.size()) {
    *error = "reference wrote " + std::to_string(out->size()) + " results for " +
             std::to_string(texts.size()) + " texts";
    return false;
  }
  return true;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& w : v) s += (s.empty() ? "" : " | ") + nlohmann::json(w).dump();
  return s;
}

struct DiffStats {
  size_t docs = 0;
  size_t cut_same = 0;
  size_t tags_same = 0;
  size_t weights = 0;          // keyword weights compared
  size_t weights_bitwise = 0;  // ... of which bitwise equal to Python's
  std::string report;          // the first differing documents
};

DiffStats Compare(const Segmenter& seg, const IdfTable& idf, const std::vector<std::string>& texts,
                  const std::vector<Reference>& ref) {
  DiffStats stats;
  KeywordExtractor extractor(&seg, &idf);
  std::vector<std::string_view> words;
  std::vector<Keyword> keywords;
  size_t reported = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    ++stats.docs;
    seg.Cut(texts[i], &words);
    const std::vector<std::string> mine(words.begin(), words.end());
    const bool cut_ok = mine == ref[i].cut;
    stats.cut_same += cut_ok;

    extractor.Extract(texts[i], 20, &keywords);
    bool tags_ok = keywords.size() == ref[i].tags.size();
    for (size_t k = 0; tags_ok && k < keywords.size(); ++k) {
      const double a = keywords[k].weight, b = ref[i].tags[k].second;
      ++stats.weights;
      stats.weights_bitwise += a == b;
      tags_ok = keywords[k].word == ref[i].tags[k].first &&
                std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
    }
    stats.tags_same += tags_ok;
    if ((!cut_ok || !tags_ok) && reported++ < 10) {
      std::ostringstream os;
      os << "--- document " << i << ": " << nlohmann::json(texts[i]).dump().substr(0, 400) << "\n";
      if (!cut_ok) {
        os << "  neardup: " << Join(mine).substr(0, 2000) << "\n";
        os << "  jieba:   " << Join(ref[i].cut).substr(0, 2000) << "\n";
      }
      if (!tags_ok) {
        os << "  neardup tags:";
        for (const auto& kw : keywords) os << " " << kw.word << "=" << kw.weight;
        os << "\n  jieba tags:  ";
        for (const auto& [w, x] : ref[i].tags) os << " " << w << "=" << x;
        os << "\n";
      }
      stats.report += os.str();
    }
  }
  return stats;
}

// Mixed text: every branch of jieba.cut's block and whitespace handling.
std::vector<std::string> MixedTexts() {
  return {
      "我来到北京清华大学",
      "他来到了网易杭研大厦",
      "小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
      "Hello, world! This is an English sentence with numbers 123 and 4.56.",
      "价格上涨了3.5%，达到1,234.56元；GDP增长7.8%。",
      "iPhone 15 Pro Max售价9999元，AT&T和c#、C++、.NET都是词",
      "ＡＢＣ全角字母１２３和全角空格\u3000之后",
      "表情😀😂🎉混在中文里👍，还有𠀀扩展B汉字",
      "Windows换行\r\n第二行\r\n\r\n第四行\n\r反序",
      "制表符\t分隔\t\t多个",
      "  前导空格和尾随空格  ",
      "不间断\u00a0空格与\u2028行分隔\u2029段分隔\u0085NEL",
      "\v垂直制表\f换页\x1c\x1d\x1e\x1f信息分隔",
      "零宽\u200b空格不是空白",
      "1.2.3版本号和3.14.15以及abc.def和a1.5%",
      "email: someone@example.com, url: https://example.com/a_b-c?x=1&y=2#frag",
      "混合abc中文def123汉字456ghi",
      "中华人民共和国成立于1949年10月1日",
      "结婚的和尚未结婚的",
      "工信处女干事每月经过下属科室都要亲口交代24口交换机等技术性器件的安装工作",
      "ＳＨＡＲＰ—夏普“液晶”电视《新闻联播》（CCTV-1）",
      "C罗梅西内马尔B超X光Ｘ光",
      "_下划线_和%百分号%和#井号#和&和&+加号+",
      "-------- 分隔线 ========",
      "",
      " ",
      "\r\n",
      "\n\n\n",
      "a",
      "中",
      "朝鲜族",
      "〇一二三四五六七八九十",
      "鿕鿖鿿㐀㐁龥",  // U+9FD5 is the last han of jieba's class
      "The the THE tHe of OF and AND 和 the中文the",
      "Ⅷ罗马数字ⅸ、①②③和⑴⑵",
      "ﬁ连字ß德语İstanbul土耳其",
      "한국어텍스트와 日本語のテキスト",
      "Привет мир 俄语",
  };
}

// Random strings that mix every class jieba distinguishes (fixed seed).
std::vector<std::string> AdversarialTexts(int count) {
  static const std::vector<std::string> kPieces = {
      // han: frequent words, single characters, rare characters
      "中国",
      "北京",
      "清华大学",
      "研究生",
      "生命",
      "的",
      "了",
      "是",
      "在",
      "我们",
      "人民",
      "发展",
      "经济",
      "结婚",
      "和尚",
      "尚未",
      "工作",
      "科学",
      "技术",
      "鿕",
      "一",
      "丁",
      "乙",
      "龘",
      "靐",
      "亍",
      "乂",
      "丌",
      "鿖",
      "㐀",
      "𠀀",
      "兀",
      "囧",
      "槑",
      "嘂",
      // ascii in han blocks
      "a",
      "b",
      "Z",
      "abc",
      "ABC",
      "x1",
      "0",
      "1",
      "9",
      "12",
      "3.14",
      "1.",
      ".5",
      "%",
      "+",
      "#",
      "&",
      "_",
      "-",
      ".",
      "AT&T",
      "c#",
      "C++",
      "B超",
      "T恤",
      "X光",
      "iPhone",
      "2024年",
      // whitespace
      " ",
      "  ",
      "\t",
      "\n",
      "\r",
      "\r\n",
      "\v",
      "\f",
      "\x1c",
      "\x1f",
      "\u0085",
      "\u00a0",
      "\u1680",
      "\u2000",
      "\u200a",
      "\u2028",
      "\u202f",
      "\u205f",
      "\u3000",
      "\u200b",
      "\ufeff",
      // punctuation and other
      "，",
      "。",
      "！",
      "？",
      "、",
      "；",
      "：",
      "“",
      "”",
      "（",
      "）",
      "《",
      "》",
      "…",
      "—",
      ",",
      "!",
      "?",
      ";",
      ":",
      "'",
      "\"",
      "(",
      ")",
      "[",
      "]",
      "{",
      "}",
      "@",
      "$",
      "^",
      "*",
      "=",
      "/",
      "\\",
      "|",
      "~",
      "`",
      "<",
      ">",
      "Ａ",
      "１",
      "ａ",
      "ｚ",
      "０",
      "é",
      "ß",
      "İ",
      "K",
      "Ω",
      "α",
      "ア",
      "한",
      "😀",
      "👍🏽",
      "🇨🇳",
      "\u0301",
      "\x01",
      "\x7f",
      "\u00ad",
      "\U0010FFFF",
  };
  std::mt19937 rng(20260421);
  std::uniform_int_distribution<size_t> piece(0, kPieces.size() - 1);
  std::uniform_int_distribution<int> length(1, 40);
  std::uniform_int_distribution<uint32_t> han(0x4E00, 0x9FD5);
  std::uniform_int_distribution<int> coin(0, 9);
  std::vector<std::string> texts;
  for (int i = 0; i < count; ++i) {
    std::string s;
    const int n = length(rng);
    for (int k = 0; k < n; ++k) {
      if (coin(rng) < 3) {  // a random han character, encoded by hand
        const uint32_t c = han(rng);
        s += static_cast<char>(0xE0 | (c >> 12));
        s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (c & 0x3F));
      } else {
        s += kPieces[piece(rng)];
      }
    }
    texts.push_back(std::move(s));
  }
  return texts;
}

class JiebaDiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PythonJiebaAvailable()) {
      NEARDUP_SKIP_OUTSIDE_CI(std::string(kPython) +
                              " cannot import jieba: install Debian's python3-jieba "
                              "(apt-get install python3-jieba) to run the differential tests");
    }
    auto seg = Segmenter::Open(SegmenterOptions());
    ASSERT_TRUE(seg.ok()) << seg.status().ToString();
    seg_ = std::move(*seg);
    auto idf = IdfTable::LoadDefault();
    ASSERT_TRUE(idf.ok()) << idf.status().ToString();
    idf_ = std::move(*idf);
  }

  void ExpectIdentical(const std::vector<std::string>& texts, const std::string& name,
                       double min_fraction, const Segmenter* seg = nullptr,
                       const std::vector<std::string>& extra_args = {}) {
    std::vector<Reference> ref;
    std::string error;
    ASSERT_TRUE(RunReference(texts, name, extra_args, &ref, &error)) << error;
    const DiffStats stats = Compare(seg ? *seg : *seg_, idf_, texts, ref);
    const double cut_fraction = static_cast<double>(stats.cut_same) / stats.docs;
    const double tags_fraction = static_cast<double>(stats.tags_same) / stats.docs;
    std::printf(
        "[%s] %zu documents: segmentation identical %zu (%.3f%%), keywords identical %zu "
        "(%.3f%%), %zu of %zu weights bitwise equal\n",
        name.c_str(), stats.docs, stats.cut_same, 100 * cut_fraction, stats.tags_same,
        100 * tags_fraction, stats.weights_bitwise, stats.weights);
    EXPECT_GE(cut_fraction, min_fraction) << stats.report;
    EXPECT_GE(tags_fraction, min_fraction) << stats.report;
    if (!stats.report.empty()) std::printf("%s", stats.report.c_str());
  }

  std::unique_ptr<Segmenter> seg_;
  IdfTable idf_;
};

TEST_F(JiebaDiffTest, ThucNews) {
  NEARDUP_REQUIRE_SHARED_DATA(path, "zh_thucnews1000.jsonl");
  std::vector<std::string> texts;
  std::ifstream in(path, std::ios::binary);
  std::string line;
  while (std::getline(in, line)) texts.push_back(nlohmann::json::parse(line).at("text"));
  ASSERT_EQ(texts.size(), 1000u);
  ExpectIdentical(texts, "thucnews", 0.999);
}

// The text of Debian's manpages-zh zh_CN pages, as neardup's roff reader
// extracts it (what `neardup segment /usr/share/man/zh_CN` segments).
TEST_F(JiebaDiffTest, ChineseManPages) {
  const std::string dir = "/usr/share/man/zh_CN";
  if (!std::filesystem::exists(dir)) {
    NEARDUP_SKIP_OUTSIDE_CI(dir + " is absent: install Debian's manpages-zh");
  }
  ReadOptions options;
  auto reader = DocumentReader::Open({dir}, options);
  ASSERT_TRUE(reader.ok());
  std::vector<std::string> texts;
  Document doc;
  while ((*reader)->Next(&doc)) texts.push_back(doc.text);
  ASSERT_GT(texts.size(), 700u);
  ExpectIdentical(texts, "manpages-zh", 0.999);
}

TEST_F(JiebaDiffTest, MixedAndAdversarialText) {
  std::vector<std::string> texts = MixedTexts();
  for (std::string& t : AdversarialTexts(600)) texts.push_back(std::move(t));
  ExpectIdentical(texts, "mixed", 1.0);
}

TEST_F(JiebaDiffTest, UserDictionary) {
  const std::string dir = testing::MakeTempDir("userdict_src");
  const std::string dict = dir + "/user.txt";
  testing::WriteFile(dict,
                     "\xEF\xBB\xBF"
                     "云计算 5\n"
                     "创新办 3 i\n"
                     "凱特琳 nz\n"
                     "台中\n"
                     "  \n"
                     "石墨烯\r\n"
                     "江大桥 20000 nr\n"
                     "中将 0\n"
                     "hello world 7\n"
                     "韩玉赏鉴 x5 n\n"
                     "李小福 2 nr\n");
  SegmenterOptions options;
  options.user_dicts = {dict};
  auto seg = Segmenter::Open(options);
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  EXPECT_EQ((*seg)->Tag("江大桥"), std::optional<std::string_view>("nr"));
  EXPECT_EQ((*seg)->Tag("凱特琳"), std::optional<std::string_view>("nz"));
  EXPECT_GT((*seg)->Frequency("台中"), 0);
  const std::vector<std::string> texts = {
      "李小福是创新办主任也是云计算方面的专家; 什么是八一双鹿",
      "例如我输入一个带“韩玉赏鉴”的标题，在自定义词库中也增加了此词为N类",
      "「台中」正確應該不會被切開。mac上可分出「石墨烯」；此時又可以分出來凱特琳了。",
      "江州市长江大桥参加了长江大桥的通车仪式",
      "我们中出了一个叛徒，他是中将",
      "hello world 和 hello world 7",
  };
  std::vector<std::string> all = texts;
  for (std::string& t : AdversarialTexts(50)) all.push_back(std::move(t));
  ExpectIdentical(all, "userdict", 1.0, seg->get(), {"--user-dict", dict});
}

}  // namespace
}  // namespace neardup
