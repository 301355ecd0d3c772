// Copyright 2026 The neardup Authors.
//
// neardup._neardup: the C++ half of the Python module neardup (python/neardup/
// __init__.py is the other half, and doc/python.md the user's guide).
//
// Every call that fingerprints, searches or writes releases the GIL; texts are
// copied out of their Python objects (or pinned by a reference) first, so no
// Python object is touched without it. Pipelines are built once per method
// (loading jieba's dictionary takes about 0.7 s) and shared by every call and
// thread: a Pipeline is immutable after Create. A library Status that is not
// OK becomes a Python exception carrying its message: neardup.Error, or its
// subclasses InvalidArgumentError (also a ValueError) and NotFoundError (also
// a FileNotFoundError).

#include <pthread.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "module.h"
#include "neardup/dedup.h"
#include "neardup/features.h"
#include "neardup/fingerprint.h"
#include "neardup/method.h"
#include "neardup/parallel.h"
#include "neardup/pipeline.h"
#include "neardup/presets.h"
#include "py_dedup.h"

namespace py = pybind11;

namespace neardup::python {

PyObject* g_error = nullptr;
PyObject* g_invalid_argument = nullptr;
PyObject* g_not_found = nullptr;

// Held while a pipeline is built (for the whole build). os.fork() takes it
// first (pthread_atfork, registered at import): a child forked while another
// thread built a pipeline inherited this mutex locked by a thread it does not
// have, and the build's own half-done state, and hung on its first
// fingerprint. Now the fork waits for the build to end.
std::mutex& PipelineMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}

void LockPipelinesForFork() { PipelineMutex().lock(); }
void UnlockPipelinesAfterFork() { PipelineMutex().unlock(); }

// The pipeline of a method, built on first use and shared afterwards.
std::shared_ptr<const Pipeline> PipelineFor(const Method& method) {
  static auto* cache = new std::map<std::string, std::shared_ptr<const Pipeline>>;
  const std::string key = method.ToString() + '\n' + method.pipeline.segmenter.jieba_dir + '\n' +
                          method.pipeline.data_dir;
  std::lock_guard<std::mutex> lock(PipelineMutex());
  auto it = cache->find(key);
  if (it != cache->end()) return it->second;
  std::shared_ptr<const Pipeline> pipeline = Value(Pipeline::Create(method.pipeline));
  cache->emplace(key, pipeline);
  return pipeline;
}

// None (the default method), a method's text form or a neardup.Method, of
// any kind (dedup takes minhash too).
Method ToAnyMethod(const py::handle& obj) {
  if (obj.is_none()) return Method::Default();
  if (py::isinstance<py::str>(obj)) return Value(Method::Parse(obj.cast<std::string>()));
  if (py::isinstance<PyMethod>(obj)) return obj.cast<const PyMethod&>().method;
  throw py::type_error(
      "method must be None, a str (e.g. 'tfidf,bits=64') or a neardup.Method, not " +
      std::string(py::str(obj.get_type().attr("__name__"))));
}

// None (the default method), a method's text form or a neardup.Method, for
// the call `what`: every call of the module fingerprints, so minhash (no
// fingerprint) is refused as the CLI refuses it (Method::RequireSimHash).
Method ToMethod(const py::handle& obj, const char* what) {
  Method method = ToAnyMethod(obj);
  Check(method.RequireSimHash(what));
  return method;
}

// The UTF-8 bytes of a str (or the bytes of a bytes object), valid while
// `obj` lives.
std::string_view TextOf(const py::handle& obj, const char* what) {
  if (PyUnicode_Check(obj.ptr())) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(obj.ptr(), &size);
    if (data == nullptr) throw py::error_already_set();
    return std::string_view(data, static_cast<size_t>(size));
  }
  if (PyBytes_Check(obj.ptr())) {
    return std::string_view(PyBytes_AS_STRING(obj.ptr()),
                            static_cast<size_t>(PyBytes_GET_SIZE(obj.ptr())));
  }
  throw py::type_error(std::string(what) + " must be str or bytes, not " +
                       std::string(py::str(obj.get_type().attr("__name__"))));
}

PinnedTexts Pin(const py::iterable& texts, const char* what) {
  PinnedTexts p;
  if (py::isinstance<py::str>(texts) || py::isinstance<py::bytes>(texts)) {
    throw py::type_error(std::string(what) +
                         " must be an iterable of str, not a single str or bytes");
  }
  for (const py::handle& t : texts) {
    p.views.push_back(TextOf(t, what));
    p.refs.push_back(py::reinterpret_borrow<py::object>(t));
  }
  return p;
}

