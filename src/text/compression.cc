// Copyright 2026 The neardup Authors.

#include "text/compression.h"

#include <string>

namespace neardup {

std::string_view DetectCompression(std::string_view head) {
  if (head.starts_with("\x1f\x8b")) return "gzip";
  if (head.starts_with("\x28\xb5\x2f\xfd")) return "zstd";
  if (head.starts_with(kXzMagic)) return "xz";
  // "BZh" and the block size, '1' to '9'.
  if (head.size() >= 4 && head.starts_with("BZh") && head[3] >= '1' && head[3] <= '9') {
    return "bzip2";
  }
  return "";
}

std::string_view ArchiveName(std::string_view head) {
  if (head.starts_with("PK\x03\x04") || head.starts_with("PK\x05\x06")) return "zip";
  if (head.starts_with("7z\xBC\xAF\x27\x1C")) return "7z";
  if (head.size() >= 262 && head.substr(257, 5) == "ustar") return "tar";
  return "";
}

std::string ArchiveReason(std::string_view archive, std::string_view codec) {
  return "a " + std::string(archive) + " archive" +
         (codec.empty() ? std::string() : " (" + std::string(codec) + "-compressed)") +
         ": neardup reads no archive's members; extract it and name the directory";
}

}  // namespace neardup
