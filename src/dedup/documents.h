// Copyright 2026 The neardup Authors.
//
// The documents as Dedup's stages read them: either the caller's
// DedupDocument array (Dedup, MinHashDedup, neardup-mpi) or the compact
// columns DedupJob::Run holds (CompactDocuments: 17 bytes a document, 25
// with the lengths, instead of DedupDocument's 56, whose Fingerprint keeps
// its width in an int and whose optional score takes 16 bytes; 10M short
// records: 0.17 GB instead of 0.56 GB). A DocumentView reads either; the
// stages take one, and a span or vector of DedupDocument converts to it.
//
//   dedup_internal::CompactDocuments docs;
//   docs.push_back(document);                 // a DedupDocument, copied in
//   auto result = dedup_internal::DedupDocuments(docs, options);
//   DedupDocument d = docs[i];                // the same values back
//
// Internal to the library (src/, not installed). Thread safety: a view is a
// pair of pointers; reading is safe from any thread while nothing appends.

#ifndef NEARDUP_DEDUP_DOCUMENTS_H_
#define NEARDUP_DEDUP_DOCUMENTS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "neardup/dedup.h"
#include "neardup/fingerprint.h"

namespace neardup::dedup_internal {

// DedupDocuments in columns: the fingerprint as (hi, lo) words (16 bytes)
// and a byte of flags per document; the lengths (8 bytes) only when asked
// for at construction (KeepPolicy::kLongest reads them; without them every
// length reads 0), the scores only once some document has one.
class CompactDocuments {
 public:
  explicit CompactDocuments(bool keep_lengths = true) : keep_lengths_(keep_lengths) {}

  void reserve(size_t n) {
    words_.reserve(n);
    flags_.reserve(n);
    if (keep_lengths_) lengths_.reserve(n);
  }
  size_t size() const { return flags_.size(); }
  bool empty() const { return flags_.empty(); }

  void push_back(const DedupDocument& d) {
    const Fingerprint& fp = d.fingerprint;
    words_.emplace_back(fp.hi(), fp.lo());
    flags_.push_back(static_cast<uint8_t>((d.score.has_value() ? kScored : 0) |
                                          (fp.bits() == 128 ? kWide : 0) | (d.empty ? kEmpty : 0)));
    if (keep_lengths_) lengths_.push_back(d.length);
    if (d.score.has_value() || !scores_.empty()) {
      scores_.resize(flags_.size() - 1, 0);
      scores_.push_back(d.score.value_or(0));
    }
  }

  bool is_empty(size_t i) const { return (flags_[i] & kEmpty) != 0; }
  Fingerprint fingerprint(size_t i) const {
    return (flags_[i] & kWide) != 0 ? Fingerprint::From128(words_[i].first, words_[i].second)
                                    : Fingerprint::From64(words_[i].second);
  }
  uint64_t length(size_t i) const { return keep_lengths_ ? lengths_[i] : 0; }
  std::optional<double> score(size_t i) const {
    if ((flags_[i] & kScored) == 0) return std::nullopt;
    return scores_[i];
  }
  // Document i as pushed (its length 0 unless the lengths are kept).
  DedupDocument operator[](size_t i) const {
    DedupDocument d;
    d.fingerprint = fingerprint(i);
    d.empty = is_empty(i);
    d.length = length(i);
    d.score = score(i);
    return d;
  }

 private:
  static constexpr uint8_t kEmpty = 1, kWide = 2, kScored = 4;

  bool keep_lengths_ = true;
  std::vector<std::pair<uint64_t, uint64_t>> words_;  // (hi, lo); 64-bit: hi 0
  std::vector<uint8_t> flags_;                        // scored | 128-bit | empty
  std::vector<uint64_t> lengths_;                     // when keep_lengths_
  std::vector<double> scores_;                        // empty until a document has one
};

// Read access to documents held either way. Cheap to copy.
class DocumentView {
 public:
  DocumentView(std::span<const DedupDocument> docs)  // NOLINT: implicit on purpose
      : full_(docs.data()), n_(docs.size()) {}
  DocumentView(const std::vector<DedupDocument>& docs)  // NOLINT
      : full_(docs.data()), n_(docs.size()) {}
  DocumentView(const CompactDocuments& docs)  // NOLINT
      : compact_(&docs), n_(docs.size()) {}

  size_t size() const { return n_; }
  bool empty(size_t i) const { return full_ != nullptr ? full_[i].empty : compact_->is_empty(i); }
  Fingerprint fingerprint(size_t i) const {
    return full_ != nullptr ? full_[i].fingerprint : compact_->fingerprint(i);
  }
  uint64_t length(size_t i) const {
    return full_ != nullptr ? full_[i].length : compact_->length(i);
  }
  std::optional<double> score(size_t i) const {
    return full_ != nullptr ? full_[i].score : compact_->score(i);
  }

 private:
  const DedupDocument* full_ = nullptr;
  const CompactDocuments* compact_ = nullptr;
  size_t n_ = 0;
};

// Dedup (dedup.h) over either form of documents.
Result<DedupResult> DedupDocuments(DocumentView documents, const DedupOptions& options);

}  // namespace neardup::dedup_internal

#endif  // NEARDUP_DEDUP_DOCUMENTS_H_
