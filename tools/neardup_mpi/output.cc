// Copyright 2026 The neardup Authors.
//
// neardup-mpi dedup's cluster, assign, write and output stages (run.h).

#include "run.h"

namespace neardup::mpi {
namespace {

std::string EncodeAssignments(const std::vector<Assignment>& a) {
  std::string out;
  for (const Assignment& x : a) {
    const uint64_t words[5] = {x.local, x.record.cluster, x.record.duplicate ? 1u : 0u,
                               static_cast<uint64_t>(static_cast<int64_t>(x.record.distance)),
                               std::bit_cast<uint64_t>(x.record.jaccard)};
    AppendPod(words, &out);
    AppendStrings({x.nearest_id}, &out);
  }
  return out;
}

Result<std::vector<Assignment>> DecodeAssignments(std::string_view bytes) {
  std::vector<Assignment> out;
  while (!bytes.empty()) {
    uint64_t words[6];  // five, then the nearest id's length
    if (bytes.size() < sizeof words) return Status::Corruption("malformed assignment");
    std::memcpy(words, bytes.data(), sizeof words);
    if (bytes.size() - sizeof words < words[5]) return Status::Corruption("malformed assignment");
    Assignment& x = out.emplace_back();
    x.local = words[0];
    x.record.cluster = words[1];
    x.record.duplicate = words[2] != 0;
    x.record.distance = static_cast<int>(static_cast<int64_t>(words[3]));
    x.record.jaccard = std::bit_cast<double>(words[4]);
    x.nearest_id.assign(bytes.data() + sizeof words, words[5]);
    bytes.remove_prefix(sizeof words + words[5]);
  }
  return out;
}

std::string EncodeU64s(const std::vector<uint64_t>& v) {
  if (v.empty()) return {};
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(uint64_t));
}

}  // namespace

Status Run::Cluster() {
  const DedupConfig& c = *config_;
  // The join's input (16 bytes per distinct fingerprint) is done with.
  if (plan_ != nullptr) plan_->ReleaseKeys();
  Collected collected;
  if (c.options.mode == DedupMode::kCluster) {
    // The documents of clusters of two or more (and, when the method has
    // signatures, their groups' signatures) to rank 0; the others are their
    // own clusters, kept.
    const size_t perm = SignatureWords(*c.job);
    Traffic traffic;
    const Status got =
        CollectClustered(w_, own_.docs, groups_, first_[w_.rank], group_pairs_, own_.signatures,
                         perm, &collected, &traffic, c.verify() ? &own_.sketches : nullptr);
    groups_ = DistributedGroups();
    std::vector<uint64_t> moved = {traffic.bytes_sent};
    AllReduceSum(w_, &moved);
    nlohmann::ordered_json extra = {
        {"documents_clustered_on_rank_0", collected.clustered.positions.size()},
        {"rounds", traffic.rounds}};
    if (perm > 0) extra["signatures_on_rank_0"] = collected.signature_groups.size();
    stages_.push_back({"cluster", 0, moved[0], extra});
    NEARDUP_RETURN_IF_ERROR(got);
  }
  if (w_.rank != 0) return Status::OK();
  const DedupFlags& f = c.flags;
  if (c.options.mode == DedupMode::kCluster) {
    ClusteredDocuments& sub = collected.clustered;
    // No pair sink: --pairs-out is written once the ids are here.
    const DedupJoinReport join = result_.join;
    // Asked for the groups of clusters of two or more only: their
    // signatures were collected (signature_groups: the groups' numbers
    // before the renumbering, increasing).
    const size_t perm = SignatureWords(*c.job);
    const std::vector<uint64_t>& with = collected.signature_groups;
    const auto signature = [&](size_t g) {
      const auto k = static_cast<size_t>(std::lower_bound(with.begin(), with.end(), sub.chosen[g]) -
                                         with.begin());
      return std::span<const uint32_t>(collected.signatures).subspan(k * perm, perm);
    };
    // Verified pairs are dropped from sub.pairs too: --pairs-out writes them.
    plan_->Finish(sub.docs, &sub.groups, &sub.pairs, signature, collected.sketches, c.options,
                  &result_);
    clustered_sketches_ = std::move(collected.sketches);
    clustered_groups_ = std::move(sub.groups);
    clustered_pairs_ = std::move(sub.pairs);
    positions_ = std::move(sub.positions);
    // The summary of every document.
    DedupSummary& s = result_.summary;
    const uint64_t others = documents_ - positions_.size();
    s.documents += others;
    s.kept += others;
    s.clusters += others;
    s.empty += collected.empty;
    result_.join = join;
    result_.join.cluster_seconds = 0;
  } else {
    // Stream mode: a record for every document.
    positions_.resize(result_.records.size());
    std::iota(positions_.begin(), positions_.end(), uint64_t{0});
  }
  // The ids rank 0 needs: every duplicate's kept document (records); every
  // member of a cluster of two or more (--clusters-out); every document of a
  // pair (--pairs-out).
  std::vector<uint64_t> want;
  for (size_t j = 0; j < result_.records.size(); ++j) {
    const DedupRecord& r = result_.records[j];
    if (!r.duplicate) continue;
    want.push_back(positions_[r.nearest]);
    if (!f.clusters_out.empty()) want.push_back(positions_[j]);
  }
  if (!f.pairs_out.empty()) {
    if (c.options.mode == DedupMode::kStream) {
      for (const DedupPair& p : result_.pairs) want.insert(want.end(), {p.i, p.j});
    } else {
      // The members of groups of two or more and of paired groups.
      want.insert(want.end(), positions_.begin(), positions_.end());
    }
  }
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  wanted_.assign(static_cast<size_t>(w_.size), {});
  for (const uint64_t i : want) {
    const size_t r = Owner(i);
    wanted_[r].push_back(i - first_[r]);
  }
  // One entry (the collection may have made it).
  if (stages_.empty() || stages_.back().name != "cluster") stages_.push_back({"cluster", 0, 0, {}});
  stages_.back().extra["documents_clustered_on_rank_0"] = positions_.size();
  return Status::OK();
}

