// Copyright 2026 The neardup Authors.
//
// What the files of the extension neardup._neardup share: library errors on
// their way to Python, the Method argument, texts out of Python objects.
// neardup_module.cc defines the module and these; py_index.cc binds Index.

#ifndef NEARDUP_PYTHON_MODULE_H_
#define NEARDUP_PYTHON_MODULE_H_

#include <pybind11/pybind11.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "neardup/method.h"
#include "neardup/status.h"

namespace neardup::python {

namespace py = pybind11;

// A library error on its way to Python (the module's exception translator
// raises neardup.Error or a subclass with its message).
struct StatusError {
  Status status;
};

inline void Check(const Status& status) {
  if (!status.ok()) throw StatusError{status};
}

template <typename T>
T Value(Result<T> result) {
  Check(result.status());
  return std::move(*result);
}

// neardup.Method: a Method with the runtime locations a Pipeline also needs.
struct PyMethod {
  Method method;
};

// None (the default method), a method's text form or a neardup.Method, for
// the call `what` (minhash, which makes no fingerprint, is refused).
Method ToMethod(const py::handle& obj, const char* what);

// The UTF-8 bytes of a str (or the bytes of a bytes object), valid while
// `obj` lives; TypeError naming `what` for anything else.
std::string_view TextOf(const py::handle& obj, const char* what);

// Texts pinned for a GIL-free run: the references keep every view valid even
// if the caller's list changes meanwhile.
struct PinnedTexts {
  std::vector<py::object> refs;
  std::vector<std::string_view> views;
};
// TypeError for a single str or bytes (an iterable of them is expected).
PinnedTexts Pin(const py::iterable& texts, const char* what);

// Binds neardup.Index (py_index.cc).
void BindIndex(py::module_& m);

}  // namespace neardup::python

#endif  // NEARDUP_PYTHON_MODULE_H_
