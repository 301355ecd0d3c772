// Copyright 2026 The neardup Authors.

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <exception>
#include <vector>

#include "neardup/text.h"
#include "text/nfkc_casefold_table.h"
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

class NormalizerImpl final : public Normalizer {
 public:
  NormalizerImpl(NormalizeOptions options, const icu::Normalizer2* nfkc_cf,
                 std::unique_ptr<text::T2sConverter> converter)
      : options_(std::move(options)),
        nfkc_cf_(nfkc_cf),
        nfkc_table_(nfkc_cf != nullptr ? &text::NfkcCasefoldTable::Get(nfkc_cf) : nullptr),
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
  const text::NfkcCasefoldTable* nfkc_table_;
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
