// Copyright 2026 The neardup Authors.
//
// neardup calibrate: what the report is made of and how it is computed
// (doc/calibration.md). cmd_calibrate.cc reads the corpus and fingerprints
// it; this file holds the pure parts, so that they are one thing each:
//
//   - exact character n-gram Jaccard of two texts (the check of a sampled
//     pair, independent of any fingerprint);
//   - a character diff (Myers' O(ND) algorithm with a bound on D) for the
//     side-by-side view of a pair;
//   - the recommended threshold: the low point of the nearest-neighbour
//     histogram between the largest distance whose sampled pairs are
//     near-duplicates by exact 5-gram Jaccard and the smallest above it
//     whose pairs are not (Recommend below);
//   - the report as self-contained HTML (inline SVG, no script) and as JSON.
//
// Distances are integers whatever the method: the Hamming distance for
// SimHash (0..bits), and for MinHash the number of unequal signature
// components, num_perm - equal (0..num_perm; estimated Jaccard = 1 -
// d / num_perm).
//
// Thread safety: pure functions.

#ifndef NEARDUP_TOOLS_NEARDUP_CALIBRATE_H_
#define NEARDUP_TOOLS_NEARDUP_CALIBRATE_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace neardup::cli::calibrate {

// The code points of `s`; an invalid byte becomes U+FFFD.
std::u32string CodePoints(std::string_view s);
// The UTF-8 encoding of code points (as CodePoints gives them).
std::string Utf8(std::u32string_view s);

// |A & B| / |A | B| where A and B are the sets of distinct n-grams of n
// consecutive code points of a and b (compared as code points, not hashed:
// exact). A non-empty text shorter than n has one n-gram, itself. 0 when
// both sets are empty. REQUIRES: n >= 1.
double CharNgramJaccard(std::u32string_view a, std::u32string_view b, int n);

// A run of the diff: equal in both, only in a (deleted) or only in b
// (inserted); [a_begin, a_end) of a and [b_begin, b_end) of b (one of the
// two is empty unless kind is kEqual).
struct DiffRun {
  enum Kind { kEqual, kOnlyA, kOnlyB };
  Kind kind = kEqual;
  size_t a_begin = 0, a_end = 0, b_begin = 0, b_end = 0;
};

// A shortest edit script from a to b as runs (Myers 1986), after the common
// prefix and suffix are taken off. When it needs more than max_edits
// insertions and deletions, the middle (between prefix and suffix) is one
// kOnlyA and one kOnlyB run and *complete is false (memory and time stay
// O((N + M) max_edits)).
std::vector<DiffRun> Diff(std::u32string_view a, std::u32string_view b, size_t max_edits,
                          bool* complete);

// The rule of doc/calibration.md, on integer distances.
struct Recommendation {
  int k = 0;  // the recommended threshold
  // The Jaccard evidence: window_share[d] is the share of the sampled pairs
  // at d - 1, d and d + 1 with Jaccard >= the bar, or -1 when there are none.
  std::vector<double> window_share;
  bool has_pairs = false;  // some pair was sampled
  int passing = -1;        // the largest d <= max_k whose window passes (-1: none)
  int failing = -1;        // the smallest d > passing whose window fails (-1: none up to max_k)
  // The valley: the lowest run of the smoothed histogram in [lo, hi].
  int lo = 0, hi = 0;
  int valley_run_begin = 0, valley_run_end = 0;
  int duplicate_mode = 0;   // argmax of the smoothed histogram over [0, k]
  int background_mode = 0;  // argmax of the smoothed histogram over [k + 1, end]
};

// The histogram smoothed by the kernel (1, 2, 1) / 4; a missing neighbour
// at either end counts as the value itself.
std::vector<double> Smooth(const std::vector<uint64_t>& histogram);

// The median of `values` (the mean of the middle two for an even count);
// REQUIRES: non-empty.
double Median(std::vector<double> values);

// The share of `values` >= bar; 0 for none.
double ShareAtLeast(const std::vector<double>& values, double bar);

