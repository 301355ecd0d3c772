// Copyright 2026 The neardup Authors.
//
// neardup/dedup_over_ranks.h: a dedup job's join split into the pieces a run
// over several processes spreads (band ranges, exchanged band buckets, one
// process), run here in one process the way neardup-mpi runs them over its
// ranks, gives the records of DedupJob::Join, for every method, through one
// interface (the test has no SimHash-versus-MinHash branch either).

#include "neardup/dedup_over_ranks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "neardup/dedup_job.h"
#include "neardup/document_pass.h"
#include "neardup/pipeline.h"

namespace neardup {
namespace {

// Near copies (a word changed), exact copies and empty documents among
// unrelated ones.
std::shared_ptr<const std::vector<Document>> Corpus() {
  std::mt19937_64 rng(23);
  const auto word = [&rng] {
    std::string w;
    for (int c = 0; c < 6; ++c) w += static_cast<char>('a' + rng() % 26);
    return w;
  };
  auto docs = std::make_shared<std::vector<Document>>();
  for (int i = 0; i < 240; ++i) {
    Document d;
    d.id = "d" + std::to_string(i);
    if (i % 37 == 5) {
      docs->push_back(d);  // empty
      continue;
    }
    if (i >= 3 && i % 4 == 3) {
      d.text = (*docs)[static_cast<size_t>(i - 3)].text;
      if (i % 8 == 3 && !d.text.empty()) d.text.replace(0, 6, word());  // a near copy
    } else {
      for (int w = 0; w < 60; ++w) d.text += word() + " ";
    }
    docs->push_back(std::move(d));
  }
  return docs;
}

// DedupJob::Run keeps only the line counts the boilerplate filter reads
// unless keep_line_stats (--boilerplate-stats-out) asks for all of them; the
// records are the same either way.
TEST(DedupJobTest, RunKeepsTheFrequentLinesOnlyUnlessAskedForAll) {
  auto docs = std::make_shared<std::vector<Document>>(*Corpus());
  for (size_t i = 0; i < docs->size(); ++i) {
    // A line in every third document (boilerplate at min_docs 5), and one
    // line of each document's own.
    Document& d = (*docs)[i];
    if (d.text.empty()) continue;
    d.text = "line " + std::to_string(i) + "\n" + d.text;
    if (i % 3 == 0) d.text += "\nSubscribe to our newsletter";
  }
  std::vector<std::string> records[2];
  size_t distinct[2] = {0, 0};
  for (const bool keep : {false, true}) {
    DedupJobOptions o;
    o.threads = 1;
    o.keep_line_stats = keep;
    auto job = DedupJob::Create(o);
    ASSERT_TRUE(job.ok()) << job.status().message();
    DedupJobOutputs outputs;
    outputs.records = [&](std::string_view line) { records[keep].emplace_back(line); };
    auto summary = (*job)->Run(DocumentsInput(docs), outputs);
    ASSERT_TRUE(summary.ok()) << summary.status().message();
    EXPECT_EQ(summary->boilerplate_lines, 1u);
    EXPECT_GT(summary->boilerplate_dropped, 50u);
    const LineStats& stats = (*job)->line_stats();
    EXPECT_EQ(stats.documents(), docs->size());
    EXPECT_EQ(stats.LinesAtLeast(5), 1u);
    distinct[keep] = stats.distinct_lines();
  }
  EXPECT_EQ(distinct[0], 1u);
  EXPECT_GT(distinct[1], 200u);
  EXPECT_EQ(records[0], records[1]);
}

// What neardup-mpi makes of the documents over its ranks, in one process.
// sampled: the plan made from the sampled groups' keys only (CreateSampled,
// as neardup-mpi makes it); the pairs of groups found, in *found when not
// null; `forced` (when not null) replaces the job's join options.
// Every record of `got` as in `want` (the one-process job), and the count
// of duplicates.
void ExpectSameRecords(const DedupResult& got, const DedupResult& want) {
  ASSERT_EQ(got.records.size(), want.records.size());
  for (size_t i = 0; i < got.records.size(); ++i) {
    const DedupRecord& g = got.records[i];
    const DedupRecord& w = want.records[i];
    EXPECT_EQ(g.cluster, w.cluster) << "document " << i;
    EXPECT_EQ(g.empty, w.empty) << "document " << i;
    EXPECT_EQ(g.duplicate, w.duplicate) << "document " << i;
    EXPECT_EQ(g.nearest, w.nearest) << "document " << i;
    EXPECT_EQ(g.distance, w.distance) << "document " << i;
    EXPECT_EQ(g.jaccard, w.jaccard) << "document " << i;
  }
  EXPECT_EQ(got.summary.duplicates, want.summary.duplicates);
}

DedupResult JoinInPieces(const DedupJob& job, const DedupCorpus& corpus,
                         DedupJoinPlan::Split* split, bool sampled = false,
                         std::vector<IdPair>* found = nullptr,
                         const DedupOptions* forced = nullptr) {
  const std::vector<DedupDocument>& docs = corpus.docs;
  // Identical documents grouped by the library's key, groups in key order.
  const DocumentKey key = IdentityKeyOf(job, docs, corpus.signatures);
  std::map<std::pair<uint64_t, uint64_t>, std::vector<size_t>> by_key;
  int bits = 0;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (docs[i].empty) continue;
    by_key[key(i)].push_back(i);
    const int b = docs[i].fingerprint.bits();
    bits = bits == 0 || bits == b ? b : 1;
  }
  DedupGroups groups;
  groups.of.assign(docs.size(), SIZE_MAX);
  std::vector<std::pair<uint64_t, uint64_t>> keys;
  for (const auto& [k, members] : by_key) {
    groups.begin.push_back(groups.members.size());
    for (const size_t m : members) {
      groups.of[m] = keys.size();
      groups.members.push_back(m);
    }
    keys.push_back(k);
  }
  groups.begin.push_back(groups.members.size());

