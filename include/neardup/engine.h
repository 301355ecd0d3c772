// Copyright 2026 The neardup Authors.
//
// The engine layer (doc/design.md): the jobs every front end runs, the
// command line, the Python module, serve and neardup-mpi alike, so that one
// job gives one answer at every door, and the option words they share.
//
//   neardup/document_pass.h  the reading pass every job reads with (progress
//                        in bytes of input as stored), and a job's input
//   neardup/dedup_job.h  the dedup job: inputs, method, boilerplate, join,
//                        cluster rule, keep policy, outputs; one call
//   neardup/dedup_over_ranks.h  its cluster-mode join split over processes
//                        (neardup-mpi), one interface for every method
//   neardup/options.h    one parser and one printer per shared option word
//   neardup/text_index.h the text index: method, pipeline, line counts and
//                        a DocumentIndex; one empty-document policy, one stats

#ifndef NEARDUP_ENGINE_H_
#define NEARDUP_ENGINE_H_

#include "neardup/dedup_job.h"
#include "neardup/dedup_over_ranks.h"
#include "neardup/document_pass.h"
#include "neardup/options.h"
#include "neardup/text_index.h"

#endif  // NEARDUP_ENGINE_H_
