// Copyright 2026 The neardup Authors.
//
// A load generator for `neardup serve` on loopback: C client threads, each
// with its own keep-alive connection, POST /v1/check requests (one item or a
// batch of documents or fingerprints) back to back for a fixed time; prints
// requests/s, items/s, p50/p99 latency and the share of items added as one
// JSON line. bench/serve_bench.sh runs it against a server at concurrency 1,
// 8 and 64.
//
//   neardup_serve_load PORT CONCURRENCY SECONDS BODIES.jsonl
//   neardup_serve_load PORT CONCURRENCY SECONDS --new-fingerprints BATCH [BITS]
//   neardup_serve_load PORT CONCURRENCY SECONDS --new-documents BATCH FRAGMENTS.jsonl
//
// BODIES.jsonl holds one request body per line; client c sends lines c,
// c + C, c + 2C, ... in turn, with every "id" placeholder ID replaced by a
// fresh id (unique across runs). Its items are new ids, but once the lines
// have all been sent their fingerprints are not: a check finds the earlier
// copy and adds nothing.
//
// The --new-* modes make every item new, so that every check also adds (a
// crawler's load): --new-fingerprints sends BATCH random fingerprints of BITS
// bits (default 128) a request, each drawn afresh (two random 128-bit
// fingerprints are within k = 28 with probability ~5e-10, so about one
// check in 2,000 against 1M finds a match and is not added); --new-documents
// sends BATCH documents a request, each a concatenation of 10 fragments drawn
// at random from FRAGMENTS.jsonl (one JSON string a line, a ~70-character
// piece of a real document), so each is a new mix of real text. "added"
// in the output is the share of items the server answered "added": true.

#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

// What a client sends: the lines of a file in turn, or new items.
struct Load {
  enum Kind { kBodies, kNewFingerprints, kNewDocuments } kind = kBodies;
  std::vector<std::string> lines;  // bodies, or fragments (JSON strings without quotes)
  int batch = 1;
  int bits = 128;
};

// A request body of `load.batch` new items with ids "PREFIX-i".
std::string NewBody(const Load& load, const std::string& prefix, std::mt19937_64& rng) {
  std::string body =
      load.kind == Load::kNewFingerprints ? "{\"fingerprints\":[" : "{\"documents\":[";
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < load.batch; ++i) {
    if (i > 0) body += ',';
    body += "{\"id\":\"" + prefix + "-" + std::to_string(i) + "\",";
    if (load.kind == Load::kNewFingerprints) {
      body += "\"fingerprint\":\"";
      for (int b = 0; b < load.bits; b += 64) {
        const uint64_t word = rng();
        for (int nibble = std::min(64, load.bits - b) / 4 - 1; nibble >= 0; --nibble) {
          body += kHex[(word >> (4 * nibble)) & 15];
        }
      }
    } else {
      body += "\"text\":\"";
      for (int f = 0; f < 10; ++f) body += load.lines[rng() % load.lines.size()];
    }
    body += "\"}";
  }
  body += "]}";
  return body;
}

}  // namespace

int main(int argc, char** argv) {
  const bool new_items = argc >= 6 && std::strncmp(argv[4], "--new-", 6) == 0;
  if (argc != 5 && !(new_items && argc <= 7)) {
    std::fprintf(stderr,
                 "usage: %s PORT CONCURRENCY SECONDS BODIES.jsonl\n"
                 "       %s PORT CONCURRENCY SECONDS --new-fingerprints BATCH [BITS]\n"
                 "       %s PORT CONCURRENCY SECONDS --new-documents BATCH FRAGMENTS.jsonl\n",
                 argv[0], argv[0], argv[0]);
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const int concurrency = std::atoi(argv[2]);
  const double seconds = std::atof(argv[3]);
  Load load;
  const char* lines_path = argv[4];
  if (new_items) {
    load.batch = std::atoi(argv[5]);
    lines_path = nullptr;
    if (std::strcmp(argv[4], "--new-fingerprints") == 0) {
      load.kind = Load::kNewFingerprints;
      if (argc == 7) load.bits = std::atoi(argv[6]);
    } else if (std::strcmp(argv[4], "--new-documents") == 0 && argc == 7) {
      load.kind = Load::kNewDocuments;
      lines_path = argv[6];
    } else {
      std::fprintf(stderr, "%s: unknown mode %s (or FRAGMENTS.jsonl missing)\n", argv[0], argv[4]);
      return 2;
    }
    if (load.batch <= 0 || load.bits <= 0 || load.bits % 64 != 0) return 2;
  }
  if (lines_path != nullptr) {
    std::ifstream in(lines_path);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      // A fragment is a JSON string: its content goes into a text as it is.
      if (load.kind == Load::kNewDocuments) {
        if (line.size() < 2 || line.front() != '"' || line.back() != '"') return 2;
        line = line.substr(1, line.size() - 2);
      }
      load.lines.push_back(line);
    }
    if (load.lines.empty()) return 2;
  }
  const std::vector<std::string>& bodies = load.lines;
  if (concurrency <= 0) return 2;
  std::vector<std::vector<double>> latencies(concurrency);
  std::vector<long> items(concurrency, 0);  // documents or fingerprints answered, by client
  std::vector<long> added(concurrency, 0);  // of them, answered "added": true
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
      std::mt19937_64 rng(std::random_device{}() ^ (static_cast<uint64_t>(getpid()) << 20) ^
                          static_cast<uint64_t>(c));
      while (std::chrono::steady_clock::now() < deadline) {
        std::string body;
        long body_items = 0;
        if (load.kind != Load::kBodies) {
          // Ids unique across runs against the same index: the process id.
          body = NewBody(
              load,
              "p" + std::to_string(getpid()) + "c" + std::to_string(c) + "-" + std::to_string(n),
              rng);
          body_items = load.batch;
        } else {
          body = bodies[next % bodies.size()];
          next += static_cast<size_t>(concurrency);
          // Every "ID" placeholder (a batch body has one per item) becomes a
          // fresh id, unique across runs against the same index: the process id.
          for (size_t at = body.find("\"ID\""); at != std::string::npos;
               at = body.find("\"ID\"", at)) {
            const std::string id = "\"p" + std::to_string(getpid()) + "c" + std::to_string(c) +
                                   "-" + std::to_string(n) + "-" + std::to_string(at) + "\"";
            body.replace(at, 4, id);
            at += id.size();
            ++body_items;
          }
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
        for (size_t at = res->body.find("\"added\":true"); at != std::string::npos;
             at = res->body.find("\"added\":true", at + 1)) {
          ++added[c];
        }
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
  long sent_added = 0;
  for (long x : added) sent_added += x;
  std::printf(
      "{\"concurrency\": %d, \"requests\": %zu, \"errors\": %ld, \"no_answer\": %ld, "
      "\"seconds\": %.2f, \"per_second\": %.0f, \"items_per_request\": %.1f, "
      "\"items_per_second\": %.0f, \"added\": %.4f, \"p50_ms\": %.2f, \"p99_ms\": %.2f}\n",
      concurrency, all.size(), errors.load(), no_answer.load(), elapsed, all.size() / elapsed,
      all.empty() ? 0.0 : static_cast<double>(sent) / static_cast<double>(all.size()),
      static_cast<double>(sent) / elapsed,
      sent == 0 ? 0.0 : static_cast<double>(sent_added) / static_cast<double>(sent), pct(0.50),
      pct(0.99));
  return errors.load() == 0 ? 0 : 1;
}
