// Copyright 2026 The neardup Authors.
//
// `neardup calibrate`: the report's numbers (nearest-neighbour distances and
// their histogram, the pair histogram, the sampled pairs' distances and exact
// 5-gram Jaccard, the recommended threshold) against a direct brute-force
// computation here: the library's fingerprints compared all against all, the
// Jaccard from std::set of 5-grams, the rule of doc/calibration.md written
// out again. Seeded synthetic corpora with planted near copies, the real
// THUCNews sample, hostile text escaped, usage errors.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "neardup/boilerplate.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "tests/testing/test_util.h"
#include "util/utf8.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ReadFile;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

struct Doc {
  std::string id, text;
};

std::string Utf8Of(uint32_t c) {
  std::string s;
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
  return s;
}

// `bases` random Chinese texts of 300..500 characters from 2,000 characters,
// then `copies` near copies of random bases with 0..2 % of their characters
// replaced; (*planted)[i] is the base of copy i (-1 for a base).
std::vector<Doc> SyntheticCorpus(uint64_t seed, int bases, int copies,
                                 std::vector<int>* planted = nullptr) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint32_t>> texts;
  std::vector<Doc> docs;
  for (int i = 0; i < bases; ++i) {
    std::vector<uint32_t> t(300 + rng() % 201);
    for (auto& c : t) c = 0x4E00 + static_cast<uint32_t>(rng() % 2000);
    texts.push_back(t);
  }
  for (int i = 0; i < copies; ++i) {
    const size_t base = rng() % static_cast<size_t>(bases);
    std::vector<uint32_t> t = texts[base];
    const size_t edits = t.size() * (rng() % 3) / 100;
    if (planted != nullptr) planted->resize(static_cast<size_t>(bases) + i + 1, -1);
    if (planted != nullptr) planted->back() = static_cast<int>(base);
    for (size_t e = 0; e < edits; ++e)
      t[rng() % t.size()] = 0x4E00 + static_cast<uint32_t>(rng() % 2000);
    texts.push_back(t);
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string s;
    for (const uint32_t c : texts[i]) s += Utf8Of(c);
    docs.push_back(
        {i < static_cast<size_t>(bases) ? "d" + std::to_string(i) : "copy" + std::to_string(i), s});
  }
  return docs;
}

std::string Jsonl(const std::vector<Doc>& docs) {
  std::string out;
  for (const Doc& d : docs) out += nlohmann::json({{"id", d.id}, {"text", d.text}}).dump() + "\n";
  return out;
}

// Exact character 5-gram Jaccard of normalized texts (std::set; a text
// shorter than 5 characters is its own gram).
double Jaccard5(const std::string& a, const std::string& b) {
  const auto grams = [](const std::string& s) {
    std::vector<uint32_t> cps;
    utf8::ForEachCodePoint(s, [&](uint32_t c) { return cps.push_back(c), true; });
    std::set<std::vector<uint32_t>> g;
    if (cps.empty()) return g;
    if (cps.size() < 5) {
      g.insert(cps);
      return g;
    }
    for (size_t i = 0; i + 5 <= cps.size(); ++i) g.emplace(cps.begin() + i, cps.begin() + i + 5);
    return g;
  };
  const auto ga = grams(a), gb = grams(b);
  size_t shared = 0;
  for (const auto& x : ga) shared += gb.count(x);
  const size_t all = ga.size() + gb.size() - shared;
  return all == 0 ? 0 : static_cast<double>(shared) / static_cast<double>(all);
}

