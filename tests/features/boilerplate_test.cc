// Copyright 2026 The neardup Authors.
//
// Boilerplate removal (boilerplate.h): the line counts against a brute-force
// count on random corpora, the filter against a direct computation, the
// statistics file, the method keys, and what it does to fingerprints.

#include "neardup/boilerplate.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <map>
#include <random>
#include <set>
#include <sstream>

#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ReadFile;
using ::neardup::testing::WriteFile;

// The key DocumentLineKeys gives one line.
uint64_t KeyOf(const std::string& line) {
  const std::vector<uint64_t> keys = DocumentLineKeys(line);
  EXPECT_EQ(keys.size(), 1u) << line;
  return keys.empty() ? 0 : keys[0];
}

// A random corpus: each document a few lines drawn from a small pool, written
// with random extra white space and case so that canonical forms coincide.
std::vector<std::string> RandomCorpus(std::mt19937_64& rng, size_t docs) {
  const std::vector<std::string> pool = {"Copyright 2026 the authors",
                                         "本页面中文版由中文 man 手册页计划提供。",
                                         "SEE ALSO",
                                         "a",
                                         "报告错误",
                                         "line six of the pool",
                                         "第七行",
                                         "Eight",
                                         "nine nine",
                                         "ten"};
  std::vector<std::string> corpus;
  for (size_t d = 0; d < docs; ++d) {
    std::string text;
    const int lines = static_cast<int>(rng() % 8);
    for (int l = 0; l < lines; ++l) {
      if (rng() % 5 == 0) {
        text += rng() % 2 ? "\n" : "  \t\n";  // blank lines
        continue;
      }
      std::string line = pool[rng() % pool.size()];
      if (rng() % 3 == 0) {
        for (char& c : line) {
          if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        }
      }
      if (rng() % 3 == 0) line = "  " + line + "\t ";
      if (rng() % 4 == 0) {
        const size_t sp = line.find(' ');
        if (sp != std::string::npos) line.replace(sp, 1, "\xE3\x80\x80  ");  // U+3000
      }
      if (rng() % 10 == 0) line = "unique " + std::to_string(rng());
      text += line;
      if (l + 1 < lines || rng() % 2) text += '\n';
    }
    corpus.push_back(text);
  }
  return corpus;
}

