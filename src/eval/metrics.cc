// Copyright 2026 The neardup Authors.
//
// Pair precision / recall / F1, seed 003's dedup rate, ROC AUC with ties.

#include <algorithm>
#include <numeric>
#include <string>

#include "neardup/eval.h"

namespace neardup {

double PairCounts::precision() const {
  const uint64_t predicted = true_positives + false_positives;
  return predicted == 0 ? 1.0
                        : static_cast<double>(true_positives) / static_cast<double>(predicted);
}

double PairCounts::recall() const {
  const uint64_t actual = true_positives + false_negatives;
  return actual == 0 ? 1.0 : static_cast<double>(true_positives) / static_cast<double>(actual);
}

double PairCounts::f1() const {
  const double p = precision();
  const double r = recall();
  return p + r == 0 ? 0 : 2 * p * r / (p + r);
}

size_t LengthBand(size_t chars) {
  size_t band = 0;
  while (band < kLengthBandBounds.size() && chars >= kLengthBandBounds[band]) ++band;
  return band;
}

std::string LengthBandName(size_t band) {
  if (band == 0) return "< " + std::to_string(kLengthBandBounds.front());
  if (band >= kLengthBandBounds.size()) return ">= " + std::to_string(kLengthBandBounds.back());
  return std::to_string(kLengthBandBounds[band - 1]) + "-" +
         std::to_string(kLengthBandBounds[band]);
}

double DedupRate(const std::vector<bool>& truth, const std::vector<bool>& predicted) {
  if (truth.empty()) return 0;
  size_t right = 0;
  for (size_t i = 0; i < truth.size(); ++i) right += truth[i] == predicted[i] ? 1 : 0;
  return static_cast<double>(right) / static_cast<double>(truth.size());
}

Result<double> RocAuc(std::span<const double> scores, const std::vector<bool>& labels) {
  if (scores.size() != labels.size()) {
    return Status::InvalidArgument("RocAuc: scores and labels differ in size");
  }
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  // Sum of the (1-based, tie-averaged) ranks of the positives.
  double positive_rank_sum = 0;
  size_t positives = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]]) ++j;
    const double rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t t = i; t < j; ++t) {
      if (labels[order[t]]) {
        positive_rank_sum += rank;
        ++positives;
      }
    }
    i = j;
  }
  const size_t negatives = scores.size() - positives;
  if (positives == 0 || negatives == 0) {
    return Status::InvalidArgument("RocAuc: needs at least one positive and one negative");
  }
  const double p = static_cast<double>(positives);
  const double u = positive_rank_sum - p * (p + 1) / 2;
  return u / (p * static_cast<double>(negatives));
}

}  // namespace neardup