// The rule of doc/calibration.md, written out again.
int RecommendedK(const std::vector<uint64_t>& h, const std::map<int, std::vector<double>>& jac,
                 int max_k, int fallback, int* passing_out) {
  const int last = static_cast<int>(h.size()) - 1;
  std::vector<double> s(h.size());
  for (int d = 0; d <= last; ++d) {
    const double l = static_cast<double>(h[static_cast<size_t>(d == 0 ? 0 : d - 1)]);
    const double r = static_cast<double>(h[static_cast<size_t>(d == last ? last : d + 1)]);
    s[static_cast<size_t>(d)] = (l + 2.0 * static_cast<double>(h[static_cast<size_t>(d)]) + r) / 4;
  }
  // -1: no pairs sampled at d - 1..d + 1; 0: fails; 1: passes (>= 90 % at Jaccard >= 0.5).
  const auto window = [&](int d) {
    int all = 0, good = 0;
    for (int w = d - 1; w <= d + 1; ++w) {
      if (w < 0 || w > max_k || !jac.count(w)) continue;
      for (const double j : jac.at(w)) all += 1, good += j >= 0.5;
    }
    if (all == 0) return -1;
    return good >= 0.9 * all ? 1 : 0;
  };
  int passing = -1, failing = -1;
  bool any = false;
  for (int d = max_k; d >= 0 && passing < 0; --d) {
    if (window(d) >= 0) any = true;
    if (window(d) == 1) passing = d;
  }
  *passing_out = passing;
  if (!any) return fallback;
  for (int d = passing + 1; d <= max_k && failing < 0; ++d) {
    if (window(d) >= 0) failing = d;
  }
  const int lo = std::max(passing, 0);
  const int hi = std::max(lo, failing >= 0 ? failing - 1 : max_k);
  double lowest = s[static_cast<size_t>(lo)];
  for (int d = lo; d <= hi; ++d) lowest = std::min(lowest, s[static_cast<size_t>(d)]);
  int first = lo;
  while (s[static_cast<size_t>(first)] != lowest) ++first;
  int end = first;
  while (end < hi && s[static_cast<size_t>(end + 1)] == lowest) ++end;
  return (first + end) / 2;
}

struct Oracle {
  std::vector<Fingerprint> fps;
  std::vector<std::string> normalized;
  std::map<std::string, size_t> position;
};

Oracle Fingerprints(const std::vector<Doc>& docs, bool boilerplate) {
  auto pipeline = Pipeline::Create(Method::Default().pipeline);
  EXPECT_TRUE(pipeline.ok());
  LineCounter counter;
  for (const Doc& d : docs) counter.Add(d.text);
  const LineStats stats = std::move(counter).Finish();
  const BoilerplateFilter filter(
      stats, {.mode = boilerplate ? BoilerplateMode::kLines : BoilerplateMode::kOff});
  Oracle o;
  for (size_t i = 0; i < docs.size(); ++i) {
    o.fps.push_back((*pipeline)->Fingerprint(filter.Strip(docs[i].text, nullptr)).fingerprint);
    o.normalized.push_back((*pipeline)->Normalize(docs[i].text));
    o.position[docs[i].id] = i;
  }
  return o;
}

