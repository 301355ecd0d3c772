// Copyright 2026 The neardup Authors.

#include "neardup/features.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "features/feature_hashes.h"
#include "segment/char_class.h"
#include "segment/keyword_candidate.h"
#include "util/ordered_string_index.h"
#include "util/random.h"

namespace neardup {
namespace {

// True for the code points that carry content: letters (Han included) and digits.
bool IsContentCodePoint(UChar32 c) { return u_isalnum(c) != 0; }

// IsContentCodePoint for the BMP as a bitmap, built once from u_isalnum.
class ContentTable {
 public:
  ContentTable() {
    for (UChar32 c = 0; c < 0x10000; ++c) {
      if (IsContentCodePoint(c)) bits_[static_cast<size_t>(c) / 64] |= uint64_t{1} << (c % 64);
    }
  }
  bool Contains(UChar32 c) const {
    if (c >= 0x10000) return IsContentCodePoint(c);
    return ((bits_[static_cast<size_t>(c) / 64] >> (c % 64)) & 1u) != 0;
  }
  static const ContentTable& Get() {
    static const ContentTable* table = new ContentTable();
    return *table;
  }

 private:
  std::array<uint64_t, 0x10000 / 64> bits_{};
};

// The content code points of `text` (valid UTF-8; invalid bytes are skipped)
// compacted into *content, with the byte offset of each in *starts followed
// by content->size().
void CollectContent(std::string_view text, std::string* content, std::vector<uint32_t>* starts) {
  const ContentTable& table = ContentTable::Get();
  // Sized for the worst case (every byte a content character, 4 bytes of
  // slack for the fixed-size copy below), shrunk at the end.
  content->resize(text.size() + 4);
  starts->resize(text.size() + 1);
  char* out = content->data();
  uint32_t* start_out = starts->data();
  uint32_t size = 0;
  size_t count = 0;
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  int32_t i = 0;
  const auto n = static_cast<int32_t>(text.size());
  while (i < n) {
    const int32_t start = i;
    UChar32 c = s[i];
    if (c < 0x80) {
      ++i;
    } else {
      U8_NEXT(s, i, n, c);
      if (c < 0) continue;
    }
    if (!table.Contains(c)) continue;
    start_out[count++] = size;
    // Copies 4 bytes (one load and store) when the text has them; only the
    // code point's own bytes are kept.
    uint32_t bytes = 0;
    std::memcpy(&bytes, s + start, n - start >= 4 ? 4 : static_cast<size_t>(i - start));
    std::memcpy(out + size, &bytes, 4);
    size += static_cast<uint32_t>(i - start);
  }
  start_out[count++] = size;
  starts->resize(count);
  content->resize(size);
}

// The distinct n-grams of one document: open addressing on the feature
// hash, each slot the hash's high 32 bits and the n-gram's index + 1 (0:
// empty); a matching slot is confirmed byte for byte, so the count is exact
// even if two n-grams' hashes collide. 8-byte slots keep a document's table
// in L1/L2; one thread reuses it across documents.
class GramTable {
 public:
  // Empties the table for up to `max_keys` keys.
  void Reset(size_t max_keys) {
    size_t capacity = 64;
    while (capacity < 2 * max_keys) capacity *= 2;
    slots_.assign(capacity, 0);
    mask_ = capacity - 1;
  }
  void Prefetch(uint64_t key) const { __builtin_prefetch(&slots_[key & mask_]); }
  // Inserts n-gram `gram` (content bytes [starts[gram], starts[gram + n]))
  // with hash `key`; false when an equal n-gram is already there.
  bool Insert(uint64_t key, uint32_t gram, std::string_view content, const uint32_t* starts,
              size_t n) {
    const uint64_t tag = key >> 32 << 32;
    for (size_t i = key & mask_;; i = (i + 1) & mask_) {
      const uint64_t slot = slots_[i];
      if (slot == 0) {
        slots_[i] = tag | (gram + 1);
        return true;
      }
      if ((slot >> 32 << 32) == tag && GramText(static_cast<uint32_t>(slot) - 1, content, starts,
                                                n) == GramText(gram, content, starts, n)) {
        return false;
      }
    }
  }

