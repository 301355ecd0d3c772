// Copyright 2026 The neardup Authors.
//
// neardup-mpi against its oracle, single-process neardup dedup: on a corpus
// of real news (../shared/data) with planted near copies spread over several
// files, every output of `mpirun -np P neardup-mpi dedup` (P = 1, 2, 4) is
// byte-identical to neardup dedup's; a rank killed in the band stage fails
// the job naming the rank, and --resume completes it with the same outputs
// without recomputing what was finished; hostile lines are reported with
// file and line and counted once.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

extern char** environ;

namespace neardup {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;

// Runs `argv` (argv[0] a path) with `env` added to the environment; standard
// output and error go to files, read back. posix_spawn: nothing runs in the
// child between fork and exec.
CommandResult Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    const std::string& dir) {
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!std::string_view(*e).starts_with("ASAN_OPTIONS=")) environment.emplace_back(*e);
  }
  // Open MPI's own allocations (kept to exit) are reported as leaks under
  // LeakSanitizer: leak checking is off for the MPI processes only.
  environment.emplace_back("ASAN_OPTIONS=detect_leaks=0:abort_on_error=1");
  // Containers often forbid the cross-memory attach of Open MPI's shared
  // memory transport ("Read -1, expected ..."): plain copies work anywhere.
  environment.emplace_back("OMPI_MCA_btl_vader_single_copy_mechanism=none");
  // Each run's session directory under its own test directory: two runs at
  // once (ctest -j, or another job on the machine) share /tmp/ompi.HOST.UID
  // otherwise, and one's clean-up races the other's mkdir ("orte_init
  // failed ... File exists").
  environment.emplace_back("OMPI_MCA_orte_tmpdir_base=" + dir);
  for (const std::string& e : env) environment.push_back(e);
  std::vector<char*> envp, args;
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> copy = argv;
  for (std::string& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  const std::string out = dir + "/stdout.txt", err = dir + "/stderr.txt";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  CommandResult result;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data()) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&actions);
  result.out = testing::ReadFile(out);
  result.err = testing::ReadFile(err);
  return result;
}

size_t CountLines(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The lines of a file that mention `needle`, as a set.
std::set<std::string> LinesWith(const std::string& text, const std::string& needle) {
  std::set<std::string> out;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) {
    if (l.find(needle) != std::string::npos) out.insert(l);
  }
  return out;
}

const char* const kOutputs[] = {"records.jsonl", "unique.jsonl", "duplicates.jsonl", "pairs.jsonl",
                                "clusters.jsonl"};

// Without --pairs-out the joins keep only the components (a spanning forest).
std::vector<std::string> OutputFlags(const std::string& dir, bool pairs = true) {
  std::vector<std::string> flags = {"-o",
                                    dir + "/records.jsonl",
                                    "--unique-out",
                                    dir + "/unique.jsonl",
                                    "--duplicates-out",
                                    dir + "/duplicates.jsonl",
                                    "--clusters-out",
                                    dir + "/clusters.jsonl"};
  if (pairs) flags.insert(flags.end(), {"--pairs-out", dir + "/pairs.jsonl"});
  return flags;
}

class MpiDedupTest : public ::testing::Test {
 protected:
  // The corpus: 240 THUCNews articles and a near copy (about 2 % of the
  // characters replaced) of every fourth, a second one of every eighth,
  // shuffled into 6 files; one file has a malformed line, another a line of
  // invalid UTF-8.
  void SetUp() override {
    NEARDUP_REQUIRE_SHARED_DATA(news, "zh_thucnews1000.jsonl");
    dir_ = testing::MakeTempDir("mpi_dedup");
    std::ifstream in(news);
    std::vector<std::pair<std::string, std::string>> docs;  // id, JSON line
    std::mt19937_64 rng(14);
    std::string line;
    for (int i = 0; i < 240 && std::getline(in, line); ++i) {
      auto j = nlohmann::json::parse(line);
      const std::string id = "n" + std::to_string(i);
      std::u32string text;
      for (const char32_t c : Utf32(j["text"].get<std::string>())) text.push_back(c);
      docs.push_back({id, nlohmann::json({{"id", id}, {"text", Utf8(text)}}).dump()});
      if (i % 4 == 0 && text.size() > 100) {
        const std::u32string original = text;
        for (size_t k = 0; k < text.size() / 50; ++k) text[rng() % text.size()] = U'字';
        docs.push_back({id + "c", nlohmann::json({{"id", id + "c"}, {"text", Utf8(text)}}).dump()});
        planted_.insert(id);
        if (i % 8 == 0) {
          // A cluster of three: with --pairs-out every pair of it, not a
          // spanning forest.
          text = original;
          for (size_t k = 0; k < text.size() / 50; ++k) text[rng() % text.size()] = U'文';
          docs.push_back(
              {id + "d", nlohmann::json({{"id", id + "d"}, {"text", Utf8(text)}}).dump()});
        }
      }
    }
    std::shuffle(docs.begin(), docs.end(), rng);
    for (int f = 0; f < 6; ++f) {
      std::string contents;
      for (size_t i = static_cast<size_t>(f); i < docs.size(); i += 6)
        contents += docs[i].second + "\n";
      if (f == 2) contents += "{\"id\": \"broken\", \"text\": \n";
      if (f == 4) contents += "{\"id\":\"utf\",\"text\":\"bad \xff\xfe bytes\"}\n";
      const std::string path = dir_ + "/in" + std::to_string(f) + ".jsonl";
      testing::WriteFile(path, contents);
      inputs_.push_back(path);
    }
  }

