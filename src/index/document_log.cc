// Copyright 2026 The neardup Authors.
//
// The log format is in doc/index_format.md, "The log". Integers little-endian.

#include "index/document_log.h"

#include <xxhash.h>

#include <cstring>

namespace neardup::index_internal {
namespace {

constexpr char kLogMagic[8] = {'N', 'D', 'U', 'P', 'L', 'O', 'G', '1'};
constexpr uint32_t kLogVersion = 1;
// A record's payload never exceeds this (a batch of ~4M additions).
constexpr uint32_t kMaxPayload = uint32_t{1} << 30;

void Put32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}
void Put64(std::string* s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}
uint32_t Get32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint64_t Get64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::string HeaderBytes(uint64_t base, int bits) {
  std::string h(kLogMagic, sizeof(kLogMagic));
  Put32(&h, kLogVersion);
  Put32(&h, static_cast<uint32_t>(bits));
  Put64(&h, base);
  Put64(&h, XXH3_64bits(h.data(), h.size()));
  return h;
}

Status Bad(const std::string& file, uint64_t offset, const std::string& why) {
  return Status::Corruption(file + ": offset " + std::to_string(offset) + ": " + why);
}

// Decodes a payload whose checksum matched; still checked field by field.
Status DecodePayload(std::string_view p, int bits, const std::string& file, uint64_t offset,
                     std::vector<LogOp>* ops) {
  const size_t fp_bytes = bits == 128 ? 16 : 8;
  size_t pos = 0;
  while (pos < p.size()) {
    if (p.size() - pos < 5) return Bad(file, offset, "record ends inside an operation");
    LogOp op;
    const uint8_t type = static_cast<uint8_t>(p[pos]);
    if (type < 1 || type > 4) return Bad(file, offset, "unknown operation " + std::to_string(type));
    op.type = static_cast<LogOp::Type>(type);
    const uint32_t id_len = Get32(p.data() + pos + 1);
    pos += 5;
    if (id_len > p.size() - pos) return Bad(file, offset, "an id runs past the record");
    op.id.assign(p.data() + pos, id_len);
    pos += id_len;
    if (op.type == LogOp::Type::kTime) {
      if (id_len != 0) return Bad(file, offset, "a time operation with an id");
      if (p.size() - pos < 8) return Bad(file, offset, "a time runs past the record");
      op.time = static_cast<int64_t>(Get64(p.data() + pos));
      pos += 8;
    } else if (op.type != LogOp::Type::kRemove) {
      if (p.size() - pos < fp_bytes) return Bad(file, offset, "a fingerprint runs past the record");
      const uint64_t lo = Get64(p.data() + pos);
      op.fingerprint = bits == 128 ? Fingerprint::From128(Get64(p.data() + pos + 8), lo)
                                   : Fingerprint::From64(lo);
      pos += fp_bytes;
    }
    ops->push_back(std::move(op));
  }
  return Status::OK();
}

}  // namespace

Result<ParsedLog> ParseLog(std::string_view bytes, const std::string& file) {
  ParsedLog log;
  if (bytes.size() < kLogHeaderSize) {
    log.torn_tail = !bytes.empty();
    if (log.torn_tail) log.tail = Bad(file, 0, "the header is cut short").message();
    return log;
  }
  if (std::memcmp(bytes.data(), kLogMagic, sizeof(kLogMagic)) != 0) {
    return Bad(file, 0, "not a neardup index log (bad magic)");
  }
  if (Get64(bytes.data() + 24) != XXH3_64bits(bytes.data(), 24)) {
    return Bad(file, 0, "header checksum mismatch");
  }
  if (Get32(bytes.data() + 8) != kLogVersion) {
    return Status::NotSupported(file + ": unsupported log version " +
                                std::to_string(Get32(bytes.data() + 8)));
  }
  log.bits = static_cast<int>(Get32(bytes.data() + 12));
  if (log.bits != 64 && log.bits != 128) return Bad(file, 12, "bits must be 64 or 128");
  log.base_checksum = Get64(bytes.data() + 16);
  uint64_t pos = kLogHeaderSize;
  while (pos < bytes.size()) {
    const uint64_t left = bytes.size() - pos;
    if (left < kLogRecordHeaderSize) {
      log.torn_tail = true;
      log.tail = Bad(file, pos, "a record header cut short (" + std::to_string(left) + " bytes)")
                     .message();
      break;
    }
    const char* h = bytes.data() + pos;
    const uint32_t len = Get32(h);
    if (Get32(h + 4) != ~len || len > kMaxPayload) {
      return Bad(file, pos, "bad record length");
    }
    if (len > left - kLogRecordHeaderSize) {
      log.torn_tail = true;  // the write stopped inside the record
      log.tail = Bad(file, pos,
                     "the last record is cut short (" + std::to_string(left) + " of " +
                         std::to_string(kLogRecordHeaderSize + len) + " bytes)")
                     .message();
      break;
    }
    const std::string_view payload(h + kLogRecordHeaderSize, len);
    if (XXH3_64bits(payload.data(), payload.size()) != Get64(h + 8)) {
      if (len == left - kLogRecordHeaderSize) {
        log.torn_tail = true;  // the last record, not completely on disk
        log.tail = Bad(file, pos,
                       "the last record fails its checksum (a torn write, or damage to an "
                       "acknowledged batch of " +
                           std::to_string(len) + " bytes)")
                       .message();
        break;
      }
      return Bad(file, pos, "record checksum mismatch");
    }
    LogBatch batch;
    batch.offset = pos;
    NEARDUP_RETURN_IF_ERROR(DecodePayload(payload, log.bits, file, pos, &batch.ops));
    log.batches.push_back(std::move(batch));
    pos += kLogRecordHeaderSize + len;
  }
  log.good_bytes = pos;
  return log;
}