  DedupOptions options = forced != nullptr ? *forced : job.dedup_options();
  options.collect_pairs = true;  // the default cluster rule (center) tests every pair
  std::vector<std::pair<uint64_t, std::pair<uint64_t, uint64_t>>> sample;
  for (const uint64_t g : PlanSampleGroups(job, groups.size())) sample.push_back({g, keys[g]});
  auto made = sampled ? DedupJoinPlan::CreateSampled(job, options, groups.size(), sample, bits)
                      : DedupJoinPlan::Create(job, options, groups.size(), keys, bits);
  EXPECT_TRUE(made.ok()) << made.status().message();
  if (!made.ok()) return {};
  DedupJoinPlan& plan = **made;
  *split = plan.split();
  if (sampled && plan.split() == DedupJoinPlan::Split::kNone) plan.SetDistinctKeys(keys);
  const size_t words = SignatureWords(job);
  // A group's signature is its first member's (Finish holds the groups while
  // it asks: the callback reads its own table); the band-key join's, its
  // key's when the method has no signatures (JoinSignatureWords).
  std::vector<size_t> first;
  std::vector<uint32_t> key_signatures;
  for (size_t g = 0; g < groups.size(); ++g) {
    first.push_back(groups.Members(g)[0]);
    AppendKeySignature(keys[g], &key_signatures);
  }
  const auto signature = [&](uint64_t g) {
    return std::span<const uint32_t>(corpus.signatures).subspan(first[g] * words, words);
  };
  const auto join_signature = [&](uint64_t g) {
    if (words > 0) return signature(g);
    return std::span<const uint32_t>(key_signatures).subspan(4 * g, 4);
  };
  std::vector<IdPair> pairs;
  BandJoinStats stats;
  switch (plan.split()) {
    case DedupJoinPlan::Split::kBandRanges: {
      // Three ranges, as three ranks would join them.
      const int b = plan.bands();
      for (const auto& [begin, end] :
           {std::pair(0, b / 3), std::pair(b / 3, 2 * b / 3), std::pair(2 * b / 3, b)}) {
        std::vector<IdPair> range;
        EXPECT_TRUE(plan.JoinBands(options, begin, end, &range, &stats).ok());
        pairs.insert(pairs.end(), range.begin(), range.end());
      }
      break;
    }
    case DedupJoinPlan::Split::kBandKeys: {
      // Each band's buckets, as the exchange forms them.
      BandJoinOptions verify;
      verify.components_only = ComponentsOnly(options);
      for (int band = 0; band < plan.bands(); ++band) {
        std::vector<std::pair<uint64_t, uint64_t>> entries;  // (bucket, group)
        for (uint64_t g = 0; g < groups.size(); ++g) {
          entries.emplace_back(plan.BandBucket(join_signature(g), band), g);
        }
        std::sort(entries.begin(), entries.end());
        for (size_t s = 0; s < entries.size();) {
          size_t e = s + 1;
          while (e < entries.size() && entries[e].first == entries[s].first) ++e;
          std::vector<uint64_t> members;
          for (size_t i = s; i < e; ++i) members.push_back(entries[i].second);
          if (members.size() >= 2) {
            plan.VerifyBucket(members, join_signature, verify, &pairs, &stats);
          }
          s = e;
        }
      }
      break;
    }
    case DedupJoinPlan::Split::kNone:
      EXPECT_TRUE(plan.JoinAll(options, &pairs).ok());
      break;
  }
  MergePairs(&pairs);
  // The short-document rule: the documents that may take part, as ranks
  // gather them (here in reverse order), with their groups and fingerprints.
  size_t short_pairs = 0;
  if (options.short_features > 0 && options.short_rule == ShortRule::kSketch) {
    // The sketch rule: each group's first member's sketch, gathered in
    // reverse order.
    std::vector<JaccardSketch> sketches;
    std::vector<uint64_t> set_groups;
    std::vector<Fingerprint> fingerprints;
    for (size_t i = docs.size(); i-- > 0;) {
      if (docs[i].empty || groups.Members(groups.of[i]).front() != i) continue;
      sketches.push_back(corpus.sketches[i]);
      set_groups.push_back(groups.of[i]);
      fingerprints.push_back(docs[i].fingerprint);
    }
    auto added = AddShortSketchRulePairs(options, sketches, set_groups, fingerprints, &pairs);
    EXPECT_TRUE(added.ok()) << added.status().message();
    if (added.ok()) short_pairs = *added;
  } else if (options.short_features > 0) {
    std::vector<std::vector<uint64_t>> sets;
    std::vector<uint64_t> set_groups;
    std::vector<Fingerprint> fingerprints;
    for (size_t i = docs.size(); i-- > 0;) {
      if (corpus.short_sets[i].empty() || docs[i].empty) continue;
      sets.push_back(corpus.short_sets[i]);
      set_groups.push_back(groups.of[i]);
      fingerprints.push_back(docs[i].fingerprint);
    }
    auto added = AddShortRulePairs(options, sets, set_groups, fingerprints, &pairs);
    EXPECT_TRUE(added.ok()) << added.status().message();
    if (added.ok()) short_pairs = *added;
  }
  if (found != nullptr) *found = pairs;
  DedupResult result;
  result.join = plan.report();
  result.join.short_pairs = short_pairs;
  plan.Finish(docs, &groups, &pairs, signature, corpus.sketches, job.dedup_options(), &result);
  EXPECT_EQ(groups.size(), keys.size()) << "Finish leaves the groups as they were";
  return result;
}

struct Case {
  const char* name;
  DedupJobOptions options;
  DedupJoinPlan::Split split;
  bool sampled = false;  // CreateSampled, as neardup-mpi plans
};

TEST(DedupOverRanksTest, PiecesGiveTheJobsRecordsForEveryMethod) {
  std::vector<Case> cases;
  {
    Case c{"simhash, banded", {}, DedupJoinPlan::Split::kBandRanges};
    c.options.join = DedupJoin::kBanded;
    cases.push_back(c);
  }
  {
    Case c{"simhash, banded, sampled", {}, DedupJoinPlan::Split::kBandKeys, true};
    c.options.join = DedupJoin::kBanded;
    cases.push_back(c);
  }
  {
    Case c{"simhash, exact", {}, DedupJoinPlan::Split::kNone};
    c.options.join = DedupJoin::kExact;
    cases.push_back(c);
  }
  {
    Case c{"simhash, exact, sampled", {}, DedupJoinPlan::Split::kNone, true};
    c.options.join = DedupJoin::kExact;
    cases.push_back(c);
  }
  {
    Case c{"minhash", {}, DedupJoinPlan::Split::kBandKeys};
    auto method = Method::Parse("minhash");
    ASSERT_TRUE(method.ok()) << method.status().message();
    c.options.method = *method;
    c.options.method_text = "minhash";
    cases.push_back(c);
  }
  const auto docs = Corpus();
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    c.options.threads = 1;
    auto job = DedupJob::Create(c.options);
    ASSERT_TRUE(job.ok()) << job.status().message();
    DedupCorpus corpus;
    ASSERT_TRUE((*job)->Fingerprint(DocumentsInput(docs), &corpus).ok());
    auto want = (*job)->Join(corpus);
    ASSERT_TRUE(want.ok()) << want.status().message();
    ASSERT_GT(want->summary.duplicates, 10u) << "the corpus has near and exact copies";

    DedupJoinPlan::Split split = DedupJoinPlan::Split::kNone;
    const DedupResult got = JoinInPieces(**job, corpus, &split, c.sampled);
    EXPECT_EQ(split, c.split);
    ExpectSameRecords(got, *want);
    EXPECT_EQ(got.summary.clusters, want->summary.clusters);
    EXPECT_EQ(got.summary.empty, want->summary.empty);
  }
}

