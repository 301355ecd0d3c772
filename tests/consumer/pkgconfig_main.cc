// Copyright 2026 The neardup Authors.
//
// Fingerprints two near-identical texts with the default method: built by
// tests/consumer/run.sh with neardup::neardup and with `pkg-config --cflags
// --libs neardup` alone, so every library the static layers need must be
// found by neardupConfig.cmake and listed in neardup.pc.

#include <cstdio>

#include "neardup/fingerprint.h"
#include "neardup/pipeline.h"

int main() {
  auto pipeline = neardup::Pipeline::Create(neardup::PipelineOptions());
  if (!pipeline.ok()) {
    std::fprintf(stderr, "%s\n", pipeline.status().ToString().c_str());
    return 1;
  }
  const auto a =
      (*pipeline)->Fingerprint("新浪体育讯北京时间4月12日，在和马刺的比赛中，拜纳姆倒下");
  const auto b =
      (*pipeline)->Fingerprint("新浪体育讯北京时间4月12日，在和马刺的比赛中，拜纳姆倒地");
  const int d = neardup::HammingDistance(a.fingerprint, b.fingerprint);
  std::printf("consumer: distance %d of %d bits\n", d, a.fingerprint.bits());
  return a.empty() || d > 24 ? 1 : 0;
}