Status Run::Assign() {
  Traffic traffic;
  std::vector<std::string> requests;
  for (const std::vector<uint64_t>& w : wanted_) requests.push_back(EncodeU64s(w));
  const std::vector<uint64_t> wanted =
      DecodePods<uint64_t>(ScatterBytes(w_, requests, 0, &traffic));
  std::vector<std::string>().swap(requests);
  std::string ids;
  for (const uint64_t local : wanted) {
    AppendStrings({local < own_.ids.size() ? own_.ids[local] : std::string()}, &ids);
  }
  const std::string all_ids = GatherBytes(w_, ids, 0, &traffic);
  std::string().swap(ids);
  // Rank 0: the ids, then each rank's part of the result (the documents in
  // clusters of two or more; the others are singletons).
  Status status = Status::OK();
  std::vector<std::string> parts(static_cast<size_t>(w_.size));
  if (w_.rank == 0) {
    if (!ReadStrings(all_ids, &ids_)) status = Status::Corruption("malformed id exchange");
    for (size_t r = 0; r < wanted_.size(); ++r) {
      for (const uint64_t local : wanted_[r]) id_positions_.push_back(first_[r] + local);
    }
    std::vector<std::vector<uint64_t>>().swap(wanted_);
    if (ids_.size() != id_positions_.size()) status = Status::Corruption("ids lost in exchange");
    // Records of the clustered documents only (positions_, increasing: each
    // rank's in its order).
    for (size_t j = 0; status.ok() && j < result_.records.size(); ++j) {
      const uint64_t i = positions_[j];
      Assignment a;
      a.record = result_.records[j];
      a.record.cluster = positions_[a.record.cluster];
      a.record.nearest = positions_[a.record.nearest];
      if (!a.record.duplicate && a.record.cluster == i) continue;
      const size_t r = Owner(i);
      a.local = i - first_[r];
      if (a.record.duplicate) a.nearest_id = Id(a.record.nearest);
      parts[r] += EncodeAssignments({a});
    }
  }
  const std::string mine = ScatterBytes(w_, parts, 0, &traffic);
  std::vector<std::string>().swap(parts);
  std::vector<uint64_t> moved = {traffic.bytes_sent};
  AllReduceSum(w_, &moved);
  stages_.push_back(
      {"assign",
       0,
       moved[0],
       {{"ids_on_rank_0", ids_.size() + own_.ids.size()}, {"rounds", traffic.rounds}}});
  NEARDUP_RETURN_IF_ERROR(status);
  NEARDUP_ASSIGN_OR_RETURN(assigned_, DecodeAssignments(mine));
  std::vector<uint32_t>().swap(own_.signatures);
  if (w_.rank == 0) {
    // What the outputs still need on rank 0: the groups and pairs
    // (--pairs-out), the records (--clusters-out).
    std::vector<DedupDocument>().swap(all_.docs);
    if (config_->flags.clusters_out.empty()) std::vector<DedupRecord>().swap(result_.records);
  }
  return Status::OK();
}

