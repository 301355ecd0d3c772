// Copyright 2026 The neardup Authors.
//
// neardup serve end to end, over loopback with cpp-httplib's client: the
// endpoints against the library's answers, hostile requests (each a JSON
// error, the server still serving after it), 8 client threads checking
// overlapping near-duplicate groups (each group added exactly once), and
// SIGKILL of the server at random moments (every acknowledged document is
// found after a restart).

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "neardup/document_index.h"
#include "tests/testing/test_util.h"

extern char** environ;

namespace neardup {
namespace {

using Json = nlohmann::json;
using testing::ReadFile;
using testing::RunCli;
using testing::WriteFile;

// Waits until `items` (guarded by `mu`, filled by another thread) holds at
// least `n` entries; false after 60 s. Tests wait for events, not for fixed
// times, so a loaded machine slows them without failing them.
template <typename Items>
bool WaitForCount(std::mutex& mu, const Items& items, size_t n) {
  for (int i = 0; i < 6000; ++i) {
    {
      std::lock_guard lock(mu);
      if (items.size() >= n) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A running `neardup serve`; killed (SIGKILL) by the destructor if still up.
class ServerProcess {
 public:
  // Starts the server on a free port and waits until it prints its address.
  // `shell`, when set, runs first in /bin/sh (a ulimit), which then execs
  // the server.
  ServerProcess(const std::string& idx, const std::string& dir, std::vector<std::string> extra,
                const std::string& shell = "") {
    std::vector<std::string> args = {NEARDUP_CLI_PATH, "serve", "--index", idx, "--port", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    if (!shell.empty())
      args.insert(args.begin(), {"/bin/sh", "-c", shell + "; exec \"$0\" \"$@\""});
    out_ = dir + "/serve.out";
    err_ = dir + "/serve.err";
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    for (int i = 0; i < 600 && pid_ > 0 && port_ == 0; ++i) {
      const std::string text = ReadFile(out_);
      const size_t colon = text.rfind(':');
      if (text.find('\n') != std::string::npos && colon != std::string::npos) {
        port_ = std::stoi(text.substr(colon + 1));
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      Wait();
    }
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string stderr_text() const { return ReadFile(err_); }
  // Sends `sig` and returns the exit status (128 + signal when killed).
  // A server that has not exited 30 s after `sig` is killed: -1.
  int Signal(int sig) {
    kill(pid_, sig);
    for (int i = 0; i < 3000; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid_, SIGKILL);
    Wait();
    return -1;
  }

 private:
  int Wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  pid_t pid_ = -1;
  int port_ = 0;
  std::string out_, err_;
};

// The default method's fingerprints are 128 bits: a fixed function of `v` in
// the high half (unrelated values are ~64 bits apart), `v ^ flip` in the low
// half (`flip` moves the fingerprint by its popcount).
std::string Hex(uint64_t v, uint64_t flip = 0) {
  return Fingerprint::From128(v * 0x9e3779b97f4a7c15ULL, v ^ flip).ToHex();
}

class ServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("serve");
    idx_ = dir_ + "/i.idx";
    // The default method; 100 base fingerprints.
    std::string fps;
    std::mt19937_64 rng(1);
    for (int i = 0; i < 100; ++i) {
      base_.push_back(rng());
      fps += "{\"id\":\"base" + std::to_string(i) + "\",\"fingerprint\":\"" + Hex(base_.back()) +
             "\"}\n";
    }
    WriteFile(dir_ + "/fp.jsonl", fps);
    const auto r =
        RunCli({"index", "build", "--fingerprints", dir_ + "/fp.jsonl", "-o", idx_, "-q"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  void TearDown() override {
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  static Json Post(httplib::Client& c, const std::string& path, const std::string& body,
                   int* status) {
    auto res = c.Post(path.c_str(), body, "application/json");
    if (!res) {
      *status = -1;
      return Json();
    }
    *status = res->status;
    return Json::parse(res->body, nullptr, false);
  }

  std::string dir_;
  std::string idx_;
  std::vector<uint64_t> base_;
};

// The server answers health checks (it is still serving).
void ExpectHealthy(httplib::Client& c) {
  auto res = c.Get("/healthz");
  ASSERT_TRUE(res) << "the server stopped answering";
  EXPECT_EQ(res->status, 200);
}

TEST_F(ServeTest, EndpointsAnswerAsTheLibrary) {
  ServerProcess server(idx_, dir_, {});
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  httplib::Client c("127.0.0.1", server.port());
  ExpectHealthy(c);
  int status = 0;
  // Query: base7 at distance 1, nothing added.
  Json j =
      Post(c, "/v1/query",
           R"({"fingerprints":[{"id":"q","fingerprint":")" + Hex(base_[7], 1) + R"("}]})", &status);
  ASSERT_EQ(status, 200) << j;
  EXPECT_EQ(j["results"][0]["matches"], Json::parse(R"([{"id":"base7","distance":1}])"));
  // The lookup tables' guaranteed recall, as /v1/stats reports it.
  ASSERT_TRUE(j["recall_at_max_k"].is_number());
  EXPECT_GT(j["recall_at_max_k"].get<double>(), 0.98);
  EXPECT_LE(j["recall_at_max_k"].get<double>(), 1.0);
  // Check: a near duplicate is not added, a new one is, a later near
  // duplicate of it in the same batch finds it.
  const uint64_t fresh = 0x0123456789abcdefULL;
  j = Post(c, "/v1/check",
           R"({"fingerprints":[{"id":"n7","fingerprint":")" + Hex(base_[7], 2) +
               R"("},{"id":"fresh","fingerprint":")" + Hex(fresh) +
               R"("},{"id":"fresh2","fingerprint":")" + Hex(fresh, 4) + R"("}]})",
           &status);
  ASSERT_EQ(status, 200) << j;
  EXPECT_EQ(j["results"][0]["added"], false);
  EXPECT_EQ(j["results"][1]["added"], true);
  EXPECT_EQ(j["results"][2]["added"], false);
  EXPECT_EQ(j["results"][2]["matches"][0]["id"], "fresh");
  // Add always adds; an id present is that item's "exists" (the rest of
  // the batch is added) unless replace.
  j = Post(c, "/v1/add", R"({"fingerprints":[{"id":"dup","fingerprint":")" + Hex(fresh) + R"("}]})",
           &status);
  EXPECT_EQ(status, 200) << j;
  EXPECT_EQ(j["results"][0]["added"], true);
  EXPECT_FALSE(j["results"][0].contains("exists")) << j;
  const uint64_t other = 0x5555aaaa3333ccccULL;
  for (const char* endpoint : {"/v1/add", "/v1/check"}) {
    const std::string new_id = std::string("new-by-") + (endpoint + 4);
    j = Post(c, endpoint,
             R"({"fingerprints":[{"id":"dup","fingerprint":")" + Hex(fresh) + R"("},{"id":")" +
                 new_id + R"(","fingerprint":")" + Hex(other + endpoint[4]) + R"("}]})",
             &status);
    ASSERT_EQ(status, 200) << endpoint << " " << j;
    ASSERT_EQ(j["results"].size(), 2u) << j;
    EXPECT_EQ(j["results"][0]["id"], "dup");
    EXPECT_EQ(j["results"][0]["exists"], true) << j;
    EXPECT_EQ(j["results"][0]["added"], false) << j;
    EXPECT_EQ(j["results"][1]["id"], new_id);
    EXPECT_EQ(j["results"][1]["added"], true) << j;
    EXPECT_FALSE(j["results"][1].contains("exists")) << j;
    j = Post(c, "/v1/query",
             R"({"k":0,"fingerprints":[{"fingerprint":")" + Hex(other + endpoint[4]) + R"("}]})",
             &status);
    ASSERT_EQ(status, 200) << j;
    EXPECT_EQ(j["results"][0]["matches"],
              Json::parse(R"([{"id":")" + new_id + R"(","distance":0}])"));
  }
  j = Post(
      c, "/v1/add",
      R"({"replace":true,"fingerprints":[{"id":"dup","fingerprint":")" + Hex(~fresh) + R"("}]})",
      &status);
  EXPECT_EQ(status, 200) << j;
  // Documents are fingerprinted with the index's method: the same text twice
  // is a duplicate at distance 0.
  const std::string doc =
      R"({"documents":[{"id":"d1","text":"网页去重是搜索引擎的基础工作之一"}]})";
  j = Post(c, "/v1/check", doc, &status);
  ASSERT_EQ(status, 200) << j;
  EXPECT_EQ(j["results"][0]["added"], true);
  j = Post(c, "/v1/check",
           R"({"documents":[{"id":"d2","text":"网页去重是搜索引擎的基础工作之一"}]})", &status);
  EXPECT_EQ(j["results"][0]["matches"], Json::parse(R"([{"id":"d1","distance":0}])"));
  // Remove.
  j = Post(c, "/v1/remove", R"({"ids":["base1","nope"]})", &status);
  EXPECT_EQ(status, 200) << j;
  EXPECT_EQ(j["removed"], 1);
  EXPECT_EQ(j["missing"], Json::parse(R"(["nope"])"));
  auto stats = c.Get("/v1/stats");
  ASSERT_TRUE(stats);
  const Json s = Json::parse(stats->body);
  EXPECT_EQ(s["documents"], 100 + 5 - 1);  // fresh, dup, new-by-*, d1; base1 removed
  EXPECT_GT(s["log_bytes"].get<int>(), 0);
  // Graceful shutdown, then the library sees every change.
  EXPECT_EQ(server.Signal(SIGTERM), 0);
  auto index = DocumentIndex::Open(idx_);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ((*index)->size(), 104u);
  EXPECT_TRUE((*index)->Contains("new-by-add"));
  EXPECT_TRUE((*index)->Contains("new-by-check"));
  EXPECT_TRUE((*index)->Contains("fresh"));
  EXPECT_TRUE((*index)->Contains("d1"));
  EXPECT_FALSE((*index)->Contains("base1"));
  EXPECT_FALSE((*index)->Contains("n7"));
}

