// Copyright 2026 The neardup Authors.
//
// GET /metrics (cmd_serve_metrics.h).

#include "cmd_serve_metrics.h"

#include <algorithm>
#include <cstdio>

namespace neardup::cli::serve_internal {

void Metrics::Record(const std::string& endpoint, int status, double seconds) {
  std::lock_guard lock(mu_);
  ++requests_[{endpoint, status}];
  if (seconds < 0) return;
  Histogram& h = latency_[endpoint];
  // Counts per bucket, not cumulative (made cumulative when rendered).
  const size_t b = static_cast<size_t>(
      std::lower_bound(std::begin(kBuckets), std::end(kBuckets), seconds) - std::begin(kBuckets));
  ++h.counts[b];
  h.sum += seconds;
}

std::string Metrics::Render(const DocumentIndexStats& stats) const {
  std::string out;
  const auto line = [&out](const char* fmt, auto... args) {
    char buf[256];
    std::snprintf(buf, sizeof buf, fmt, args...);
    out += buf;
  };
  std::lock_guard lock(mu_);
  out +=
      "# HELP neardup_http_requests_total HTTP requests answered, by endpoint and status.\n"
      "# TYPE neardup_http_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    line("neardup_http_requests_total{endpoint=\"%s\",status=\"%d\"} %llu\n", key.first.c_str(),
         key.second, static_cast<unsigned long long>(n));
  }
  out +=
      "# HELP neardup_http_request_duration_seconds Time from a request's headers read to its "
      "answer, by endpoint.\n"
      "# TYPE neardup_http_request_duration_seconds histogram\n";
  for (const auto& [endpoint, h] : latency_) {
    uint64_t cumulative = 0;
    for (size_t b = 0; b < kNumBuckets; ++b) {
      cumulative += h.counts[b];
      line("neardup_http_request_duration_seconds_bucket{endpoint=\"%s\",le=\"%g\"} %llu\n",
           endpoint.c_str(), kBuckets[b], static_cast<unsigned long long>(cumulative));
    }
    cumulative += h.counts[kNumBuckets];
    line("neardup_http_request_duration_seconds_bucket{endpoint=\"%s\",le=\"+Inf\"} %llu\n",
         endpoint.c_str(), static_cast<unsigned long long>(cumulative));
    line("neardup_http_request_duration_seconds_sum{endpoint=\"%s\"} %.9g\n", endpoint.c_str(),
         h.sum);
    line("neardup_http_request_duration_seconds_count{endpoint=\"%s\"} %llu\n", endpoint.c_str(),
         static_cast<unsigned long long>(cumulative));
  }
  line(
      "# HELP neardup_index_documents Documents in the index.\n"
      "# TYPE neardup_index_documents gauge\n"
      "neardup_index_documents %llu\n",
      static_cast<unsigned long long>(stats.documents));
  line(
      "# HELP neardup_index_log_bytes Size of the index's write-ahead log (IDX.log).\n"
      "# TYPE neardup_index_log_bytes gauge\n"
      "neardup_index_log_bytes %llu\n",
      static_cast<unsigned long long>(stats.log_bytes));
  line(
      "# HELP neardup_index_file_bytes Size of the index file as last committed.\n"
      "# TYPE neardup_index_file_bytes gauge\n"
      "neardup_index_file_bytes %lld\n",
      static_cast<long long>(std::max<int64_t>(stats.file_bytes, 0)));
  line(
      "# HELP neardup_index_compactions_total Compactions that published a new index file "
      "since the server started.\n"
      "# TYPE neardup_index_compactions_total counter\n"
      "neardup_index_compactions_total %llu\n",
      static_cast<unsigned long long>(stats.compactions));
  line(
      "# HELP neardup_index_evictions_total Documents evicted (--max-age, --max-count) since "
      "the server started.\n"
      "# TYPE neardup_index_evictions_total counter\n"
      "neardup_index_evictions_total %llu\n",
      static_cast<unsigned long long>(stats.evicted));
  line(
      "# HELP neardup_index_file_searches_total Searches of the index file by checks and "
      "queries since the server started.\n"
      "# TYPE neardup_index_file_searches_total counter\n"
      "neardup_index_file_searches_total %llu\n",
      static_cast<unsigned long long>(stats.file_search_calls));
  line(
      "# HELP neardup_index_file_search_batches_total Batches those searches ran in (fewer "
      "when concurrent requests were combined into one batch of the scan).\n"
      "# TYPE neardup_index_file_search_batches_total counter\n"
      "neardup_index_file_search_batches_total %llu\n",
      static_cast<unsigned long long>(stats.file_search_batches));
  return out;
}

}  // namespace neardup::cli::serve_internal