 private:
  static std::string_view GramText(uint32_t gram, std::string_view content, const uint32_t* starts,
                                   size_t n) {
    return content.substr(starts[gram], starts[gram + n] - starts[gram]);
  }

  std::vector<uint64_t> slots_;
  size_t mask_ = 0;
};

// The n-gram extractors' per-thread buffers, in one thread_local object: one
// TLS destructor registration per thread (glibc allocates for each, and a
// failed allocation there aborts; see CliThreadsTest.RefusedThreadsAreNotFatal).
struct NgramScratch {
  std::string content;
  std::vector<uint32_t> starts;
  std::vector<FeatureHash> hashes;
  GramTable table;
};

NgramScratch& Scratch() {
  thread_local NgramScratch scratch;
  return scratch;
}

// Sorts *v and removes repeats. The values are feature hashes (uniform), so
// one counting pass on their top bits into ~|v| buckets leaves buckets of a
// value or two, finished by insertion sort; a large bucket (repeats of a few
// values, or hashes chosen to share their top bits) gets std::sort, which
// bounds the worst case at O(n log n). 3-4x faster than std::sort alone on
// a document's n-grams.
void SortUnique(std::vector<uint64_t>* v) {
  const size_t n = v->size();
  constexpr size_t kSmall = 64;
  if (n <= kSmall) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
    return;
  }
  const int bits = std::min(16, static_cast<int>(std::bit_width(n)));
  const int shift = 64 - bits;
  thread_local std::vector<uint32_t> ends;
  thread_local std::vector<uint64_t> sorted;
  ends.assign((size_t{1} << bits) + 1, 0);
  for (uint64_t x : *v) ++ends[(x >> shift) + 1];
  for (size_t b = 1; b < ends.size(); ++b) ends[b] += ends[b - 1];
  sorted.resize(n);
  // After the scatter ends[b] is the end of bucket b (the start of b + 1).
  for (uint64_t x : *v) sorted[ends[x >> shift]++] = x;
  uint32_t begin = 0;
  for (size_t b = 0; b + 1 < ends.size(); ++b) {
    const uint32_t end = ends[b];
    if (end - begin > 32) {
      std::sort(sorted.begin() + begin, sorted.begin() + end);
    } else {
      for (uint32_t i = begin + 1; i < end; ++i) {
        const uint64_t x = sorted[i];
        uint32_t j = i;
        for (; j > begin && sorted[j - 1] > x; --j) sorted[j] = sorted[j - 1];
        sorted[j] = x;
      }
    }
    begin = end;
  }
  size_t out = 0;
  for (size_t i = 0; i < n; ++i) {
    if (out == 0 || sorted[i] != (*v)[out - 1]) (*v)[out++] = sorted[i];
  }
  v->resize(out);
}

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

// uniform / tf / tfidf weights of counted features (chars:N and sentences).
void ApplyCountWeights(const FeatureOptions& options, const IdfTable* idf, FeatureCounter* counter,
                       std::vector<WeightedFeature>* out) {
  std::vector<WeightedFeature>& features = counter->features();
  switch (options.weights) {
    case WeightScheme::kUniform:
      for (WeightedFeature& f : features) f.weight = 1;
      break;
    case WeightScheme::kTfidf: {
      const double total = counter->total();
      for (WeightedFeature& f : features) f.weight = f.weight * idf->Idf(f.text) / total;
      break;
    }
    default:  // kTf (Create rejects the word-only schemes)
      break;
  }
  *out = std::move(features);
  KeepTop(options.top_k, options.weights == WeightScheme::kTfidf, out);
}

bool IsSentenceEnd(UChar32 c) {
  return c == 0x3002 /*。*/ || c == 0xFF1F /*？*/ || c == 0xFF01 /*！*/ || c == '?' || c == '!' ||
         c == '\n';
}

bool IsCloser(UChar32 c) {
  return c == 0x201D /*”*/ || c == 0x2019 /*’*/ || c == 0x300D /*」*/ || c == 0x300F /*』*/ ||
         c == 0xFF09 /*）*/ || c == ')' || c == ']' || c == '"' || c == '\'';
}

bool IsTrimmed(UChar32 c) { return c < 0 || u_isUWhiteSpace(c) != 0; }

std::string_view Trim(std::string_view s) {
  int32_t begin = 0, end = static_cast<int32_t>(s.size());
  while (begin < end) {
    int32_t i = begin;
    UChar32 c;
    U8_NEXT(s.data(), i, end, c);
    if (c < 0 || !IsTrimmed(c)) break;
    begin = i;
  }
  while (end > begin) {
    int32_t i = end;
    UChar32 c;
    U8_PREV(s.data(), begin, i, c);
    if (c < 0 || !IsTrimmed(c)) break;
    end = i;
  }
  return s.substr(static_cast<size_t>(begin), static_cast<size_t>(end - begin));
}

class WordFeatureExtractor final : public FeatureExtractor {
 public:
  WordFeatureExtractor(const FeatureOptions& options, const Segmenter* segmenter,
                       const IdfTable* idf, const MarkerLexicon* markers)
      : FeatureExtractor(options),
        segmenter_(segmenter),
        idf_(idf),
        markers_(markers),
        keywords_(segmenter, idf) {}

