// Copyright 2026 The neardup Authors.
//
// OpenCC's conversion (a configuration such as tw2sp.json: max-match
// segmentation over one dictionary, then a chain of conversions, each
// replacing the longest key found by the first dictionary of its group that
// has one) recomputed over tables built from OpenCC's own dictionaries at
// start-up. Output is byte-identical to opencc::SimpleConverter for valid
// UTF-8 (tests/text/t2s_converter_test.cc compares them on the zh_TW man pages
// and on random strings made of dictionary keys); it is several times faster
// because most code points start no key: one table lookup skips them, and
// no segment or string is allocated per character.
//
// Thread safety: immutable after Create(); Convert() may be called from any
// number of threads.

#ifndef NEARDUP_TEXT_T2S_CONVERTER_H_
#define NEARDUP_TEXT_T2S_CONVERTER_H_

#include <memory>
#include <string>
#include <string_view>

#include "neardup/status.h"

namespace neardup::text {

class T2sConverter {
 public:
  // `config`: a path, or a file name looked up as OpenCC does (the working
  // directory, then OpenCC's data directory). NotFound when it cannot be
  // loaded.
  static Result<std::unique_ptr<T2sConverter>> Create(const std::string& config);
  virtual ~T2sConverter() = default;

  // What opencc::SimpleConverter(config).Convert(text) returns. Text that is
  // not valid UTF-8 is given to OpenCC itself.
  virtual std::string Convert(std::string_view text) const = 0;
};

}  // namespace neardup::text

#endif  // NEARDUP_TEXT_T2S_CONVERTER_H_
