// Copyright 2026 The neardup Authors.
//
// neardup calibrate: for a user's own unlabelled corpus, the distribution of
// nearest-neighbour distances and of pair distances, sampled pairs side by
// side with their exact 5-gram Jaccard, and a recommended threshold with its
// reasoning, as a self-contained HTML page and as JSON (doc/calibration.md).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <random>

#include "calibrate.h"
#include "common.h"
#include "dedup_stages.h"
#include "neardup/dedup.h"
#include "neardup/minhash_dedup.h"
#include "neardup/parallel.h"

namespace neardup::cli {
namespace {

using calibrate::Report;
using calibrate::SamplePair;

struct CalibrateFlags {
  InputFlags input;
  PipelineFlags pipeline;
  BoilerplateFlags boilerplate;
  int k = -1;  // -1: bits / 4 (SimHash), 70 % of num_perm (MinHash)
  size_t sample = 2000;
  uint64_t seed = 1;
  size_t pairs_per_distance = 4;
  double recall = 0.99;
  bool banded = false;
  double verify_jaccard = DedupJobOptions{}.verify_jaccard;  // verified pairs, as dedup's
  size_t verify_short_features = DedupJobOptions{}.verify_short_features;
  double verify_short_jaccard = DedupJobOptions{}.verify_short_jaccard;
  uint64_t max_held_bytes = uint64_t{256} << 20;
  double min_jaccard = 0.5;
  double min_share = 0.9;
  size_t show_chars = 3000;
  std::string json;
};

// A character diff stops at this many insertions and deletions (doc/calibration.md).
constexpr size_t kMaxDiffEdits = 2000;

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Up to `per_distance` pairs per distance, uniform among the pairs offered
// (reservoir sampling), reproducible from the seed and the order of offers.
class PairReservoir {
 public:
  PairReservoir(int max_k, size_t per_distance, uint64_t seed)
      : per_distance_(per_distance),
        rng_(seed),
        seen_(static_cast<size_t>(max_k) + 1),
        kept_(static_cast<size_t>(max_k) + 1) {}

  void Offer(size_t a, size_t b, int d) {
    const size_t t = seen_[static_cast<size_t>(d)]++;
    auto& kept = kept_[static_cast<size_t>(d)];
    if (t < per_distance_) {
      kept.emplace_back(a, b);
    } else {
      const uint64_t r = rng_() % (t + 1);
      if (r < per_distance_) kept[r] = {a, b};
    }
  }
  const std::vector<uint64_t>& histogram() const { return seen_; }
  const std::vector<std::vector<std::pair<size_t, size_t>>>& kept() const { return kept_; }

