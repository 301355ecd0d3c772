// Copyright 2026 The neardup Authors.
//
// neardup.Index: a thin binding of the library's TextIndex (text_index.h),
// the index behind `neardup index` and `neardup serve` too, so that the
// three give the same answers on the same files: the method read from any
// header version, the boilerplate line counts committed with the index, one
// empty-document policy (never added, no matches), one stats object.

#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "module.h"
#include "neardup/text_index.h"

namespace neardup::python {
namespace {

// Ids and texts of one call: one (a str id) or many (an iterable of ids and
// one of texts, as long).
struct Items {
  bool batch = false;
  std::vector<std::string> ids;
  PinnedTexts texts;
};

Items ItemsOf(const py::handle& ids, const py::handle& texts, const char* what) {
  Items items;
  if (py::isinstance<py::str>(ids)) {
    items.ids.push_back(ids.cast<std::string>());
    items.texts.views.push_back(TextOf(texts, "text"));
    items.texts.refs.push_back(py::reinterpret_borrow<py::object>(texts));
    return items;
  }
  items.batch = true;
  if (!py::isinstance<py::iterable>(ids)) {
    throw py::type_error(std::string(what) + ": id must be a str or an iterable of str, not " +
                         std::string(py::str(ids.get_type().attr("__name__"))));
  }
  for (const py::handle& id : ids.cast<py::iterable>()) {
    if (!py::isinstance<py::str>(id)) {
      throw py::type_error(std::string(what) + ": ids must be str, not " +
                           std::string(py::str(id.get_type().attr("__name__"))));
    }
    items.ids.push_back(id.cast<std::string>());
  }
  if (!py::isinstance<py::iterable>(texts)) {
    throw py::type_error(std::string(what) + ": with a list of ids, texts is a list of texts");
  }
  items.texts = Pin(texts.cast<py::iterable>(), "texts");
  if (items.texts.views.size() != items.ids.size()) {
    throw py::value_error(std::string(what) + ": " + std::to_string(items.ids.size()) +
                          " ids and " + std::to_string(items.texts.views.size()) + " texts");
  }
  return items;
}

py::list Matches(const std::vector<DocumentMatch>& found) {
  py::list out;
  for (const DocumentMatch& m : found) out.append(py::make_tuple(m.id, m.distance));
  return out;
}

// A TextIndex and the lock that keeps it from being closed under a call:
// queries share it; add, check, remove, save and close take it alone.
class PyIndex {
 public:
  static std::unique_ptr<PyIndex> Create(const std::string& path, const py::handle& method_obj,
                                         std::optional<int> max_k, int threads, bool overwrite) {
    Method method = ToMethod(method_obj, "Index.create");
    TextIndexOptions options;
    options.max_k = max_k ? *max_k : -1;
    options.threads = threads;
    options.overwrite = overwrite;
    auto index = std::make_unique<PyIndex>();
    py::gil_scoped_release release;
    index->index_ = Value(TextIndex::Create(path, method, options));
    index->writable_ = true;
    return index;
  }

  static std::unique_ptr<PyIndex> Open(const std::string& path, bool writable,
                                       const std::string& jieba_dir) {
    TextIndexOpenOptions options;
    options.mode = writable ? DocumentIndex::Mode::kReadWrite : DocumentIndex::Mode::kReadOnly;
    options.jieba_dir = jieba_dir;
    auto index = std::make_unique<PyIndex>();
    py::gil_scoped_release release;
    index->index_ = Value(TextIndex::Open(path, options));
    index->writable_ = writable;
    return index;
  }

  // query(text) -> [(id, distance)]; query([texts]) -> one such list each.
  py::object Query(const py::handle& text, std::optional<int> k) const {
    const bool batch = !py::isinstance<py::str>(text) && !py::isinstance<py::bytes>(text);
    PinnedTexts texts;
    if (batch) {
      texts = Pin(text.cast<py::iterable>(), "texts");
    } else {
      texts.views.push_back(TextOf(text, "text"));
    }
    std::vector<TextIndexResult> results;
    {
      py::gil_scoped_release release;
      std::shared_lock<std::shared_mutex> lock(mu_);
      const TextIndex& index = Get();
      const auto fps = Fingerprints(index, texts.views);
      Check(index.Query(fps, k ? *k : -1, &results));
    }
    if (!batch) return Matches(results[0].matches);
    py::list out;
    for (const TextIndexResult& r : results) out.append(Matches(r.matches));
    return out;
  }

