// Copyright 2026 The neardup Authors.
//
// The engine's reading passes (neardup/document_pass.h): ReadPass, the one
// loop that reads documents on a pool and reports progress in bytes of input
// as stored, for any worker result type (the dedup job's MinHash and
// SimHash results, the public ForEachDocumentAs), and CountInputLines, the
// boilerplate counting pass of the dedup job and of the text index's build.

#ifndef NEARDUP_ENGINE_READ_PASS_H_
#define NEARDUP_ENGINE_READ_PASS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "neardup/boilerplate.h"
#include "neardup/document_pass.h"
#include "neardup/status.h"
#include "neardup/text.h"
#include "util/thread_pool.h"

namespace neardup::engine_internal {

inline constexpr BatchLimits kReadBatch{
    .max_items = 512, .max_cost = size_t{8} << 20, .read_ahead = true};

// Calls `warn` (when set) when `pool` started fewer threads than asked.
void WarnFewerThreads(const ThreadPool& pool, const std::function<void(const std::string&)>& warn);

// Every document of `reader`: process(const Document&) -> Out on the pool's
// threads, emit(Document&, Out&) on the calling thread in input order, and
// progress(phase, MB, 0, "MB") every 512 documents. The MB are of input read
// as stored (InputStats::input_bytes), or of text where the reader has none
// (documents in memory). With read-ahead, Next runs on the pool's threads,
// one call at a time: it publishes the count for the emitting thread.
template <typename Out, typename ProcessFn, typename EmitFn>
void ReadPass(ThreadPool* pool, DocumentReader& reader, std::string_view phase,
              const DedupProgress& progress, ProcessFn&& process, EmitFn&& emit) {
  std::atomic<uint64_t> stored{0};
  uint64_t done_docs = 0, text_bytes = 0;
  OrderedParallelMap<Document, Out>(
      pool, kReadBatch,
      [&](Document* doc) {
        const bool more = reader.Next(doc);
        stored.store(reader.stats().input_bytes, std::memory_order_relaxed);
        return more;
      },
      [](const Document& doc) { return doc.text.size(); }, std::forward<ProcessFn>(process),
      [&](Document& doc, Out& out) {
        text_bytes += doc.text.size();  // before emit, which may move the document
        emit(doc, out);
        if (progress && ++done_docs % 512 == 0) {
          const uint64_t s = stored.load(std::memory_order_relaxed);
          progress(phase, static_cast<double>(s > 0 ? s : text_bytes) / 1e6, 0, "MB");
        }
      });
}

// The boilerplate counting pass: the line counts of every document of
// `input` (keys made after `normalizer` when not null: boilerplate.h), on
// `threads` threads, with progress "counting lines (boilerplate)". When the
// input is not replayable (standard input) its documents are held in `held`
// and the reader's stats in `held_stats`, for the fingerprint pass to
// replay; issues are then reported by this pass (else by the next one).
struct CountedLines {
  LineStats stats;
  std::vector<Document> held;
  InputStats held_stats;
};
Result<CountedLines> CountInputLines(const DedupInput& input, const Normalizer* normalizer,
                                     int threads, const DedupProgress& progress,
                                     const std::function<void(const std::string&)>& warn = {});

// A reader over documents in memory (the ones CountInputLines held).
std::unique_ptr<DocumentReader> VectorDocumentReader(
    std::shared_ptr<const std::vector<Document>> documents);

}  // namespace neardup::engine_internal

#endif  // NEARDUP_ENGINE_READ_PASS_H_