  static std::u32string Utf32(const std::string& s) {
    std::u32string out;
    for (size_t i = 0; i < s.size();) {
      const auto c = static_cast<unsigned char>(s[i]);
      const int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      char32_t v = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
      for (int k = 1; k < n && i + static_cast<size_t>(k) < s.size(); ++k) {
        v = (v << 6) | (static_cast<unsigned char>(s[i + static_cast<size_t>(k)]) & 0x3F);
      }
      out.push_back(v);
      i += static_cast<size_t>(n);
    }
    return out;
  }
  static std::string Utf8(const std::u32string& s) {
    std::string out;
    for (const char32_t c : s) {
      if (c < 0x80) {
        out += static_cast<char>(c);
      } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
      } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
      } else {
        out += static_cast<char>(0xF0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
      }
    }
    return out;
  }

  // neardup dedup INPUTS options, outputs in a fresh directory `name`.
  std::string Single(const std::string& name, const std::vector<std::string>& options,
                     bool pairs = true) {
    const std::string out = dir_ + "/" + name;
    fs::create_directories(out);
    std::vector<std::string> argv = {NEARDUP_CLI_PATH, "dedup"};
    argv.insert(argv.end(), inputs_.begin(), inputs_.end());
    argv.insert(argv.end(), options.begin(), options.end());
    const auto o = OutputFlags(out, pairs);
    argv.insert(argv.end(), o.begin(), o.end());
    const CommandResult r = Spawn(argv, {}, out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return out;
  }

  // Every input's lines, in order, in one file `name` under dir_, which
  // becomes the only input; returns its contents.
  std::string OneInputOfAll(const std::string& name) {
    std::string all;
    for (const std::string& in : inputs_) all += testing::ReadFile(in);
    inputs_ = {dir_ + "/" + name};
    testing::WriteFile(inputs_[0], all);
    return all;
  }

  // timeout 300 mpirun -np P neardup-mpi dedup INPUTS: bounded, so that a
  // hang fails the test instead of holding the machine.
  std::vector<std::string> MpiDedup(int ranks) const {
    std::vector<std::string> argv = {"/usr/bin/timeout",
                                     "300",
                                     NEARDUP_MPIEXEC,
                                     "--allow-run-as-root",
                                     "--oversubscribe",
                                     "-np",
                                     std::to_string(ranks),
                                     NEARDUP_MPI_PATH,
                                     "dedup"};
    argv.insert(argv.end(), inputs_.begin(), inputs_.end());
    return argv;
  }

  // mpirun -np P neardup-mpi dedup INPUTS options --work-dir, outputs in
  // directory `name` (kept between calls: --resume).
  CommandResult Mpi(const std::string& name, int ranks, const std::vector<std::string>& options,
                    const std::vector<std::string>& env = {}, bool pairs = true) {
    const std::string out = dir_ + "/" + name;
    fs::create_directories(out);
    std::vector<std::string> argv = MpiDedup(ranks);
    argv.insert(argv.end(), options.begin(), options.end());
    const auto o = OutputFlags(out, pairs);
    argv.insert(argv.end(), o.begin(), o.end());
    argv.insert(argv.end(), {"--work-dir", out + "/work", "--threads", "1"});
    // --band-join auto takes band ranges when the distinct fingerprints fit
    // the node's memory, as they always do here: the tests say how much
    // memory the node has (1 byte unless a test says otherwise), so that
    // auto exercises the band-key rounds at P > 1.
    std::vector<std::string> environment = env;
    if (std::none_of(env.begin(), env.end(), [](const std::string& e) {
          return e.starts_with("NEARDUP_MPI_NODE_MEMORY=");
        })) {
      environment.emplace_back("NEARDUP_MPI_NODE_MEMORY=1");
    }
    return Spawn(argv, environment, out);
  }

  // Short texts (the first 20 to 200 characters of 300 news items), every
  // other one with an edited copy (one character in 12 replaced: many
  // copies beyond k), shuffled into six inputs.
  void WriteShortTexts(const std::string& news) {
    std::ifstream in(news);
    std::mt19937_64 rng(31);
    std::vector<std::string> lines;
    std::string line;
    for (int i = 0; i < 300 && std::getline(in, line); ++i) {
      const std::u32string text = Utf32(nlohmann::json::parse(line)["text"].get<std::string>());
      std::u32string cut = text.substr(0, std::min<size_t>(text.size(), 20 + rng() % 181));
      const std::string id = "s" + std::to_string(i);
      lines.push_back(nlohmann::json({{"id", id}, {"text", Utf8(cut)}}).dump());
      if (i % 2 == 0) {
        for (size_t k = 0; k < std::max<size_t>(1, cut.size() / 12); ++k)
          cut[rng() % cut.size()] = U'字';
        lines.push_back(nlohmann::json({{"id", id + "c"}, {"text", Utf8(cut)}}).dump());
      }
    }
    std::shuffle(lines.begin(), lines.end(), rng);
    inputs_.clear();
    for (int f = 0; f < 6; ++f) {
      std::string contents;
      for (size_t i = static_cast<size_t>(f); i < lines.size(); i += 6) contents += lines[i] + "\n";
      inputs_.push_back(dir_ + "/short" + std::to_string(f) + ".jsonl");
      testing::WriteFile(inputs_.back(), contents);
    }
  }

  void ExpectSameOutputs(const std::string& single, const std::string& name) {
    for (const char* f : kOutputs) {
      const std::string a = testing::ReadFile(single + "/" + f);
      const std::string b = testing::ReadFile(dir_ + "/" + name + "/" + f);
      EXPECT_EQ(a, b) << name << ": " << f << " differs from neardup dedup's";
    }
  }

  // The pairs neardup dedup's run `single` reported beyond k = 28 (those
  // only the short-document rule gives).
  static size_t PairsBeyondK(const std::string& single) {
    size_t n = 0;
    for (const auto& p : testing::ParseJsonLines(testing::ReadFile(single + "/pairs.jsonl"))) {
      if (p["distance"].get<int>() > 28) ++n;
    }
    return n;
  }

  // The short_rule stage of run `name`'s report.json (null when absent).
  nlohmann::json ShortRuleStage(const std::string& name) {
    const auto report =
        nlohmann::json::parse(testing::ReadFile(dir_ + "/" + name + "/work/report.json"));
    for (const auto& s : report["stages"]) {
      if (s["stage"] == "short_rule") return s;
    }
    return nullptr;
  }

  // Killed after writing its parts at three ranks, resumed with two: the
  // shards are read back (every input skipped) and the outputs are
  // neardup dedup's (`single`).
  void ExpectResumedAtTwoRanks(const std::string& name, const std::vector<std::string>& options,
                               const std::string& single) {
    const CommandResult failed = Mpi(name, 3, options, {"NEARDUP_MPI_FAIL_AT=write:1"});
    ASSERT_NE(failed.exit_code, 0) << failed.err;
    std::vector<std::string> resume = options;
    resume.push_back("--resume");
    const CommandResult resumed = Mpi(name, 2, resume);
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    ExpectSameOutputs(single, name);
    const std::set<std::string> shards = LinesWith(resumed.err, "fingerprint: input");
    EXPECT_EQ(shards.size(), inputs_.size()) << resumed.err;
    for (const std::string& l : shards) EXPECT_TRUE(l.ends_with("skipped")) << l;
  }

  // Every planted copy is found: its pair is in pairs.jsonl.
  void ExpectPlantedPairs(const std::string& single) {
    std::set<std::string> found;
    for (const auto& p : testing::ParseJsonLines(testing::ReadFile(single + "/pairs.jsonl"))) {
      const std::string a = p["a"], b = p["b"];
      if (a + "c" == b) found.insert(a);
      if (b + "c" == a) found.insert(b);
    }
    // SimHash at its default k misses a heavily edited copy now and then
    // (the method's recall, not the distribution's: that is the byte
    // comparison with neardup dedup).
    EXPECT_GE(planted_.size(), 50u);
    EXPECT_GE(found.size() * 10, planted_.size() * 9) << found.size() << " of " << planted_.size();
  }

  void CompareForRanks(const std::string& tag, const std::vector<std::string>& options) {
    const std::string single = Single(tag + "_single", options);
    ExpectPlantedPairs(single);
    for (const int ranks : {1, 2, 4}) {
      const std::string name = tag + "_np" + std::to_string(ranks);
      const CommandResult r = Mpi(name, ranks, options);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      ExpectSameOutputs(single, name);
    }
  }

  std::string dir_;
  std::vector<std::string> inputs_;
  std::set<std::string> planted_;
};

TEST_F(MpiDedupTest, SimHashAutoJoinIsByteIdenticalForOneTwoFourRanks) {
  CompareForRanks("auto", {});
}

TEST_F(MpiDedupTest, SimHashBandedJoinSplitByBandKeyIsByteIdentical) {
  CompareForRanks("banded", {"--banded", "--keep", "longest"});
}

// SimHash's join split by band keys or by band ranges (--band-join; auto:
// ranges at one rank, and at more while the distinct fingerprints' copies
// fit a quarter of each rank's share of the node's memory, keys beyond)
// gives neardup dedup's outputs, and report.json names the split that ran.
TEST_F(MpiDedupTest, SimHashBandJoinByKeysOrRangesIsByteIdentical) {
  const std::string single = Single("bj_single", {"--banded"});
  struct Case {
    std::string tag;
    int ranks;
    std::string mode;
    std::string node_memory;  // NEARDUP_MPI_NODE_MEMORY
    std::string unit;         // the join stage's count in report.json
  };
  for (const Case& c : {Case{"bj_keys_np1", 1, "keys", "1000000000000", "band_key_rounds"},
                        Case{"bj_ranges_np3", 3, "ranges", "1", "band_ranges"},
                        Case{"bj_auto_np1", 1, "auto", "1", "band_ranges"},
                        Case{"bj_auto_np2_small", 2, "auto", "1", "band_key_rounds"},
                        Case{"bj_auto_np2_large", 2, "auto", "1000000000000", "band_ranges"}}) {
    SCOPED_TRACE(c.tag);
    const CommandResult r = Mpi(c.tag, c.ranks, {"--banded", "--band-join", c.mode},
                                {"NEARDUP_MPI_NODE_MEMORY=" + c.node_memory});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExpectSameOutputs(single, c.tag);
    const auto report =
        nlohmann::json::parse(testing::ReadFile(dir_ + "/" + c.tag + "/work/report.json"));
    bool found = false;
    for (const auto& s : report["stages"]) {
      if (s["stage"] == "join") found = s.contains(c.unit) && s[c.unit].get<size_t>() > 0;
    }
    EXPECT_TRUE(found) << report.dump();
  }
}

TEST_F(MpiDedupTest, MinHashIsByteIdenticalForOneTwoFourRanks) {
  CompareForRanks("minhash", {"--method", "minhash"});
  // At the default budget the band-key exchange was one round (a kill redid
  // all of it): now at most ceil(L / 8) bands a round, about 8 rounds.
  const auto report =
      nlohmann::json::parse(testing::ReadFile(dir_ + "/minhash_np4/work/report.json"));
  size_t rounds = 0;
  for (const auto& s : report["stages"]) {
    if (s["stage"] == "join") rounds = s["band_key_rounds"];
  }
  EXPECT_GE(rounds, 5u);
  EXPECT_LE(rounds, 8u);
}

// A 64-bit method at k = 3 (issue 23's third method of the parity tests):
// the same job through the engine at P = 1 and 3.
TEST_F(MpiDedupTest, SixtyFourBitMethodAtKThreeIsByteIdenticalForOneAndThreeRanks) {
  const std::vector<std::string> options = {"--method", "tfidf,bits=64", "-k", "3"};
  const std::string single = Single("tfidf64_single", options);
  for (const int ranks : {1, 3}) {
    const std::string name = "tfidf64_np" + std::to_string(ranks);
    const CommandResult r = Mpi(name, ranks, options);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExpectSameOutputs(single, name);
  }
}