// Short texts: 4 to 9 words (3 to 8 letters each), some with copies that
// have a word changed (beyond k for the shortest), some exact copies.
std::shared_ptr<const std::vector<Document>> ShortCorpus() {
  std::mt19937_64 rng(29);
  const auto word = [&rng] {
    std::string w;
    const size_t letters = 3 + rng() % 6;
    for (size_t c = 0; c < letters; ++c) w += static_cast<char>('a' + rng() % 26);
    return w;
  };
  auto docs = std::make_shared<std::vector<Document>>();
  for (int i = 0; i < 300; ++i) {
    std::vector<std::string> words(4 + rng() % 6);
    for (std::string& w : words) w = word();
    for (int copy = 0; copy < (i % 2 == 0 ? 2 : 1) + (i % 6 == 0 ? 1 : 0); ++copy) {
      if (copy > 0 && i % 4 != 0) words[rng() % words.size()] = word();
      Document d;
      d.id = "s" + std::to_string(i) + "-" + std::to_string(copy);
      for (const std::string& w : words) d.text += w + " ";
      docs->push_back(std::move(d));
    }
  }
  std::shuffle(docs->begin(), docs->end(), rng);
  return docs;
}

// The short-document rule's join on one process over the short documents
// gathered from the ranks (AddShortRulePairs, the entries in any order)
// gives the job's records, with its banded and exact joins; and the job's
// short sets (taken from the fingerprint's pass) are Pipeline::FeatureSet's
// sets of the documents with fewer than short_features / short_jaccard
// features. The sketch rule (AddShortSketchRulePairs, each group's first
// member's sketch, in any order) likewise, with no set kept.
TEST(DedupOverRanksTest, ShortRuleOverRanksGivesTheJobsRecords) {
  const auto docs = ShortCorpus();
  for (const ShortRule rule : {ShortRule::kExact, ShortRule::kSketch}) {
    for (const DedupJoin join : {DedupJoin::kBanded, DedupJoin::kExact}) {
      for (const bool verify : {true, false}) {
        SCOPED_TRACE(std::string(ShortRuleName(rule)) + ", " +
                     (join == DedupJoin::kBanded ? "banded" : "exact") +
                     (verify ? ", verified" : ""));
        DedupJobOptions o;
        o.join = join;
        o.threads = 2;
        o.short_features = 25;
        o.short_rule = rule;
        o.boilerplate = BoilerplateMode::kOff;  // the texts as FeatureSet sees them
        if (!verify) o.verify_jaccard = 0;
        auto job = DedupJob::Create(o);
        ASSERT_TRUE(job.ok()) << job.status().message();
        DedupCorpus corpus;
        ASSERT_TRUE((*job)->Fingerprint(DocumentsInput(docs), &corpus).ok());
        auto pipeline = Pipeline::Create(o.method.pipeline);
        ASSERT_TRUE(pipeline.ok()) << pipeline.status().message();
        const bool sketch = rule == ShortRule::kSketch;
        // The sketch rule keeps no set: the sketches are what it joins.
        ASSERT_EQ(corpus.short_sets.size(), sketch ? 0 : docs->size());
        ASSERT_EQ(corpus.sketches.size(), sketch || verify ? docs->size() : 0);
        size_t kept = 0;
        for (size_t i = 0; i < docs->size(); ++i) {
          std::vector<uint64_t> set;
          (*pipeline)->FeatureSet((*docs)[i].text, "", &set);
          const bool takes_part =
              static_cast<double>(set.size()) < 25 / (*job)->dedup_options().short_jaccard;
          kept += takes_part ? 1 : 0;
          if (sketch) {
            EXPECT_EQ(TakesPartInShortSketchRule((*job)->dedup_options(), corpus.sketches[i]),
                      takes_part && !set.empty())
                << i;
          } else {
            EXPECT_EQ(corpus.short_sets[i], takes_part ? set : std::vector<uint64_t>()) << i;
          }
        }
        EXPECT_GT(kept, 100u);
        EXPECT_LT(kept, docs->size()) << "some documents are too long to take part";
        auto want = (*job)->Join(corpus);
        ASSERT_TRUE(want.ok()) << want.status().message();
        ASSERT_GT(want->join.short_pairs, 5u) << "the rule adds pairs beyond k";

        DedupJoinPlan::Split split = DedupJoinPlan::Split::kNone;
        std::vector<IdPair> found;
        const DedupResult got = JoinInPieces(**job, corpus, &split, true, &found);
        EXPECT_EQ(got.join.short_pairs, want->join.short_pairs);
        EXPECT_TRUE(std::any_of(found.begin(), found.end(), [&](const IdPair& p) {
          return p.distance > (*job)->dedup_options().k;
        }));
        ExpectSameRecords(got, *want);
      }
    }
  }
}

