// Copyright 2026 The neardup Authors.

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <exception>
#include <vector>

#include "neardup/text.h"
#include "text/t2s_converter.h"

namespace neardup {
namespace {

// Collapses runs of ASCII and Unicode white space into one ' ' and trims.
std::string CollapseWhitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t len = 1;
    bool space = b == ' ' || (b >= '\t' && b <= '\r');
    if (b == 0xE3 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        static_cast<unsigned char>(s[i + 2]) == 0x80) {
      space = true;  // U+3000 IDEOGRAPHIC SPACE (NFKC makes it ' ' already)
      len = 3;
    } else if (b == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0xA0) {
      space = true;  // U+00A0 NO-BREAK SPACE
      len = 2;
    }
    if (space) {
      pending_space = !out.empty();
    } else {
      if (pending_space) out.push_back(' ');
      pending_space = false;
      out.append(s.substr(i, len));
    }
    i += len;
  }
  return out;
}

bool IsAscii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// NFKC_Casefold without leaving UTF-8. ICU says, per code point, whether the
// text always has a normalization boundary before it and after it; between
// boundaries the pieces normalize independently (normalizer2.h). So the text
// is cut at those boundaries; a piece of one BMP code point takes its
// precomputed normalization (most are unchanged and are copied in runs), and
// the rare longer pieces (a letter with combining marks, Hangul jamo, ...)
// go to ICU. The result is the same as normalizing the whole text at once.
class NfkcCasefoldTable {
 public:
  // Built once per process (65,536 code points asked of ICU: a few ms).
  static const NfkcCasefoldTable& Get(const icu::Normalizer2* n) {
    static const NfkcCasefoldTable* table = new NfkcCasefoldTable(n);
    return *table;
  }