// The oracle's canonical form, written independently: split into words at
// white space, join with one space, lower-case ASCII.
std::string OracleCanonical(std::string line) {
  size_t p;
  while ((p = line.find("\xE3\x80\x80")) != std::string::npos) line.replace(p, 3, " ");
  std::istringstream words(line);
  std::string word, out;
  while (words >> word) out += (out.empty() ? "" : " ") + word;
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// CanonicalLine's definition, one byte at a time: white space (ASCII
// space and \t-\r, U+00A0, U+3000) collapsed to one ' ' between content,
// dropped at both ends; A-Z lower-cased; every other byte kept.
std::string ReferenceCanonical(std::string_view line) {
  std::string out;
  bool pending = false;
  for (size_t i = 0; i < line.size();) {
    const auto at = [&](size_t k) { return static_cast<unsigned char>(line[k]); };
    size_t space = 0;
    if (at(i) == ' ' || (at(i) >= '\t' && at(i) <= '\r')) {
      space = 1;
    } else if (at(i) == 0xC2 && i + 1 < line.size() && at(i + 1) == 0xA0) {
      space = 2;
    } else if (at(i) == 0xE3 && i + 2 < line.size() && at(i + 1) == 0x80 && at(i + 2) == 0x80) {
      space = 3;
    }
    if (space > 0) {
      pending = !out.empty();
      i += space;
      continue;
    }
    if (pending) out.push_back(' ');
    pending = false;
    const char c = line[i++];
    out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return out;
}

// The fast CanonicalLine (runs of plain bytes found 16 at a time) against the
// definition, on random lines of pieces that put the special bytes (spaces,
// upper case, 0xC2 and 0xE3 with and without their space continuations,
// controls) at every offset of a 16-byte block, lines cut anywhere included.
TEST(BoilerplateTest, CanonicalLineMatchesTheDefinition) {
  const std::vector<std::string> pieces = {"a",        "Z",
                                           "q",        " ",
                                           "\t",       "\r",
                                           "\x01",     "\x1f",
                                           "\xC2\xA0", "\xC2",
                                           "\xC2\xA9", "\xE3\x80\x80",
                                           "\xE3\x80", "\xE3\x80\x81",
                                           "\xE3",     "中",
                                           "文",       "@",
                                           "[",        "`",
                                           "{",        "0",
                                           "\x7f",     "\xFF"};
  std::mt19937_64 rng(7);
  for (int t = 0; t < 20000; ++t) {
    std::string line;
    const size_t count = rng() % 40;
    for (size_t k = 0; k < count; ++k) {
      // Mostly plain bytes, so that long runs reach the 16-byte steps.
      line += rng() % 4 != 0 ? std::string(1 + rng() % 20, static_cast<char>('a' + rng() % 26))
                             : pieces[rng() % pieces.size()];
    }
    if (!line.empty() && rng() % 3 == 0) line.resize(rng() % line.size());
    ASSERT_EQ(CanonicalLine(line), ReferenceCanonical(line)) << ::testing::PrintToString(line);
  }
}

TEST(BoilerplateTest, CanonicalLine) {
  EXPECT_EQ(CanonicalLine("  Hello \t  World\r"), "hello world");
  EXPECT_EQ(CanonicalLine("\xE3\x80\x80中文\xC2\xA0 ABC"), "中文 abc");
  EXPECT_EQ(CanonicalLine(" \t "), "");
  EXPECT_TRUE(DocumentLineKeys("\n  \n\t\n").empty());
  EXPECT_EQ(DocumentLineKeys("a\nA\n  a  \nb").size(), 2u);
}

TEST(BoilerplateTest, CountsMatchBruteForceOnRandomCorpora) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 30; ++round) {
    const std::vector<std::string> corpus = RandomCorpus(rng, 1 + rng() % 60);
    // canonical line -> groups (distinct group tags of the documents that
    // hold it), or documents once there are LineStats::kGroupCap groups
    std::map<std::string, int> oracle;
    std::map<std::string, std::set<uint32_t>> tags;
    std::map<std::string, int> documents;
    for (const std::string& text : corpus) {
      std::set<std::string> lines;
      for (const std::string& l : SplitLines(text)) {
        const std::string c = OracleCanonical(l);
        if (!c.empty()) lines.insert(c);
      }
      std::vector<uint64_t> keys;
      for (const std::string& c : lines) keys.push_back(KeyOf(c));
      const uint32_t tag = LineGroupTag(keys);
      for (const std::string& c : lines) {
        tags[c].insert(tag);
        ++documents[c];
      }
    }
    for (const auto& [line, t] : tags) {
      oracle[line] =
          t.size() >= LineStats::kGroupCap ? documents[line] : static_cast<int>(t.size());
    }
    // Counted in one counter, and in two merged.
    LineCounter one, first, second;
    for (size_t i = 0; i < corpus.size(); ++i) {
      one.Add(corpus[i]);
      (i % 2 ? first : second).Add(corpus[i]);
    }
    first.Merge(second.stats());
    for (const LineStats* stats : {&one.stats(), &first.stats()}) {
      EXPECT_EQ(stats->documents(), corpus.size());
      EXPECT_EQ(stats->distinct_lines(), oracle.size());
      for (const auto& [line, count] : oracle) {
        EXPECT_EQ(stats->Count(KeyOf(line)), static_cast<uint32_t>(count)) << line;
        EXPECT_EQ(stats->Documents(KeyOf(line)), static_cast<uint32_t>(documents[line])) << line;
      }
      EXPECT_EQ(stats->Count(KeyOf("never seen")), 0u);
      for (uint32_t t = 1; t <= 8; ++t) {
        size_t expected = 0;
        for (const auto& [line, count] : oracle) expected += count >= static_cast<int>(t);
        EXPECT_EQ(stats->LinesAtLeast(t), expected) << t;
      }
    }
    // The filter: every non-blank line in >= min_docs documents left out,
    // unless that leaves out nothing or more than 90 % of the line text.
    const LineStats& stats = one.stats();
    for (int min_docs : {2, 3, 5}) {
      const BoilerplateFilter filter(stats,
                                     {.mode = BoilerplateMode::kLines, .min_docs = min_docs});
      size_t flagged = 0;
      for (const auto& [line, count] : oracle) flagged += count >= min_docs;
      EXPECT_EQ(filter.flagged_lines(), flagged);
      size_t dropped_total = 0, expected_total = 0, into_total = 0;
      std::string into = "left from before";  // one buffer for every text, as dedup keeps it
      for (const std::string& text : corpus) {
        std::string kept_text;
        size_t dropped = 0, dropped_bytes = 0, kept_bytes = 0;
        size_t start = 0;
        while (start < text.size()) {
          size_t end = text.find('\n', start);
          const bool newline = end != std::string::npos;
          if (!newline) end = text.size();
          const std::string line = text.substr(start, end - start);
          const std::string c = OracleCanonical(line);
          if (!c.empty() && oracle[c] >= min_docs) {
            ++dropped;
            dropped_bytes += c.size();
          } else {
            kept_bytes += c.size();
            kept_text += line + (newline ? "\n" : "");
          }
          start = end + 1;
        }
        const bool whole = dropped == 0 || 10 * dropped_bytes > 9 * (dropped_bytes + kept_bytes);
        if (!whole) expected_total += dropped;
        EXPECT_EQ(filter.Strip(text, &dropped_total), whole ? text : kept_text) << text;
        // StripInto: no copy of a text kept whole, else Strip's text.
        EXPECT_EQ(filter.StripInto(text, &into, &into_total), !whole) << text;
        if (!whole) {
          EXPECT_EQ(into, kept_text) << text;
        }
      }
      EXPECT_EQ(dropped_total, expected_total);
      EXPECT_EQ(into_total, expected_total);
    }
  }
}