// Each short rule has its own entries: the exact rule's feature sets are
// refused for the sketch rule (not answered with the exact rule's pairs),
// and the sketch rule takes one entry per group (its first member's sketch).
TEST(DedupOverRanksTest, ShortRulesTakeTheirOwnEntries) {
  DedupOptions options;
  options.short_features = 300;
  options.short_rule = ShortRule::kSketch;
  const std::vector<std::vector<uint64_t>> sets = {{1, 2, 3}, {1, 2, 4}};
  const std::vector<uint64_t> groups = {0, 1};
  const std::vector<Fingerprint> fingerprints(2);
  std::vector<IdPair> pairs;
  auto added = AddShortRulePairs(options, sets, groups, fingerprints, &pairs);
  ASSERT_FALSE(added.ok());
  EXPECT_NE(added.status().message().find("sketch"), std::string::npos);
  const std::vector<JaccardSketch> sketches = {MakeJaccardSketch(sets[0]),
                                               MakeJaccardSketch(sets[1])};
  EXPECT_TRUE(AddShortSketchRulePairs(options, sketches, groups, fingerprints, &pairs).ok());
  const std::vector<uint64_t> one_group = {1, 1};
  auto twice = AddShortSketchRulePairs(options, sketches, one_group, fingerprints, &pairs);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("two entries"), std::string::npos);
  options.short_rule = ShortRule::kExact;
  EXPECT_TRUE(AddShortRulePairs(options, sets, groups, fingerprints, &pairs).ok());
  EXPECT_FALSE(AddShortSketchRulePairs(options, sketches, groups, fingerprints, &pairs).ok());
}