  void DoExtract(std::string_view text, std::string_view title,
                 std::vector<WeightedFeature>* out) const override {
    out->clear();
    if (options().weights == WeightScheme::kImproved) {
      ExtractImproved(text, title, out);
      return;
    }
    if (options().weights == WeightScheme::kEntropy) {
      ExtractEntropy(text, out);
      return;
    }
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
  // A candidate word of extract_tags: its count and first token index.
  struct Candidate {
    std::string_view word;
    double count = 0;
    size_t first = 0;
    double weight = 0;
  };

  // The candidates of `words` in order of first occurrence; *index_of maps
  // each token index to its candidate (or -1).
  static void CollectCandidates(const std::vector<std::string_view>& words,
                                std::vector<Candidate>* candidates,
                                std::vector<int32_t>* index_of) {
    candidates->clear();
    if (index_of != nullptr) index_of->assign(words.size(), -1);
    thread_local OrderedStringIndex index;
    index.Reset(words.size());
    for (size_t i = 0; i < words.size(); ++i) {
      const std::string_view w = words[i];
      if (!segment::IsKeywordCandidate(w)) continue;
      const auto [c, inserted] = index.Insert(w);
      if (inserted) candidates->push_back({w, 0, i, 0});
      (*candidates)[c].count += 1;
      if (index_of != nullptr) (*index_of)[i] = static_cast<int32_t>(c);
    }
  }

  // tf * idf exactly as extract_tags computes it: count * (idf / total).
  void TfIdf(std::vector<Candidate>* candidates) const {
    double total = 0;
    for (const Candidate& c : *candidates) total += c.count;
    for (Candidate& c : *candidates) c.weight = c.count * (idf_->Idf(c.word) / total);
  }

  void ExtractImproved(std::string_view text, std::string_view title,
                       std::vector<WeightedFeature>* out) const {
    thread_local std::vector<std::string_view> words;
    thread_local std::vector<Candidate> candidates;
    segmenter_->Cut(text, &words);
    CollectCandidates(words, &candidates, nullptr);
    if (candidates.empty()) return;
    TfIdf(&candidates);
    std::vector<size_t> lens(candidates.size());
    size_t min_len = SIZE_MAX, max_len = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      lens[i] = utf8::CodePointCount(candidates[i].word);
      min_len = std::min(min_len, lens[i]);
      max_len = std::max(max_len, lens[i]);
    }
    for (size_t i = 0; i < candidates.size(); ++i) {
      Candidate& c = candidates[i];
      c.weight *= ImprovedFactor(segmenter_->TagOrFallback(c.word), lens[i], min_len, max_len,
                                 markers_->Matches(c.word),
                                 !title.empty() && title.find(c.word) != std::string_view::npos);
    }
    // Heaviest first; ties keep first-occurrence order.
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.weight > b.weight; });
    size_t n = candidates.size();
    if (options().top_k > 0) n = std::min(n, static_cast<size_t>(options().top_k));
    out->reserve(n);
    for (size_t i = 0; i < n; ++i) {
      out->push_back({std::string(candidates[i].word), candidates[i].weight, -1});
    }
  }

  void ExtractEntropy(std::string_view text, std::vector<WeightedFeature>* out) const {
    thread_local std::vector<std::string_view> tokens;
    thread_local std::vector<std::string_view> words;
    thread_local std::vector<Candidate> candidates;
    thread_local std::vector<int32_t> index_of;
    segmenter_->Cut(text, &tokens);
    // The neighbour sequence: every token but those made of white space only.
    words.clear();
    for (std::string_view t : tokens) {
      if (!segment::IsAllPyWhitespace(t)) words.push_back(t);
    }
    CollectCandidates(words, &candidates, &index_of);
    if (candidates.empty()) return;
    TfIdf(&candidates);
    // (candidate, neighbour) for every occurrence; "" is the document boundary.
    thread_local std::vector<std::pair<int32_t, std::string_view>> left, right;
    left.clear();
    right.clear();
    for (size_t i = 0; i < words.size(); ++i) {
      const int32_t c = index_of[i];
      if (c < 0) continue;
      left.emplace_back(c, i == 0 ? std::string_view() : words[i - 1]);
      right.emplace_back(c, i + 1 == words.size() ? std::string_view() : words[i + 1]);
    }
    std::vector<double> h(candidates.size(), 0.0);
    thread_local std::vector<uint32_t> counts;
    for (auto* side : {&left, &right}) {
      std::sort(side->begin(), side->end());
      size_t i = 0;
      while (i < side->size()) {
        const int32_t c = (*side)[i].first;
        counts.clear();
        while (i < side->size() && (*side)[i].first == c) {
          size_t j = i;
          while (j < side->size() && (*side)[j] == (*side)[i]) ++j;
          counts.push_back(static_cast<uint32_t>(j - i));
          i = j;
        }
        h[static_cast<size_t>(c)] += Entropy(counts) / 2;
      }
    }
    const double threshold = options().entropy_threshold;
    for (size_t i = 0; i < candidates.size(); ++i) {
      const double t = candidates[i].weight;
      candidates[i].weight = std::min(std::sqrt((t * t + h[i] * h[i]) / 2), threshold);
    }
    // The top_k heaviest (ties: first occurrence first), then in order of
    // first occurrence, each with its rank.
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.weight > b.weight; });
    size_t n = candidates.size();
    if (options().top_k > 0) n = std::min(n, static_cast<size_t>(options().top_k));
    std::sort(candidates.begin(), candidates.begin() + static_cast<ptrdiff_t>(n),
              [](const Candidate& a, const Candidate& b) { return a.first < b.first; });
    out->reserve(n);
    for (size_t r = 0; r < n; ++r) {
      out->push_back({std::string(candidates[r].word), candidates[r].weight, static_cast<int>(r)});
    }
  }

  const Segmenter* segmenter_;
  const IdfTable* idf_;
  const MarkerLexicon* markers_;
  KeywordExtractor keywords_;
};

