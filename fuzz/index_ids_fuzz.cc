// Copyright 2026 The neardup Authors.
//
// Fuzzes the ids file of a DocumentIndex (doc/index_format.md, "The ids
// file"): beside a fixed valid index file, any ids file must give an index or
// a clean Status, never a crash, an exception or a sanitizer report; an index
// that opens must answer queries with the ids of its lines.
//
// The first input byte picks a mode: even -> the rest is the ids file as is;
// odd -> the rest follows a valid version 2 header (the right index_checksum
// and line count), so the fuzzer reaches the id lines and the pairing checks.

#include <unistd.h>

#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "neardup/document_index.h"

namespace {

struct Fixture {
  std::string path;
  std::string header;  // the valid header line, without the newline
  std::vector<neardup::Fingerprint> fps;
};

const Fixture& GetFixture() {
  static const Fixture fixture = [] {
    Fixture f;
    const auto dir =
        std::filesystem::temp_directory_path() / ("neardup_ids_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    f.path = (dir / "i.idx").string();
    std::mt19937_64 rng(1);
    std::vector<std::string> ids;
    for (int i = 0; i < 8; ++i) {
      ids.push_back("d" + std::to_string(i));
      f.fps.push_back(neardup::Fingerprint::From64(rng()));
    }
    neardup::DocumentIndexHeader h;
    h.pipeline_json = R"({"bits":64})";
    // Version 1: the ids file's lines are read only beside a version 1 index
    // file (a version 2 file holds the ids itself).
    h.tables.file_version = 1;
    neardup::PermutedTableOptions o;
    o.bits = 64;
    o.max_k = 3;
    o.build_threads = 1;
    auto index = neardup::DocumentIndex::Build(f.path, h, o, ids, f.fps);
    if (!index.ok() || !(*index)->Commit().ok()) __builtin_trap();
    std::ifstream in(f.path + ".ids");
    std::getline(in, f.header);
    // Drop "lines":8} so that the harness can append its own count.
    const size_t at = f.header.rfind(",\"lines\":");
    if (at == std::string::npos) __builtin_trap();
    f.header.resize(at);
    return f;
  }();
  return fixture;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Cap the input: the ids file is parsed line by line, linear in its size.
  if (size == 0 || size > (1 << 16)) return 0;
  const Fixture& f = GetFixture();
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) != 0) {
    size_t lines = 0;
    for (char c : text) lines += c == '\n';
    text = f.header + ",\"lines\":" + std::to_string(lines) + "}\n" + text;
  }
  {
    std::ofstream out(f.path + ".ids", std::ios::binary | std::ios::trunc);
    out << text;
  }
  auto index = neardup::DocumentIndex::Open(f.path);
  if (!index.ok()) return 0;
  std::vector<neardup::DocumentMatch> matches;
  for (const neardup::Fingerprint& fp : f.fps) {
    if (!(*index)->Query(fp, 3, &matches).ok()) __builtin_trap();
    for (const auto& m : matches) {
      if (m.distance > 3) __builtin_trap();
    }
  }
  return 0;
}