// A parsed Prometheus text exposition (format 0.0.4), strict: every line is
// `# HELP name text`, `# TYPE name type` or a sample `name{labels} value`
// (labels optional) of a family whose TYPE came first; anything else is a
// parse error. Samples are keyed by name and their labels, sorted.
struct Exposition {
  std::map<std::string, std::string> types;  // family -> counter, gauge, histogram...
  std::map<std::string, double> samples;     // `name{k="v",...}` (labels sorted) -> value
  std::string error;                         // empty when it parsed

  double Get(const std::string& key) const {
    const auto it = samples.find(key);
    return it == samples.end() ? -1 : it->second;
  }
};

bool IsNameChar(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

Exposition ParsePrometheus(const std::string& text) {
  Exposition e;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  const auto fail = [&](const std::string& why) {
    e.error = "line " + std::to_string(n) + ": " + why + ": " + line;
    return e;
  };
  // The histograms' samples, for the checks at the end: family{labels but
  // le} -> (le -> cumulative count), and _count.
  std::map<std::string, std::vector<std::pair<double, double>>> buckets;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) return fail("empty line");
    if (line[0] == '#') {
      std::istringstream words(line);
      std::string hash, kind, name, rest;
      words >> hash >> kind >> name;
      std::getline(words, rest);
      if (hash != "#" || (kind != "HELP" && kind != "TYPE") || name.empty()) {
        return fail("a comment that is neither # HELP nor # TYPE");
      }
      for (size_t i = 0; i < name.size(); ++i) {
        if (!IsNameChar(name[i], i == 0)) return fail("bad metric name");
      }
      if (kind == "TYPE") {
        const std::string type = rest.empty() ? "" : rest.substr(1);
        if (type != "counter" && type != "gauge" && type != "histogram" && type != "summary" &&
            type != "untyped") {
          return fail("unknown type");
        }
        if (!e.types.emplace(name, type).second) return fail("a second TYPE");
      }
      continue;
    }
    size_t i = 0;
    while (i < line.size() && IsNameChar(line[i], i == 0)) ++i;
    const std::string name = line.substr(0, i);
    if (name.empty()) return fail("no metric name");
    std::map<std::string, std::string> labels;
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        size_t k = i;
        while (k < line.size() && IsNameChar(line[k], k == i)) ++k;
        const std::string key = line.substr(i, k - i);
        if (key.empty() || line.compare(k, 2, "=\"") != 0) return fail("bad label");
        std::string value;
        for (k += 2; k < line.size() && line[k] != '"'; ++k) {
          if (line[k] == '\\') {
            if (++k == line.size()) return fail("bad escape");
            value += line[k] == 'n' ? '\n' : line[k];
          } else {
            value += line[k];
          }
        }
        if (k == line.size()) return fail("unterminated label value");
        if (!labels.emplace(key, value).second) return fail("a label twice");
        i = k + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i == line.size()) return fail("unterminated labels");
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') return fail("no space before the value");
    const std::string value_text = line.substr(i + 1);
    double value = 0;
    if (value_text == "+Inf") {
      value = HUGE_VAL;
    } else {
      char* end = nullptr;
      value = std::strtod(value_text.c_str(), &end);
      if (value_text.empty() || *end != '\0') return fail("bad value");
    }
    // Its family: the name, or a histogram's name less its suffix.
    std::string family = name;
    std::string suffix;
    for (const char* s : {"_bucket", "_sum", "_count"}) {
      const std::string sfx = s;
      if (name.size() > sfx.size() && name.ends_with(sfx) &&
          e.types.count(name.substr(0, name.size() - sfx.size())) &&
          e.types.at(name.substr(0, name.size() - sfx.size())) == "histogram") {
        family = name.substr(0, name.size() - sfx.size());
        suffix = sfx;
      }
    }
    if (!e.types.count(family)) return fail("a sample before its # TYPE");
    if (e.types.at(family) == "histogram" && suffix.empty()) return fail("a bare histogram sample");
    std::string le;
    if (suffix == "_bucket") {
      if (!labels.count("le")) return fail("a bucket without le");
      le = labels.at("le");
      labels.erase("le");
    }
    std::string label_text;  // k="v", for each label but le, sorted
    for (const auto& [k, v] : labels) label_text += k + "=\"" + v + "\",";
    std::string key = name + "{" + label_text + "}";
    if (suffix == "_bucket") {
      const double bound = le == "+Inf" ? HUGE_VAL : std::strtod(le.c_str(), nullptr);
      buckets[family + "{" + label_text + "}"].push_back({bound, value});
      key = name + "{" + label_text + "le=\"" + le + "\",}";
    }
    if (!e.samples.emplace(key, value).second) return fail("a sample twice");
  }
  // Each histogram: bounds ascending, counts monotone, +Inf == _count.
  for (const auto& [group, list] : buckets) {
    for (size_t b = 1; b < list.size(); ++b) {
      if (!(list[b].first > list[b - 1].first)) {
        e.error = group + ": bucket bounds not ascending";
        return e;
      }
      if (list[b].second < list[b - 1].second) {
        e.error = group + ": bucket counts not monotone";
        return e;
      }
    }
    if (list.empty() || list.back().first != HUGE_VAL) {
      e.error = group + ": no +Inf bucket";
      return e;
    }
    const std::string family = group.substr(0, group.find('{'));
    const std::string count_key = family + "_count" + group.substr(family.size());
    if (e.Get(count_key) != list.back().second) {
      e.error = group + ": the +Inf bucket differs from _count";
      return e;
    }
    if (e.Get(family + "_sum" + group.substr(family.size())) < 0) {
      e.error = group + ": no _sum";
      return e;
    }
  }
  return e;
}

Exposition GetMetrics(httplib::Client& c) {
  auto res = c.Get("/metrics");
  Exposition e;
  if (!res) {
    e.error = "no answer";
  } else if (res->status != 200) {
    e.error = "status " + std::to_string(res->status);
  } else if (res->get_header_value("Content-Type").rfind("text/plain; version=0.0.4", 0) != 0) {
    e.error = "Content-Type " + res->get_header_value("Content-Type");
  } else {
    e = ParsePrometheus(res->body);
  }
  return e;
}

TEST(PrometheusParserTest, RejectsWhatIsNotTheFormat) {
  EXPECT_EQ(ParsePrometheus("# TYPE a counter\na 1\n").error, "");
  EXPECT_NE(ParsePrometheus("a 1\n").error, "");                         // no TYPE
  EXPECT_NE(ParsePrometheus("# TYPE a counter\na{x=1} 1\n").error, "");  // unquoted
  EXPECT_NE(ParsePrometheus("# TYPE a counter\na one\n").error, "");
  EXPECT_NE(ParsePrometheus("# comment\n").error, "");
  const std::string h =
      "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} %d\nh_sum 0.5\nh_count 3\n";
  std::string ok = h, bad = h;
  ok.replace(ok.find("%d"), 2, "3");
  bad.replace(bad.find("%d"), 2, "1");  // below the le=1 bucket, and not _count
  EXPECT_EQ(ParsePrometheus(ok).error, "");
  EXPECT_NE(ParsePrometheus(bad).error, "");
}

