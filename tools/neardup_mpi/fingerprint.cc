// Copyright 2026 The neardup Authors.
//
// neardup-mpi dedup's fingerprint and gather stages (run.h).

#include "run.h"

namespace neardup::mpi {
namespace {

// The library's rule for repeated ids (FindRepeatedIds, neardup dedup's
// warning) over the ranks: each id's XXH3-128 goes, with its document's
// position, to the rank of its hash; there the repeats are counted, and
// the first repeat (the smallest position whose id an earlier document
// has) with that earlier document is chosen over the ranks; its id comes
// from the rank that read it. `first`: this rank's first position. The
// result on rank 0 (count 0 elsewhere). Collective.
RepeatedIds FindRepeatedIdsOverRanks(const World& w, const std::vector<std::string>& ids,
                                     uint64_t first, Traffic* traffic) {
  struct Entry {
    uint64_t hi, lo, position;
  };
  std::vector<std::string> to(static_cast<size_t>(w.size));
  // Room for an even share and some more (the hashes spread the ids evenly):
  // no string doubles past it.
  for (std::string& t : to) {
    t.reserve((ids.size() / static_cast<size_t>(w.size) + ids.size() / 64 + 64) * sizeof(Entry));
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    const XXH128_hash_t h = XXH3_128bits(ids[i].data(), ids[i].size());
    AppendPod(Entry{h.high64, h.low64, first + i}, &to[h.low64 % static_cast<uint64_t>(w.size)]);
  }
  // One copy at a time: what is sent is freed before the received bytes
  // are decoded, and those before the sort.
  std::string received = AllToAllBytes(w, to, traffic);
  std::vector<std::string>().swap(to);
  std::vector<Entry> mine = DecodePods<Entry>(received);
  std::string().swap(received);
  std::sort(mine.begin(), mine.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.hi, a.lo, a.position) < std::tie(b.hi, b.lo, b.position);
  });
  uint64_t count = 0, repeat = UINT64_MAX, repeat_of = 0;
  for (size_t i = 1; i < mine.size(); ++i) {
    if (mine[i].hi != mine[i - 1].hi || mine[i].lo != mine[i - 1].lo) continue;
    ++count;
    // The group's second member repeats its first.
    if (i >= 2 && mine[i - 2].hi == mine[i].hi && mine[i - 2].lo == mine[i].lo) continue;
    if (mine[i].position < repeat) {
      repeat = mine[i].position;
      repeat_of = mine[i - 1].position;
    }
  }
  std::vector<uint64_t> total = {count};
  AllReduceSum(w, &total);
  const std::vector<uint64_t> repeats = AllGatherU64(w, repeat);
  const std::vector<uint64_t> repeats_of = AllGatherU64(w, repeat_of);
  RepeatedIds r;
  if (total[0] == 0) return r;
  const size_t best =
      static_cast<size_t>(std::min_element(repeats.begin(), repeats.end()) - repeats.begin());
  const uint64_t position = repeats[best];
  std::string id;
  if (position >= first && position - first < ids.size()) id = ids[position - first];
  const std::string all = GatherBytes(w, id, 0, traffic);
  if (w.rank != 0) return r;
  r.count = total[0];
  r.first = position;
  r.first_of = repeats_of[best];
  r.id = all;  // only the reader of `position` sent its id
  return r;
}

}  // namespace

