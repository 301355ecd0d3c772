// Copyright 2026 The neardup Authors.

#include "text/input_file.h"

#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "neardup/text.h"
#include "text/compression.h"

namespace neardup {
namespace {

// Appends `piece` to *s unless the result would exceed `max_bytes`; never lets
// the capacity grow past `max_bytes` (no doubling beyond the limit).
bool AppendWithinLimit(std::string* s, std::string_view piece, size_t max_bytes) {
  const size_t need = s->size() + piece.size();
  if (need > max_bytes) return false;
  if (need > s->capacity()) s->reserve(std::min(max_bytes, std::max(need, 2 * s->capacity())));
  s->append(piece);
  return true;
}

std::string LimitReason(size_t max_bytes) {
  return "larger than the limit of " + std::to_string(max_bytes) + " bytes (max_document_bytes)";
}

}  // namespace

std::string InputFile::Open(const std::string& path, bool walked, uint64_t offset) {
  Close();
  int fd;
  if (path == "-") {
    fd = dup(STDIN_FILENO);
  } else {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (walked ? O_NONBLOCK : 0));
  }
  if (fd < 0) return std::strerror(errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    return reason;
  }
  std::string refused;
  if (S_ISDIR(st.st_mode)) {
    refused = "is a directory";
  } else if (path != "-" && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
    refused =
        S_ISCHR(st.st_mode) ? "is a character device, not a file" : "is a block device, not a file";
  } else if (walked && !S_ISREG(st.st_mode)) {
    refused = "not a regular file";
  }
  if (!refused.empty()) {
    ::close(fd);
    return refused;
  }
  if (walked) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (offset > 0 && lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    return reason;
  }
  fd_ = fd;
  return Sniff();
}

void InputFile::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (inflating_) inflateEnd(&zs_);
  inflating_ = false;
  if (zstd_ != nullptr) ZSTD_freeDCtx(zstd_);
  zstd_ = nullptr;
  if (codec_ == Codec::kXz) lzma_end(&xz_);
  if (codec_ == Codec::kBzip2) BZ2_bzDecompressEnd(&bz_);
  if (from_ != nullptr) ucnv_close(from_);
  if (to_utf8_ != nullptr) ucnv_close(to_utf8_);
  from_ = to_utf8_ = nullptr;
  converted_eof_ = false;
  codec_ = Codec::kPlain;
  in_.clear();
  in_pos_ = 0;
  in_eof_ = false;
  in_frame_ = false;
  buffer_.clear();
  start_ = 0;
  eof_ = false;
  error_.clear();
  dropped_partial_line_ = false;
  consumed_ = 0;
}

bool InputFile::ReadLine(std::string* line, size_t max_bytes, size_t skip_bytes, bool* too_long,
                         bool* endless, std::string* error) {
  line->clear();
  *too_long = false;
  *endless = false;
  size_t skipped = 0;
  for (;;) {
    const size_t nl = buffer_.find('\n', start_);
    const size_t end = nl == std::string::npos ? buffer_.size() : nl;
    const std::string_view piece = std::string_view(buffer_).substr(start_, end - start_);
    consumed_ += piece.size() + (nl == std::string::npos ? 0 : 1);
    if (!*too_long && !AppendWithinLimit(line, piece, max_bytes)) {
      *too_long = true;
      skipped = line->size();
      line->clear();
      line->shrink_to_fit();
    }
    if (*too_long) {
      skipped += piece.size();
      if (skipped > skip_bytes) {
        *endless = true;
        return true;
      }
    }
    if (nl != std::string::npos) {
      start_ = nl + 1;
      return true;
    }
    buffer_.clear();
    start_ = 0;
    if (!Fill()) {
      if (!error_.empty()) {
        *error = error_;
        dropped_partial_line_ = !line->empty() || *too_long;
        line->clear();
        return false;
      }
      return !line->empty() || *too_long;
    }
  }
}

bool InputFile::AtCleanEnd() const {
  return eof_ && error_.empty() &&
         std::string_view(buffer_).substr(start_).find_first_not_of(" \t\r\n") ==
             std::string_view::npos;
}

