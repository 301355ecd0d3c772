// Copyright 2026 The neardup Authors.
//
// A pre-flight scan of a PDF's streams before poppler sees it. poppler keeps
// one graphics state (about 1 KB) per unmatched `q` operator and has no limit
// of its own: a 4 KB PDF whose content stream inflates to a million nested
// `q` took 957 MB. The scan inflates every FlateDecode (or unfiltered) stream
// in bounded memory, tokenizes it as content-stream syntax and tracks the
// nesting depth of q / Q, carried across streams (a page may concatenate
// several), so the memory poppler can be made to spend is bounded before it
// starts.
//
// Streams under other filters (LZW, ASCII85, ASCIIHex, RunLength or filter
// chains) are not inflated and not scanned: they are rare for content streams,
// and none of them compresses as well as Flate.

#ifndef NEARDUP_EXTRACT_PDF_SCAN_H_
#define NEARDUP_EXTRACT_PDF_SCAN_H_

#include <cstdint>
#include <string_view>

#include "neardup/status.h"

namespace neardup::pdf_internal {

// The deepest q nesting the scan accepts. PDF 1.7's Annex C gives 28 as a
// typical implementation limit; this leaves room for generators that never
// close their states while bounding poppler's stack to tens of megabytes.
inline constexpr int kMaxGraphicsStateDepth = 1 << 15;

struct PdfScanStats {
  uint64_t streams_scanned = 0;  // Flate or unfiltered streams tokenized
  uint64_t streams_skipped = 0;  // other filters: not inflated
  uint64_t bytes_scanned = 0;    // content bytes after inflation
  int max_depth = 0;             // deepest q nesting seen
};

// OK, or ResourceExhausted naming `origin` when the q nesting exceeds
// `max_depth` or the scanned streams inflate to more than `max_inflated`
// bytes. A stream that fails to inflate is scanned as far as it goes (poppler
// makes its own decision about it).
Status ScanPdfStreams(std::string_view pdf, uint64_t max_inflated, int max_depth,
                      std::string_view origin, PdfScanStats* stats = nullptr);

}  // namespace neardup::pdf_internal

#endif  // NEARDUP_EXTRACT_PDF_SCAN_H_