std::string EncodeLogRecord(const std::vector<LogOp>& ops, int bits) {
  std::string payload;
  for (const LogOp& op : ops) {
    payload.push_back(static_cast<char>(op.type));
    Put32(&payload, static_cast<uint32_t>(op.id.size()));
    payload += op.id;
    if (op.type == LogOp::Type::kTime) {
      Put64(&payload, static_cast<uint64_t>(op.time));
    } else if (op.type != LogOp::Type::kRemove) {
      Put64(&payload, op.fingerprint.lo());
      if (bits == 128) Put64(&payload, op.fingerprint.hi());
    }
  }
  std::string record;
  record.reserve(kLogRecordHeaderSize + payload.size());
  const auto len = static_cast<uint32_t>(payload.size());
  Put32(&record, len);
  Put32(&record, ~len);
  Put64(&record, XXH3_64bits(payload.data(), payload.size()));
  record += payload;
  return record;
}

Result<std::unique_ptr<LogWriter>> LogWriter::Create(const std::string& path, uint64_t base,
                                                     int bits) {
  NEARDUP_ASSIGN_OR_RETURN(auto f, file::WritableFile::Create(path));
  NEARDUP_RETURN_IF_ERROR(f->Append(HeaderBytes(base, bits)));
  NEARDUP_RETURN_IF_ERROR(f->Sync());
  NEARDUP_RETURN_IF_ERROR(file::SyncParentDir(path));
  return std::unique_ptr<LogWriter>(new LogWriter(std::move(f), kLogHeaderSize, bits));
}

Result<std::unique_ptr<LogWriter>> LogWriter::Reopen(const std::string& path, uint64_t good_bytes,
                                                     int bits) {
  NEARDUP_ASSIGN_OR_RETURN(auto f, file::WritableFile::OpenForAppend(path));
  NEARDUP_RETURN_IF_ERROR(f->Truncate(good_bytes));
  NEARDUP_RETURN_IF_ERROR(f->Sync());
  return std::unique_ptr<LogWriter>(new LogWriter(std::move(f), good_bytes, bits));
}

Status LogWriter::Append(const std::vector<LogOp>& ops, bool sync) {
  const std::string record = EncodeLogRecord(ops, bits_);
  if (record.size() - kLogRecordHeaderSize > kMaxPayload) {
    return Status::InvalidArgument(file_->path() + ": a batch of " + std::to_string(record.size()) +
                                   " bytes is too large for one log record");
  }
  Status s = file_->Append(record);
  if (s.ok() && sync) s = file_->Sync();
  if (!s.ok()) {
    (void)file_->Truncate(bytes_.load());  // best effort: a torn tail is dropped on open anyway
    return s;
  }
  bytes_ += record.size();
  if (sync) {
    std::lock_guard lock(sync_mu_);
    synced_ = bytes_.load();
  }
  return Status::OK();
}

Status LogWriter::SyncTo(uint64_t end) {
  std::lock_guard lock(sync_mu_);
  if (synced_ >= end) return Status::OK();
  const uint64_t appended = bytes_.load();
  NEARDUP_RETURN_IF_ERROR(file_->Sync());
  synced_ = appended;
  return Status::OK();
}

}  // namespace neardup::index_internal