// A body of the common shape is read by the fast path (serve_request.h,
// ParseFastBatchBody), the same items with another key by the general
// parser: the answers are the same, documents included (the same text is
// the same fingerprint either way).
TEST_F(ServeTest, BatchBodiesAnswerTheSameByEitherParser) {
  ServerProcess server(idx_, dir_, {});
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  httplib::Client c("127.0.0.1", server.port());
  const std::string items[] = {
      R"("k":3,"fingerprints":[{"id":"q\u00e9","fingerprint":")" + Hex(base_[7], 1) +
          R"("},{"fingerprint":")" + Hex(base_[9], 7) + R"("}])",
      R"("documents":[{"id":"d","text":"网页去重\n是搜索引擎的 \"基础\" 工作之一","title":"标题"}])",
  };
  for (const std::string& body : items) {
    int fast_status = 0, general_status = 0;
    // The fast path leaves a body with another key to the general parser.
    auto fast = c.Post("/v1/query", "{" + body + "}", "application/json");
    auto general = c.Post("/v1/query", "{\"other\":[1]," + body + "}", "application/json");
    ASSERT_TRUE(fast && general);
    fast_status = fast->status;
    general_status = general->status;
    EXPECT_EQ(fast_status, 200) << fast->body;
    EXPECT_EQ(general_status, 200) << general->body;
    EXPECT_EQ(fast->body, general->body);
  }
  // The fingerprints' answer is not empty: base7 within k = 3, ids decoded.
  auto fast = c.Post("/v1/query", "{" + items[0] + "}", "application/json");
  ASSERT_TRUE(fast);
  const Json answer = Json::parse(fast->body);
  EXPECT_EQ(answer["results"][0]["id"], "q\u00e9") << answer;
  EXPECT_EQ(answer["results"][0]["matches"], Json::parse(R"([{"id":"base7","distance":1}])"));
  // A document checked by one path is found at distance 0 by the other.
  const std::string text = R"("text":"网页去重是搜索引擎的基础工作之一\t\u4e2d")";
  int status = 0;
  Json j = Post(c, "/v1/check", R"({"documents":[{"id":"a",)" + text + "}]}", &status);
  ASSERT_EQ(status, 200) << j;
  EXPECT_EQ(j["results"][0]["added"], true) << j;
  j = Post(c, "/v1/check", R"({"x":0,"documents":[{"id":"b",)" + text + "}]}", &status);
  ASSERT_EQ(status, 200) << j;
  EXPECT_EQ(j["results"][0]["added"], false) << j;
  EXPECT_EQ(j["results"][0]["matches"], Json::parse(R"([{"id":"a","distance":0}])")) << j;
  // Errors are the general parser's: a missing id, a bad fingerprint.
  j = Post(c, "/v1/check", R"({"documents":[{)" + text + "}]}", &status);
  EXPECT_EQ(status, 400) << j;
  EXPECT_EQ(j["error"]["message"], "documents[0] needs an \"id\"") << j;
  j = Post(c, "/v1/check", R"({"fingerprints":[{"id":"c","fingerprint":"zz"}]})", &status);
  EXPECT_EQ(status, 400) << j;
  EXPECT_NE(j["error"]["message"].get<std::string>().find("fingerprints[0].fingerprint"),
            std::string::npos)
      << j;
}

TEST_F(ServeTest, MetricsParseAndCountRequests) {
  ServerProcess server(idx_, dir_, {});
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  httplib::Client c("127.0.0.1", server.port());
  // One connection, so one worker: a request is counted (after its answer
  // is sent) before the next one on it is read.
  c.set_keep_alive(true);
  ExpectHealthy(c);
  const Exposition before = GetMetrics(c);
  ASSERT_EQ(before.error, "");
  for (const char* family : {"neardup_http_requests_total", "neardup_index_documents",
                             "neardup_index_log_bytes", "neardup_index_compactions_total"}) {
    EXPECT_TRUE(before.types.count(family)) << family;
  }
  EXPECT_EQ(before.types.at("neardup_http_request_duration_seconds"), "histogram");
  EXPECT_EQ(before.Get("neardup_index_documents{}"), 100);
  EXPECT_EQ(before.Get("neardup_index_log_bytes{}"), 0);
  EXPECT_EQ(before.Get("neardup_index_compactions_total{}"), 0);
  EXPECT_EQ(before.Get(R"(neardup_http_requests_total{endpoint="/healthz",status="200",})"), 1);

  int status = 0;
  for (int i = 0; i < 3; ++i) {
    const Json j =
        Post(c, "/v1/check",
             R"({"fingerprints":[{"id":"m)" + std::to_string(i) + R"(","fingerprint":")" +
                 Hex(0xabcdef00ULL + i * 0x1111111ULL) + R"("}]})",
             &status);
    ASSERT_EQ(status, 200) << j;
  }
  auto res = c.Get("/no/such/path");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  const Exposition after = GetMetrics(c);
  ASSERT_EQ(after.error, "");
  EXPECT_EQ(after.Get(R"(neardup_http_requests_total{endpoint="/v1/check",status="200",})"), 3);
  EXPECT_EQ(after.Get(R"(neardup_http_requests_total{endpoint="other",status="404",})"), 1);
  EXPECT_EQ(after.Get(R"(neardup_http_requests_total{endpoint="/metrics",status="200",})"), 1);
  EXPECT_EQ(after.Get(R"(neardup_http_request_duration_seconds_count{endpoint="/v1/check",})"), 3);
  EXPECT_GT(after.Get(R"(neardup_http_request_duration_seconds_sum{endpoint="/v1/check",})"), 0);
  EXPECT_EQ(
      after.Get(R"(neardup_http_request_duration_seconds_bucket{endpoint="/v1/check",le="+Inf",})"),
      3);
  EXPECT_EQ(after.Get("neardup_index_documents{}"), 103);
  EXPECT_GT(after.Get("neardup_index_log_bytes{}"), 0);
  EXPECT_EQ(after.Get("neardup_index_compactions_total{}"), 0);
  // /v1/query searches the index file through the same combiner as
  // /v1/check (one search each, one connection: one batch each).
  EXPECT_EQ(after.Get("neardup_index_file_searches_total{}"), 3);
  const Json q = Post(c, "/v1/query",
                      R"({"fingerprints":[{"id":"q","fingerprint":")" + Hex(base_[7], 1) +
                          R"("},{"fingerprint":")" + Hex(base_[8]) + R"("}]})",
                      &status);
  ASSERT_EQ(status, 200) << q;
  EXPECT_EQ(q["results"][0]["matches"], Json::parse(R"([{"id":"base7","distance":1}])"));
  EXPECT_EQ(q["results"][1]["matches"], Json::parse(R"([{"id":"base8","distance":0}])"));
  const Exposition queried = GetMetrics(c);
  ASSERT_EQ(queried.error, "");
  EXPECT_EQ(queried.Get("neardup_index_file_searches_total{}"), 4);
  EXPECT_EQ(queried.Get("neardup_index_file_search_batches_total{}"), 4);
  EXPECT_EQ(server.Signal(SIGTERM), 0);
}

// A writer of a served index says whose lock it waits for, and --wait gives
// up with exit status 1; once the server is gone the same command runs.
TEST_F(ServeTest, WritersNameTheLockHolderAndGiveUpAfterWait) {
  ServerProcess server(idx_, dir_, {});
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  const std::string holder = "waiting for the lock held by pid " + std::to_string(server.pid());
  WriteFile(dir_ + "/add.jsonl",
            "{\"id\":\"late\",\"fingerprint\":\"" + Hex(0x77777777ULL) + "\"}\n");
  const std::vector<std::vector<std::string>> writers = {
      {"index", "compact", idx_, "--wait", "1"},
      {"index", "add", idx_, "--fingerprints", dir_ + "/add.jsonl", "--wait", "1.5"},
      {"index", "remove", idx_, "base3", "--wait", "1"}};
  for (const auto& args : writers) {
    const auto start = std::chrono::steady_clock::now();
    const auto r = RunCli(args);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.exit_code, 1) << args[1] << ": " << r.err;
    EXPECT_NE(r.err.find("neardup: " + holder + " (" + idx_ + ".lock)"), std::string::npos)
        << args[1] << ": " << r.err;
    EXPECT_NE(r.err.find("still locked by pid " + std::to_string(server.pid())), std::string::npos)
        << r.err;
    EXPECT_GE(seconds, 0.9) << args[1];
    EXPECT_LT(seconds, 10.0) << args[1];  // bounded: gave up, did not wait on
  }
  // Under a second: no message, and --wait 0 gives up at once.
  const auto r0 = RunCli({"index", "compact", idx_, "--wait", "0"});
  EXPECT_EQ(r0.exit_code, 1) << r0.err;
  EXPECT_EQ(r0.err.find("waiting for"), std::string::npos) << r0.err;
  EXPECT_EQ(server.Signal(SIGTERM), 0);
  // Nothing was changed by the writers that gave up; now they run.
  const auto add = RunCli(writers[1]);
  EXPECT_EQ(add.exit_code, 0) << add.err;
  EXPECT_EQ(add.err.find("waiting for"), std::string::npos) << add.err;
  const auto compact = RunCli(writers[0]);
  EXPECT_EQ(compact.exit_code, 0) << compact.err;
  auto index = DocumentIndex::Open(idx_);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ((*index)->size(), 101u);
  EXPECT_TRUE((*index)->Contains("late"));
  EXPECT_TRUE((*index)->Contains("base3"));
}

