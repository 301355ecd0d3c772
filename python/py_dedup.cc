// Copyright 2026 The neardup Authors.

#include "py_dedup.h"

#include <pybind11/stl.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "neardup/dedup_job.h"
#include "neardup/options.h"

namespace py = pybind11;

namespace neardup::python {
namespace {

std::string Utf8(const py::handle& obj, const char* what) {
  if (PyUnicode_Check(obj.ptr())) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(obj.ptr(), &size);
    if (data == nullptr) throw py::error_already_set();
    return std::string(data, static_cast<size_t>(size));
  }
  if (PyBytes_Check(obj.ptr())) {
    return std::string(PyBytes_AS_STRING(obj.ptr()),
                       static_cast<size_t>(PyBytes_GET_SIZE(obj.ptr())));
  }
  throw py::type_error(std::string(what) + " must be str or bytes, not " +
                       std::string(py::str(obj.get_type().attr("__name__"))));
}

// Thrown by the progress callback when a signal handler raised (Ctrl-C):
// it unwinds the job on the calling thread between two batches (no worker
// is running then), and the Python error is raised.
struct Interrupted {};

}  // namespace

void AddDedup(py::module_& m, std::function<Method(const py::handle&)> to_method,
              std::function<void(const Status&)> check) {
  m.attr("_DEFAULT_BAND_SEED") = py::int_(kDefaultBandSeed);
  // The job's defaults (the command line's), for the keyword arguments.
  m.attr("_DEFAULT_VERIFY_JACCARD") = py::float_(DedupJobOptions{}.verify_jaccard);
  m.attr("_DEFAULT_VERIFY_SHORT_FEATURES") = py::int_(DedupJobOptions{}.verify_short_features);
  m.attr("_DEFAULT_VERIFY_SHORT_JACCARD") = py::float_(DedupJobOptions{}.verify_short_jaccard);
  // The job of `neardup dedup` over documents given as (texts, titles,
  // scores): scores are the keep field's values as the JSONL reader keeps
  // them (a str, or the JSON text of a number; None: absent). Returns
  // (records, summary, verifies): per document (fingerprint hex or None
  // (minhash), cluster, duplicate, nearest, score (distance or jaccard),
  // empty, the verified Jaccard (4 decimals, as the CLI's records; None
  // when none)); verifies: whether the records carry "jaccard".
  m.def(
      "_dedup",
      [to_method, check](const py::list& texts, const py::list& titles, const py::list& scores,
                         const py::handle& method_obj, const std::string& method_text,
                         std::optional<int> k, const std::string& mode, const std::string& keep,
                         const std::string& cluster, const std::string& boilerplate,
                         int boilerplate_min_docs, std::optional<size_t> short_features,
                         std::optional<double> short_jaccard, std::optional<std::string> short_rule,
                         double verify_jaccard, size_t verify_short_features,
                         double verify_short_jaccard, const std::string& join, double recall,
                         uint64_t band_seed, int threads) {
        const auto value = [&check](auto result) {
          check(result.status());
          return std::move(*result);
        };
        DedupJobOptions o;
        o.method = to_method(method_obj);
        o.method_text = method_text;
        o.k = k ? *k : -1;
        if (o.k < 0 && k) {
          check(Status::InvalidArgument("k must be >= 0, got " + std::to_string(*k)));
        }
        o.mode = value(ParseDedupMode(mode));
        const KeepChoice choice = value(ParseKeepPolicy(keep));
        o.keep = choice.policy;
        o.score_field = choice.field;
        o.cluster_rule = value(ParseClusterRule(cluster));
        if (!boilerplate.empty()) o.boilerplate = value(ParseBoilerplateMode(boilerplate));
        o.boilerplate_min_docs = boilerplate_min_docs;
        // None: the job's default (ResolveShortRule), as the CLI's auto.
        o.short_features = short_features;
        o.short_jaccard = short_jaccard;  // None: the rule's default
        if (short_rule) o.short_rule = value(ParseShortRuleOption(*short_rule));
        o.verify_jaccard = verify_jaccard;
        o.verify_short_features = verify_short_features;
        o.verify_short_jaccard = verify_short_jaccard;
        if (join == "exact") {
          o.join = DedupJoin::kExact;
        } else if (join == "banded") {
          o.join = DedupJoin::kBanded;
        } else if (join != "auto") {
          check(Status::InvalidArgument("unknown join '" + join +
                                        "' (expected auto, exact or banded)"));
        }
        o.recall = recall;
        o.band_seed = band_seed;
        o.threads = threads;
        std::unique_ptr<DedupJob> job = value(DedupJob::Create(std::move(o)));
        if (titles.size() != texts.size() || scores.size() != texts.size()) {
          throw py::value_error("texts, titles and scores differ in length");
        }
        const std::string& field = job->options().score_field;
        auto docs = std::make_shared<std::vector<Document>>(texts.size());
        for (size_t i = 0; i < texts.size(); ++i) {
          Document& d = (*docs)[i];
          d.id = std::to_string(i);
          d.text = Utf8(texts[i], "a text");
          d.title = Utf8(titles[i], "a title");
          if (!field.empty() && !scores[i].is_none()) d.fields[field] = Utf8(scores[i], "a score");
        }
        const bool minhash = job->method().is_minhash();
        std::vector<std::string> fingerprints(minhash ? 0 : docs->size());
        DedupJobOutputs outputs;
        if (!minhash) {
          outputs.record_values = [&](size_t i, const DedupDocument& d, const DedupRecord&) {
            fingerprints[i] = d.fingerprint.ToHex();
          };
        }
        // Ctrl-C raises KeyboardInterrupt within about a second: signals are
        // checked with the GIL held at each progress report (every 512
        // documents read).
        const DedupProgress interruptible = [](std::string_view, double, double, std::string_view) {
          py::gil_scoped_acquire acquire;
          if (PyErr_CheckSignals() != 0) throw Interrupted{};
        };
        Result<DedupJobSummary> summary = Status::OK();
        try {
          py::gil_scoped_release release;
          summary = job->Run(DocumentsInput(docs), outputs, interruptible);
        } catch (const Interrupted&) {
          throw py::error_already_set();
        }
        check(summary.status());
        const DedupResult& result = summary->result;
        py::list records;
        for (size_t i = 0; i < result.records.size(); ++i) {
          const DedupRecord& r = result.records[i];
          py::object fp = minhash ? py::object(py::none()) : py::object(py::str(fingerprints[i]));
          py::object score = minhash ? py::object(py::float_(job->ScoreOf(r.distance)))
                                     : py::object(py::int_(r.distance));
          py::object jaccard = py::none();
          if (r.duplicate && r.jaccard >= 0)
            jaccard = py::float_(std::round(r.jaccard * 1e4) / 1e4);
          records.append(
              py::make_tuple(fp, r.cluster, r.duplicate, r.nearest, score, r.empty, jaccard));
        }
        const DedupSummary& s = result.summary;
        return py::make_tuple(
            records,
            py::dict(py::arg("documents") = s.documents, py::arg("kept") = s.kept,
                     py::arg("duplicates") = s.duplicates, py::arg("empty") = s.empty,
                     py::arg("clusters") = s.clusters_with_duplicates,
                     py::arg("largest_cluster") = s.largest_cluster,
                     py::arg("k") = minhash ? py::object(py::none())
                                            : py::object(py::int_(job->dedup_options().k)),
                     py::arg("method") = job->method().ShortName(),
                     py::arg("boilerplate_lines") = summary->boilerplate_lines,
                     py::arg("cluster_rule") = ClusterRuleName(job->dedup_options().cluster_rule),
                     py::arg("mode") = DedupModeName(job->dedup_options().mode),
                     // The short-document rule that ran (auto resolved).
                     py::arg("short_features") = job->short_rule().features,
                     py::arg("short_rule") = job->short_rule().features > 0
                                                 ? ShortRuleName(job->short_rule().rule)
                                                 : "off"),
            job->verifies());
      },
      py::arg("texts"), py::arg("titles"), py::arg("scores"), py::arg("method"),
      py::arg("method_text"), py::arg("k"), py::arg("mode"), py::arg("keep"), py::arg("cluster"),
      py::arg("boilerplate"), py::arg("boilerplate_min_docs"), py::arg("short_features"),
      py::arg("short_jaccard"), py::arg("short_rule"), py::arg("verify_jaccard"),
      py::arg("verify_short_features"), py::arg("verify_short_jaccard"), py::arg("join"),
      py::arg("recall"), py::arg("band_seed"), py::arg("threads"));
}

}  // namespace neardup::python
