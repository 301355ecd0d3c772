// Copyright 2026 The neardup Authors.
//
// What the subcommands share: input and pipeline options, reading with
// reported bad input, ordered parallel processing and output.

#ifndef NEARDUP_TOOLS_NEARDUP_COMMON_H_
#define NEARDUP_TOOLS_NEARDUP_COMMON_H_

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "neardup/dedup_job.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "neardup/status.h"
#include "neardup/text.h"

namespace neardup::cli {

struct InputFlags {
  std::vector<std::string> inputs;
  std::string format = "auto";
  std::string encoding;  // ReadOptions::encoding
  std::string id_field = "id";
  std::string text_field = "text";
  std::string title_field = "title";
  bool title_first_line = false;
  bool strict = false;
  bool quiet = false;
  int threads = 0;  // 0 = all cores; at most kMaxThreads
  std::string output = "-";
  uint64_t max_document_bytes = kDefaultMaxDocumentBytes;
  bool progress = false;  // progress of the reading pass (ProgressModeOf), for long runs
  std::string progress_mode = "auto";  // --progress: auto | plain | off
};

// The conversion --t2s adds (NormalizeOptions::t2s; common.cc says why tw2sp twice).
inline constexpr char kT2sFlagConversion[] = "tw2sp2";

struct PipelineFlags {
  // Comma-separated: nfkc (NFKC + case folding), t2s / tw2s / tw2sp / hk2s
  // (OpenCC), ws (collapse white space); "none" for nothing.
  std::string normalize;
  bool t2s = false;
  std::string jieba_dir;
  std::vector<std::string> user_dicts;
  std::string idf;
  bool no_hmm = false;
  // A preset (presets.h); the fields below override it when set. After
  // ResolvePipelineFlags every field holds a concrete value.
  std::string method;
  int bits = 0;          // 0: the method's
  std::string features;  // "": the method's
  std::string weights;   // "": the method's
  int top_k = -1;    // -1 (not given; --topk is >= 0): the method's (tfidf: 20), or 0 when weights
                     // are overridden
  std::string hash;  // "": the method's
  double entropy_threshold = 0;  // 0: the method's (W_t of entropy weights)
  std::string data_dir;          // shipped data (marker words); "": default search
  std::string marker_words;      // marker word lexicon; "": <data dir>/marker_words.txt
  int default_k = -1;            // set by ResolvePipelineFlags: the method's default k
};

// The method the flags name: --method (a preset or a method's text form,
// method.h), overridden by every fingerprint option given.
Result<Method> MakeMethod(const PipelineFlags& flags);

// NotSupported when the flags name the minhash method, which only dedup
// supports; `command` names the subcommand in the message.
Status RequireSimHash(const PipelineFlags& flags, std::string_view command);

// Fills every unset field of *flags from MakeMethod(*flags). Idempotent. For
// minhash, `method` becomes its full text form and bits, entropy_threshold
// and default_k stay unset.
Status ResolvePipelineFlags(PipelineFlags* flags);

// Registers INPUT... and the input options on `cmd`.
void AddInputOptions(CLI::App* cmd, InputFlags* flags, bool with_positional = true);
// Registers only how records are read (--input-format, --id-field,
// --text-field, --title-field, --title-first-line, --max-document-bytes):
// part of AddInputOptions, and all of it that compare and explain take.
void AddRecordOptions(CLI::App* cmd, InputFlags* flags);
// Registers the pipeline options; `normalize_default` is "none" for the
// inspection commands and "nfkc" for everything that fingerprints. `--idf`
// only where an IDF table is read (the fingerprinting commands and
// keywords), so that no command accepts an option it would ignore.
void AddPipelineOptions(CLI::App* cmd, PipelineFlags* flags, const std::string& normalize_default,
                        bool with_fingerprint_options, bool with_idf = true);

Result<PipelineOptions> MakePipelineOptions(const PipelineFlags& flags);
Result<NormalizeOptions> MakeNormalizeOptions(const PipelineFlags& flags);
Result<SegmenterOptions> MakeSegmenterOptions(const PipelineFlags& flags);

// The largest --threads: far above any core count, far below a process or
// memory limit's worth of stacks.
inline constexpr int kMaxThreads = 1024;

// Registers --threads (0 = all cores, 1..kMaxThreads; anything else is a
// usage error).
void AddThreadsOption(CLI::App* cmd, int* threads);

// KRangeMessage (-k out of the method's range): neardup/dedup_job.h.

// Prints "neardup: error: <message>" and returns kExitError.
int Fail(const Status& status);

// Flushes std::cout and stdout. False (after printing "neardup: error: write
// to standard output failed: <reason>") when anything written to them was
// lost: a full disk, a closed pipe. Called once, after the command ran.
bool StandardOutputWritten();

// Checks made before anything is written:
//  - every named input (not "-") exists, can be opened and is not a device:
//    NotFound or IOError otherwise (exit status 1; a run without its input
//    must not write an empty result);
//  - no output (not "-" or "") is a named input (same device and inode, so
//    links count) or lies inside a named input directory: InvalidArgument
//    otherwise (exit status 2), as writing it would destroy the input before
//    it is read, or feed the output back in.
Status CheckInputsAndOutputs(const std::vector<std::string>& inputs,
                             const std::vector<std::string>& outputs);

// Output to a file or standard output ("-"). A file is written under a
// temporary name and put in place only when the command succeeds
// (output_files.h: FinishOutputs).
class Output {
 public:
  // Runs CheckInputsAndOutputs(inputs, {path}) before creating the file.
  static Result<std::unique_ptr<Output>> Open(const std::string& path,
                                              const std::vector<std::string>& inputs);
  ~Output();
  void Write(std::string_view data);
  // Flushes and closes; an error (disk full) is returned.
  Status Close();

