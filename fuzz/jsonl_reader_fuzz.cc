// Copyright 2026 The neardup Authors.
//
// Fuzzes the document reader in JSONL, lines and auto mode: any bytes must be
// read without a crash, every line either becomes a document or an issue.

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "neardup/text.h"

namespace {

void ReadAs(const std::string& path, neardup::InputFormat format) {
  neardup::ReadOptions options;
  options.format = format;
  options.max_document_bytes = 1 << 16;
  options.extra_fields = {"score"};
  uint64_t issues = 0;
  options.on_issue = [&issues](const neardup::InputIssue&) { ++issues; };
  auto reader = neardup::DocumentReader::Open({path}, options);
  if (!reader.ok()) std::abort();
  neardup::Document doc;
  uint64_t docs = 0;
  while ((*reader)->Next(&doc)) {
    ++docs;
    // Every produced text must be valid UTF-8 now.
    std::string copy = doc.text;
    if (neardup::RepairUtf8(&copy).invalid != 0) std::abort();
  }
  if ((*reader)->stats().documents != docs) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 16)) return 0;
  const int fd = memfd_create("neardup_fuzz", 0);
  if (fd < 0) return 0;
  if (write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return 0;
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  ReadAs(path, neardup::InputFormat::kJsonl);
  ReadAs(path, neardup::InputFormat::kLines);
  ReadAs(path, neardup::InputFormat::kAuto);
  close(fd);
  return 0;
}