Status Run::WriteParts() {
  const DedupFlags& f = config_->flags;
  std::vector<std::string> paths = {PartPath(flags_.work_dir, w_.rank, "records")};
  if (!f.unique_out.empty()) paths.push_back(PartPath(flags_.work_dir, w_.rank, "unique"));
  if (!f.duplicates_out.empty()) paths.push_back(PartPath(flags_.work_dir, w_.rank, "duplicates"));
  const std::string marker = PartPath(flags_.work_dir, w_.rank, "done");
  if (flags_.resume) {
    // The same command line and ranks (run.id): the same lines.
    auto earlier = ReadChecked(marker);
    auto now = PartsDigest(paths);
    if (earlier.ok() && now.ok() && *earlier == *now) {
      (*log_)("write: parts done in an earlier run, skipped");
      return Status::OK();
    }
  }
  NEARDUP_ASSIGN_OR_RETURN(PartWriter records,
                           PartWriter::Create(PartPath(flags_.work_dir, w_.rank, "records")));
  std::optional<PartWriter> kept, duplicates;
  if (!f.unique_out.empty()) {
    NEARDUP_ASSIGN_OR_RETURN(kept,
                             PartWriter::Create(PartPath(flags_.work_dir, w_.rank, "unique")));
  }
  if (!f.duplicates_out.empty()) {
    NEARDUP_ASSIGN_OR_RETURN(duplicates,
                             PartWriter::Create(PartPath(flags_.work_dir, w_.rank, "duplicates")));
  }
  const uint64_t first = first_[static_cast<size_t>(w_.rank)];
  size_t next = 0;
  for (size_t i = 0; i < own_.docs.size(); ++i) {
    DedupRecord r;
    r.cluster = r.nearest = first + i;
    r.empty = own_.docs[i].empty;
    std::string_view nearest_id = own_.ids[i];
    if (next < assigned_.size() && assigned_[next].local == i) {
      const Assignment& a = assigned_[next++];
      r.cluster = a.record.cluster;
      r.duplicate = a.record.duplicate;
      r.distance = a.record.distance;
      r.jaccard = a.record.jaccard;
      nearest_id = a.nearest_id;
    }
    NEARDUP_RETURN_IF_ERROR(
        records.Write(config_->job->RecordLine(own_.docs[i], r, own_.ids[i], nearest_id)));
    std::optional<PartWriter>& to = r.duplicate ? duplicates : kept;
    if (to) {
      NEARDUP_RETURN_IF_ERROR(to->Write(own_.records[i]));
      NEARDUP_RETURN_IF_ERROR(to->Write("\n"));
    }
  }
  if (next != assigned_.size()) return Status::Corruption("write: an assignment of no document");
  NEARDUP_RETURN_IF_ERROR(records.Close());
  if (kept) NEARDUP_RETURN_IF_ERROR(kept->Close());
  if (duplicates) NEARDUP_RETURN_IF_ERROR(duplicates->Close());
  NEARDUP_ASSIGN_OR_RETURN(const std::string digest, PartsDigest(paths));
  NEARDUP_RETURN_IF_ERROR(WriteFileAtomically(marker, digest));
  (*log_)("write: " + std::to_string(own_.docs.size()) + " documents' lines");
  if (FailAt(w_, "write")) std::raise(SIGKILL);
  return Status::OK();
}