TEST(BoilerplateTest, OffLeavesTextAlone) {
  // Pages with text of their own (different groups) share the footer.
  LineCounter counter;
  for (int i = 0; i < 30; ++i) {
    std::string page = "footer";
    for (int l = 0; l < 6; ++l) page += "\nbody " + std::to_string(i) + " " + std::to_string(l);
    counter.Add(page);
  }
  const LineStats stats = std::move(counter).Finish();
  ASSERT_GE(stats.Count(KeyOf("footer")), 10u);
  const BoilerplateFilter off(stats, {.mode = BoilerplateMode::kOff, .min_docs = 2});
  EXPECT_EQ(off.flagged_lines(), 0u);
  size_t dropped = 0;
  EXPECT_EQ(off.Strip("footer\nbody 3", &dropped), "footer\nbody 3");
  EXPECT_EQ(dropped, 0u);
  const BoilerplateFilter lines(stats, {.mode = BoilerplateMode::kLines, .min_docs = 10});
  EXPECT_EQ(lines.Strip("footer\nbody 3", &dropped), "body 3");
  EXPECT_EQ(dropped, 1u);
  EXPECT_EQ(lines.Strip("footer", &dropped), "footer");  // nothing of its own: kept whole
  EXPECT_EQ(dropped, 1u);
  // Up to 90 % of the line text is left out ("footer" 6 bytes, "xy" 2)...
  EXPECT_EQ(lines.Strip("footer\nxy", &dropped), "xy");
  EXPECT_EQ(dropped, 2u);
  // ...more is a reprint with a line added, kept whole (54 > 9 * 5).
  const std::string reprint = "footer\nfooter footer footer footer footer footer footer\nfive5";
  LineCounter many;
  for (int i = 0; i < 30; ++i) {
    std::string page = reprint.substr(0, reprint.rfind('\n'));
    for (int l = 0; l < 8; ++l) page += "\nown " + std::to_string(i) + " " + std::to_string(l);
    many.Add(page);
  }
  const LineStats many_stats = std::move(many).Finish();
  ASSERT_GE(many_stats.Count(KeyOf("footer")), 10u);
  const BoilerplateFilter filter(many_stats, {.mode = BoilerplateMode::kLines, .min_docs = 10});
  EXPECT_EQ(filter.Strip(reprint, &dropped), reprint);
  EXPECT_EQ(filter.Strip(reprint + "6", &dropped), "five56");  // 54 <= 9 * 6
  EXPECT_EQ(dropped, 4u);
}

