// Copyright 2026 The neardup Authors.
//
// libFuzzer target for the reader's gzip layer: a .gz file read as JSONL, as
// a man page and as one text document. The first input byte picks how the
// rest becomes the file:
//   bit 0 clear: the bytes as they are (gzip headers, trailers and deflate
//                streams mutated directly);
//   bit 0 set:   the bytes gzip-compressed, then (bit 1 set) cut short or
//                (bit 2 set) with one byte flipped, at a place taken from the
//                first byte, so that the fuzzer reaches the formats behind
//                the gzip layer and broken streams alike.
// Every document must be valid UTF-8 and counted; a broken stream is an issue
// reported by the reader, never a crash. Input capped at 64 KiB and documents
// at 1 MiB (a gzip bomb is cut there).

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "neardup/text.h"

namespace {

std::string Gzip(std::string_view in) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) __builtin_trap();
  std::string out(deflateBound(&z, in.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) __builtin_trap();
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void ReadAs(const std::string& path, neardup::InputFormat format) {
  neardup::ReadOptions options;
  options.format = format;
  options.max_document_bytes = 1 << 20;
  uint64_t issues = 0;
  options.on_issue = [&issues](const neardup::InputIssue&) { ++issues; };
  auto reader = neardup::DocumentReader::Open({path}, options);
  if (!reader.ok()) __builtin_trap();
  neardup::Document doc;
  uint64_t docs = 0;
  while ((*reader)->Next(&doc)) {
    ++docs;
    if (!neardup::fuzz::IsValidUtf8(doc.text)) __builtin_trap();
    if (doc.text.size() > options.max_document_bytes) __builtin_trap();
  }
  if ((*reader)->stats().documents != docs) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > (size_t{64} << 10)) return 0;
  const uint8_t mode = data[0];
  const std::string_view payload(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string file;
  if ((mode & 1) == 0) {
    file = std::string(payload);
  } else {
    file = Gzip(payload);
    const size_t at = file.empty() ? 0 : (static_cast<size_t>(mode >> 3) * 131) % file.size();
    if ((mode & 2) != 0) file.resize(at);
    if ((mode & 4) != 0 && at < file.size()) file[at] = static_cast<char>(file[at] ^ 0x5a);
  }
  ReadAs(neardup::fuzz::WriteTemp("in.jsonl.gz", file), neardup::InputFormat::kAuto);
  ReadAs(neardup::fuzz::WriteTemp("page.1.gz", file), neardup::InputFormat::kAuto);
  ReadAs(neardup::fuzz::WriteTemp("doc.txt.gz", file), neardup::InputFormat::kText);
  return 0;
}