// `POST /v1/snapshot` while a client adds: the copy opens and verifies, and
// holds every add acknowledged before the request was sent; a second
// snapshot of the same name is 409, a bad name 400, and without
// --snapshot-dir the endpoint is off (403).
TEST_F(ServeTest, SnapshotEndpointUnderConcurrentAddsHoldsEveryAcknowledgedAdd) {
  std::filesystem::create_directories(dir_ + "/snaps");
  ServerProcess server(idx_, dir_, {"--no-sync", "--snapshot-dir", dir_ + "/snaps"});
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  std::mutex mu;
  std::vector<std::string> acked;  // guarded by mu
  std::atomic<bool> stop{false};
  std::thread adder([&] {
    httplib::Client c("127.0.0.1", server.port());
    for (uint64_t i = 0; !stop.load() && i < 1000000; ++i) {
      const std::string id = "p" + std::to_string(i);
      int status = 0;
      Post(c, "/v1/add",
           R"({"fingerprints":[{"id":")" + id + R"(","fingerprint":")" + Hex(2000000 + i) +
               R"("}]})",
           &status);
      if (status != 200) continue;
      std::lock_guard lock(mu);
      acked.push_back(id);
    }
  });
  // Waits for acknowledged adds, not for a fixed time: on a loaded machine
  // 300 ms could pass before the first add is answered.
  if (!WaitForCount(mu, acked, 20)) {
    stop = true;
    adder.join();
    FAIL() << "no add was acknowledged in 60 s";
  }
  std::vector<std::string> before;
  {
    std::lock_guard lock(mu);
    before = acked;
  }
  httplib::Client c("127.0.0.1", server.port());
  int status = 0;
  const Json j = Post(c, "/v1/snapshot", R"({"name":"copy.idx"})", &status);
  EXPECT_TRUE(WaitForCount(mu, acked, before.size() + 20)) << "adds stopped after the snapshot";
  stop = true;
  adder.join();
  ASSERT_EQ(status, 200) << j;
  EXPECT_EQ(j["path"], dir_ + "/snaps/copy.idx");
  size_t total = 0;
  {
    std::lock_guard lock(mu);
    total = acked.size();
  }
  ASSERT_GT(before.size(), 0u) << "no add was acknowledged before the snapshot";
  EXPECT_GT(total, before.size()) << "adds did not go on during the snapshot";
  const auto verified = RunCli({"index", "verify", dir_ + "/snaps/copy.idx"});
  EXPECT_EQ(verified.exit_code, 0) << verified.err;
  auto copy = DocumentIndex::Open(dir_ + "/snaps/copy.idx");
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  EXPECT_GE((*copy)->size(), 100 + before.size());
  EXPECT_LE((*copy)->size(), 100 + total);
  for (const std::string& id : before) ASSERT_TRUE((*copy)->Contains(id)) << id;
  EXPECT_TRUE((*copy)->Contains("base0"));
  Post(c, "/v1/snapshot", R"({"name":"copy.idx"})", &status);
  EXPECT_EQ(status, 409);
  for (const char* bad : {R"({"name":"../x"})", R"({"name":".hidden"})", R"({"name":""})",
                          R"({"name":3})", R"([])"}) {
    Post(c, "/v1/snapshot", bad, &status);
    EXPECT_EQ(status, 400) << bad;
  }
  // Its body is parsed within the same bounds as the others'.
  const Json deep = Post(c, "/v1/snapshot", std::string(40, '[') + std::string(40, ']'), &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(deep.dump().find("nested deeper than 32"), std::string::npos) << deep;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/x"));
  EXPECT_EQ(server.Signal(SIGTERM), 0);
  ServerProcess off(idx_, dir_, {});
  ASSERT_GT(off.port(), 0) << off.stderr_text();
  httplib::Client c2("127.0.0.1", off.port());
  Post(c2, "/v1/snapshot", R"({"name":"copy2.idx"})", &status);
  EXPECT_EQ(status, 403);
  EXPECT_EQ(off.Signal(SIGTERM), 0);
}

// --max-count with --evict-every: the server evicts the oldest documents
// when it starts and again on its schedule, never the newest, and counts
// them in /v1/stats and /metrics; evicted documents are never answered.
TEST_F(ServeTest, EvictsOnAScheduleAndCountsIt) {
  ServerProcess server(idx_, dir_, {"--max-count", "60", "--evict-every", "0.2"});
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  httplib::Client c("127.0.0.1", server.port());
  const auto evicted = [&] {
    auto res = c.Get("/v1/stats");
    return res ? Json::parse(res->body, nullptr, false).value("evicted", -1) : -1;
  };
  const auto wait_for = [&](int n) {
    for (int i = 0; i < 300 && evicted() != n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return evicted();
  };
  ASSERT_EQ(wait_for(40), 40);  // base0..base39, at start
  int status = 0;
  std::string body = R"({"fingerprints":[)";
  for (int i = 0; i < 10; ++i) {
    body += std::string(i ? "," : "") + R"({"id":"n)" + std::to_string(i) + R"(","fingerprint":")" +
            Hex(3000000 + i) + R"("})";
  }
  Json j = Post(c, "/v1/add", body + "]}", &status);
  ASSERT_EQ(status, 200) << j;
  ASSERT_EQ(wait_for(50), 50);  // base40..base49, on the schedule
  const Exposition m = GetMetrics(c);
  ASSERT_EQ(m.error, "");
  EXPECT_EQ(m.Get("neardup_index_evictions_total{}"), 50);
  EXPECT_EQ(m.Get("neardup_index_documents{}"), 60);
  for (int i : {0, 39, 49, 50, 99}) {
    j = Post(c, "/v1/query",
             R"({"fingerprints":[{"id":"q","fingerprint":")" + Hex(base_[i]) + R"("}],"k":0})",
             &status);
    ASSERT_EQ(status, 200) << j;
    EXPECT_EQ(j["results"][0]["matches"].size(), i < 50 ? 0u : 1u) << i << ": " << j;
  }
  j = Post(c, "/v1/query",
           R"({"fingerprints":[{"id":"q","fingerprint":")" + Hex(3000009) + R"("}],"k":0})",
           &status);
  EXPECT_EQ(j["results"][0]["matches"].size(), 1u) << j;
  EXPECT_EQ(server.Signal(SIGTERM), 0);
}

// `neardup index snapshot` of a served index while a client adds: the copy
// opens and verifies, and holds every add acknowledged before it began.
TEST_F(ServeTest, SnapshotUnderConcurrentAddsHoldsEveryAcknowledgedAdd) {
  ServerProcess server(idx_, dir_, {"--no-sync"});
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  std::mutex mu;
  std::vector<std::pair<std::string, uint64_t>> acked;  // guarded by mu
  std::atomic<bool> stop{false};
  std::thread adder([&] {
    httplib::Client c("127.0.0.1", server.port());
    for (uint64_t i = 0; !stop.load() && i < 1000000; ++i) {
      std::string body = R"({"fingerprints":[)";
      std::vector<std::pair<std::string, uint64_t>> batch;
      for (uint64_t j = 0; j < 4; ++j) {
        batch.push_back({"s" + std::to_string(i) + "_" + std::to_string(j), 1000000 + i * 4 + j});
        body += std::string(j ? "," : "") + R"({"id":")" + batch.back().first +
                R"(","fingerprint":")" + Hex(batch.back().second) + R"("})";
      }
      body += "]}";
      int status = 0;
      Post(c, "/v1/add", body, &status);
      if (status != 200) continue;
      std::lock_guard lock(mu);
      acked.insert(acked.end(), batch.begin(), batch.end());
    }
  });
  if (!WaitForCount(mu, acked, 80)) {
    stop = true;
    adder.join();
    FAIL() << "no add was acknowledged in 60 s";
  }
  std::vector<std::pair<std::string, uint64_t>> before;
  {
    std::lock_guard lock(mu);
    before = acked;
  }
  const std::string snap = dir_ + "/snap.idx";
  const auto r = RunCli({"index", "snapshot", idx_, snap});
  EXPECT_TRUE(WaitForCount(mu, acked, before.size() + 80)) << "adds stopped after the snapshot";
  stop = true;
  adder.join();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t total = 0;
  {
    std::lock_guard lock(mu);
    total = acked.size();
  }
  ASSERT_GT(before.size(), 0u) << "no add was acknowledged before the snapshot";
  EXPECT_GT(total, before.size()) << "adds did not go on during the snapshot";
  auto copy = DocumentIndex::Open(snap);
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  EXPECT_TRUE((*copy)->Verify().ok());
  EXPECT_FALSE(std::filesystem::exists(snap + ".log"));
  EXPECT_GE((*copy)->size(), 100 + before.size());
  EXPECT_LE((*copy)->size(), 100 + total);
  for (const auto& [id, v] : before) {
    ASSERT_TRUE((*copy)->Contains(id)) << id;
  }
  std::vector<DocumentMatch> m;
  ASSERT_TRUE((*copy)->Query(Fingerprint::FromHex(Hex(before.back().second)).value(), 0, &m).ok());
  EXPECT_EQ(m, (std::vector<DocumentMatch>{{before.back().first, 0}}));
  EXPECT_TRUE((*copy)->Contains("base0"));
  // A snapshot never overwrites: the same DEST again is a usage error.
  const auto again = RunCli({"index", "snapshot", idx_, snap});
  EXPECT_EQ(again.exit_code, 2) << again.err;
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  EXPECT_EQ(server.Signal(SIGTERM), 0);
}