// Checks every number of `report` (JSON) against brute force over `docs`.
void CheckAgainstBruteForce(const nlohmann::json& report, const std::vector<Doc>& docs,
                            bool boilerplate, size_t per_distance) {
  const Oracle o = Fingerprints(docs, boilerplate);
  const size_t n = docs.size();
  const int max_k = report["max_k"].get<int>();
  ASSERT_EQ(max_k, 32);
  ASSERT_EQ(report["documents"].get<size_t>(), n);

  // Nearest neighbours: every listed document's distance and neighbour.
  std::vector<uint64_t> nn(129, 0);
  const auto& listed = report["nearest_neighbour"]["documents"];
  for (const auto& e : listed) {
    const size_t i = o.position.at(e["id"].get<std::string>());
    int best = 1000;
    size_t who = 0;
    for (size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      const int d = HammingDistance(o.fps[i], o.fps[j]);
      if (d < best) best = d, who = j;
    }
    EXPECT_EQ(e["distance"].get<int>(), best) << e;
    EXPECT_EQ(e["nearest"].get<std::string>(), docs[who].id) << e;
    ++nn[static_cast<size_t>(best)];
  }
  EXPECT_EQ(report["nearest_neighbour"]["histogram"].get<std::vector<uint64_t>>(), nn);

  // All pairs within max_k (an exact join at this size).
  ASSERT_EQ(report["pairs"]["recall_at_max_k"].get<double>(), 1.0);
  std::vector<uint64_t> pairs(static_cast<size_t>(max_k) + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const int d = HammingDistance(o.fps[i], o.fps[j]);
      if (d <= max_k) ++pairs[static_cast<size_t>(d)];
    }
  }
  EXPECT_EQ(report["pairs"]["histogram"].get<std::vector<uint64_t>>(), pairs);

  // Sampled pairs: distance, exact Jaccard, how many per distance.
  std::map<int, std::vector<double>> jac;
  std::map<int, size_t> per;
  for (const auto& p : report["pairs"]["samples"]) {
    const size_t a = o.position.at(p["a"].get<std::string>());
    const size_t b = o.position.at(p["b"].get<std::string>());
    const int d = HammingDistance(o.fps[a], o.fps[b]);
    EXPECT_EQ(p["distance"].get<int>(), d) << p;
    const double j = Jaccard5(o.normalized[a], o.normalized[b]);
    EXPECT_NEAR(p["jaccard"].get<double>(), j, 1e-12) << p;
    jac[d].push_back(j);
    ++per[d];
  }
  for (int d = 0; d <= max_k; ++d) {
    EXPECT_EQ(per[d], std::min<uint64_t>(per_distance, pairs[static_cast<size_t>(d)])) << d;
  }

  int passing = 0;
  const int k = RecommendedK(nn, jac, max_k, 24, &passing);
  EXPECT_EQ(report["recommendation"]["passing"].get<int>(), passing);
  EXPECT_EQ(report["recommendation"]["k"].get<int>(), k);
  uint64_t within = 0;
  for (int d = 0; d <= k; ++d) within += nn[static_cast<size_t>(d)];
  EXPECT_EQ(report["recommendation"]["documents_within_k"].get<uint64_t>(), within);
}

struct Report {
  nlohmann::json json;
  std::string html;
};

