// Copyright 2026 The neardup Authors.
//
// serve's request limits without a server (tools/neardup/serve_request.h):
// where a head ends and when it is refused, the JSON parser's depth and
// value caps at their edges, the memory budget shared by requests, and the
// batch bodies' fast path against the general parser.

#include "serve_request.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace neardup::cli {
namespace {

RequestLimits SmallLimits() {
  RequestLimits limits;
  limits.max_batch = 4;  // 128 JSON values
  limits.max_json_depth = 5;
  limits.max_head_bytes = 200;
  limits.max_headers = 3;
  return limits;
}

TEST(ScanRequestHeadTest, FindsTheBlankLineWithinTheLimits) {
  const RequestLimits limits = SmallLimits();
  const std::string head = "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
  for (size_t n = 0; n < head.size(); ++n) {
    EXPECT_EQ(ScanRequestHead(head.substr(0, n), limits).kind, HeadScan::kIncomplete) << n;
  }
  const HeadScan done = ScanRequestHead(head + "BODY", limits);
  EXPECT_EQ(done.kind, HeadScan::kComplete);
  EXPECT_EQ(done.head_bytes, head.size());
  // A fourth header line is one too many, found before the blank line.
  EXPECT_EQ(ScanRequestHead("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n", limits).kind,
            HeadScan::kTooManyHeaders);
  // 200 bytes without the blank line: too large; the blank line within
  // them: complete.
  EXPECT_EQ(ScanRequestHead("GET / HTTP/1.1\r\nA: " + std::string(300, 'x'), limits).kind,
            HeadScan::kTooLarge);
  const std::string exact = "GET / HTTP/1.1\r\nA: " + std::string(200 - 23, 'x') + "\r\n\r\n";
  ASSERT_EQ(exact.size(), 200u);
  EXPECT_EQ(ScanRequestHead(exact, limits).kind, HeadScan::kComplete);
  EXPECT_EQ(ScanRequestHead(exact.substr(0, 199) + "x", limits).kind, HeadScan::kTooLarge);
  // Lines ended by LF alone never end the head (httplib needs CRLF).
  EXPECT_EQ(ScanRequestHead("GET / HTTP/1.1\n\n", limits).kind, HeadScan::kIncomplete);
}

TEST(ParseJsonBodyTest, DepthAndValueCapsAtTheirEdges) {
  const RequestLimits limits = SmallLimits();
  ServeJson out;
  EXPECT_FALSE(ParseJsonBody("[[[[[1]]]]]", limits, nullptr, &out));  // depth 5
  EXPECT_EQ(out[0][0][0][0][0], 1);
  auto deep = ParseJsonBody("[[[[[[1]]]]]]", limits, nullptr, &out);  // depth 6
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->status, 400);
  EXPECT_NE(deep->message.find("nested deeper than 5"), std::string::npos) << deep->message;
  auto objects = ParseJsonBody(R"({"a":{"a":{"a":{"a":{"a":{"a":1}}}}}})", limits, nullptr, &out);
  ASSERT_TRUE(objects);
  EXPECT_EQ(objects->status, 400);
  // 64 + 16 * 4 = 128 values: an array and 127 numbers fit, 128 do not.
  auto array = [](int n) {
    std::string s = "[";
    for (int i = 0; i < n; ++i) s += i ? ",0" : "0";
    return s + "]";
  };
  EXPECT_FALSE(ParseJsonBody(array(127), limits, nullptr, &out));
  EXPECT_EQ(out.size(), 127u);
  auto many = ParseJsonBody(array(128), limits, nullptr, &out);
  ASSERT_TRUE(many);
  EXPECT_EQ(many->status, 400);
  EXPECT_NE(many->message.find("more than 128 JSON values"), std::string::npos) << many->message;
  // Not JSON, trailing bytes, ill-formed UTF-8: 400 with the parser's words.
  for (const char* bad : {"{", "{} x", "\"\xff\"", ""}) {
    auto e = ParseJsonBody(bad, limits, nullptr, &out);
    ASSERT_TRUE(e) << bad;
    EXPECT_EQ(e->status, 400);
    EXPECT_NE(e->message.find("not valid JSON"), std::string::npos) << e->message;
  }
}

