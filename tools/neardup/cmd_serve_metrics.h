// Copyright 2026 The neardup Authors.
//
// neardup serve's GET /metrics: the requests served (a count by endpoint and
// status, latency histograms) and the index's gauges and counters, in the
// Prometheus text format (doc/serve.md). Thread-safe.

#ifndef NEARDUP_TOOLS_NEARDUP_CMD_SERVE_METRICS_H_
#define NEARDUP_TOOLS_NEARDUP_CMD_SERVE_METRICS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "neardup/document_index.h"

namespace neardup::cli::serve_internal {

// What GET /metrics reports of the requests served: a count by endpoint and
// status, and each endpoint's latency as a histogram. The endpoint label is
// one of the server's paths or "other" (a client cannot grow the label set).
class Metrics {
 public:
  // Upper bounds in seconds, as Prometheus' `le`: 100 us to 10 s.
  static constexpr double kBuckets[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                        0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
  static constexpr size_t kNumBuckets = std::size(kBuckets);

  // One answered request; `seconds` < 0 when its start is unknown (an
  // error httplib answered before routing): counted, not timed.
  void Record(const std::string& endpoint, int status, double seconds);

  // The Prometheus text exposition format (version 0.0.4).
  std::string Render(const DocumentIndexStats& stats) const;

 private:
  struct Histogram {
    std::array<uint64_t, kNumBuckets + 1> counts{};  // the last: above every bound
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // guarded by mu_
  std::map<std::string, Histogram> latency_;                  // guarded by mu_
};

}  // namespace neardup::cli::serve_internal

#endif  // NEARDUP_TOOLS_NEARDUP_CMD_SERVE_METRICS_H_