Report Calibrate(const std::string& name, const std::string& corpus,
                 const std::vector<std::string>& extra) {
  const std::string dir = MakeTempDir(name);
  WriteFile(dir + "/corpus.jsonl", corpus);
  std::vector<std::string> args = {"calibrate", dir + "/corpus.jsonl", "-o", dir + "/report.html",
                                   "--json",    dir + "/report.json",  "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Report run;
  if (r.exit_code != 0) return run;
  run.json = nlohmann::json::parse(ReadFile(dir + "/report.json"));
  run.html = ReadFile(dir + "/report.html");
  return run;
}

TEST(CalibrateCliTest, WholeCorpusMatchesBruteForce) {
  for (const uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    std::vector<int> planted;
    const auto docs = SyntheticCorpus(seed, 120, 30, &planted);
    const Report run =
        Calibrate("calibrate_whole", Jsonl(docs), {"--pairs-per-distance", "3", "--seed", "7"});
    ASSERT_FALSE(run.json.is_null());
    EXPECT_TRUE(run.json["whole_corpus"].get<bool>());
    EXPECT_EQ(run.json["sampled"].get<size_t>(), docs.size());
    CheckAgainstBruteForce(run.json, docs, true, 3);

    // The planted copies are found at the recommendation, unrelated texts
    // are not: every copy's distance to its base is within k, every pair of
    // bases beyond it.
    const Oracle o = Fingerprints(docs, true);
    const int k = run.json["recommendation"]["k"].get<int>();
    int farthest_copy = 0, closest_unrelated = 1000;
    for (size_t i = 0; i < docs.size(); ++i) {
      if (planted[i] >= 0) {
        farthest_copy = std::max(farthest_copy,
                                 HammingDistance(o.fps[i], o.fps[static_cast<size_t>(planted[i])]));
        continue;
      }
      for (size_t j = i + 1; j < 120; ++j) {
        closest_unrelated = std::min(closest_unrelated, HammingDistance(o.fps[i], o.fps[j]));
      }
    }
    EXPECT_GE(k, farthest_copy);
    EXPECT_LT(k, closest_unrelated);
    EXPECT_NE(run.html.find("Recommended: k = " + std::to_string(k)), std::string::npos);
  }
}

// Calibrate joins through the dedup job, so its pairs are verified as
// dedup's are (issue 24): dividend notices of different companies (one
// short template, Jaccard ~0.3) fall within k of each other but are not
// near-duplicates; dedup does not report them, and calibrate's pair
// histogram does not count them, while a lightly edited copy is counted.
TEST(CalibrateCliTest, PairsAreVerifiedAsDedupVerifiesThem) {
  const std::string corpus =
      "{\"id\": \"d0\", \"text\": \"Viraal Holdings\\nAnnual div 2 cts vs 2 cts prior\\nPay "
      "December 19\\nRecord June 11\"}\n"
      "{\"id\": \"d1\", \"text\": \"Trazen Energy\\nSemi-annual div 52 cts vs 52 cts "
      "prior\\nPay December 11\\nRecord June 24\"}\n"
      "{\"id\": \"d2\", \"text\": \"Sabel Group\\nSemi-annual div 51 cts vs 51 cts "
      "prior\\nPay July 9\\nRecord June 16\"}\n"
      "{\"id\": \"d3\", \"text\": \"Aler Bancorp\\nSemi-annual div 24 cts vs 24 cts "
      "prior\\nPay July 9\\nRecord September 10\"}\n"
      "{\"id\": \"copy\", \"text\": \"Viraal Holdings\\nAnnual dividend 2 cts vs 2 cts "
      "prior\\nPay December 19\\nRecord June 11\"}\n";
  const auto count_pairs = [](const nlohmann::json& json) {
    size_t n = 0;
    for (const auto& c : json["pairs"]["histogram"]) n += c.get<size_t>();
    return n;
  };
  const Report off = Calibrate("calibrate_verify_off", corpus, {"--verify-jaccard", "0"});
  ASSERT_FALSE(off.json.is_null());
  ASSERT_GT(count_pairs(off.json), 1u) << "the template no longer falls within k";
  const Report on = Calibrate("calibrate_verify_on", corpus, {});
  ASSERT_FALSE(on.json.is_null());
  EXPECT_EQ(count_pairs(on.json), 1u) << on.json["pairs"].dump();
  ASSERT_EQ(on.json["pairs"]["samples"].size(), 1u);
  const std::string join = on.json["pairs"]["join"].get<std::string>();
  EXPECT_NE(join.find("pairs verified as dedup verifies them (estimated Jaccard >= 0.5): " +
                      std::to_string(count_pairs(off.json) - 1) + " dropped"),
            std::string::npos)
      << join;
}

TEST(CalibrateCliTest, SampleMatchesBruteForceAndIsReproducible) {
  const auto docs = SyntheticCorpus(11, 150, 40);
  const Report a = Calibrate("calibrate_sample", Jsonl(docs),
                             {"--sample", "40", "--seed", "5", "--threads", "1"});
  ASSERT_FALSE(a.json.is_null());
  EXPECT_FALSE(a.json["whole_corpus"].get<bool>());
  EXPECT_EQ(a.json["sampled"].get<size_t>(), 40u);
  EXPECT_EQ(a.json["nearest_neighbour"]["documents"].size(), 40u);
  CheckAgainstBruteForce(a.json, docs, true, 4);

  const Report b = Calibrate("calibrate_sample2", Jsonl(docs),
                             {"--sample", "40", "--seed", "5", "--threads", "3"});
  ASSERT_FALSE(b.json.is_null());
  nlohmann::json ja = a.json, jb = b.json;
  ja.erase("seconds"), jb.erase("seconds"), ja.erase("inputs"), jb.erase("inputs");
  EXPECT_EQ(ja, jb);  // the same seed gives the same report whatever the threads

  // The sampled pairs' texts read again instead of held: the same report.
  const Report reread = Calibrate("calibrate_sample4", Jsonl(docs),
                                  {"--sample", "40", "--seed", "5", "--max-held-bytes", "0"});
  ASSERT_FALSE(reread.json.is_null());
  nlohmann::json jr = reread.json;
  jr.erase("seconds"), jr.erase("inputs");
  EXPECT_EQ(ja, jr);
  const auto pairs_section = [](const std::string& html) {
    const size_t begin = html.find("<h2 id=\"pairs\">");
    return html.substr(begin, html.find("<h2>Timing") - begin);
  };
  EXPECT_EQ(pairs_section(a.html), pairs_section(reread.html));

  const Report c = Calibrate("calibrate_sample3", Jsonl(docs), {"--sample", "40", "--seed", "6"});
  ASSERT_FALSE(c.json.is_null());
  EXPECT_NE(c.json["nearest_neighbour"]["documents"], a.json["nearest_neighbour"]["documents"]);
}

TEST(CalibrateCliTest, BandedJoinStatesItsRecall) {
  const auto docs = SyntheticCorpus(21, 100, 30);
  const Report run = Calibrate("calibrate_banded", Jsonl(docs), {"--banded"});
  ASSERT_FALSE(run.json.is_null());
  const double recall = run.json["pairs"]["recall_at_max_k"].get<double>();
  EXPECT_GE(recall, 0.99);
  EXPECT_LT(recall, 1.0);
  EXPECT_NE(run.json["pairs"]["join"].get<std::string>().find("banded"), std::string::npos);
  EXPECT_NE(run.html.find("found with probability"), std::string::npos);
  // Never a pair beyond what brute force finds; each sample at its distance.
  const Oracle o = Fingerprints(docs, true);
  std::vector<uint64_t> pairs(33, 0);
  for (size_t i = 0; i < docs.size(); ++i) {
    for (size_t j = i + 1; j < docs.size(); ++j) {
      const int d = HammingDistance(o.fps[i], o.fps[j]);
      if (d <= 32) ++pairs[static_cast<size_t>(d)];
    }
  }
  const auto found = run.json["pairs"]["histogram"].get<std::vector<uint64_t>>();
  ASSERT_EQ(found.size(), pairs.size());
  uint64_t all = 0, all_found = 0;
  for (size_t d = 0; d < pairs.size(); ++d) {
    EXPECT_LE(found[d], pairs[d]) << d;
    all += pairs[d], all_found += found[d];
  }
  EXPECT_GE(static_cast<double>(all_found), 0.9 * static_cast<double>(all));
  for (const auto& p : run.json["pairs"]["samples"]) {
    EXPECT_EQ(p["distance"].get<int>(),
              HammingDistance(o.fps[o.position.at(p["a"].get<std::string>())],
                              o.fps[o.position.at(p["b"].get<std::string>())]));
  }
}

TEST(CalibrateCliTest, MinHashDistancesMatchSignatures) {
  const auto docs = SyntheticCorpus(4, 80, 20);
  const Report run =
      Calibrate("calibrate_minhash", Jsonl(docs), {"--method", "minhash", "--boilerplate", "off"});
  ASSERT_FALSE(run.json.is_null());
  auto method = Method::Parse("minhash");
  ASSERT_TRUE(method.ok());
  auto pipeline = Pipeline::Create(method->pipeline);
  ASSERT_TRUE(pipeline.ok());
  const MinHasher hasher(method->minhash.num_perm);
  std::vector<std::vector<uint32_t>> sigs;
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < docs.size(); ++i) {
    sigs.emplace_back(static_cast<size_t>(hasher.num_perm()));
    (*pipeline)->MinHashSignature(hasher, docs[i].text, "", sigs.back().data());
    position[docs[i].id] = i;
  }
  const auto unequal = [&](size_t i, size_t j) {
    int d = 0;
    for (size_t c = 0; c < sigs[i].size(); ++c) d += sigs[i][c] != sigs[j][c];
    return d;
  };
  EXPECT_EQ(run.json["max_distance"].get<int>(), 128);
  EXPECT_EQ(run.json["max_k"].get<int>(), 89);  // estimated Jaccard >= 0.3
  for (const auto& e : run.json["nearest_neighbour"]["documents"]) {
    const size_t i = position.at(e["id"].get<std::string>());
    int best = 1000;
    for (size_t j = 0; j < docs.size(); ++j) {
      if (j != i) best = std::min(best, unequal(i, j));
    }
    EXPECT_EQ(e["distance"].get<int>(), best) << e;
  }
  // Pairs: a banded join, so at most the brute-force count at each
  // distance, and every sampled pair at its true distance.
  std::vector<uint64_t> pairs(90, 0);
  for (size_t i = 0; i < docs.size(); ++i) {
    for (size_t j = i + 1; j < docs.size(); ++j) {
      const int d = unequal(i, j);
      if (d <= 89) ++pairs[static_cast<size_t>(d)];
    }
  }
  const auto found = run.json["pairs"]["histogram"].get<std::vector<uint64_t>>();
  ASSERT_EQ(found.size(), pairs.size());
  for (size_t d = 0; d < found.size(); ++d) EXPECT_LE(found[d], pairs[d]) << d;
  for (const auto& p : run.json["pairs"]["samples"]) {
    EXPECT_EQ(p["distance"].get<int>(), unequal(position.at(p["a"].get<std::string>()),
                                                position.at(p["b"].get<std::string>())));
  }
  const double threshold = run.json["recommendation"]["threshold"].get<double>();
  EXPECT_NE(run.html.find("minhash,threshold="), std::string::npos);
  EXPECT_GT(threshold, 0.0);
  EXPECT_LE(threshold, 1.0);
}

