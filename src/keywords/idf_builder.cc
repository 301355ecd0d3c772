// Copyright 2026 The neardup Authors.

#include <cmath>
#include <unordered_set>

#include "neardup/keywords.h"
#include "segment/keyword_candidate.h"

namespace neardup {

Result<IdfFormula> ParseIdfFormula(std::string_view name) {
  if (name == "seed003") return IdfFormula::kSeed003;
  if (name == "seed000") return IdfFormula::kSeed000;
  return Status::InvalidArgument("unknown IDF formula '" + std::string(name) +
                                 "' (expected seed003 or seed000)");
}

std::string_view IdfFormulaName(IdfFormula formula) {
  return formula == IdfFormula::kSeed003 ? "seed003" : "seed000";
}

double IdfValue(IdfFormula formula, uint64_t n, uint64_t df) {
  const auto dn = static_cast<double>(n);
  const auto ddf = static_cast<double>(df);
  if (formula == IdfFormula::kSeed003) return std::log(dn / (ddf + 1));
  return std::log(dn / ddf + 0.01);
}

void DistinctTerms(const Segmenter& segmenter, std::string_view text,
                   std::vector<std::string_view>* out) {
  out->clear();
  std::vector<std::string_view> tokens;
  segmenter.Cut(text, &tokens);
  std::unordered_set<std::string_view> seen;
  for (std::string_view t : tokens) {
    if (!segment::IsKeywordCandidate(t)) continue;
    if (seen.insert(t).second) out->push_back(t);
  }
}

void IdfBuilder::AddDocument(std::string_view text) {
  std::vector<std::string_view> terms;
  DistinctTerms(*segmenter_, text, &terms);
  AddTerms(terms);
}

void IdfBuilder::AddTerms(std::span<const std::string_view> distinct_terms) {
  ++documents_;
  for (std::string_view t : distinct_terms) {
    auto [it, inserted] = index_.try_emplace(std::string(t), order_.size());
    if (inserted) order_.emplace_back(std::string(t), 0);
    ++order_[it->second].second;
  }
}

IdfTable IdfBuilder::Build(IdfFormula formula) const {
  std::vector<std::pair<std::string, double>> entries;
  entries.reserve(order_.size());
  for (const auto& [term, df] : order_) {
    entries.emplace_back(term, IdfValue(formula, documents_, df));
  }
  return IdfTable::FromEntries(entries);
}

}  // namespace neardup
