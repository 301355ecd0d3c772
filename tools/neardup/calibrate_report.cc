// Copyright 2026 The neardup Authors.
//
// neardup calibrate's report: the reasoning in words, the HTML page (inline
// SVG plots drawn here, no script, no external resource) and the JSON.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "calibrate.h"

namespace neardup::cli::calibrate {
namespace {

std::string Format(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

std::string Str(size_t v) { return std::to_string(v); }
std::string Str(int v) { return std::to_string(v); }

// The sampled pairs' Jaccard values by distance (size max_k + 1).
std::vector<std::vector<double>> JaccardByDistance(const Report& r) {
  std::vector<std::vector<double>> j(static_cast<size_t>(r.max_k) + 1);
  for (const SamplePair& p : r.pairs) j[static_cast<size_t>(p.distance)].push_back(p.jaccard);
  return j;
}

// Sampled documents whose nearest neighbour is within d.
uint64_t WithinCount(const Report& r, int d) {
  uint64_t n = 0;
  for (int i = 0; i <= d && i < static_cast<int>(r.nn_histogram.size()); ++i) {
    n += r.nn_histogram[static_cast<size_t>(i)];
  }
  return n;
}

uint64_t PairsWithin(const Report& r, int d) {
  uint64_t n = 0;
  for (int i = 0; i <= d && i < static_cast<int>(r.pair_histogram.size()); ++i) {
    n += r.pair_histogram[static_cast<size_t>(i)];
  }
  return n;
}

std::string Percent(uint64_t part, size_t whole) {
  return whole == 0
             ? "0 %"
             : Format("%.1f %%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

// ---------------------------------------------------------------------------
// SVG plots. Coordinates: a plot area of kW x kH inside margins.

constexpr int kLeft = 64, kRight = 16, kTop = 28, kBottom = 44, kW = 900, kH = 220;

struct Marker {
  double x = 0;
  std::string label;
  std::string color;
};

double XOf(double x, size_t n) { return kLeft + (x + 0.5) * kW / static_cast<double>(n); }

std::string SvgOpen(const std::string& title) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Str(kLeft + kW + kRight) +
         "\" height=\"" + Str(kTop + kH + kBottom) + "\" viewBox=\"0 0 " +
         Str(kLeft + kW + kRight) + " " + Str(kTop + kH + kBottom) +
         "\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\"><title>" + HtmlEscape(title) +
         "</title><text x=\"" + Str(kLeft) + "\" y=\"16\" font-size=\"13\" font-weight=\"bold\">" +
         HtmlEscape(title) + "</text>";
}

// The x axis: a tick every `step` categories, the label below.
std::string XAxis(size_t n, const std::string& label) {
  std::string s = "<line x1=\"" + Str(kLeft) + "\" y1=\"" + Str(kTop + kH) + "\" x2=\"" +
                  Str(kLeft + kW) + "\" y2=\"" + Str(kTop + kH) + "\" stroke=\"#333\"/>";
  const size_t step = std::max<size_t>(1, (n + 31) / 32);
  for (size_t i = 0; i < n; i += step) {
    const std::string x = Format("%.1f", XOf(static_cast<double>(i), n));
    s += "<line x1=\"" + x + "\" y1=\"" + Str(kTop + kH) + "\" x2=\"" + x + "\" y2=\"" +
         Str(kTop + kH + 4) + "\" stroke=\"#333\"/><text x=\"" + x + "\" y=\"" +
         Str(kTop + kH + 16) + "\" text-anchor=\"middle\">" + Str(i) + "</text>";
  }
  s += "<text x=\"" + Str(kLeft + kW / 2) + "\" y=\"" + Str(kTop + kH + 36) +
       "\" text-anchor=\"middle\">" + HtmlEscape(label) + "</text>";
  return s;
}

// y in [0, top] (linear) or log10(1 + y) in [0, log10(1 + top)].
struct YScale {
  bool log = false;
  double top = 1;
  double Map(double y) const {
    const double f = log ? std::log10(1 + y) / std::log10(1 + top) : y / top;
    return kTop + kH - f * kH;
  }
};

std::string YAxis(const YScale& y, const std::string& label, bool fraction) {
  std::string s = "<line x1=\"" + Str(kLeft) + "\" y1=\"" + Str(kTop) + "\" x2=\"" + Str(kLeft) +
                  "\" y2=\"" + Str(kTop + kH) + "\" stroke=\"#333\"/>";
  std::vector<double> ticks;
  if (y.log) {
    for (double t = 1; t <= y.top; t *= 10) ticks.push_back(t);
    ticks.insert(ticks.begin(), 0);
  } else {
    for (int i = 0; i <= 4; ++i) ticks.push_back(y.top * i / 4);
  }
  for (const double t : ticks) {
    const std::string py = Format("%.1f", y.Map(t));
    std::string text = fraction ? Format("%.2f", t) : Format("%.0f", t);
    s += "<line x1=\"" + Str(kLeft - 4) + "\" y1=\"" + py + "\" x2=\"" + Str(kLeft + kW) +
         "\" y2=\"" + py + "\" stroke=\"#ddd\"/><text x=\"" + Str(kLeft - 6) + "\" y=\"" + py +
         "\" dy=\"4\" text-anchor=\"end\">" + text + "</text>";
  }
  s += "<text transform=\"translate(14," + Str(kTop + kH / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + HtmlEscape(label) + "</text>";
  return s;
}

std::string Markers(const std::vector<Marker>& markers, size_t n) {
  std::string s;
  int row = 0;
  for (const Marker& m : markers) {
    const std::string x = Format("%.1f", XOf(m.x, n));
    // Labels near the right end go to the left of their line.
    const bool right = XOf(m.x, n) > kLeft + 0.75 * kW;
    s += "<line x1=\"" + x + "\" y1=\"" + Str(kTop) + "\" x2=\"" + x + "\" y2=\"" + Str(kTop + kH) +
         "\" stroke=\"" + m.color + "\" stroke-width=\"2\" stroke-dasharray=\"5,3\"/><text x=\"" +
         x + (right ? "\" dx=\"-4\" text-anchor=\"end\" y=\"" : "\" dx=\"4\" y=\"") +
         Str(kTop + 12 + 13 * row++) + "\" fill=\"" + m.color + "\">" + HtmlEscape(m.label) +
         "</text>";
  }
  return s;
}

std::string BarChart(const std::string& title, const std::string& xlabel, const std::string& ylabel,
                     const std::vector<uint64_t>& values, bool log_y,
                     const std::vector<double>* line, const std::vector<Marker>& markers) {
  const size_t n = std::max<size_t>(values.size(), 1);
  YScale y;
  y.log = log_y;
  for (const uint64_t v : values) y.top = std::max(y.top, static_cast<double>(v));
  if (!log_y) y.top = std::ceil(y.top / 4) * 4;
  std::string s = SvgOpen(title) + YAxis(y, ylabel, false);
  const double w = static_cast<double>(kW) / static_cast<double>(n);
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] == 0) continue;
    const double top = y.Map(static_cast<double>(values[i]));
    s += "<rect x=\"" + Format("%.2f", kLeft + static_cast<double>(i) * w + 0.1 * w) + "\" y=\"" +
         Format("%.2f", top) + "\" width=\"" + Format("%.2f", 0.8 * w) + "\" height=\"" +
         Format("%.2f", kTop + kH - top) + "\" fill=\"#4a7ab5\"><title>" + Str(i) + ": " +
         std::to_string(values[i]) + "</title></rect>";
  }
  if (line != nullptr && !line->empty()) {
    s += "<polyline fill=\"none\" stroke=\"#e08a1e\" stroke-width=\"1.5\" points=\"";
    for (size_t i = 0; i < line->size(); ++i) {
      s += Format("%.1f", XOf(static_cast<double>(i), n)) + "," +
           Format("%.1f", y.Map((*line)[i])) + " ";
    }
    s += "\"/>";
  }
  s += Markers(markers, n) + XAxis(n, xlabel) + "</svg>";
  return s;
}

std::string JaccardChart(const Report& r, const std::vector<std::vector<double>>& by_distance) {
  const size_t n = by_distance.size();
  YScale y;
  y.top = 1;
  std::string s =
      SvgOpen(
          "Exact character 5-gram Jaccard of the sampled pairs, by distance (dots; the line: "
          "median)") +
      YAxis(y, "5-gram Jaccard", true);
  const std::string bar = Format("%.1f", y.Map(r.min_jaccard));
  s += "<line x1=\"" + Str(kLeft) + "\" y1=\"" + bar + "\" x2=\"" + Str(kLeft + kW) + "\" y2=\"" +
       bar + "\" stroke=\"#999\" stroke-dasharray=\"2,2\"/>";
  std::string medians;
  for (size_t d = 0; d < n; ++d) {
    for (const double j : by_distance[d]) {
      s += "<circle cx=\"" + Format("%.1f", XOf(static_cast<double>(d), n)) + "\" cy=\"" +
           Format("%.1f", y.Map(j)) + "\" r=\"3\" fill=\"#4a7ab5\" fill-opacity=\"0.6\"/>";
    }
    if (!by_distance[d].empty()) {
      medians += Format("%.1f", XOf(static_cast<double>(d), n)) + "," +
                 Format("%.1f", y.Map(Median(by_distance[d]))) + " ";
    }
  }
  s += "<polyline fill=\"none\" stroke=\"#c0392b\" stroke-width=\"1.5\" points=\"" + medians +
       "\"/>";
  s += Markers({{static_cast<double>(r.recommendation.k),
                 "recommended " + ThresholdWords(r, r.recommendation.k), "#c0392b"}},
               n);
  s += XAxis(n, r.minhash ? "d = unequal signature components" : "Hamming distance") + "</svg>";
  return s;
}

// One side of a pair: the text with the runs only on this side marked.
std::string SideHtml(const SamplePair& p, bool a_side) {
  const std::u32string& text = a_side ? p.text_a : p.text_b;
  std::string s;
  for (const DiffRun& run : p.diff) {
    const size_t begin = a_side ? run.a_begin : run.b_begin;
    const size_t end = a_side ? run.a_end : run.b_end;
    if (begin == end) continue;
    const std::string escaped =
        HtmlEscape(Utf8(std::u32string_view(text).substr(begin, end - begin)));
    if (run.kind == DiffRun::kEqual) {
      s += escaped;
    } else {
      s += a_side ? "<del>" + escaped + "</del>" : "<ins>" + escaped + "</ins>";
    }
  }
  const size_t full = a_side ? p.length_a : p.length_b;
  if (full > text.size()) {
    s += "<span class=\"cut\">[… " + Str(full - text.size()) + " more characters not shown]</span>";
  }
  return s;
}

constexpr char kStyle[] = R"(
body{font-family:sans-serif;margin:24px;max-width:1180px;color:#222}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f0f0f0}.rec{background:#eef6ee;border:1px solid #9c9;padding:10px 16px;border-radius:4px}
.rec .k{font-size:20px;font-weight:bold}.pair{border:1px solid #ccc;margin:10px 0;padding:6px}
.pair .head{font-size:12px;color:#444;margin-bottom:4px;word-break:break-all}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:8px}
.side{white-space:pre-wrap;word-break:break-all;font-size:12px;font-family:monospace;background:#fafafa;
border:1px solid #eee;padding:4px;max-height:320px;overflow:auto}
del{background:#f6c6c6;text-decoration:none}ins{background:#c6ecc6;text-decoration:none}
.cut{color:#888;font-style:italic}code{word-break:break-all}.note{color:#555;font-size:13px}tr.k td{background:#eef6ee}
)";

}  // namespace

std::vector<std::string> Reasoning(const Report& r) {
  const Recommendation& rec = r.recommendation;
  const std::vector<double> s = Smooth(r.nn_histogram);
  const auto at = [&](int d) { return Format("%.2f", s[static_cast<size_t>(d)]); };
  const auto share = [&](int d) {
    return Format("%.2f", rec.window_share[static_cast<size_t>(d)]);
  };
  std::vector<std::string> out;
  out.push_back(
      "The nearest neighbour of each of " + Str(r.sampled) + " documents (" +
      (r.whole_corpus ? std::string("every non-empty document of the corpus")
                      : "a sample drawn with seed " + std::to_string(r.seed) + " from the " +
                            Str(r.documents - r.empty) + " non-empty documents") +
      ") was found by an exact scan of the whole corpus. Documents that have a copy make a mode "
      "at small distances, documents that have none a background mode at large distances; the "
      "threshold belongs in the valley between them. Which distances hold copies is decided by "
      "text, not by the shape alone: a sampled pair is a near-duplicate when its exact character "
      "5-gram Jaccard is >= " +
      Format("%.2f", r.min_jaccard) + ", and a distance d passes when at least " +
      Format("%.0f %%", 100 * r.min_share) + " of the pairs sampled at d - 1, d and d + 1 are.");
  if (!rec.has_pairs) {
    out.push_back("No pair of documents lies within d = " + Str(r.max_k) +
                  ", so there is no evidence either way: the recommendation is " +
                  (r.minhash ? std::string("estimated Jaccard 0.5, d = ")
                             : std::string("the method's default, k = ")) +
                  Str(rec.k) + ".");
  } else {
    std::string p;
    if (rec.passing >= 0) {
      p = "Scanning down from d = " + Str(r.max_k) +
          ", the first distance that passes is d = " + Str(rec.passing) + " (share " +
          share(rec.passing) + ")";
    } else {
      p = "No distance passes";
    }
    if (rec.failing >= 0) {
      p += "; the distance above it nearest to it with sampled pairs, d = " + Str(rec.failing) +
           ", fails (share " + share(rec.failing) + ").";
    } else {
      p += "; no distance above it up to " + Str(r.max_k) + " has sampled pairs.";
    }
    out.push_back(p);
    p = "Between d = " + Str(rec.lo) + " and d = " + Str(rec.hi) +
        ", the smoothed nearest-neighbour histogram (kernel (1, 2, 1) / 4) is lowest at d = " +
        Str(rec.valley_run_begin) + " (" + at(rec.valley_run_begin) + " documents)";
    if (rec.valley_run_end > rec.valley_run_begin) {
      p += " and stays that low up to d = " + Str(rec.valley_run_end) +
           "; the middle of that run is taken";
    }
    p += ". Below it, the duplicate mode is at d = " + Str(rec.duplicate_mode) + " (" +
         at(rec.duplicate_mode) +
         "); above it, the highest point (the background mode, where the corpus has one) is at d "
         "= " +
         Str(rec.background_mode) + " (" + at(rec.background_mode) + ").";
    out.push_back(p);
  }
  const uint64_t within = WithinCount(r, rec.k);
  std::string p = "Recommended: " + ThresholdWords(r, rec.k) + ". At that threshold " +
                  std::to_string(within) + " of the " + Str(r.sampled) + " documents (" +
                  Percent(within, r.sampled) + ") have a near-duplicate, and " +
                  std::to_string(PairsWithin(r, rec.k)) + " pairs of documents are within it.";
  if (r.method_default_k >= 0 && r.method_default_k != rec.k) {
    const uint64_t at_default = WithinCount(r, r.method_default_k);
    p += " The method's default, k = " + Str(r.method_default_k) + ", gives " +
         std::to_string(at_default) + " (" + Percent(at_default, r.sampled) + ").";
  }
  out.push_back(p);
  if (r.join_recall < 1) {
    out.push_back("The pair counts and sampled pairs come from " + r.join +
                  ": a pair at distance " + Str(r.max_k) + " is found with probability " +
                  Format("%.4f", r.join_recall) +
                  ", closer pairs with higher probability; the nearest-neighbour histogram is "
                  "exact.");
  }
  return out;
}

std::string RenderHtml(const Report& r) {
  const Recommendation& rec = r.recommendation;
  const auto by_distance = JaccardByDistance(r);
  const std::string xlabel = r.minhash
                                 ? "d = unequal signature components of " + Str(r.max_distance) +
                                       " (estimated Jaccard = 1 - d / " + Str(r.max_distance) + ")"
                                 : "Hamming distance of " + Str(r.max_distance) + " bits";
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>neardup "
      "calibration report</title><style>" +
      std::string(kStyle) + "</style></head><body>\n";
  h += "<h1>neardup calibration report</h1>\n<p class=\"note\">Inputs: ";
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    h += (i ? ", " : "") + std::string("<code>") + HtmlEscape(r.inputs[i]) + "</code>";
  }
  h += "<br>Method <code>" + HtmlEscape(r.method) + "</code>; " + Str(r.documents) +
       " documents (" + Str(r.empty) + " without features, never compared); " +
       (r.whole_corpus ? "every non-empty document" : "a sample of " + Str(r.sampled)) + " (seed " +
       std::to_string(r.seed) + "); boilerplate " + HtmlEscape(r.boilerplate) +
       "; pairs within d = " + Str(r.max_k) + " by " + HtmlEscape(r.join) + "; " +
       Format("%.2f", r.seconds_total) + " s.</p>\n";

  h += "<div class=\"rec\"><div class=\"k\">Recommended: " + HtmlEscape(ThresholdWords(r, rec.k)) +
       "</div>";
  for (const std::string& p : Reasoning(r)) h += "<p>" + HtmlEscape(p) + "</p>";
  h += "<p>Use it: <code>" +
       HtmlEscape(r.minhash ? "neardup dedup --method minhash,threshold=" +
                                  Format("%.4g", 1 - static_cast<double>(rec.k) / r.max_distance)
                            : "neardup dedup -k " + Str(rec.k)) +
       " ...</code> (with the same method and input options).</p></div>\n";

  h += "<h2>Nearest-neighbour distances</h2>\n";
  std::vector<Marker> markers = {
      {static_cast<double>(rec.k), "recommended " + ThresholdWords(r, rec.k), "#c0392b"},
      {static_cast<double>(rec.background_mode), "highest above k: d = " + Str(rec.background_mode),
       "#555"}};
  if (r.method_default_k >= 0) {
    markers.push_back({static_cast<double>(r.method_default_k),
                       "method default k = " + Str(r.method_default_k), "#1e8449"});
  }
  // The plot stops a little after the farthest nearest neighbour (the JSON
  // has every distance).
  size_t shown = static_cast<size_t>(r.max_k) + 1;
  for (size_t d = 0; d < r.nn_histogram.size(); ++d) {
    if (r.nn_histogram[d] > 0) shown = std::max(shown, d + 1);
  }
  shown = std::min(r.nn_histogram.size(), shown + shown / 8 + 2);
  const std::vector<uint64_t> nn(r.nn_histogram.begin(),
                                 r.nn_histogram.begin() + static_cast<std::ptrdiff_t>(shown));
  const std::vector<double> smooth = Smooth(nn);
  h += BarChart("Distance to the nearest neighbour (bars: documents; line: smoothed)", xlabel,
                "documents", nn, false, &smooth, markers);
  h += "\n<h2>All pairs within d = " + Str(r.max_k) + "</h2>\n";
  h +=
      BarChart("Pairs of documents at each distance (log scale)", xlabel, "pairs", r.pair_histogram,
               true, nullptr, {{static_cast<double>(rec.k), "recommended", "#c0392b"}});
  h += "\n";
  h += JaccardChart(r, by_distance);

  h += "\n<h2>By distance</h2>\n<table><tr><th>d</th>";
  if (r.minhash) h += "<th>est. Jaccard</th>";
  h += "<th>nearest neighbours at d</th><th>documents with one within d</th><th>pairs at "
       "d</th><th>sampled pairs</th><th>share with Jaccard &gt;= bar, d &#177; 1</th><th>median "
       "5-gram Jaccard</th><th>min</th></tr>\n";
  for (int d = 0; d <= r.max_k; ++d) {
    const auto& js = by_distance[static_cast<size_t>(d)];
    h += std::string(d == rec.k ? "<tr class=\"k\">" : "<tr>") + "<td>" + Str(d) + "</td>";
    if (r.minhash) {
      h += "<td>" + Format("%.4f", 1 - static_cast<double>(d) / r.max_distance) + "</td>";
    }
    h += "<td>" + std::to_string(r.nn_histogram[static_cast<size_t>(d)]) + "</td><td>" +
         std::to_string(WithinCount(r, d)) + " (" + Percent(WithinCount(r, d), r.sampled) +
         ")</td><td>" + std::to_string(r.pair_histogram[static_cast<size_t>(d)]) + "</td><td>" +
         Str(js.size()) + "</td><td>" +
         (rec.window_share[static_cast<size_t>(d)] < 0
              ? ""
              : Format("%.2f", rec.window_share[static_cast<size_t>(d)])) +
         "</td><td>" + (js.empty() ? "" : Format("%.3f", Median(js))) + "</td><td>" +
         (js.empty() ? "" : Format("%.3f", *std::min_element(js.begin(), js.end()))) +
         "</td></tr>\n";
  }
  h += "</table>\n";

  h += "<h2 id=\"pairs\">Sampled pairs</h2>\n<p class=\"note\">Up to " + Str(r.pairs_per_distance) +
       " pairs per distance, drawn uniformly (seed " + std::to_string(r.seed) +
       ") from all pairs found at that distance. Texts are shown normalized (what is "
       "fingerprinted, before boilerplate removal); <del>red</del>: only in the left text, "
       "<ins>green</ins>: only in the right one (a character diff). Pairs within 3 of the "
       "recommendation are open.</p>\n";
  int current = -1;
  for (const SamplePair& p : r.pairs) {
    if (p.distance != current) {
      if (current >= 0) h += "</details>\n";
      current = p.distance;
      const bool open = std::abs(current - rec.k) <= 3;
      h += std::string("<details") + (open ? " open" : "") + "><summary>d = " + Str(current) +
           (r.minhash ? " (estimated Jaccard " +
                            Format("%.4f", 1 - static_cast<double>(current) / r.max_distance) + ")"
                      : "") +
           ": " + Str(by_distance[static_cast<size_t>(current)].size()) +
           " sampled pairs</summary>\n";
    }
    h += "<div class=\"pair\"><div class=\"head\">d = " + Str(p.distance) + ", 5-gram Jaccard " +
         Format("%.3f", p.jaccard) + ": <b>" + HtmlEscape(p.id_a) + "</b> (" + Str(p.length_a) +
         " characters) and <b>" + HtmlEscape(p.id_b) + "</b> (" + Str(p.length_b) + " characters)" +
         (p.diff_complete ? ""
                          : "; too different for a character diff: only the shared start "
                            "and end are marked") +
         "</div><div class=\"sides\"><div class=\"side\">" + SideHtml(p, true) +
         "</div><div class=\"side\">" + SideHtml(p, false) + "</div></div></div>\n";
  }
  if (current >= 0) h += "</details>\n";
  if (r.pairs.empty()) h += "<p>No pair of documents lies within d = " + Str(r.max_k) + ".</p>\n";
  h += "<h2>Timing</h2><p class=\"note\">read and fingerprint " + Format("%.2f", r.seconds_read) +
       " s, nearest neighbours " + Format("%.2f", r.seconds_nearest) + " s, pairs " +
       Format("%.2f", r.seconds_pairs) + " s, sampled pairs (texts, Jaccard, diff) " +
       Format("%.2f", r.seconds_samples) + " s; total " + Format("%.2f", r.seconds_total) +
       " s.</p>\n</body></html>\n";
  return h;
}

nlohmann::ordered_json ToJson(const Report& r, const std::vector<std::string>& ids) {
  using nlohmann::ordered_json;
  const Recommendation& rec = r.recommendation;
  ordered_json nearest = ordered_json::array();
  for (const Nearest& n : r.nearest) {
    nearest.push_back(
        {{"id", ids[n.doc]}, {"nearest", ids[n.neighbour]}, {"distance", n.distance}});
  }
  ordered_json samples = ordered_json::array();
  for (const SamplePair& p : r.pairs) {
    samples.push_back({{"a", p.id_a},
                       {"b", p.id_b},
                       {"distance", p.distance},
                       {"jaccard", p.jaccard},
                       {"length_a", p.length_a},
                       {"length_b", p.length_b},
                       {"diff_complete", p.diff_complete}});
  }
  ordered_json window = ordered_json::array();
  for (const double w : rec.window_share) window.push_back(w >= 0 ? ordered_json(w) : nullptr);
  ordered_json o = {
      {"inputs", r.inputs},
      {"method", r.method},
      {"distance", r.minhash ? "minhash unequal components" : "hamming"},
      {"max_distance", r.max_distance},
      {"max_k", r.max_k},
      {"method_default_k", r.method_default_k >= 0 ? ordered_json(r.method_default_k) : nullptr},
      {"documents", r.documents},
      {"empty", r.empty},
      {"sampled", r.sampled},
      {"whole_corpus", r.whole_corpus},
      {"seed", r.seed},
      {"boilerplate", r.boilerplate},
      {"nearest_neighbour", {{"histogram", r.nn_histogram}, {"documents", nearest}}},
      {"pairs",
       {{"join", r.join},
        {"recall_at_max_k", r.join_recall},
        {"histogram", r.pair_histogram},
        {"per_distance", r.pairs_per_distance},
        {"samples", samples}}},
      {"recommendation",
       {{"k", rec.k},
        {"threshold", r.minhash ? ordered_json(1 - static_cast<double>(rec.k) / r.max_distance)
                                : ordered_json(rec.k)},
        {"passing", rec.passing},
        {"failing", rec.failing},
        {"valley_range", {rec.lo, rec.hi}},
        {"valley_run", {rec.valley_run_begin, rec.valley_run_end}},
        {"duplicate_mode", rec.duplicate_mode},
        {"background_mode", rec.background_mode},
        {"min_jaccard", r.min_jaccard},
        {"min_share", r.min_share},
        {"window_share", window},
        {"documents_within_k", WithinCount(r, rec.k)},
        {"pairs_within_k", PairsWithin(r, rec.k)},
        {"reasoning", Reasoning(r)}}},
      {"seconds",
       {{"read", r.seconds_read},
        {"nearest", r.seconds_nearest},
        {"pairs", r.seconds_pairs},
        {"samples", r.seconds_samples},
        {"total", r.seconds_total}}}};
  return o;
}

}  // namespace neardup::cli::calibrate