 private:
  size_t per_distance_;
  std::mt19937_64 rng_;
  std::vector<uint64_t> seen_;
  std::vector<std::vector<std::pair<size_t, size_t>>> kept_;
};

// `count` of the positions `from`, drawn without replacement (a partial
// Fisher-Yates shuffle), sorted; all of them when count >= from.size().
std::vector<size_t> Sample(std::vector<size_t> from, size_t count, uint64_t seed) {
  if (count >= from.size()) return from;
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < count; ++i) {
    const size_t j = i + static_cast<size_t>(rng() % (from.size() - i));
    std::swap(from[i], from[j]);
  }
  from.resize(count);
  std::sort(from.begin(), from.end());
  return from;
}

// The Jaccard evidence behind the recommendation in words (calibrate.h,
// Recommend): up to which distance sampled pairs still pass the 5-gram
// Jaccard check, from which they fail, and whether the recommendation is the
// top of the scan (a larger threshold was not tried). `limit`: the largest
// -k the method takes.
std::string EvidenceWords(const calibrate::Report& report, int limit) {
  const calibrate::Recommendation& r = report.recommendation;
  std::string w;
  if (!r.has_pairs) {
    w = "no pair was sampled within the scan: the histogram's valley";
  } else {
    char share[64];
    std::snprintf(share, sizeof share, "%.0f %% of the sampled pairs reach Jaccard %.2f",
                  100 * report.min_share, report.min_jaccard);
    w = r.passing >= 0
            ? "passing d = " + std::to_string(r.passing) + ": the largest distance where " + share
            : "no distance where " + std::string(share);
    w += r.failing >= 0 ? "; failing d = " + std::to_string(r.failing) +
                              ": the first distance above it where they do not"
                        : "; none fails up to the scan's top, d = " + std::to_string(report.max_k);
  }
  if (r.k == report.max_k) {
    w += "; the recommendation is the top of the scan: a larger threshold was not tried";
    if (report.max_k < limit) w += " (rerun with -k up to " + std::to_string(limit) + ")";
  }
  return w;
}

int RunCalibrate(CalibrateFlags flags) {
  const auto start = std::chrono::steady_clock::now();
  if (flags.input.inputs.empty()) flags.input.inputs = {"-"};
  // Configured, read and fingerprinted exactly as dedup does (dedup_stages.h).
  DedupFlags dedup_flags;
  dedup_flags.input = flags.input;
  dedup_flags.pipeline = flags.pipeline;
  dedup_flags.boilerplate = flags.boilerplate;
  dedup_flags.banded = flags.banded;
  dedup_flags.recall = flags.recall;
  dedup_flags.verify_jaccard = flags.verify_jaccard;
  dedup_flags.verify_short_features = flags.verify_short_features;
  dedup_flags.verify_short_jaccard = flags.verify_short_jaccard;
  // The scan is of distances within max_k: the short-document rule (pairs
  // whatever their distance) is not part of it.
  dedup_flags.short_features = "0";
  auto resolved = ResolveDedupConfig(std::move(dedup_flags));
  if (!resolved.ok()) return Fail(resolved.status());
  DedupConfig& config = **resolved;
  flags.pipeline = config.flags.pipeline;
  const Method* method = &config.method;
  const Pipeline* pipeline = config.pipeline;
  const auto* read_options = &config.read_options;
  const bool minhash = config.minhash;
  const int max_distance = minhash ? method->minhash.num_perm : method->pipeline.bits;
  const int limit = minhash ? max_distance - 1 : max_distance / 4;
  const int max_k = flags.k >= 0 ? flags.k
                    : minhash    ? static_cast<int>(std::floor(0.7 * max_distance))
                                 : limit;
  if (max_k > limit) {
    return Fail(Status::InvalidArgument(
        minhash ? "-k " + std::to_string(max_k) + " is out of range: it must be between 0 and " +
                      std::to_string(limit) +
                      " because the minhash method's distance counts "
                      "the unequal components of its " +
                      std::to_string(max_distance) +
                      " signature components (num_perm), and at "
                      "num_perm every pair is within it"
                : KRangeMessage(max_k, max_distance)));
  }
  if (flags.sample < 1) return Fail(Status::InvalidArgument("--sample must be at least 1"));
  if (!(flags.recall > 0 && flags.recall < 1)) {
    return Fail(Status::InvalidArgument("--recall must be between 0 and 1 (exclusive)"));
  }
  NEARDUP_RETURN_IF_ERROR_CLI(CheckInputsAndOutputs(
      flags.input.inputs, {flags.input.output, flags.json, flags.boilerplate.stats_out}));
  auto out = Output::Open(flags.input.output, flags.input.inputs);
  if (!out.ok()) return Fail(out.status());

  // Pass 0 and 1: boilerplate counts, then fingerprints (signatures).
  NEARDUP_RETURN_IF_ERROR_CLI(CountLines(config, flags.input));
  // The sampled pairs' texts: held from this pass while the corpus is small
  // (or must be: standard input), else read again at the end.
  const bool from_stdin = std::find(flags.input.inputs.begin(), flags.input.inputs.end(), "-") !=
                          flags.input.inputs.end();
  config.hold_text_bytes = from_stdin ? UINT64_MAX : flags.max_held_bytes;
  flags.input.progress = true;
  DedupCorpus corpus;
  const Result<InputStats> stats = FingerprintInputs(config, flags.input, &corpus);
  if (!stats.ok()) return Fail(stats.status());
  const std::vector<DedupDocument>& docs = corpus.docs;
  const std::vector<uint32_t>& signatures = corpus.signatures;
  const std::vector<std::string>& ids = corpus.ids;
  std::vector<std::string>& texts = corpus.texts;
  const bool hold_texts = corpus.texts.size() == docs.size();
  std::vector<Fingerprint> fingerprints;
  if (!minhash) {
    fingerprints.reserve(docs.size());
    for (const DedupDocument& d : docs) fingerprints.push_back(d.fingerprint);
  }
  const MinHasher hasher(minhash ? method->minhash.num_perm : 1);

  Report report;
  report.inputs = flags.input.inputs;
  report.method = method->ToString();
  report.minhash = minhash;
  report.max_distance = max_distance;
  report.max_k = max_k;
  report.method_default_k = minhash ? -1 : flags.pipeline.default_k;
  report.min_jaccard = flags.min_jaccard;
  report.min_share = flags.min_share;
  report.fallback = std::min(max_k, minhash ? max_distance / 2 : flags.pipeline.default_k);
  report.documents = docs.size();
  report.seed = flags.seed;
  report.pairs_per_distance = flags.pairs_per_distance;
  report.boilerplate =
      config.job->strips()
          ? "lines in >= " + std::to_string(method->pipeline.boilerplate.min_docs) +
                " documents left out (" + std::to_string(config.job->boilerplate_lines()) +
                " distinct lines)"
          : "off";
  report.seconds_read = Since(start);

  // Nearest neighbours of the sample, by an exact scan of the corpus.
  const auto nearest_start = std::chrono::steady_clock::now();
  std::vector<size_t> non_empty;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (!docs[i].empty) non_empty.push_back(i);
  }
  report.empty = docs.size() - non_empty.size();
  const size_t np = static_cast<size_t>(hasher.num_perm());
  const auto distance = [&](size_t i, size_t j) -> int {
    if (!minhash) return HammingDistance(fingerprints[i], fingerprints[j]);
    return static_cast<int>(np -
                            EqualComponents({&signatures[i * np], np}, {&signatures[j * np], np}));
  };
  const std::vector<size_t> sample =
      non_empty.size() < 2 ? std::vector<size_t>() : Sample(non_empty, flags.sample, flags.seed);
  report.whole_corpus = sample.size() == non_empty.size() && !sample.empty();
  report.nearest.resize(sample.size());
  ParallelFor(sample.size(), flags.input.threads, [&](size_t s, int) {
    const size_t i = sample[s];
    calibrate::Nearest best{i, i, max_distance + 1};
    for (const size_t j : non_empty) {
      if (j == i) continue;
      const int d = distance(i, j);
      if (d < best.distance) best.neighbour = j, best.distance = d;
    }
    report.nearest[s] = best;
  });
  report.sampled = sample.size();
  report.nn_histogram.assign(static_cast<size_t>(max_distance) + 1, 0);
  for (const auto& n : report.nearest) ++report.nn_histogram[static_cast<size_t>(n.distance)];
  report.seconds_nearest = Since(nearest_start);