Status Run::WriteOutputs() {
  if (w_.rank != 0) return Status::OK();
  const auto t = std::chrono::steady_clock::now();
  const DedupConfig& c = *config_;
  const DedupFlags& f = c.flags;
  NEARDUP_ASSIGN_OR_RETURN(out_, cli::Output::Open(f.input.output, f.input.inputs));
  std::vector<std::string> parts;
  for (int r = 0; r < w_.size; ++r) {
    parts.push_back(PartPath(flags_.work_dir, r, "done"));
    parts.push_back(PartPath(flags_.work_dir, r, "records"));
    NEARDUP_RETURN_IF_ERROR(CopyInto(parts.back(), out_.get()));
    if (r == 0 && w_.size > 1) {
      // The output half copied, under its temporary name.
      if (FailAt(w_, "output")) std::raise(SIGKILL);
      if (FailAt(w_, "term")) std::raise(SIGTERM);
    }
  }
  NEARDUP_RETURN_IF_ERROR(out_->Close());
  for (const bool dups : {false, true}) {
    const std::string& path = dups ? f.duplicates_out : f.unique_out;
    if (path.empty()) continue;
    NEARDUP_ASSIGN_OR_RETURN(auto out, cli::Output::Open(path, f.input.inputs));
    for (int r = 0; r < w_.size; ++r) {
      parts.push_back(PartPath(flags_.work_dir, r, dups ? "duplicates" : "unique"));
      NEARDUP_RETURN_IF_ERROR(CopyInto(parts.back(), out.get()));
    }
    NEARDUP_RETURN_IF_ERROR(out->Close());
  }
  if (!f.pairs_out.empty()) {
    NEARDUP_ASSIGN_OR_RETURN(auto out, cli::Output::Open(f.pairs_out, f.input.inputs));
    // Stream mode's pairs are of positions, cluster mode's of indexes into
    // positions_ (the identity in stream mode).
    const auto sink = [&](const DedupPair& p) {
      // Cluster mode's pairs come from the groups: their estimate from the
      // clustered documents' sketches.
      const double jaccard =
          p.jaccard >= 0 || clustered_sketches_.empty()
              ? p.jaccard
              : SketchJaccard(clustered_sketches_[p.i], clustered_sketches_[p.j]);
      out->Write(c.job->PairLine(Id(positions_[p.i]), Id(positions_[p.j]), p.distance, jaccard));
    };
    if (c.options.mode == DedupMode::kStream) {
      for (const DedupPair& p : result_.pairs) sink(p);
    } else {
      // Over the clustered documents (every document of a pair is one):
      // the same pairs in the same order, renumbered.
      EmitDocumentPairs(clustered_groups_, clustered_pairs_, sink);
    }
    NEARDUP_RETURN_IF_ERROR(out->Close());
  }
  NEARDUP_RETURN_IF_ERROR(cli::WriteClusters(
      c, result_, [this](size_t i) { return Id(i); }, positions_));
  // Each rank's marker before its parts: a marker never outlives them.
  for (const std::string& p : parts) NEARDUP_RETURN_IF_ERROR(file::RemoveFile(p));
  output_seconds_ = Since(t);
  return WriteMarker(flags_.work_dir, "write");
}

void Run::Report() {
  if (w_.rank != 0) return;
  nlohmann::ordered_json o = {{"ranks", w_.size}, {"documents", documents_}};
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const StageReport& s : stages_) {
    nlohmann::ordered_json j = {
        {"stage", s.name}, {"seconds", s.seconds}, {"bytes_moved", s.bytes_moved}};
    if (s.extra.is_object()) j.update(s.extra);
    stages.push_back(j);
  }
  o["stages"] = stages;
  std::ofstream(flags_.work_dir + "/report.json") << o.dump(2) << "\n";
}

}  // namespace neardup::mpi
