#include "agent/prompt_preview.h"

#include <fmt/format.h>

namespace cutegen {
namespace {

std::string placeholder(std::string_view what) { return fmt::format("[measured on the GPU at run time: {}]", what); }

// The failing evaluation a diagnose, repair or restart prompt is about: the verdict asked for, the rest
// what the judge would say on the GPU.
Evaluation failure(const PreviewInputs& in) {
  Evaluation e;
  e.verdict = in.verdict;
  e.reason = placeholder("the judge's one-line reason");
  e.evidence = in.evidence.empty()
                   ? placeholder("the judge's condensed evidence (compiler diagnostics, the mismatch report, ...)")
                   : in.evidence;
  return e;
}

}  // namespace

Status check_preview_inputs(const PreviewInputs& in) {
  const bool needs_kernel =
      in.kind == PromptKind::diagnose || in.kind == PromptKind::repair || in.kind == PromptKind::optimize;
  if (needs_kernel && in.kernel.empty())
    return Error{fmt::format("the {} prompt is about a kernel: give KERNEL (a .cu file)", to_string(in.kind))};
  if (!needs_kernel && !in.kernel.empty())
    return Error{fmt::format("the {} prompt shows no kernel: leave KERNEL out", to_string(in.kind))};
  if (in.verdict == Verdict::pass)
    return Error{"--verdict pass is no failure: give the verdict the kernel failed with (compile_error, mismatch, ...)"};
  if (!in.base.empty() && in.kind != PromptKind::diagnose) return Error{"--base is for the diagnose prompt"};
  return ok_status();
}

Result<std::vector<Message>> preview_conversation(Prompter& prompter, const ProblemInfo& problem,
                                                  const PreviewInputs& in) {
  if (auto ok = check_preview_inputs(in); !ok.ok()) return ok.error();
  auto system = prompter.system_prompt(problem, in.kind);
  if (!system) return system.error();
  Result<std::string> prompt = Error{"internal: no prompt built"};
  switch (in.kind) {
    case PromptKind::synthesis: prompt = prompter.synthesis(problem); break;
    case PromptKind::restart:
      prompt = prompter.restart(problem, {{placeholder("how the earlier attempt ended, in one line"), failure(in)}});
      break;
    case PromptKind::diagnose: {
      RepairContext context;
      if (!in.base.empty()) {
        context.change_under_repair = placeholder("the optimisation the step tried");
        context.origin = in.base;
      }
      prompt = prompter.diagnose(problem, in.kernel, failure(in), context);
      break;
    }
    case PromptKind::repair: {
      const std::string diagnosis =
          in.diagnosis.empty() ? "[the diagnose step's answer: DIAGNOSIS / LOCATION / FIX notes]" : in.diagnosis;
      prompt = prompter.repair(problem, in.kernel, failure(in), diagnosis, {});
      break;
    }
    case PromptKind::optimize: {
      // No history before step 1, and none a preview could know of later: the steps are the run's.
      const std::string workload(to_string(problem.facts.workload_class));
      const std::string profile = in.profile.should_profile(workload, in.step, 0)
                                      ? placeholder("the Nsight Compute summary of the best kernel")
                                      : std::string();
      prompt = prompter.optimize(problem, in.kernel, Evaluation{}, {}, profile, in.step, in.max_steps);
      break;
    }
  }
  if (!prompt) return prompt.error();
  return request_messages(*system, *prompt);
}

}  // namespace cutegen
