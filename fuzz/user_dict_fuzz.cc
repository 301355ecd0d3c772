// Copyright 2026 The neardup Authors.
//
// libFuzzer target for the jieba dictionary loaders: the input is either a
// main dictionary (dict.txt: "word freq [tag]") or a user dictionary
// ("word [freq] [tag]", jieba.load_userdict), picked by the first byte, read
// by Segmenter::Open from a private jieba directory whose other files are
// tiny and valid. A load gives a clear Status or a segmenter whose tokens of
// a fixed text and of the input itself are non-empty and concatenate to the
// text. Input capped at 16 KiB (loading is linear, segmenting more so).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "neardup/segmenter.h"

namespace {

// A minimal jieba data directory: a few words and a 4-state HMM whose
// emission table covers a handful of characters.
const std::string& JiebaDir() {
  static const std::string* dir = [] {
    const std::string d = neardup::fuzz::TempDir() + "/jieba";
    std::filesystem::create_directories(d + "/finalseg");
    neardup::fuzz::WriteTemp("jieba/main.txt",
                             "中国 1000 ns\n人民 800 n\n中 500 f\n国 300 n\n人 900 n\n民 200 "
                             "ng\n银行 400 n\n行 600 v\n");
    neardup::fuzz::WriteTemp(
        "jieba/finalseg/prob_start.py",
        "P={'B': -0.26268660809250016,\n 'E': -3.14e+100,\n 'M': -3.14e+100,\n 'S': "
        "-1.4652633398537678}\n");
    neardup::fuzz::WriteTemp(
        "jieba/finalseg/prob_trans.py",
        "P={'B': {'E': -0.51, 'M': -0.91},\n 'E': {'B': -0.59, 'S': -0.81},\n 'M': {'E': "
        "-0.33, 'M': -1.26},\n 'S': {'B': -0.72, 'S': -0.66}}\n");
    neardup::fuzz::WriteTemp(
        "jieba/finalseg/prob_emit.py",
        "P={'B': {'\\u4e2d': -5.1, '\\u56fd': -6.2, '\\u4eba': -5.5},\n 'E': {'\\u56fd': -4.9, "
        "'\\u6c11': -5.0},\n 'M': {'\\u4eba': -7.0},\n 'S': {'\\u7684': -3.0, '\\u4e2d': "
        "-6.0}}\n");
    return new std::string(d);
  }();
  return *dir;
}

void CheckCut(const neardup::Segmenter& seg, std::string_view text) {
  std::vector<std::string_view> words;
  seg.Cut(text, &words);
  size_t at = 0;
  for (const std::string_view w : words) {
    if (w.empty() || w.data() != text.data() + at) __builtin_trap();
    at += w.size();
  }
  if (at != text.size()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > (size_t{16} << 10)) return 0;
  const std::string_view payload(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string& dir = JiebaDir();
  neardup::SegmenterOptions options;
  options.jieba_dir = dir;
  if ((data[0] & 1) == 0) {
    neardup::fuzz::WriteTemp("jieba/dict.txt", payload);
  } else {
    std::filesystem::copy_file(dir + "/main.txt", dir + "/dict.txt",
                               std::filesystem::copy_options::overwrite_existing);
    options.user_dicts = {neardup::fuzz::WriteTemp("jieba/user.txt", payload)};
  }
  options.hmm = (data[0] & 2) == 0;
  auto seg = neardup::Segmenter::Open(options);
  if (!seg.ok()) {
    if (seg.status().message().empty()) __builtin_trap();
    return 0;
  }
  CheckCut(**seg, "中国人民银行的行长在中国。abc 123");
  CheckCut(**seg, payload);
  if ((*seg)->total_frequency() < 0) __builtin_trap();
  return 0;
}