TEST(RequestBudgetTest, LeasesShareTheLimitAndGiveItBack) {
  RequestBudget budget(1000);
  {
    RequestBudget::Lease a(&budget);
    EXPECT_TRUE(a.Take(600));
    RequestBudget::Lease b(&budget);
    EXPECT_FALSE(b.Take(401));  // nothing taken
    EXPECT_EQ(budget.held(), 600u);
    EXPECT_TRUE(b.Take(400));
    EXPECT_FALSE(b.Take(1));
    EXPECT_EQ(budget.held(), 1000u);
  }
  EXPECT_EQ(budget.held(), 0u);
  // What a parse builds is charged: 64 bytes a value and its strings.
  RequestLimits limits;
  ServeJson out;
  RequestBudget small(200);
  RequestBudget::Lease lease(&small);
  auto e = ParseJsonBody(R"(["a","b","c","d"])", limits, &lease, &out);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 503);
  EXPECT_NE(e->message.find("--max-request-memory"), std::string::npos) << e->message;
  // The parse's refusal is answered as the body reader's is: with Retry-After.
  httplib::Response res;
  SetError(res, e->status, e->message);
  EXPECT_EQ(res.status, 503);
  EXPECT_EQ(res.get_header_value("Retry-After"), "1");
  EXPECT_EQ(res.get_header_value_count("Retry-After"), 1u);
  RequestBudget enough(1000);
  RequestBudget::Lease fits(&enough);
  EXPECT_FALSE(ParseJsonBody(R"(["a","b","c","d"])", limits, &fits, &out));
  EXPECT_EQ(fits.bytes(), 5 * kJsonValueBytes + 4);
}

// The fast path's reading of `body` against the general parser's: when the
// fast path takes a body, nlohmann takes it too, with the same items, k,
// replace and budget charge. Returns whether the fast path took it.
bool FastMatchesGeneral(const std::string& body, const RequestLimits& limits) {
  FastBatchBody fast;
  if (!ParseFastBatchBody(body, limits, &fast)) return false;
  RequestBudget budget(size_t{1} << 30);
  RequestBudget::Lease lease(&budget);
  ServeJson j;
  const auto error = ParseJsonBody(body, limits, &lease, &j);
  EXPECT_FALSE(error) << body << ": " << error->message;
  if (error) return true;
  EXPECT_EQ(fast.charge, lease.bytes()) << body;
  const char* name = fast.documents ? "documents" : "fingerprints";
  const char* field = fast.documents ? "text" : "fingerprint";
  EXPECT_TRUE(j.contains(name)) << body;
  EXPECT_FALSE(j.contains(fast.documents ? "fingerprints" : "documents")) << body;
  const ServeJson& items = j[name];
  EXPECT_EQ(items.size(), fast.items.size()) << body;
  for (size_t i = 0; i < std::min<size_t>(items.size(), fast.items.size()); ++i) {
    const FastBatchBody::Item& item = fast.items[i];
    EXPECT_EQ(items[i].size(), 1u + !item.id.empty() + !item.title.empty()) << body;
    EXPECT_EQ(DecodeFastString(item.value), items[i][field].get<std::string>()) << body;
    if (!item.id.empty()) {
      EXPECT_EQ(DecodeFastString(item.id), items[i]["id"].get<std::string>());
    }
    if (!item.title.empty()) {
      EXPECT_EQ(DecodeFastString(item.title), items[i]["title"].get<std::string>());
    }
  }
  EXPECT_EQ(fast.k.has_value(), j.contains("k")) << body;
  if (fast.k && j.contains("k")) {
    EXPECT_EQ(*fast.k, j["k"].get<long>()) << body;
  }
  EXPECT_EQ(fast.replace.has_value(), j.contains("replace")) << body;
  if (fast.replace && j.contains("replace")) {
    EXPECT_EQ(*fast.replace, j["replace"].get<bool>());
  }
  return true;
}

