// Copyright 2026 The neardup Authors.

#include "util/fault.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace neardup::fault {
namespace {

struct Config {
  long long kill_at = 0;
  long long fail_at = 0;
  bool trace = false;
};

long long EnvNumber(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  return *end == '\0' && n > 0 ? n : 0;
}

const Config& GetConfig() {
  static const Config config = [] {
    Config c;
    c.kill_at = EnvNumber("NEARDUP_FAULT_KILL_AT");
    c.fail_at = EnvNumber("NEARDUP_FAULT_FAIL_AT");
    const char* trace = std::getenv("NEARDUP_FAULT_TRACE");
    c.trace = trace != nullptr && *trace != '\0' && std::string(trace) != "0";
    return c;
  }();
  return config;
}

std::atomic<long long> g_steps{0};

}  // namespace

int BeforeWriteStep(std::string_view what) {
  const long long step = g_steps.fetch_add(1, std::memory_order_relaxed) + 1;
  const Config& c = GetConfig();
  if (c.trace) {
    std::fprintf(stderr, "neardup: fault step %lld: %.*s\n", step, static_cast<int>(what.size()),
                 what.data());
  }
  if (step == c.kill_at) {
    raise(SIGKILL);
    _exit(137);  // not reached
  }
  if (step == c.fail_at) return ENOSPC;
  return 0;
}

}  // namespace neardup::fault