// A blocking loopback connection to the server from source address `from`
// (any 127.0.0.0/8 address is this host's: a test's distinct clients);
// -1 when it cannot connect.
int ConnectFrom(const char* from, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in src{};
  src.sin_family = AF_INET;
  inet_pton(AF_INET, from, &src.sin_addr);
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(static_cast<uint16_t>(port));
  dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof(src)) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof(dst)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// What the server sends on `fd` until it closes it or `seconds` pass.
std::string ReadAnswer(int fd, int seconds) {
  std::string out;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          end - std::chrono::steady_clock::now())
                          .count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) return out;
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

bool SendAll(int fd, const std::string& bytes) {
  return send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

TEST_F(ServeTest, HostileRequestsGetJsonErrorsAndTheServerKeepsServing) {
  WriteFile(dir_ + "/token", "s3cret\n");
  ServerProcess server(idx_, dir_,
                       {"--token-file", dir_ + "/token", "--max-body-bytes", "65536", "--max-batch",
                        "5", "--read-timeout", "1"});
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  httplib::Client c("127.0.0.1", server.port());
  c.set_bearer_token_auth("s3cret");
  const std::string ok_fp =
      R"({"fingerprints":[{"id":"a","fingerprint":"000000000000000000000000000000ff"}]})";
  const std::vector<std::pair<std::string, int>> cases = {
      {"{", 400},
      {R"({"fingerprints":[{"id":"a","fingerprint":"00)", 400},  // truncated
      {"", 400},
      {"[]", 400},
      {"null", 400},
      {std::string("{\"documents\":[{\"id\":\"a\",\"text\":\"\xff\xfe\"}]}"), 400},  // bad UTF-8
      {std::string("{\"documents\":[{\"id\":\"\xc3\",\"text\":\"x\"}]}"), 400},
      {R"({"fingerprints":[{"id":7,"fingerprint":"000000000000000000000000000000ff"}]})", 400},
      {R"({"fingerprints":[{"id":"a","fingerprint":255}]})", 400},
      {R"({"fingerprints":[{"id":"a","fingerprint":"xyz"}]})", 400},
      {R"({"fingerprints":[{"id":"a","fingerprint":"00000000000000ff"}]})", 400},  // 64 bits
      {R"({"fingerprints":{"id":"a"}})", 400},
      {R"({"fingerprints":["a"]})", 400},
      {R"({"documents":[{"id":"a","text":"x"}],"fingerprints":[]})", 400},
      {R"({"k":"3","fingerprints":[]})", 400},
      {R"({"k":99,"fingerprints":[]})", 400},
      {R"({"k":-1,"fingerprints":[]})", 400},
      {R"({"replace":"yes","fingerprints":[]})", 400},
      {R"({"documents":[{"id":"a","text":"x","title":5}]})", 400},
      {R"({"documents":[{"text":"no id"}]})", 400},
      {R"({"fingerprints":[{},{},{},{},{},{}]})", 413},  // more than --max-batch
      {"{\"documents\":[{\"id\":\"big\",\"text\":\"" + std::string(100000, 'x') + "\"}]}", 413},
  };
  for (const auto& [body, want] : cases) {
    int status = 0;
    const Json j = Post(c, "/v1/check", body, &status);
    EXPECT_EQ(status, want) << body.substr(0, 80);
    EXPECT_TRUE(j.is_object() && j.contains("error") && j["error"]["message"].is_string())
        << body.substr(0, 80) << " -> " << j;
    ExpectHealthy(c);
  }
  int status = 0;
  // Removals: wrong types.
  for (const char* body : {R"({"ids":"a"})", R"({"ids":[1]})", "{}", "x"}) {
    Post(c, "/v1/remove", body, &status);
    EXPECT_EQ(status, 400) << body;
  }
  // Unknown endpoint, wrong method.
  Json j = Post(c, "/v1/nothing", ok_fp, &status);
  EXPECT_EQ(status, 404);
  EXPECT_TRUE(j.contains("error"));
  auto get = c.Get("/v1/check");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  EXPECT_EQ(get->get_header_value("Allow"), "POST");
  j = Post(c, "/v1/stats", "{}", &status);
  EXPECT_EQ(status, 405);
  // No token, a wrong token: 401; /healthz needs none.
  httplib::Client anonymous("127.0.0.1", server.port());
  j = Post(anonymous, "/v1/check", ok_fp, &status);
  EXPECT_EQ(status, 401);
  EXPECT_TRUE(j.contains("error"));
  httplib::Client wrong("127.0.0.1", server.port());
  wrong.set_bearer_token_auth("s3cres");
  Post(wrong, "/v1/query", ok_fp, &status);
  EXPECT_EQ(status, 401);
  ExpectHealthy(anonymous);
  // Slow clients: connections that send half a request and stall do not
  // stop the others (read timeout 1 s, 8 workers).
  std::vector<int> slow;
  for (int i = 0; i < 4; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server.port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    const std::string partial =
        "POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{";
    ASSERT_EQ(write(fd, partial.data(), partial.size()), static_cast<ssize_t>(partial.size()));
    slow.push_back(fd);
  }
  j = Post(c, "/v1/check", ok_fp, &status);
  EXPECT_EQ(status, 200) << j;
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the read timeout
  for (int fd : slow) close(fd);
  ExpectHealthy(c);
  // A Content-Length over --max-body-bytes is refused unread and the
  // connection closed: the body is never taken for a next request.
  {
    const int fd = ConnectFrom("127.0.0.1", server.port());
    ASSERT_GE(fd, 0);
    SendAll(fd,
            "POST /v1/check HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\n"
            "Content-Length: 100000\r\n\r\n" +
                std::string(1000, 'x') + "\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n");
    const std::string answer = ReadAnswer(fd, 5);
    close(fd);
    EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer;
    EXPECT_EQ(answer.find("HTTP/1.1", 1), std::string::npos) << answer;  // one answer only
  }
  // The access log: one JSON line per request.
  EXPECT_EQ(server.Signal(SIGINT), 0);
  int lines = 0;
  std::istringstream log(server.stderr_text());
  for (std::string line; std::getline(log, line);) {
    if (line.empty() || line[0] != '{') continue;
    const Json entry = Json::parse(line, nullptr, false);
    ASSERT_FALSE(entry.is_discarded()) << line;
    EXPECT_TRUE(entry["status"].is_number_integer() && entry["path"].is_string()) << line;
    ++lines;
  }
  EXPECT_GT(lines, 40);
}

// The server's peak resident memory (VmHWM), in bytes; 0 when unknown.
size_t PeakResidentBytes(pid_t pid) {
  std::istringstream status(ReadFile("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// A chunked body is bounded by --max-body-bytes like one with a
// Content-Length: 24 MiB sent chunked to a server that takes 64 KiB is 413
// and never held (httplib's own reader held it whole and answered 200; 1 GiB
// of it made the kernel kill the server). A chunked body sent where no body
// is taken is refused unread, not read whole first.
TEST_F(ServeTest, ChunkedBodiesAreBoundedByMaxBodyBytes) {
  signal(SIGPIPE, SIG_IGN);  // the server closes a refused body's connection
  ServerProcess server(idx_, dir_, {"--max-body-bytes", "65536"});
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(30, 0);
  ExpectHealthy(c);
  const size_t before = PeakResidentBytes(server.pid());
  ASSERT_GT(before, 0u);
  constexpr size_t kBody = size_t{24} << 20;
  const std::string head = R"({"documents":[{"id":"a","text":")";
  const std::string block(1 << 16, 'x');
  auto chunked = [&](const std::string& path) {
    size_t sent = 0;
    auto res = c.Post(
        path.c_str(),
        [&](size_t, httplib::DataSink& sink) {
          if (sent == 0) sink.write(head.data(), head.size());
          if (sent >= kBody) {
            sink.write("\"}]}", 4);
            sink.done();
          } else if (!sink.write(block.data(), block.size())) {
            return false;
          }
          sent += block.size();
          return true;
        },
        "application/json");
    return res ? res->status : -1;
  };
  // The server answers and closes the connection while the client still
  // writes: the client may see the answer or the closed connection (-1);
  // the access log has the status either way.
  for (const char* path : {"/v1/query", "/v1/add", "/v1/nothing"}) {
    const int status = chunked(path);
    EXPECT_TRUE(status == (path[4] == 'n' ? 400 : 413) || status == -1) << path << " " << status;
    ExpectHealthy(c);
  }
  // Each request's access log line is written once it is answered.
  std::vector<Json> posts;
  for (int i = 0; i < 250 && posts.size() < 3; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    posts.clear();
    std::istringstream log(server.stderr_text());
    for (std::string line; std::getline(log, line);) {
      Json entry = Json::parse(line, nullptr, false);
      if (entry.is_object() && entry.value("method", "") == "POST") posts.push_back(entry);
    }
  }
  ASSERT_EQ(posts.size(), 3u) << server.stderr_text();
  for (const Json& entry : posts) {
    EXPECT_EQ(entry["status"], entry["path"] == "/v1/nothing" ? 400 : 413) << entry;
    EXPECT_LE(entry["bytes_in"].get<size_t>(), 65536u) << entry;
  }
  // Well under the body: the server held at most its 64 KiB budget of it.
  const size_t after = PeakResidentBytes(server.pid());
  EXPECT_LT(after, before + (size_t{8} << 20)) << before << " -> " << after;
  // A small chunked body is read and answered.
  int status = 0;
  auto res = c.Post(
      "/v1/query",
      [](size_t, httplib::DataSink& sink) {
        const std::string body =
            R"({"fingerprints":[{"id":"q","fingerprint":"000000000000000000000000000000ff"}]})";
        sink.write(body.data(), body.size());
        sink.done();
        return true;
      },
      "application/json");
  ASSERT_TRUE(res);
  status = res->status;
  EXPECT_EQ(status, 200) << res->body;
}

// A failed log write (the disk full at the log's first record, injected)
// changes nothing visible: the batch answered 500 is neither found by
// /v1/query nor counted by /v1/stats (both showed it until a restart), and
// later changes are refused while queries go on.
TEST_F(ServeTest, FailedLogWriteChangesNothingVisible) {
  // Steps of a fresh log: write and fsync its header, fsync the directory;
  // step 4 is the first record's write.
  setenv("NEARDUP_FAULT_FAIL_AT", "4", 1);
  ServerProcess server(idx_, dir_, {});
  unsetenv("NEARDUP_FAULT_FAIL_AT");
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  httplib::Client c("127.0.0.1", server.port());
  const std::string fp = Hex(12345);
  int status = 0;
  Json j = Post(c, "/v1/add", R"({"fingerprints":[{"id":"lost","fingerprint":")" + fp + R"("}]})",
                &status);
  EXPECT_EQ(status, 500) << j;
  j = Post(c, "/v1/query", R"({"k":0,"fingerprints":[{"fingerprint":")" + fp + R"("}]})", &status);
  ASSERT_EQ(status, 200) << j;
  EXPECT_TRUE(j["results"][0]["matches"].empty()) << j;
  auto stats = c.Get("/v1/stats");
  ASSERT_TRUE(stats);
  EXPECT_EQ(Json::parse(stats->body)["documents"], 100) << stats->body;
  // Refused from here on, and still not visible.
  j = Post(c, "/v1/check",
           R"({"fingerprints":[{"id":"later","fingerprint":")" + Hex(777) + R"("}]})", &status);
  EXPECT_EQ(status, 500) << j;
  stats = c.Get("/v1/stats");
  ASSERT_TRUE(stats);
  EXPECT_EQ(Json::parse(stats->body)["documents"], 100) << stats->body;
  // The base is still served.
  j = Post(c, "/v1/query", R"({"k":0,"fingerprints":[{"fingerprint":")" + Hex(base_[3]) + R"("}]})",
           &status);
  ASSERT_EQ(status, 200);
  ASSERT_EQ(j["results"][0]["matches"].size(), 1u) << j;
  EXPECT_EQ(j["results"][0]["matches"][0]["id"], "base3");
}

// --threads beyond what a memory limit allows: the server starts the
// workers it can, says so, serves with them and stops on SIGTERM (it printed
// "serving", refused every connection and hung in pthread_cond_destroy).
TEST_F(ServeTest, RefusedWorkerThreadsAreNotFatal) {
  if (testing::Sanitized()) GTEST_SKIP() << "address-space limits and sanitizers do not mix";
  // 1.5 GiB of address space: a few hundred 8 MiB thread stacks.
  ServerProcess server(idx_, dir_, {"--threads", "100000"}, "ulimit -v 1572864");
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  EXPECT_NE(server.stderr_text().find("of 100000 worker threads"), std::string::npos)
      << server.stderr_text();
  httplib::Client c("127.0.0.1", server.port());
  c.set_connection_timeout(10, 0);
  c.set_read_timeout(10, 0);
  ExpectHealthy(c);
  int status = 0;
  const Json j =
      Post(c, "/v1/query", R"({"k":0,"fingerprints":[{"fingerprint":")" + Hex(base_[1]) + R"("}]})",
           &status);
  EXPECT_EQ(status, 200) << j;
  EXPECT_EQ(server.Signal(SIGTERM), 0);
}

// Eight client threads send the members of 100 near-duplicate groups (each
// member 1 bit from its group's base, so members are within k = 2; each
// thread its own member of every group, in its own order) to /v1/check:
// every group is added exactly once.
// Connections made while the server cannot accept (stopped with SIGSTOP, as
// a starved accept loop on a loaded machine) complete their handshake in the
// kernel's listen backlog: 48 of them, where cpp-httplib's compiled-in
// backlog of 5 completed 6 and made the other clients' first requests fail
// ("Read") a second later. Each is served once the server runs again.
TEST_F(ServeTest, ListenBacklogHoldsManyPendingConnections) {
  ServerProcess server(idx_, dir_, {});
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  constexpr int kClients = 48;
  ASSERT_EQ(kill(server.pid(), SIGSTOP), 0);
  std::vector<int> fds;
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server.port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < kClients; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ASSERT_GE(fd, 0);
    fds.push_back(fd);
    connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));  // EINPROGRESS
  }
  // A handshake the kernel completes takes microseconds on loopback; one
  // dropped for a full backlog is retried after a second.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int connected = 0;
  for (int fd : fds) {
    pollfd p = {fd, POLLOUT, 0};
    int error = 0;
    socklen_t len = sizeof(error);
    if (poll(&p, 1, 0) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 &&
        error == 0) {
      ++connected;
    }
  }
  ASSERT_EQ(kill(server.pid(), SIGCONT), 0);
  EXPECT_EQ(connected, kClients);
  // Every connection is answered.
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  int answered = 0;
  for (int fd : fds) {
    const int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      char buf[256];
      const ssize_t got = recv(fd, buf, sizeof(buf), 0);
      if (got > 12 && std::string(buf, 12) == "HTTP/1.1 200") ++answered;
    }
    close(fd);
  }
  EXPECT_EQ(answered, kClients);
}