class CharNgramExtractor final : public FeatureExtractor {
 public:
  CharNgramExtractor(const FeatureOptions& options, const IdfTable* idf)
      : FeatureExtractor(options), idf_(idf) {}

  void DoExtract(std::string_view text, std::string_view /*title*/,
                 std::vector<WeightedFeature>* out) const override {
    out->clear();
    NgramScratch& scratch = Scratch();
    const std::string& content = scratch.content;
    const std::vector<uint32_t>& starts = scratch.starts;
    CollectContent(text, &scratch.content, &scratch.starts);
    const size_t chars = starts.size() - 1;
    if (chars == 0) return;
    const size_t n = static_cast<size_t>(options().ngram);
    FeatureCounter counter;
    if (chars < n) {
      counter.Add(content);
    } else {
      for (size_t g = 0; g + n <= chars; ++g) {
        counter.Add(std::string_view(content).substr(starts[g], starts[g + n] - starts[g]));
      }
    }
    ApplyCountWeights(options(), idf_, &counter, out);
  }

  Fingerprint DoSimHashOf(std::string_view text, std::string_view title, int bits,
                          FeatureHashAlgorithm algorithm, size_t* num_features) const override {
    const WeightScheme weights = options().weights;
    if ((weights != WeightScheme::kUniform && weights != WeightScheme::kTf) ||
        options().top_k != 0 || algorithm != FeatureHashAlgorithm::kXxh3) {
      return FeatureExtractor::DoSimHashOf(text, title, bits, algorithm, num_features);
    }
    // Uniform: each distinct n-gram adds its hash once. tf: an n-gram seen c
    // times adds c times its hash, i.e. every occurrence adds its hash once.
    NgramScratch& scratch = Scratch();
    const std::string& content = scratch.content;
    const std::vector<uint32_t>& starts = scratch.starts;
    GramTable& table = scratch.table;
    CollectContent(text, &scratch.content, &scratch.starts);
    UnitSimHasher hasher(bits);
    const size_t chars = starts.size() - 1;
    const size_t n = static_cast<size_t>(options().ngram);
    *num_features = 0;
    if (chars == 0) return hasher.Finish();
    if (chars < n) {
      hasher.Add(HashFeature(content, bits));
      *num_features = 1;
      return hasher.Finish();
    }
    const size_t grams = chars - n + 1;
    // Hash every n-gram first (tf adds each occurrence right away), then
    // count the distinct ones with the table's slots prefetched a few ahead.
    std::vector<FeatureHash>& hashes = scratch.hashes;
    hashes.resize(grams);
    const bool every_occurrence = weights == WeightScheme::kTf;
    for (size_t g = 0; g < grams; ++g) {
      const FeatureHash h =
          HashFeature(std::string_view(content).substr(starts[g], starts[g + n] - starts[g]), bits);
      hashes[g] = h;
      if (every_occurrence) hasher.Add(h);
    }
    table.Reset(grams);
    constexpr size_t kAhead = 8;
    for (size_t g = 0; g < std::min(grams, kAhead); ++g) table.Prefetch(hashes[g].lo);
    size_t distinct = 0;
    for (size_t g = 0; g < grams; ++g) {
      if (g + kAhead < grams) table.Prefetch(hashes[g + kAhead].lo);
      const bool fresh =
          table.Insert(hashes[g].lo, static_cast<uint32_t>(g), content, starts.data(), n);
      distinct += fresh ? 1 : 0;
      if (fresh && !every_occurrence) hasher.Add(hashes[g]);
    }
    *num_features = distinct;
    return hasher.Finish();
  }

