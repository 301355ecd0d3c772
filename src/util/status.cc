// Copyright 2026 The neardup Authors.

#include "neardup/status.h"

#include <cstdio>
#include <cstdlib>

namespace neardup {

std::string Status::ToString() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kNotFound:
      name = "NotFound";
      break;
    case Code::kCorruption:
      name = "Corruption";
      break;
    case Code::kInvalidArgument:
      name = "InvalidArgument";
      break;
    case Code::kIOError:
      name = "IOError";
      break;
    case Code::kNotSupported:
      name = "NotSupported";
      break;
    case Code::kResourceExhausted:
      name = "ResourceExhausted";
      break;
  }
  std::string out(name);
  out += ": ";
  out += message_;
  return out;
}

namespace internal {

void DieOnBadResultAccess(const Status& status) {
  std::fprintf(stderr, "neardup: Result::value() on an error: %s\n", status.ToString().c_str());
  std::abort();
}

}  // namespace internal

}  // namespace neardup