// MinHash's band keys are exchanged in rounds of bounded size (here about a
// third of a band per round: every band's buckets in three parts), rank 0
// gets the signatures of clustered groups only, and a rank killed between
// rounds is resumed: the finished rounds are skipped, the outputs are
// neardup dedup's (components only: no --pairs-out, --cluster components).
TEST_F(MpiDedupTest, MinHashBandKeysExchangedInRoundsAndResumedAfterAKill) {
  const std::vector<std::string> options = {"--method", "minhash", "--cluster", "components"};
  const std::string single = Single("mh_rounds_single", options, false);
  const std::string round_bytes = "NEARDUP_MPI_ROUND_BYTES=1000";
  const CommandResult failed =
      Mpi("mh_rounds", 3, options, {round_bytes, "NEARDUP_MPI_FAIL_AT=band:1"}, false);
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_NE(failed.err.find("rank 1"), std::string::npos) << failed.err;
  const std::string work = dir_ + "/mh_rounds/work";
  EXPECT_FALSE(fs::exists(work + "/join.done"));
  const std::string log_path = work + "/log-rank-0.txt";
  const size_t logged_before = testing::ReadFile(log_path).size();
  std::vector<std::string> resume = options;
  resume.push_back("--resume");
  const CommandResult resumed = Mpi("mh_rounds", 3, resume, {round_bytes}, false);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  for (const char* f : kOutputs) {
    if (std::string_view(f) == "pairs.jsonl") continue;
    EXPECT_EQ(testing::ReadFile(single + "/" + f), testing::ReadFile(dir_ + "/mh_rounds/" + f))
        << f;
  }
  const auto report = nlohmann::json::parse(testing::ReadFile(work + "/report.json"));
  const size_t documents = report["documents"];
  size_t rounds = 0, computed = 0;
  for (const auto& s : report["stages"]) {
    if (s["stage"] == "join") {
      rounds = s["band_key_rounds"];
      computed = s["rounds_computed"];
      EXPECT_GT(s["band_key_bytes"].get<size_t>(), 0u);
      EXPECT_GT(s["signature_bytes"].get<size_t>(), 0u);
    }
    if (s["stage"] == "cluster") {
      // Clustered groups only (about a quarter of the documents are copies).
      EXPECT_GT(s["signatures_on_rank_0"].get<size_t>(), 0u);
      EXPECT_LT(s["signatures_on_rank_0"].get<size_t>(), documents / 2);
    }
  }
  // Every band in 3 parts.
  EXPECT_EQ(rounds % 3, 0u);
  EXPECT_GT(rounds, 3u);
  // The rounds every rank had finished before the kill (rank 1 dies after
  // its second: at least the first) were skipped, the others computed.
  const std::set<std::string> lines =
      LinesWith(testing::ReadFile(log_path).substr(logged_before), "join: band-key round");
  size_t skipped = 0;
  for (const std::string& l : lines) skipped += l.ends_with("skipped") ? 1 : 0;
  EXPECT_EQ(lines.size(), rounds);
  EXPECT_EQ(skipped + computed, rounds);
  EXPECT_GE(skipped, 1u);
}

// Stream mode (sequential) and --exact (one index of every fingerprint) are
// not split over the ranks: at P = 1 they give neardup dedup's outputs; at
// P > 1 they are refused in the setup stage (exit 2, naming the option and
// what to use instead), where rank 0 ran them alone before.
TEST_F(MpiDedupTest, StreamModeAndExactJoinRunAtOneRankAndAreRefusedAtMore) {
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"--mode", "stream"}, std::vector<std::string>{"--exact"}}) {
    const std::string tag = options[0] == "--exact" ? "exact" : "stream";
    const std::string single = Single(tag + "_single", options);
    const CommandResult one = Mpi(tag + "_np1", 1, options);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    ExpectSameOutputs(single, tag + "_np1");
    EXPECT_FALSE(testing::ReadFile(single + "/pairs.jsonl").empty());
    const CommandResult three = Mpi(tag + "_np3", 3, options);
    EXPECT_EQ(three.exit_code, 2) << three.err;
    EXPECT_NE(three.err.find("error in stage setup: " + options[0] +
                             (tag == "exact" ? " is not distributed" : " stream is sequential")),
              std::string::npos)
        << three.err;
    EXPECT_NE(three.err.find(tag == "exact" ? "--banded" : "--mode cluster"), std::string::npos)
        << three.err;
    EXPECT_FALSE(fs::exists(dir_ + "/" + tag + "_np3/records.jsonl"));
  }
}

// Boilerplate lines counted over the ranks: each rank owns a key range of
// the line counts, and only the lines in >= --boilerplate-min-docs groups go
// back to every rank (boilerplate_exchange.h). Two more inputs of pages that
// share a header and a footer (and near copies that differ in them): the
// outputs and the --boilerplate-stats-out file are neardup dedup's at every
// P, and no rank received the others' whole counts.
TEST_F(MpiDedupTest, BoilerplateLineCountsReducedByKeyRangeAreByteIdentical) {
  NEARDUP_REQUIRE_SHARED_DATA(news, "zh_thucnews1000.jsonl");
  std::ifstream in(news);
  std::string line;
  for (int i = 0; i < 400 && std::getline(in, line); ++i) {
  }  // past the fixture's articles
  std::mt19937_64 rng(30);
  std::string pages[2];
  for (int i = 0; i < 80 && std::getline(in, line); ++i) {
    const std::string text = nlohmann::json::parse(line)["text"];
    const std::string header = "新闻中心 首页 > 财经 > 正文\n本站记者 报道\n";
    const std::string footer = "\n版权所有 新闻网 保留一切权利\n本文来源：新闻网 责任编辑：王\n";
    const std::string id = "b" + std::to_string(i);
    pages[i % 2] += nlohmann::json({{"id", id}, {"text", header + text + footer}}).dump() + "\n";
    if (i % 5 == 0) {
      // A near copy with another header line: the same page once the
      // boilerplate is left out.
      std::string copy = "财经频道\n" + text + footer;
      pages[(i + 1) % 2] += nlohmann::json({{"id", id + "c"}, {"text", copy}}).dump() + "\n";
    }
  }
  ASSERT_FALSE(pages[1].empty());
  for (int f = 0; f < 2; ++f) {
    const std::string path = dir_ + "/pages" + std::to_string(f) + ".jsonl";
    testing::WriteFile(path, pages[f]);
    inputs_.push_back(path);
  }
  const std::vector<std::string> options = {"--boilerplate-min-docs", "3"};
  const auto with_stats = [&](const std::string& name) {
    std::vector<std::string> o = options;
    o.insert(o.end(), {"--boilerplate-stats-out", dir_ + "/" + name + "/lines.bin"});
    return o;
  };
  const std::string single = Single("lines_single", with_stats("lines_single"));
  const std::string counts = testing::ReadFile(single + "/lines.bin");
  ASSERT_FALSE(counts.empty());
  for (const int ranks : {1, 2, 3, 4}) {
    const std::string name = "lines_np" + std::to_string(ranks);
    const CommandResult r = Mpi(name, ranks, with_stats(name));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExpectSameOutputs(single, name);
    EXPECT_EQ(testing::ReadFile(dir_ + "/" + name + "/lines.bin"), counts) << name;
    const auto report =
        nlohmann::json::parse(testing::ReadFile(dir_ + "/" + name + "/work/report.json"));
    bool found = false;
    for (const auto& s : report["stages"]) {
      if (s["stage"] != "boilerplate") continue;
      found = true;
      const uint64_t distinct = s["distinct_lines"], kept = s["kept_lines"];
      const uint64_t moved = s["bytes_moved"], count_bytes = s["count_bytes"];
      const uint64_t kept_bytes = s["kept_bytes"], range = s["most_lines_in_a_range"];
      // The header's and footer's lines, and not the articles' own.
      EXPECT_GE(kept, 4u) << name;
      EXPECT_LT(kept * 20, distinct) << name;
      // Each rank's counts went once, to the owners of their keys (and once
      // more to rank 0 for --boilerplate-stats-out); the kept lines to every
      // rank. The all-gather sent every rank's counts to P - 1 ranks.
      EXPECT_LE(moved, 2 * count_bytes + static_cast<uint64_t>(ranks) * kept_bytes) << name;
      // No rank held much more than its share of the distinct lines.
      EXPECT_LE(range * static_cast<uint64_t>(ranks), distinct + distinct / 2) << name;
    }
    EXPECT_TRUE(found) << name;
  }
}

