// Copyright 2026 The neardup Authors.
//
// References for the normalizer's fast paths: ICU's NFKC_Casefold of the whole
// text through UTF-16 (the library's code before its UTF-8 fast path) and
// OpenCC's own converter. For tests only.

#ifndef NEARDUP_TESTS_TESTING_TEXT_ORACLE_H_
#define NEARDUP_TESTS_TESTING_TEXT_ORACLE_H_

#include <memory>
#include <string>
#include <string_view>

namespace neardup::testing {

// icu::Normalizer2::getNFKCCasefoldInstance()->normalize() of the text read
// as UTF-8 (invalid bytes become U+FFFD), written back as UTF-8.
std::string IcuNfkcCasefold(std::string_view text);

// opencc::SimpleConverter for a configuration ("tw2sp.json", ...).
class OpenccOracle {
 public:
  explicit OpenccOracle(const std::string& config);
  ~OpenccOracle();
  std::string Convert(std::string_view text) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace neardup::testing

#endif  // NEARDUP_TESTS_TESTING_TEXT_ORACLE_H_
