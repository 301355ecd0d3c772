// Copyright 2026 The neardup Authors.
//
// A load generator for `neardup serve` on loopback: C client threads, each
// with its own keep-alive connection, POST /v1/check requests (one item or a
// batch of documents or fingerprints) back to back for a fixed time; prints
// requests/s, items/s and p50/p99 latency as one JSON line.
// bench/serve_bench.sh runs it against a server at concurrency 1, 8 and 64.
//
//   neardup_serve_load PORT CONCURRENCY SECONDS BODIES.jsonl
//
// BODIES.jsonl holds one request body per line; client c sends lines c,
// c + C, c + 2C, ... in turn, with every "id" placeholder ID replaced by a
// fresh id (unique across runs) so that each item is a new document.

#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s PORT CONCURRENCY SECONDS BODIES.jsonl\n", argv[0]);
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const int concurrency = std::atoi(argv[2]);
  const double seconds = std::atof(argv[3]);
  std::vector<std::string> bodies;
  std::ifstream in(argv[4]);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) bodies.push_back(line);
  }
  if (bodies.empty() || concurrency <= 0) return 2;
  std::vector<std::vector<double>> latencies(concurrency);
  std::vector<long> items(concurrency, 0);  // documents or fingerprints answered, by client
  std::atomic<long> errors{0};
  std::atomic<long> no_answer{0};  // of the errors: no HTTP answer (connection failed)
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int c = 0; c < concurrency; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);  // else Nagle + delayed ACK: ~40 ms per request
      client.set_read_timeout(30, 0);
      size_t next = static_cast<size_t>(c);
      long n = 0;
      while (std::chrono::steady_clock::now() < deadline) {
        std::string body = bodies[next % bodies.size()];
        next += static_cast<size_t>(concurrency);
        // Every "ID" placeholder (a batch body has one per item) becomes a
        // fresh id, unique across runs against the same index: the process id.
        long body_items = 0;
        for (size_t at = body.find("\"ID\""); at != std::string::npos;
             at = body.find("\"ID\"", at)) {
          const std::string id = "\"p" + std::to_string(getpid()) + "c" + std::to_string(c) + "-" +
                                 std::to_string(n) + "-" + std::to_string(at) + "\"";
          body.replace(at, 4, id);
          at += id.size();
          ++body_items;
        }
        ++n;
        const auto t0 = std::chrono::steady_clock::now();
        auto res = client.Post("/v1/check", body, "application/json");
        const auto t1 = std::chrono::steady_clock::now();
        if (!res || res->status != 200) {
          ++errors;
          if (!res) ++no_answer;
          // The first few failures, for the reader of a failed run.
          if (errors.load() <= 3) {
            std::fprintf(stderr,
                         "request failed after %.1f ms (request %ld of its connection): %s\n",
                         std::chrono::duration<double, std::milli>(t1 - t0).count(), n,
                         res ? ("HTTP " + std::to_string(res->status) + " " + res->body).c_str()
                             : httplib::to_string(res.error()).c_str());
          }
          continue;
        }
        items[c] += body_items;
        latencies[c].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
    });
  }
  for (auto& t : threads) t.join();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  const auto pct = [&](double p) {
    return all.empty() ? 0.0 : all[std::min(all.size() - 1, static_cast<size_t>(p * all.size()))];
  };
  long sent = 0;
  for (long x : items) sent += x;
  std::printf(
      "{\"concurrency\": %d, \"requests\": %zu, \"errors\": %ld, \"no_answer\": %ld, "
      "\"seconds\": %.2f, \"per_second\": %.0f, \"items_per_request\": %.1f, "
      "\"items_per_second\": %.0f, \"p50_ms\": %.2f, \"p99_ms\": %.2f}\n",
      concurrency, all.size(), errors.load(), no_answer.load(), elapsed, all.size() / elapsed,
      all.empty() ? 0.0 : static_cast<double>(sent) / static_cast<double>(all.size()),
      static_cast<double>(sent) / elapsed, pct(0.50), pct(0.99));
  return errors.load() == 0 ? 0 : 1;
}