  void DoFeatureHashes(std::string_view text, std::string_view title,
                       FeatureHashAlgorithm algorithm, std::vector<uint64_t>* out) const override {
    if (!HashOccurrences(text, algorithm, out)) {
      FeatureExtractor::DoFeatureHashes(text, title, algorithm, out);
      return;
    }
    // Sorted and made unique: equal n-grams have equal hashes, so this is
    // the set of the distinct n-grams' hashes that DoExtract's features
    // give, without their strings.
    SortUnique(out);
  }

  // Every n-gram occurrence's hash (HashFeature(gram, 64).lo), in text
  // order, repeats included; false (nothing done) where DoFeatureHashes
  // has no fast path (top_k, another hash).
  bool HashOccurrences(std::string_view text, FeatureHashAlgorithm algorithm,
                       std::vector<uint64_t>* out) const {
    if (options().top_k != 0 || algorithm != FeatureHashAlgorithm::kXxh3) return false;
    NgramScratch& scratch = Scratch();
    const std::string& content = scratch.content;
    const std::vector<uint32_t>& starts = scratch.starts;
    CollectContent(text, &scratch.content, &scratch.starts);
    out->clear();
    const size_t chars = starts.size() - 1;
    const size_t n = static_cast<size_t>(options().ngram);
    if (chars == 0) return true;
    if (chars < n) {
      out->push_back(HashFeature(content, 64).lo);
      return true;
    }
    const size_t grams = chars - n + 1;
    out->resize(grams);
    for (size_t g = 0; g < grams; ++g) {
      (*out)[g] =
          HashFeature(std::string_view(content).substr(starts[g], starts[g + n] - starts[g]), 64)
              .lo;
    }
    return true;
  }