std::string_view InputFile::codec_name() const {
  switch (codec_) {
    case Codec::kPlain:
      return "";
    case Codec::kGzip:
      return "gzip";
    case Codec::kZstd:
      return "zstd";
    case Codec::kXz:
      return "xz";
    case Codec::kBzip2:
      return "bzip2";
  }
  return "";
}

bool InputFile::ReadAll(std::string* out, size_t max_bytes, std::string* error) {
  out->clear();
  std::string chunk(1 << 16, '\0');
  std::string_view piece = std::string_view(buffer_).substr(start_);
  for (;;) {
    if (!AppendWithinLimit(out, piece, max_bytes)) {
      *error = LimitReason(max_bytes);
      return false;
    }
    const size_t n = ReadChunk(chunk.data(), chunk.size());
    if (n == 0) break;
    piece = std::string_view(chunk).substr(0, n);
  }
  buffer_.clear();
  start_ = 0;
  *error = error_;
  return error_.empty();
}

int InputFile::PeekNonBlank(size_t max_bytes) {
  while (buffer_.size() - start_ < kUtf8Bom.size() && Fill()) {
  }
  size_t off = std::string_view(buffer_).substr(start_).starts_with(kUtf8Bom) ? kUtf8Bom.size() : 0;
  for (;;) {
    for (; start_ + off < buffer_.size(); ++off) {
      const char c = buffer_[start_ + off];
      if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return static_cast<unsigned char>(c);
    }
    if (off > max_bytes || !Fill()) return -1;
  }
}

std::string InputFile::Sniff() {
  // (A tar header's magic, at byte 257, is seen when the first read
  // brings that much: a file's does.)
  while (in_.size() < 4 && ReadInput()) {
  }
  if (!error_.empty()) return error_;
  const std::string_view head(in_);
  archive_ = ArchiveName(head);
  const std::string_view compression = DetectCompression(head);
  if (compression == "gzip") {
    codec_ = Codec::kGzip;
    zs_ = z_stream{};
    // 16 + 15: gzip framing, the largest window.
    if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) return "cannot open (out of memory)";
    inflating_ = true;
  } else if (compression == "zstd") {
    codec_ = Codec::kZstd;
    zstd_ = ZSTD_createDCtx();
    if (zstd_ == nullptr) return "cannot open (out of memory)";
    // The window a frame may ask for bounds the memory it takes: 128 MiB.
    ZSTD_DCtx_setParameter(zstd_, ZSTD_d_windowLogMax, 27);
  } else if (compression == "xz") {
    codec_ = Codec::kXz;
    if (!StartXz()) return "cannot open (out of memory)";
  } else if (compression == "bzip2") {
    codec_ = Codec::kBzip2;
    if (!StartBzip2()) return "cannot open (out of memory)";
  }
  return "";
}

bool InputFile::ReadInput() {
  if (in_eof_) return false;
  in_.erase(0, in_pos_);
  in_pos_ = 0;
  const size_t old = in_.size();
  in_.resize(old + (1 << 17));
  ssize_t n;
  do {
    n = ::read(fd_, in_.data() + old, 1 << 17);
  } while (n < 0 && errno == EINTR);
  in_.resize(old + static_cast<size_t>(std::max<ssize_t>(n, 0)));
  bytes_read_total_ += static_cast<uint64_t>(std::max<ssize_t>(n, 0));
  if (n < 0) error_ = std::strerror(errno);
  if (n <= 0) in_eof_ = true;
  return n > 0;
}

size_t InputFile::ReadChunk(char* dst, size_t size) {
  if (eof_) return 0;
  size_t n = 0;
  for (;;) {
    if (in_pos_ == in_.size() && !ReadInput()) {
      // The decoder may still hold output of the input it has taken.
      if (error_.empty() && in_frame_) n = Decode(dst, size);
      if (n == 0 && error_.empty() && in_frame_) {
        error_ = "truncated " + std::string(codec_name()) + " stream (unexpected end of file)";
      }
      break;
    }
    n = Decode(dst, size);
    if (n > 0 || !error_.empty()) break;
  }
  if (n == 0) eof_ = true;
  return n;
}