TEST_F(ServeTest, ConcurrentChecksAddEachGroupOnce) {
  ServerProcess server(idx_, dir_, {});  // fsync per request: group commit
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  constexpr int kGroups = 100, kThreads = 8;
  std::mt19937_64 rng(9);
  std::vector<uint64_t> groups(kGroups);
  for (uint64_t& g : groups) g = rng();
  std::vector<std::vector<std::pair<int, uint64_t>>> work(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    for (int g = 0; g < kGroups; ++g) work[t].emplace_back(g, uint64_t{1} << (rng() % 64));
    std::shuffle(work[t].begin(), work[t].end(), rng);
  }
  std::vector<int> added(kGroups, 0);
  std::mutex mu;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      httplib::Client c("127.0.0.1", server.port());
      for (const auto& [g, fp] : work[t]) {
        const std::string body = R"({"k":2,"fingerprints":[{"id":"g)" + std::to_string(g) + "-t" +
                                 std::to_string(t) + R"(","fingerprint":")" + Hex(groups[g], fp) +
                                 R"("}]})";
        auto res = c.Post("/v1/check", body, "application/json");
        if (!res || res->status != 200) {
          ++errors;
          continue;
        }
        const Json j = Json::parse(res->body);
        if (j["results"][0]["added"] == true) {
          std::lock_guard lock(mu);
          ++added[g];
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  for (int g = 0; g < kGroups; ++g) EXPECT_EQ(added[g], 1) << "group " << g;
}