TEST(BoilerplateTest, SaveLoadRoundTripAndCorruptFiles) {
  std::mt19937_64 rng(5);
  LineCounter counter;
  for (const std::string& text : RandomCorpus(rng, 200)) counter.Add(text);
  const LineStats stats = std::move(counter).Finish();
  const std::string dir = MakeTempDir("boilerplate");
  const std::string path = dir + "/lines.bin";
  ASSERT_TRUE(stats.Save(path).ok());
  auto loaded = LineStats::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->documents(), stats.documents());
  EXPECT_EQ(loaded->distinct_lines(), stats.distinct_lines());
  EXPECT_EQ(loaded->Serialize(), stats.Serialize());
  EXPECT_EQ(loaded->Count(KeyOf("SEE ALSO")), stats.Count(KeyOf("see also")));
  EXPECT_GT(stats.Count(KeyOf("see also")), 0u);

  const std::string bytes = ReadFile(path);
  // Every single flipped byte and every truncation is caught.
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    const auto r = LineStats::Deserialize(bad, "flipped");
    EXPECT_FALSE(r.ok()) << i;
  }
  for (size_t n = 0; n < bytes.size(); n += 7) {
    const auto r = LineStats::Deserialize(std::string_view(bytes).substr(0, n), "cut");
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_NE(r.status().message().find("cut"), std::string::npos) << r.status().message();
  }
  WriteFile(dir + "/other.bin", "not a statistics file at all");
  const auto foreign = LineStats::Load(dir + "/other.bin");
  ASSERT_FALSE(foreign.ok());
  EXPECT_TRUE(foreign.status().IsInvalidArgument()) << foreign.status().message();
  std::string tail = bytes;
  tail[tail.size() - 1] ^= 1;
  WriteFile(dir + "/bad.bin", tail);
  const auto corrupt = LineStats::Load(dir + "/bad.bin");
  ASSERT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.status().message().find("checksum"), std::string::npos);
  EXPECT_FALSE(LineStats::Load(dir + "/missing.bin").ok());
  // A version 1 file (document counts, no group tags) reads as those counts.
  std::string v1 = "NDLINES1";
  const auto put = [&](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) v1.push_back(static_cast<char>(v >> (8 * i)));
  };
  put(7, 8);                  // documents
  put(1, 8);                  // entries
  put(KeyOf("see also"), 8);  // key
  put(3, 4);                  // documents containing it
  put(XXH3_64bits(v1.data(), v1.size()), 8);
  const auto old = LineStats::Deserialize(v1, "v1");
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(old->Count(KeyOf("see also")), 3u);
  EXPECT_EQ(old->documents(), 7u);
  // An empty corpus round-trips too.
  EXPECT_TRUE(LineStats::Deserialize(LineStats().Serialize(), "empty").ok());
}

TEST(BoilerplateTest, MethodKeys) {
  auto m = Method::Parse("chars5u,boilerplate=lines,boilerplate_min_docs=7");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->pipeline.boilerplate.mode, BoilerplateMode::kLines);
  EXPECT_EQ(m->pipeline.boilerplate.min_docs, 7);
  auto again = Method::Parse(m->ToString());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *m);
  EXPECT_EQ(again->pipeline.boilerplate.min_docs, 7);
  EXPECT_NE(m->Difference(Method::Default()).find("boilerplate"), std::string::npos);
  // Off is not written: the text form of every method without it is unchanged.
  EXPECT_EQ(Method::Default().ToString().find("boilerplate"), std::string::npos);
  EXPECT_EQ(*Method::Parse("chars5u,boilerplate=off"), Method::Default());
  EXPECT_FALSE(Method::Parse("chars5,boilerplate=pages").ok());
  EXPECT_FALSE(Method::Parse("chars5,boilerplate=lines,boilerplate_min_docs=1").ok());
}