 private:
  const IdfTable* idf_;
};

class SentenceExtractor final : public FeatureExtractor {
 public:
  SentenceExtractor(const FeatureOptions& options, const IdfTable* idf)
      : FeatureExtractor(options), idf_(idf) {}

  void DoExtract(std::string_view text, std::string_view /*title*/,
                 std::vector<WeightedFeature>* out) const override {
    out->clear();
    std::vector<std::string_view> sentences;
    SplitSentences(text, &sentences);
    FeatureCounter counter;
    for (std::string_view s : sentences) counter.Add(s);
    ApplyCountWeights(options(), idf_, &counter, out);
  }

 private:
  const IdfTable* idf_;
};

}  // namespace

void FeatureHashOccurrences(const FeatureExtractor& extractor, std::string_view text,
                            std::string_view title, FeatureHashAlgorithm algorithm,
                            std::vector<uint64_t>* out) {
  const auto* ngrams = dynamic_cast<const CharNgramExtractor*>(&extractor);
  if (ngrams != nullptr && ngrams->HashOccurrences(text, algorithm, out)) return;
  extractor.FeatureHashes(text, title, algorithm, out);
}

std::vector<SentenceSpan> SplitSentenceSpans(std::string_view text,
                                             const SentenceSplitOptions& options) {
  std::vector<SentenceSpan> out;
  const auto n = static_cast<int32_t>(text.size());
  int32_t start = 0, i = 0;
  bool in_ends = false;
  while (i < n) {
    const int32_t at = i;
    UChar32 c;
    U8_NEXT(text.data(), i, n, c);
    bool end = c >= 0 && IsSentenceEnd(c);
    if (!end && options.clause_and_period_ends) {
      end = c == 0xFF1B /*；*/ || c == ';' ||
            (c == '.' && i < n &&
             (text[static_cast<size_t>(i)] == ' ' || text[static_cast<size_t>(i)] == '\n'));
    }
    if (in_ends && !end) {
      // Closers extend the run: the sentence ends after them.
      if (options.keep_closers && IsCloser(c)) continue;
      // A run of sentence ends ends the sentence before `at`.
      out.push_back({static_cast<size_t>(start), static_cast<size_t>(at)});
      start = at;
    }
    in_ends = end;
  }
  if (start < n) out.push_back({static_cast<size_t>(start), static_cast<size_t>(n)});
  return out;
}

void SplitSentences(std::string_view text, std::vector<std::string_view>* out) {
  out->clear();
  for (const SentenceSpan& span : SplitSentenceSpans(text)) {
    const std::string_view s = Trim(text.substr(span.begin, span.end - span.begin));
    if (!s.empty()) out->push_back(s);
  }
}

double ImprovedFactor(std::string_view pos, size_t len, size_t min_len, size_t max_len, bool marker,
                      bool in_title) {
  const double cx = pos.starts_with('n') ? 3 : pos.starts_with('v') ? 2 : 1;
  const double len_score = max_len == min_len ? 0.0
                                              : static_cast<double>(len - min_len) /
                                                    static_cast<double>(max_len - min_len);
  return 1 + cx + len_score + (marker ? 5 : 0) + (in_title ? 5 : 0);
}

double Entropy(std::span<const uint32_t> counts) {
  double total = 0;
  for (uint32_t c : counts) total += c;
  if (total == 0) return 0;
  double h = 0;
  for (uint32_t c : counts) {
    if (c == 0) continue;
    const double p = c / total;
    h -= p * std::log2(p);
  }
  return h;
}

