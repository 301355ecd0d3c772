// Copyright 2026 The neardup Authors.

#include "neardup/document_pass.h"

#include "engine/read_pass.h"
#include "neardup/pipeline.h"

namespace neardup {
namespace engine_internal {
namespace {

// The documents of a vector, in order.
class VectorReader final : public DocumentReader {
 public:
  explicit VectorReader(std::shared_ptr<const std::vector<Document>> docs)
      : docs_(std::move(docs)) {
    stats_.files = docs_->empty() ? 0 : 1;
  }
  bool Next(Document* doc) override {
    if (next_ >= docs_->size()) return false;
    *doc = (*docs_)[next_++];
    ++stats_.documents;
    stats_.bytes += doc->text.size();
    return true;
  }
  const InputStats& stats() const override { return stats_; }

 private:
  std::shared_ptr<const std::vector<Document>> docs_;
  size_t next_ = 0;
  InputStats stats_;
};

}  // namespace

std::unique_ptr<DocumentReader> VectorDocumentReader(
    std::shared_ptr<const std::vector<Document>> documents) {
  return std::make_unique<VectorReader>(std::move(documents));
}

void WarnFewerThreads(const ThreadPool& pool, const std::function<void(const std::string&)>& warn) {
  if (pool.start_error().empty() || !warn) return;
  warn("started " + std::to_string(pool.threads() - 1) + " of " +
       std::to_string(pool.requested() - 1) + " worker threads (" + pool.start_error() +
       "); continuing with fewer");
}

Result<CountedLines> CountInputLines(const DedupInput& input, const Normalizer* normalizer,
                                     int threads, const DedupProgress& progress,
                                     const std::function<void(const std::string&)>& warn) {
  const bool hold = !input.replayable;
  // Issues are reported by the pass that reads for good: this one only when
  // it holds the documents.
  NEARDUP_ASSIGN_OR_RETURN(auto reader, input.open(hold));
  // The line keys on the pool (reading ahead), counted in input order: a
  // serial pass here was a third of dedup's time at one thread and kept two
  // threads below 1.5x one (doc/benchmarks.md, text core).
  CountedLines out;
  LineCounter counter;
  ThreadPool pool(threads);
  WarnFewerThreads(pool, warn);
  ReadPass<std::vector<uint64_t>>(
      &pool, *reader, "counting lines (boilerplate)", progress,
      [&](const Document& doc) { return DocumentLineKeys(doc.text, normalizer); },
      [&](Document& doc, std::vector<uint64_t>& keys) {
        counter.AddKeys(keys);
        if (hold) out.held.push_back(std::move(doc));
      });
  out.held_stats = reader->stats();
  out.stats = std::move(counter).Finish();
  return out;
}

}  // namespace engine_internal

DedupInput DocumentsInput(std::shared_ptr<const std::vector<Document>> documents) {
  DedupInput input;
  input.open = [documents](bool) -> Result<std::unique_ptr<DocumentReader>> {
    return engine_internal::VectorDocumentReader(documents);
  };
  input.replayable = true;
  return input;
}

template <typename T>
void ForEachDocumentAs(DocumentReader& reader, const DocumentPassOptions& options,
                       const std::function<T(const Document&)>& process,
                       const std::function<void(const Document&, T&)>& emit) {
  ThreadPool pool(options.threads);
  engine_internal::WarnFewerThreads(pool, options.warn);
  engine_internal::ReadPass<T>(&pool, reader, options.phase, options.progress, process,
                               [&](Document& doc, T& result) { emit(doc, result); });
}

template void ForEachDocumentAs<std::string>(
    DocumentReader&, const DocumentPassOptions&, const std::function<std::string(const Document&)>&,
    const std::function<void(const Document&, std::string&)>&);
template void ForEachDocumentAs<DocumentFingerprint>(
    DocumentReader&, const DocumentPassOptions&,
    const std::function<DocumentFingerprint(const Document&)>&,
    const std::function<void(const Document&, DocumentFingerprint&)>&);

}  // namespace neardup
