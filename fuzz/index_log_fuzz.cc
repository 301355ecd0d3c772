// Copyright 2026 The neardup Authors.
//
// Fuzzes the write-ahead log parser of a DocumentIndex (doc/index_format.md,
// "The log"): any byte string gives a parsed log or a clean Status, never a
// crash, an exception or a sanitizer report; a parsed log's records lie
// within the input and hold fingerprints of its width.
//
// The first input byte picks a mode: even -> the rest is the log as is;
// odd -> the rest follows a valid header (64 or 128 bits by the byte's second
// bit) and every record gets its right checksum and length complement, so the
// fuzzer reaches the operations behind them.

#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "index/document_log.h"

namespace {

void Put32(std::string* s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*s)[at + i] = static_cast<char>(v >> (8 * i));
}
void Put64(std::string* s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) (*s)[at + i] = static_cast<char>(v >> (8 * i));
}
uint32_t Get32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > (1 << 16)) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) != 0) {
    std::string header(32, '\0');
    header.replace(0, 8, "NDUPLOG1");
    Put32(&header, 8, 1);
    Put32(&header, 12, (data[0] & 2) != 0 ? 128 : 64);
    Put64(&header, 16, 42);
    Put64(&header, 24, XXH3_64bits(header.data(), 24));
    // Fix each record's length complement and checksum, clamping lengths.
    size_t pos = 0;
    while (bytes.size() - pos >= 16) {
      uint32_t len = Get32(bytes, pos);
      if (len > bytes.size() - pos - 16) len = static_cast<uint32_t>(bytes.size() - pos - 16);
      Put32(&bytes, pos, len);
      Put32(&bytes, pos + 4, ~len);
      Put64(&bytes, pos + 8, XXH3_64bits(bytes.data() + pos + 16, len));
      pos += 16 + len;
    }
    bytes = header + bytes;
  }
  auto log = neardup::index_internal::ParseLog(bytes, "fuzz-input");
  if (!log.ok()) return 0;
  if (log->good_bytes > bytes.size()) __builtin_trap();
  for (const auto& batch : log->batches) {
    if (batch.offset >= bytes.size()) __builtin_trap();
    for (const auto& op : batch.ops) {
      if (op.type != neardup::index_internal::LogOp::Type::kRemove &&
          op.type != neardup::index_internal::LogOp::Type::kTime &&
          op.fingerprint.bits() != log->bits) {
        __builtin_trap();
      }
    }
  }
  return 0;
}
