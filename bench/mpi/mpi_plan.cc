// Copyright 2026 The neardup Authors.
//
// The band join of the 10^9 plan (doc/distributed.md) from the library's own
// cost model: ChooseSimHashBands for N fingerprints of 128 bits at each k
// (recall 0.99 at k, random fingerprints: sample distances Binomial(f, 1/2),
// as the plan assumes), and EstimateExactJoinSeconds. No MPI, no data: it
// prints the layout the code would choose.
//
//   build/neardup_mpi_plan [N ...]     (default: 10^6 10^7 10^9)

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "neardup/band_join.h"

int main(int argc, char** argv) {
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {1000000, 10000000, 1000000000};
  std::printf("%12s %3s %3s %5s %10s %10s %18s %16s %14s\n", "N", "k", "r", "L", "recall(k)",
              "recall(k-4)", "candidates", "band_join_s", "exact_s");
  for (const size_t n : sizes) {
    for (const int k : {10, 24, 28}) {
      const neardup::SimHashBands b =
          neardup::ChooseSimHashBands(n, 128, k, 0.99, {}, neardup::kDefaultBandSeed);
      std::printf("%12zu %3d %3d %5d %10.5f %10.5f %18.4g %16.6g %14.6g\n", n, k, b.band_bits,
                  b.bands, b.recall_at_k, b.recall_at_k_minus_4, b.estimated_candidates,
                  b.estimated_seconds, neardup::EstimateExactJoinSeconds(n, 128, k));
    }
  }
  return 0;
}