// Random "page-specific" text of `n` characters from a small alphabet of
// Chinese characters.
std::string RandomBody(std::mt19937_64& rng, int n) {
  static const char* kChars[] = {"的", "文", "件", "目", "录", "显", "示", "输", "出", "行",
                                 "选", "项", "参", "数", "列", "表", "名", "称", "用", "法"};
  std::string s;
  for (int i = 0; i < n; ++i) {
    s += kChars[rng() % 20];
    if (i % 40 == 39) s += '\n';
  }
  return s;
}

// With a normalizer, a line in Traditional and its Simplified version are one
// line: 3 zh_CN and 2 zh_TW documents reach min_docs = 5 together, and the
// line is left out of both scripts alike. Without one, neither count does.
TEST(BoilerplateTest, NormalizedKeysCountBothScriptsAsOneLine) {
  NormalizeOptions n;
  n.t2s = "tw2sp2";
  auto normalizer = Normalizer::Create(n);
  ASSERT_TRUE(normalizer.ok()) << normalizer.status().ToString();
  const std::string cn = "页面由中文 man 手册页计划提供";
  const std::string tw = "頁面由中文 man 手冊頁計劃提供";
  ASSERT_NE(DocumentLineKeys(cn), DocumentLineKeys(tw));
  ASSERT_EQ(DocumentLineKeys(cn, normalizer->get()), DocumentLineKeys(tw, normalizer->get()));
  std::vector<std::string> docs;
  for (int i = 0; i < 5; ++i) {
    docs.push_back("正文 " + std::to_string(i) + "\n" + (i < 3 ? cn : tw));
  }
  LineCounter raw, normalized;
  for (const std::string& d : docs) {
    raw.Add(d);
    normalized.Add(d, normalizer->get());
  }
  const LineStats raw_stats = std::move(raw).Finish();
  const LineStats stats = std::move(normalized).Finish();
  const BoilerplateOptions options{.mode = BoilerplateMode::kLines, .min_docs = 5};
  const BoilerplateFilter raw_filter(raw_stats, options);
  const BoilerplateFilter filter(stats, options, normalizer->get());
  EXPECT_EQ(raw_filter.flagged_lines(), 0u);
  EXPECT_EQ(filter.flagged_lines(), 1u);
  for (size_t i = 0; i < docs.size(); ++i) {
    size_t dropped = 0;
    EXPECT_EQ(filter.Strip(docs[i], &dropped), "正文 " + std::to_string(i) + "\n");
    EXPECT_EQ(dropped, 1u);
    EXPECT_EQ(raw_filter.Strip(docs[i], nullptr), docs[i]);
  }
}

