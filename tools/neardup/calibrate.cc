// Copyright 2026 The neardup Authors.

#include "calibrate.h"

#include <algorithm>
#include <cstdio>

#include "neardup/code_points.h"

namespace neardup::cli::calibrate {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// The n-grams of `s` as views, sorted and distinct.
std::vector<std::u32string_view> Ngrams(std::u32string_view s, size_t n) {
  std::vector<std::u32string_view> grams;
  if (s.empty()) return grams;
  if (s.size() < n) {
    grams.push_back(s);
    return grams;
  }
  grams.reserve(s.size() - n + 1);
  for (size_t i = 0; i + n <= s.size(); ++i) grams.push_back(s.substr(i, n));
  std::sort(grams.begin(), grams.end());
  grams.erase(std::unique(grams.begin(), grams.end()), grams.end());
  return grams;
}

}  // namespace

std::string Utf8(std::u32string_view s) {
  std::string out;
  for (const char32_t c : s) AppendUtf8(c, &out);
  return out;
}

std::u32string CodePoints(std::string_view s) { return Utf8CodePoints(s); }

double CharNgramJaccard(std::u32string_view a, std::u32string_view b, int n) {
  const auto ga = Ngrams(a, static_cast<size_t>(n));
  const auto gb = Ngrams(b, static_cast<size_t>(n));
  if (ga.empty() && gb.empty()) return 0;
  size_t shared = 0;
  for (size_t i = 0, j = 0; i < ga.size() && j < gb.size();) {
    if (ga[i] < gb[j]) {
      ++i;
    } else if (gb[j] < ga[i]) {
      ++j;
    } else {
      ++shared, ++i, ++j;
    }
  }
  return static_cast<double>(shared) / static_cast<double>(ga.size() + gb.size() - shared);
}

std::vector<DiffRun> Diff(std::u32string_view a, std::u32string_view b, size_t max_edits,
                          bool* complete) {
  *complete = true;
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  const std::u32string_view x = a.substr(prefix, a.size() - prefix - suffix);
  const std::u32string_view y = b.substr(prefix, b.size() - prefix - suffix);
  const long n = static_cast<long>(x.size());
  const long m = static_cast<long>(y.size());

  // One entry per position of the middle parts: which ops, in order.
  enum Op : char { kKeep, kDelete, kInsert };
  std::vector<Op> ops;
  const long limit = std::min<long>(n + m, static_cast<long>(max_edits));
  std::vector<long> v(static_cast<size_t>(2 * limit + 3), 0);
  const long offset = limit + 1;
  // trace[d] holds v[-d .. d] as it was before step d.
  std::vector<std::vector<long>> trace;
  long found = -1;
  for (long d = 0; d <= limit && found < 0; ++d) {
    trace.emplace_back(v.begin() + offset - d, v.begin() + offset + d + 1);
    for (long k = -d; k <= d; k += 2) {
      long xi = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]))
                    ? v[offset + k + 1]
                    : v[offset + k - 1] + 1;
      long yi = xi - k;
      while (xi < n && yi < m && x[xi] == y[yi]) ++xi, ++yi;
      v[offset + k] = xi;
      if (xi >= n && yi >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) {
    *complete = false;
    ops.assign(x.size(), kDelete);
    ops.insert(ops.end(), y.size(), kInsert);
  } else {
    long xi = n, yi = m;
    for (long d = found; d > 0; --d) {
      const std::vector<long>& pv = trace[static_cast<size_t>(d)];
      const auto at = [&](long k) { return pv[static_cast<size_t>(k + d)]; };
      const long k = xi - yi;
      const long prev_k = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
      const long prev_x = at(prev_k);
      const long prev_y = prev_x - prev_k;
      while (xi > prev_x && yi > prev_y) ops.push_back(kKeep), --xi, --yi;
      ops.push_back(prev_k == k + 1 ? kInsert : kDelete);
      xi = prev_x, yi = prev_y;
    }
    while (xi > 0 && yi > 0) ops.push_back(kKeep), --xi, --yi;
    std::reverse(ops.begin(), ops.end());
  }

  std::vector<DiffRun> runs;
  const auto add = [&runs](DiffRun::Kind kind, size_t ai, size_t bi) {
    const size_t da = kind == DiffRun::kOnlyB ? 0 : 1;
    const size_t db = kind == DiffRun::kOnlyA ? 0 : 1;
    if (!runs.empty() && runs.back().kind == kind) {
      runs.back().a_end += da;
      runs.back().b_end += db;
    } else {
      runs.push_back(DiffRun{kind, ai, ai + da, bi, bi + db});
    }
  };
  size_t ai = 0, bi = 0;
  for (; ai < prefix; ++ai, ++bi) add(DiffRun::kEqual, ai, bi);
  for (const Op op : ops) {
    if (op == kKeep) {
      add(DiffRun::kEqual, ai++, bi++);
    } else if (op == kDelete) {
      add(DiffRun::kOnlyA, ai++, bi);
    } else {
      add(DiffRun::kOnlyB, ai, bi++);
    }
  }
  for (size_t i = 0; i < suffix; ++i) add(DiffRun::kEqual, ai++, bi++);
  return runs;
}

