// Copyright 2026 The neardup Authors.

#include "neardup/features.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <unordered_map>

namespace neardup {
namespace {

// True for the code points that carry content: letters (Han included) and digits.
bool IsContentCodePoint(UChar32 c) { return u_isalnum(c) != 0; }

bool HasContent(std::string_view token) {
  int32_t i = 0;
  const auto n = static_cast<int32_t>(token.size());
  while (i < n) {
    UChar32 c;
    U8_NEXT(token.data(), i, n, c);
    if (c >= 0 && IsContentCodePoint(c)) return true;
  }
  return false;
}

// Counts features in order of first occurrence.
class FeatureCounter {
 public:
  void Add(std::string_view feature) {
    auto [it, inserted] = index_.try_emplace(feature, order_.size());
    if (inserted) order_.push_back({std::string(feature), 0});
    order_[it->second].weight += 1;
  }
  std::vector<WeightedFeature>& features() { return order_; }
  double total() const {
    double t = 0;
    for (const WeightedFeature& f : order_) t += f.weight;
    return t;
  }

 private:
  // Keys are the caller's views (into the text being extracted), which outlive
  // the counter; they never point into order_, whose strings move.
  std::unordered_map<std::string_view, size_t> index_;
  std::vector<WeightedFeature> order_;
};

// Keeps the top_k heaviest (stable: ties keep first-occurrence order).
void KeepTop(int top_k, bool sort, std::vector<WeightedFeature>* features) {
  if (sort || (top_k > 0 && features->size() > static_cast<size_t>(top_k))) {
    std::stable_sort(
        features->begin(), features->end(),
        [](const WeightedFeature& a, const WeightedFeature& b) { return a.weight > b.weight; });
  }
  if (top_k > 0 && features->size() > static_cast<size_t>(top_k)) features->resize(top_k);
}

class WordFeatureExtractor final : public FeatureExtractor {
 public:
  WordFeatureExtractor(const FeatureOptions& options, const Segmenter* segmenter,
                       const IdfTable* idf)
      : FeatureExtractor(options), segmenter_(segmenter), keywords_(segmenter, idf) {}

  void Extract(std::string_view text, std::vector<WeightedFeature>* out) const override {
    out->clear();
    if (options().weights == WeightScheme::kTfidf) {
      std::vector<Keyword> keywords;
      keywords_.Extract(text, options().top_k, &keywords);
      out->reserve(keywords.size());
      for (Keyword& k : keywords) out->push_back({std::move(k.word), k.weight});
      return;
    }
    std::vector<std::string_view> words;
    segmenter_->Cut(text, &words);
    FeatureCounter counter;
    for (std::string_view w : words) {
      if (HasContent(w)) counter.Add(w);
    }
    *out = std::move(counter.features());
    if (options().weights == WeightScheme::kUniform) {
      for (WeightedFeature& f : *out) f.weight = 1;
    }
    KeepTop(options().top_k, false, out);
  }

 private:
  const Segmenter* segmenter_;
  KeywordExtractor keywords_;
};

class CharNgramExtractor final : public FeatureExtractor {
 public:
  CharNgramExtractor(const FeatureOptions& options, const IdfTable* idf)
      : FeatureExtractor(options), idf_(idf) {}

