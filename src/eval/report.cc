// Copyright 2026 The neardup Authors.
//
// report.md, results.csv, plot data and a gnuplot script of an evaluation run.
// The library runs no process: drawing the plots is the caller's (the CLI runs
// gnuplot on the script when it is installed).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "neardup/eval.h"

namespace neardup {
namespace {

std::string Num(double v, int digits = 4) {
  if (std::isnan(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string Threshold(double v) {
  if (std::isnan(v)) return "";
  if (v == std::floor(v) && v >= 1) return std::to_string(static_cast<int>(v));
  if (v == 0) return "0";
  return Num(v, 2);
}

std::string Pct(double edit) { return std::to_string(static_cast<int>(std::lround(edit * 100))); }

std::string Label(const std::string& method, int bits) {
  return bits == 0 ? method : method + "/" + std::to_string(bits);
}

std::string FileLabel(const std::string& method, int bits) {
  return bits == 0 ? method : method + "_" + std::to_string(bits);
}

Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return Status::IOError("cannot write " + path);
  return Status::OK();
}

std::string CsvRow(const EvalRow& r) {
  std::ostringstream s;
  s << r.method << "," << (r.bits ? std::to_string(r.bits) : "") << "," << Threshold(r.threshold)
    << "," << Num(r.edit, 2) << "," << Num(r.precision) << "," << Num(r.recall) << "," << Num(r.f1)
    << "," << Num(r.dedup_rate) << "," << Num(r.docs_per_s, 1) << "\n";
  return s.str();
}

// Writes `script` (when it draws anything) as dir/plots.gp and records it in
// *files.
Status WritePlotScript(const std::string& dir, const std::string& script, ReportFiles* files) {
  if (files->plots.empty()) return Status::OK();
  NEARDUP_RETURN_IF_ERROR(WriteText(dir + "/plots.gp", script));
  files->plot_scripts.push_back("plots.gp");
  return Status::OK();
}

// The row with the best F1 among `rows` (optionally only precision >= min_p).
const EvalRow* Best(const std::vector<const EvalRow*>& rows, double min_precision) {
  const EvalRow* best = nullptr;
  for (const EvalRow* r : rows) {
    if (r->precision < min_precision) continue;
    if (best == nullptr || r->f1 > best->f1) best = r;
  }
  return best;
}

std::string BestCells(const EvalRow* r, bool dedup) {
  if (r == nullptr) return "| - | - | - | - |" + std::string(dedup ? " - |" : "");
  std::string s = "| " + Threshold(r->threshold) + " | " + Num(r->precision, 3) + " | " +
                  Num(r->recall, 3) + " | " + Num(r->f1, 3) + " |";
  if (dedup) s += " " + Num(r->dedup_rate, 3) + " |";
  return s;
}

// A CSV field: quoted (with quotes doubled) when it holds a comma or quote
// (method texts such as "chars5u,k=32").
std::string CsvField(const std::string& v) {
  if (v.find_first_of(",\"") == std::string::npos) return v;
  std::string q = "\"";
  for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// bands.csv: one line per row and length band.
std::string BandCsvRows(const EvalRow& r, const char* source) {
  std::ostringstream s;
  for (size_t b = 0; b < kLengthBands; ++b) {
    const PairCounts& c = r.bands[b];
    s << source << "," << CsvField(r.method) << "," << (r.bits ? std::to_string(r.bits) : "") << ","
      << Threshold(r.threshold) << "," << Num(r.edit, 2) << "," << LengthBandName(b) << ","
      << r.band_variants[b] << "," << c.true_positives << "," << c.false_positives << ","
      << c.false_negatives << "," << Num(c.precision()) << "," << Num(c.recall()) << ","
      << Num(c.f1()) << "\n";
  }
  return s.str();
}

// A report.md row of the length-band table: the row's P R F1 in all and in
// each band (false pairs in brackets).
std::string BandCells(const EvalRow& r) {
  std::string s = "| " + Num(r.precision, 3) + " " + Num(r.recall, 3) + " **" + Num(r.f1, 3) +
                  "** (" + std::to_string(r.counts.false_positives) + ") |";
  for (size_t b = 0; b < kLengthBands; ++b) {
    const PairCounts& c = r.bands[b];
    s += " " + Num(c.precision(), 3) + " " + Num(c.recall(), 3) + " **" + Num(c.f1(), 3) + "** (" +
         std::to_string(c.false_positives) + ") |";
  }
  return s;
}

}  // namespace

Result<ReportFiles> WriteDocsReport(const DocsEvalReport& report, const std::string& dir) {
  ReportFiles files;
  files.dir = dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::filesystem::create_directories(dir + "/data", ec);
  if (ec) return Status::IOError("cannot create " + dir + ": " + ec.message());

  std::string csv = std::string(kResultsCsvHeader) + "\n";
  for (const EvalRow& r : report.rows) csv += CsvRow(r);
  NEARDUP_RETURN_IF_ERROR(WriteText(dir + "/" + files.results, csv));
  std::string bands = std::string(kBandsCsvHeader) + "\n";
  for (const EvalRow& r : report.dedup_rows) bands += BandCsvRows(r, "dedup");
  for (const EvalRow& r : report.rows) bands += BandCsvRows(r, "scan");
  files.bands = "bands.csv";
  NEARDUP_RETURN_IF_ERROR(WriteText(dir + "/" + files.bands, bands));

  // Rows by (edit, method label), in run order.
  std::vector<std::pair<std::string, int>> methods;
  std::map<std::pair<double, std::string>, std::vector<const EvalRow*>> by;
  for (const EvalRow& r : report.rows) {
    const std::pair<std::string, int> key(r.method, r.bits);
    if (std::find(methods.begin(), methods.end(), key) == methods.end()) methods.push_back(key);
    by[{r.edit, Label(r.method, r.bits)}].push_back(&r);
  }

  const DocsEvalOptions& o = report.options;
  std::ostringstream md;
  md << "# neardup eval docs\n\n";
  md << "- corpus: " << report.corpus_documents << " documents; " << report.originals
     << " with at least " << o.min_chars << " characters are the originals\n";
  md << "- variants: " << report.variants << " per edit ratio (share " << Num(o.share, 2)
     << "), seed " << o.seed << "\n";
  md << "- achieved edit ratio (mean; 1 - LCS / max length):";
  for (const auto& [t, a] : report.achieved_edit)
    md << " T=" << Pct(t) << "%: " << Num(a, 4) << ";";
  md << "\n- natural duplicates among the originals (exact character 3-gram Jaccard >= "
     << Num(o.natural_jaccard, 2) << "): " << report.natural_pairs.size()
     << " pairs; predicted pairs inside such a group that are not variant-original pairs are "
        "counted neither as true nor as false positives (column `natural found`: such pairs "
        "predicted at the best-F1 threshold / all such pairs, variants of natural duplicates "
        "included)\n";
  md << "- a predicted pair: Hamming distance <= k (SimHash), estimated Jaccard >= t over 128 "
        "permutations (minhash, all pairs compared, no LSH misses), equal XXH3 of the "
        "normalized text (exact)\n";
  md << "- dedup rate: share of all documents (originals + variants) whose status is right; "
        "truly duplicate = in a group of two or more, predicted duplicate = any predicted "
        "partner\n";
  md << "- docs/s: fingerprinting throughput of the whole dataset on the run's threads\n\n";

  for (double edit : o.edits) {
    md << "## T = " << Pct(edit) << " %\n\n";
    md << "Best F1 per method (threshold = k for SimHash, Jaccard for minhash), and best F1 "
          "with precision >= 0.98:\n\n";
    md << "| method | bits | thr | P | R | F1 | dedup rate | thr (P>=0.98) | P | R | F1 | "
          "natural found | docs/s |\n";
    md << "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& [name, bits] : methods) {
      const auto it = by.find({edit, Label(name, bits)});
      if (it == by.end()) continue;
      const EvalRow* best = Best(it->second, -1);
      const EvalRow* strict = Best(it->second, 0.98);
      md << "| " << name << " | " << (bits ? std::to_string(bits) : "") << " "
         << BestCells(best, true) << BestCells(strict, false).substr(1) << " "
         << (best ? best->natural_found : 0) << "/" << (best ? best->natural_total : 0) << " | "
         << Num(best ? best->docs_per_s : 0, 0) << " |\n";
    }
    md << "\nBy length band (the original's length in characters; a false pair by its shorter "
          "document's): P R **F1** (false pairs). Rows `dedup`: the dedup job as `neardup "
          "dedup` runs it (verified pairs, boilerplate, the method's k); the other rows: the "
          "scan at the best threshold with P >= 0.98:\n\n";
    md << "| method | bits | thr | all |";
    for (size_t b = 0; b < kLengthBands; ++b) {
      md << " " << LengthBandName(b) << " (" << report.band_originals[b] << ") |";
    }
    md << "\n|---|---|---|---|";
    for (size_t b = 0; b < kLengthBands; ++b) md << "---|";
    md << "\n";
    for (const EvalRow& r : report.dedup_rows) {
      if (r.edit != edit) continue;
      md << "| dedup " << r.method << " | " << (r.bits ? std::to_string(r.bits) : "") << " | "
         << Threshold(r.threshold) << " " << BandCells(r) << "\n";
    }
    for (const auto& [name, bits] : methods) {
      const auto it = by.find({edit, Label(name, bits)});
      if (it == by.end()) continue;
      const EvalRow* strict = Best(it->second, 0.98);
      if (strict == nullptr) continue;
      md << "| " << name << " | " << (bits ? std::to_string(bits) : "") << " | "
         << Threshold(strict->threshold) << " " << BandCells(*strict) << "\n";
    }
    md << "\nSeed 003's operating point (k = 10 at 128 bits, k = 3 at 64 bits):\n\n";
    md << "| method | bits | k | P | R | F1 | dedup rate |\n|---|---|---|---|---|---|---|\n";
    for (const auto& [name, bits] : methods) {
      if (bits == 0) continue;
      const int k = bits == 128 ? 10 : 3;
      for (const EvalRow* r : by[{edit, Label(name, bits)}]) {
        if (static_cast<int>(r->threshold) != k) continue;
        md << "| " << name << " | " << bits << " | " << k << " | " << Num(r->precision, 3) << " | "
           << Num(r->recall, 3) << " | " << Num(r->f1, 3) << " | " << Num(r->dedup_rate, 3)
           << " |\n";
      }
    }
    md << "\n";
  }

  // Plot data and script.
  std::ostringstream gp;
  gp << "set terminal pngcairo size 900,600\nset grid\nset key outside right\n";
  for (double edit : o.edits) {
    std::vector<std::string> series;
    std::vector<std::string> jac;
    for (const auto& [name, bits] : methods) {
      const auto it = by.find({edit, Label(name, bits)});
      if (it == by.end() || name == "exact") continue;
      const std::string file = "data/f1_" + FileLabel(name, bits) + "_T" + Pct(edit) + ".dat";
      std::string dat = "# threshold precision recall f1 dedup_rate\n";
      for (const EvalRow* r : it->second) {
        dat += Num(r->threshold, 2) + " " + Num(r->precision) + " " + Num(r->recall) + " " +
               Num(r->f1) + " " + Num(r->dedup_rate) + "\n";
      }
      NEARDUP_RETURN_IF_ERROR(WriteText(dir + "/" + file, dat));
      files.data.push_back(file);
      (bits ? series : jac)
          .push_back("'" + file + "' using 1:4 with linespoints title '" + Label(name, bits) + "'");
    }
    if (!series.empty()) {
      files.plots.push_back("f1_T" + Pct(edit) + ".png");
      gp << "set output 'f1_T" << Pct(edit) << ".png'\nset title 'F1 against k, T = " << Pct(edit)
         << "%'\nset xlabel 'k (Hamming distance)'\nset ylabel 'F1'\n"
         << "set yrange [0:1]\nplot ";
      for (size_t i = 0; i < series.size(); ++i) gp << (i ? ", " : "") << series[i];
      gp << "\n";
    }
    if (!jac.empty()) {
      files.plots.push_back("f1_minhash_T" + Pct(edit) + ".png");
      gp << "set output 'f1_minhash_T" << Pct(edit)
         << ".png'\nset title 'MinHash F1 against the Jaccard threshold, T = " << Pct(edit)
         << "%'\nset xlabel 'Jaccard threshold'\nset ylabel 'F1'\nset yrange [0:1]\nplot " << jac[0]
         << "\n";
    }
  }
  for (const DistanceHistogram& h : report.histograms) {
    const std::string base = "hist_" + FileLabel(h.method, h.bits) + "_T" + Pct(h.edit);
    uint64_t dup = 0, other = 0;
    for (uint64_t c : h.duplicate) dup += c;
    for (uint64_t c : h.other) other += c;
    std::string dat = "# distance duplicate_share other_share duplicate other\n";
    for (size_t d = 0; d < h.duplicate.size(); ++d) {
      dat += std::to_string(d) + " " +
             Num(dup ? static_cast<double>(h.duplicate[d]) / static_cast<double>(dup) : 0, 6) +
             " " +
             Num(other ? static_cast<double>(h.other[d]) / static_cast<double>(other) : 0, 6) +
             " " + std::to_string(h.duplicate[d]) + " " + std::to_string(h.other[d]) + "\n";
    }
    NEARDUP_RETURN_IF_ERROR(WriteText(dir + "/data/" + base + ".dat", dat));
    files.data.push_back("data/" + base + ".dat");
    files.plots.push_back(base + ".png");
    gp << "set output '" << base << ".png'\nset title 'Hamming distances, "
       << Label(h.method, h.bits) << ", T = " << Pct(h.edit)
       << "%'\nset xlabel 'distance'\nset ylabel 'share of pairs'\nset autoscale y\n"
       << "set xrange [0:" << h.bits << "]\nplot 'data/" << base
       << ".dat' using 1:2 with steps lw 2 title 'variant-original', 'data/" << base
       << ".dat' using 1:3 with steps lw 2 title 'other pairs'\nset autoscale x\n";
  }
  NEARDUP_RETURN_IF_ERROR(WritePlotScript(dir, gp.str(), &files));
  md << "Every row (each method, bits, threshold, edit ratio) is in `results.csv`.\n\n";
  // Last, so that AppendReportNote adds to it.
  md << "## Plots\n\n";
  if (!files.plot_scripts.empty()) {
    md << "Drawn by `gnuplot plots.gp` in this directory from `data/`:\n\n";
    for (double edit : o.edits) {
      const std::string png = "f1_T" + Pct(edit) + ".png";
      if (std::find(files.plots.begin(), files.plots.end(), png) == files.plots.end()) continue;
      md << "- ![F1 against k, T = " << Pct(edit) << "%](" << png << ")\n";
    }
    md << "- distance histograms: `hist_<method>_<bits>_T<pct>.png`\n";
  }
  NEARDUP_RETURN_IF_ERROR(WriteText(dir + "/" + files.report, md.str()));
  return files;
}

Result<ReportFiles> WritePairsReport(const PairsEvalReport& report, const std::string& dir) {
  ReportFiles files;
  files.dir = dir;
  std::error_code ec;
  std::filesystem::create_directories(dir + "/data", ec);
  if (ec) return Status::IOError("cannot create " + dir + ": " + ec.message());
  std::string csv = std::string(kResultsCsvHeader) + "\n";
  for (const PairsEvalMethod& m : report.methods) {
    for (const EvalRow& r : m.rows) csv += CsvRow(r);
  }
  NEARDUP_RETURN_IF_ERROR(WriteText(dir + "/" + files.results, csv));

  std::ostringstream md;
  md << "# neardup eval pairs\n\n- source: " << report.source << "\n- pairs: " << report.pairs
     << " (" << report.positives << " positive)\n- score: the distance (Hamming; minhash: "
     << "128 - equal permutations; exact: 0 or 1); ROC AUC counts ties as 1/2\n\n";
  md << "| method | bits | ROC AUC | best F1 | thr | P | R | docs/s |\n";
  md << "|---|---|---|---|---|---|---|---|\n";
  std::ostringstream gp;
  gp << "set terminal pngcairo size 900,600\nset grid\nset key outside right\n";
  for (const PairsEvalMethod& m : report.methods) {
    const EvalRow* best = nullptr;
    for (const EvalRow& r : m.rows) {
      if (best == nullptr || r.f1 > best->f1) best = &r;
    }
    md << "| " << m.method << " | " << (m.bits ? std::to_string(m.bits) : "") << " | "
       << Num(m.auc, 3) << " | " << (best ? Num(best->f1, 3) : "") << " | "
       << (best ? Threshold(best->threshold) : "") << " | " << (best ? Num(best->precision, 3) : "")
       << " | " << (best ? Num(best->recall, 3) : "") << " | "
       << (best ? Num(best->docs_per_s, 0) : "") << " |\n";
    if (m.bits == 0) continue;
    const std::string base = "hist_" + FileLabel(m.method, m.bits);
    uint64_t pos = 0, neg = 0;
    for (uint64_t c : m.positive_hist) pos += c;
    for (uint64_t c : m.negative_hist) neg += c;
    std::string dat = "# distance positive_share negative_share positive negative\n";
    for (size_t d = 0; d < m.positive_hist.size(); ++d) {
      dat += std::to_string(d) + " " +
             Num(pos ? static_cast<double>(m.positive_hist[d]) / static_cast<double>(pos) : 0, 6) +
             " " +
             Num(neg ? static_cast<double>(m.negative_hist[d]) / static_cast<double>(neg) : 0, 6) +
             " " + std::to_string(m.positive_hist[d]) + " " + std::to_string(m.negative_hist[d]) +
             "\n";
    }
    NEARDUP_RETURN_IF_ERROR(WriteText(dir + "/data/" + base + ".dat", dat));
    files.data.push_back("data/" + base + ".dat");
    files.plots.push_back(base + ".png");
    gp << "set output '" << base << ".png'\nset title 'Hamming distances of labelled pairs, "
       << Label(m.method, m.bits) << "'\nset xlabel 'distance'\nset ylabel 'share of pairs'\n"
       << "set xrange [0:" << m.bits << "]\nplot 'data/" << base
       << ".dat' using 1:2 with steps lw 2 title 'positive (label 1)', 'data/" << base
       << ".dat' using 1:3 with steps lw 2 title 'negative (label 0)'\n";
  }
  NEARDUP_RETURN_IF_ERROR(WritePlotScript(dir, gp.str(), &files));
  md << "\nPrecision and recall at every threshold are in `results.csv`.\n";
  // Last, so that AppendReportNote adds to it.
  md << "\n## Plots\n\n";
  if (!files.plot_scripts.empty()) {
    md << "Drawn by `gnuplot plots.gp` in this directory from `data/`: distance histograms of "
          "positive and negative pairs, `hist_<method>_<bits>.png`.\n";
  }
  NEARDUP_RETURN_IF_ERROR(WriteText(dir + "/" + files.report, md.str()));
  return files;
}

Status AppendReportNote(const ReportFiles& files, std::string_view note) {
  const std::string path = files.dir + "/" + files.report;
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << "\n" << note;
  if (!note.empty() && note.back() != '\n') out << "\n";
  out.close();
  if (!out) return Status::IOError("cannot append to " + path);
  return Status::OK();
}

Result<ReportFiles> WriteNaturalReport(const NaturalEvalReport& report, const std::string& dir) {
  ReportFiles files;
  files.dir = dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError("cannot create " + dir + ": " + ec.message());
  const NaturalEvalOptions& o = report.options;
  std::ostringstream csv;
  csv << "method,cluster,reported,true_pairs,tp,near,fp,below_floor,min_jaccard,precision,recall,"
         "f1,precision_strict,f1_strict,precision_floor,f1_floor,clusters,largest_cluster,purity,"
         "seconds\n";
  std::ostringstream md;
  md << "# neardup eval natural\n\n";
  md << "- documents: " << report.documents << "; character " << o.shingle
     << "-gram sets of all characters (NFKC + case folding"
     << (o.t2s.empty() ? std::string() : ", " + o.t2s)
     << ", white space collapsed), exact Jaccard (prefix-filter join)\n";
  md << "- true pairs (Jaccard >= " << Num(o.truth_jaccard, 2) << "): " << report.truth_pairs
     << "; natural pairs (>= " << Num(o.natural_jaccard, 2) << "): " << report.natural_pairs
     << "; largest cluster of the truth (centre rule over the true pairs, input order): "
     << report.truth_largest_cluster << "\n";
  md << "- a reported pair is true at Jaccard >= " << Num(o.truth_jaccard, 2) << ", near in ["
     << Num(o.natural_jaccard, 2) << ", " << Num(o.truth_jaccard, 2)
     << ") (neither true nor false), false below; boilerplate "
     << BoilerplateModeName(o.boilerplate.mode) << "\n";
  md << "- strict: every reported pair below " << Num(o.truth_jaccard, 2)
     << " is false; floor: only those below " << Num(o.floor_jaccard, 2) << " are\n\n";
  md << "| method | cluster | reported | TP | near | FP | < " << Num(o.floor_jaccard, 2)
     << " | min J | P | R | F1 | P strict | F1 strict | P floor | F1 floor | clusters | largest "
        "| purity |\n";
  md << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const NaturalEvalRow& r : report.rows) {
    const char* rule = ClusterRuleName(r.cluster_rule);
    csv << r.method << "," << rule << "," << r.reported << "," << report.truth_pairs << ","
        << r.counts.true_positives << "," << r.near << "," << r.counts.false_positives << ","
        << r.below_floor << "," << Num(r.min_jaccard) << "," << Num(r.precision) << ","
        << Num(r.recall) << "," << Num(r.f1) << "," << Num(r.precision_strict) << ","
        << Num(r.f1_strict) << "," << Num(r.precision_floor) << "," << Num(r.f1_floor) << ","
        << r.clusters << "," << r.largest_cluster << "," << Num(r.purity) << ","
        << Num(r.seconds, 3) << "\n";
    md << "| " << r.method << " | " << rule << " | " << r.reported << " | "
       << r.counts.true_positives << " | " << r.near << " | " << r.counts.false_positives << " | "
       << r.below_floor << " | " << Num(r.min_jaccard, 3) << " | " << Num(r.precision) << " | "
       << Num(r.recall) << " | " << Num(r.f1) << " | " << Num(r.precision_strict) << " | "
       << Num(r.f1_strict) << " | " << Num(r.precision_floor) << " | " << Num(r.f1_floor) << " | "
       << r.clusters << " | " << r.largest_cluster << " | " << Num(r.purity) << " |\n";
  }
  if (!report.worst.empty()) {
    md << "\nLowest-Jaccard reported pairs (the method's measure: SimHash distance, or "
          "MinHash Jaccard):\n\n| method | a | b | Jaccard | method's measure |\n"
          "|---|---|---|---|---|\n";
    for (const auto& w : report.worst) {
      md << "| " << report.rows[w.row].method << " | " << w.a << " | " << w.b << " | "
         << Num(w.jaccard, 3) << " | "
         << (w.distance < 0 ? "J " + Num(w.method_jaccard, 3) : std::to_string(w.distance))
         << " |\n";
    }
  }
  NEARDUP_RETURN_IF_ERROR(WriteText(dir + "/" + files.results, csv.str()));
  NEARDUP_RETURN_IF_ERROR(WriteText(dir + "/" + files.report, md.str()));
  return files;
}

}  // namespace neardup
