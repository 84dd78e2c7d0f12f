#include "llm/exec_backend.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "llm/api_errors.h"

namespace cutegen {
namespace {

// The last few non-empty lines of stderr on one line: usually where a failing command says why.
std::string stderr_tail(const std::string& err) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < err.size()) {
    auto end = err.find('\n', start);
    if (end == std::string::npos) end = err.size();
    std::string line = err.substr(start, end - start);
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
    start = end + 1;
  }
  if (lines.empty()) return "(nothing on stderr)";
  std::size_t first = lines.size() > 3 ? lines.size() - 3 : 0;
  std::string out = fmt::format("{}", fmt::join(lines.begin() + static_cast<long>(first), lines.end(), " | "));
  if (out.size() > 300) out = "..." + out.substr(out.size() - 297);
  return out;
}

}  // namespace

ExecBackend::ExecBackend(ProcessRunner& runner, ExecOptions options) : runner_(runner), options_(std::move(options)) {}

Result<LlmResponse> ExecBackend::complete(const LlmRequest& request) {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", options_.command};
  // The user's own command, acting for them (it may need their key, a proxy, a login): it gets the
  // whole environment, unlike every other child cutegen starts.
  spec.environment = ProcessSpec::Environment::inherit;
  spec.stdin_data = render_as_text(request.messages);
  spec.timeout = options_.timeout;
  const auto& p = request.params;
  if (p.max_tokens) spec.env.emplace_back("CUTEGEN_LLM_MAX_TOKENS", std::to_string(*p.max_tokens));
  if (p.temperature) spec.env.emplace_back("CUTEGEN_LLM_TEMPERATURE", fmt::format("{}", *p.temperature));
  if (p.reasoning_effort) spec.env.emplace_back("CUTEGEN_LLM_REASONING_EFFORT", *p.reasoning_effort);
  if (p.thinking_budget) spec.env.emplace_back("CUTEGEN_LLM_THINKING_BUDGET", std::to_string(*p.thinking_budget));

  auto run = runner_.run(spec);
  if (!run) return Error{fmt::format("exec: cannot run `{}`: {}", options_.command, run.error().message)};
  if (!run->succeeded())
    return Error{fmt::format("exec: `{}` {}; stderr: {}", options_.command, run->describe_end(),
                             stderr_tail(redact(run->err, options_.secrets)))};
  if (run->output_truncated)
    return Error{fmt::format("exec: `{}` printed more than {} MiB on stdout", options_.command,
                             spec.max_output_bytes >> 20)};
  if (run->out.find_first_not_of(" \t\r\n") == std::string::npos)
    return Error{fmt::format("exec: `{}` exited 0 but printed nothing on stdout; stderr: {}", options_.command,
                             stderr_tail(redact(run->err, options_.secrets)))};
  LlmResponse r;
  r.text = run->out;
  r.finish = FinishReason::stop;
  r.finish_detail = "exit 0";
  r.model = model();
  r.usage.reported = false;  // a command reports no token counts
  return r;
}

}  // namespace cutegen
