#include "agent/ncu_profile_source.h"

#include <fmt/format.h>

namespace cutegen {

Result<std::string> NcuProfileSource::summary(const std::string&, const Evaluation& evaluation) {
  if (!evaluation.passed() || evaluation.library.empty())
    return Error{"internal: only a kernel that passed evaluation is profiled"};
  // The worker stages fresh inputs for every profile, so the best kernel can be profiled after other
  // candidates were evaluated.
  auto invocation = judge_.profiling_run(options_.problem, evaluation, options_.calls);
  if (!invocation) return invocation.error();
  ProfileRequest request;
  request.target = invocation->argv;
  request.target_result = invocation->result;
  // Numbered on past what is there: a resumed run must not overwrite the profiles of the run it continues.
  std::error_code ec;
  do request.work_dir = options_.work_dir / fmt::format("profile-{:03}", ++count_);
  while (std::filesystem::exists(request.work_dir, ec));
  request.context = context_from_evaluation(evaluation, options_.calls);
  auto report = provider_.profile(request);
  if (!report) return report.error();
  last_ = *report;
  return report->summary;
}

}  // namespace cutegen