TEST(CalibrateCliTest, HostileTextIsEscaped) {
  // Two near copies full of markup and invalid UTF-8, ids too.
  std::string body = "<script>alert('x')</script><img src=x onerror=alert(1)>&amp; \"q\" ";
  for (int i = 0; i < 30; ++i) body += "正文第" + std::to_string(i) + "句。";
  std::string corpus;
  corpus += "{\"id\": \"<b>one</b>\", \"text\": " + nlohmann::json(body).dump() + "}\n";
  corpus += "{\"id\": \"two&\\\"'\", \"text\": " + nlohmann::json(body + "尾").dump() + "}\n";
  std::string other = "\xff\xfe<svg onload=1>\xc3\x28";
  for (int i = 0; i < 30; ++i) other += "另一篇第" + std::to_string(i) + "段。";
  corpus += "{\"id\": \"three\", \"text\": \"" + other + "\"}\n";
  corpus += "{\"id\": \"four\", \"text\": \"" + other + "尾\"}\n";
  const Report run = Calibrate("calibrate_hostile", corpus, {"--boilerplate", "off"});
  ASSERT_FALSE(run.html.empty());
  EXPECT_EQ(run.html.find("<script"), std::string::npos);
  EXPECT_EQ(run.html.find("<img"), std::string::npos);
  EXPECT_EQ(run.html.find("<b>one"), std::string::npos);
  EXPECT_EQ(run.html.find("<svg onload"), std::string::npos);
  // Nothing external: "http" only in the SVG namespace.
  size_t http = 0, namespaces = 0;
  for (size_t at = run.html.find("http"); at != std::string::npos;
       at = run.html.find("http", at + 1)) {
    ++http;
    namespaces += run.html.compare(at, 26, "http://www.w3.org/2000/svg") == 0;
  }
  EXPECT_EQ(http, namespaces);
  EXPECT_GT(namespaces, 0u);
  EXPECT_NE(run.html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(run.html.find("&lt;b&gt;one&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(run.html.find("two&amp;&quot;&#39;"), std::string::npos);
  EXPECT_TRUE(utf8::IsValid(run.html));
  // The character diff marks the one added character, and only it.
  EXPECT_NE(run.html.find("<ins>尾</ins>"), std::string::npos);
  const size_t legend = run.html.find("<del>red</del>");
  ASSERT_NE(legend, std::string::npos);
  EXPECT_EQ(run.html.find("<del>", legend + 1), std::string::npos);
  EXPECT_NE(run.html.find("\xef\xbf\xbd&lt;svg onload=1&gt;"), std::string::npos);
  ASSERT_EQ(run.json["pairs"]["samples"].size(), 2u);
  std::set<std::string> firsts;
  for (const auto& p : run.json["pairs"]["samples"]) firsts.insert(p["a"].get<std::string>());
  EXPECT_EQ(firsts, (std::set<std::string>{"<b>one</b>", "three"}));
}

TEST(CalibrateCliTest, UsageErrorsExit2) {
  const std::string dir = MakeTempDir("calibrate_usage");
  WriteFile(dir + "/c.jsonl", Jsonl(SyntheticCorpus(1, 5, 1)));
  const std::string in = dir + "/c.jsonl", out = dir + "/r.html";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"calibrate", in, "-o", out, "--sample", "0"},
           {"calibrate", in, "-o", out, "-k", "33"},
           {"calibrate", in, "-o", out, "-k", "-1"},
           {"calibrate", in, "-o", out, "--method", "minhash", "-k", "128"},
           {"calibrate", in, "-o", out, "--min-jaccard", "1.5"},
           {"calibrate", in, "-o", out, "--recall", "1"},
           {"calibrate", in, "-o", out, "--bogus"},
           {"calibrate", in, "-o", in},
       }) {
    const auto r = RunCli(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
  }
  EXPECT_EQ(RunCli({"calibrate", dir + "/missing.jsonl", "-o", out}).exit_code, 1);
}

TEST(CalibrateCliTest, ThucNewsMatchesBruteForce) {
  NEARDUP_REQUIRE_SHARED_DATA(path, "zh_thucnews1000.jsonl");
  std::vector<Doc> docs;
  for (const auto& line : ::neardup::testing::ParseJsonLines(ReadFile(path))) {
    docs.push_back({line["id"].get<std::string>(), line["text"].get<std::string>()});
  }
  ASSERT_EQ(docs.size(), 1000u);
  const auto r = Calibrate("calibrate_thucnews", ReadFile(path), {"--seed", "3"});
  ASSERT_FALSE(r.json.is_null());
  EXPECT_EQ(r.json["sampled"].get<size_t>(), 1000u);
  CheckAgainstBruteForce(r.json, docs, true, 4);
}

}  // namespace
}  // namespace neardup