// SimHash's join split by band keys (the plan from a sample of the keys,
// BandBucket / VerifyBucket) finds the pairs of SimHashBandJoin over all
// bands (the band-range join, every key in one process): with packed keys
// (at most 32 sampled bits: exact buckets) and hashed ones (more: the top
// bits of the key's hash, BandJoin's buckets), 64- and 128-bit fingerprints.
TEST(DedupOverRanksTest, SimHashBandKeysFindTheBandJoinsPairs) {
  const auto docs = Corpus();
  for (const char* method : {"chars5", "tfidf,bits=64"}) {
    DedupJobOptions o;
    auto m = Method::Parse(method);
    ASSERT_TRUE(m.ok()) << m.status().message();
    o.method = *m;
    o.method_text = method;
    o.threads = 1;
    auto job = DedupJob::Create(o);
    ASSERT_TRUE(job.ok()) << job.status().message();
    DedupCorpus corpus;
    ASSERT_TRUE((*job)->Fingerprint(DocumentsInput(docs), &corpus).ok());
    const int bits = corpus.docs[0].fingerprint.bits();
    for (const int band_bits : {10, 36}) {
      SCOPED_TRACE(std::string(method) + ", band bits " + std::to_string(band_bits));
      DedupOptions forced = (*job)->dedup_options();
      forced.k = bits / 4;
      forced.band_bits = band_bits;
      forced.bands = bits == 64 && band_bits > 32 ? 160 : 24;
      DedupJoinPlan::Split split = DedupJoinPlan::Split::kNone;
      std::vector<IdPair> want, got;
      JoinInPieces(**job, corpus, &split, false, &want, &forced);
      EXPECT_EQ(split, DedupJoinPlan::Split::kBandRanges);
      JoinInPieces(**job, corpus, &split, true, &got, &forced);
      EXPECT_EQ(split, DedupJoinPlan::Split::kBandKeys);
      EXPECT_GE(want.size(), 5u) << "the near copies are found";
      EXPECT_EQ(got, want);
    }
  }
}

TEST(DedupOverRanksTest, SpanningForestConnectsWhatThePairsConnect) {
  const std::vector<IdPair> pairs = {{5, 9, 1}, {1, 2, 0}, {2, 3, 1}, {1, 3, 2}, {9, 12, 0}};
  const std::vector<IdPair> want = {{1, 2, 0}, {2, 3, 1}, {5, 9, 1}, {9, 12, 0}};
  EXPECT_EQ(SpanningForest(pairs), want);
  std::vector<IdPair> merged = {{2, 3, 1}, {1, 2, 0}, {2, 3, 1}};
  MergePairs(&merged);
  EXPECT_EQ(merged, (std::vector<IdPair>{{1, 2, 0}, {2, 3, 1}}));
}

}  // namespace
}  // namespace neardup