TEST(BoilerplateTest, FrequentFooterNoLongerMakesPagesNearDuplicates) {
  // chars5 (count weights, the default until 2026-11-23): a footer repeated
  // in every page outweighs the page's own text. (Under chars5u's uniform
  // weights this footer alone leaves the pages 40 bits apart.)
  auto method = Method::Parse("chars5");
  ASSERT_TRUE(method.ok());
  auto pipeline = Pipeline::Create(method->pipeline);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().message();
  const int k = method->default_k;
  std::mt19937_64 rng(3);
  std::string footer;
  for (int i = 0; i < 12; ++i)
    footer += "\n本页面中文版由中文 man 手册页计划提供。第 " + std::to_string(i) + " 行";
  // 30 short pages with one long footer; page 0 has a near copy.
  std::vector<std::string> pages;
  for (int i = 0; i < 30; ++i) pages.push_back(RandomBody(rng, 60) + footer);
  std::string copy = pages[0];
  copy.replace(0, 3, "名");  // one character changed
  pages.push_back(copy);

  LineCounter counter;
  for (const std::string& p : pages) counter.Add(p);
  const LineStats stats = std::move(counter).Finish();
  const BoilerplateFilter off(stats, {.mode = BoilerplateMode::kOff});
  const BoilerplateFilter lines(stats, {.mode = BoilerplateMode::kLines, .min_docs = 5});
  EXPECT_EQ(lines.flagged_lines(), 12u);
  const auto fp = [&](const BoilerplateFilter& f, const std::string& text) {
    return (*pipeline)->Fingerprint(f.Strip(text, nullptr)).fingerprint;
  };
  // Off: the same fingerprints as without any filter, and the footer makes
  // different pages near-duplicates.
  for (const std::string& p : pages) {
    EXPECT_EQ(fp(off, p), (*pipeline)->Fingerprint(p).fingerprint);
  }
  EXPECT_LE(HammingDistance(fp(off, pages[1]), fp(off, pages[2])), k);
  // Lines: different pages are far apart; the true near copy stays within k.
  int within = 0;
  for (int i = 1; i < 30; ++i) {
    for (int j = i + 1; j < 30; ++j)
      within += HammingDistance(fp(lines, pages[i]), fp(lines, pages[j])) <= k;
  }
  EXPECT_EQ(within, 0);
  EXPECT_LE(HammingDistance(fp(lines, pages[0]), fp(lines, pages[30])), k);
}

// English-like text: `words` words drawn from a small vocabulary.
std::string RandomWords(std::mt19937_64& rng, int words) {
  static const char* kWords[] = {"market",  "shares", "company", "said",  "year", "profit",
                                 "bank",    "rates",  "growth",  "the",   "of",   "percent",
                                 "new",     "report", "quarter", "sales", "fell", "rose",
                                 "analyst", "oil",    "price",   "trade", "deal", "board"};
  std::string s;
  for (int i = 0; i < words; ++i) {
    if (i > 0) s += ' ';
    s += kWords[rng() % 24];
    if (rng() % 7 == 0) s += std::to_string(rng() % 1000);
  }
  return s;
}

// One article plus N - 1 variants, each editing one paragraph (a line), among
// unrelated articles that share a footer: the copies' shared paragraphs are
// in N documents but one group, so they stay in the fingerprints, and every
// pair found without boilerplate removal is found with it (counting
// documents, a paragraph in >= 5 copies was left out and pairs were lost).
// The footer, in pages of different text, is still left out.
TEST(BoilerplateTest, GroupOfNearCopiesKeepsItsPairs) {
  auto pipeline = Pipeline::Create(Method::Default().pipeline);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().message();
  const int k = Method::Default().default_k;
  std::mt19937_64 rng(7);
  const std::string footer =
      "\nShare this article\nReuters Markets Newsletter\nAll quotes delayed 15 minutes\n"
      "Terms of use and privacy policy";
  int pairs_off = 0, pairs_lines = 0;
  for (int n = 5; n <= 8; ++n) {
    for (int round = 0; round < 4; ++round) {
      std::vector<std::string> paragraphs;
      for (int p = 0; p < 10; ++p) paragraphs.push_back(RandomWords(rng, 40));
      std::vector<std::string> corpus;
      for (int v = 0; v < n; ++v) {
        std::vector<std::string> mine = paragraphs;
        if (v > 0) {  // variant v edits paragraph v - 1: every fifth word replaced
          std::istringstream in(mine[v - 1]);
          std::string word, edited;
          for (int w = 0; in >> word; ++w) {
            edited += (w > 0 ? " " : "") + (w % 5 == 2 ? RandomWords(rng, 1) : word);
          }
          mine[v - 1] = edited;
        }
        std::string text;
        for (const std::string& p : mine) text += p + "\n";
        corpus.push_back(text + footer);
      }
      for (int u = 0; u < 20; ++u) {
        std::string text;
        for (int p = 0; p < 10; ++p) text += RandomWords(rng, 40) + "\n";
        corpus.push_back(text + footer);
      }
      LineCounter counter;
      for (const std::string& d : corpus) counter.Add(d);
      const LineStats stats = std::move(counter).Finish();
      const BoilerplateFilter off(stats, {.mode = BoilerplateMode::kOff});
      const BoilerplateFilter lines(stats, {.mode = BoilerplateMode::kLines, .min_docs = 5});
      EXPECT_EQ(lines.flagged_lines(), 4u) << "n = " << n;  // the footer, and only it
      const auto fp = [&](const BoilerplateFilter& f, const std::string& text) {
        return (*pipeline)->Fingerprint(f.Strip(text, nullptr)).fingerprint;
      };
      for (int i = 0; i < n; ++i) {
        for (int j = i + 1; j < n; ++j) {
          const bool found_off = HammingDistance(fp(off, corpus[i]), fp(off, corpus[j])) <= k;
          const bool found_lines = HammingDistance(fp(lines, corpus[i]), fp(lines, corpus[j])) <= k;
          pairs_off += found_off;
          pairs_lines += found_lines;
          EXPECT_TRUE(found_lines || !found_off) << "n = " << n << ", pair " << i << " " << j;
        }
      }
    }
  }
  EXPECT_EQ(pairs_lines, pairs_off);
  EXPECT_GE(pairs_off, 290);  // of 4 * (10 + 15 + 21 + 28) = 296: nearly all are near copies
}