FeatureHash PositionMask(int rank, int bits) {
  const auto r = static_cast<uint64_t>(static_cast<uint32_t>(rank));
  FeatureHash mask;
  mask.lo = SplitMix64(r);
  mask.hi = bits == 128 ? SplitMix64(r + (uint64_t{1} << 32)) : 0;
  return mask;
}

Result<MarkerLexicon> MarkerLexicon::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open marker word lexicon " + path);
  std::vector<std::string> words;
  std::string line;
  while (std::getline(in, line)) {
    const size_t b = line.find_first_not_of(" \t\r\n");
    if (b == std::string::npos || line[b] == '#') continue;
    const size_t e = line.find_last_not_of(" \t\r\n");
    words.push_back(line.substr(b, e - b + 1));
  }
  if (in.bad()) return Status::IOError("cannot read marker word lexicon " + path);
  if (words.empty()) return Status::Corruption("marker word lexicon " + path + " has no words");
  return FromWords(std::move(words));
}

MarkerLexicon MarkerLexicon::FromWords(std::vector<std::string> words) {
  auto data = std::make_shared<Data>();
  data->words = std::move(words);
  for (const std::string& w : data->words) {
    if (w.empty()) continue;
    data->set.insert(w);
    data->lengths.push_back(w.size());
    int32_t i = 0;
    UChar32 c;
    U8_NEXT(w.data(), i, static_cast<int32_t>(w.size()), c);
    data->first.push_back(static_cast<uint32_t>(c));
  }
  for (auto* v : {&data->lengths}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  std::sort(data->first.begin(), data->first.end());
  data->first.erase(std::unique(data->first.begin(), data->first.end()), data->first.end());
  MarkerLexicon lexicon;
  lexicon.data_ = std::move(data);
  return lexicon;
}

bool MarkerLexicon::Matches(std::string_view word) const {
  // At each code point that starts some marker, the substrings as long as a
  // marker are looked up (cheaper than one search per marker).
  const auto n = static_cast<int32_t>(word.size());
  int32_t i = 0;
  while (i < n) {
    const int32_t start = i;
    UChar32 c;
    U8_NEXT(word.data(), i, n, c);
    if (!std::binary_search(data_->first.begin(), data_->first.end(), static_cast<uint32_t>(c))) {
      continue;
    }
    for (size_t len : data_->lengths) {
      if (static_cast<size_t>(start) + len > word.size()) break;
      if (data_->set.contains(word.substr(static_cast<size_t>(start), len))) return true;
    }
  }
  return false;
}

Result<std::string> FindDataFile(std::string_view name, const std::string& data_dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> dirs;
  if (!data_dir.empty()) {
    dirs.push_back(data_dir);
  } else {
    const char* env = std::getenv("NEARDUP_DATA_DIR");
    if (env != nullptr && *env != '\0') {
      dirs.push_back(env);
    } else {
      dirs.push_back(NEARDUP_DATA_DIR);
      dirs.push_back(NEARDUP_SOURCE_DATA_DIR);
    }
  }
  std::string tried;
  for (const std::string& dir : dirs) {
    const std::string path = (fs::path(dir) / fs::path(std::string(name))).string();
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) return path;
    if (!tried.empty()) tried += ", ";
    tried += path;
  }
  return Status::NotFound("cannot find data file " + std::string(name) + " (tried " + tried +
                          "; set --data-dir or $NEARDUP_DATA_DIR to the directory holding it)");
}

Status ParseFeatureKind(std::string_view spec, FeatureOptions* options) {
  if (spec == "words") {
    options->kind = FeatureKind::kWords;
    return Status::OK();
  }
  if (spec == "sentences") {
    options->kind = FeatureKind::kSentences;
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
                                 "' (expected words, chars:N or sentences)");
}

Result<WeightScheme> ParseWeightScheme(std::string_view name) {
  if (name == "uniform") return WeightScheme::kUniform;
  if (name == "tf") return WeightScheme::kTf;
  if (name == "tfidf") return WeightScheme::kTfidf;
  if (name == "improved") return WeightScheme::kImproved;
  if (name == "entropy") return WeightScheme::kEntropy;
  return Status::InvalidArgument("unknown weights '" + std::string(name) +
                                 "' (expected uniform, tf, tfidf, improved or entropy)");
}

