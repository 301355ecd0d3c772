// Copyright 2026 The neardup Authors.
//
// A reading pass over documents: the one every job of the engine reads with
// (the dedup job's boilerplate and fingerprint passes, the text index's
// build) and the command line's one-line-per-document commands too. A pass
// reads a DocumentReader on a pool of threads (reading ahead of the work),
// runs a worker function on each document in parallel, hands the results
// back on the calling thread in input order, and reports its progress in
// bytes of input as stored: compressed bytes for a compressed file
// (InputStats::input_bytes), so that a front end can set them against the
// files' sizes and show a percentage on .gz, .zst, .xz and .bz2 input alike.
//
// Usage:
//
//   auto reader = neardup::DocumentReader::Open({"corpus.jsonl.gz"}, {});
//   neardup::DocumentPassOptions options;
//   options.phase = "reading";
//   options.progress = [](std::string_view phase, double mb, double, std::string_view) {...};
//   neardup::ForEachDocumentAs<std::string>(**reader, options,
//       [](const neardup::Document& d) { return Work(d.text); },     // worker threads
//       [](const neardup::Document& d, std::string& r) { Use(r); });  // in input order

#ifndef NEARDUP_DOCUMENT_PASS_H_
#define NEARDUP_DOCUMENT_PASS_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/status.h"
#include "neardup/text.h"

namespace neardup {

// Progress of a job: phase ("counting lines (boilerplate)", "reading +
// fingerprints" in MB of input read as stored, or of text where there is no
// stored form; a join's phases as DedupOptions::progress reports them;
// "output" in records), done and total (0: unknown). On the calling thread.
using DedupProgress =
    std::function<void(std::string_view phase, double done, double total, std::string_view unit)>;

// Where a job's documents come from (the dedup job's and the text index's
// build alike). `open(report_issues)` returns a reader over the documents;
// report_issues false asks it to stay silent about bad input (another pass
// reports it). When `replayable`, open may be called twice (the boilerplate
// pass, then the fingerprint pass) and must give the same documents;
// otherwise (standard input) it is called once and the boilerplate pass
// holds the documents in memory.
struct DedupInput {
  std::function<Result<std::unique_ptr<DocumentReader>>(bool report_issues)> open;
  bool replayable = true;
};

// A DedupInput over documents already in memory (replayable).
DedupInput DocumentsInput(std::shared_ptr<const std::vector<Document>> documents);

// How ForEachDocumentAs reads.
struct DocumentPassOptions {
  int threads = 0;  // worker threads (0: every core)
  // Reported every 512 documents as progress(phase, MB of input read as
  // stored, 0, "MB"); may be empty.
  std::string phase = "reading";
  DedupProgress progress;
  // Told when the system refused some worker threads (a memory or process
  // limit): the pass goes on with the threads there are. May be empty.
  std::function<void(const std::string&)> warn;
};

// Reads every document of `reader`: process(doc) on worker threads (safe
// to call concurrently), emit(doc, result) on the calling thread in input
// order. At most two batches of documents (512 documents or 8 MiB of text
// each) are held at a time. Instantiated for std::string and
// DocumentFingerprint.
template <typename T>
void ForEachDocumentAs(DocumentReader& reader, const DocumentPassOptions& options,
                       const std::function<T(const Document&)>& process,
                       const std::function<void(const Document&, T&)>& emit);

}  // namespace neardup

#endif  // NEARDUP_DOCUMENT_PASS_H_
