// Copyright 2026 The neardup Authors.
//
// The error every missing piece of jieba data reports.

#ifndef NEARDUP_SEGMENT_DATA_ERROR_H_
#define NEARDUP_SEGMENT_DATA_ERROR_H_

#include <string>
#include <string_view>

#include "neardup/status.h"

namespace neardup::segment {

inline constexpr std::string_view kInstallHint =
    "install Debian's python3-jieba (apt-get install python3-jieba) or set --jieba-dir / "
    "NEARDUP_JIEBA_DIR";

inline Status MissingDataError(const std::string& path) {
  return Status::NotFound("cannot open jieba data file " + path + "; " + std::string(kInstallHint));
}

}  // namespace neardup::segment

#endif  // NEARDUP_SEGMENT_DATA_ERROR_H_