  // Every pair within max_k: counted by distance, sampled per distance.
  const auto pairs_start = std::chrono::steady_clock::now();
  PairReservoir reservoir(max_k, flags.pairs_per_distance, flags.seed ^ 0x7061697273ULL);
  DedupOptions options;
  options.threads = ResolveThreadCount(flags.input.threads);
  options.recall = flags.recall;
  Result<DedupResult> joined = DedupResult();
  if (minhash) {
    MinHashOptions mh = method->minhash;
    mh.exact = false;
    // Just below the Jaccard of max_k, so that d = max_k passes the test.
    mh.threshold = 1 - static_cast<double>(max_k) / max_distance - 1e-9;
    auto bands = BandsRowsForRecall(mh.threshold, mh.num_perm, flags.recall);
    if (!bands.ok()) return Fail(bands.status());
    mh.bands = bands->bands;
    mh.rows = bands->rows;
    options.pair_sink = [&](const DedupPair& p) {
      const int d =
          static_cast<int>(std::lround((1 - JaccardOfDistance(p.distance)) * max_distance));
      reservoir.Offer(p.i, p.j, std::min(d, max_k));
    };
    joined = MinHashDedup(docs, signatures, {}, mh, options);
    report.join = "MinHash LSH bands (" + std::to_string(mh.bands) + " bands x " +
                  std::to_string(mh.rows) + " rows)";
    report.join_recall = MinHashCandidateProbability(mh.threshold, mh.bands, mh.rows);
  } else {
    // The job's join at max_k: pairs verified as dedup verifies them.
    joined = config.job->Join(
        corpus, [&](const DedupPair& p) { reservoir.Offer(p.i, p.j, p.distance); }, {}, max_k);
    if (joined.ok() && joined->join.banded) {
      const SimHashBands& b = joined->join.bands;
      report.join = "a banded join, r = " + std::to_string(b.band_bits) +
                    " bits, L = " + std::to_string(b.bands) + " bands, seed " +
                    std::to_string(b.seed);
      report.join_recall = b.recall_at_k;
    } else {
      report.join = "an exact join (permuted tables)";
    }
    if (joined.ok() && config.job->verifies()) {
      char verified[160];
      std::snprintf(verified, sizeof verified,
                    "; pairs verified as dedup verifies them (estimated Jaccard >= %g): %zu "
                    "dropped",
                    config.job->dedup_options().verify_jaccard, joined->join.rejected);
      report.join += verified;
    }
  }
  if (!joined.ok()) return Fail(joined.status());
  report.pair_histogram = reservoir.histogram();
  report.seconds_pairs = Since(pairs_start);