 private:
  Output(std::FILE* file, std::string path, bool owned)
      : file_(file), path_(std::move(path)), owned_(owned) {}
  std::FILE* file_;
  std::string path_;
  bool owned_;
  int error_ = 0;  // errno of the first failed write
};

// How progress is shown (--progress): kTerminal, a line redrawn in place
// (stderr a terminal); kPlain, one line "neardup: progress: ..." every 10 s
// (every $NEARDUP_PROGRESS_INTERVAL seconds when set), for logs; kOff.
enum class ProgressMode { kOff, kTerminal, kPlain };
// --progress auto: kTerminal when stderr is a terminal, else kPlain; kOff
// under --quiet.
ProgressMode ProgressModeOf(const InputFlags& flags);

// Progress of a long phase: "neardup: PHASE 42% (DONE of TOTAL UNIT, RATE
// UNIT/s), ETA 12 s", the rate and ETA from the phase's own progress so far;
// a phase without a unit shows its seconds. Redrawn at most ten times a
// second on a terminal; a plain line when the interval has passed since the
// last one (of any phase). Clear() erases a terminal line.
class ProgressLine {
 public:
  explicit ProgressLine(ProgressMode mode) : mode_(mode) {}
  ~ProgressLine() { Clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const { return mode_ != ProgressMode::kOff; }
  // total == 0: no percentage, no ETA.
  void Update(std::string_view phase, double done, double total, std::string_view unit);
  void Clear();

 private:
  ProgressMode mode_;
  bool shown_ = false;
  std::string phase_;
  double phase_start_ = 0;
  double last_draw_ = -1;
};

// ProgressModeOf(flags) != kOff.
bool ProgressEnabled(const InputFlags& flags);

// The bytes the inputs hold, for a reading phase's percentage: the sum of
// their sizes when every input is a regular file; 0 (no estimate)
// otherwise. The reading phases count bytes as stored (compressed bytes for
// a compressed file: neardup/document_pass.h), so compressed inputs count at
// their size too.
double InputSizeEstimate(const std::vector<std::string>& inputs);

// The command line's inputs as a job's (neardup/document_pass.h): the named
// files (read twice when boilerplate is counted), or standard input (read
// once, held). Issues are printed as met (file, line, reason) by the pass
// that reports them.
DedupInput MakeDedupInput(const InputFlags& input, const ReadOptions& read_options);

// A job's progress on a ProgressLine; `inputs` give the reading phases'
// total (InputSizeEstimate). Empty when the line is off.
DedupProgress ProgressOn(ProgressLine* line, const std::vector<std::string>& inputs);

// Reads every document of flags.inputs (after CheckInputsAndOutputs on them)
// with the library's reading pass (neardup/document_pass.h): `process` on
// worker threads (threads from flags), `emit` on the calling thread in
// input order; progress when flags.progress.
// Issues are printed to stderr as they are met; a summary follows unless
// --quiet. Returns the reader's stats, or an error for bad options.
using ProcessFn = std::function<std::string(const Document&)>;
using EmitFn = std::function<void(const Document&, std::string&)>;
Result<InputStats> ForEachDocument(const InputFlags& flags, const ReadOptions& base,
                                   const ProcessFn& process, const EmitFn& emit);

// The same with a typed worker result (a value-initialized T for each
// document before `process`). Instantiated for std::string and
// DocumentFingerprint.
template <typename T>
Result<InputStats> ForEachDocumentAs(const InputFlags& flags, const ReadOptions& base,
                                     const std::function<T(const Document&)>& process,
                                     const std::function<void(const Document&, T&)>& emit);

Result<ReadOptions> MakeReadOptions(const InputFlags& flags);

// The status rule (README, "Exit statuses"), in this one place: a run that
// produced no document while it skipped records or files (every record
// without its text field, malformed, or every file unreadable) failed, even
// though nothing went wrong with the input's files; an input with nothing in
// it (empty, blank) is an empty result, not a failure.
bool NothingRead(const InputStats& stats);
// Why, with what the reader saw: the format the input was read as and the
// fields its first records have, and which option to use.
std::string NothingReadMessage(const InputFlags& flags, const InputStats& stats);

// The exit status after reading: when NothingRead(stats), kExitError (or
// kExitBadInput under --strict) after printing NothingReadMessage; else
// kExitBadInput under --strict when anything was wrong with the input, else
// kExitOk. Called before any output is put in place.
int InputExitCode(const InputFlags& flags, const InputStats& stats);

// One line: "neardup: read 3 documents from 2 files (1.2 MB); 1 malformed line".
std::string SummaryLine(const InputStats& stats);

// Writes `line` and a newline to standard error in one write(2), so that the
// lines of threads, or of the ranks of an MPI job sharing one stderr, never
// interleave within a line.
void PrintErrorLine(std::string_view line);

// "neardup: warning: FILE:LINE: reason" (or "skipped: ...") for one issue.
void PrintIssue(const InputIssue& issue);

// In a Run* function: prints the error and returns its exit status.
#define NEARDUP_RETURN_IF_ERROR_CLI(expr)                            \
  do {                                                               \
    const ::neardup::Status _cli_status = (expr);                    \
    if (!_cli_status.ok()) return ::neardup::cli::Fail(_cli_status); \
  } while (0)

// In a Run* function: `lhs` = the value of a Result, or prints the error and
// returns its exit status.
#define NEARDUP_ASSIGN_OR_RETURN_CLI(lhs, expr) \
  NEARDUP_ASSIGN_OR_RETURN_CLI_IMPL(NEARDUP_CLI_CONCAT(_cli_result_, __LINE__), lhs, expr)
#define NEARDUP_CLI_CONCAT_INNER(a, b) a##b
#define NEARDUP_CLI_CONCAT(a, b) NEARDUP_CLI_CONCAT_INNER(a, b)
#define NEARDUP_ASSIGN_OR_RETURN_CLI_IMPL(result, lhs, expr)      \
  auto result = (expr);                                           \
  if (!result.ok()) return ::neardup::cli::Fail(result.status()); \
  lhs = std::move(*result)

// One JSON Lines record: `j` compact, invalid UTF-8 replaced, then '\n'.
std::string JsonLine(const nlohmann::ordered_json& j);

// The normalizer the flags ask for, or null when they ask for none.
Result<std::unique_ptr<Normalizer>> MakeNormalizer(const PipelineFlags& flags);

// The flow of the one-line-per-document subcommands: opens flags.output,
// runs `process` over every document (in parallel, output in input order),
// closes the output and returns the exit status.
int WriteLinePerDocument(const InputFlags& flags, const ReadOptions& options,
                         const ProcessFn& process);

// Writes the records for which keep(i) holds, i < count, to `path` (after
// CheckInputsAndOutputs), each followed by '\n': --unique-out and
// --duplicates-out.
Status WriteRecords(const std::string& path, const std::vector<std::string>& inputs, size_t count,
                    const std::function<const std::string&(size_t)>& record,
                    const std::function<bool(size_t)>& keep);

// The two operands of compare / explain and how to read them.
struct OperandFlags {
  std::vector<std::string> operands;
  bool text = false;  // the operands are texts, not files
  bool json = false;
  std::vector<std::string> ids;  // --id A --id B: two documents of the corpus `operands`
  InputFlags input;              // the AddRecordOptions part
};

// Registers A B, --text, --json, --id and the record options.
void AddOperandOptions(CLI::App* cmd, OperandFlags* flags);

// Both operands: the first document of each file, or, with --text,
// documents whose text is the operand (invalid UTF-8 replaced); or, with
// --id A --id B, the documents with these ids among all those of the
// operands (files, directories or -; default -). InvalidArgument unless there
// are exactly two; NotFound for an id no document has. Problems are printed
// to stderr.
Result<std::vector<Document>> LoadOperands(const OperandFlags& flags, std::string_view command);

}  // namespace neardup::cli

#endif  // NEARDUP_TOOLS_NEARDUP_COMMON_H_