size_t InputFile::Decode(char* dst, size_t size) {
  switch (codec_) {
    case Codec::kPlain: {
      const size_t n = std::min(size, in_.size() - in_pos_);
      std::memcpy(dst, in_.data() + in_pos_, n);
      in_pos_ += n;
      return n;
    }
    case Codec::kGzip:
      return Inflate(dst, size);
    case Codec::kZstd:
      return Unzstd(dst, size);
    case Codec::kXz:
      return Unxz(dst, size);
    case Codec::kBzip2:
      return Unbzip2(dst, size);
  }
  return 0;
}

bool InputFile::StartXz() {
  xz_ = LZMA_STREAM_INIT;
  return lzma_stream_decoder(&xz_, kXzMemoryLimit, 0) == LZMA_OK;
}

bool InputFile::StartBzip2() {
  bz_ = bz_stream{};
  return BZ2_bzDecompressInit(&bz_, 0, 0) == BZ_OK;
}

size_t InputFile::Unxz(char* dst, size_t size) {
  if (!in_frame_ && !std::string_view(in_).substr(in_pos_).starts_with(kXzMagic)) {
    error_ = "data after the end of the xz stream";
    return 0;
  }
  in_frame_ = true;
  xz_.next_in = reinterpret_cast<const uint8_t*>(in_.data() + in_pos_);
  xz_.avail_in = in_.size() - in_pos_;
  xz_.next_out = reinterpret_cast<uint8_t*>(dst);
  xz_.avail_out = size;
  const lzma_ret rc = lzma_code(&xz_, LZMA_RUN);
  in_pos_ = in_.size() - xz_.avail_in;
  const size_t n = size - xz_.avail_out;
  if (rc == LZMA_STREAM_END) {
    in_frame_ = false;  // another stream may follow
    lzma_end(&xz_);
    if (!StartXz()) error_ = "out of memory";
  } else if (rc == LZMA_MEMLIMIT_ERROR) {
    error_ = "xz stream needs more than " + std::to_string(kXzMemoryLimit >> 20) +
             " MiB to decode (its dictionary); recompress it with a smaller preset";
  } else if (rc != LZMA_OK && rc != LZMA_BUF_ERROR) {
    error_ = "corrupt xz data (liblzma error " + std::to_string(static_cast<int>(rc)) + ")";
  }
  return n;
}

size_t InputFile::Unbzip2(char* dst, size_t size) {
  if (!in_frame_ && !std::string_view(in_).substr(in_pos_).starts_with("BZh")) {
    error_ = "data after the end of the bzip2 stream";
    return 0;
  }
  in_frame_ = true;
  const size_t avail_in = std::min<size_t>(in_.size() - in_pos_, 1u << 30);
  bz_.next_in = in_.data() + in_pos_;
  bz_.avail_in = static_cast<unsigned>(avail_in);
  bz_.next_out = dst;
  bz_.avail_out = static_cast<unsigned>(std::min<size_t>(size, 1u << 30));
  const unsigned out_before = bz_.avail_out;
  const int rc = BZ2_bzDecompress(&bz_);
  in_pos_ += avail_in - bz_.avail_in;
  const size_t n = out_before - bz_.avail_out;
  if (rc == BZ_STREAM_END) {
    in_frame_ = false;  // another stream may follow (pbzip2)
    BZ2_bzDecompressEnd(&bz_);
    if (!StartBzip2()) error_ = "out of memory";
  } else if (rc != BZ_OK) {
    error_ = "corrupt bzip2 data (libbz2 error " + std::to_string(rc) + ")";
  }
  return n;
}

size_t InputFile::Inflate(char* dst, size_t size) {
  if (!in_frame_ && !std::string_view(in_).substr(in_pos_).starts_with("\x1f")) {
    // After a member: only another member may follow.
    error_ = "data after the end of the gzip stream";
    return 0;
  }
  in_frame_ = true;
  zs_.next_in = reinterpret_cast<Bytef*>(in_.data() + in_pos_);
  zs_.avail_in = static_cast<uInt>(in_.size() - in_pos_);
  zs_.next_out = reinterpret_cast<Bytef*>(dst);
  zs_.avail_out = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
  const int rc = inflate(&zs_, Z_NO_FLUSH);
  in_pos_ = in_.size() - zs_.avail_in;
  const size_t n = static_cast<size_t>(reinterpret_cast<char*>(zs_.next_out) - dst);
  if (rc == Z_STREAM_END) {
    in_frame_ = false;
    inflateReset(&zs_);
  } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
    error_ = std::string("corrupt gzip data: ") + (zs_.msg != nullptr ? zs_.msg : "error");
  }
  return n;
}

