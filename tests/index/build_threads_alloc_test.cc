// Copyright 2026 The neardup Authors.
//
// A failed allocation on one of the table index's build threads
// (BuildTables: TableIndex, the index file) reaches the caller as
// std::bad_alloc, as on every other thread of the library's pool: the tables
// were built on threads of their own, where the exception ended the process
// (std::terminate, signal 6).
//
// This binary's operator new (every form of it, so that the whole index test
// binary allocates through one pair, malloc and free, also under ASan)
// fails, while armed, every allocation of 1 MiB or more made off the thread
// that armed it; unarmed it is malloc's.

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <random>
#include <thread>
#include <vector>

#include "index/mask_tables.h"

namespace {

std::atomic<bool> g_armed{false};
std::thread::id g_arming_thread;

bool FailNow(std::size_t n) {
  return g_armed.load(std::memory_order_acquire) && n >= (std::size_t{1} << 20) &&
         std::this_thread::get_id() != g_arming_thread;
}

// Every allocation form goes to malloc (or aligned_alloc) and every
// deallocation to free: a form left to the runtime (std::stable_sort's
// nothrow new, say) would allocate with the sanitizer's operator new and be
// freed here by free(), which AddressSanitizer reports as an
// alloc-dealloc mismatch.
void* Allocate(std::size_t n, std::size_t align = 0) {
  if (FailNow(n)) throw std::bad_alloc();
  if (n == 0) n = 1;
  void* p = align <= alignof(std::max_align_t)
                ? std::malloc(n)
                : std::aligned_alloc(align, (n + align - 1) / align * align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void* AllocateOrNull(std::size_t n, std::size_t align = 0) noexcept {
  try {
    return Allocate(n, align);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

}  // namespace

// GCC sees `new T` (this operator new) freed by an inlined free() below and
// warns of a mismatch; here operator new is malloc, so the pair matches.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t n) { return Allocate(n); }
void* operator new[](std::size_t n) { return Allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return AllocateOrNull(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return AllocateOrNull(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  return Allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return Allocate(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return AllocateOrNull(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return AllocateOrNull(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace neardup::index_internal {
namespace {

TEST(IndexBuildThreadsTest, FailedAllocationOnATableBuildThreadReachesTheCaller) {
  // 2,000,000 fingerprints: each table's rows (8 MB) and keys are allocated
  // on a build thread (a table takes long enough that the caller, worker 0
  // of the pool, cannot build them all before the workers start).
  std::mt19937_64 rng(30);
  std::vector<uint64_t> lo(2000000);
  for (uint64_t& x : lo) x = rng();
  TablesPolicy policy;
  policy.exact = true;
  const TablesSpec spec = ChooseTables(lo.size(), 64, 3, policy);
  ASSERT_GE(spec.masks.size(), 4u);
  // Unarmed, the build succeeds.
  ASSERT_EQ(BuildTables(spec.masks, spec.dir_bits, lo, {}, 4).size(), spec.masks.size());
  g_arming_thread = std::this_thread::get_id();
  g_armed.store(true, std::memory_order_release);
  bool caught = false;
  try {
    auto tables = BuildTables(spec.masks, spec.dir_bits, lo, {}, 4);
  } catch (const std::bad_alloc&) {
    caught = true;
  }
  g_armed.store(false, std::memory_order_release);
  EXPECT_TRUE(caught);
}

}  // namespace
}  // namespace neardup::index_internal
