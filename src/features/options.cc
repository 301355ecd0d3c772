// Copyright 2026 The neardup Authors.

#include "neardup/options.h"

namespace neardup {

Result<DedupMode> ParseDedupMode(std::string_view word) {
  if (word == "cluster") return DedupMode::kCluster;
  if (word == "stream") return DedupMode::kStream;
  return Status::InvalidArgument("unknown mode '" + std::string(word) +
                                 "' (expected cluster or stream)");
}

const char* DedupModeName(DedupMode mode) {
  return mode == DedupMode::kStream ? "stream" : "cluster";
}

Result<KeepChoice> ParseKeepPolicy(std::string_view word) {
  KeepChoice keep;
  if (word == "first") {
    keep.policy = KeepPolicy::kFirst;
  } else if (word == "longest") {
    keep.policy = KeepPolicy::kLongest;
  } else if (word.starts_with("field:") && word.size() > 6) {
    keep.policy = KeepPolicy::kField;
    keep.field = std::string(word.substr(6));
  } else {
    return Status::InvalidArgument("unknown keep '" + std::string(word) +
                                   "' (expected first, longest or field:NAME)");
  }
  return keep;
}

std::string KeepPolicyName(const KeepChoice& keep) {
  switch (keep.policy) {
    case KeepPolicy::kFirst:
      return "first";
    case KeepPolicy::kLongest:
      return "longest";
    case KeepPolicy::kField:
      return "field:" + keep.field;
  }
  return "first";
}

Result<NormalizeOptions> ParseNormalizeList(std::string_view list) {
  NormalizeOptions n;
  n.nfkc_casefold = false;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find_first_of("+,", start);
    if (end == std::string_view::npos) end = list.size();
    const std::string_view item = list.substr(start, end - start);
    start = end + 1;
    if (item.empty() || item == "none") continue;
    if (item == "nfkc") {
      n.nfkc_casefold = true;
    } else if (item == "ws") {
      n.collapse_whitespace = true;
    } else if (item == "t2s" || item == "tw2s" || item == "tw2sp" || item == "tw2sp2" ||
               item == "hk2s") {
      n.t2s = std::string(item);
    } else {
      return Status::InvalidArgument(
          "unknown normalization '" + std::string(item) +
          "' (expected nfkc, t2s, tw2s, tw2sp, tw2sp2, hk2s, ws or none)");
    }
  }
  return n;
}

std::string NormalizeListName(const NormalizeOptions& n) {
  std::string out;
  auto add = [&out](std::string_view item) {
    if (!out.empty()) out += '+';
    out += item;
  };
  if (n.nfkc_casefold) add("nfkc");
  if (!n.t2s.empty()) {
    std::string t2s = n.t2s;
    if (t2s.ends_with(".json")) t2s.resize(t2s.size() - 5);
    add(t2s);
  }
  if (n.collapse_whitespace) add("ws");
  return out.empty() ? "none" : out;
}

}  // namespace neardup