TEST(FastBatchBodyTest, TakesTheCommonBodiesWithTheGeneralParsersValues) {
  const RequestLimits limits = SmallLimits();
  for (
      const std::string body : {
          R"({"documents":[{"id":"a","text":"hello"}]})",
          R"( { "fingerprints" : [ {"fingerprint":"00ff","id":"x"} , {"id":"y","fingerprint":"01"} ] , "k" : 3 } )",
          "{\"documents\":[{\"id\":\"\u6e56\u4eba\",\"text\":\"湖人消息：比赢球开心10倍\","
          "\"title\":\"\U0001F600 t\"}],\"replace\":true}",
          R"({"k":0,"replace":false,"documents":[]})",
          R"({"documents":[{"text":"a\"b\\c\/d\b\f\n\r\t\u0000\u00e9\u4e2d\uFFFF"}]})",
          R"({"documents":[{"id":"","text":""}]})",
          "{\"documents\":[{\"text\":\"\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\xe0\xa0\x80\xc2\x80\"}]}",
      }) {
    EXPECT_TRUE(FastMatchesGeneral(body, limits)) << body;
  }
}

TEST(FastBatchBodyTest, LeavesEverythingElseToTheGeneralParser) {
  const RequestLimits limits = SmallLimits();  // max_batch 4, depth 5
  for (const std::string body : {
           R"({"documents":[{"id":"a","text":"x"}],"other":1})",    // another key
           R"({"documents":[{"id":"a","text":"x","lang":"zh"}]})",  // another item key
           R"({"fingerprints":[{"id":"a","fingerprint":"00","title":"t"}]})",
           R"({"documents":[{"id":"a","text":"x","id":"b"}]})",  // a key twice
           R"({"documents":[],"documents":[]})",
           R"({"documents":[],"fingerprints":[]})",
           R"({"k":3})",                                           // no items
           R"({"d\u006fcuments":[{"id":"a","text":"x"}]})",        // an escaped key
           R"({"documents":[{"id":"a","text":"\ud83d\ude00"}]})",  // a surrogate pair
           R"({"documents":[{"id":"a","text":"\ud83d"}]})",        // a lone surrogate
           R"({"documents":[{"id":"a","text":"\x"}]})",            // a bad escape
           R"({"documents":[{"id":"a","text":"\u12g4"}]})",
           "{\"documents\":[{\"id\":\"a\",\"text\":\"\t\"}]}",                // a raw control
           "{\"documents\":[{\"id\":\"a\",\"text\":\"\xc0\x80\"}]}",          // overlong
           "{\"documents\":[{\"id\":\"a\",\"text\":\"\xed\xa0\x80\"}]}",      // surrogate
           "{\"documents\":[{\"id\":\"a\",\"text\":\"\xf4\x90\x80\x80\"}]}",  // > U+10FFFF
           "{\"documents\":[{\"id\":\"a\",\"text\":\"\xe4\xb8\"}]}",          // cut short
           "\xef\xbb\xbf{\"documents\":[]}",                                  // a BOM
           R"({"documents":[],"k":3.0})",
           R"({"documents":[],"k":-1})",
           R"({"documents":[],"k":03})",
           R"({"documents":[],"k":1e2})",
           R"({"documents":[],"k":1234567890})",
           R"({"documents":[],"replace":1})",
           R"({"documents":[],"replace":null})",
           R"({"documents":[{"id":"a","text":"x"},]})",   // a trailing comma
           R"({"documents":[{"id":"a","text":"x"}]} x)",  // trailing bytes
           R"({"documents":[{"id":"a","text":"x"}])",     // cut short
           R"({"documents":[{"id":"a"}]})",               // no text
           R"({"documents":[{"id":1,"text":"x"}]})",      // a number id
           R"({"documents":{"id":"a","text":"x"}})",      // not an array
           R"({"documents":[{},{}]})",
           R"([])",
           R"("x")",
           "",
           // Five items: more than max_batch.
           R"({"fingerprints":[{"fingerprint":"0"},{"fingerprint":"0"},{"fingerprint":"0"},)"
           R"({"fingerprint":"0"},{"fingerprint":"0"}]})",
       }) {
    FastBatchBody fast;
    EXPECT_FALSE(ParseFastBatchBody(body, limits, &fast)) << body;
  }
  // Four items: at max_batch, taken.
  EXPECT_TRUE(FastMatchesGeneral(
      R"({"fingerprints":[{"fingerprint":"0"},{"fingerprint":"0"},{"fingerprint":"0"},)"
      R"({"fingerprint":"0"}]})",
      limits));
}