  // The sampled pairs' texts (read again unless held), Jaccard and diff.
  const auto samples_start = std::chrono::steady_clock::now();
  for (int d = 0; d <= max_k; ++d) {
    auto kept = reservoir.kept()[static_cast<size_t>(d)];
    std::sort(kept.begin(), kept.end());
    for (const auto& [a, b] : kept) {
      SamplePair p;
      p.a = a, p.b = b, p.distance = d, p.id_a = ids[a], p.id_b = ids[b];
      report.pairs.push_back(std::move(p));
    }
  }
  if (!hold_texts && !report.pairs.empty()) {
    std::vector<char> needed(docs.size(), 0);
    for (const SamplePair& p : report.pairs) needed[p.a] = needed[p.b] = 1;
    texts.assign(docs.size(), std::string());
    ReadOptions again = *read_options;
    again.on_issue = [](const InputIssue&) {};
    again.keep_records = false;
    auto reader = DocumentReader::Open(flags.input.inputs, again);
    if (!reader.ok()) return Fail(reader.status());
    Document doc;
    for (size_t i = 0; i < docs.size() && (*reader)->Next(&doc); ++i) {
      if (needed[i]) texts[i] = std::move(doc.text);
    }
  }
  ParallelFor(report.pairs.size(), flags.input.threads, [&](size_t i, int) {
    SamplePair& p = report.pairs[i];
    const std::u32string a = calibrate::CodePoints(pipeline->Normalize(texts[p.a]));
    const std::u32string b = calibrate::CodePoints(pipeline->Normalize(texts[p.b]));
    p.jaccard = calibrate::CharNgramJaccard(a, b, 5);
    p.length_a = a.size(), p.length_b = b.size();
    p.text_a = a.substr(0, flags.show_chars);
    p.text_b = b.substr(0, flags.show_chars);
    p.diff = calibrate::Diff(p.text_a, p.text_b, kMaxDiffEdits, &p.diff_complete);
  });
  std::vector<std::vector<double>> jaccard(static_cast<size_t>(max_k) + 1);
  for (const SamplePair& p : report.pairs) {
    jaccard[static_cast<size_t>(p.distance)].push_back(p.jaccard);
  }
  report.recommendation = calibrate::Recommend(report.nn_histogram, jaccard, max_k, report.fallback,
                                               flags.min_jaccard, flags.min_share);
  report.seconds_samples = Since(samples_start);
  report.seconds_total = Since(start);

