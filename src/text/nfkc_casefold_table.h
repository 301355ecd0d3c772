// Copyright 2026 The neardup Authors.
//
// NFKC_Casefold without leaving UTF-8 (internal to the library): the
// normalizer's table, and what the fused fingerprint pass
// (src/features/fused_ngram_simhash.h) reads of it.
//
// Thread safety: the table is built once per process and immutable after.

#ifndef NEARDUP_TEXT_NFKC_CASEFOLD_TABLE_H_
#define NEARDUP_TEXT_NFKC_CASEFOLD_TABLE_H_

#include <unicode/normalizer2.h>
#include <unicode/umachine.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace neardup::text {

// ICU says, per code point, whether the text always has a normalization
// boundary before it and after it; between boundaries the pieces normalize
// independently (normalizer2.h). So the text is cut at those boundaries; a
// piece of one BMP code point takes its precomputed normalization (most are
// unchanged and are copied in runs), and the rare longer pieces (a letter
// with combining marks, Hangul jamo, ...) go to ICU. The result is the same
// as normalizing the whole text at once.
class NfkcCasefoldTable {
 public:
  static constexpr uint8_t kBoundaryBefore = 1;
  static constexpr uint8_t kBoundaryAfter = 2;
  static constexpr uint8_t kUnchanged = 4;  // NFKC_Casefold(c) == c
  static constexpr uint8_t kMapped = 8;     // Mapping(c) holds NFKC_Casefold(c)
  // A BMP code point with neither kUnchanged nor kMapped (flags 0) is always
  // normalized by ICU.

  // Built once per process (65,536 code points asked of ICU: a few ms).
  // `n` is ICU's NFKC_Casefold instance.
  static const NfkcCasefoldTable& Get(const icu::Normalizer2* n);

  // Appends the NFKC_Casefold of `text` to *out; false (having appended part
  // of it) when the text is not valid UTF-8.
  bool Normalize(std::string_view text, std::string* out) const;

  // The flags of code point `c` (supplementary code points are asked of
  // ICU: inert ones have both boundaries and kUnchanged, the others 0).
  uint8_t Flags(UChar32 c) const {
    if (c < 0x10000) return flags_[static_cast<size_t>(c)];
    return n_->isInert(c) ? kBoundaryBefore | kBoundaryAfter | kUnchanged : 0;
  }
  // NFKC_Casefold(c) in UTF-8. REQUIRES: c < 0x10000 and Flags(c) has kMapped.
  std::string_view Mapping(UChar32 c) const {
    const size_t offset = mapping_[static_cast<size_t>(c)];
    return std::string_view(pool_.data() + offset + 1, static_cast<unsigned char>(pool_[offset]));
  }

 private:
  explicit NfkcCasefoldTable(const icu::Normalizer2* n);

  // Appends text[copy_from, piece) as it is, then the normalization of the
  // piece text[piece, end) (`code_points` long, ending with `last`).
  bool Flush(std::string_view text, int32_t copy_from, int32_t piece, int32_t end,
             int32_t code_points, UChar32 last, std::string* out) const;

  const icu::Normalizer2* n_;
  std::vector<uint8_t> flags_;
  std::vector<uint32_t> mapping_;  // offsets into pool_ for kMapped code points
  std::string pool_;               // mappings: a length byte, then the UTF-8 bytes
};

}  // namespace neardup::text

#endif  // NEARDUP_TEXT_NFKC_CASEFOLD_TABLE_H_
