// Copyright 2026 The neardup Authors.
//
// The few MPI collectives neardup-mpi uses, on bytes, in chunks: MPI counts
// and displacements are ints, so one call moves less than 2^31 bytes in all;
// larger exchanges run in rounds (each rank sends at most chunk_bytes per
// round, with chunk_bytes * P < 2^31). Every function is collective over
// MPI_COMM_WORLD: all ranks call it, in the same order.
//
// Not thread-safe (MPI is initialized with MPI_THREAD_FUNNELED; only the main
// thread calls these).

#ifndef NEARDUP_TOOLS_NEARDUP_MPI_MPI_COMM_H_
#define NEARDUP_TOOLS_NEARDUP_MPI_MPI_COMM_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace neardup::mpi {

struct World {
  int rank = 0;
  int size = 1;
};

// What one collective moved, for the stage report.
struct Traffic {
  uint64_t bytes_sent = 0;      // by this rank
  uint64_t bytes_received = 0;  // by this rank
  int rounds = 0;
};

// The per-rank chunk of one round: NEARDUP_MPI_CHUNK_BYTES when set (tests use
// small values to run many rounds), else a multiple of 8 with chunk * P <
// 2^31 and chunk * P <= 32 MiB (a round's buffers are copies of the data:
// bounded), at least 4 KiB.
size_t ChunkBytes(int ranks);

// Every rank's `mine`, concatenated in rank order, on every rank.
std::string AllGatherBytes(const World& world, std::string_view mine, Traffic* traffic);

// The same on `root` only (other ranks get an empty string).
std::string GatherBytes(const World& world, std::string_view mine, int root, Traffic* traffic);

// Root's bytes on every rank (the others' *bytes are replaced), in rounds.
void BroadcastBytes(const World& world, std::string* bytes, int root, Traffic* traffic);

// to[d] goes to rank d (to.size() == P): returns what every rank sent to this
// one, concatenated in rank order. In rounds of at most ChunkBytes(P) bytes
// per pair of ranks. *from_sizes (when not null): how many of the bytes
// came from each rank.
std::string AllToAllBytes(const World& world, const std::vector<std::string>& to, Traffic* traffic,
                          std::vector<uint64_t>* from_sizes = nullptr);

// parts[r] (on root; parts.size() == P) to rank r; returns this rank's part.
std::string ScatterBytes(const World& world, const std::vector<std::string>& parts, int root,
                         Traffic* traffic);

// Point to point (in chunks): `bytes` to rank `to`; the bytes rank `from`
// sends. Not collective.
void SendBytes(const World& world, std::string_view bytes, int to, Traffic* traffic);
std::string ReceiveBytes(const World& world, int from);

// The bytes of a trivially copyable value, appended to *out (what the
// exchanges below carry).
template <class T>
void AppendPod(const T& value, std::string* out) {
  static_assert(std::is_trivially_copyable_v<T>);
  out->append(reinterpret_cast<const char*>(&value), sizeof value);
}

// The values whose bytes `bytes` holds (a trailing partial value ignored).
template <class T>
std::vector<T> DecodePods(std::string_view bytes) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) {
    std::memcpy(static_cast<void*>(out.data()), bytes.data(), out.size() * sizeof(T));
  }
  return out;
}

// Every rank's value, in rank order.
std::vector<uint64_t> AllGatherU64(const World& world, uint64_t mine);

// Element-wise sums of `values` over the ranks, on every rank.
void AllReduceSum(const World& world, std::vector<uint64_t>* values);

// Broadcasts root's words (every rank passes a vector of the same size).
void BroadcastU64s(const World& world, std::vector<uint64_t>* values, int root);

// Broadcasts root's int.
int BroadcastInt(const World& world, int value, int root);

// The ranks of the job that share this rank's node (MPI_COMM_TYPE_SHARED),
// this one included.
int RanksOnThisNode(const World& world);

// The memory this node offers its ranks, in bytes: NEARDUP_MPI_NODE_MEMORY
// when set (tests), else the smaller of the physical memory and the cgroup's
// memory.max.
uint64_t NodeMemoryBytes();

}  // namespace neardup::mpi

#endif  // NEARDUP_TOOLS_NEARDUP_MPI_MPI_COMM_H_
