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

// This rank's input records, in input order, read back from its units for
// --unique-out and --duplicates-out: the shards hold none (an input's text
// is kept only in the input). The fingerprint stage's reader with the same
// options, so the same documents in the same order; each document's id is
// checked against the shard's (--resume's identity already refuses an input
// changed since the run began; this catches one changed during it).
class RecordsReadBack {
 public:
  RecordsReadBack(const std::vector<std::string>& inputs, const ReadOptions& base,
                  const std::vector<Unit>& units, size_t begin, size_t end)
      : inputs_(inputs), base_(base), units_(units), next_(begin), end_(end) {
    base_.keep_records = true;
    base_.on_issue = [](const InputIssue&) {};  // reported by the fingerprint stage
  }

  // Document `i`'s record (`id`: the shard's id of it).
  Result<const std::string*> Next(uint64_t i, std::string_view id) {
    NEARDUP_ASSIGN_OR_RETURN(const bool more, Advance());
    if (!more) return Changed("no document " + std::to_string(i + 1) + " any more");
    if (doc_.id != id) {
      return Changed("document " + std::to_string(i + 1) + " is \"" + doc_.id + "\", it was \"" +
                     std::string(id) + "\"");
    }
    return &doc_.record;
  }
  // After the last document: OK when the units hold no more.
  Status Finish(uint64_t count) {
    NEARDUP_ASSIGN_OR_RETURN(const bool more, Advance());
    if (more) return Changed("more than " + std::to_string(count) + " documents");
    return Status::OK();
  }

 private:
  Result<bool> Advance() {
    while (true) {
      if (reader_ == nullptr) {
        if (next_ == end_) return false;
        unit_ = next_++;
        const Unit& u = units_[unit_];
        NEARDUP_ASSIGN_OR_RETURN(
            reader_, DocumentReader::Open({inputs_[u.input]}, UnitReadOptions(base_, u)));
      }
      if (reader_->Next(&doc_)) return true;
      reader_.reset();
    }
  }
  Status Changed(const std::string& what) const {
    const Unit& u = units_[unit_];
    return Status::IOError(inputs_[u.input] + ": the input records read back for the output " +
                           "differ from the fingerprint stage's (" + what +
                           "): the input changed during the run; rerun without --resume");
  }

  const std::vector<std::string>& inputs_;
  ReadOptions base_;
  const std::vector<Unit>& units_;
  size_t next_, end_, unit_ = 0;
  std::unique_ptr<DocumentReader> reader_;
  Document doc_;
};

// `mpi_error` (an MPI-IO call's result) as a Status naming `path`.
Status MpiIo(int mpi_error, const std::string& what, const std::string& path) {
  if (mpi_error == MPI_SUCCESS) return Status::OK();
  char text[MPI_MAX_ERROR_STRING];
  int n = 0;
  MPI_Error_string(mpi_error, text, &n);
  return Status::IOError("cannot write " + path + " (" + what + "): " + std::string(text, n));
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
  std::optional<RecordsReadBack> read_back;
  if (kept || duplicates) {
    read_back.emplace(f.input.inputs, config_->read_options, units_, cut_[w_.rank],
                      cut_[w_.rank + 1]);
  }
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
    if (!read_back) continue;
    NEARDUP_ASSIGN_OR_RETURN(const std::string* record, read_back->Next(i, own_.ids[i]));
    std::optional<PartWriter>& to = r.duplicate ? duplicates : kept;
    if (to) {
      NEARDUP_RETURN_IF_ERROR(to->Write(*record));
      NEARDUP_RETURN_IF_ERROR(to->Write("\n"));
    }
  }
  if (read_back) NEARDUP_RETURN_IF_ERROR(read_back->Finish(own_.docs.size()));
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

