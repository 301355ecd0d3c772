// Copyright 2026 The neardup Authors.

#include "boilerplate_exchange.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace neardup::mpi {
namespace {

// The LineStats of each rank's bytes in `bytes` (`sizes[r]` bytes from rank
// r, in rank order).
Result<std::vector<LineStats>> Parts(std::string_view bytes, const std::vector<uint64_t>& sizes,
                                     const std::string& what) {
  std::vector<LineStats> parts;
  size_t at = 0;
  for (size_t r = 0; r < sizes.size(); ++r) {
    if (sizes[r] > bytes.size() - at) return Status::Corruption(what + ": bytes lost");
    NEARDUP_ASSIGN_OR_RETURN(auto part,
                             LineStats::Deserialize(bytes.substr(at, sizes[r]),
                                                    what + " from rank " + std::to_string(r)));
    parts.push_back(std::move(part));
    at += sizes[r];
  }
  return parts;
}

}  // namespace

Result<LineCountsReduced> ReduceLineCounts(const World& world, LineStats local,
                                           const Status& status, uint32_t min_docs,
                                           bool all_on_rank_0) {
  LineCountsReduced out;
  Status st = status;
  if (!st.ok()) local = LineStats();
  // 1. Range r of my counts to rank r, one range serialized at a time.
  std::vector<std::string> to(static_cast<size_t>(world.size));
  {
    std::vector<LineStats> split = local.SplitByKey(to.size());
    local = LineStats();
    for (size_t r = 0; r < to.size(); ++r) {
      to[r] = split[r].Serialize();
      split[r] = LineStats();
    }
  }
  std::vector<uint64_t> sums = {0, 0, 0};
  for (const std::string& bytes : to) sums[0] += bytes.size();
  std::vector<uint64_t> from_sizes;
  std::string received = AllToAllBytes(world, to, &out.traffic, &from_sizes);
  std::vector<std::string>().swap(to);
  // 2. My range over the whole corpus: every rank's counts of it merged.
  LineStats range;
  {
    LineCounter counter;
    auto parts = Parts(received, from_sizes, "line counts");
    std::string().swap(received);
    if (parts.ok()) {
      for (LineStats& part : *parts) {
        counter.Merge(part);
        part = LineStats();
      }
    } else if (st.ok()) {
      st = parts.status();
    }
    range = std::move(counter).Finish();
  }
  const LineStats kept = range.AtLeast(min_docs);
  // 3. --boilerplate-stats-out: every range on rank 0 (the file is the whole
  // corpus's counts), for that run alone.
  if (all_on_rank_0) {
    const std::string mine = range.Serialize();
    const std::vector<uint64_t> sizes = AllGatherU64(world, mine.size());
    const std::string all = GatherBytes(world, mine, 0, &out.traffic);
    if (world.rank == 0) {
      auto parts = Parts(all, sizes, "line counts");
      auto joined = parts.ok() ? LineStats::Union(*parts) : parts.status();
      if (joined.ok()) {
        out.all = std::move(*joined);
      } else if (st.ok()) {
        st = joined.status();
      }
    }
  }
  sums[1] = range.distinct_lines();
  range = LineStats();
  // 4. The kept lines of every range, on every rank.
  const std::string mine = kept.Serialize();
  sums[2] = mine.size();
  const std::vector<uint64_t> range_lines = AllGatherU64(world, sums[1]);
  AllReduceSum(world, &sums);
  out.count_bytes = sums[0];
  out.distinct_lines = sums[1];
  out.kept_bytes = sums[2];
  out.range_lines = *std::max_element(range_lines.begin(), range_lines.end());
  const std::vector<uint64_t> sizes = AllGatherU64(world, mine.size());
  const std::string all = AllGatherBytes(world, mine, &out.traffic);
  NEARDUP_RETURN_IF_ERROR(st);
  NEARDUP_ASSIGN_OR_RETURN(auto parts, Parts(all, sizes, "boilerplate lines"));
  NEARDUP_ASSIGN_OR_RETURN(out.kept, LineStats::Union(parts));
  return out;
}

}  // namespace neardup::mpi
