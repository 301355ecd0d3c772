// Copyright 2026 The neardup Authors.
//
// neardup serve's endpoints (cmd_serve.h): a request body parsed into a
// batch, the TextIndex call, and the answer's JSON (doc/serve.md).

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmd_serve.h"

namespace neardup::cli::serve_internal {

void SetJson(httplib::Response& res, const Json& j) {
  res.status = 200;
  res.set_content(j.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

namespace {

// The HTTP status for a library error.
int StatusCodeOf(const Status& s) {
  if (s.IsInvalidArgument()) {
    return s.message().find("is already in") != std::string::npos ? 409 : 400;
  }
  if (s.IsNotFound()) return 404;
  return 500;
}

Json MatchesJson(const std::vector<DocumentMatch>& matches) {
  Json a = Json::array();
  for (const DocumentMatch& m : matches) a.push_back({{"id", m.id}, {"distance", m.distance}});
  return a;
}

// One item's answer: {"id", "matches"}, then "added" (add, check), and
// "exists" or "empty" when they hold (the text index's policy: an empty
// document has no matches and is never added).
Json ResultJson(const std::string& id, const TextIndexResult& r, bool with_added) {
  Json j = {{"id", id}, {"matches", MatchesJson(r.matches)}};
  if (with_added) j["added"] = r.added;
  if (r.exists) j["exists"] = true;  // left as it is, not added
  if (r.empty) j["empty"] = true;    // no features: never a near duplicate, never added
  return j;
}

Json ResultsJson(const Batch& batch, const std::vector<TextIndexResult>& results, bool with_added,
                 const TextIndex& index) {
  Json out = Json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    out.push_back(ResultJson(batch.ids[i], results[i], with_added));
  }
  return Json{{"results", std::move(out)},
              {"recall_at_max_k", index.documents().recall_at_max_k()}};
}

// Runs Check with `policy` and answers {"results": [{"id", "matches",
// "added"}...]} in request order.
void CheckAndAnswer(TextIndex& index, const Batch& batch, CheckPolicy policy,
                    httplib::Response& res) {
  CheckOptions options;
  options.k = batch.k;
  options.policy = policy;
  options.replace = batch.replace;
  // An id already indexed is that item's answer ("exists"), not the batch's.
  options.skip_existing = true;
  std::vector<TextIndexResult> results;
  const Status s = index.Check(batch.ids, batch.fps, options, &results);
  if (!s.ok()) return SetError(res, StatusCodeOf(s), s.message());
  SetJson(res, ResultsJson(batch, results, policy != CheckPolicy::kQueryOnly, index));
}

}  // namespace

std::optional<bool> Server::ParseBatchFast(std::string_view text, httplib::Response& res,
                                           bool need_ids, Batch* batch) const {
  FastBatchBody body;
  if (!ParseFastBatchBody(text, limits_, &body)) return std::nullopt;
  if (body.k && *body.k > index_->max_k()) return std::nullopt;
  Batch fast;
  fast.k = body.k ? static_cast<int>(*body.k) : -1;
  fast.replace = body.replace.value_or(false);
  // What can be refused is checked before the budget is charged: a refusal
  // is the general path's to answer (which charges the parse itself).
  for (const FastBatchBody::Item& item : body.items) {
    if (need_ids && item.id.empty()) return std::nullopt;
    if (!body.documents) {
      auto fp = Fingerprint::FromHex(DecodeFastString(item.value));
      if (!fp.ok() || fp->bits() != index_->bits()) return std::nullopt;
      fast.fps.push_back(DocumentFingerprint{*fp, 1});
    }
  }
  if (request_lease_ != nullptr && !request_lease_->Take(body.charge)) {
    SetError(res, 503, kBudgetSpentMessage);
    return false;
  }
  for (const FastBatchBody::Item& item : body.items) {
    fast.ids.push_back(item.id.empty() ? std::string() : DecodeFastString(item.id));
    if (body.documents) {
      fast.fps.push_back(
          index_->Fingerprint(DecodeFastString(item.value),
                              item.title.empty() ? std::string() : DecodeFastString(item.title)));
    }
  }
  *batch = std::move(fast);
  return true;
}

bool Server::ParseBatch(const std::string& text, httplib::Response& res, bool need_ids,
                        Batch* batch) const {
  if (const std::optional<bool> answered = ParseBatchFast(text, res, need_ids, batch)) {
    return *answered;
  }
  Json body;
  if (auto error = ParseJsonBody(text, limits_, request_lease_, &body)) {
    SetError(res, error->status, error->message);
    return false;
  }
  if (!body.is_object()) {
    SetError(res, 400, "the body must be a JSON object");
    return false;
  }
  if (auto k = body.find("k"); k != body.end()) {
    if (!k->is_number_integer() || *k < 0 || *k > index_->max_k()) {
      SetError(
          res, 400,
          "k must be an integer from 0 to the index's max k " + std::to_string(index_->max_k()));
      return false;
    }
    batch->k = k->get<int>();
  }
  if (auto r = body.find("replace"); r != body.end()) {
    if (!r->is_boolean()) {
      SetError(res, 400, "replace must be true or false");
      return false;
    }
    batch->replace = r->get<bool>();
  }
  const auto docs = body.find("documents");
  const auto fps = body.find("fingerprints");
  if ((docs == body.end()) == (fps == body.end())) {
    SetError(res, 400, "the body needs exactly one of \"documents\" and \"fingerprints\"");
    return false;
  }
  const bool texts = docs != body.end();
  const Json& items = texts ? *docs : *fps;
  const char* name = texts ? "documents" : "fingerprints";
  if (!items.is_array()) {
    SetError(res, 400, std::string(name) + " must be an array");
    return false;
  }
  if (items.size() > flags_.max_batch) {
    SetError(res, 413,
             std::to_string(items.size()) + " items; at most " + std::to_string(flags_.max_batch) +
                 " per request (--max-batch)");
    return false;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const Json& item = items[i];
    const std::string where = std::string(name) + "[" + std::to_string(i) + "]";
    if (!item.is_object()) {
      SetError(res, 400, where + " must be an object");
      return false;
    }
    std::string id;
    if (auto it = item.find("id"); it != item.end()) {
      if (!it->is_string()) {
        SetError(res, 400, where + ".id must be a string");
        return false;
      }
      id = it->get<std::string>();
    } else if (need_ids) {
      SetError(res, 400, where + " needs an \"id\"");
      return false;
    }
    const char* field = texts ? "text" : "fingerprint";
    auto value = item.find(field);
    if (value == item.end() || !value->is_string()) {
      SetError(res, 400, where + "." + field + " must be a string");
      return false;
    }
    if (texts) {
      std::string title;
      if (auto t = item.find("title"); t != item.end()) {
        if (!t->is_string()) {
          SetError(res, 400, where + ".title must be a string");
          return false;
        }
        title = t->get<std::string>();
      }
      const std::string& text = value->get_ref<const std::string&>();
      batch->fps.push_back(index_->Fingerprint(text, title));
    } else {
      auto fp = Fingerprint::FromHex(value->get_ref<const std::string&>());
      if (!fp.ok() || fp->bits() != index_->bits()) {
        SetError(res, 400,
                 where + ".fingerprint: " +
                     (fp.ok() ? "a " + std::to_string(fp->bits()) + "-bit fingerprint in a " +
                                    std::to_string(index_->bits()) + "-bit index"
                              : fp.status().message()));
        return false;
      }
      batch->fps.push_back(DocumentFingerprint{*fp, 1});
    }
    batch->ids.push_back(std::move(id));
  }
  return true;
}

void Server::HandleQuery(const std::string& body, httplib::Response& res) {
  Batch batch;
  if (!ParseBatch(body, res, /*need_ids=*/false, &batch)) return;
  // A query takes the readers' side of the lock only: Query, not Check.
  std::vector<TextIndexResult> results;
  const Status s = index_->Query(batch.fps, batch.k, &results);
  if (!s.ok()) return SetError(res, StatusCodeOf(s), s.message());
  SetJson(res, ResultsJson(batch, results, /*with_added=*/false, *index_));
}

void Server::HandleAdd(const std::string& body, httplib::Response& res) {
  Batch batch;
  if (!ParseBatch(body, res, /*need_ids=*/true, &batch)) return;
  CheckAndAnswer(*index_, batch, CheckPolicy::kAddAlways, res);
}

void Server::HandleCheck(const std::string& body, httplib::Response& res) {
  Batch batch;
  if (!ParseBatch(body, res, /*need_ids=*/true, &batch)) return;
  CheckAndAnswer(*index_, batch, CheckPolicy::kAddIfNew, res);
}

void Server::HandleRemove(const std::string& text, httplib::Response& res) {
  Json body;
  if (auto error = ParseJsonBody(text, limits_, request_lease_, &body)) {
    return SetError(res, error->status, error->message);
  }
  const auto ids = body.is_object() ? body.find("ids") : body.end();
  if (ids == body.end() || !ids->is_array()) {
    return SetError(res, 400, "the body must be an object with \"ids\": an array of strings");
  }
  if (ids->size() > flags_.max_batch) {
    return SetError(res, 413,
                    std::to_string(ids->size()) + " ids; at most " +
                        std::to_string(flags_.max_batch) + " per request (--max-batch)");
  }
  std::vector<std::string> list;
  for (const Json& id : *ids) {
    if (!id.is_string()) return SetError(res, 400, "ids must be strings");
    list.push_back(id.get<std::string>());
  }
  std::vector<std::string> missing;
  auto removed = index_->Remove(list, &missing);
  if (!removed.ok())
    return SetError(res, StatusCodeOf(removed.status()), removed.status().message());
  SetJson(res, Json{{"removed", *removed}, {"missing", missing}});
}

// {"name": NAME}: a consistent copy of the index, every change acknowledged
// before the request included, written as --snapshot-dir/NAME (and
// NAME.ids) while requests go on (DocumentIndex::SaveSnapshot).
void Server::HandleSnapshot(const std::string& text, httplib::Response& res) {
  if (flags_.snapshot_dir.empty()) {
    return SetError(res, 403, "snapshots are off: start the server with --snapshot-dir DIR");
  }
  Json body;
  if (auto error = ParseJsonBody(text, limits_, request_lease_, &body)) {
    return SetError(res, error->status, error->message);
  }
  const auto name = body.is_object() ? body.find("name") : body.end();
  if (name == body.end() || !name->is_string()) {
    return SetError(res, 400, "the body must be an object with \"name\": a string");
  }
  const std::string n = name->get<std::string>();
  const bool plain =
      !n.empty() && n.size() <= 200 && n[0] != '.' && std::all_of(n.begin(), n.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
      });
  if (!plain) {
    return SetError(res, 400,
                    "name must be 1 to 200 letters, digits, '.', '_' or '-', not starting "
                    "with '.'");
  }
  const std::string dest = flags_.snapshot_dir + "/" + n;
  const Status s = index_->SaveSnapshot(dest);
  if (!s.ok()) {
    const bool exists = s.message().find("already exists") != std::string::npos;
    return SetError(res, exists ? 409 : StatusCodeOf(s), s.message());
  }
  SetJson(res, Json{{"path", dest}});
}

void Server::HandleStats(httplib::Response& res) {
  // The same object as `neardup index stats --json` (text_index.h).
  res.status = 200;
  res.set_content(TextIndexStatsJson(index_->Stats()), "application/json");
}

}  // namespace neardup::cli::serve_internal