namespace {

py::int_ ToInt(const Fingerprint& fp) {
  py::int_ hi(fp.hi());
  py::int_ lo(fp.lo());
  return py::reinterpret_steal<py::int_>(
      PyNumber_Or(PyNumber_Lshift(hi.ptr(), py::int_(64).ptr()), lo.ptr()));
}

Fingerprint FromInt(const py::int_& value, int bits) {
  if (PyObject_RichCompareBool(value.ptr(), py::int_(0).ptr(), Py_LT) == 1) {
    throw py::value_error("a fingerprint is a non-negative int");
  }
  const py::int_ mask((static_cast<unsigned long long>(~0ULL)));
  const uint64_t lo =
      py::reinterpret_steal<py::int_>(PyNumber_And(value.ptr(), mask.ptr())).cast<uint64_t>();
  const py::int_ high =
      py::reinterpret_steal<py::int_>(PyNumber_Rshift(value.ptr(), py::int_(64).ptr()));
  if (PyObject_RichCompareBool(high.ptr(), mask.ptr(), Py_GT) == 1) {
    throw py::value_error("a fingerprint has at most 128 bits");
  }
  const uint64_t hi = high.cast<uint64_t>();
  if (bits == 64 && hi != 0) throw py::value_error("a 64-bit fingerprint above 2**64 - 1");
  return bits == 64 ? Fingerprint::From64(lo) : Fingerprint::From128(hi, lo);
}

// ---- fingerprints ----

// ParallelFor over [0, n) in chunks of about a tenth of a second, checking
// for signals between them with the GIL held, so that Ctrl-C raises
// KeyboardInterrupt within about a second instead of when the call ends.
// When a signal handler raised, the workers have finished their chunk (none
// is left running) and the Python error is thrown.
// REQUIRES: the GIL is released.
template <typename Fn>
void InterruptibleParallelFor(size_t n, int threads, Fn&& fn) {
  if (n == 0) return;
  ThreadPool pool(
      static_cast<int>(std::min<size_t>(static_cast<size_t>(ResolveThreadCount(threads)), n)));
  size_t chunk = 16 * static_cast<size_t>(pool.threads());
  for (size_t begin = 0; begin < n;) {
    const size_t end = std::min(n, begin + chunk);
    const auto start = std::chrono::steady_clock::now();
    pool.ParallelFor(end - begin, [&](size_t i, int worker) { fn(begin + i, worker); });
    begin = end;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds < 0.05) chunk *= 2;
    if (seconds > 0.2 && chunk > 1) chunk /= 2;
    if (begin < n) {
      py::gil_scoped_acquire acquire;
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    }
  }
}

py::int_ FingerprintText(const py::handle& text, const py::handle& method_obj,
                         const py::handle& title) {
  const Method method = ToMethod(method_obj, "fingerprint");
  const std::string_view t = TextOf(text, "text");
  const std::string_view h = title.is_none() ? std::string_view() : TextOf(title, "title");
  DocumentFingerprint fp;
  {
    py::gil_scoped_release release;
    fp = PipelineFor(method)->Fingerprint(t, h);
  }
  return ToInt(fp.fingerprint);
}

// (bits, bytes): per text one native uint64 (64 bits) or two, hi then lo.
py::tuple FingerprintBatch(const py::iterable& texts, const py::handle& method_obj, int threads) {
  const Method method = ToMethod(method_obj, "fingerprint_batch");
  if (threads < 0) throw py::value_error("threads must be >= 0 (0: all cores)");
  const PinnedTexts pinned = Pin(texts, "texts");
  const int bits = method.pipeline.bits;
  const size_t words = bits == 64 ? 1 : 2;
  std::vector<uint64_t> out(pinned.views.size() * words);
  {
    py::gil_scoped_release release;
    std::shared_ptr<const Pipeline> pipeline = PipelineFor(method);
    InterruptibleParallelFor(pinned.views.size(), threads, [&](size_t i, int) {
      const Fingerprint fp = pipeline->Fingerprint(pinned.views[i]).fingerprint;
      if (words == 1) {
        out[i] = fp.lo();
      } else {
        out[2 * i] = fp.hi();
        out[2 * i + 1] = fp.lo();
      }
    });
  }
  return py::make_tuple(
      bits, py::bytes(reinterpret_cast<const char*>(out.data()), out.size() * sizeof(uint64_t)));
}

int Distance(const py::handle& a, const py::handle& b, const py::handle& method_obj) {
  const bool ints = py::isinstance<py::int_>(a) && py::isinstance<py::int_>(b);
  if (ints) {
    const Fingerprint fa = FromInt(a.cast<py::int_>(), 128);
    const Fingerprint fb = FromInt(b.cast<py::int_>(), 128);
    return HammingDistance(fa, fb);
  }
  const Method method = ToMethod(method_obj, "distance");
  const std::string_view ta = TextOf(a, "a");
  const std::string_view tb = TextOf(b, "b");
  py::gil_scoped_release release;
  std::shared_ptr<const Pipeline> pipeline = PipelineFor(method);
  return HammingDistance(pipeline->Fingerprint(ta).fingerprint,
                         pipeline->Fingerprint(tb).fingerprint);
}