  // add(id, text) -> bool; add([ids], [texts]) -> [bool]: True when stored
  // (an empty document is not, and changes nothing).
  py::object Add(const py::handle& id, const py::handle& text, bool replace) {
    const Items items = ItemsOf(id, text, "Index.add");
    std::vector<TextIndexResult> results;
    {
      py::gil_scoped_release release;
      std::unique_lock<std::shared_mutex> lock(mu_);
      TextIndex& index = Get();
      const auto fps = Fingerprints(index, items.texts.views);
      Check(index.Add(items.ids, fps, replace, &results));
    }
    if (!items.batch) return py::bool_(results[0].added);
    py::list out;
    for (const TextIndexResult& r : results) out.append(py::bool_(r.added));
    return out;
  }

  // check(id, text) -> CheckResult (added, matches) with .empty;
  // check([ids], [texts]) -> a list of them. Query-or-add: added when nothing
  // is within k (never when empty).
  py::object CheckText(const py::handle& id, const py::handle& text, std::optional<int> k) {
    const Items items = ItemsOf(id, text, "Index.check");
    std::vector<TextIndexResult> results;
    {
      py::gil_scoped_release release;
      std::unique_lock<std::shared_mutex> lock(mu_);
      TextIndex& index = Get();
      const auto fps = Fingerprints(index, items.texts.views);
      CheckOptions options;
      options.k = k ? *k : -1;
      options.policy = CheckPolicy::kAddIfNew;  // read-only: an error, as before
      Check(index.Check(items.ids, fps, options, &results));
    }
    // neardup.CheckResult: the pair (added, matches) with .empty, the text
    // index's empty-document answer (text_index.h), as serve's "empty".
    const py::object result_type = py::module_::import("neardup").attr("CheckResult");
    const auto one = [&result_type](const TextIndexResult& r) {
      return result_type(r.added, Matches(r.matches), r.empty);
    };
    if (!items.batch) return one(results[0]);
    py::list out;
    for (const TextIndexResult& r : results) out.append(one(r));
    return out;
  }

  // remove(id) or remove([ids]) -> the number removed (ids not indexed are
  // ignored).
  size_t Remove(const py::handle& ids) {
    std::vector<std::string> list;
    if (py::isinstance<py::str>(ids)) {
      list.push_back(ids.cast<std::string>());
    } else {
      for (const py::handle& id : ids.cast<py::iterable>()) list.push_back(id.cast<std::string>());
    }
    py::gil_scoped_release release;
    std::unique_lock<std::shared_mutex> lock(mu_);
    return Value(Get().Remove(list, nullptr));
  }

  // evict(*, max_age=None, max_count=None) -> the number evicted: the
  // documents added more than max_age seconds ago, and the oldest beyond
  // max_count (DocumentIndex::Evict); kept on the next save.
  size_t Evict(std::optional<int64_t> max_age, std::optional<size_t> max_count) {
    EvictionOptions e;
    e.max_age_seconds = max_age;
    e.max_count = max_count;
    py::gil_scoped_release release;
    std::unique_lock<std::shared_mutex> lock(mu_);
    return Value(Get().documents().Evict(e));
  }

  py::object Stats() const {
    std::string json;
    {
      std::shared_lock<std::shared_mutex> lock(mu_);
      json = TextIndexStatsJson(Get().Stats());
    }
    return py::module_::import("json").attr("loads")(json);
  }

  void Save() {
    py::gil_scoped_release release;
    std::unique_lock<std::shared_mutex> lock(mu_);
    Check(Get().Commit());
  }

  // Saves what is not saved yet (a writable index; `save` false: discards
  // it), then releases the index and its lock. A failed save raises and
  // leaves the index open. Closing a closed index does nothing.
  void Close(bool save) {
    py::gil_scoped_release release;
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (!index_) return;
    if (save && writable_) Check(index_->Commit());
    index_.reset();
  }

  std::string Repr() const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (!index_) return "<neardup.Index (closed)>";
    return "<neardup.Index " + py::repr(py::str(index_->path())).cast<std::string>() + " method='" +
           index_->method().ShortName() + "' documents=" + std::to_string(index_->size()) +
           " max_k=" + std::to_string(index_->max_k()) + (writable_ ? " writable" : " read-only") +
           ">";
  }

