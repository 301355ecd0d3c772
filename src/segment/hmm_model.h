// Copyright 2026 The neardup Authors.
//
// HmmModel: jieba.finalseg's BMES hidden Markov model, read from the Python
// modules finalseg/prob_start.py, prob_trans.py and prob_emit.py (dict
// literals "P={...}"), and its Viterbi decoder, which repeats finalseg.viterbi
// operation for operation (same additions in the same order, same tie
// breaking: Python's max over (prob, state) tuples prefers the larger state
// letter on equal probabilities).

#ifndef NEARDUP_SEGMENT_HMM_MODEL_H_
#define NEARDUP_SEGMENT_HMM_MODEL_H_

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/status.h"

namespace neardup::segment {

// States in alphabetical order, so that a larger index is a larger letter.
enum HmmState : uint8_t { kB = 0, kE = 1, kM = 2, kS = 3 };

inline constexpr double kMinFloat = -3.14e100;  // finalseg.MIN_FLOAT

class HmmModel {
 public:
  // Reads <finalseg_dir>/prob_{start,trans,emit}.py. Errors name the file.
  Status Load(const std::string& finalseg_dir);

  // finalseg.viterbi over the code points [obs, obs + n), all in
  // U+4E00..U+9FD5 (finalseg only decodes runs of those). Writes the state of
  // each character to states[0..n). `scratch` is reused between calls.
  // REQUIRES: n > 0
  void Viterbi(const uint32_t* obs, size_t n, uint8_t* states, std::vector<uint8_t>* scratch) const;

 private:
  static constexpr uint32_t kFirst = 0x4E00;
  static constexpr uint32_t kLast = 0x9FD5;

  double Emit(int state, uint32_t cp) const { return emit_[(cp - kFirst) * 4 + state]; }

  std::array<double, 4> start_{};
  std::array<std::array<double, 4>, 4> trans_{};  // trans_[from][to]
  std::vector<double> emit_;                      // (cp - kFirst) * 4 + state
};

// Parses the Python module text `source` that assigns a dict literal to P
// (string keys; values are numbers or nested dicts of the same kind) and calls
// `on_entry(outer_key, inner_key, value)` for each number: outer_key is empty
// for a flat dict. Keys are returned as UTF-32. Supports '...' / "..." strings
// with an optional u prefix and the escapes \uXXXX \UXXXXXXXX \xXX \\ \' \" \n
// \r \t. `file` is used in error messages.
Status ParsePythonProbDict(
    std::string_view source, const std::string& file,
    const std::function<Status(const std::u32string&, const std::u32string&, double)>& on_entry);

}  // namespace neardup::segment

#endif  // NEARDUP_SEGMENT_HMM_MODEL_H_