// SIGKILL of the server at random moments (seeded) while a client streams
// check batches, 20 times on the same index: after each restart every
// document whose request was answered is found, and the index opens.
TEST_F(ServeTest, KilledAtRandomMomentsLosesNothingAcknowledged) {
  std::mt19937_64 rng(12);
  std::set<std::string> acknowledged;
  int batch_no = 0;
  for (int round = 0; round < 20; ++round) {
    ServerProcess server(idx_, dir_, {});
    ASSERT_GT(server.port(), 0) << "round " << round << ": " << server.stderr_text();
    std::atomic<bool> stop{false};
    std::vector<std::string> acked_now;
    std::thread client([&] {
      httplib::Client c("127.0.0.1", server.port());
      c.set_read_timeout(5, 0);
      while (!stop) {
        std::string body = R"({"fingerprints":[)";
        std::vector<std::string> ids;
        for (int i = 0; i < 10; ++i) {
          ids.push_back("b" + std::to_string(batch_no) + "-" + std::to_string(i));
          body += std::string(i ? "," : "") + R"({"id":")" + ids.back() + R"(","fingerprint":")" +
                  Hex(std::hash<std::string>()(ids.back()) * 0x9e3779b97f4a7c15ULL) + R"("})";
        }
        body += "]}";
        ++batch_no;
        auto res = c.Post("/v1/add", body, "application/json");
        if (!res) break;  // killed
        if (res->status == 200) acked_now.insert(acked_now.end(), ids.begin(), ids.end());
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 300));
    server.Signal(SIGKILL);
    stop = true;
    client.join();
    acknowledged.insert(acked_now.begin(), acked_now.end());
    auto index = DocumentIndex::Open(idx_);
    ASSERT_TRUE(index.ok()) << "round " << round << ": " << index.status().ToString();
    for (const std::string& id : acknowledged) {
      ASSERT_TRUE((*index)->Contains(id))
          << "round " << round << ": acknowledged " << id << " lost";
    }
  }
  EXPECT_GT(acknowledged.size(), 0u);
  std::printf("serve: 20 SIGKILLs, %zu acknowledged documents all found\n", acknowledged.size());
}

// Eight 16 MB bodies of nested arrays (and of nested objects, and of a
// flat array of 8M numbers) sent at once are refused (400) without being
// built: the server's peak memory grows by less than the bodies themselves
// and a bit (they cost ~650 MB each to parse into nlohmann's DOM, 3.6 GB for
// four at once). Under a 3 GiB address-space limit, so that a failing server
// fails the test instead of the machine.
TEST_F(ServeTest, NestedBodiesAreRefusedWithinTheMemoryBudget) {
  if (testing::Sanitized()) GTEST_SKIP() << "address-space limits and sanitizers do not mix";
  ServerProcess server(idx_, dir_, {}, "ulimit -v 3145728");
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  httplib::Client c("127.0.0.1", server.port());
  ExpectHealthy(c);
  const size_t before = PeakResidentBytes(server.pid());
  ASSERT_GT(before, 0u);
  constexpr size_t kDepth = 8'000'000;  // 16,000,000 bytes: under the 16 MiB body limit
  const std::vector<std::pair<std::string, std::string>> bodies = {
      {std::string(kDepth, '[') + std::string(kDepth, ']'), "nested deeper than 32"},
      {[] {
         std::string b;
         for (size_t i = 0; i < kDepth / 5; ++i) b += "{\"a\":";
         b += "1";
         b += std::string(kDepth / 5, '}');
         return b;
       }(),
       "nested deeper than 32"},
      {"{\"documents\":[" +
           [] {
             std::string b = "0";
             for (size_t i = 1; i < kDepth - 4; ++i) b += ",0";
             return b;
           }() +
           "]}",
       "more than 160064 JSON values"},
  };
  constexpr int kClients = 8;
  for (const auto& [body, message] : bodies) {
    ASSERT_LE(body.size(), size_t{16} << 20);
    std::vector<int> statuses(kClients, 0);
    std::vector<std::string> answers(kClients);
    std::vector<std::thread> threads;
    for (int t = 0; t < kClients; ++t) {
      threads.emplace_back([&, t] {
        httplib::Client client("127.0.0.1", server.port());
        client.set_read_timeout(60, 0);
        client.set_write_timeout(60, 0);
        auto res = client.Post("/v1/check", body, "application/json");
        statuses[t] = res ? res->status : -1;
        if (res) answers[t] = res->body;
      });
    }
    for (auto& t : threads) t.join();
    for (int t = 0; t < kClients; ++t) {
      EXPECT_EQ(statuses[t], 400) << answers[t];
      EXPECT_NE(answers[t].find(message), std::string::npos) << answers[t];
    }
  }
  ExpectHealthy(c);
  const size_t after = PeakResidentBytes(server.pid());
  // At most the eight bodies held at once (128 MB), and slack for the
  // allocator: well under one body's DOM (~650 MB).
  EXPECT_LT(after, before + (size_t{192} << 20)) << before << " -> " << after;
  std::printf("serve: 3 x 8 concurrent 16 MB hostile bodies: peak RSS %zu -> %zu MB\n",
              before >> 20, after >> 20);
  int status = 0;
  const Json j =
      Post(c, "/v1/query", R"({"k":0,"fingerprints":[{"fingerprint":")" + Hex(base_[2]) + R"("}]})",
           &status);
  EXPECT_EQ(status, 200) << j;
}

// The requests in flight share --max-request-memory: with five bodies of
// 200,000 bytes being received (announced by Content-Length, charged whole
// before they are read) a sixth does not fit the 1 MiB budget and is
// answered 503 with Retry-After at once; once they are gone it is served.
TEST_F(ServeTest, RequestsBeyondTheMemoryBudgetAre503) {
  signal(SIGPIPE, SIG_IGN);
  ServerProcess server(idx_, dir_,
                       {"--max-body-bytes", "262144", "--max-request-memory", "1048576"});
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  constexpr size_t kLength = 200000;
  std::vector<int> held;
  for (int i = 0; i < 5; ++i) {
    const int fd = ConnectFrom("127.0.0.1", server.port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAll(fd,
                        "POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: "
                        "application/json\r\nContent-Length: " +
                            std::to_string(kLength) + "\r\n\r\n{"));
    held.push_back(fd);
  }
  std::string body = R"({"fingerprints":[{"id":"big","fingerprint":")" + Hex(4242) + R"("}],"x":")";
  body += std::string(kLength - body.size() - 2, 'y') + "\"}";
  ASSERT_EQ(body.size(), kLength);
  httplib::Client c("127.0.0.1", server.port());
  // The five are charged once a worker reads their heads: within moments.
  int status = 0;
  for (int i = 0; i < 100 && status != 503; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto res = c.Post("/v1/query", body, "application/json");
    if (!res) continue;  // closed before the answer was read: try again
    status = res->status;
    if (status == 503) {
      EXPECT_EQ(res->get_header_value("Retry-After"), "1");
      EXPECT_NE(res->body.find("--max-request-memory"), std::string::npos) << res->body;
    }
  }
  EXPECT_EQ(status, 503);
  for (int fd : held) close(fd);
  // Given back when they end.
  for (int i = 0; i < 100 && status != 200; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    httplib::Client again("127.0.0.1", server.port());
    auto res = again.Post("/v1/query", body, "application/json");
    ASSERT_TRUE(res);
    status = res->status;
  }
  EXPECT_EQ(status, 200);
}

