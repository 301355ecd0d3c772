// Copyright 2026 The neardup Authors.
//
// Natural duplicates: exact character n-gram Jaccard (ShingleSets,
// JaccardJoin) and the evaluation of each method's dedup against it.

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_map>

#include "neardup/eval.h"
#include "neardup/method.h"
#include "neardup/minhash_dedup.h"
#include "util/thread_pool.h"

namespace neardup {

Result<ShingleSets> ShingleSets::Create(int n, const std::string& t2s) {
  if (n < 1 || n > 16) return Status::InvalidArgument("shingle length must be 1..16");
  NormalizeOptions normalize;
  normalize.t2s = t2s;
  normalize.collapse_whitespace = true;
  NEARDUP_ASSIGN_OR_RETURN(auto normalizer, Normalizer::Create(normalize));
  ShingleSets s;
  s.n_ = n;
  s.normalizer_ = std::move(normalizer);
  return s;
}

std::vector<uint64_t> ShingleSets::Of(std::string_view text) const {
  const std::string t = normalizer_->Normalize(text);
  // Byte offsets of the code points (UTF-8 lead bytes), and the end.
  std::vector<size_t> at;
  for (size_t i = 0; i < t.size(); ++i) {
    if ((static_cast<unsigned char>(t[i]) & 0xC0) != 0x80) at.push_back(i);
  }
  at.push_back(t.size());
  std::vector<uint64_t> out;
  const size_t chars = at.size() - 1;
  if (chars == 0) return out;
  const size_t n = std::min(static_cast<size_t>(n_), chars);
  for (size_t c = 0; c + n <= chars; ++c) {
    out.push_back(XXH3_64bits(t.data() + at[c], at[c + n] - at[c]));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::vector<uint64_t>> ShingleSets::OfAll(const std::vector<std::string>& texts,
                                                      int threads) const {
  std::vector<std::vector<uint64_t>> out(texts.size());
  ParallelFor(texts.size(), threads, [&](size_t i, int) { out[i] = Of(texts[i]); });
  return out;
}

namespace {

uint64_t PairKey(size_t a, size_t b) {
  return (static_cast<uint64_t>(std::min(a, b)) << 32) | static_cast<uint64_t>(std::max(a, b));
}

// NaturalEvalReport::truth_largest_cluster: the centre rule over the pairs
// with Jaccard >= truth, documents in input order.
size_t TruthLargestCluster(size_t n, const std::vector<JaccardPair>& pairs, double truth) {
  std::vector<std::vector<size_t>> adjacent(n);
  for (const JaccardPair& p : pairs) {
    if (p.jaccard < truth) continue;
    adjacent[p.a].push_back(p.b);
    adjacent[p.b].push_back(p.a);
  }
  std::vector<char> assigned(n, 0);
  size_t largest = 1;
  for (size_t c = 0; c < n; ++c) {
    if (assigned[c]) continue;
    assigned[c] = 1;
    size_t size = 1;
    for (size_t x : adjacent[c]) {
      if (!assigned[x]) {
        assigned[x] = 1;
        ++size;
      }
    }
    largest = std::max(largest, size);
  }
  return largest;
}

}  // namespace

Result<NaturalEvalReport> EvaluateNatural(const std::vector<EvalDocument>& corpus,
                                          const NaturalEvalOptions& options) {
  if (!(options.natural_jaccard > 0 && options.natural_jaccard <= options.truth_jaccard &&
        options.truth_jaccard <= 1)) {
    return Status::InvalidArgument("need 0 < natural Jaccard <= truth Jaccard <= 1");
  }
  if (corpus.size() >= (size_t{1} << 32)) return Status::InvalidArgument("corpus too large");
  NaturalEvalReport report;
  report.options = options;
  report.documents = corpus.size();
  std::vector<std::string> texts;
  texts.reserve(corpus.size());
  for (const EvalDocument& d : corpus) texts.push_back(d.text);

  NEARDUP_ASSIGN_OR_RETURN(auto shingler, ShingleSets::Create(options.shingle, options.t2s));
  const std::vector<std::vector<uint64_t>> sets = shingler.OfAll(texts, options.threads);
  NEARDUP_ASSIGN_OR_RETURN(auto natural,
                           JaccardJoin(sets, options.natural_jaccard, options.threads));
  for (const JaccardPair& p : natural) {
    ++report.natural_pairs;
    if (p.jaccard >= options.truth_jaccard) ++report.truth_pairs;
  }
  report.truth_largest_cluster = TruthLargestCluster(corpus.size(), natural, options.truth_jaccard);
  const auto jaccard = [&](size_t a, size_t b) { return ExactJaccard(sets[a], sets[b]); };

  std::vector<std::string> specs = options.methods;
  if (specs.empty()) specs.push_back(Method::Default().ToString());
  for (const std::string& spec : specs) {
    // The method as `neardup dedup` runs it (the dedup job): boilerplate
    // lines counted over the corpus (keyed by their normalized form when the
    // method converts scripts), fingerprints, verification, exact join.
    DedupJobOptions job;
    NEARDUP_ASSIGN_OR_RETURN(job.method, Method::Parse(spec));
    if (job.method.pipeline.normalize.t2s.empty()) job.method.pipeline.normalize.t2s = options.t2s;
    job.method_text = spec;
    job.boilerplate = options.boilerplate.mode;
    job.boilerplate_min_docs = options.boilerplate.min_docs;
    job.cluster_rule = options.cluster_rule;
    job.join = DedupJoin::kExact;
    job.verify_jaccard = options.verify_jaccard;
    job.verify_short_features = options.verify_short_features;
    job.verify_short_jaccard = options.verify_short_jaccard;
    job.short_features = options.short_features;
    job.short_jaccard = options.short_jaccard;
    job.short_rule = options.short_rule;
    job.threads = options.threads;
    const bool minhash = job.method.is_minhash();
    NEARDUP_ASSIGN_OR_RETURN(auto run, RunEvalDedupJob(texts, std::move(job)));
    std::sort(run.pairs.begin(), run.pairs.end(), [](const DedupPair& x, const DedupPair& y) {
      return PairKey(x.i, x.j) < PairKey(y.i, y.j);
    });
    const DedupResult& result = run.result;
    NaturalEvalRow row;
    row.method = spec;
    row.cluster_rule = options.cluster_rule;
    row.seconds = run.seconds;
    row.reported = run.pairs.size();
    std::vector<std::pair<double, const DedupPair*>> scored;
    for (const DedupPair& p : run.pairs) {
      const double j = jaccard(p.i, p.j);
      scored.emplace_back(j, &p);
      row.min_jaccard = std::min(row.min_jaccard, j);
      if (j >= options.truth_jaccard) {
        ++row.counts.true_positives;
      } else if (j >= options.natural_jaccard) {
        ++row.near;
      } else {
        ++row.counts.false_positives;
      }
      if (j < options.floor_jaccard) ++row.below_floor;
    }
    row.counts.false_negatives = report.truth_pairs - row.counts.true_positives;
    row.precision = row.counts.precision();
    row.recall = row.counts.recall();
    row.f1 = row.counts.f1();
    PairCounts strict = row.counts, floor = row.counts;
    strict.false_positives = row.reported - row.counts.true_positives;
    floor.false_positives = row.below_floor;
    row.precision_strict = strict.precision();
    row.f1_strict = strict.f1();
    row.precision_floor = floor.precision();
    row.f1_floor = floor.f1();
    std::sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) {
      return x.first != y.first
                 ? x.first < y.first
                 : PairKey(x.second->i, x.second->j) < PairKey(y.second->i, y.second->j);
    });
    for (size_t e = 0; e < scored.size() && e < 5; ++e) {
      const DedupPair& p = *scored[e].second;
      NaturalEvalReport::Example example{report.rows.size(), corpus[p.i].id, corpus[p.j].id,
                                         scored[e].first,    p.distance,     0};
      if (minhash) {
        example.distance = -1;
        example.method_jaccard = JaccardOfDistance(p.distance);
      }
      report.worst.push_back(std::move(example));
    }
    // Clusters.
    std::unordered_map<size_t, size_t> size;
    for (const DedupRecord& r : result.records) ++size[r.cluster];
    uint64_t duplicates = 0, pure = 0;
    for (size_t i = 0; i < result.records.size(); ++i) {
      const DedupRecord& r = result.records[i];
      if (!r.duplicate) continue;
      ++duplicates;
      if (jaccard(i, r.nearest) >= options.natural_jaccard) ++pure;
    }
    for (const auto& [c, s] : size) {
      if (s < 2) continue;
      ++row.clusters;
      row.largest_cluster = std::max(row.largest_cluster, s);
    }
    row.purity = duplicates == 0 ? 1.0 : static_cast<double>(pure) / duplicates;
    report.rows.push_back(std::move(row));
  }
  return report;
}

}  // namespace neardup
