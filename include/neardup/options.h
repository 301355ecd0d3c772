// Copyright 2026 The neardup Authors.
//
// The option words every door shares (the command line, the Python module,
// neardup-mpi, serve), each with ONE parser and ONE printer, so that a word
// means the same thing wherever it is typed:
//
//   mode         cluster | stream                      ParseDedupMode / DedupModeName
//   keep         first | longest | field:NAME          ParseKeepPolicy / KeepPolicyName
//   cluster      center | components                   ParseClusterRule / ClusterRuleName
//                                                      (dedup.h, core layer)
//   short rule   exact | sketch                        ParseShortRule / ShortRuleName
//                                                      (dedup.h, core layer)
//   normalize    nfkc,t2s,ws,... (or '+' between)      ParseNormalizeList / NormalizeListName
//   boilerplate  off | lines                           ParseBoilerplateMode / BoilerplateModeName
//                                                      (boilerplate.h, text layer)
//
// A layer of its own in nothing: the header sits in the nlp layer (the
// method's text form, src/features/method.cc, parses its normalize key with
// ParseNormalizeList), above the core and text headers it gathers.

#ifndef NEARDUP_OPTIONS_H_
#define NEARDUP_OPTIONS_H_

#include <string>
#include <string_view>

#include "neardup/boilerplate.h"
#include "neardup/dedup.h"
#include "neardup/status.h"
#include "neardup/text.h"

namespace neardup {

// "cluster" / "stream"; InvalidArgument (naming both) for anything else.
Result<DedupMode> ParseDedupMode(std::string_view word);
const char* DedupModeName(DedupMode mode);

// A keep policy and, for field:NAME, the field.
struct KeepChoice {
  KeepPolicy policy = KeepPolicy::kFirst;
  std::string field;  // KeepPolicy::kField only
};
// "first" / "longest" / "field:NAME" (NAME not empty).
Result<KeepChoice> ParseKeepPolicy(std::string_view word);
std::string KeepPolicyName(const KeepChoice& keep);

// A normalization list: items nfkc (NFKC + case folding), t2s, tw2s, tw2sp,
// tw2sp2, hk2s (OpenCC, Traditional -> Simplified; the last one named wins),
// ws (collapse white space) and none, separated by ',' or '+'. An empty list
// or "none" is no normalization (nfkc_casefold false).
Result<NormalizeOptions> ParseNormalizeList(std::string_view list);
// The canonical form: "nfkc+tw2sp2+ws" (items in that order, '+'), "none".
std::string NormalizeListName(const NormalizeOptions& normalize);

}  // namespace neardup

#endif  // NEARDUP_OPTIONS_H_
