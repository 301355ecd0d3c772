// Copyright 2026 The neardup Authors.

#include "text/nfkc_casefold_table.h"

#include <unicode/bytestream.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

namespace neardup::text {

const NfkcCasefoldTable& NfkcCasefoldTable::Get(const icu::Normalizer2* n) {
  static const NfkcCasefoldTable* table = new NfkcCasefoldTable(n);
  return *table;
}

NfkcCasefoldTable::NfkcCasefoldTable(const icu::Normalizer2* n)
    : n_(n), flags_(0x10000, 0), mapping_(0x10000, 0) {
  for (UChar32 c = 0; c < 0x10000; ++c) {
    if (U_IS_SURROGATE(c)) continue;  // never decoded from valid UTF-8
    uint8_t flags = 0;
    if (n->hasBoundaryBefore(c)) flags |= kBoundaryBefore;
    if (n->hasBoundaryAfter(c)) flags |= kBoundaryAfter;
    if (n->isInert(c)) {
      flags |= kUnchanged;
    } else {
      UErrorCode status = U_ZERO_ERROR;
      const icu::UnicodeString mapped = n->normalize(icu::UnicodeString(c), status);
      std::string utf8;
      mapped.toUTF8String(utf8);
      if (U_FAILURE(status) || utf8.size() > 255) {
        flags = 0;  // always ask ICU
      } else if (mapped == icu::UnicodeString(c)) {
        flags |= kUnchanged;
      } else {
        flags |= kMapped;
        mapping_[static_cast<size_t>(c)] = static_cast<uint32_t>(pool_.size());
        pool_.push_back(static_cast<char>(utf8.size()));
        pool_ += utf8;
      }
    }
    flags_[static_cast<size_t>(c)] = flags;
  }
}

bool NfkcCasefoldTable::Normalize(std::string_view text, std::string* out) const {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const auto n = static_cast<int32_t>(text.size());
  int32_t copy_from = 0;  // text[copy_from, piece) is its own normalization
  int32_t piece = 0;      // start of the current piece
  int32_t piece_code_points = 0;
  UChar32 last = 0;  // the piece's last code point
  uint8_t last_flags = 0;
  int32_t i = 0;
  while (i < n) {
    const int32_t start = i;
    UChar32 c = s[i];
    if (c < 0x80) {
      ++i;
    } else {
      U8_NEXT(s, i, n, c);
      if (c < 0) return false;
    }
    const uint8_t flags = Flags(c);
    if (((last_flags & kBoundaryAfter) | (flags & kBoundaryBefore)) != 0 && piece_code_points > 0) {
      // The piece [piece, start) is done. One unchanged code point stays
      // in the run that is copied as it is.
      if (piece_code_points != 1 || (last_flags & kUnchanged) == 0) {
        if (!Flush(text, copy_from, piece, start, piece_code_points, last, out)) return false;
        copy_from = start;
      }
      piece = start;
      piece_code_points = 0;
    }
    ++piece_code_points;
    last = c;
    last_flags = flags;
  }
  if (piece_code_points > 0 && (piece_code_points != 1 || (last_flags & kUnchanged) == 0)) {
    if (!Flush(text, copy_from, piece, n, piece_code_points, last, out)) return false;
    copy_from = n;
  }
  out->append(text.data() + copy_from, static_cast<size_t>(n - copy_from));
  return true;
}

bool NfkcCasefoldTable::Flush(std::string_view text, int32_t copy_from, int32_t piece, int32_t end,
                              int32_t code_points, UChar32 last, std::string* out) const {
  out->append(text.data() + copy_from, static_cast<size_t>(piece - copy_from));
  if (code_points == 1 && last < 0x10000 && (flags_[static_cast<size_t>(last)] & kMapped) != 0) {
    const size_t offset = mapping_[static_cast<size_t>(last)];
    out->append(pool_.data() + offset + 1, static_cast<unsigned char>(pool_[offset]));
    return true;
  }
  UErrorCode status = U_ZERO_ERROR;
  icu::StringByteSink<std::string> sink(out);
  n_->normalizeUTF8(0, icu::StringPiece(text.data() + piece, end - piece), sink, nullptr, status);
  return U_SUCCESS(status);
}

}  // namespace neardup::text
