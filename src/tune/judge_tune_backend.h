#pragma once
// The tuner's backend on the real stages: the judge's compiler for the parallel compiles (the compile
// cache makes the judge's own compile of each variant a hit) and the judge for screening and full
// verification, on one problem file.
#include <filesystem>

#include "run/judge.h"
#include "tune/tuner.h"

namespace cutegen {

class JudgeTuneBackend final : public TuneBackend {
 public:
  // `compiler` must be the judge's (a variant compiled here is then a cache hit there) and safe to
  // call from several threads (NvccCompiler is: its cache locks per key).
  JudgeTuneBackend(Compiler& compiler, Judge& judge, std::filesystem::path problem)
      : compiler_(compiler), judge_(judge), problem_(std::move(problem)) {}

  Result<CompileOutcome> compile(const CompileRequest& request) override { return compiler_.compile(request); }
  Result<Evaluation> screen(const CompileRequest& request) override {
    auto r = judge_.screen(problem_, request.source, request.display_name, request.defines);
    if (!r) return r.error();
    return r->record();
  }
  Result<std::vector<Evaluation>> screen_all(const std::vector<CompileRequest>& requests) override {
    auto reports = judge_.screen_all(problem_, requests);
    if (!reports) return reports.error();
    std::vector<Evaluation> out;
    for (const auto& r : *reports) out.push_back(r.record());
    return out;
  }
  Result<Evaluation> verify(const std::string& source, const std::string& display_name) override {
    auto r = judge_.evaluate(problem_, source, display_name);
    if (!r) return r.error();
    return r->record();
  }

 private:
  Compiler& compiler_;
  Judge& judge_;
  std::filesystem::path problem_;
};

}  // namespace cutegen