// nn_histogram[d]: sampled documents whose nearest neighbour is at distance
// d (size = largest distance + 1). jaccard[d]: the 5-gram Jaccard of the
// sampled pairs at distance d (size max_k + 1, may be empty at d). The rule
// (ties: the smallest d):
//   1. window_share[d] over the pairs sampled at d - 1, d, d + 1; a window
//      passes when its share >= min_share.
//   2. passing: scanning d = max_k, max_k - 1, ..., 0 and skipping windows
//      without pairs, the first that passes; failing: the smallest d above
//      passing whose window has pairs (all of them fail).
//   3. lo = max(passing, 0), hi = failing - 1 (max_k when none fails). With
//      s = Smooth(nn_histogram), k is the middle of the first run of equal
//      minima of s over [lo, hi]: the valley between the duplicates (below
//      passing, by Jaccard) and the rest.
//   4. No pair sampled at all: k = fallback.
// REQUIRES: nn_histogram non-empty, 0 <= max_k < nn_histogram.size(),
// 0 <= fallback <= max_k.
Recommendation Recommend(const std::vector<uint64_t>& nn_histogram,
                         const std::vector<std::vector<double>>& jaccard, int max_k, int fallback,
                         double min_jaccard, double min_share);

// `s` for HTML text and attribute values: & < > " ' escaped, an invalid
// byte and a control character other than tab, line feed and carriage
// return replaced by U+FFFD.
std::string HtmlEscape(std::string_view s);

// One sampled pair of the report.
struct SamplePair {
  size_t a = 0, b = 0;  // input positions, a < b
  std::string id_a, id_b;
  int distance = 0;
  double jaccard = 0;                 // exact character 5-gram Jaccard
  std::u32string text_a, text_b;      // normalized, at most the shown length
  size_t length_a = 0, length_b = 0;  // code points of the whole normalized texts
  std::vector<DiffRun> diff;          // of text_a and text_b
  bool diff_complete = true;
};

// One sampled document and its nearest neighbour.
struct Nearest {
  size_t doc = 0;
  size_t neighbour = 0;  // the smallest position among the closest
  int distance = 0;
};

struct Report {
  std::vector<std::string> inputs;
  std::string method;  // text form
  bool minhash = false;
  int max_distance = 0;       // bits (SimHash) or num_perm (MinHash)
  int max_k = 0;              // the pairs' bound and the largest recommendation
  int method_default_k = -1;  // SimHash: the method's k; -1 for MinHash
  double min_jaccard = 0.5;   // the Jaccard check's bar
  double min_share = 0.9;     // the share of sampled pairs that must reach it
  int fallback = 0;           // the valley when the histogram has none
  size_t documents = 0;       // read
  size_t empty = 0;           // without features (never compared)
  size_t sampled = 0;         // documents whose nearest neighbour was found
  bool whole_corpus = false;  // the sample is every non-empty document
  uint64_t seed = 0;
  size_t pairs_per_distance = 0;
  std::vector<uint64_t> nn_histogram;    // size max_distance + 1
  std::vector<uint64_t> pair_histogram;  // size max_k + 1: pairs of documents at d
  std::vector<Nearest> nearest;          // one per sampled document
  // The pair join: "exact" or a description of the banded join, and the
  // probability that a pair at distance max_k is found.
  std::string join;
  double join_recall = 1;
  std::vector<SamplePair> pairs;  // sorted by distance, then (a, b)
  Recommendation recommendation;
  std::string boilerplate;  // the boilerplate setting, in words
  double seconds_read = 0, seconds_nearest = 0, seconds_pairs = 0, seconds_samples = 0,
         seconds_total = 0;
};

// The threshold in the method's own terms: "k = 12" or "threshold = 0.8125".
std::string ThresholdWords(const Report& report, int distance);
// The reasoning behind report.recommendation, one paragraph per element.
std::vector<std::string> Reasoning(const Report& report);

// The whole report as one HTML page.
std::string RenderHtml(const Report& report);
// The same numbers as JSON; report.nearest's positions are named by ids[].
nlohmann::ordered_json ToJson(const Report& report, const std::vector<std::string>& ids);

}  // namespace neardup::cli::calibrate

#endif  // NEARDUP_TOOLS_NEARDUP_CALIBRATE_H_
