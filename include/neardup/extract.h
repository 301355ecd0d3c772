// Copyright 2026 The neardup Authors.
//
// Text extraction from .docx (Office Open XML) and .pdf files.
//
//   neardup::Result<std::string> text = neardup::ExtractText("report.docx");
//   if (!text.ok()) std::cerr << text.status().ToString() << "\n";
//
// Input is treated as hostile: sizes are bounded by ExtractOptions, truncated
// or malformed archives, malformed XML, encrypted PDFs and PDFs without a text
// layer each give a clear error Status; nothing throws.
//
// Output text is UTF-8. docx: one line per paragraph (w:p), text runs (w:t)
// concatenated, w:tab -> '\t', w:br / w:cr -> '\n', every paragraph ends with
// '\n'. pdf: poppler's text layer, page by page, each page followed by '\n'.
//
// Thread safety: the functions are reentrant.

#ifndef NEARDUP_EXTRACT_H_
#define NEARDUP_EXTRACT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "neardup/status.h"

namespace neardup {

struct ExtractOptions {
  // The most bytes read from a decompressed ZIP member (word/document.xml),
  // and the most bytes a PDF's Flate streams may inflate to together. More
  // is refused (ResourceExhausted), which defuses ZIP and Flate bombs.
  // Default 256 MiB.
  uint64_t max_uncompressed_bytes = uint64_t{256} << 20;
  // The most bytes of text returned. Default 256 MiB.
  uint64_t max_text_bytes = uint64_t{256} << 20;
  // The largest file ExtractText reads; a larger one is ResourceExhausted
  // (so is a file that grows past it while read). Default 256 MiB.
  uint64_t max_file_bytes = uint64_t{256} << 20;
};

enum class DocumentKind { kPlainText, kDocx, kPdf };

// By magic bytes first ("%PDF-", "PK\3\4" + extension), then by extension
// (.docx, .pdf, case-insensitive); everything else is plain text.
DocumentKind DetectDocumentKind(std::string_view path, std::string_view bytes);

// The text of a .docx held in `bytes`. `origin` names it in error messages.
Result<std::string> ExtractDocxText(std::string_view bytes,
                                    const ExtractOptions& options = ExtractOptions(),
                                    std::string_view origin = "<docx>");

// The text layer of a .pdf held in `bytes`. An encrypted PDF gives
// NotSupported; a PDF whose text is empty gives InvalidArgument "no text layer".
// A PDF that nests graphics states (q) deeper than 32,768, or whose Flate
// streams inflate beyond max_uncompressed_bytes, gives ResourceExhausted
// before poppler reads it (poppler's memory grows with that nesting).
Result<std::string> ExtractPdfText(std::string_view bytes,
                                   const ExtractOptions& options = ExtractOptions(),
                                   std::string_view origin = "<pdf>");

// Reads `path`; docx and pdf are converted to text, any other file comes back
// byte for byte. `kind`, when not null, receives what the file was taken for.
// InvalidArgument "PATH: not a regular file" for a device, FIFO, socket or
// directory (opened without blocking); ResourceExhausted for a file larger
// than options.max_file_bytes.
Result<std::string> ExtractText(const std::string& path,
                                const ExtractOptions& options = ExtractOptions(),
                                DocumentKind* kind = nullptr);

}  // namespace neardup

#endif  // NEARDUP_EXTRACT_H_
