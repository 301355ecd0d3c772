// Copyright 2026 The neardup Authors.

#include "common.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

#include "neardup/document_pass.h"
#include "neardup/method.h"
#include "neardup/options.h"
#include "neardup/presets.h"
#include "output_files.h"

namespace neardup::cli {

namespace {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Seconds between plain progress lines: 10, or $NEARDUP_PROGRESS_INTERVAL.
double PlainInterval() {
  static const double interval = [] {
    const char* env = std::getenv("NEARDUP_PROGRESS_INTERVAL");
    if (env == nullptr) return 10.0;
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    return end != env && v >= 0 ? v : 10.0;
  }();
  return interval;
}

// When the last plain line (of any phase) was printed; the first comes one
// interval after the start.
double last_plain_line = NowSeconds();

std::string Amount(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf,
                v < 100 && v != static_cast<double>(static_cast<long>(v)) ? "%.1f" : "%.0f", v);
  return buf;
}

}  // namespace

ProgressMode ProgressModeOf(const InputFlags& flags) {
  if (flags.quiet || flags.progress_mode == "off") return ProgressMode::kOff;
  if (flags.progress_mode == "plain") return ProgressMode::kPlain;
  return isatty(STDERR_FILENO) != 0 ? ProgressMode::kTerminal : ProgressMode::kPlain;
}

bool ProgressEnabled(const InputFlags& flags) {
  return ProgressModeOf(flags) != ProgressMode::kOff;
}