  // Appends the NFKC_Casefold of `text` to *out; false (having appended part
  // of it) when the text is not valid UTF-8.
  bool Normalize(std::string_view text, std::string* out) const {
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
      if (((last_flags & kBoundaryAfter) | (flags & kBoundaryBefore)) != 0 &&
          piece_code_points > 0) {
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

 private:
  static constexpr uint8_t kBoundaryBefore = 1;
  static constexpr uint8_t kBoundaryAfter = 2;
  static constexpr uint8_t kUnchanged = 4;  // NFKC_Casefold(c) == c
  static constexpr uint8_t kMapped = 8;     // mapping_[c] holds NFKC_Casefold(c)

  explicit NfkcCasefoldTable(const icu::Normalizer2* n)
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

  // Supplementary code points are asked of ICU.
  uint8_t Flags(UChar32 c) const {
    if (c < 0x10000) return flags_[static_cast<size_t>(c)];
    return n_->isInert(c) ? kBoundaryBefore | kBoundaryAfter | kUnchanged : 0;
  }

  // Appends text[copy_from, piece) as it is, then the normalization of the
  // piece text[piece, end) (`code_points` long, ending with `last`).
  bool Flush(std::string_view text, int32_t copy_from, int32_t piece, int32_t end,
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

  const icu::Normalizer2* n_;
  std::vector<uint8_t> flags_;
  std::vector<uint32_t> mapping_;  // offsets into pool_ for kMapped code points
  std::string pool_;               // mappings: a length byte, then the UTF-8 bytes
};

class NormalizerImpl final : public Normalizer {
 public:
  NormalizerImpl(NormalizeOptions options, const icu::Normalizer2* nfkc_cf,
                 std::unique_ptr<text::T2sConverter> converter)
      : options_(std::move(options)),
        nfkc_cf_(nfkc_cf),
        nfkc_table_(nfkc_cf != nullptr ? &NfkcCasefoldTable::Get(nfkc_cf) : nullptr),
        converter_(std::move(converter)) {}

  std::string Normalize(std::string_view text) const override {
    std::string out;
    if (nfkc_cf_ != nullptr) {
      out = NfkcCasefold(text);
    } else {
      out.assign(text);
    }
    if (converter_ != nullptr && !IsAscii(out)) {
      try {
        out = converter_->Convert(out);
        // tw2sp2: once more. tw2sp maps Taiwan phrases to mainland ones
        // (檔案 -> 文件, 文件 -> 文档), so run on Simplified text it changes it
        // again and one pass leaves a zh_TW page and its zh_CN version apart
        // (文件 against 文档); a second pass brings both to the same form.
        if (twice_) out = converter_->Convert(out);
      } catch (const std::exception&) {
        // OpenCC only throws on broken dictionaries, which Create() has already
        // exercised; keep the unconverted text rather than lose the document.
      }
    }
    if (options_.collapse_whitespace) out = CollapseWhitespace(out);
    return out;
  }

 private:
  std::string NfkcCasefold(std::string_view text) const {
    if (IsAscii(text)) {
      // NFKC is the identity on ASCII, and case folding is lower-casing.
      std::string out(text);
      for (char& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      }
      return out;
    }
    std::string out;
    out.reserve(text.size());
    if (nfkc_table_->Normalize(text, &out)) return out;
    // Invalid UTF-8 (outside Normalize's contract): ICU through UTF-16, which
    // replaces the bad bytes with U+FFFD.
    UErrorCode status = U_ZERO_ERROR;
    const icu::UnicodeString src = icu::UnicodeString::fromUTF8(
        icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
    const icu::UnicodeString dst = nfkc_cf_->normalize(src, status);
    out.clear();
    if (U_FAILURE(status)) {
      out.assign(text);
      return out;
    }
    dst.toUTF8String(out);
    return out;
  }

  NormalizeOptions options_;
  const icu::Normalizer2* nfkc_cf_;  // owned by ICU; thread-safe
  const NfkcCasefoldTable* nfkc_table_;
  std::unique_ptr<text::T2sConverter> converter_;
  bool twice_ = options_.t2s == "tw2sp2";
};

}  // namespace

Result<std::unique_ptr<Normalizer>> Normalizer::Create(const NormalizeOptions& options) {
  const icu::Normalizer2* nfkc_cf = nullptr;
  if (options.nfkc_casefold) {
    UErrorCode status = U_ZERO_ERROR;
    nfkc_cf = icu::Normalizer2::getNFKCCasefoldInstance(status);
    if (U_FAILURE(status)) {
      return Status::NotSupported(std::string("ICU NFKC_Casefold is unavailable: ") +
                                  u_errorName(status));
    }
  }
  std::unique_ptr<text::T2sConverter> converter;
  if (!options.t2s.empty()) {
    std::string config = options.t2s;
    if (config.find('/') == std::string::npos) {
      static constexpr std::string_view kAllowed[] = {"t2s", "tw2s", "tw2sp", "hk2s"};
      std::string base = config;
      if (base == "tw2sp2") base = "tw2sp";
      if (base.size() > 5 && base.ends_with(".json")) base.resize(base.size() - 5);
      bool known = false;
      for (std::string_view a : kAllowed) known = known || a == base;
      if (!known) {
        return Status::InvalidArgument("unknown Traditional-to-Simplified conversion '" + config +
                                       "' (expected t2s, tw2s, tw2sp, tw2sp2 or hk2s)");
      }
      config = base + ".json";
    }
    auto created = text::T2sConverter::Create(config);
    if (!created.ok()) {
      if (!created.status().IsNotFound()) return created.status();
      return Status::NotFound(created.status().message() +
                              " (install Debian's libopencc-data: apt-get install libopencc-data)");
    }
    converter = std::move(*created);
    try {
      converter->Convert("測試");
    } catch (const std::exception& e) {
      return Status::NotFound("cannot use OpenCC configuration '" + config + "': " + e.what());
    }
  }
  return std::unique_ptr<Normalizer>(new NormalizerImpl(options, nfkc_cf, std::move(converter)));
}

}  // namespace neardup
