// Copyright 2026 The neardup Authors.

#include "neardup/extract.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

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
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::IOError(path + ": read error");
  std::string bytes = std::move(ss).str();
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
