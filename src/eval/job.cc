// Copyright 2026 The neardup Authors.
//
// RunEvalDedupJob: the evaluations' dedup, the library's DedupJob (the job
// `neardup dedup` runs) over texts in memory.

#include <chrono>
#include <memory>
#include <string>

#include "neardup/eval.h"

namespace neardup {

Result<EvalDedupRun> RunEvalDedupJob(const std::vector<std::string>& texts,
                                     DedupJobOptions options) {
  const auto start = std::chrono::steady_clock::now();
  auto documents = std::make_shared<std::vector<Document>>(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    (*documents)[i].id = std::to_string(i);
    (*documents)[i].text = texts[i];
  }
  NEARDUP_ASSIGN_OR_RETURN(auto job, DedupJob::Create(std::move(options)));
  const DedupInput input = DocumentsInput(documents);
  NEARDUP_RETURN_IF_ERROR(job->CountLines(input));
  DedupCorpus corpus;
  NEARDUP_RETURN_IF_ERROR(job->Fingerprint(input, &corpus).status());
  EvalDedupRun run;
  run.k = job->dedup_options().k;
  run.minhash = job->method().is_minhash();
  NEARDUP_ASSIGN_OR_RETURN(run.result,
                           job->Join(corpus, [&](const DedupPair& p) { run.pairs.push_back(p); }));
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

}  // namespace neardup