// What `neardup explain` shows, as data: each feature with its weights in
// both documents and its push on the differing bits (tools/neardup/
// cmd_explain.cc has the derivation).
py::dict Explain(const py::handle& a, const py::handle& b, const py::handle& method_obj, int top) {
  if (top < 0) throw py::value_error("top must be >= 0 (0: every feature)");
  const Method method = ToMethod(method_obj, "explain");
  const std::string_view texts[2] = {TextOf(a, "a"), TextOf(b, "b")};
  struct Row {
    std::string text;
    double weight[2] = {0, 0};
    bool in[2] = {false, false};
    double push = 0;
  };
  std::vector<Row> rows;
  DocumentFingerprint fps[2];
  std::vector<int> differing;
  {
    py::gil_scoped_release release;
    std::shared_ptr<const Pipeline> pipeline = PipelineFor(method);
    const int bits = method.pipeline.bits;
    std::vector<WeightedFeature> features[2];
    std::map<std::string, size_t> row_of;
    std::vector<std::vector<int>> signs[2];
    for (int d = 0; d < 2; ++d) {
      pipeline->Features(texts[d], &features[d]);
      fps[d] = pipeline->FingerprintFeatures(features[d]);
    }
    for (int j = 0; j < bits; ++j) {
      if (fps[0].fingerprint.bit(j) != fps[1].fingerprint.bit(j)) differing.push_back(j);
    }
    std::vector<std::vector<int>> row_signs[2];
    for (int d = 0; d < 2; ++d) {
      for (const WeightedFeature& f : features[d]) {
        auto [it, inserted] = row_of.try_emplace(f.text, rows.size());
        if (inserted) {
          rows.push_back(Row{f.text});
          row_signs[0].emplace_back();
          row_signs[1].emplace_back();
        }
        Row& row = rows[it->second];
        row.weight[d] = f.weight;
        row.in[d] = true;
        const FeatureHash h = HashWeightedFeature(f, bits, method.pipeline.hash);
        std::vector<int>& s = row_signs[d][it->second];
        for (int j : differing) s.push_back(h.bit(j) ? 1 : -1);
      }
    }
    for (size_t r = 0; r < rows.size(); ++r) {
      for (size_t x = 0; x < differing.size(); ++x) {
        const double va = rows[r].in[0] ? rows[r].weight[0] * row_signs[0][r][x] : 0.0;
        const double vb = rows[r].in[1] ? rows[r].weight[1] * row_signs[1][r][x] : 0.0;
        rows[r].push += (va - vb) * (fps[0].fingerprint.bit(differing[x]) ? 1.0 : -1.0);
      }
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& x, const Row& y) { return x.push > y.push; });
    if (top > 0 && rows.size() > static_cast<size_t>(top)) rows.resize(static_cast<size_t>(top));
  }
  py::list features;
  for (const Row& r : rows) {
    features.append(py::dict(py::arg("feature") = r.text,
                             py::arg("weight_a") = r.in[0] ? py::cast(r.weight[0]) : py::none(),
                             py::arg("weight_b") = r.in[1] ? py::cast(r.weight[1]) : py::none(),
                             py::arg("push") = r.push));
  }
  const int distance = HammingDistance(fps[0].fingerprint, fps[1].fingerprint);
  return py::dict(py::arg("a") = py::dict(py::arg("fingerprint") = fps[0].fingerprint.ToHex(),
                                          py::arg("features") = fps[0].features),
                  py::arg("b") = py::dict(py::arg("fingerprint") = fps[1].fingerprint.ToHex(),
                                          py::arg("features") = fps[1].features),
                  py::arg("bits") = method.pipeline.bits, py::arg("distance") = distance,
                  py::arg("similarity") = Similarity(fps[0].fingerprint, fps[1].fingerprint),
                  py::arg("differing_bits") = differing, py::arg("features") = features);
}

PyObject* NewException(const char* name, PyObject* bases, const char* doc) {
  PyObject* e = PyErr_NewExceptionWithDoc(name, doc, bases, nullptr);
  if (e == nullptr) throw py::error_already_set();
  return e;
}

}  // namespace
}  // namespace neardup::python

