// Copyright 2026 The neardup Authors.
//
// neardup explain A B: both documents' weighted features side by side, the
// shared and the differing ones, and which features push the fingerprints
// apart.
//
// For bit j, document d accumulates V_d[j] = sum over its features f of
// w_d(f) * s_d(f, j), s = +1 when bit j of f's (position-mixed) hash is 1,
// else -1. The contribution of a feature to bit j's split is
// c(f, j) = (w_a(f) s_a(f, j) - w_b(f) s_b(f, j)) * dir(j), dir(j) = +1 when
// a's bit j is 1 and b's is 0, -1 in the opposite case; a feature absent from
// a document contributes 0 there. sum_f c(f, j) = |V_a[j] - V_b[j]| > 0 for
// every differing bit, so the features with the largest positive c decide
// it; a feature's "push" is the sum of its c over all differing bits.

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "common.h"
#include "neardup/features.h"

namespace neardup::cli {
namespace {

struct ExplainFlags {
  OperandFlags operands;
  int top = 5;  // features listed per differing bit
  PipelineFlags pipeline;
};

// +1 / -1 per bit of the hash SimHash() accumulates for `f`.
std::vector<int> Signs(const WeightedFeature& f, int bits, FeatureHashAlgorithm algorithm) {
  const FeatureHash h = HashWeightedFeature(f, bits, algorithm);
  std::vector<int> s(static_cast<size_t>(bits));
  for (int j = 0; j < bits; ++j) s[static_cast<size_t>(j)] = h.bit(j) ? 1 : -1;
  return s;
}

struct Row {
  std::string text;
  const WeightedFeature* a = nullptr;
  const WeightedFeature* b = nullptr;
  std::vector<int> sign_a, sign_b;
  double push = 0;
};

std::string Fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

int RunExplain(const ExplainFlags& flags) {
  auto docs = LoadOperands(flags.operands, "explain");
  if (!docs.ok()) return Fail(docs.status());
  NEARDUP_RETURN_IF_ERROR_CLI(RequireSimHash(flags.pipeline, "explain"));
  PipelineFlags resolved = flags.pipeline;
  NEARDUP_RETURN_IF_ERROR_CLI(ResolvePipelineFlags(&resolved));
  auto options = MakePipelineOptions(resolved);
  if (!options.ok()) return Fail(options.status());
  auto pipeline = Pipeline::Create(*options);
  if (!pipeline.ok()) return Fail(pipeline.status());
  const int bits = options->bits;
  std::vector<WeightedFeature> features[2];
  DocumentFingerprint fps[2];
  for (int i = 0; i < 2; ++i) {
    const Document& doc = (*docs)[static_cast<size_t>(i)];
    (*pipeline)->Features(doc.text, doc.title, &features[i]);
    fps[i] = (*pipeline)->FingerprintFeatures(features[i]);
  }

  // Rows: a's features in a's order, then b's features not in a.
  std::vector<Row> rows;
  std::map<std::string, size_t> row_of;
  for (int i = 0; i < 2; ++i) {
    for (const WeightedFeature& f : features[i]) {
      auto [it, inserted] = row_of.try_emplace(f.text, rows.size());
      if (inserted) rows.push_back(Row{f.text, nullptr, nullptr, {}, {}, 0});
      Row& row = rows[it->second];
      (i == 0 ? row.a : row.b) = &f;
      (i == 0 ? row.sign_a : row.sign_b) = Signs(f, bits, options->hash);
    }
  }
  // Differing bits and each row's contribution to them.
  std::vector<int> differing;
  for (int j = 0; j < bits; ++j) {
    if (fps[0].fingerprint.bit(j) != fps[1].fingerprint.bit(j)) differing.push_back(j);
  }
  const auto contribution = [&](const Row& r, int j) {
    const double va = r.a ? r.a->weight * r.sign_a[static_cast<size_t>(j)] : 0.0;
    const double vb = r.b ? r.b->weight * r.sign_b[static_cast<size_t>(j)] : 0.0;
    return (va - vb) * (fps[0].fingerprint.bit(j) ? 1.0 : -1.0);
  };
  for (Row& r : rows) {
    for (int j : differing) r.push += contribution(r, j);
  }
  std::vector<size_t> by_push(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) by_push[i] = i;
  std::stable_sort(by_push.begin(), by_push.end(),
                   [&](size_t x, size_t y) { return rows[x].push > rows[y].push; });
  const auto deciders = [&](int j) {
    std::vector<std::pair<double, size_t>> c;
    for (size_t i = 0; i < rows.size(); ++i) {
      const double v = contribution(rows[i], j);
      if (v > 0) c.emplace_back(v, i);
    }
    std::stable_sort(c.begin(), c.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    if (c.size() > static_cast<size_t>(flags.top)) c.resize(static_cast<size_t>(flags.top));
    return c;
  };
  const auto sum = [&](int doc, int j) {
    double v = 0;
    for (const Row& r : rows) {
      const WeightedFeature* f = doc == 0 ? r.a : r.b;
      if (f) v += f->weight * (doc == 0 ? r.sign_a : r.sign_b)[static_cast<size_t>(j)];
    }
    return v;
  };
  const int distance = HammingDistance(fps[0].fingerprint, fps[1].fingerprint);
  const std::string settings = resolved.method + " (features " + resolved.features + ", weights " +
                               resolved.weights + ", top " + std::to_string(resolved.top_k) + ", " +
                               std::to_string(bits) + " bits, " + resolved.hash + ")";
  const auto status_of = [](const Row& r) {
    if (r.a && r.b) {
      return std::string(r.a->position != r.b->position ? "shared, moved" : "shared");
    }
    return std::string(r.a ? "only a" : "only b");
  };

  if (flags.operands.json) {
    using nlohmann::ordered_json;
    ordered_json feats = ordered_json::array();
    for (const Row& r : rows) {
      ordered_json f = {{"feature", r.text}, {"status", status_of(r)}};
      f["weight_a"] = r.a ? ordered_json(r.a->weight) : ordered_json(nullptr);
      f["weight_b"] = r.b ? ordered_json(r.b->weight) : ordered_json(nullptr);
      if ((r.a && r.a->position >= 0) || (r.b && r.b->position >= 0)) {
        f["position_a"] = r.a ? ordered_json(r.a->position) : ordered_json(nullptr);
        f["position_b"] = r.b ? ordered_json(r.b->position) : ordered_json(nullptr);
      }
      f["push"] = r.push;
      feats.push_back(std::move(f));
    }
    ordered_json pushing = ordered_json::array();
    for (size_t i : by_push) {
      if (rows[i].push > 0) pushing.push_back({{"feature", rows[i].text}, {"push", rows[i].push}});
    }
    ordered_json bits_json = ordered_json::array();
    for (int j : differing) {
      ordered_json d = ordered_json::array();
      for (const auto& [v, i] : deciders(j))
        d.push_back({{"feature", rows[i].text}, {"contribution", v}});
      bits_json.push_back({{"bit", j},
                           {"a", fps[0].fingerprint.bit(j) ? 1 : 0},
                           {"b", fps[1].fingerprint.bit(j) ? 1 : 0},
                           {"v_a", sum(0, j)},
                           {"v_b", sum(1, j)},
                           {"decided_by", std::move(d)}});
    }
    ordered_json out = {
        {"method", resolved.method},
        {"settings", settings},
        {"a", {{"fingerprint", fps[0].fingerprint.ToHex()}, {"features", fps[0].features}}},
        {"b", {{"fingerprint", fps[1].fingerprint.ToHex()}, {"features", fps[1].features}}},
        {"bits", bits},
        {"distance", distance},
        {"features", std::move(feats)},
        {"pushing_apart", std::move(pushing)},
        {"differing_bits", std::move(bits_json)}};
    std::cout << out.dump(-1, ' ', false, ordered_json::error_handler_t::replace) << "\n";
    return kExitOk;
  }

  std::cout << "method: " << settings << "\n";
  std::cout << "a: " << fps[0].fingerprint.ToHex() << " (" << fps[0].features << " features)\n";
  std::cout << "b: " << fps[1].fingerprint.ToHex() << " (" << fps[1].features << " features)\n";
  std::cout << "distance: " << distance << " of " << bits << " bits\n\n";
  std::cout << "features (weight a | weight b | status):\n";
  for (const Row& r : rows) {
    std::cout << "  " << r.text << "\t" << (r.a ? Fmt(r.a->weight) : "-") << "\t"
              << (r.b ? Fmt(r.b->weight) : "-") << "\t" << status_of(r);
    if ((r.a && r.a->position >= 0) || (r.b && r.b->position >= 0)) {
      std::cout << " (position " << (r.a ? std::to_string(r.a->position) : "-") << " | "
                << (r.b ? std::to_string(r.b->position) : "-") << ")";
    }
    std::cout << "\n";
  }
  size_t shared = 0;
  for (const Row& r : rows) shared += (r.a && r.b) ? 1 : 0;
  std::cout << "shared: " << shared << ", only a: " << fps[0].features - shared
            << ", only b: " << fps[1].features - shared << "\n\n";
  if (differing.empty()) {
    std::cout << "the fingerprints are equal\n";
    return kExitOk;
  }
  std::cout << "features pushing the fingerprints apart (sum of contributions over the "
            << differing.size() << " differing bits):\n";
  for (size_t i : by_push) {
    if (rows[i].push <= 0) break;
    std::cout << "  " << rows[i].text << "\t" << Fmt(rows[i].push) << "\t" << status_of(rows[i])
              << "\n";
  }
  std::cout << "\ndiffering bits (V = the bit's weighted sum; decided by the largest "
               "contributions):\n";
  for (int j : differing) {
    std::cout << "  bit " << j << ": a=" << fps[0].fingerprint.bit(j)
              << " b=" << fps[1].fingerprint.bit(j) << " V_a=" << Fmt(sum(0, j))
              << " V_b=" << Fmt(sum(1, j)) << ":";
    for (const auto& [v, i] : deciders(j))
      std::cout << " " << rows[i].text << "(+" << Fmt(v) << ")";
    std::cout << "\n";
  }
  return kExitOk;
}

}  // namespace

void AddExplainCommand(CLI::App& app, ExitCode* exit_code) {
  auto flags = std::make_shared<ExplainFlags>();
  CLI::App* cmd = app.add_subcommand(
      "explain",
      "Show two documents' weighted features side by side, the shared and the differing ones, "
      "and which features push their fingerprints apart");
  AddOperandOptions(cmd, &flags->operands);
  cmd->add_option("--top", flags->top, "Features listed per differing bit")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  AddPipelineOptions(cmd, &flags->pipeline, "nfkc", true);
  cmd->callback([flags, exit_code] { exit_code->value = RunExplain(*flags); });
}

}  // namespace neardup::cli