std::vector<double> Smooth(const std::vector<uint64_t>& h) {
  std::vector<double> s(h.size());
  for (size_t d = 0; d < h.size(); ++d) {
    const double left = static_cast<double>(d > 0 ? h[d - 1] : h[d]);
    const double right = static_cast<double>(d + 1 < h.size() ? h[d + 1] : h[d]);
    s[d] = (left + 2 * static_cast<double>(h[d]) + right) / 4;
  }
  return s;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double ShareAtLeast(const std::vector<double>& values, double bar) {
  if (values.empty()) return 0;
  const auto n = std::count_if(values.begin(), values.end(), [bar](double v) { return v >= bar; });
  return static_cast<double>(n) / static_cast<double>(values.size());
}

Recommendation Recommend(const std::vector<uint64_t>& nn_histogram,
                         const std::vector<std::vector<double>>& jaccard, int max_k, int fallback,
                         double min_jaccard, double min_share) {
  Recommendation r;
  const std::vector<double> s = Smooth(nn_histogram);
  const auto pairs_at = [&](int d) -> const std::vector<double>* {
    if (d < 0 || d > max_k || static_cast<size_t>(d) >= jaccard.size()) return nullptr;
    return &jaccard[static_cast<size_t>(d)];
  };
  r.window_share.assign(static_cast<size_t>(max_k) + 1, -1);
  for (int d = 0; d <= max_k; ++d) {
    std::vector<double> window;
    for (int w = d - 1; w <= d + 1; ++w) {
      if (const auto* js = pairs_at(w)) window.insert(window.end(), js->begin(), js->end());
    }
    if (!window.empty()) r.window_share[static_cast<size_t>(d)] = ShareAtLeast(window, min_jaccard);
  }
  const auto passes = [&](int d) { return r.window_share[static_cast<size_t>(d)] >= min_share; };
  const auto sampled = [&](int d) { return r.window_share[static_cast<size_t>(d)] >= 0; };
  for (int d = max_k; d >= 0; --d) {
    if (!sampled(d)) continue;
    r.has_pairs = true;
    if (passes(d)) {
      r.passing = d;
      break;
    }
  }
  for (int d = r.passing + 1; d <= max_k; ++d) {
    if (sampled(d)) {
      r.failing = d;
      break;
    }
  }
  if (!r.has_pairs) {
    r.k = r.lo = r.hi = r.valley_run_begin = r.valley_run_end = fallback;
  } else {
    r.lo = std::max(r.passing, 0);
    r.hi = r.failing >= 0 ? r.failing - 1 : max_k;
    if (r.hi < r.lo) r.hi = r.lo;  // passing = -1 and failing = 0
    int first = r.lo;
    for (int d = r.lo + 1; d <= r.hi; ++d) {
      if (s[static_cast<size_t>(d)] < s[static_cast<size_t>(first)]) first = d;
    }
    int end = first;
    while (end + 1 <= r.hi && s[static_cast<size_t>(end + 1)] == s[static_cast<size_t>(first)]) {
      ++end;
    }
    r.valley_run_begin = first;
    r.valley_run_end = end;
    r.k = (first + end) / 2;
  }
  for (int d = 1; d <= r.k; ++d) {
    if (s[static_cast<size_t>(d)] > s[static_cast<size_t>(r.duplicate_mode)]) r.duplicate_mode = d;
  }
  r.background_mode = std::min(r.k + 1, static_cast<int>(s.size()) - 1);
  for (int d = r.background_mode; d < static_cast<int>(s.size()); ++d) {
    if (s[static_cast<size_t>(d)] > s[static_cast<size_t>(r.background_mode)]) {
      r.background_mode = d;
    }
  }
  return r;
}

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (const char32_t c : Utf8CodePoints(s)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // Invalid UTF-8 is U+FFFD already.
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
          AppendUtf8(kReplacement, &out);
        } else {
          AppendUtf8(c, &out);
        }
    }
  }
  return out;
}

std::string ThresholdWords(const Report& report, int distance) {
  char buf[96];
  if (report.minhash) {
    std::snprintf(buf, sizeof buf, "threshold = %.4g",
                  1 - static_cast<double>(distance) / report.max_distance);
  } else {
    std::snprintf(buf, sizeof buf, "k = %d", distance);
  }
  return buf;
}

}  // namespace neardup::cli::calibrate
