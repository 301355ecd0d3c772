// Copyright 2026 The neardup Authors.

#include "tests/testing/text_oracle.h"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <opencc/SimpleConverter.hpp>

namespace neardup::testing {

std::string IcuNfkcCasefold(std::string_view text) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = icu::Normalizer2::getNFKCCasefoldInstance(status);
  const icu::UnicodeString src = icu::UnicodeString::fromUTF8(
      icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  const icu::UnicodeString dst = n->normalize(src, status);
  std::string out;
  if (U_FAILURE(status)) return "<ICU error " + std::string(u_errorName(status)) + ">";
  dst.toUTF8String(out);
  return out;
}

struct OpenccOracle::Impl {
  explicit Impl(const std::string& config) : converter(config) {}
  opencc::SimpleConverter converter;
};

OpenccOracle::OpenccOracle(const std::string& config) : impl_(std::make_unique<Impl>(config)) {}
OpenccOracle::~OpenccOracle() = default;

std::string OpenccOracle::Convert(std::string_view text) const {
  return impl_->converter.Convert(text.data(), text.size());
}

}  // namespace neardup::testing
