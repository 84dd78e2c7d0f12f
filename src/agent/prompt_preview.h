#pragma once
// `cutegen prompt`: the conversation the loop would send for one kind of prompt, built by the real
// Prompter and assembled by request_messages() exactly as the loop does, without a GPU. What a run
// measures on the GPU (baselines, the roofline floor, the kernel's time, the judge's verdict and
// evidence, a profile) is a labelled placeholder unless the caller supplies it.
#include <string>
#include <vector>

#include "agent/profile_policy.h"
#include "agent/prompter.h"
#include "prompt/prompt_files.h"

namespace cutegen {

struct PreviewInputs {
  PromptKind kind = PromptKind::synthesis;
  std::string kernel;     // diagnose, repair, optimize: the kernel the prompt is about (required there)
  std::string base;       // diagnose: the correct kernel an optimisation step was made to ("": a first kernel)
  Verdict verdict = Verdict::compile_error;  // diagnose, repair, restart: the failure shown
  std::string evidence;   // the judge's evidence for it ("": a placeholder)
  std::string diagnosis;  // repair: the diagnose step's notes ("": a placeholder)
  int step = 1;           // optimize: this step and the budget
  int max_steps = 8;
  ProfilePolicy profile;  // optimize: whether step `step` shows a profile (then a placeholder for it)
};

// Error: a kind that needs a kernel got none (or one that shows none got one), or a verdict that is no
// failure. Checked before the problem is loaded, so a wrong command line fails at once.
Status check_preview_inputs(const PreviewInputs& in);

// check_preview_inputs, then the prompt; Error also when the prompter fails.
Result<std::vector<Message>> preview_conversation(Prompter& prompter, const ProblemInfo& problem,
                                                  const PreviewInputs& in);

}  // namespace cutegen