Status Run::CountBoilerplate(bool needed) {
  if (!needed) return Status::OK();
  LineCounter counter;
  Status counted = Status::OK();
  for (size_t u = cut_[w_.rank]; counted.ok() && u < cut_[w_.rank + 1]; ++u) {
    cli::InputFlags input = config_->flags.input;
    input.inputs = {input.inputs[units_[u].input]};
    ReadOptions read_options = UnitReadOptions(config_->read_options, units_[u]);
    read_options.on_issue = [](const InputIssue&) {};  // reported by the fingerprint pass
    auto reader = DocumentReader::Open(input.inputs, read_options);
    auto got = reader.ok() ? config_->job->CountLineStats(**reader) : reader.status();
    if (got.ok()) {
      counter.Merge(*got);
    } else {
      counted = got.status();
    }
  }
  // Reduced by key range: only the boilerplate lines come back
  // (boilerplate_exchange.h).
  const bool stats_out = !config_->flags.boilerplate.stats_out.empty();
  auto reduced = ReduceLineCounts(w_, std::move(counter).Finish(), counted,
                                  static_cast<uint32_t>(config_->boilerplate.min_docs), stats_out);
  std::vector<uint64_t> moved = {reduced.ok() ? reduced->traffic.bytes_sent : 0};
  AllReduceSum(w_, &moved);
  NEARDUP_RETURN_IF_ERROR(reduced.status());
  stages_.push_back({"boilerplate",
                     0,
                     moved[0],
                     {{"distinct_lines", reduced->distinct_lines},
                      {"most_lines_in_a_range", reduced->range_lines},
                      {"count_bytes", reduced->count_bytes},
                      {"kept_lines", reduced->kept.distinct_lines()},
                      {"kept_bytes", reduced->kept_bytes}}});
  NEARDUP_RETURN_IF_ERROR(config_->job->UseLineStats(std::move(reduced->kept)));
  if (w_.rank == 0 && stats_out) {
    NEARDUP_RETURN_IF_ERROR(reduced->all.Save(config_->flags.boilerplate.stats_out));
  }
  return Status::OK();
}

Status Run::Fingerprint(bool* any_needed_out) {
  const DedupFlags& f = config_->flags;
  const size_t num_perm = SignatureWords(*config_->job);
  const auto name = [&](const Unit& u) {
    std::string s = "input " + std::to_string(u.input) + " (" + f.input.inputs[u.input];
    if (u.pieces > 1) {
      s += ", piece " + std::to_string(u.piece) + " of " + std::to_string(u.pieces) + ": bytes " +
           std::to_string(u.begin) + ".." + std::to_string(u.end) + ", from line " +
           std::to_string(u.first_line);
    }
    return s + ")";
  };
  // Shards done in an earlier run.
  std::vector<size_t> todo;
  for (size_t u = cut_[w_.rank]; u < cut_[w_.rank + 1]; ++u) {
    mine_.emplace_back();
    if (flags_.resume) {
      const std::string path = ShardPath(flags_.work_dir, units_[u]);
      auto bytes = ReadChecked(path);
      if (bytes.ok()) {
        auto shard = DecodeShard(*bytes, path, num_perm);
        if (shard.ok()) {
          mine_.back() = std::move(*shard);
          (*log_)("fingerprint: " + name(units_[u]) + ": done in an earlier run, skipped");
          continue;
        }
        (*log_)("fingerprint: " + shard.status().message() + "; computing it again");
      }
    }
    todo.push_back(u);
  }
  std::vector<uint64_t> need = {todo.size()};
  AllReduceSum(w_, &need);
  *any_needed_out = need[0] > 0;
  // Collective: every rank takes part in the count when any rank needs it.
  const bool count = need[0] > 0 && config_->boilerplate.mode != BoilerplateMode::kOff;
  const Status counted = CountBoilerplate(count);
  if (!counted.ok()) return counted;
  ReleaseFreeMemory();  // the line counts, but the boilerplate lines
  for (size_t u : todo) {
    const Unit& unit = units_[u];
    cli::InputFlags input = f.input;
    input.inputs = {f.input.inputs[unit.input]};
    input.quiet = true;  // one summary for the job, on rank 0
    const uint64_t dropped_before = config_->job->dropped_lines();
    Shard& shard = mine_[u - cut_[w_.rank]];
    const ReadOptions read_options = UnitReadOptions(config_->read_options, unit);
    NEARDUP_ASSIGN_OR_RETURN(shard.stats,
                             cli::FingerprintInputs(*config_, input, &shard.corpus, &read_options));
    shard.boilerplate_dropped = config_->job->dropped_lines() - dropped_before;
    NEARDUP_RETURN_IF_ERROR(
        WriteFileAtomically(ShardPath(flags_.work_dir, unit), EncodeShard(shard)));
    (*log_)("fingerprint: " + name(unit) + ": " + std::to_string(shard.corpus.docs.size()) +
            " documents");
    // The reader's and the shard's encoding's buffers, and what the
    // corpus's vectors left growing.
    ReleaseFreeMemory();
    if (FailAt(w_, "fingerprint")) std::raise(SIGKILL);
  }
  return Status::OK();
}