Status Run::WriteOutput(const std::string& path, const char* what, std::vector<std::string>* parts,
                        uint64_t* copied_by_rank_0) {
  const DedupFlags& f = config_->flags;
  // Rank 0: where the ranks write (its temporary name for `path`), or ""
  // when rank 0 copies the parts (standard output, a FIFO, a device: no
  // offsets there).
  std::string temp;
  Status status = Status::OK();
  if (w_.rank == 0) {
    struct stat st;
    const bool direct =
        path.empty() || path == "-" || (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode));
    if (!direct) {
      auto begun = cli::BeginOutputFile(path);
      if (begun.ok()) {
        temp = *begun;
        // Created (empty) by rank 0 first: a path rank 0 cannot write fails here.
        std::FILE* created = std::fopen(temp.c_str(), "wb");
        if (created == nullptr) {
          status = Status::IOError("cannot write " + path + ": " + std::strerror(errno));
        } else {
          std::fclose(created);
        }
      } else {
        status = begun.status();
      }
    }
  }
  if (!AllRanksOk(w_, status)) return status;
  BroadcastBytes(w_, &temp, 0, nullptr);
  const std::string part = PartPath(flags_.work_dir, w_.rank, what);
  // The output's directory must be seen by every rank (a shared file
  // system); where a rank does not see rank 0's temporary file (an output
  // on rank 0's local disk), rank 0 writes the output alone, as before.
  struct stat seen;
  const std::vector<uint64_t> sees =
      AllGatherU64(w_, temp.empty() || stat(temp.c_str(), &seen) == 0 ? 1 : 0);
  const auto blind = std::find(sees.begin(), sees.end(), 0);
  if (temp.empty() || blind != sees.end()) {
    // Rank 0 copies every rank's part.
    if (w_.rank != 0) return Status::OK();
    std::unique_ptr<cli::Output> out;
    std::FILE* file = nullptr;
    if (temp.empty()) {
      NEARDUP_ASSIGN_OR_RETURN(out, cli::Output::Open(path, f.input.inputs));
    } else {
      (*log_)("output: " + path + " is not seen by " +
              Where(static_cast<int>(blind - sees.begin())) +
              " (not on a file system every rank shares): rank 0 writes it alone");
      file = std::fopen(temp.c_str(), "wb");
      if (file == nullptr)
        return Status::IOError("cannot write " + path + ": " + std::strerror(errno));
    }
    for (int r = 0; status.ok() && r < w_.size; ++r) {
      parts->push_back(PartPath(flags_.work_dir, r, what));
      status = out ? CopyInto(parts->back(), out.get()) : CopyInto(parts->back(), file, path);
      std::error_code ec;
      *copied_by_rank_0 += fs::file_size(parts->back(), ec);
    }
    if (out) return status.ok() ? out->Close() : status;
    if (std::fclose(file) != 0 && status.ok()) {
      status = Status::IOError("cannot write " + path + ": " + std::strerror(errno));
    }
    return status;
  }
  // Every rank writes its part at its offset: the sum of the lower ranks'
  // sizes.
  std::error_code size_error;
  const uint64_t size = fs::file_size(part, size_error);
  if (size_error) status = Status::IOError(part + ": " + size_error.message());
  if (!AllRanksOk(w_, status)) return status;
  const std::vector<uint64_t> sizes = AllGatherU64(w_, size);
  uint64_t offset = 0;
  for (int r = 0; r < w_.rank; ++r) offset += sizes[static_cast<size_t>(r)];
  if (w_.rank == 0) {
    for (int r = 0; r < w_.size; ++r) parts->push_back(PartPath(flags_.work_dir, r, what));
  }
  MPI_File fh;
  // Collective; every rank goes on to the collective close and sync, or
  // none does.
  status = MpiIo(MPI_File_open(MPI_COMM_WORLD, temp.c_str(), MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
                 "open", path);
  if (!AllRanksOk(w_, status)) return status;
  std::FILE* in = std::fopen(part.c_str(), "rb");
  if (in == nullptr) status = Status::IOError(part + ": cannot open a part of the output");
  std::string buffer(16u << 20, '\0');
  uint64_t done = 0;
  while (status.ok() && done < size) {
    const size_t n = std::fread(buffer.data(), 1, buffer.size(), in);
    if (n == 0) {
      status = Status::IOError(part + ": read error or shorter than its size");
      break;
    }
    MPI_Status written;
    status = MpiIo(MPI_File_write_at(fh, static_cast<MPI_Offset>(offset + done), buffer.data(),
                                     static_cast<int>(n), MPI_BYTE, &written),
                   "write at an offset", path);
    done += n;
  }
  if (in != nullptr) std::fclose(in);
  if (w_.rank == 0 && std::string_view(what) == "records" && w_.size > 1) {
    // Rank 0's part written, under the temporary name.
    if (FailAt(w_, "output")) std::raise(SIGKILL);
    if (FailAt(w_, "term")) std::raise(SIGTERM);
  }
  const Status synced = MpiIo(MPI_File_sync(fh), "sync", path);
  if (status.ok()) status = synced;
  const Status closed = MpiIo(MPI_File_close(&fh), "close", path);
  if (status.ok()) status = closed;
  return status;
}

Status Run::WriteOutputs() {
  const auto t = std::chrono::steady_clock::now();
  const DedupConfig& c = *config_;
  const DedupFlags& f = c.flags;
  std::vector<std::string> parts;
  uint64_t copied_by_rank_0 = 0;
  // Each rank's marker before its parts: a marker never outlives them.
  for (int r = 0; r < w_.size; ++r) parts.push_back(PartPath(flags_.work_dir, r, "done"));
  const std::pair<const std::string*, const char*> outputs[] = {
      {&f.input.output, "records"}, {&f.unique_out, "unique"}, {&f.duplicates_out, "duplicates"}};
  for (const auto& [path, what] : outputs) {
    if (path->empty() && std::string_view(what) != "records") continue;
    // Every rank goes on to the next output's collectives, or none does.
    const Status written = WriteOutput(*path, what, &parts, &copied_by_rank_0);
    if (!AllRanksOk(w_, written)) return written;
  }
  stages_.push_back({"output", 0, 0, {{"part_bytes_copied_by_rank_0", copied_by_rank_0}}});
  if (w_.rank != 0) return Status::OK();
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
