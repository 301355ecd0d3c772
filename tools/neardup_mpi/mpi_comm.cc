// Copyright 2026 The neardup Authors.

#include "mpi_comm.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>

namespace neardup::mpi {
namespace {

// One exchange in rounds: in round t rank r contributes bytes
// [t * chunk, min(size_r, (t + 1) * chunk)) of its data.
std::string Exchange(const World& world, std::string_view mine, int root, bool all,
                     Traffic* traffic) {
  const std::vector<uint64_t> sizes = AllGatherU64(world, mine.size());
  const size_t chunk = ChunkBytes(world.size);
  uint64_t total = 0, largest = 0;
  std::vector<uint64_t> offset(sizes.size());
  for (size_t r = 0; r < sizes.size(); ++r) {
    offset[r] = total;
    total += sizes[r];
    largest = std::max(largest, sizes[r]);
  }
  const bool receives = all || world.rank == root;
  std::string out(receives ? total : 0, '\0');
  std::string round;
  std::vector<int> counts(sizes.size()), displs(sizes.size());
  const uint64_t rounds = (largest + chunk - 1) / chunk;
  for (uint64_t t = 0; t < rounds; ++t) {
    int at = 0;
    for (size_t r = 0; r < sizes.size(); ++r) {
      const uint64_t begin = std::min<uint64_t>(sizes[r], t * chunk);
      const uint64_t end = std::min<uint64_t>(sizes[r], (t + 1) * chunk);
      counts[r] = static_cast<int>(end - begin);
      displs[r] = at;
      at += counts[r];
    }
    const uint64_t my_begin = std::min<uint64_t>(mine.size(), t * chunk);
    const int my_count = counts[static_cast<size_t>(world.rank)];
    round.resize(receives ? static_cast<size_t>(at) : 0);
    if (all) {
      MPI_Allgatherv(mine.data() + my_begin, my_count, MPI_BYTE, round.data(), counts.data(),
                     displs.data(), MPI_BYTE, MPI_COMM_WORLD);
    } else {
      MPI_Gatherv(mine.data() + my_begin, my_count, MPI_BYTE, round.data(), counts.data(),
                  displs.data(), MPI_BYTE, root, MPI_COMM_WORLD);
    }
    if (receives) {
      for (size_t r = 0; r < sizes.size(); ++r) {
        std::memcpy(out.data() + offset[r] + std::min<uint64_t>(sizes[r], t * chunk),
                    round.data() + displs[r], static_cast<size_t>(counts[r]));
      }
    }
    if (traffic != nullptr) {
      // Allgatherv: each rank's bytes reach P - 1 others; Gatherv: the root.
      traffic->bytes_sent +=
          static_cast<uint64_t>(my_count) *
          (all ? static_cast<uint64_t>(world.size - 1) : (world.rank == root ? 0 : 1));
      if (receives) traffic->bytes_received += static_cast<uint64_t>(at - my_count);
      ++traffic->rounds;
    }
  }
  return out;
}

}  // namespace

size_t ChunkBytes(int ranks) {
  if (const char* env = std::getenv("NEARDUP_MPI_CHUNK_BYTES")) {
    const unsigned long long v = std::strtoull(env, nullptr, 10);
    if (v > 0) return static_cast<size_t>(v);
  }
  // Below MPI's int counts, and at most 32 MiB per rank and round: a round's
  // buffers (what a rank sends and receives in it) are copies of the data,
  // so they stay small beside it.
  const auto p = static_cast<size_t>(std::max(ranks, 1));
  const size_t chunk = std::min(static_cast<size_t>(INT_MAX) / p, (size_t{32} << 20) / p);
  return std::max<size_t>(4096, chunk / 8 * 8);
}

std::string AllGatherBytes(const World& world, std::string_view mine, Traffic* traffic) {
  return Exchange(world, mine, 0, true, traffic);
}

std::string GatherBytes(const World& world, std::string_view mine, int root, Traffic* traffic) {
  return Exchange(world, mine, root, false, traffic);
}

void BroadcastBytes(const World& world, std::string* bytes, int root, Traffic* traffic) {
  std::vector<uint64_t> size = {bytes->size()};
  BroadcastU64s(world, &size, root);
  bytes->resize(size[0]);
  const size_t chunk = ChunkBytes(1);
  for (uint64_t at = 0; at < size[0]; at += chunk) {
    const int n = static_cast<int>(std::min<uint64_t>(chunk, size[0] - at));
    MPI_Bcast(bytes->data() + at, n, MPI_BYTE, root, MPI_COMM_WORLD);
    if (traffic != nullptr) {
      if (world.rank == root) {
        traffic->bytes_sent += static_cast<uint64_t>(n) * static_cast<uint64_t>(world.size - 1);
      } else {
        traffic->bytes_received += static_cast<uint64_t>(n);
      }
      ++traffic->rounds;
    }
  }
}

std::string AllToAllBytes(const World& world, const std::vector<std::string>& to, Traffic* traffic,
                          std::vector<uint64_t>* from_sizes) {
  const auto p = static_cast<size_t>(world.size);
  std::vector<uint64_t> send_sizes(p), recv_sizes(p);
  for (size_t d = 0; d < p; ++d) send_sizes[d] = to[d].size();
  MPI_Alltoall(send_sizes.data(), 1, MPI_UINT64_T, recv_sizes.data(), 1, MPI_UINT64_T,
               MPI_COMM_WORLD);
  const size_t chunk = ChunkBytes(world.size);
  uint64_t largest = 0, total = 0;
  std::vector<uint64_t> offset(p);
  for (size_t r = 0; r < p; ++r) {
    largest = std::max({largest, send_sizes[r], recv_sizes[r]});
    offset[r] = total;
    total += recv_sizes[r];
  }
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  std::string out(total, '\0'), send, receive;
  std::vector<int> scounts(p), sdispls(p), rcounts(p), rdispls(p);
  const auto piece = [chunk](uint64_t size, uint64_t t) {
    const uint64_t begin = std::min<uint64_t>(size, t * chunk);
    return std::pair<uint64_t, int>(
        begin, static_cast<int>(std::min<uint64_t>(size, (t + 1) * chunk) - begin));
  };
  const uint64_t rounds = (largest + chunk - 1) / chunk;
  const auto self = static_cast<size_t>(world.rank);
  for (uint64_t t = 0; t < rounds; ++t) {
    send.clear();
    int at = 0, in = 0;
    for (size_t r = 0; r < p; ++r) {
      const auto [begin, n] = piece(send_sizes[r], t);
      if (r == self) {
        // This rank's own part is copied, not sent.
        std::memcpy(out.data() + offset[r] + begin, to[r].data() + begin, static_cast<size_t>(n));
        scounts[r] = rcounts[r] = 0;
        sdispls[r] = at;
        rdispls[r] = in;
        continue;
      }
      send.append(to[r], begin, static_cast<size_t>(n));
      scounts[r] = n;
      sdispls[r] = at;
      at += n;
      rcounts[r] = piece(recv_sizes[r], t).second;
      rdispls[r] = in;
      in += rcounts[r];
    }
    receive.resize(static_cast<size_t>(in));
    MPI_Alltoallv(send.data(), scounts.data(), sdispls.data(), MPI_BYTE, receive.data(),
                  rcounts.data(), rdispls.data(), MPI_BYTE, MPI_COMM_WORLD);
    for (size_t r = 0; r < p; ++r) {
      std::memcpy(out.data() + offset[r] + piece(recv_sizes[r], t).first,
                  receive.data() + rdispls[r], static_cast<size_t>(rcounts[r]));
    }
    if (traffic != nullptr) {
      traffic->bytes_sent += static_cast<uint64_t>(at);
      traffic->bytes_received += static_cast<uint64_t>(in);
      ++traffic->rounds;
    }
  }
  if (from_sizes != nullptr) *from_sizes = std::move(recv_sizes);
  return out;
}

void SendBytes(const World& world, std::string_view bytes, int to, Traffic* traffic) {
  (void)world;
  uint64_t size = bytes.size();
  MPI_Send(&size, 1, MPI_UINT64_T, to, 0, MPI_COMM_WORLD);
  const size_t chunk = ChunkBytes(1);
  for (uint64_t at = 0; at < size; at += chunk) {
    const int n = static_cast<int>(std::min<uint64_t>(chunk, size - at));
    MPI_Send(bytes.data() + at, n, MPI_BYTE, to, 0, MPI_COMM_WORLD);
    if (traffic != nullptr) {
      traffic->bytes_sent += static_cast<uint64_t>(n);
      ++traffic->rounds;
    }
  }
}

std::string ReceiveBytes(const World& world, int from) {
  (void)world;
  uint64_t size = 0;
  MPI_Recv(&size, 1, MPI_UINT64_T, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  std::string bytes(size, '\0');
  const size_t chunk = ChunkBytes(1);
  for (uint64_t at = 0; at < size; at += chunk) {
    const int n = static_cast<int>(std::min<uint64_t>(chunk, size - at));
    MPI_Recv(bytes.data() + at, n, MPI_BYTE, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return bytes;
}

std::string ScatterBytes(const World& world, const std::vector<std::string>& parts, int root,
                         Traffic* traffic) {
  if (world.rank != root) return ReceiveBytes(world, root);
  for (int r = 0; r < world.size; ++r) {
    if (r != root) SendBytes(world, parts[static_cast<size_t>(r)], r, traffic);
  }
  return parts[static_cast<size_t>(root)];
}

std::vector<uint64_t> AllGatherU64(const World& world, uint64_t mine) {
  std::vector<uint64_t> all(static_cast<size_t>(world.size));
  MPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  return all;
}

void AllReduceSum(const World& world, std::vector<uint64_t>* values) {
  (void)world;
  MPI_Allreduce(MPI_IN_PLACE, values->data(), static_cast<int>(values->size()), MPI_UINT64_T,
                MPI_SUM, MPI_COMM_WORLD);
}

void BroadcastU64s(const World& world, std::vector<uint64_t>* values, int root) {
  (void)world;
  MPI_Bcast(values->data(), static_cast<int>(values->size()), MPI_UINT64_T, root, MPI_COMM_WORLD);
}

int BroadcastInt(const World& world, int value, int root) {
  (void)world;
  MPI_Bcast(&value, 1, MPI_INT, root, MPI_COMM_WORLD);
  return value;
}

int RanksOnThisNode(const World& world) {
  if (world.size == 1) return 1;
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world.rank, MPI_INFO_NULL, &node) !=
          MPI_SUCCESS ||
      node == MPI_COMM_NULL) {
    return world.size;  // unknown: as if every rank shared this node
  }
  int size = 1;
  MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  return std::max(size, 1);
}

uint64_t NodeMemoryBytes() {
  if (const char* env = std::getenv("NEARDUP_MPI_NODE_MEMORY")) {
    return std::strtoull(env, nullptr, 10);
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  uint64_t bytes = pages > 0 && page > 0
                       ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page)
                       : uint64_t{0};
  // A container's limit (cgroup v2), when it is lower: "max" or absent
  // leave the physical memory.
  std::ifstream limit("/sys/fs/cgroup/memory.max");
  unsigned long long cgroup = 0;
  if (limit >> cgroup && cgroup > 0 && (bytes == 0 || cgroup < bytes)) bytes = cgroup;
  return bytes;
}

}  // namespace neardup::mpi