  (*out)->Write(calibrate::RenderHtml(report));
  NEARDUP_RETURN_IF_ERROR_CLI((*out)->Close());
  if (!flags.json.empty()) {
    auto json = Output::Open(flags.json, flags.input.inputs);
    if (!json.ok()) return Fail(json.status());
    (*json)->Write(calibrate::ToJson(report, ids)
                       .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
                   "\n");
    NEARDUP_RETURN_IF_ERROR_CLI((*json)->Close());
  }
  if (!flags.input.quiet) {
    std::fprintf(stderr,
                 "neardup: calibrate: %zu documents (%zu empty), nearest neighbours of %zu; "
                 "recommended %s (%s); %zu sampled pairs; %.2f s\n",
                 report.documents, report.empty, report.sampled,
                 calibrate::ThresholdWords(report, report.recommendation.k).c_str(),
                 EvidenceWords(report, limit).c_str(), report.pairs.size(), report.seconds_total);
  }
  return InputExitCode(flags.input, *stats);
}

}  // namespace

void AddCalibrateCommand(CLI::App& app, ExitCode* exit_code) {
  auto flags = std::make_shared<CalibrateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Choose the threshold for your own corpus: the nearest-neighbour distance of every "
      "document (or of a seeded sample), the distances of all pairs within -k, sampled pairs "
      "side by side with their exact character 5-gram Jaccard, and a recommended threshold with "
      "its reasoning, as one self-contained HTML page (-o) and as JSON (--json). See "
      "doc/calibration.md.");
  AddInputOptions(cmd, &flags->input);
  AddPipelineOptions(cmd, &flags->pipeline, "nfkc", true);
  AddBoilerplateOptions(cmd, &flags->boilerplate);
  cmd->add_option("-k", flags->k,
                  "Largest distance of the pair histogram, the sampled pairs and the "
                  "recommendation (default: bits / 4, the largest dedup accepts; minhash: "
                  "unequal signature components, default 70 % of num_perm, i.e. estimated "
                  "Jaccard >= 0.3)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--sample", flags->sample,
                  "Find the nearest neighbour of this many documents, drawn with --seed (all "
                  "when the corpus has no more); each is compared with the whole corpus")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", flags->seed, "Seed of the document sample and of the pair samples")
      ->capture_default_str();
  cmd->add_option("--pairs-per-distance", flags->pairs_per_distance,
                  "Sampled pairs shown (and checked by 5-gram Jaccard) per distance")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--recall", flags->recall,
                  "When the pair join is banded (large corpora): the probability of finding a "
                  "pair at distance -k")
      ->capture_default_str();
  AddVerifyOptions(cmd, &flags->verify_jaccard, &flags->verify_short_features,
                   &flags->verify_short_jaccard);
  cmd->add_flag("--banded", flags->banded,
                "SimHash: join the pairs with the banded join even where the exact one is "
                "cheap (default: the cheaper, as dedup chooses)");
  cmd->add_option("--min-jaccard", flags->min_jaccard,
                  "The Jaccard check: a sampled pair with exact character 5-gram Jaccard >= this "
                  "is a near-duplicate by text")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--min-share", flags->min_share,
                  "The Jaccard check: the recommendation steps down while fewer than this share "
                  "of the sampled pairs at it reach --min-jaccard")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--show-chars", flags->show_chars,
                  "Characters of each text shown (and diffed) per sampled pair")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--max-held-bytes", flags->max_held_bytes,
                  "Hold the texts in memory while fingerprinting when the input files hold no "
                  "more than this many bytes of text (then the sampled pairs need no second "
                  "reading); 0: always read them again. Standard input is always held")
      ->capture_default_str();
  cmd->add_option("--json", flags->json, "Also write the report's numbers as JSON here");
  cmd->callback([flags, exit_code] { exit_code->value = RunCalibrate(*flags); });
}

}  // namespace neardup::cli