  void Extract(std::string_view text, std::vector<WeightedFeature>* out) const override {
    out->clear();
    // Byte offsets of the content code points, compacted into one string.
    std::string content;
    std::vector<uint32_t> starts;
    content.reserve(text.size());
    int32_t i = 0;
    const auto n = static_cast<int32_t>(text.size());
    while (i < n) {
      const int32_t start = i;
      UChar32 c;
      U8_NEXT(text.data(), i, n, c);
      if (c < 0 || !IsContentCodePoint(c)) continue;
      starts.push_back(static_cast<uint32_t>(content.size()));
      content.append(text.substr(static_cast<size_t>(start), static_cast<size_t>(i - start)));
    }
    if (starts.empty()) return;
    starts.push_back(static_cast<uint32_t>(content.size()));
    const size_t grams = starts.size() - 1;
    const size_t n_chars = static_cast<size_t>(options().ngram);
    FeatureCounter counter;
    if (grams < n_chars) {
      counter.Add(content);
    } else {
      for (size_t g = 0; g + n_chars <= grams; ++g) {
        counter.Add(std::string_view(content).substr(starts[g], starts[g + n_chars] - starts[g]));
      }
    }
    std::vector<WeightedFeature>& features = counter.features();
    switch (options().weights) {
      case WeightScheme::kUniform:
        for (WeightedFeature& f : features) f.weight = 1;
        break;
      case WeightScheme::kTf:
        break;
      case WeightScheme::kTfidf: {
        const double total = counter.total();
        for (WeightedFeature& f : features) f.weight = f.weight * idf_->Idf(f.text) / total;
        break;
      }
    }
    *out = std::move(features);
    KeepTop(options().top_k, options().weights == WeightScheme::kTfidf, out);
  }

 private:
  const IdfTable* idf_;
};

}  // namespace

Status ParseFeatureKind(std::string_view spec, FeatureOptions* options) {
  if (spec == "words") {
    options->kind = FeatureKind::kWords;
    return Status::OK();
  }
  if (spec == "chars" || spec.starts_with("chars:")) {
    int n = 3;
    if (spec.size() > 6) {
      const std::string_view digits = spec.substr(6);
      const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
      if (ec != std::errc() || ptr != digits.data() + digits.size() || n < 1 || n > 16) {
        return Status::InvalidArgument("bad n-gram size in '" + std::string(spec) +
                                       "' (expected chars:N with 1 <= N <= 16)");
      }
    }
    options->kind = FeatureKind::kCharNgrams;
    options->ngram = n;
    return Status::OK();
  }
  return Status::InvalidArgument("unknown features '" + std::string(spec) +
                                 "' (expected words or chars:N)");
}

Result<WeightScheme> ParseWeightScheme(std::string_view name) {
  if (name == "uniform") return WeightScheme::kUniform;
  if (name == "tf") return WeightScheme::kTf;
  if (name == "tfidf") return WeightScheme::kTfidf;
  return Status::InvalidArgument("unknown weights '" + std::string(name) +
                                 "' (expected uniform, tf or tfidf)");
}

std::string FeatureKindName(const FeatureOptions& options) {
  if (options.kind == FeatureKind::kWords) return "words";
  return "chars:" + std::to_string(options.ngram);
}

std::string_view WeightSchemeName(WeightScheme scheme) {
  switch (scheme) {
    case WeightScheme::kUniform:
      return "uniform";
    case WeightScheme::kTf:
      return "tf";
    case WeightScheme::kTfidf:
      return "tfidf";
  }
  return "?";
}

Result<std::unique_ptr<FeatureExtractor>> FeatureExtractor::Create(const FeatureOptions& options,
                                                                   const Segmenter* segmenter,
                                                                   const IdfTable* idf) {
  if (options.top_k < 0) return Status::InvalidArgument("top_k must be >= 0");
  if (options.weights == WeightScheme::kTfidf && idf == nullptr) {
    return Status::InvalidArgument("tfidf weights need an IDF table");
  }
  if (options.kind == FeatureKind::kWords) {
    if (segmenter == nullptr) return Status::InvalidArgument("word features need a segmenter");
    return std::unique_ptr<FeatureExtractor>(new WordFeatureExtractor(options, segmenter, idf));
  }
  if (options.ngram < 1 || options.ngram > 16) {
    return Status::InvalidArgument("n-gram size must be between 1 and 16");
  }
  return std::unique_ptr<FeatureExtractor>(new CharNgramExtractor(options, idf));
}

Fingerprint SimHash(std::span<const WeightedFeature> features, int bits,
                    FeatureHashAlgorithm algorithm) {
  SimHasher hasher(bits);
  for (const WeightedFeature& f : features)
    hasher.Add(HashFeature(f.text, bits, algorithm), f.weight);
  return hasher.Finish();
}

}  // namespace neardup
