// Copyright 2026 The neardup Authors.

#include "util/fault.h"

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>

namespace neardup::fault {
namespace {

// The step to die at, read once; 0 means never.
uint64_t KillAt() {
  static const uint64_t kill_at = [] {
    const char* env = std::getenv("NEARDUP_FAULT_KILL_AT");
    if (env == nullptr || *env == '\0') return uint64_t{0};
    char* end = nullptr;
    const unsigned long long n = std::strtoull(env, &end, 10);
    return *end == '\0' ? static_cast<uint64_t>(n) : uint64_t{0};
  }();
  return kill_at;
}

std::atomic<uint64_t> steps{0};

}  // namespace

void Step(const char* what) {
  (void)what;
  const uint64_t n = steps.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n == KillAt()) raise(SIGKILL);
}

}  // namespace neardup::fault
