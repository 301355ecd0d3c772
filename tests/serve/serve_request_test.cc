// Copyright 2026 The neardup Authors.
//
// serve's request limits without a server (tools/neardup/serve_request.h):
// where a head ends and when it is refused, the JSON parser's depth and
// value caps at their edges, and the memory budget shared by requests.

#include "serve_request.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace neardup::cli