Status Run::Gather() {
  std::vector<uint64_t> sums(kStatsWords + 2, 0);
  // Each shard is freed once it is moved into own_ (reserved for all of
  // them: no copy while a vector grows), so the documents are held once.
  size_t own = 0, own_signatures = 0, own_sketches = 0;
  for (const Shard& s : mine_) {
    own += s.corpus.docs.size();
    own_signatures += s.corpus.signatures.size();
    own_sketches += s.corpus.sketches.size();
  }
  own_.docs.reserve(own);
  own_.ids.reserve(own);
  own_.signatures.reserve(own_signatures);
  own_.sketches.reserve(own_sketches);
  for (Shard& s : mine_) {
    own_.signatures.insert(own_.signatures.end(), s.corpus.signatures.begin(),
                           s.corpus.signatures.end());
    const std::vector<uint64_t> words = StatsWords(s.stats);
    for (size_t k = 0; k < kStatsWords; ++k) sums[k] += words[k];
    sums[kStatsWords] += s.corpus.bad_scores;
    sums[kStatsWords + 1] += s.boilerplate_dropped;
    // My documents stay here: their lines are written by this rank (the
    // input records read back from the inputs then: the shards hold none).
    own_.docs.insert(own_.docs.end(), s.corpus.docs.begin(), s.corpus.docs.end());
    own_.sketches.insert(own_.sketches.end(), s.corpus.sketches.begin(), s.corpus.sketches.end());
    std::move(s.corpus.short_sets.begin(), s.corpus.short_sets.end(),
              std::back_inserter(own_.short_sets));
    std::move(s.corpus.ids.begin(), s.corpus.ids.end(), std::back_inserter(own_.ids));
    s.corpus = DedupCorpus();
    ReleaseFreeMemory();
  }
  mine_.clear();
  AllReduceSum(w_, &sums);
  stats_ = StatsFromWords(sums.data());
  bad_scores_ = sums[kStatsWords];
  dropped_ = sums[kStatsWords + 1];
  const std::vector<uint64_t> counts = AllGatherU64(w_, own_.docs.size());
  first_.assign(counts.size() + 1, 0);
  for (size_t r = 0; r < counts.size(); ++r) first_[r + 1] = first_[r] + counts[r];
  documents_ = first_.back();
  {
    Traffic traffic;
    repeated_ids_ = FindRepeatedIdsOverRanks(w_, own_.ids, first_[w_.rank], &traffic);
    std::vector<uint64_t> moved = {traffic.bytes_sent};
    AllReduceSum(w_, &moved);
    stages_.push_back({"ids", 0, moved[0], {{"repeated_ids", repeated_ids_.count}}});
  }
  // Stream mode is sequential: rank 0 runs it on every document. Cluster
  // mode gathers nothing: the documents are grouped over the ranks (plan).
  if (config_->options.mode == DedupMode::kCluster) return Status::OK();
  std::string packed;
  for (const DedupDocument& d : own_.docs) {
    AppendPod(Pack(d), &packed);
  }
  Traffic traffic;
  const std::string all = GatherBytes(w_, packed, 0, &traffic);
  std::string().swap(packed);
  // Verified pairs: every document's sketch too.
  const std::string sketches =
      GatherBytes(w_,
                  std::string(reinterpret_cast<const char*>(own_.sketches.data()),
                              own_.sketches.size() * sizeof(JaccardSketch)),
                  0, &traffic);
  std::vector<uint64_t> moved = {traffic.bytes_sent};
  AllReduceSum(w_, &moved);
  stages_.push_back({"gather", 0, moved[0], {{"rounds", traffic.rounds}}});
  if (w_.rank != 0) return Status::OK();
  const size_t n = all.size() / sizeof(PackedDocument);
  if (n != documents_) return Status::Corruption("gather: documents lost in the exchange");
  all_.docs.resize(n);
  for (size_t i = 0; i < n; ++i) {
    PackedDocument p;
    std::memcpy(&p, all.data() + i * sizeof p, sizeof p);
    all_.docs[i] = Unpack(p);
  }
  if (config_->verify()) {
    if (sketches.size() != n * sizeof(JaccardSketch)) {
      return Status::Corruption("gather: sketches lost in the exchange");
    }
    all_.sketches.resize(n);
    if (n > 0) std::memcpy(all_.sketches.data(), sketches.data(), sketches.size());
  }
  return Status::OK();
}

}  // namespace neardup::mpi