double InputSizeEstimate(const std::vector<std::string>& inputs) {
  double total = 0;
  for (const std::string& in : inputs) {
    struct stat st;
    if (in == "-" || stat(in.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    total += static_cast<double>(st.st_size);
  }
  return total;
}

DedupInput MakeDedupInput(const InputFlags& input, const ReadOptions& read_options) {
  DedupInput in;
  const std::vector<std::string> inputs = input.inputs;
  in.open = [inputs, read_options](bool report) -> Result<std::unique_ptr<DocumentReader>> {
    NEARDUP_RETURN_IF_ERROR(CheckInputsAndOutputs(inputs, {}));
    ReadOptions r = read_options;
    if (report) {
      r.on_issue = [](const InputIssue& issue) {
        // Symbolic links skipped in directories are only counted in the
        // summary: a man page tree has dozens of them.
        if (issue.kind == InputIssue::Kind::kSkipped) return;
        PrintIssue(issue);
      };
    } else {
      r.on_issue = [](const InputIssue&) {};
    }
    return DocumentReader::Open(inputs, r);
  };
  // No input named is standard input (DocumentReader::Open), which cannot be
  // read twice.
  in.replayable = !inputs.empty() && std::find(inputs.begin(), inputs.end(), "-") == inputs.end();
  return in;
}

DedupProgress ProgressOn(ProgressLine* line, const std::vector<std::string>& inputs) {
  if (!line->enabled()) return {};
  // The percentage of the reading phases: the input bytes read as stored
  // (compressed bytes for a compressed file: document_pass.h) against the
  // input files' sizes, when every input is a regular file.
  const double total_mb = InputSizeEstimate(inputs) / 1e6;
  return
      [line, total_mb](std::string_view phase, double done, double total, std::string_view unit) {
        if (unit == "MB") {
          line->Update(phase, done, total_mb > 0 ? std::max(total_mb, done) : 0, unit);
        } else if (phase == "bands") {
          line->Update("join (banded)", done, total, "bands");
        } else if (phase == "cluster" || phase == "stream" || phase == "output") {
          line->Update(phase, done, total, unit);
        } else if (done == 0) {
          line->Update(phase == "index" ? "exact join: index" : "exact join", 0, 0, "");
        }
      };
}

void ProgressLine::Update(std::string_view phase, double done, double total,
                          std::string_view unit) {
  if (mode_ == ProgressMode::kOff) return;
  const double now = NowSeconds();
  if (phase != phase_) {
    phase_ = std::string(phase);
    phase_start_ = now;
    last_draw_ = -1;
  }
  if (mode_ == ProgressMode::kTerminal) {
    if (last_draw_ >= 0 && now - last_draw_ < 0.1 && done < total) return;
  } else {
    if (now - last_plain_line < PlainInterval()) return;
    last_plain_line = now;
  }
  last_draw_ = now;
  const double elapsed = now - phase_start_;
  std::string text = phase_;
  const std::string u(unit);
  if (u.empty()) {
    text += " (" + Amount(elapsed) + " s)";
  } else {
    text += " ";
    if (total > 0) {
      char pct[16];
      std::snprintf(pct, sizeof pct, "%.0f%%", std::min(100.0, 100.0 * done / total));
      text += std::string(pct) + " (" + Amount(done) + " of " + Amount(total) + " " + u;
    } else {
      text += "(" + Amount(done) + " " + u;
    }
    text += ", " + Amount(elapsed > 0 ? done / elapsed : 0) + " " + u + "/s)";
    if (total > 0 && done > 0 && done < total && elapsed > 0.5) {
      text += ", ETA " + std::to_string(static_cast<long>(elapsed * (total - done) / done + 0.5)) +
              " s";
    }
  }
  if (mode_ == ProgressMode::kPlain) {
    PrintErrorLine("neardup: progress: " + text);
    return;
  }
  shown_ = true;
  SetProgressShown(true);
  std::fprintf(stderr, "\r\033[Kneardup: %s", text.c_str());
}

void ProgressLine::Clear() {
  if (!shown_) return;
  std::fprintf(stderr, "\r\033[K");
  shown_ = false;
  SetProgressShown(false);
}

void AddThreadsOption(CLI::App* cmd, int* threads) {
  cmd->add_option("--threads", *threads,
                  "Worker threads: 0 = all cores, at most " + std::to_string(kMaxThreads))
      ->capture_default_str()
      ->check(CLI::Range(0, kMaxThreads));
}

void AddInputOptions(CLI::App* cmd, InputFlags* flags, bool with_positional) {
  if (with_positional) {
    cmd->add_option("INPUT", flags->inputs,
                    "Files, directories (walked recursively) or - for standard input "
                    "(default: -); a named input that is missing or cannot be read ends the "
                    "run with status 1 before anything is written");
  }
  AddRecordOptions(cmd, flags);
  cmd->add_flag("--strict", flags->strict,
                "Exit with status 3 if any input was bad (malformed, unreadable, truncated, too "
                "large, invalid UTF-8)");
  cmd->add_flag("-q,--quiet", flags->quiet, "Print no summary (problems are still reported)");
  AddThreadsOption(cmd, &flags->threads);
  cmd->add_option("-o,--output", flags->output,
                  "Output file (- = standard output); never one of the inputs. Written under a "
                  "temporary name and put in place only when the run succeeds")
      ->capture_default_str();
  cmd->add_option("--progress", flags->progress_mode,
                  "Progress of long phases on stderr: auto (a line redrawn with rate and ETA "
                  "when stderr is a terminal, else plain), plain (one line every 10 s, for "
                  "logs), off")
      ->check(CLI::IsMember({"auto", "plain", "off"}))
      ->capture_default_str();
}

void AddRecordOptions(CLI::App* cmd, InputFlags* flags) {
  cmd->add_option("--encoding", flags->encoding,
                  "The inputs' character encoding, converted to UTF-8 with ICU (GB18030, GBK, "
                  "Big5, Shift_JIS, ...; default UTF-8). A file that is not UTF-8 is reported "
                  "with ICU's guess of its encoding")
      ->check([](const std::string& name) {
        const Status s = CheckEncoding(name);
        return s.ok() ? std::string() : s.message();
      });
  cmd->add_option("--input-format", flags->format,
                  "auto|jsonl|text|lines|roff (auto: by extension and content; gzip, zstd, xz "
                  "and bzip2 content is decompressed in every format; zip, tar and 7z "
                  "archives are refused)")
      ->capture_default_str();
  cmd->add_option("--id-field", flags->id_field,
                  "JSONL field holding the document id (a.b.c: a nested field)")
      ->capture_default_str();
  cmd->add_option("--text-field", flags->text_field,
                  "JSONL field holding the text (a.b.c: a nested field)")
      ->capture_default_str();
  cmd->add_option("--title-field", flags->title_field,
                  "JSONL field holding the title (a.b.c: a nested field)")
      ->capture_default_str();
  cmd->add_flag("--title-first-line", flags->title_first_line,
                "Plain text files: the first line is the document's title (improved weights)");
  cmd->add_option("--max-document-bytes", flags->max_document_bytes,
                  "Largest file or line read, after decompression; larger ones are reported and "
                  "skipped (a line with no line break within 4 times this ends its file)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

void AddPipelineOptions(CLI::App* cmd, PipelineFlags* flags, const std::string& normalize_default,
                        bool with_fingerprint_options, bool with_idf) {
  flags->normalize = normalize_default;
  cmd->add_option("--normalize", flags->normalize,
                  "Comma-separated: nfkc (NFKC + case folding), t2s|tw2s|tw2sp|tw2sp2|hk2s "
                  "(Traditional to Simplified with OpenCC), ws (collapse white space); or none")
      ->capture_default_str();
  cmd->add_flag("--t2s", flags->t2s,
                "Also convert Traditional to Simplified Chinese with OpenCC tw2sp, applied twice "
                "(characters and Taiwan phrases; same as adding tw2sp2 to --normalize)");
  cmd->add_option("--jieba-dir", flags->jieba_dir,
                  "python3-jieba's data directory (default: $NEARDUP_JIEBA_DIR, else "
                  "/usr/lib/python3/dist-packages/jieba)");
  cmd->add_option("--user-dict", flags->user_dicts, "jieba-format user dictionary (repeatable)")
      ->allow_extra_args(false);  // one value per --user-dict: what follows is an input
  if (with_idf) cmd->add_option("--idf", flags->idf, "IDF table in jieba's idf.txt format");
  cmd->add_flag("--no-hmm", flags->no_hmm, "Do not segment unknown words with the HMM");
  if (with_fingerprint_options) {
    cmd->add_option(
        "--method", flags->method,
        "A preset (" + PresetNames() + "; default " + std::string(kDefaultMethod) +
            "), minhash (dedup and calibrate only; keys num_perm, threshold, bands, rows, recall, "
            "verify) or a method's text form, e.g. tfidf,bits=128,topk=10 or "
            "minhash,threshold=0.7 (method.h, doc/methods.md); the options below "
            "override it");
    cmd->add_option("--bits", flags->bits, "Fingerprint width: 64 or 128 (default: the method's)")
        ->check(CLI::IsMember({64, 128}));
    cmd->add_option("--features", flags->features,
                    "words | chars:N | sentences (default: the method's)");
    cmd->add_option("--weights", flags->weights,
                    "uniform | tf | tfidf | improved | entropy (default: the method's)");
    cmd->add_option("--topk", flags->top_k,
                    "Keep the K heaviest features (0 = all; default: the method's)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--hash", flags->hash, "Feature hash: xxh3 | md5 (default: the method's)");
    cmd->add_option("--entropy-threshold", flags->entropy_threshold,
                    "entropy weights: the weight threshold W_t (default: the method's, else " +
                        std::to_string(kDefaultEntropyThreshold).substr(0, 4) + ")")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--data-dir", flags->data_dir,
                    "Directory of neardup's data files (default: $NEARDUP_DATA_DIR, else the "
                    "installed data, else the source tree's data/)");
    cmd->add_option("--marker-words", flags->marker_words,
                    "improved weights: marker word lexicon, one word per line (default: "
                    "marker_words.txt in the data directory)");
  }
}

Result<Method> MakeMethod(const PipelineFlags& flags) {
  // Every option given on the command line overrides --method (method.h).
  std::vector<std::pair<std::string, std::string>> more;
  std::string normalize = flags.normalize;
  if (flags.t2s) {
    auto n = MakeNormalizeOptions(flags);
    if (!n.ok()) return n.status();
    if (normalize.find(n->t2s) == std::string::npos) normalize += "," + n->t2s;
  }
  more.emplace_back("normalize", normalize);
  if (flags.bits != 0) more.emplace_back("bits", std::to_string(flags.bits));
  if (!flags.features.empty()) more.emplace_back("features", flags.features);
  if (!flags.weights.empty()) more.emplace_back("weights", flags.weights);
  if (flags.top_k >= 0) more.emplace_back("topk", std::to_string(flags.top_k));
  if (!flags.hash.empty()) more.emplace_back("hash", flags.hash);
  if (flags.entropy_threshold > 0) {
    std::ostringstream v;
    v.precision(17);
    v << flags.entropy_threshold;
    more.emplace_back("entropy_threshold", v.str());
  }
  if (flags.no_hmm) more.emplace_back("hmm", "0");
  if (!flags.idf.empty()) more.emplace_back("idf", flags.idf);
  for (const std::string& d : flags.user_dicts) more.emplace_back("user_dict", d);
  if (!flags.marker_words.empty()) more.emplace_back("marker_words", flags.marker_words);
  auto method = Method::Parse(flags.method, more);
  if (!method.ok()) return method.status();
  method->pipeline.segmenter.jieba_dir = flags.jieba_dir;
  method->pipeline.data_dir = flags.data_dir;
  return method;
}

Status RequireSimHash(const PipelineFlags& flags, std::string_view command) {
  auto method = MakeMethod(flags);
  if (!method.ok()) return method.status();
  return method->RequireSimHash(command);
}

Status ResolvePipelineFlags(PipelineFlags* flags) {
  auto method = MakeMethod(*flags);
  if (!method.ok()) return method.status();
  const PipelineOptions& p = method->pipeline;
  if (method->is_minhash()) {
    // The text form keeps num_perm, bands, rows...; SimHash's options stay
    // unset (they do not apply to minhash).
    flags->method = method->ToString();
    flags->features = FeatureKindName(p.features);
    flags->weights = std::string(WeightSchemeName(p.features.weights));
    flags->top_k = p.features.top_k;
    flags->hash = p.hash == FeatureHashAlgorithm::kMd5 ? "md5" : "xxh3";
    flags->default_k = -1;
    return Status::OK();
  }
  flags->method = method->name;
  flags->bits = p.bits;
  flags->features = FeatureKindName(p.features);
  flags->weights = std::string(WeightSchemeName(p.features.weights));
  flags->top_k = p.features.top_k;
  flags->hash = p.hash == FeatureHashAlgorithm::kMd5 ? "md5" : "xxh3";
  flags->entropy_threshold = p.features.entropy_threshold;
  flags->default_k = method->default_k;
  return Status::OK();
}

Result<NormalizeOptions> MakeNormalizeOptions(const PipelineFlags& flags) {
  NEARDUP_ASSIGN_OR_RETURN(NormalizeOptions n, ParseNormalizeList(flags.normalize));
  // tw2sp, not t2s: on the manpages-zh zh_CN/zh_TW pairs it puts 55 % of the
  // pairs within k = 3, t2s only 17 % (doc/pipeline.md, "Normalization";
  // doc/manpages.md). Applied twice (tw2sp2): one pass turns zh_CN's 文件
  // into 文档 but zh_TW's 檔案 only into 文件; CN/TW recall at the defaults
  // 0.944 -> 0.980 (doc/evaluation.md).
  if (flags.t2s && n.t2s.empty()) n.t2s = kT2sFlagConversion;
  return n;
}

Result<SegmenterOptions> MakeSegmenterOptions(const PipelineFlags& flags) {
  SegmenterOptions s;
  s.jieba_dir = flags.jieba_dir;
  s.user_dicts = flags.user_dicts;
  s.hmm = !flags.no_hmm;
  return s;
}

Result<PipelineOptions> MakePipelineOptions(const PipelineFlags& flags) {
  auto method = MakeMethod(flags);
  if (!method.ok()) return method.status();
  return method->pipeline;
}

void PrintErrorLine(std::string_view line) {
  std::string buffer;
  buffer.reserve(line.size() + 1);
  buffer.append(line);
  buffer.push_back('\n');
  std::cerr.flush();
  size_t done = 0;
  while (done < buffer.size()) {
    const ssize_t n = ::write(STDERR_FILENO, buffer.data() + done, buffer.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere left to report to
    done += static_cast<size_t>(n);
  }
}

void PrintIssue(const InputIssue& issue) {
  PrintErrorLine(std::string("neardup: ") + (issue.dropped() ? "skipped: " : "warning: ") +
                 issue.ToString());
}

int Fail(const Status& status) {
  PrintErrorLine("neardup: error: " + status.message());
  return status.IsInvalidArgument() ? kExitUsage : kExitError;
}

bool StandardOutputWritten() {
  errno = 0;
  std::cout.flush();
  int error = errno;
  const bool stream_failed = std::cout.fail();
  if (std::fflush(stdout) != 0 && error == 0) error = errno;
  if (!stream_failed && std::ferror(stdout) == 0) return true;
  std::cerr << "neardup: error: write to standard output failed: "
            << std::strerror(error != 0 ? error : EIO) << "\n";
  return false;
}

namespace {

using FileKey = std::pair<dev_t, ino_t>;

std::optional<FileKey> KeyOf(const std::string& path, struct stat* st) {
  if (stat(path.c_str(), st) != 0) return std::nullopt;
  return FileKey{st->st_dev, st->st_ino};
}

Status CheckInput(const std::string& input) {
  struct stat st;
  if (stat(input.c_str(), &st) != 0) {
    const int err = errno;
    const std::string message = "cannot read input " + input + ": " + std::strerror(err);
    return err == ENOENT || err == ENOTDIR ? Status::NotFound(message) : Status::IOError(message);
  }
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
    return Status::IOError("cannot read input " + input + ": a device, not a file");
  }
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return Status::OK();  // a FIFO: read later
  const int fd = ::open(input.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return Status::IOError("cannot read input " + input + ": " + std::strerror(errno));
  }
  ::close(fd);
  return Status::OK();
}

Status CheckOutput(const std::string& output, const std::vector<std::string>& inputs) {
  struct stat st;
  const std::optional<FileKey> file = KeyOf(output, &st);
  // The directories the output goes in: its own and every one above it.
  std::set<FileKey> dirs;
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::absolute(output, ec).parent_path();
  dir = std::filesystem::weakly_canonical(dir, ec);
  for (;;) {
    if (auto key = KeyOf(dir.string(), &st)) dirs.insert(*key);
    if (dir == dir.parent_path() || dir.empty()) break;
    dir = dir.parent_path();
  }
  for (const std::string& input : inputs) {
    if (input == "-") continue;
    const std::optional<FileKey> key = KeyOf(input, &st);
    if (!key) continue;
    if (file && *file == *key) {
      return Status::InvalidArgument("the output " + output + " is the input " + input +
                                     ": it would be overwritten before it is read");
    }
    if (S_ISDIR(st.st_mode) && dirs.contains(*key)) {
      return Status::InvalidArgument("the output " + output + " is inside the input directory " +
                                     input + ": it would be read as input");
    }
  }
  return Status::OK();
}

}  // namespace

Status CheckInputsAndOutputs(const std::vector<std::string>& inputs,
                             const std::vector<std::string>& outputs) {
  for (const std::string& input : inputs) {
    if (input != "-") NEARDUP_RETURN_IF_ERROR(CheckInput(input));
  }
  for (const std::string& output : outputs) {
    if (!output.empty() && output != "-") NEARDUP_RETURN_IF_ERROR(CheckOutput(output, inputs));
  }
  return Status::OK();
}

Result<std::unique_ptr<Output>> Output::Open(const std::string& path,
                                             const std::vector<std::string>& inputs) {
  NEARDUP_RETURN_IF_ERROR(CheckInputsAndOutputs(inputs, {path}));
  if (path.empty() || path == "-") {
    return std::unique_ptr<Output>(new Output(stdout, "standard output", false));
  }
  // A file (new or not) is written under a temporary name and put in place
  // when the run succeeds (output_files.h); /dev/null or a FIFO directly.
  std::string write_path = path;
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) {
    NEARDUP_ASSIGN_OR_RETURN(write_path, BeginOutputFile(path));
  }
  std::FILE* f = std::fopen(write_path.c_str(), "wb");
  if (f == nullptr) {
    return Status::IOError("cannot write " + path + ": " + std::strerror(errno));
  }
  return std::unique_ptr<Output>(new Output(f, path, true));
}

Output::~Output() {
  if (owned_ && file_ != nullptr) std::fclose(file_);
}

void Output::Write(std::string_view data) {
  if (std::fwrite(data.data(), 1, data.size(), file_) != data.size() && error_ == 0) {
    error_ = errno != 0 ? errno : EIO;
  }
}

Status Output::Close() {
  const bool flush_failed = std::fflush(file_) != 0 || std::ferror(file_) != 0;
  if (flush_failed && error_ == 0) error_ = errno != 0 ? errno : EIO;
  bool close_failed = false;
  if (owned_) {
    close_failed = std::fclose(file_) != 0;
    if (close_failed && error_ == 0) error_ = errno != 0 ? errno : EIO;
    file_ = nullptr;
  }
  if (flush_failed || close_failed) {
    return Status::IOError("cannot write " + path_ + ": " + std::strerror(error_));
  }
  return Status::OK();
}

Result<ReadOptions> MakeReadOptions(const InputFlags& flags) {
  ReadOptions r;
  auto format = ParseInputFormat(flags.format);
  if (!format.ok()) return format.status();
  r.format = *format;
  r.id_field = flags.id_field;
  r.encoding = flags.encoding;
  r.text_field = flags.text_field;
  r.title_field = flags.title_field;
  r.title_from_first_line = flags.title_first_line;
  r.max_document_bytes = flags.max_document_bytes;
  return r;
}

Result<InputStats> ForEachDocument(const InputFlags& flags, const ReadOptions& base,
                                   const ProcessFn& process, const EmitFn& emit) {
  return ForEachDocumentAs<std::string>(flags, base, process, emit);
}

template <typename T>
Result<InputStats> ForEachDocumentAs(const InputFlags& flags, const ReadOptions& base,
                                     const std::function<T(const Document&)>& process,
                                     const std::function<void(const Document&, T&)>& emit) {
  NEARDUP_RETURN_IF_ERROR(CheckInputsAndOutputs(flags.inputs, {}));
  ReadOptions options = base;
  options.on_issue = [](const InputIssue& issue) {
    // Symbolic links skipped in directories are only counted in the summary:
    // a man page tree has dozens of them.
    if (issue.kind == InputIssue::Kind::kSkipped) return;
    PrintIssue(issue);
  };
  auto reader = DocumentReader::Open(flags.inputs, options);
  if (!reader.ok()) return reader.status();
  ProgressLine progress(flags.progress ? ProgressModeOf(flags) : ProgressMode::kOff);
  DocumentPassOptions pass;
  pass.threads = flags.threads;
  pass.phase = "reading + fingerprints";
  pass.progress = ProgressOn(&progress, flags.inputs);
  pass.warn = [](const std::string& message) { PrintErrorLine("neardup: warning: " + message); };
  neardup::ForEachDocumentAs<T>(**reader, pass, process, emit);
  progress.Clear();
  const InputStats stats = (*reader)->stats();
  if (!flags.quiet) std::cerr << SummaryLine(stats) << "\n";
  return stats;
}

template Result<InputStats> ForEachDocumentAs<std::string>(
    const InputFlags&, const ReadOptions&, const std::function<std::string(const Document&)>&,
    const std::function<void(const Document&, std::string&)>&);
template Result<InputStats> ForEachDocumentAs<DocumentFingerprint>(
    const InputFlags&, const ReadOptions&,
    const std::function<DocumentFingerprint(const Document&)>&,
    const std::function<void(const Document&, DocumentFingerprint&)>&);

bool NothingRead(const InputStats& stats) {
  return stats.documents == 0 && stats.unreadable + stats.malformed + stats.missing_field > 0;
}

std::string NothingReadMessage(const InputFlags& flags, const InputStats& stats) {
  std::string m = "no document was read: every record or file met was skipped (";
  std::string sep;
  const auto part = [&](uint64_t n, const std::string& what) {
    if (n == 0) return;
    m += sep + std::to_string(n) + " " + what;
    sep = ", ";
  };
  part(stats.missing_field, "without a string \"" + flags.text_field + "\" field");
  part(stats.malformed, "malformed");
  part(stats.unreadable, "unreadable");
  m += ")";
  if (!stats.first_format.empty()) m += "; the input was read as " + stats.first_format;
  if (!stats.first_fields.empty()) {
    m += "; its first records have the fields ";
    for (size_t i = 0; i < stats.first_fields.size(); ++i) {
      m += (i == 0 ? "" : ", ") + stats.first_fields[i];
    }
  }
  if (stats.missing_field > 0) {
    m += "; name the field that holds the text with --text-field (a.b: a nested field)";
  } else if (stats.malformed > 0) {
    m += "; name the format with --input-format (text: one document per file, lines: one per "
         "line)";
  }
  return m;
}

int InputExitCode(const InputFlags& flags, const InputStats& stats) {
  if (NothingRead(stats)) {
    MarkRunFailed();
    PrintErrorLine("neardup: error: " + NothingReadMessage(flags, stats));
    return flags.strict ? kExitBadInput : kExitError;
  }
  return flags.strict && stats.problems() > 0 ? kExitBadInput : kExitOk;
}

std::string SummaryLine(const InputStats& stats) {
  std::ostringstream out;
  out << "neardup: read " << stats.documents << " document" << (stats.documents == 1 ? "" : "s")
      << " from " << stats.files << " file" << (stats.files == 1 ? "" : "s") << " (" << stats.bytes
      << " bytes)";
  const std::pair<uint64_t, const char*> parts[] = {
      {stats.unreadable, "unreadable"},
      {stats.malformed, "malformed line(s)"},
      {stats.missing_field, "without text"},
      {stats.invalid_utf8, "with invalid UTF-8"},
      {stats.nul_bytes, "with NUL bytes"},
      {stats.skipped, "symbolic link(s) or special file(s) in directories skipped"},
  };
  for (const auto& [count, what] : parts) {
    if (count > 0) out << "; " << count << " " << what;
  }
  return out.str();
}

std::string JsonLine(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

Result<std::unique_ptr<Normalizer>> MakeNormalizer(const PipelineFlags& flags) {
  auto options = MakeNormalizeOptions(flags);
  if (!options.ok()) return options.status();
  if (!options->nfkc_casefold && options->t2s.empty() && !options->collapse_whitespace) {
    return std::unique_ptr<Normalizer>();
  }
  return Normalizer::Create(*options);
}

int WriteLinePerDocument(const InputFlags& flags, const ReadOptions& options,
                         const ProcessFn& process) {
  auto out = Output::Open(flags.output, flags.inputs);
  if (!out.ok()) return Fail(out.status());
  const auto emit = [&](const Document&, std::string& line) { (*out)->Write(line); };
  auto stats = ForEachDocument(flags, options, process, emit);
  if (!stats.ok()) return Fail(stats.status());
  NEARDUP_RETURN_IF_ERROR_CLI((*out)->Close());
  return InputExitCode(flags, *stats);
}

Status WriteRecords(const std::string& path, const std::vector<std::string>& inputs, size_t count,
                    const std::function<const std::string&(size_t)>& record,
                    const std::function<bool(size_t)>& keep) {
  auto out = Output::Open(path, inputs);
  if (!out.ok()) return out.status();
  for (size_t i = 0; i < count; ++i) {
    if (!keep(i)) continue;
    (*out)->Write(record(i));
    (*out)->Write("\n");
  }
  return (*out)->Close();
}

namespace {

// The first document of `operand` (a text with --text).
Result<Document> LoadOperand(const std::string& operand, const OperandFlags& flags) {
  Document doc;
  if (flags.text) {
    doc.id = "text";
    doc.text = operand;
    RepairUtf8(&doc.text);
    return doc;
  }
  auto options = MakeReadOptions(flags.input);
  if (!options.ok()) return options.status();
  std::string problem;
  options->on_issue = [&problem](const InputIssue& issue) {
    if (issue.dropped() && problem.empty()) problem = issue.ToString();
    PrintIssue(issue);
  };
  auto reader = DocumentReader::Open({operand}, *options);
  if (!reader.ok()) return reader.status();
  if (!(*reader)->Next(&doc)) {
    return Status::InvalidArgument(problem.empty() ? operand + ": no document" : problem);
  }
  return doc;
}

// The documents with ids flags.ids[0] and flags.ids[1] in the corpus.
Result<std::vector<Document>> LoadById(const OperandFlags& flags, std::string_view command) {
  if (flags.ids.size() != 2 || flags.text) {
    return Status::InvalidArgument(std::string(command) +
                                   " takes --id twice (--id A --id B), without --text");
  }
  NEARDUP_RETURN_IF_ERROR(CheckInputsAndOutputs(flags.operands, {}));
  auto options = MakeReadOptions(flags.input);
  if (!options.ok()) return options.status();
  options->on_issue = PrintIssue;
  auto reader = DocumentReader::Open(flags.operands, *options);
  if (!reader.ok()) return reader.status();
  std::vector<Document> docs(2);
  bool found[2] = {false, false};
  Document doc;
  while (!(found[0] && found[1]) && (*reader)->Next(&doc)) {
    for (int i = 0; i < 2; ++i) {
      if (!found[i] && doc.id == flags.ids[static_cast<size_t>(i)]) {
        docs[static_cast<size_t>(i)] = doc;
        found[i] = true;
      }
    }
  }
  for (int i = 0; i < 2; ++i) {
    if (!found[i]) {
      return Status::NotFound("no document with id \"" + flags.ids[static_cast<size_t>(i)] +
                              "\" in the input (" + std::to_string((*reader)->stats().documents) +
                              " documents read)");
    }
  }
  return docs;
}

}  // namespace

void AddOperandOptions(CLI::App* cmd, OperandFlags* flags) {
  cmd->add_option("A B", flags->operands,
                  "Two files (or two texts with --text); with --id, the corpus: files, "
                  "directories or - (default: -)");
  cmd->add_flag("--text", flags->text, "The operands are texts, not files");
  cmd->add_option("--id", flags->ids,
                  "Twice (--id A --id B): compare the documents with these ids of one corpus")
      ->allow_extra_args(false);  // one value per --id: what follows is an operand
  cmd->add_flag("--json", flags->json, "Print one JSON object");
  AddRecordOptions(cmd, &flags->input);
}

Result<std::vector<Document>> LoadOperands(const OperandFlags& flags, std::string_view command) {
  if (!flags.ids.empty()) return LoadById(flags, command);
  if (flags.operands.size() != 2) {
    return Status::InvalidArgument(std::string(command) +
                                   " takes exactly two files (or two texts with --text, or "
                                   "--id A --id B and a corpus)");
  }
  std::vector<Document> docs;
  for (const std::string& operand : flags.operands) {
    auto doc = LoadOperand(operand, flags);
    if (!doc.ok()) return doc.status();
    docs.push_back(std::move(*doc));
  }
  return docs;
}

}  // namespace neardup::cli