  size_t Size() const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return Get().size();
  }
  bool Contains(const std::string& id) const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return Get().Contains(id);
  }
  int Bits() const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return Get().bits();
  }
  int MaxK() const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return Get().max_k();
  }
  std::string Path() const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return Get().path();
  }
  PyMethod GetMethod() const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return PyMethod{Get().method()};
  }

 private:
  TextIndex& Get() const {
    if (!index_) Check(Status::InvalidArgument("the index is closed"));
    return *index_;
  }
  static std::vector<DocumentFingerprint> Fingerprints(const TextIndex& index,
                                                       const std::vector<std::string_view>& texts) {
    if (texts.size() == 1) return {index.Fingerprint(texts[0])};
    return index.FingerprintBatch(texts, {}, 0);
  }

  std::unique_ptr<TextIndex> index_;
  bool writable_ = false;
  mutable std::shared_mutex mu_;
};

}  // namespace

void BindIndex(py::module_& m) {
  py::class_<PyIndex>(m, "Index",
                      R"doc(A persistent near-duplicate index (the CLI's `neardup index` files).

    with neardup.Index.create("corpus.idx", method="chars5") as idx:   # empty, read-write
        idx.add("doc-1", text)          # True when stored (an empty document is not)
        idx.add(["d2", "d3"], [t2, t3]) # a batch: [True, True]
    idx = neardup.Index.open("corpus.idx")
    idx.query(text, k=3)                # [(id, distance), ...] nearest first
    idx.query([t1, t2])                 # one list per text
    idx = neardup.Index.open("corpus.idx", writable=True)
    added, matches = idx.check("doc-9", text)   # query, and add when nothing is near
    idx.check("doc-0", "").empty        # True: an empty document, not added
    idx.remove("doc-1")                 # the number removed
    idx.evict(max_age=86400, max_count=10**6)  # the oldest: the number evicted
    idx.stats()                         # as `neardup index stats --json`
    idx.save()                          # atomic commit; nothing is on disk before
    idx.close()                         # saves what is not saved (close(save=False): discards)

An index opened writable (or created) holds PATH.lock until close() or until
it is garbage collected (unsaved changes are then lost); opening it writable
again in the same process raises InvalidArgumentError at once. create()
refuses an existing index unless overwrite=True. An empty document (no
features) is never added and never matches: add says False, check
(False, []) with .empty True (a CheckResult: the pair (added, matches) with
the names added, matches and empty, as serve's /v1/check answers). An index built with boilerplate=lines leaves out the lines its
build counted, as the CLI and serve do. Queries may run from many threads at
once; add, check, remove and save run one at a time. k defaults to the
index's max_k.)doc")
      .def_static("create", &PyIndex::Create, py::arg("path"), py::kw_only(),
                  py::arg("method") = py::none(), py::arg("max_k") = py::none(),
                  py::arg("threads") = 0, py::arg("overwrite") = false)
      .def_static("open", &PyIndex::Open, py::arg("path"), py::kw_only(),
                  py::arg("writable") = false, py::arg("jieba_dir") = "")
      .def("query", &PyIndex::Query, py::arg("text"), py::kw_only(), py::arg("k") = py::none())
      .def("add", &PyIndex::Add, py::arg("id"), py::arg("text"), py::kw_only(),
           py::arg("replace") = false)
      .def("check", &PyIndex::CheckText, py::arg("id"), py::arg("text"), py::kw_only(),
           py::arg("k") = py::none())
      .def("remove", &PyIndex::Remove, py::arg("id"))
      .def("evict", &PyIndex::Evict, py::kw_only(), py::arg("max_age") = py::none(),
           py::arg("max_count") = py::none())
      .def("stats", &PyIndex::Stats)
      .def("save", &PyIndex::Save)
      .def("close", &PyIndex::Close, py::kw_only(), py::arg("save") = true)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__",
           [](PyIndex& self, const py::handle&, const py::handle&, const py::handle&) {
             self.Close(true);
             return false;
           })
      .def("__repr__", &PyIndex::Repr)
      .def("__len__", &PyIndex::Size)
      .def("__contains__", &PyIndex::Contains)
      .def_property_readonly("bits", &PyIndex::Bits)
      .def_property_readonly("max_k", &PyIndex::MaxK)
      .def_property_readonly("path", &PyIndex::Path)
      .def_property_readonly("method", &PyIndex::GetMethod);
}

}  // namespace neardup::python
