// Copyright 2026 The neardup Authors.

#include "neardup/extract.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace neardup {
namespace {

bool EndsWithNoCase(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  return std::equal(suffix.begin(), suffix.end(),
                    s.end() - static_cast<std::ptrdiff_t>(suffix.size()), [](char a, char b) {
                      return std::tolower(static_cast<unsigned char>(a)) ==
                             std::tolower(static_cast<unsigned char>(b));
                    });
}

}  // namespace

DocumentKind DetectDocumentKind(std::string_view path, std::string_view bytes) {
  if (bytes.substr(0, 5) == "%PDF-") return DocumentKind::kPdf;
  // A ZIP under another name than .docx is not taken for a document.
  if (EndsWithNoCase(path, ".docx")) return DocumentKind::kDocx;
  if (EndsWithNoCase(path, ".pdf")) return DocumentKind::kPdf;
  return DocumentKind::kPlainText;
}

Result<std::string> ExtractText(const std::string& path, const ExtractOptions& options,
                                DocumentKind* kind) {
  // Only a regular file: a device (/dev/zero), a FIFO or a directory would
  // be read without end or not at all. Checked on the opened descriptor.
  // Opened without blocking (a FIFO would wait for a writer).
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Status::IOError(path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status::InvalidArgument(path + ": not a regular file");
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(fdopen(fd, "rb"), &std::fclose);
  if (!f) {
    close(fd);
    return Status::IOError(path + ": cannot open: " + std::strerror(errno));
  }
  const auto too_large = [&] {
    return Status::ResourceExhausted(path + ": larger than " +
                                     std::to_string(options.max_file_bytes) + " bytes");
  };
  if (static_cast<uint64_t>(st.st_size) > options.max_file_bytes) return too_large();
  std::string bytes;
  bytes.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), f.get())) > 0) {
    if (n > options.max_file_bytes - bytes.size()) return too_large();  // it grew
    bytes.append(buf, n);
  }
  if (std::ferror(f.get())) return Status::IOError(path + ": read error");
  const DocumentKind k = DetectDocumentKind(path, bytes);
  if (kind) *kind = k;
  switch (k) {
    case DocumentKind::kDocx:
      return ExtractDocxText(bytes, options, path);
    case DocumentKind::kPdf:
      return ExtractPdfText(bytes, options, path);
    case DocumentKind::kPlainText:
      break;
  }
  return bytes;
}

}  // namespace neardup
