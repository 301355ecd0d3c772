// Copyright 2026 The neardup Authors.

#include "index/document_files.h"

#include <cinttypes>
#include <cstdio>
#include <vector>

#include "neardup/document_index.h"

namespace neardup {
namespace index_internal {

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, v);
  return buf;
}

std::string HexBytes(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}
std::optional<std::string> BytesOfHex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  const auto digit = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return out;
}

std::string IdsPath(const std::string& path) { return path + ".ids"; }
std::string PendingIdsPath(const std::string& path, uint64_t checksum) {
  return path + ".ids." + Hex64(checksum);
}
std::string LockPath(const std::string& path) { return path + ".lock"; }
std::string LogPath(const std::string& path) { return path + ".log"; }
std::string PendingLogPath(const std::string& path, uint64_t checksum) {
  return path + ".log." + Hex64(checksum);
}

bool IsLeftover(const std::string& name, const std::string& base, uint64_t keep) {
  if (name == base + ".tmp") return true;
  for (const char* suffix : {".ids.", ".log."}) {
    const std::string prefix = base + suffix;
    if (name.size() != prefix.size() + 16 || name.compare(0, prefix.size(), prefix) != 0) {
      continue;
    }
    const std::string hex = name.substr(prefix.size());
    if (hex.find_first_not_of("0123456789abcdef") != std::string::npos) return false;
    return hex != Hex64(keep);
  }
  return false;
}

}  // namespace index_internal

using index_internal::IdsPath;
using index_internal::LockPath;
using index_internal::LogPath;

std::vector<std::string> DocumentIndex::OwnedFiles(const std::string& path) {
  return {path, IdsPath(path), LogPath(path), LockPath(path), path + ".tmp"};
}

bool DocumentIndex::IsOwnedFile(const std::string& path, const std::string& file) {
  for (const std::string& owned : OwnedFiles(path)) {
    if (file == owned) return true;
  }
  for (const std::string& prefix : {IdsPath(path) + ".", LogPath(path) + "."}) {
    if (file.size() == prefix.size() + 16 && file.starts_with(prefix) &&
        file.find_first_not_of("0123456789abcdef", prefix.size()) == std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace neardup