size_t InputFile::Unzstd(char* dst, size_t size) {
  ZSTD_inBuffer in{in_.data() + in_pos_, in_.size() - in_pos_, 0};
  ZSTD_outBuffer out{dst, size, 0};
  const size_t rc = ZSTD_decompressStream(zstd_, &out, &in);
  in_pos_ += in.pos;
  if (ZSTD_isError(rc)) {
    error_ = std::string("corrupt zstd data: ") + ZSTD_getErrorName(rc);
    return 0;
  }
  in_frame_ = rc != 0;  // 0: a frame ended here
  return out.pos;
}

bool InputFile::Fill() {
  buffer_.erase(0, start_);
  start_ = 0;
  if (from_ != nullptr) return FillConverted();
  const size_t old = buffer_.size();
  buffer_.resize(old + (1 << 17));
  const size_t n = ReadChunk(buffer_.data() + old, 1 << 17);
  buffer_.resize(old + n);
  return n > 0;
}

bool InputFile::FillConverted() {
  if (converted_eof_) return false;
  std::string raw(1 << 17, '\0');
  const size_t n = ReadChunk(raw.data(), raw.size());
  const bool flush = n == 0;
  const char* src = raw.data();
  const size_t old = buffer_.size();
  for (;;) {
    char out[1 << 16];
    char* target = out;
    UErrorCode status = U_ZERO_ERROR;
    ucnv_convertEx(to_utf8_, from_, &target, out + sizeof(out), &src, raw.data() + n, pivot_,
                   &pivot_source_, &pivot_target_, pivot_ + kPivotChars, /*reset=*/false, flush,
                   &status);
    buffer_.append(out, static_cast<size_t>(target - out));
    if (status == U_BUFFER_OVERFLOW_ERROR) continue;
    if (U_FAILURE(status)) {
      error_ = std::string("cannot convert from ") + ucnv_getName(from_, &status) + ": " +
               u_errorName(status);
      converted_eof_ = true;
    }
    break;
  }
  if (flush) converted_eof_ = true;
  return buffer_.size() > old || !converted_eof_;
}

namespace {

bool IsUtf8Name(const std::string& encoding) {
  return encoding.empty() || strcasecmp(encoding.c_str(), "utf-8") == 0 ||
         strcasecmp(encoding.c_str(), "utf8") == 0;
}

std::string UnknownEncoding(const std::string& encoding) {
  return "unknown encoding '" + encoding +
         "' (--encoding takes an ICU converter name: GB18030, GBK, Big5, Shift_JIS, ...)";
}

}  // namespace

Status CheckEncoding(const std::string& name) {
  if (IsUtf8Name(name)) return Status::OK();
  UErrorCode status = U_ZERO_ERROR;
  UConverter* converter = ucnv_open(name.c_str(), &status);
  if (converter != nullptr) ucnv_close(converter);
  if (U_FAILURE(status)) return Status::InvalidArgument(UnknownEncoding(name));
  return Status::OK();
}

std::string InputFile::SetEncoding(const std::string& encoding) {
  if (IsUtf8Name(encoding)) return "";
  UErrorCode status = U_ZERO_ERROR;
  from_ = ucnv_open(encoding.c_str(), &status);
  if (U_FAILURE(status)) {
    from_ = nullptr;
    return UnknownEncoding(encoding);
  }
  to_utf8_ = ucnv_open("UTF-8", &status);
  pivot_source_ = pivot_target_ = pivot_;
  return "";
}

std::string_view InputFile::Head(size_t n) {
  while (buffer_.size() - start_ < n && Fill()) {
  }
  return std::string_view(buffer_).substr(start_, std::min(n, buffer_.size() - start_));
}

}  // namespace neardup
