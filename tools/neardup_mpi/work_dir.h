// Copyright 2026 The neardup Authors.
//
// neardup-mpi's work directory: the paths of the stages' files (shards,
// band-key rounds' pairs, parts), the stage markers, and the parts' writer.

#ifndef NEARDUP_TOOLS_NEARDUP_MPI_WORK_DIR_H_
#define NEARDUP_TOOLS_NEARDUP_MPI_WORK_DIR_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "inputs.h"
#include "neardup/file.h"
#include "output_files.h"

namespace neardup::mpi {

std::string ShardPath(const std::string& dir, const Unit& unit);

std::string RangePath(const std::string& dir, size_t range, size_t ranges);

Status WriteMarker(const std::string& dir, const std::string& stage);

// Splits "a b c" strings back (ids or records of several ranks).
Result<std::vector<std::string>> Strings(std::string_view bytes);

std::string PartPath(const std::string& dir, int rank, const char* what);

// What a rank's parts hold: each one's size and XXH3-64, read back from the
// files (kept in WORK/parts/rank-R.done once they are closed; --resume
// skips writing parts that still match it). NotFound when a part is missing.
Result<std::string> PartsDigest(const std::vector<std::string>& paths);

// Output lines, buffered, to a file.
class PartWriter {
 public:
  static Result<PartWriter> Create(const std::string& path) {
    NEARDUP_ASSIGN_OR_RETURN(auto f, file::WritableFile::Create(path));
    return PartWriter(std::move(f));
  }
  Status Write(std::string_view s) {
    buffer_ += s;
    if (buffer_.size() < (1u << 20)) return Status::OK();
    return Flush();
  }
  Status Close() {
    NEARDUP_RETURN_IF_ERROR(Flush());
    return file_->Close();
  }

 private:
  explicit PartWriter(std::unique_ptr<file::WritableFile> f) : file_(std::move(f)) {}
  Status Flush() {
    const Status s = file_->Append(buffer_);
    buffer_.clear();
    return s;
  }
  std::unique_ptr<file::WritableFile> file_;
  std::string buffer_;
};

// Copies the file at `path` to `out` in 1 MiB pieces.
Status CopyInto(const std::string& path, cli::Output* out);
// The same into an open file (`name`: its path, for the error).
Status CopyInto(const std::string& path, std::FILE* out, const std::string& name);

}  // namespace neardup::mpi

#endif  // NEARDUP_TOOLS_NEARDUP_MPI_WORK_DIR_H_