namespace neardup {
namespace {

// The summary line explains passing and failing d, and says when the
// recommendation is the top of the scan (a larger threshold was not tried).
TEST(CalibrateCliTest, SummaryExplainsTheEvidenceAndTheTopOfTheScan) {
  const auto docs = SyntheticCorpus(1, 120, 30);
  for (const char* max_k : {"2", "24"}) {
    SCOPED_TRACE(max_k);
    const std::string dir = MakeTempDir("calibrate_words");
    WriteFile(dir + "/corpus.jsonl", Jsonl(docs));
    const auto r = RunCli({"calibrate", dir + "/corpus.jsonl", "-o", dir + "/report.html", "--json",
                           dir + "/report.json", "-k", max_k});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto json = nlohmann::json::parse(ReadFile(dir + "/report.json"));
    const auto& rec = json["recommendation"];
    const int passing = rec["passing"].get<int>();
    if (passing >= 0) {
      EXPECT_NE(r.err.find("passing d = " + std::to_string(passing) +
                           ": the largest distance where 90 % of the sampled pairs reach"),
                std::string::npos)
          << r.err;
    }
    const bool top = rec["k"].get<int>() == json["max_k"].get<int>();
    EXPECT_EQ(r.err.find("the recommendation is the top of the scan") != std::string::npos, top)
        << r.err;
    if (top) {
      EXPECT_NE(r.err.find("(rerun with -k up to 32)"), std::string::npos) << r.err;
    }
  }
}

// -k beyond the method's range says why: the fingerprints' width.
TEST(CalibrateCliTest, KRangeNamesTheFingerprintWidth) {
  const auto r = RunCli({"dedup", "--method", "classic", "-k", "20", "-"}, "");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("between 0 and 16 because the method's fingerprints are 64-bit"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--bits 128"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace neardup
