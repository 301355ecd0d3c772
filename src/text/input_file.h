// Copyright 2026 The neardup Authors.
//
// Internal: one input file of DocumentReader (reader.cc), read as a stream of
// lines or whole: the file, a byte range of it, a named FIFO or standard
// input, decoded by its first bytes (compression.h) and, with an encoding,
// converted to UTF-8.
//
// Thread safety: an InputFile is used by one thread at a time.

#ifndef NEARDUP_SRC_TEXT_INPUT_FILE_H_
#define NEARDUP_SRC_TEXT_INPUT_FILE_H_

#include <bzlib.h>
#include <lzma.h>
#include <unicode/ucnv.h>
#include <zlib.h>
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace neardup {

inline constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

// A file whose content is decoded by its first bytes, not its name: gzip
// (1F 8B), zstd (28 B5 2F FD), xz (FD 37 7A 58 5A 00), bzip2 ("BZh"), else
// plain. Concatenated gzip members, zstd frames, xz and bzip2 streams are
// read one after the other; a stream cut short is an error.
class InputFile {
 public:
  InputFile() = default;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile() { Close(); }

  // Returns an empty string on success, else the reason. `walked`: the path
  // was found by walking a directory, and anything but a regular file is
  // refused without blocking (a FIFO would wait for a writer forever). A
  // named character or block device is refused too (/dev/zero never ends);
  // a named FIFO and standard input are read.
  // `offset`: start reading there (a plain file's byte range).
  std::string Open(const std::string& path, bool walked, uint64_t offset = 0);

  void Close();

  // ReadLine, with the line as *view: in the buffer, not copied (valid until
  // the next read), when it lies there whole and within max_bytes; else
  // assembled in *line.
  bool ReadLineView(std::string_view* view, std::string* line, size_t max_bytes, size_t skip_bytes,
                    bool* too_long, bool* endless, std::string* error) {
    const size_t nl = buffer_.find('\n', start_);
    if (nl != std::string::npos && nl - start_ <= max_bytes) {
      line->clear();
      *too_long = false;
      *endless = false;
      *view = std::string_view(buffer_).substr(start_, nl - start_);
      consumed_ += nl - start_ + 1;
      start_ = nl + 1;
      return true;
    }
    if (!ReadLine(line, max_bytes, skip_bytes, too_long, endless, error)) return false;
    *view = *line;
    return true;
  }

  // Reads one line without its '\n' (a final '\r' is kept) into *line.
  // Returns false at the end of the file; *error is set on a read error (then
  // an incomplete last line is not returned: dropped_partial_line()). A line
  // longer than `max_bytes` sets *too_long: no more than `max_bytes` of it is
  // held, and the rest is read and dropped up to its '\n', but no further
  // than `skip_bytes` in all: past that *endless is set too and the rest of
  // the line is not read (an endless line must not keep the reader busy
  // forever; where the next line starts is then unknown).
  bool ReadLine(std::string* line, size_t max_bytes, size_t skip_bytes, bool* too_long,
                bool* endless, std::string* error);

  // True when the whole file was decoded without an error and nothing
  // is left in the buffer but white space.
  bool AtCleanEnd() const;

  // Decoded bytes ReadLine has consumed (line breaks included).
  uint64_t consumed() const { return consumed_; }
  // Bytes read from the files this InputFile has opened, as stored (before
  // decompression), summed over them: Close does not reset it.
  uint64_t bytes_read_total() const { return bytes_read_total_; }
  bool compressed() const { return codec_ != Codec::kPlain; }
  // "gzip", "zstd", ...; empty for a plain file.
  std::string_view codec_name() const;

  // "zip", "7z", "tar" when the file's first bytes are an archive's
  // (ArchiveName), else "".
  std::string_view archive() const { return archive_; }

  // True when the last ReadLine failed in the middle of a line.
  bool dropped_partial_line() const { return dropped_partial_line_; }

  // Reads the whole (rest of the) file; fails past `max_bytes`, before
  // allocating more than that.
  bool ReadAll(std::string* out, size_t max_bytes, std::string* error);

  // The first byte of the (rest of the) file that is not white space (a
  // leading UTF-8 byte order mark is skipped too), read ahead without
  // consuming anything; -1 at the end, on an error, or after `max_bytes` of
  // white space.
  int PeekNonBlank(size_t max_bytes);

  // Converts what is read from `encoding` (an ICU converter name: GB18030,
  // GBK, Big5, Shift_JIS...) to UTF-8; the empty string or "UTF-8" reads
  // bytes as they are. Returns the reason when ICU knows no such encoding.
  std::string SetEncoding(const std::string& encoding);

  // The decoded bytes at the start of the file (up to `n`), for the
  // encoding detector; they stay to be read.
  std::string_view Head(size_t n);

 private:
  enum class Codec { kPlain, kGzip, kZstd, kXz, kBzip2 };

  // Reads the first bytes and picks the codec by them.
  std::string Sniff();

  // Appends raw bytes of the file to in_ (dropping what is consumed); false
  // at its end or on an error (error_ set).
  bool ReadInput();

  // Reads up to `size` decoded bytes; 0 at the end of the file, where error_
  // tells whether the end is an error: a read error, corrupt data, or a
  // compressed stream cut short.
  size_t ReadChunk(char* dst, size_t size);

  // Decoded bytes from what in_ holds (and the decoder's state).
  size_t Decode(char* dst, size_t size);

  // The memory an xz stream's dictionary may take (xz -9 takes 64 MiB).
  static constexpr uint64_t kXzMemoryLimit = uint64_t{256} << 20;

  bool StartXz();
  bool StartBzip2();

  size_t Unxz(char* dst, size_t size);

  size_t Unbzip2(char* dst, size_t size);

  size_t Inflate(char* dst, size_t size);

  size_t Unzstd(char* dst, size_t size);

  // Appends the next block of the file to what is not consumed yet; false at
  // the end.
  bool Fill();

  // Fill through the converters: the decoded bytes, in the encoding given,
  // become UTF-8 (ICU's substitution for a byte sequence the encoding does
  // not define: U+FFFD, then reported as any other replacement would be).
  bool FillConverted();

 private:
  static constexpr size_t kPivotChars = 1 << 12;
  UConverter* from_ = nullptr;  // --encoding; null: UTF-8, read as is
  UConverter* to_utf8_ = nullptr;
  UChar pivot_[kPivotChars];
  UChar* pivot_source_ = pivot_;
  UChar* pivot_target_ = pivot_;
  bool converted_eof_ = false;
  int fd_ = -1;
  Codec codec_ = Codec::kPlain;
  z_stream zs_{};
  bool inflating_ = false;
  ZSTD_DCtx* zstd_ = nullptr;
  lzma_stream xz_ = LZMA_STREAM_INIT;  // when codec_ is kXz
  bz_stream bz_{};                     // when codec_ is kBzip2
  std::string_view archive_;
  std::string in_;  // raw bytes read from fd_; in_[in_pos_..] not decoded yet
  size_t in_pos_ = 0;
  bool in_eof_ = false;
  bool in_frame_ = false;  // inside a gzip member or zstd frame
  std::string buffer_;
  size_t start_ = 0;
  bool eof_ = false;
  std::string error_;  // why the end came early; empty at a clean end
  bool dropped_partial_line_ = false;
  uint64_t consumed_ = 0;
  uint64_t bytes_read_total_ = 0;
};

}  // namespace neardup

#endif  // NEARDUP_SRC_TEXT_INPUT_FILE_H_