// 200 slow clients (each from its own address, as a slowloris spreads
// itself) hold connections with half-sent heads, and 20 more with heads
// sent and bodies half-sent: /healthz and a check from another client are
// answered within a second each (they waited for the slow ones' read
// timeout with a worker thread per connection). A client over
// --max-client-connections is refused with 503 at once.
TEST_F(ServeTest, SlowConnectionsDoNotStarveOthers) {
  signal(SIGPIPE, SIG_IGN);
  ServerProcess server(
      idx_, dir_, {"--read-timeout", "20", "--threads", "64", "--max-client-connections", "4"});
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  std::vector<int> slow;
  for (int i = 0; i < 220; ++i) {
    const std::string from = "127.0.1." + std::to_string(i + 1);
    const int fd = ConnectFrom(from.c_str(), server.port());
    ASSERT_GE(fd, 0) << from;
    ASSERT_TRUE(SendAll(fd, i < 200 ? "POST /v1/check HTTP/1.1\r\nHost: x\r\nX-Slow: 1"
                                    : "POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Length: "
                                      "1000\r\n\r\n{\"fingerprints\":"));
    slow.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  httplib::Client c("127.0.0.1", server.port());
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(5, 0);
  double worst = 0;
  for (int round = 0; round < 5; ++round) {
    auto start = std::chrono::steady_clock::now();
    auto res = c.Get("/healthz");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    int status = 0;
    const Json j = Post(c, "/v1/check",
                        R"({"fingerprints":[{"id":"other)" + std::to_string(round) +
                            R"(","fingerprint":")" + Hex(9000 + round) + R"("}]})",
                        &status);
    EXPECT_EQ(status, 200) << j;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    worst = std::max(worst, seconds);
    // A new connection each round too.
    c.stop();
  }
  EXPECT_LT(worst, 1.0);
  std::printf("serve: 220 slow connections open: /healthz + /v1/check answered in <= %.1f ms\n",
              worst * 1000);
  // The per-client cap: a fifth connection from one address is refused.
  std::vector<int> mine;
  for (int i = 0; i < 4; ++i) {
    const int fd = ConnectFrom("127.0.2.1", server.port());
    ASSERT_GE(fd, 0);
    mine.push_back(fd);
  }
  const int fifth = ConnectFrom("127.0.2.1", server.port());
  ASSERT_GE(fifth, 0);
  const std::string refused = ReadAnswer(fifth, 5);
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  EXPECT_NE(refused.find("--max-client-connections"), std::string::npos) << refused;
  close(fifth);
  for (int fd : mine) close(fd);
  for (int fd : slow) close(fd);
  ExpectHealthy(c);
}

// The request head is bounded: more than 100 header lines, or more than
// 64 KiB of head, is answered 431 before it is parsed, and 5M header lines
// (38 MB; answered 200 after growing the server by 676 MB) cost nothing.
TEST_F(ServeTest, HeaderCountAndBytesAreBounded) {
  signal(SIGPIPE, SIG_IGN);
  ServerProcess server(idx_, dir_, {});
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  httplib::Client c("127.0.0.1", server.port());
  ExpectHealthy(c);
  const size_t before = PeakResidentBytes(server.pid());
  // 100 header lines are served; 101 are not.
  for (const int lines : {99, 100}) {
    std::string head = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
    for (int i = 1; i < lines; ++i) head += "X-H" + std::to_string(i) + ": v\r\n";
    const int fd = ConnectFrom("127.0.0.1", server.port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAll(fd, head + "Connection: close\r\n\r\n"));
    const std::string answer = ReadAnswer(fd, 5);
    close(fd);
    // "Connection: close" is one more line.
    if (lines + 1 <= 100) {
      EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
    } else {
      EXPECT_EQ(answer.rfind("HTTP/1.1 431", 0), 0u) << answer;
      EXPECT_NE(answer.find("more than 100 header lines"), std::string::npos) << answer;
    }
  }
  // One 100 KB header line.
  {
    const int fd = ConnectFrom("127.0.0.1", server.port());
    ASSERT_GE(fd, 0);
    SendAll(fd, "GET /healthz HTTP/1.1\r\nX-Big: " + std::string(100000, 'a') + "\r\n\r\n");
    const std::string answer = ReadAnswer(fd, 5);
    close(fd);
    EXPECT_EQ(answer.rfind("HTTP/1.1 431", 0), 0u) << answer.substr(0, 200);
    EXPECT_NE(answer.find("larger than 65536 bytes"), std::string::npos) << answer.substr(0, 200);
  }
  // 5M header lines, sent as fast as the server takes them; it answers
  // 431 and stops reading: the client's send fails or the answer arrives.
  {
    const int fd = ConnectFrom("127.0.0.1", server.port());
    ASSERT_GE(fd, 0);
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    std::string block = "POST /v1/check HTTP/1.1\r\n";
    while (block.size() < (size_t{1} << 20)) block += "X-A: b\r\n";
    size_t sent = 0;
    while (sent < (size_t{38} << 20) && SendAll(fd, block)) sent += block.size();
    ReadAnswer(fd, 2);
    close(fd);
  }
  ExpectHealthy(c);
  const size_t after = PeakResidentBytes(server.pid());
  // (A sanitizer's allocator keeps what is freed for a while.)
  if (!testing::Sanitized()) {
    EXPECT_LT(after, before + (size_t{16} << 20)) << before << " -> " << after;
  }
  // Each refusal is in the access log, with the access log's fields.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string log = server.stderr_text();
  size_t refusals = 0;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    const Json entry = Json::parse(line, nullptr, false);
    if (!entry.is_object() || entry.value("status", 0) != 431) continue;
    ++refusals;
    EXPECT_TRUE(entry["path"].is_string() && entry["error"].is_string()) << line;
  }
  EXPECT_EQ(refusals, 3u) << log;
}

// A client that sends its request and closes its side of the connection
// (shutdown(SHUT_WR), as `nc -N` does) is still answered.
TEST_F(ServeTest, HalfClosedClientIsAnswered) {
  ServerProcess server(idx_, dir_, {});
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  const int fd = ConnectFrom("127.0.0.1", server.port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  shutdown(fd, SHUT_WR);
  const std::string answer = ReadAnswer(fd, 5);
  close(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
}

// The data segments a TCP socket has received (tcp_info's tcpi_data_segs_in,
// Linux 4.6; at its fixed offset in the kernel's append-only struct, which
// glibc's <netinet/tcp.h> stops short of); -1 when the kernel has none.
long DataSegmentsIn(int fd) {
  constexpr size_t kOffset = 152;
  unsigned char info[256] = {};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, info, &len) != 0 || len < kOffset + 4) return -1;
  uint32_t n = 0;
  std::memcpy(&n, info + kOffset, sizeof(n));
  return n;
}

// Reads one answer with a Content-Length body from `fd` (within 5 s): the
// whole of it, "" when it does not come.
std::string ReadOneAnswer(int fd) {
  std::string out;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    const size_t head_end = out.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const size_t at = out.find("Content-Length: ");
      if (at != std::string::npos && at < head_end &&
          out.size() >= head_end + 4 + std::stoul(out.substr(at + 16))) {
        return out;
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          end - std::chrono::steady_clock::now())
                          .count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) return "";
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return "";
    out.append(buf, static_cast<size_t>(n));
  }
}

// An answer (head and body) goes out in one send, one loopback packet for
// the client to wake up for; a client that asks "Expect: 100-continue" gets
// the interim answer before it sends its body (nothing is held back while
// the server waits to read).
TEST_F(ServeTest, AnAnswerIsOneSegmentAndContinueIsNotHeldBack) {
  ServerProcess server(idx_, dir_, {"--no-sync"});
  ASSERT_GT(server.port(), 0) << server.stderr_text();
  const int fd = ConnectFrom("127.0.0.1", server.port());
  ASSERT_GE(fd, 0);
  const auto request = [](const std::string& id, const std::string& expect) {
    const std::string body = R"({"fingerprints":[{"id":")" + id +
                             R"(","fingerprint":"0000000000000000000000000000ff00"}]})";
    return std::make_pair("POST /v1/check HTTP/1.1\r\nHost: x\r\n" + expect +
                              "Content-Type: application/json\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n",
                          body);
  };
  for (int i = 0; i < 3; ++i) {
    const auto [head, body] = request("one" + std::to_string(i), "");
    const long before = DataSegmentsIn(fd);
    ASSERT_TRUE(SendAll(fd, head + body));
    const std::string answer = ReadOneAnswer(fd);
    ASSERT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
    EXPECT_NE(answer.find(R"({"results":[{"id":"one)"), std::string::npos) << answer;
    if (before < 0) continue;  // a kernel without the count
    // Nothing more comes (a second segment would have arrived by now).
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(DataSegmentsIn(fd) - before, 1) << "answer " << i << " came in more than one segment";
  }
  const auto [head, body] = request("continued", "Expect: 100-continue\r\n");
  ASSERT_TRUE(SendAll(fd, head));
  // What comes (within 2 s) before the body is sent.
  std::string interim;
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 2000) == 1) {
    char buf[256];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n > 0) interim.assign(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(interim.rfind("HTTP/1.1 100 Continue", 0), 0u) << interim;
  ASSERT_TRUE(SendAll(fd, body));
  const std::string answer = ReadOneAnswer(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  close(fd);
}

}  // namespace
}  // namespace neardup