TEST_F(MpiDedupTest, SmallExchangeChunksGiveTheSameOutputs) {
  // 256 bytes per rank and round: the documents' gather, the plan's
  // broadcast, the pairs' all-to-all and the ids' exchange need many rounds.
  const std::string single = Single("chunk_single", {"--banded"});
  const CommandResult r = Mpi("chunk", 3, {"--banded"}, {"NEARDUP_MPI_CHUNK_BYTES=256"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectSameOutputs(single, "chunk");
  const auto report = nlohmann::json::parse(testing::ReadFile(dir_ + "/chunk/work/report.json"));
  std::map<std::string, int> rounds;
  for (const auto& s : report["stages"]) {
    if (s.contains("rounds")) rounds[s["stage"]] = s["rounds"].get<int>();
  }
  EXPECT_GT(rounds["plan"], 10);
  EXPECT_GT(rounds["cluster"], 10);
  EXPECT_GT(rounds["assign"], 10);
}

// Identical documents are grouped over the ranks (each rank sends its own
// distinct fingerprints to the rank of their key range): a group with a
// member in every input (so on every rank), one in two inputs, an exact
// copy of a document that also has near copies (a group of several members
// in a pair), empty documents; and a rank with no document at all (one
// directory is one unit: one of two ranks reads nothing).
TEST_F(MpiDedupTest, IdenticalDocumentsOnEveryRankAreGroupedAsByOneProcess) {
  // The first line of each input; `near`: a planted near copy (its
  // original is in its cluster).
  std::vector<std::string> lines;
  std::string near;
  for (const std::string& in : inputs_) {
    std::istringstream text(testing::ReadFile(in));
    std::string l;
    std::getline(text, l);
    lines.push_back(l);
    for (; near.empty() && std::getline(text, l);) {
      if (l.find("c\",\"text\":") != std::string::npos) near = l;
    }
  }
  ASSERT_EQ(lines.size(), inputs_.size());
  ASSERT_FALSE(near.empty());
  const auto copy = [](const std::string& line, const std::string& id) {
    auto j = nlohmann::json::parse(line);
    j["id"] = id;
    return j.dump() + "\n";
  };
  const std::string corpus = dir_ + "/corpus";
  fs::create_directories(corpus);
  for (size_t f = 0; f < inputs_.size(); ++f) {
    std::string contents = testing::ReadFile(inputs_[f]);
    contents += copy(near, "everywhere" + std::to_string(f));
    if (f == 1 || f == 4) contents += copy(lines[3], "twice" + std::to_string(f));
    contents += nlohmann::json({{"id", "empty" + std::to_string(f)}, {"text", ""}}).dump() + "\n";
    testing::WriteFile(inputs_[f], contents);
    testing::WriteFile(corpus + "/" + fs::path(inputs_[f]).filename().string(), contents);
  }
  struct Case {
    std::string tag;
    std::vector<std::string> options;
    int ranks;
  };
  for (const auto& [tag, options, ranks] :
       std::vector<Case>{{"same_banded", {"--banded", "--keep", "longest"}, 4},
                         {"same_minhash", {"--method", "minhash"}, 3}}) {
    const std::string single = Single(tag + "_single", options);
    // One group of 7 members (the near copy and its 6 copies): one kept at most.
    EXPECT_GE(CountLines(testing::ReadFile(single + "/duplicates.jsonl"), "\"everywhere"),
              inputs_.size() - 1);
    const std::string name = tag + "_mpi";
    const CommandResult r = Mpi(name, ranks, options);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExpectSameOutputs(single, name);
    // Every rank read an input, so every rank held a member of the group.
    for (int rank = 0; rank < ranks; ++rank) {
      const std::string log =
          testing::ReadFile(dir_ + "/" + name + "/work/log-rank-" + std::to_string(rank) + ".txt");
      EXPECT_GE(CountLines(log, "fingerprint: input"), 1u) << log;
    }
  }
  inputs_ = {corpus};
  const std::string single = Single("dir_single", {"--banded"});
  const CommandResult r = Mpi("dir", 2, {"--banded"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectSameOutputs(single, "dir");
  size_t units = 0;
  for (const char* rank : {"0", "1"}) {
    units += CountLines(testing::ReadFile(dir_ + "/dir/work/log-rank-" + rank + ".txt"),
                        "fingerprint: input");
  }
  EXPECT_EQ(units, 1u);
}

// Each rank writes its own documents' lines: rank 0 holds the ids of the
// kept documents of clusters (and its own), not every id; the band join's
// pairs reach it as a spanning forest (components: the centre rule, the
// default, needs every pair).
TEST_F(MpiDedupTest, RankZeroHoldsNeitherEveryIdNorEveryPair) {
  const std::vector<std::string> outputs = {"records.jsonl", "unique.jsonl", "duplicates.jsonl"};
  const auto flags = [&](const std::string& out) {
    return std::vector<std::string>{
        "-o", out + "/records.jsonl", "--unique-out", out + "/unique.jsonl", "--duplicates-out",
        out + "/duplicates.jsonl", "--banded", "--cluster", "components",
        // Verified pairs need every pair (a
        // forest's edge may fail the check).
        "--verify-jaccard", "0"};
  };
  const std::string single = dir_ + "/lean_single", mpi = dir_ + "/lean";
  fs::create_directories(single);
  fs::create_directories(mpi);
  std::vector<std::string> argv = {NEARDUP_CLI_PATH, "dedup"};
  argv.insert(argv.end(), inputs_.begin(), inputs_.end());
  for (const std::string& f : flags(single)) argv.push_back(f);
  ASSERT_EQ(Spawn(argv, {}, single).exit_code, 0);
  argv = {NEARDUP_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", "4", NEARDUP_MPI_PATH,
          "dedup"};
  argv.insert(argv.end(), inputs_.begin(), inputs_.end());
  for (const std::string& f : flags(mpi)) argv.push_back(f);
  argv.insert(argv.end(), {"--work-dir", mpi + "/work", "--threads", "1"});
  const CommandResult r = Spawn(argv, {}, mpi);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& f : outputs) {
    EXPECT_EQ(testing::ReadFile(single + "/" + f), testing::ReadFile(mpi + "/" + f)) << f;
  }
  const auto report = nlohmann::json::parse(testing::ReadFile(mpi + "/work/report.json"));
  const size_t documents = report["documents"];
  const size_t duplicates =
      CountLines(testing::ReadFile(single + "/records.jsonl"), "\"duplicate\":true");
  ASSERT_GE(duplicates, 40u);
  for (const auto& s : report["stages"]) {
    if (s["stage"] == "assign") {
      // Its own quarter of the ids and at most one kept document per duplicate.
      EXPECT_LE(s["ids_on_rank_0"].get<size_t>(), documents / 4 + 2 + duplicates);
      EXPECT_LT(s["ids_on_rank_0"].get<size_t>(), documents * 2 / 3);
    }
    if (s["stage"] == "join") {
      // A forest: fewer edges than clustered groups.
      EXPECT_LE(s["pairs_on_rank_0"].get<size_t>(), duplicates);
      EXPECT_GE(s["pairs"].get<size_t>(), s["pairs_on_rank_0"].get<size_t>());
    }
  }
}

// No record copies in the shards: --unique-out and --duplicates-out read
// the records back from the inputs in the write stage (the shards copied
// every record before: as many bytes of shards as of input). And every rank
// writes its part of each output at its offset into the final file's
// temporary name (MPI-IO): rank 0 copies no rank's part (it copied them all
// before). The outputs are neardup dedup's, byte for byte.
TEST_F(MpiDedupTest, ShardsHoldNoRecordsAndEveryRankWritesItsPartOfTheOutputs) {
  const std::vector<std::string> options = {"--banded"};
  const std::string single = Single("no_records_single", options);
  const CommandResult r = Mpi("no_records", 3, options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectSameOutputs(single, "no_records");
  uint64_t input_bytes = 0, shard_bytes = 0;
  for (const std::string& in : inputs_) input_bytes += fs::file_size(in);
  const std::string work = dir_ + "/no_records/work";
  for (const auto& e : fs::directory_iterator(work + "/shards")) {
    shard_bytes += fs::file_size(e.path());
    // Every record has a "text" field; no shard holds one.
    EXPECT_EQ(testing::ReadFile(e.path().string()).find("\"text\""), std::string::npos) << e.path();
  }
  EXPECT_GT(shard_bytes, 0u);
  EXPECT_LT(shard_bytes * 10, input_bytes) << shard_bytes << " bytes of shards";
  const auto report = nlohmann::json::parse(testing::ReadFile(work + "/report.json"));
  bool found = false;
  for (const auto& s : report["stages"]) {
    if (s["stage"] != "output") continue;
    found = true;
    EXPECT_EQ(s["part_bytes_copied_by_rank_0"].get<uint64_t>(), 0u) << s.dump();
  }
  EXPECT_TRUE(found) << report.dump();
  EXPECT_TRUE(fs::is_empty(work + "/parts"));
  // No temporary file is left beside the outputs.
  for (const auto& e : fs::directory_iterator(dir_ + "/no_records")) {
    EXPECT_FALSE(e.path().filename().string().ends_with(".tmp")) << e.path();
  }
  // Standard output (no offsets there): rank 0 copies the parts, the same
  // lines.
  const std::string out = dir_ + "/to_stdout";
  fs::create_directories(out);
  std::vector<std::string> argv = MpiDedup(2);
  argv.insert(argv.end(), {"--banded", "--unique-out", out + "/unique.jsonl", "--work-dir",
                           out + "/work", "--threads", "1", "--quiet"});
  const CommandResult piped = Spawn(argv, {"NEARDUP_MPI_NODE_MEMORY=1"}, out);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.out, testing::ReadFile(single + "/records.jsonl"));
  EXPECT_EQ(testing::ReadFile(out + "/unique.jsonl"), testing::ReadFile(single + "/unique.jsonl"));
}

// An output on rank 0's own disk (a relative -o under two --wdir's: rank 1
// does not see rank 0's temporary file): rank 0 writes it alone, as before
// outputs were written by every rank, with neardup dedup's bytes.
TEST_F(MpiDedupTest, OutputNotSeenByEveryRankIsWrittenByRankZero) {
  const std::string single = Single("local_out_single", {"--banded"});
  const std::string a = dir_ + "/local_a", b = dir_ + "/local_b";
  for (const std::string& d : {a, b}) fs::create_directories(d);
  std::vector<std::string> argv = {"/usr/bin/timeout", "120", NEARDUP_MPIEXEC,
                                   "--allow-run-as-root", "--oversubscribe"};
  std::vector<std::string> dedup = {NEARDUP_MPI_PATH, "dedup"};
  dedup.insert(dedup.end(), inputs_.begin(), inputs_.end());
  dedup.insert(dedup.end(), {"--banded", "--work-dir", dir_ + "/local_work", "--threads", "1", "-o",
                             "records.jsonl", "--unique-out", "unique.jsonl"});
  for (const std::string& wdir : {a, b}) {
    if (argv.size() > 5) argv.push_back(":");
    argv.insert(argv.end(), {"-np", "1", "--wdir", wdir});
    argv.insert(argv.end(), dedup.begin(), dedup.end());
  }
  const CommandResult r = Spawn(argv, {"NEARDUP_MPI_NODE_MEMORY=1"}, a);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("output: records.jsonl is not seen by rank 1 (host "), std::string::npos)
      << r.err;
  for (const char* f : {"records.jsonl", "unique.jsonl"}) {
    EXPECT_EQ(testing::ReadFile(a + "/" + f), testing::ReadFile(single + "/" + f)) << f;
    EXPECT_FALSE(fs::exists(b + "/" + f)) << f;
  }
  for (const std::string& d : {a, b}) {
    for (const auto& e : fs::directory_iterator(d)) {
      EXPECT_FALSE(e.path().filename().string().ends_with(".tmp")) << e.path();
    }
  }
}

TEST_F(MpiDedupTest, RankKilledWhileWritingIsResumed) {
  const std::vector<std::string> options = {"--banded", "--keep", "longest"};
  const std::string single = Single("write_fault_single", options);
  const CommandResult failed = Mpi("write_fault", 4, options, {"NEARDUP_MPI_FAIL_AT=write:2"});
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_NE(failed.err.find("rank 2"), std::string::npos) << failed.err;
  const std::string work = dir_ + "/write_fault/work";
  EXPECT_TRUE(fs::exists(work + "/join.done"));
  EXPECT_FALSE(fs::exists(work + "/write.done"));
  std::vector<std::string> resume = options;
  resume.push_back("--resume");
  const CommandResult resumed = Mpi("write_fault", 4, resume);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  ExpectSameOutputs(single, "write_fault");
  EXPECT_TRUE(fs::exists(work + "/write.done"));
  EXPECT_EQ(CountLines(resumed.err, "join: band-key round"),
            CountLines(resumed.err, "skipped") - inputs_.size() -
                CountLines(resumed.err, "write: parts done in an earlier run, skipped"))
      << resumed.err;
  // Rank 2 had written its parts (and their checksums) before it died: the
  // rerun keeps them.
  EXPECT_NE(resumed.err.find("rank 2: write: parts done in an earlier run, skipped"),
            std::string::npos)
      << resumed.err;
  // The parts and their markers are gone once the outputs are written.
  EXPECT_TRUE(fs::is_empty(work + "/parts"));
}

// The run's identity holds its inputs (size, files, modification time and
// the XXH3-64 of every byte of each unit): --resume after one document of
// one input changed (same size) is refused naming the input; it reused the
// stale shards and exited 0 with other outputs before. The same bytes
// written again (a new modification time only) are resumed.
TEST_F(MpiDedupTest, ResumeAfterAnInputChangedIsRefusedNamingIt) {
  const std::vector<std::string> options = {"--banded"};
  const std::string single = Single("stale_single", options);
  const CommandResult failed = Mpi("stale", 3, options, {"NEARDUP_MPI_FAIL_AT=write:1"});
  ASSERT_NE(failed.exit_code, 0) << failed.err;
  const std::string work = dir_ + "/stale/work";
  ASSERT_TRUE(fs::exists(work + "/join.done"));
  const std::string original = testing::ReadFile(inputs_[3]);
  std::string changed = original;
  const size_t at = changed.find("\"id\":\"n");
  ASSERT_NE(at, std::string::npos);
  changed[at + 6] = 'm';  // one document's id: the same size
  testing::WriteFile(inputs_[3], changed);
  std::vector<std::string> resume = options;
  resume.push_back("--resume");
  const CommandResult refused = Mpi("stale", 3, resume);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("error in stage setup: --resume: the input changed"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find(inputs_[3] + " (same size, other bytes"), std::string::npos)
      << refused.err;
  EXPECT_EQ(CountLines(refused.err, "same size, other bytes"), 1u) << refused.err;
  // Back to the same bytes (a later modification time): resumed, the
  // shards reused, neardup dedup's outputs.
  testing::WriteFile(inputs_[3], original);
  const CommandResult resumed = Mpi("stale", 3, resume);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  ExpectSameOutputs(single, "stale");
  const std::set<std::string> shards = LinesWith(resumed.err, "fingerprint: input");
  EXPECT_EQ(shards.size(), inputs_.size()) << resumed.err;
  for (const std::string& l : shards) EXPECT_TRUE(l.ends_with("skipped")) << l;
  EXPECT_NE(resumed.err.find("the same size and bytes: its work is reused"), std::string::npos)
      << resumed.err;
}

// Outputs are written under temporary names and renamed into place when the
// job succeeds: rank 0 killed (SIGKILL) halfway through copying the parts
// into --output leaves the earlier file of that name untouched (a truncated
// records.jsonl was left under its final name before), and --resume
// completes the outputs.
TEST_F(MpiDedupTest, KillWhileWritingOutputsLeavesNoTruncatedFile) {
  const std::vector<std::string> options = {"--banded"};
  const std::string single = Single("out_kill_single", options);
  const std::string out = dir_ + "/out_kill";
  fs::create_directories(out);
  testing::WriteFile(out + "/records.jsonl", "an earlier run's records\n");
  const CommandResult failed = Mpi("out_kill", 2, options, {"NEARDUP_MPI_FAIL_AT=output:0"});
  EXPECT_NE(failed.exit_code, 0) << failed.err;
  EXPECT_NE(failed.err.find("rank 0"), std::string::npos) << failed.err;
  EXPECT_EQ(testing::ReadFile(out + "/records.jsonl"), "an earlier run's records\n");
  for (const char* f : {"unique.jsonl", "duplicates.jsonl", "pairs.jsonl", "clusters.jsonl"}) {
    EXPECT_FALSE(fs::exists(out + "/" + f)) << f;
  }
  std::vector<std::string> resume = options;
  resume.push_back("--resume");
  const CommandResult resumed = Mpi("out_kill", 2, resume);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  ExpectSameOutputs(single, "out_kill");
}

// SIGTERM while rank 0 writes the outputs (mpirun forwards it): the rank
// removes its temporary outputs and exits 143, the job ends non-zero with
// no output file; a failed allocation (std::bad_alloc) on one rank while the
// others wait in the join's exchange says "rank R: out of memory in stage
// S" and ends the job with exit status 1 (it aborted with signal 6 and no
// stage named before).
TEST_F(MpiDedupTest, TerminationAndOutOfMemoryEndTheJobWithNoOutput) {
  const auto no_outputs = [](const std::string& dir) {
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (name.ends_with(".jsonl") || name.ends_with(".tmp")) left.push_back(name);
    }
    return left;
  };
  const CommandResult term = Mpi("term", 2, {"--banded"}, {"NEARDUP_MPI_FAIL_AT=term:0"});
  EXPECT_NE(term.exit_code, 0) << term.err;
  EXPECT_NE(term.err.find("terminated (SIGTERM); no output was put in place"), std::string::npos)
      << term.err;
  EXPECT_EQ(no_outputs(dir_ + "/term"), std::vector<std::string>{});
  const CommandResult oom = Mpi("oom", 3, {"--banded"}, {"NEARDUP_MPI_FAIL_AT=alloc:1"});
  EXPECT_EQ(oom.exit_code, 1) << oom.err;
  EXPECT_NE(oom.err.find("neardup-mpi: rank 1: out of memory in stage join"), std::string::npos)
      << oom.err;
  EXPECT_EQ(no_outputs(dir_ + "/oom"), std::vector<std::string>{});
  // The same thrown on a worker thread of the library's pool: the pool hands
  // it to the rank's thread, whose stage reports it.
  const CommandResult worker =
      Mpi("oom_worker", 3, {"--banded"}, {"NEARDUP_MPI_FAIL_AT=alloc-worker:2"});
  EXPECT_EQ(worker.exit_code, 1) << worker.err;
  EXPECT_NE(worker.err.find("neardup-mpi: rank 2: out of memory in stage join"), std::string::npos)
      << worker.err;
  EXPECT_EQ(no_outputs(dir_ + "/oom_worker"), std::vector<std::string>{});
}

// A stopped rank (SIGSTOP at the start of its join) left the others waiting
// in an exchange forever: its heartbeat stops, the rank watching it (its
// predecessor) names it and ends the job within --stall-timeout (3 s here)
// plus a heartbeat or two. --resume (another --stall-timeout: not part of
// the run's identity) completes the outputs.
TEST_F(MpiDedupTest, StoppedRankEndsTheJobWithinTheStallTimeout) {
  const std::string single = Single("stall_single", {"--banded"});
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r =
      Mpi("stall", 3, {"--banded", "--stall-timeout", "3"}, {"NEARDUP_MPI_FAIL_AT=stop:1"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(r.exit_code, 0) << r.err;
  EXPECT_NE(r.exit_code, 124) << "the job hung\n" << r.err;
  EXPECT_NE(r.err.find("neardup-mpi: rank 0 (host "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": rank 1 (host "), std::string::npos) << r.err;
  // Silent for 3 s and a fraction of a heartbeat (printed rounded).
  EXPECT_NE(r.err.find("has not progressed for "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(--stall-timeout 3)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("heartbeat/rank-0001"), std::string::npos) << r.err;
  // A bound on a hang, not a timing: the fingerprint stage and MPI's start
  // take a second or two, the watchdog 3 s and a heartbeat.
  EXPECT_LT(seconds, 60) << r.err;
  const CommandResult resumed = Mpi("stall", 3, {"--banded", "--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  ExpectSameOutputs(single, "stall");
}

// Repeated ids (issue 29): neardup dedup warns of them (the count, the first
// repeat and the document it repeats); neardup-mpi gave no word. Repeats
// read by different ranks (a number id 5 and a string "5", an id of the
// first input repeated in the last) give the same warning, and the same
// outputs.
TEST_F(MpiDedupTest, RepeatedIdsOverTheRanksGiveNeardupDedupsWarning) {
  const auto first_line = [](const std::string& path) {
    const std::string text = testing::ReadFile(path);
    return text.substr(0, text.find('\n'));
  };
  const auto with_id = [](const std::string& line, const nlohmann::json& id) {
    auto j = nlohmann::json::parse(line);
    j["id"] = id;
    j["text"] = j["text"].get<std::string>() + " (another document)";
    return j.dump() + "\n";
  };
  const std::string line0 = first_line(inputs_[0]);
  const std::string id0 = nlohmann::json::parse(line0)["id"];
  testing::WriteFile(inputs_[1], testing::ReadFile(inputs_[1]) + with_id(line0, 5));
  testing::WriteFile(inputs_[4], testing::ReadFile(inputs_[4]) + with_id(line0, "5"));
  testing::WriteFile(inputs_[5], testing::ReadFile(inputs_[5]) + with_id(line0, id0));
  const std::string warning = "repeat an earlier document's id";
  const std::string single = Single("ids_single", {"--banded"});
  const std::set<std::string> expected =
      LinesWith(testing::ReadFile(single + "/stderr.txt"), warning);
  ASSERT_EQ(expected.size(), 1u);
  EXPECT_NE(expected.begin()->find("neardup: warning: 2 document(s)"), std::string::npos)
      << *expected.begin();
  const CommandResult r = Mpi("ids_mpi", 3, {"--banded"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(LinesWith(r.err, warning), expected) << r.err;
  ExpectSameOutputs(single, "ids_mpi");
}

// --resume with another rank count (a job continued on fewer machines; it
// was refused before): the shards (whole inputs) are reused, each rank's
// parts and band-key rounds (per rank) are computed again, and the outputs
// are neardup dedup's. SimHash after a kill in the write stage
// at P = 3, resumed at P = 2; MinHash after a kill between band-key rounds
// at P = 3, resumed at P = 2.
TEST_F(MpiDedupTest, ResumeWithAnotherRankCount) {
  struct Case {
    std::string tag;
    std::vector<std::string> options;
    std::vector<std::string> env;
  };
  for (const Case& c : {Case{"p_simhash", {"--banded"}, {"NEARDUP_MPI_FAIL_AT=write:1"}},
                        Case{"p_minhash",
                             {"--method", "minhash"},
                             {"NEARDUP_MPI_FAIL_AT=band:1", "NEARDUP_MPI_ROUND_BYTES=1000"}}}) {
    const std::string single = Single(c.tag + "_single", c.options);
    const CommandResult failed = Mpi(c.tag, 3, c.options, c.env);
    ASSERT_NE(failed.exit_code, 0) << failed.err;
    std::vector<std::string> resume = c.options;
    resume.push_back("--resume");
    const CommandResult resumed = Mpi(c.tag, 2, resume, {"NEARDUP_MPI_ROUND_BYTES=1000"});
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    ExpectSameOutputs(single, c.tag);
    EXPECT_NE(resumed.err.find("setup: --resume with 2 ranks; the earlier run had 3:"),
              std::string::npos)
        << resumed.err;
    const std::set<std::string> shards = LinesWith(resumed.err, "fingerprint: input");
    EXPECT_EQ(shards.size(), inputs_.size()) << resumed.err;
    for (const std::string& l : shards) EXPECT_TRUE(l.ends_with("skipped")) << l;
    EXPECT_EQ(CountLines(resumed.err, "write: parts done in an earlier run"), 0u) << resumed.err;
    // The rounds of 3 ranks are not those of 2: every round computed.
    const std::set<std::string> rounds = LinesWith(resumed.err, "join: band-key round");
    EXPECT_FALSE(rounds.empty()) << resumed.err;
    for (const std::string& l : rounds) EXPECT_FALSE(l.ends_with("skipped")) << l;
  }
}

// SimHash's join split by band keys (as MinHash's): a rank killed after its
// second band-key round fails the job; --resume skips the rounds every rank
// finished and computes the others (each rank's log says which).
TEST_F(MpiDedupTest, KilledRankFailsTheJobAndResumeCompletesIt) {
  const std::vector<std::string> options = {"--banded"};
  const std::string single = Single("fault_single", options);
  // Rank 1 dies (SIGKILL) after its second band-key round.
  const CommandResult failed = Mpi("fault", 4, options, {"NEARDUP_MPI_FAIL_AT=band:1"});
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_NE(failed.err.find("rank 1"), std::string::npos) << failed.err;
  EXPECT_NE(failed.err.find("signal 9"), std::string::npos) << failed.err;
  const std::string work = dir_ + "/fault/work";
  ASSERT_TRUE(fs::exists(work + "/fingerprint.done"));
  EXPECT_FALSE(fs::exists(work + "/join.done"));
  // round-TTTT-of-NNNN-rank-KKKK.pairs: the rounds every rank finished.
  std::map<std::string, int> ranks_done;
  size_t rounds = 0;
  for (const auto& e : fs::directory_iterator(work + "/join")) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".pairs" || !name.starts_with("round-")) continue;
    ranks_done[name.substr(0, 10)]++;
    rounds = std::stoul(name.substr(14, 4));
  }
  size_t all_done = 0;
  for (const auto& [round, ranks] : ranks_done) all_done += ranks == 4 ? 1 : 0;
  EXPECT_GE(all_done, 1u);
  EXPECT_LT(all_done, rounds);
  std::map<int, std::string> before;
  for (int r = 0; r < 4; ++r) {
    before[r] = testing::ReadFile(work + "/log-rank-" + std::to_string(r) + ".txt");
  }

  std::vector<std::string> resume = options;
  resume.push_back("--resume");
  const CommandResult resumed = Mpi("fault", 4, resume);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  ExpectSameOutputs(single, "fault");
  EXPECT_TRUE(fs::exists(work + "/join.done"));
  // What the rerun did, from the ranks' logs: every shard and every round
  // all ranks finished reused, only the others computed.
  for (int r = 0; r < 4; ++r) {
    size_t skipped_shards = 0, skipped_rounds = 0, computed_rounds = 0;
    const std::string log = testing::ReadFile(work + "/log-rank-" + std::to_string(r) + ".txt")
                                .substr(before[r].size());
    std::istringstream lines(log);
    for (std::string l; std::getline(lines, l);) {
      const bool skipped = l.find("done in an earlier run, skipped") != std::string::npos;
      if (l.starts_with("fingerprint: input") && skipped) ++skipped_shards;
      if (l.starts_with("join: band-key round")) (skipped ? skipped_rounds : computed_rounds)++;
    }
    EXPECT_EQ(skipped_shards, CountLines(log, "fingerprint: input")) << log;
    EXPECT_EQ(skipped_rounds, all_done) << log;
    EXPECT_EQ(computed_rounds, rounds - all_done) << log;
  }
}

TEST_F(MpiDedupTest, HostileLinesAreReportedWithFileAndLineAndCountedOnce) {
  const CommandResult r = Mpi("hostile", 4, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("in2.jsonl:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("malformed JSON"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("in4.jsonl:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("invalid UTF-8"), std::string::npos) << r.err;
  // One summary for the job.
  EXPECT_EQ(CountLines(r.err, "neardup: read "), 1u) << r.err;
  EXPECT_NE(r.err.find("1 malformed line(s); 1 with invalid UTF-8"), std::string::npos) << r.err;
  // --strict: the same exit status as neardup dedup (3).
  const CommandResult strict = Mpi("hostile_strict", 2, {"--strict"});
  EXPECT_EQ(strict.exit_code, 3) << strict.err;
}

TEST_F(MpiDedupTest, OneLargeFileIsSplitAtLineStartsOverTheRanks) {
  // Every input's lines in one file (the malformed and invalid UTF-8 lines
  // fall in later pieces): 4 ranks read a piece each.
  OneInputOfAll("big.jsonl");
  const std::string single = Single("split_single", {"--banded"});
  const CommandResult r = Mpi("split", 4, {"--banded"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectSameOutputs(single, "split");
  // Issues name the file and the same line numbers as neardup dedup's.
  const auto issues = LinesWith(testing::ReadFile(single + "/stderr.txt"), "big.jsonl:");
  EXPECT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues, LinesWith(r.err, "big.jsonl:")) << r.err;
  EXPECT_EQ(CountLines(r.err, "neardup: read "), 1u) << r.err;
  EXPECT_NE(r.err.find("from 1 file"), std::string::npos) << r.err;
  // Each rank read one piece.
  for (int rank = 0; rank < 4; ++rank) {
    const std::string log =
        testing::ReadFile(dir_ + "/split/work/log-rank-" + std::to_string(rank) + ".txt");
    EXPECT_EQ(CountLines(log, "of 4: bytes"), 1u) << log;
  }
}

// --resume with another rank count when a file was split: the earlier run's
// pieces are not this run's, so they are read again to check them (they were
// refused as "same size, other bytes" before). A byte changed in the file
// (same size) is still refused, naming it.
TEST_F(MpiDedupTest, ResumeWithAnotherRankCountChecksASplitFilesEarlierPieces) {
  const std::string all = OneInputOfAll("big_resume.jsonl");
  const std::string big = inputs_[0];
  const std::vector<std::string> options = {"--banded"};
  const std::string single = Single("split_resume_single", options);
  for (const bool change : {false, true}) {
    const std::string tag = change ? "split_resume_changed" : "split_resume";
    const CommandResult failed = Mpi(tag, 3, options, {"NEARDUP_MPI_FAIL_AT=write:1"});
    ASSERT_NE(failed.exit_code, 0) << failed.err;
    if (change) {
      std::string edited = all;
      const size_t at = edited.find("\"id\":\"n") + 7;  // "n12" -> "nz2": same size
      ASSERT_LT(at, edited.size());
      edited[at] = 'z';
      testing::WriteFile(big, edited);
    }
    std::vector<std::string> resume = options;
    resume.push_back("--resume");
    const CommandResult resumed = Mpi(tag, 2, resume);
    EXPECT_NE(resumed.err.find("cut into other pieces by the earlier run"), std::string::npos)
        << resumed.err;
    if (change) {
      EXPECT_NE(resumed.exit_code, 0) << resumed.err;
      EXPECT_NE(resumed.err.find("the input changed since the run"), std::string::npos)
          << resumed.err;
      EXPECT_NE(resumed.err.find("big_resume.jsonl (same size, other bytes"), std::string::npos)
          << resumed.err;
      testing::WriteFile(big, all);
    } else {
      ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
      ExpectSameOutputs(single, tag);
    }
  }
}

// --help, --version and usage errors are answered before MPI starts: they
// work where MPI cannot start (here: a transport that does not exist, which
// makes MPI_Init fail) and without mpirun.
TEST(MpiCommandLineTest, HelpAndVersionDoNotStartMpi) {
  const std::string dir = testing::MakeTempDir("mpi_command_line");
  const std::vector<std::string> broken_mpi = {"OMPI_MCA_pml=no-such-pml"};
  CommandResult r = Spawn({NEARDUP_MPI_PATH, "--version"}, broken_mpi, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "neardup-mpi " NEARDUP_VERSION "\n");
  r = Spawn({NEARDUP_MPI_PATH, "--help"}, broken_mpi, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Usage: neardup-mpi"), std::string::npos) << r.out;
  r = Spawn({NEARDUP_MPI_PATH, "dedup", "--help"}, broken_mpi, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--work-dir"), std::string::npos) << r.out;
  r = Spawn({NEARDUP_MPI_PATH, "dedup", "in.jsonl"}, broken_mpi, dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--work-dir is required"), std::string::npos) << r.err;
}

// A rank that cannot read a piece of a split file (its node lacks the file:
// here its working directory, with the input named relative to it) fails
// the job on every rank with its reason; the ranks spun at 100 % CPU
// forever before. The job is bounded (`timeout`, TERM to mpirun) so that a
// hang fails the test instead of holding the machine.
TEST_F(MpiDedupTest, UnreadableSplitPieceFailsEveryRankWithItsReason) {
  std::string all;
  for (const std::string& in : inputs_) all += testing::ReadFile(in);
  const std::string here = dir_ + "/here", away = dir_ + "/away", out = dir_ + "/unreadable";
  fs::create_directories(here);
  fs::create_directories(away);
  fs::create_directories(out);
  testing::WriteFile(here + "/big.jsonl", all);
  // Rank 0 (which cuts the file) sees it, ranks 1 and 2 do not; rank 1
  // counts the lines of a middle piece.
  std::vector<std::string> argv = {"/usr/bin/timeout", "120", NEARDUP_MPIEXEC,
                                   "--allow-run-as-root", "--oversubscribe"};
  const std::vector<std::string> dedup = {
      NEARDUP_MPI_PATH, "dedup", "big.jsonl", "--work-dir",          out + "/work",
      "--threads",      "1",     "-o",        out + "/records.jsonl"};
  for (const auto& [n, wdir] : {std::pair<const char*, std::string>{"1", here}, {"2", away}}) {
    if (argv.size() > 5) argv.push_back(":");
    argv.insert(argv.end(), {"-np", n, "--wdir", wdir});
    argv.insert(argv.end(), dedup.begin(), dedup.end());
  }
  const CommandResult r = Spawn(argv, {}, out);
  EXPECT_NE(r.exit_code, 124) << "the job hung\n" << r.err;
  EXPECT_NE(r.exit_code, 0) << r.err;
  // Caught when the ranks stat what they will read (CheckInputsSeen), before
  // the line count that hung.
  EXPECT_NE(r.err.find("rank 1: error in stage setup: big.jsonl: not found on rank 1 (host "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("stage setup failed on rank(s) 1, 2"), std::string::npos) << r.err;
}

// Ranks must read the same inputs: a rank whose copy of a file differs from
// rank 0's (same size, other bytes) or whose input directory is empty fails
// the job naming the input (it exited 0 with other output before: 6,500
// documents instead of 7,000, or none).
TEST_F(MpiDedupTest, RanksThatSeeOtherInputsFailTheJob) {
  std::string all;
  for (const std::string& in : inputs_) all += testing::ReadFile(in);
  const std::string a = dir_ + "/copy_a", b = dir_ + "/copy_b";
  fs::create_directories(a + "/docs");
  fs::create_directories(b + "/docs");
  testing::WriteFile(a + "/big.jsonl", all);
  std::string other = all;
  other[other.size() / 2] = other[other.size() / 2] == 'x' ? 'y' : 'x';  // same size
  ASSERT_EQ(other.size(), all.size());
  testing::WriteFile(b + "/big.jsonl", other);
  testing::WriteFile(a + "/docs/one.jsonl", all.substr(0, all.find('\n') + 1));
  for (const char* input : {"big.jsonl", "docs"}) {
    const std::string out = dir_ + "/other_" + input;
    fs::create_directories(out);
    std::vector<std::string> argv = {"/usr/bin/timeout", "120", NEARDUP_MPIEXEC,
                                     "--allow-run-as-root", "--oversubscribe"};
    const std::vector<std::string> dedup = {NEARDUP_MPI_PATH,      "dedup",     input, "--work-dir",
                                            out + "/work",         "--threads", "1",   "-o",
                                            out + "/records.jsonl"};
    for (const std::string& wdir : {a, b}) {
      if (argv.size() > 5) argv.push_back(":");
      argv.insert(argv.end(), {"-np", "1", "--wdir", wdir});
      argv.insert(argv.end(), dedup.begin(), dedup.end());
    }
    const CommandResult r = Spawn(argv, {}, out);
    EXPECT_EQ(r.exit_code, 1) << input << "\n" << r.err;
    EXPECT_NE(r.err.find(std::string("error in stage setup: ") + input), std::string::npos)
        << r.err;
    // The same size, other bytes: the digests differ; an empty directory:
    // the stat of every rank's inputs.
    EXPECT_NE(r.err.find(std::string_view(input) == "docs" ? "docs: rank 1 (host "
                                                           : "read other bytes than rank"),
              std::string::npos)
        << r.err;
  }
  // An empty input directory on every rank (an unmounted file system) is
  // not an empty corpus: it exited 0 with empty outputs.
  const std::string empty = dir_ + "/empty_input";
  fs::create_directories(empty + "/docs");
  const CommandResult r = Spawn(
      {NEARDUP_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", "2", NEARDUP_MPI_PATH,
       "dedup", empty + "/docs", "--work-dir", empty + "/work", "-o", empty + "/records.jsonl"},
      {}, empty);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("docs: a directory with no files"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(empty + "/records.jsonl"));
}

// A work directory that is not shared (here: each rank's own, a relative
// --work-dir in two working directories, as two nodes' local disks) fails in
// the setup stage, naming the ranks, their hosts and the token's path, before
// any input is read; it failed only at the output stage before, after all
// the compute.
TEST_F(MpiDedupTest, WorkDirectoryNotSharedFailsInTheSetupStage) {
  const std::string a = dir_ + "/node_a", b = dir_ + "/node_b", out = dir_ + "/not_shared";
  for (const std::string& d : {a, b, out}) fs::create_directories(d);
  std::vector<std::string> argv = {"/usr/bin/timeout", "120", NEARDUP_MPIEXEC,
                                   "--allow-run-as-root", "--oversubscribe"};
  std::vector<std::string> dedup = {NEARDUP_MPI_PATH, "dedup"};
  dedup.insert(dedup.end(), inputs_.begin(), inputs_.end());
  dedup.insert(dedup.end(), {"--work-dir", "work", "--threads", "1", "-o", out + "/records.jsonl"});
  for (const auto& [n, wdir] : {std::pair<const char*, std::string>{"2", a}, {"1", b}}) {
    if (argv.size() > 5) argv.push_back(":");
    argv.insert(argv.end(), {"-np", n, "--wdir", wdir});
    argv.insert(argv.end(), dedup.begin(), dedup.end());
  }
  const CommandResult r = Spawn(argv, {}, out);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // Rank 2 (node b) sees neither rank 0's token nor rank 1's successor's;
  // rank 1 does not see rank 2's.
  EXPECT_NE(r.err.find("rank 2: error in stage setup: --work-dir is not shared: rank 2 (host "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("cannot read the token that rank 0 (host "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("probe/rank-0000.token"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the work directory is " + b + "/work on rank 2"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("stage setup failed on rank(s) 1, 2"), std::string::npos) << r.err;
  // Nothing was computed: no shard on either "node", no output.
  for (const std::string& d : {a, b}) {
    EXPECT_TRUE(fs::is_empty(d + "/work/shards")) << d;
  }
  EXPECT_FALSE(fs::exists(out + "/records.jsonl"));
}

TEST_F(MpiDedupTest, UsageErrors) {
  // Standard input cannot be split among ranks.
  const std::string out = dir_ + "/usage";
  fs::create_directories(out);
  CommandResult r = Spawn({NEARDUP_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", "2",
                           NEARDUP_MPI_PATH, "dedup", "-", "--work-dir", out + "/work"},
                          {}, out);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("standard input"), std::string::npos) << r.err;
  // --resume of a work directory made by another command line.
  ASSERT_EQ(Mpi("other", 2, {"--banded"}).exit_code, 0);
  r = Mpi("other", 2, {"--banded", "--keep", "longest", "--resume"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("another command line"), std::string::npos) << r.err;
}

// The short-document rule (--short-features) over the ranks: the documents
// with few features go to rank 0 with their groups and fingerprints, where
// the exact Jaccard join adds its pairs to the join's (the library's
// AddShortRulePairs). Short texts (20 to 200 characters of the news) with
// edited copies, many beyond k: neardup dedup's outputs at P = 1, 2 and 3,
// with the join the plan chooses, the band join split by band keys and the
// components rule's spanning forest; and after a rank was killed, resumed
// at another rank count from the shards (which keep the short sets).
TEST_F(MpiDedupTest, ShortDocumentRuleIsByteIdenticalForOneToThreeRanks) {
  NEARDUP_REQUIRE_SHARED_DATA(news, "zh_thucnews1000.jsonl");
  WriteShortTexts(news);
  const std::vector<std::string> rule = {"--short-features", "300"};
  // The rule matters here: pairs beyond k = 28, and more duplicates than
  // without it.
  const std::string single = Single("short_single", rule);
  const size_t beyond_k = PairsBeyondK(single);
  EXPECT_GE(beyond_k, 10u);
  const std::string off = Single("short_off", {"--short-features", "0"});
  EXPECT_GT(CountLines(testing::ReadFile(single + "/duplicates.jsonl"), "\n"),
            CountLines(testing::ReadFile(off + "/duplicates.jsonl"), "\n"));
  for (const int ranks : {1, 2, 3}) {
    const std::string name = "short_np" + std::to_string(ranks);
    const CommandResult r = Mpi(name, ranks, rule);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExpectSameOutputs(single, name);
    const nlohmann::json stage = ShortRuleStage(name);
    const size_t added = stage.is_null() ? 0 : stage["pairs_added"].get<size_t>();
    EXPECT_GE(added, beyond_k / 2) << stage.dump();
  }
  std::vector<std::string> banded = rule;
  banded.push_back("--banded");
  const std::string banded_single = Single("short_banded_single", banded);
  ASSERT_EQ(Mpi("short_banded_np2", 2, banded).exit_code, 0);
  ExpectSameOutputs(banded_single, "short_banded_np2");
  std::vector<std::string> components = rule;
  components.insert(components.end(), {"--cluster", "components", "--verify-jaccard", "0"});
  const std::string forest_single = Single("short_forest_single", components, false);
  ASSERT_EQ(Mpi("short_forest_np3", 3, components, {}, false).exit_code, 0);
  ExpectSameOutputs(forest_single, "short_forest_np3");
  // Resumed at another rank count: the shards keep the short sets.
  ExpectResumedAtTwoRanks("short_resume", rule, single);
}

// The sketch short rule (--short-rule sketch) over the ranks: each group's
// first member's sketch (when the document may take part) goes to rank 0
// with its group and fingerprint, where the library's LSH join over the
// sketches (AddShortSketchRulePairs: ShortSketchPairs, as neardup dedup
// runs it) adds its pairs beyond k. neardup dedup's outputs at P = 1, 2 and
// 3 on the short texts, with the band join split by band keys, the
// components rule's spanning forest, and resumed at another rank count from
// the shards (which keep the sketches).
TEST_F(MpiDedupTest, SketchShortRuleIsByteIdenticalForOneToThreeRanks) {
  NEARDUP_REQUIRE_SHARED_DATA(news, "zh_thucnews1000.jsonl");
  WriteShortTexts(news);
  const std::vector<std::string> rule = {"--short-features", "300", "--short-rule", "sketch"};
  const std::string single = Single("sketch_single", rule);
  const size_t beyond_k = PairsBeyondK(single);
  EXPECT_GE(beyond_k, 10u) << "the rule adds pairs beyond k = 28";
  for (const int ranks : {1, 2, 3}) {
    const std::string name = "sketch_np" + std::to_string(ranks);
    const CommandResult r = Mpi(name, ranks, rule);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExpectSameOutputs(single, name);
    const nlohmann::json stage = ShortRuleStage(name);
    if (!stage.is_null()) {
      EXPECT_EQ(stage["rule"], "sketch") << stage.dump();
    }
    const size_t added = stage.is_null() ? 0 : stage["pairs_added"].get<size_t>();
    EXPECT_EQ(added, beyond_k) << stage.dump();
  }
  std::vector<std::string> components = rule;
  components.insert(components.end(), {"--cluster", "components", "--verify-jaccard", "0"});
  const std::string forest_single = Single("sketch_forest_single", components, false);
  ASSERT_EQ(Mpi("sketch_forest_np3", 3, components, {}, false).exit_code, 0);
  ExpectSameOutputs(forest_single, "sketch_forest_np3");
  // The band join split by band keys, where one process's join is the
  // routed one (its candidates give rule pairs as well, which the rule's
  // bands find too, but with low probability: doc/distributed.md).
  std::vector<std::string> banded = rule;
  banded.push_back("--banded");
  std::vector<std::string> with_summary = banded;
  with_summary.insert(with_summary.end(), {"--summary-json", dir_ + "/sketch_banded.json"});
  const std::string banded_single = Single("sketch_banded_single", with_summary);
  const auto summary = nlohmann::json::parse(testing::ReadFile(dir_ + "/sketch_banded.json"));
  EXPECT_TRUE(summary["join"].contains("short_join")) << summary.dump();
  ASSERT_EQ(Mpi("sketch_banded_np2", 2, banded).exit_code, 0);
  ExpectSameOutputs(banded_single, "sketch_banded_np2");
  // Resumed at another rank count: the shards keep the sketches.
  ExpectResumedAtTwoRanks("sketch_resume", rule, single);
}

// One job, one answer at the default: with no rule option the job resolves
// the rule (chars5u, cluster mode, the method's k: sketch, every document,
// 0.52), and
// neardup dedup and neardup-mpi at P = 1 and 2 give the explicit rule's
// outputs, which differ from the rule off; both summaries name the rule.
TEST_F(MpiDedupTest, DefaultIsTheSketchShortRuleAtEveryRankCount) {
  NEARDUP_REQUIRE_SHARED_DATA(news, "zh_thucnews1000.jsonl");
  WriteShortTexts(news);
  const std::string single =
      Single("default_single", {"--summary-json", dir_ + "/default_single.json"});
  const std::string expl =
      Single("default_explicit",
             {"--short-features", "1000000", "--short-rule", "sketch", "--short-jaccard", "0.52"});
  ExpectSameOutputs(expl, "default_single");
  EXPECT_GE(PairsBeyondK(single), 10u) << "the default rule adds pairs beyond k = 28";
  const std::string off = Single("default_off", {"--short-features", "0"});
  EXPECT_NE(testing::ReadFile(off + "/pairs.jsonl"), testing::ReadFile(single + "/pairs.jsonl"));
  const auto summary = nlohmann::json::parse(testing::ReadFile(dir_ + "/default_single.json"));
  EXPECT_EQ(summary["short_rule"],
            nlohmann::json(
                {{"rule", "sketch"}, {"features", 1000000}, {"jaccard", 0.52}, {"default", true}}))
      << summary.dump();
  for (const int ranks : {1, 2}) {
    const std::string name = "default_np" + std::to_string(ranks);
    const CommandResult r = Mpi(name, ranks, {"--summary-json", dir_ + "/" + name + ".json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExpectSameOutputs(single, name);
    const auto mpi_summary = nlohmann::json::parse(testing::ReadFile(dir_ + "/" + name + ".json"));
    EXPECT_EQ(mpi_summary["short_rule"], summary["short_rule"]) << mpi_summary.dump();
    const nlohmann::json stage = ShortRuleStage(name);
    ASSERT_FALSE(stage.is_null());
    EXPECT_EQ(stage["rule"], "sketch") << stage.dump();
  }
}

}  // namespace
}  // namespace neardup
