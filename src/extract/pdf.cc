// Copyright 2026 The neardup Authors.
//
// .pdf text: poppler-cpp's text layer, page by page.

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>

#include <climits>
#include <exception>
#include <memory>
#include <string>

#include "extract/pdf_scan.h"
#include "neardup/extract.h"

namespace neardup {
namespace {

void IgnorePopplerMessage(const std::string&, void*) {}

// poppler prints parse complaints to stderr by default; hostile input would
// flood it. Errors are reported through Status instead.
void SilencePoppler() {
  static const bool once = [] {
    poppler::set_debug_error_function(IgnorePopplerMessage, nullptr);
    return true;
  }();
  (void)once;
}

bool IsBlank(const std::string& s) {
  for (const char c : s) {
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t' && c != '\f') return false;
  }
  return true;
}

}  // namespace

Result<std::string> ExtractPdfText(std::string_view bytes, const ExtractOptions& options,
                                   std::string_view origin) {
  const std::string where(origin);
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return Status::ResourceExhausted(where + ": PDF larger than 2 GiB");
  }
  // poppler's memory grows with the nesting of graphics states and has no
  // bound of its own: refuse such a file before handing it over.
  NEARDUP_RETURN_IF_ERROR(pdf_internal::ScanPdfStreams(
      bytes, options.max_uncompressed_bytes, pdf_internal::kMaxGraphicsStateDepth, where));
  SilencePoppler();
  try {
    std::unique_ptr<poppler::document> doc(
        poppler::document::load_from_raw_data(bytes.data(), static_cast<int>(bytes.size())));
    if (!doc) {
      // poppler returns null both for garbage and for a PDF whose password is
      // not the empty one; tell them apart by the /Encrypt key.
      if (bytes.find("/Encrypt") != std::string_view::npos) {
        return Status::NotSupported(where + ": PDF is encrypted (a password is required)");
      }
      return Status::InvalidArgument(where + ": not a readable PDF");
    }
    if (doc->is_locked()) {
      return Status::NotSupported(where + ": PDF is encrypted (a password is required)");
    }
    std::string text;
    const int pages = doc->pages();
    for (int i = 0; i < pages; ++i) {
      std::unique_ptr<poppler::page> page(doc->create_page(i));
      if (!page) continue;
      const poppler::byte_array utf8 = page->text().to_utf8();
      text.append(utf8.begin(), utf8.end());
      if (text.empty() || text.back() != '\n') text += '\n';
      if (text.size() > options.max_text_bytes) {
        return Status::ResourceExhausted(where + ": text is larger than the limit of " +
                                         std::to_string(options.max_text_bytes) + " bytes");
      }
    }
    if (IsBlank(text)) {
      return Status::InvalidArgument(where + ": PDF has no text layer (" + std::to_string(pages) +
                                     " page(s), no text); OCR is not supported");
    }
    return text;
  } catch (const std::exception& e) {
    return Status::InvalidArgument(where + ": poppler failed: " + e.what());
  }
}

}  // namespace neardup
