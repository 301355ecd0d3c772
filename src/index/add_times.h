// Copyright 2026 The neardup Authors.
//
// Internal: when each document of a DocumentIndex was added, for eviction by
// age (doc/index_format.md, "Add times"). Numeric ids (ids file lines) are
// assigned in insertion order and the recorded times never decrease with
// them, so the times are a step function of the line: a list of checkpoints
// (first line, unix seconds), each holding from its line to the next
// checkpoint's.
//
// Thread safety: none; the index's mutex guards it.

#ifndef NEARDUP_INDEX_ADD_TIMES_H_
#define NEARDUP_INDEX_ADD_TIMES_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace neardup::index_internal {

// At most this many checkpoints are written to an ids file's header; beyond
// it the times are rounded up to the coarsest power of two seconds that fits
// (an entry then looks younger than it is, by less than that: never evicted
// early).
inline constexpr size_t kMaxAddTimeCheckpoints = 65536;

class AddTimes {
 public:
  struct Checkpoint {
    uint64_t line = 0;
    int64_t time = 0;  // unix seconds
    friend bool operator==(const Checkpoint&, const Checkpoint&) = default;
  };

  void Clear() { points_.clear(); }
  bool empty() const { return points_.empty(); }
  const std::vector<Checkpoint>& points() const { return points_; }

  // Lines from `line` on (line >= every earlier call's) were added at `time`,
  // raised to the last recorded time when the clock went back. Returns the
  // time recorded.
  int64_t Note(uint64_t line, int64_t time) {
    if (!points_.empty()) {
      time = std::max(time, points_.back().time);
      if (points_.back().time == time) return time;
      if (points_.back().line == line) {
        points_.back().time = time;  // nothing was added at the earlier time
        return time;
      }
    }
    points_.push_back({line, time});
    return time;
  }
  // Forgets the times of lines >= `lines` (to be noted again).
  void TruncateTo(uint64_t lines) {
    while (!points_.empty() && points_.back().line >= lines) points_.pop_back();
  }
  // The last time recorded (min() when none).
  int64_t last() const {
    return points_.empty() ? std::numeric_limits<int64_t>::min() : points_.back().time;
  }
  // The first line added at `cutoff` or later (every line below it was added
  // before `cutoff`); `lines` when none was.
  uint64_t FirstLineAtOrAfter(int64_t cutoff, uint64_t lines) const {
    auto it = std::lower_bound(points_.begin(), points_.end(), cutoff,
                               [](const Checkpoint& c, int64_t t) { return c.time < t; });
    return it == points_.end() ? lines : it->line;
  }

  // The header member "added": [[line, time], ...] of the lines from `floor`
  // (every line below it is removed) to `lines`, at most
  // kMaxAddTimeCheckpoints of them (rounded up, above).
  nlohmann::ordered_json ToJson(uint64_t floor) const {
    std::vector<Checkpoint> kept;
    for (size_t i = 0; i < points_.size(); ++i) {
      const bool next_covers_floor = i + 1 < points_.size() && points_[i + 1].line <= floor;
      if (!next_covers_floor) kept.push_back(points_[i]);
    }
    for (int64_t unit = 2; kept.size() > kMaxAddTimeCheckpoints; unit *= 2) {
      std::vector<Checkpoint> coarse;
      for (const Checkpoint& c : kept) {
        const int64_t up = c.time >= 0 ? (c.time + unit - 1) / unit * unit : c.time / unit * unit;
        if (!coarse.empty() && coarse.back().time == up) continue;
        coarse.push_back({c.line, up});
      }
      kept = std::move(coarse);
    }
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const Checkpoint& c : kept) out.push_back({c.line, c.time});
    return out;
  }
  // Reads "added"; "" on success, else why it is malformed (lines must
  // ascend strictly, times not descend, lines be below `lines`).
  std::string FromJson(const nlohmann::ordered_json& j, uint64_t lines) {
    points_.clear();
    if (!j.is_array()) return "added must be an array of [line, time] pairs";
    for (const auto& p : j) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_number_unsigned() ||
          !p[1].is_number_integer()) {
        return "added must be an array of [line, time] pairs of integers";
      }
      const Checkpoint c{p[0].get<uint64_t>(), p[1].get<int64_t>()};
      if (c.line >= lines) {
        return "added names line " + std::to_string(c.line) + " of " + std::to_string(lines);
      }
      if (!points_.empty() && (c.line <= points_.back().line || c.time < points_.back().time)) {
        return "added must ascend in line and time";
      }
      points_.push_back(c);
    }
    return "";
  }

 private:
  std::vector<Checkpoint> points_;
};

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_ADD_TIMES_H_