PYBIND11_MODULE(_neardup, m) {
  using namespace neardup;
  using namespace neardup::python;
  m.doc() = "The C++ half of the neardup module; use `import neardup`.";
  m.attr("__version__") = NEARDUP_VERSION;  // CMake's project version
  pthread_atfork(&LockPipelinesForFork, &UnlockPipelinesAfterFork, &UnlockPipelinesAfterFork);

  g_error = NewException("neardup.Error", PyExc_Exception, "An error of the neardup library.");
  g_invalid_argument = NewException(
      "neardup.InvalidArgumentError",
      py::make_tuple(py::handle(g_error), py::handle(PyExc_ValueError)).release().ptr(),
      "A bad argument: an unknown method key, k out of range, a bad fingerprint...");
  g_not_found = NewException(
      "neardup.NotFoundError",
      py::make_tuple(py::handle(g_error), py::handle(PyExc_FileNotFoundError)).release().ptr(),
      "A file the library needs does not exist (an index, a dictionary, a data file).");
  m.add_object("Error", py::handle(g_error));
  m.add_object("InvalidArgumentError", py::handle(g_invalid_argument));
  m.add_object("NotFoundError", py::handle(g_not_found));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      PyObject* type = e.status.IsInvalidArgument() ? g_invalid_argument
                       : e.status.IsNotFound()      ? g_not_found
                                                    : g_error;
      PyErr_SetString(type, e.status.message().c_str());
    }
  });

  py::class_<PyMethod>(m, "Method",
                       R"doc(A fingerprinting method: preset name and overrides, in the text form
NAME[,key=value]... of the command line's --method (doc/methods.md).

    m = neardup.Method("tfidf,bits=128,topk=10")
    m.name, m.bits, m.default_k, str(m)      # str: the canonical text form
    neardup.Method.presets()                 # ['chars5', 'classic', 'tfidf', ...]

jieba_dir and data_dir (keywords) say where this machine keeps python3-jieba's
data and neardup's data files; they are not part of the method.
InvalidArgumentError names a bad key or value.)doc")
      .def(py::init([](const std::string& text, const std::string& jieba_dir,
                       const std::string& data_dir) {
             PyMethod p{Value(Method::Parse(text))};
             p.method.pipeline.segmenter.jieba_dir = jieba_dir;
             p.method.pipeline.data_dir = data_dir;
             return p;
           }),
           py::arg("text") = "", py::kw_only(), py::arg("jieba_dir") = "", py::arg("data_dir") = "")
      .def_static("presets",
                  [] {
                    std::vector<std::string> names;
                    for (const Preset& p : Presets()) names.push_back(p.name);
                    return names;
                  })
      .def_property_readonly("name", [](const PyMethod& p) { return p.method.name; })
      .def_property_readonly("bits", [](const PyMethod& p) { return p.method.pipeline.bits; })
      .def_property_readonly("default_k", [](const PyMethod& p) { return p.method.default_k; })
      .def_property_readonly("short_name", [](const PyMethod& p) { return p.method.ShortName(); })
      .def("__str__", [](const PyMethod& p) { return p.method.ToString(); })
      .def("__repr__",
           [](const PyMethod& p) { return "neardup.Method('" + p.method.ToString() + "')"; })
      .def("__eq__", [](const PyMethod& a, const PyMethod& b) { return a.method == b.method; })
      .def("__hash__", [](const PyMethod& p) { return py::hash(py::str(p.method.ToString())); })
      // Pickled as its text form and this machine's locations, so that a
      // Method crosses to multiprocessing's workers.
      .def("__reduce__", [](const py::object& self) {
        const PyMethod& p = self.cast<const PyMethod&>();
        return py::make_tuple(
            py::module_::import("neardup").attr("_method_from_state"),
            py::make_tuple(p.method.ToString(), p.method.pipeline.segmenter.jieba_dir,
                           p.method.pipeline.data_dir));
      });

  m.def("fingerprint", &FingerprintText,
        R"doc(The SimHash fingerprint of one document as an int (bits 0..63 or 0..127;
``f"{fp:0{bits // 4}x}"`` is the CLI's hex form, see to_hex). A document
with no features has fingerprint 0. title only matters to the improved
weights.)doc",
        py::arg("text"), py::kw_only(), py::arg("method") = py::none(),
        py::arg("title") = py::none());
  m.def("_fingerprint_batch", &FingerprintBatch, py::arg("texts"), py::arg("method"),
        py::arg("threads"));
  m.def("distance", &Distance,
        R"doc(The Hamming distance of two texts (fingerprinted with method) or of two
fingerprints given as ints.)doc",
        py::arg("a"), py::arg("b"), py::kw_only(), py::arg("method") = py::none());
  m.def("explain", &Explain,
        R"doc(Why two texts are (not) near duplicates, as `neardup explain`: both
fingerprints and feature counts, the distance, similarity, the differing bits
and the `top` features (0: all) that push the fingerprints apart most, each
{"feature", "weight_a", "weight_b" (None when absent), "push"}.)doc",
        py::arg("a"), py::arg("b"), py::kw_only(), py::arg("method") = py::none(),
        py::arg("top") = 10);
  AddDedup(m, &ToAnyMethod, &Check);

  BindIndex(m);  // py_index.cc
}
