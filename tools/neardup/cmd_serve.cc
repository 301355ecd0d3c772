// Copyright 2026 The neardup Authors.
//
// neardup serve --index IDX: a resident near-duplicate index behind an
// HTTP/1.1 JSON API (cpp-httplib), for crawlers asking "have I seen
// something like this page?". The index is opened read-write with the
// write-ahead log (document_index.h), so every acknowledged change survives
// a crash; the requests are wired to DocumentIndex::Query, AddBatch, Check
// and Remove. The API is in doc/serve.md.

#include "cmd_serve.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common.h"
#include "index_open.h"

namespace neardup::cli {
namespace {

using serve_internal::ServeFlags;
using serve_internal::Server;

// Eviction on a schedule: DocumentIndex::Evict with --max-age/--max-count
// when the server starts and every --evict-every seconds (the removals are
// logged; a compaction folds them into the files).
class Evictor {
 public:
  Evictor(DocumentIndex* index, const EvictionOptions& limits, double every_s) {
    if (!limits.max_age_seconds && !limits.max_count) return;
    thread_ = std::thread([this, index, limits, every_s] {
      std::unique_lock lock(mu_);
      do {
        lock.unlock();
        auto evicted = index->Evict(limits);
        if (!evicted.ok()) {
          std::fprintf(stderr, "neardup: eviction failed: %s\n",
                       evicted.status().ToString().c_str());
        } else if (*evicted > 0) {
          std::fprintf(stderr, "neardup: evicted %zu documents; the index holds %zu\n", *evicted,
                       index->size());
        }
        lock.lock();
      } while (
          !wake_.wait_for(lock, std::chrono::duration<double>(every_s), [this] { return stop_; }));
    });
  }
  ~Evictor() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

int RunServe(const ServeFlags& flags) {
  if (flags.max_batch == 0 || flags.max_body_bytes == 0 || flags.threads <= 0 ||
      flags.max_request_memory == 0 || flags.max_client_connections == 0) {
    return Fail(Status::InvalidArgument(
        "--max-batch, --max-body-bytes, --threads, --max-request-memory and "
        "--max-client-connections must be > 0"));
  }
  if (flags.max_request_memory < flags.max_body_bytes) {
    return Fail(Status::InvalidArgument(
        "--max-request-memory must be at least --max-body-bytes (a body is held whole)"));
  }
  std::string token;
  if (!flags.token_file.empty()) {
    std::ifstream in(flags.token_file, std::ios::binary);
    if (!in) return Fail(Status::NotFound(flags.token_file + ": cannot be read"));
    token.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) return Fail(Status::IOError(flags.token_file + ": read error"));
    while (!token.empty() &&
           (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
      token.pop_back();
    }
    if (token.empty()) return Fail(Status::InvalidArgument(flags.token_file + ": empty token"));
  }
  // SIGTERM and SIGINT are taken by a thread of their own (sigwait), so the
  // server stops between requests; blocked before any thread starts so that
  // every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // Blocks of 1 MiB and more (request bodies, their parsed arrays) are
  // mapped for themselves and unmapped when freed. glibc's default raises
  // this threshold to the largest block freed (up to 32 MiB), after which
  // 16 MiB bodies came from the threads' arenas and stayed resident when
  // freed: eight hostile bodies at once left ~250 MB behind.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);

  DocumentIndexOptions options;
  options.log = true;
  options.sync = !flags.no_sync;
  options.preload = flags.preload;
  options.compact_fraction = flags.compact_fraction;
  SetLockWait(flags.index_path, flags.lock_wait, &options);
  TextIndexOpenOptions open;
  open.mode = DocumentIndex::Mode::kReadWrite;
  open.index = options;
  open.jieba_dir = flags.jieba_dir;
  auto index = TextIndex::Open(flags.index_path, open);
  if (!index.ok()) return Fail(index.status());
  Server server(flags, std::move(*index), std::move(token));
  std::optional<Evictor> evictor;
  evictor.emplace(&server.index().documents(), flags.evict, flags.evict_every);

  // A signal that arrives before the server listens must still stop it:
  // Stop is repeated until Run has returned.
  std::atomic<bool> done{false};
  std::thread waiter([&server, &done, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    while (!done.load()) {
      server.Stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  const bool served = server.Run();
  done = true;
  if (!served) {
    // Bind failed: wake the waiter, then report.
    pthread_kill(waiter.native_handle(), SIGTERM);
  }
  waiter.join();
  evictor.reset();  // no eviction after the final Sync
  if (!served) {
    return Fail(
        Status::IOError("cannot listen on " + flags.host + ":" + std::to_string(flags.port)));
  }
  // Graceful shutdown: every acknowledged change is in the log; make it
  // durable when it was not synced per request.
  NEARDUP_RETURN_IF_ERROR_CLI(server.index().documents().Sync());
  std::fprintf(stderr, "neardup: stopped; %zu documents in %s\n", server.index().size(),
               flags.index_path.c_str());
  return kExitOk;
}

}  // namespace

void AddServeCommand(CLI::App& app, ExitCode* exit_code) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* s = app.add_subcommand(
      "serve",
      "Serve an index over HTTP/1.1 JSON: POST /v1/query, /v1/add, /v1/check (query-or-add), "
      "/v1/remove, /v1/snapshot; GET /v1/stats, /healthz, /metrics (Prometheus) "
      "(doc/serve.md)");
  s->add_option("--index", flags->index_path, "The index (IDX; changes go to IDX.log)")->required();
  s->add_option("--host", flags->host, "Address to listen on (default 127.0.0.1)");
  s->add_option("--port", flags->port,
                "Port (default 8080; 0 = any free port, printed on standard output)")
      ->check(CLI::Range(0, 65535));
  s->add_option("--token-file", flags->token_file,
                "Require \"Authorization: Bearer TOKEN\" with the token in this file "
                "(every endpoint but /healthz)");
  s->add_option("--max-body-bytes", flags->max_body_bytes,
                "Largest request body, chunked or not; larger is 413 (default 16 MiB)")
      ->check(CLI::PositiveNumber);
  s->add_option("--max-batch", flags->max_batch,
                "Most documents, fingerprints or ids per request; more is 413 (default 10000)")
      ->check(CLI::PositiveNumber);
  s->add_option("--threads", flags->threads,
                "Worker threads: requests served at once (a connection holds one only while "
                "its request is read and answered) (default 64)")
      ->check(CLI::PositiveNumber);
  s->add_option("--read-timeout", flags->read_timeout_s,
                "Seconds a client may take to send a request, head and body, from its first "
                "byte (default 10)")
      ->check(CLI::Range(1, 3600));
  s->add_option("--keep-alive-timeout", flags->keep_alive_timeout_s,
                "Seconds an idle keep-alive connection is kept open (default 30)")
      ->check(CLI::Range(1, 3600));
  s->add_option("--max-request-memory", flags->max_request_memory,
                "Memory the requests in flight may hold in all (bodies and their parsed JSON); "
                "a request beyond it is 503 (default 512 MiB)")
      ->check(CLI::PositiveNumber);
  s->add_option("--max-client-connections", flags->max_client_connections,
                "Open connections from one client address; more are 503 (default 256)")
      ->check(CLI::PositiveNumber);
  s->add_flag("--no-sync", flags->no_sync,
              "Do not fsync the log per request (faster; a power loss may lose acknowledged "
              "changes, a killed process does not); synced on shutdown");
  s->add_flag("--preload", flags->preload,
              "Read the index file into memory backed by huge pages instead of mapping it: "
              "starts as slowly as reading the file and holds all of it in memory; queries "
              "are faster (fewer TLB misses)");
  s->add_option("--compact-fraction", flags->compact_fraction,
                "Fold the log into the index once it exceeds this fraction of the index file "
                "(default 0.5; 0 = only by `neardup index compact`)")
      ->check(CLI::Range(0.0, 1000.0));
  s->add_option("--jieba-dir", flags->jieba_dir, "python3-jieba's data directory");
  AddLockWaitOption(s, &flags->lock_wait);
  s->add_option("--snapshot-dir", flags->snapshot_dir,
                "Directory where POST /v1/snapshot {\"name\": NAME} writes a consistent copy "
                "of the index (NAME, NAME.ids); without it the endpoint answers 403")
      ->check(CLI::ExistingDirectory);
  AddEvictionOptions(s, &flags->evict);
  s->add_option("--evict-every", flags->evict_every,
                "Seconds between evictions by --max-age/--max-count (default 60; the first "
                "when the server starts)")
      ->check(CLI::Range(0.001, 1e9));
  s->callback([flags, exit_code] { exit_code->value = RunServe(*flags); });
}

}  // namespace neardup::cli
