// Copyright 2026 The neardup Authors.
//
// neardup._neardup._dedup: the library's dedup job (neardup/dedup_job.h) for
// Python's neardup.dedup (python/neardup/__init__.py), apart from the rest
// of the module (neardup_module.cc).

#ifndef NEARDUP_PYTHON_PY_DEDUP_H_
#define NEARDUP_PYTHON_PY_DEDUP_H_

#include <pybind11/pybind11.h>

#include <functional>

#include "neardup/method.h"
#include "neardup/status.h"

namespace neardup::python {

// Registers _dedup on `m`. `to_method(obj)`: the module's conversion of None,
// a str or a neardup.Method (any kind, minhash included); `check(status)`
// raises the module's exception for a status that is not OK.
void AddDedup(pybind11::module_& m, std::function<Method(const pybind11::handle&)> to_method,
              std::function<void(const Status&)> check);

}  // namespace neardup::python

#endif  // NEARDUP_PYTHON_PY_DEDUP_H_