std::string FeatureKindName(const FeatureOptions& options) {
  if (options.kind == FeatureKind::kWords) return "words";
  if (options.kind == FeatureKind::kSentences) return "sentences";
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
    case WeightScheme::kImproved:
      return "improved";
    case WeightScheme::kEntropy:
      return "entropy";
  }
  return "?";
}

Result<std::unique_ptr<FeatureExtractor>> FeatureExtractor::Create(const FeatureOptions& options,
                                                                   const Segmenter* segmenter,
                                                                   const IdfTable* idf,
                                                                   const MarkerLexicon* markers) {
  if (options.top_k < 0) return Status::InvalidArgument("top_k must be >= 0");
  const WeightScheme w = options.weights;
  if ((w == WeightScheme::kTfidf || w == WeightScheme::kImproved || w == WeightScheme::kEntropy) &&
      idf == nullptr) {
    return Status::InvalidArgument(std::string(WeightSchemeName(w)) + " weights need an IDF table");
  }
  if ((w == WeightScheme::kImproved || w == WeightScheme::kEntropy) &&
      options.kind != FeatureKind::kWords) {
    return Status::InvalidArgument(std::string(WeightSchemeName(w)) +
                                   " weights need word features");
  }
  if (w == WeightScheme::kImproved && markers == nullptr) {
    return Status::InvalidArgument("improved weights need a marker word lexicon");
  }
  if (w == WeightScheme::kEntropy && !(options.entropy_threshold > 0)) {
    return Status::InvalidArgument("the entropy weight threshold must be > 0");
  }
  if (options.kind == FeatureKind::kWords) {
    if (segmenter == nullptr) return Status::InvalidArgument("word features need a segmenter");
    return std::unique_ptr<FeatureExtractor>(
        new WordFeatureExtractor(options, segmenter, idf, markers));
  }
  if (options.kind == FeatureKind::kSentences) {
    return std::unique_ptr<FeatureExtractor>(new SentenceExtractor(options, idf));
  }
  if (options.ngram < 1 || options.ngram > 16) {
    return Status::InvalidArgument("n-gram size must be between 1 and 16");
  }
  return std::unique_ptr<FeatureExtractor>(new CharNgramExtractor(options, idf));
}

FeatureHash HashWeightedFeature(const WeightedFeature& feature, int bits,
                                FeatureHashAlgorithm algorithm) {
  FeatureHash h = HashFeature(feature.text, bits, algorithm);
  if (feature.position >= 0) {
    const FeatureHash mask = PositionMask(feature.position, bits);
    h.lo ^= mask.lo;
    h.hi ^= mask.hi;
  }
  return h;
}

Fingerprint FeatureExtractor::DoSimHashOf(std::string_view text, std::string_view title, int bits,
                                          FeatureHashAlgorithm algorithm,
                                          size_t* num_features) const {
  thread_local std::vector<WeightedFeature> features;
  DoExtract(text, title, &features);
  *num_features = features.size();
  return SimHash(features, bits, algorithm);
}

void FeatureExtractor::DoFeatureHashes(std::string_view text, std::string_view title,
                                       FeatureHashAlgorithm algorithm,
                                       std::vector<uint64_t>* out) const {
  thread_local std::vector<WeightedFeature> features;
  DoExtract(text, title, &features);
  out->clear();
  out->reserve(features.size());
  for (const WeightedFeature& f : features) out->push_back(HashFeature(f.text, 64, algorithm).lo);
  SortUnique(out);
}

Fingerprint SimHash(std::span<const WeightedFeature> features, int bits,
                    FeatureHashAlgorithm algorithm) {
  SimHasher hasher(bits);
  for (const WeightedFeature& f : features)
    hasher.Add(HashWeightedFeature(f, bits, algorithm), f.weight);
  return hasher.Finish();
}

}  // namespace neardup