// neardup-mpi's reduction by key range: counts split by key, each range
// merged apart (as the rank owning it does), cut with AtLeast and joined
// again give the one counter's lines at >= min_docs, and Union of the whole
// split gives back every count.
TEST(LineStatsTest, SplitByKeyMergedPerRangeAndUnitedIsTheWholeCount) {
  std::mt19937_64 rng(30);
  std::vector<std::string> corpus;
  for (int d = 0; d < 400; ++d) {
    std::string text;
    for (int l = 0; l < 12; ++l) text += "line " + std::to_string(rng() % 300) + "\n";
    if (d % 3 == 0) text += "shared footer\n";
    corpus.push_back(text);
  }
  LineCounter one, a, b;
  for (size_t i = 0; i < corpus.size(); ++i) {
    one.Add(corpus[i]);
    (i % 3 == 0 ? a : b).Add(corpus[i]);
  }
  const LineStats& whole = one.stats();
  for (size_t parts : {1u, 2u, 3u, 7u}) {
    const std::vector<LineStats> from_a = a.stats().SplitByKey(parts);
    const std::vector<LineStats> from_b = b.stats().SplitByKey(parts);
    ASSERT_EQ(from_a.size(), parts);
    std::vector<LineStats> kept, ranges;
    size_t lines = 0;
    for (size_t p = 0; p < parts; ++p) {
      EXPECT_EQ(from_a[p].documents(), a.stats().documents());
      LineCounter range;
      range.Merge(from_a[p]);
      range.Merge(from_b[p]);
      ranges.push_back(range.stats());
      kept.push_back(range.stats().AtLeast(5));
      lines += range.stats().distinct_lines();
    }
    EXPECT_EQ(lines, whole.distinct_lines()) << parts;
    auto joined = LineStats::Union(kept);
    ASSERT_TRUE(joined.ok()) << joined.status().message();
    EXPECT_EQ(joined->Serialize(), whole.AtLeast(5).Serialize()) << parts;
    auto all = LineStats::Union(ranges);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all->Serialize(), whole.Serialize()) << parts;
  }
  EXPECT_GT(whole.LinesAtLeast(5), 0u);
  EXPECT_EQ(LineStats::KeyPart(0, 4), 0u);
  EXPECT_EQ(LineStats::KeyPart(UINT64_MAX, 4), 3u);
  EXPECT_EQ(LineStats::KeyPart(UINT64_MAX, 1), 0u);
  // Parts that count other documents, or repeat a line, are refused.
  EXPECT_TRUE(LineStats::Union({a.stats(), b.stats()}).status().IsInvalidArgument());
  EXPECT_TRUE(LineStats::Union({whole, whole}).status().IsInvalidArgument());
}

}  // namespace
}  // namespace neardup