// Bodies changed a byte at a time: whatever the fast path takes, the
// general parser takes with the same values.
TEST(FastBatchBodyTest, MutatedBodiesNeverDisagree) {
  RequestLimits limits;
  const std::string bases[] = {
      "{\"documents\":[{\"id\":\"u1\",\"text\":\"湖人 a\\n\\u00e9\",\"title\":\"t\"},"
      "{\"id\":\"u2\",\"text\":\"x\"}],\"k\":12,\"replace\":false}",
      R"({"fingerprints":[{"id":"a","fingerprint":"0123456789abcdef"},{"id":"b","fingerprint":"ff"}]})",
  };
  const std::string alphabet = "{}[],:\"\\u0123456789abcdefnrt xyz\t\n\x80\xbf\xc2\xe4\xed\xf4\xff";
  std::mt19937 rng(7);
  size_t taken = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string body = bases[round % 2];
    for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) {
      const size_t at = rng() % (body.size() + 1);
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          if (at < body.size()) body[at] = c;
          break;
        case 1:
          body.insert(body.begin() + static_cast<long>(at), c);
          break;
        default:
          if (at < body.size()) body.erase(at, 1);
      }
    }
    taken += FastMatchesGeneral(body, limits);
    if (HasFailure()) break;
  }
  EXPECT_GT(taken, 1000u);  // the mutations that keep a body valid
}

// The access log's line, built without a JSON tree, is the line the tree
// gave: the same fields in the same order with the same values, strings of
// any content (quotes, backslashes, control characters, UTF-8, invalid
// UTF-8 replaced), one line.
TEST(AccessLogLineTest, IsTheJsonTreesLine) {
  const std::string odd[] = {"",
                             "/v1/check",
                             "/a \"quoted\" \\ path",
                             std::string("/nul\0byte", 9),
                             "/tab\tnew\nline\x01\x1f\x7f",
                             "/\xe4\xb8\xad\xe6\x96\x87",
                             "/bad\xff\xfeutf8\xc3"};
  for (const std::string& path : odd) {
    for (const char* error : {static_cast<const char*>(nullptr), "refused: \"x\"", ""}) {
      const double ts = 1795795195.123456;
      const std::string line =
          AccessLogLine(ts, "127.0.0.1", path.empty() ? "" : "POST", path, 404, 17, 1234, error);
      ASSERT_FALSE(line.empty());
      EXPECT_EQ(line.back(), '\n');
      EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
      ServeJson want = {
          {"ts", ts},         {"remote", "127.0.0.1"}, {"method", path.empty() ? "" : "POST"},
          {"path", path},     {"status", 404},         {"bytes_in", 17},
          {"bytes_out", 1234}};
      if (error != nullptr) want["error"] = error;
      const ServeJson got = ServeJson::parse(line);
      // Compared as text: the tree's own dump of each (invalid UTF-8
      // replaced in both).
      EXPECT_EQ(
          got.dump(-1, ' ', false, ServeJson::error_handler_t::replace),
          ServeJson::parse(want.dump(-1, ' ', false, ServeJson::error_handler_t::replace)).dump())
          << line;
      EXPECT_EQ(got["ts"].get<double>(), ts);
    }
  }
}

}  // namespace
}  // namespace neardup::cli
