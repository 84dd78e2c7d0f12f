#pragma once
// Builds each prompt the agent loop sends, from the prompt files (PromptLibrary) and plain data
// (prompt_inputs.h). The texts are in prompts/*.md; this code only computes the pieces that depend
// on the data (tables, numbers, clipped evidence, the bounded history) and fills the placeholders.
//
//   synthesis  first kernel: problem, shapes/dtypes, costs, floor, baselines, contract, rules, CuTe
//              guide, one library kernel chosen for the problem (example_choice.h) with why it was
//              chosen, as a reference for idioms. Answer: a whole file.
//   diagnose   a failing kernel with line numbers and the condensed evidence. Answer: DIAGNOSIS /
//              LOCATION / FIX notes, no code (parse_diagnosis_answer).
//   repair     the diagnosis, the kernel and the reference. Answer: SEARCH/REPLACE edits only.
//   optimize   one optimisation from the workload's menu, the bounded history, the best time against
//              the floor and the baselines (each once), the reference, a profile summary once the
//              profiling policy releases it. Answer: edits only, or NO_FURTHER_CHANGE with a reason.
//   restart    synthesis again, with what failed before. Answer: a whole file.
//
// A builder's Error means the prompt files and the code disagree (a placeholder renamed on one side):
// fix the files; check_prompt_library() finds that at start-up.
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "prompt/history.h"
#include "prompt/prompt_files.h"
#include "prompt/prompt_inputs.h"

namespace cutegen {

struct PromptOptions {
  // When the client sends build_system_prompt() as the system message with every request, the
  // prompts carry a one-line pointer instead of repeating the rules.
  bool rules_in_system_prompt = false;
  HistoryLimits history;                  // optimise history and repair attempts
  std::size_t max_evidence_lines = 80;    // the judge condenses already; this bounds a pathological report
  std::size_t max_evidence_chars = 8000;
};

// The system message: who the LLM is in this exchange, and prompts/rules.md.
std::string build_system_prompt(const PromptLibrary& lib);

Result<std::string> build_synthesis_prompt(const PromptLibrary& lib, const SynthesisInput& in,
                                           const PromptOptions& options = {});
Result<std::string> build_diagnose_prompt(const PromptLibrary& lib, const DiagnoseInput& in,
                                          const PromptOptions& options = {});
Result<std::string> build_repair_prompt(const PromptLibrary& lib, const RepairInput& in,
                                        const PromptOptions& options = {});
Result<std::string> build_optimize_prompt(const PromptLibrary& lib, const OptimizeInput& in,
                                          const PromptOptions& options = {});
Result<std::string> build_restart_prompt(const PromptLibrary& lib, const RestartInput& in,
                                         const PromptOptions& options = {});

// The placeholders each builder fills; every template must use exactly these.
const std::vector<std::string>& prompt_placeholders(PromptKind kind);
// Error naming the template and the placeholders it lacks or has in excess.
Status check_prompt_library(const PromptLibrary& lib);
// locate_prompt_paths() + PromptLibrary::load + check_prompt_library: what the loop calls at start-up.
Result<PromptLibrary> load_prompt_library();

// ---- pieces, exposed for the loop's reports and for tests -------------------------------------------

// "    12 | code" per line (the numbering the edit errors use too), for prompts that refer to lines.
std::string number_lines(std::string_view source);
// A Markdown table of inputs (in cutegen_forward's order) and outputs, plus format_construction().
std::string format_tensor_table(const ProblemBrief& p);
// How the model is built: get_init_inputs() bound to Model's parameters, the constructor defaults it
// leaves out, and PyTorch defaults the reference relies on without writing them (torch_defaults.h).
std::string format_construction(const ProblemBrief& p);
// Bytes, FLOPs and intensity, one fact per line; unknowns say so.
std::string format_work_summary(const ProblemBrief& p);
// format_work_summary plus the roofline floor and both baselines (the first prompts, which have no
// best time to set them against).
std::string format_cost_summary(const ProblemBrief& p);
// One paragraph stating the precision policy in force.
std::string format_precision_policy(Precision precision);
// At most `max_lines` lines and `max_chars` characters, with a note saying how much was left out.
std::string clip_evidence(std::string_view text, std::size_t max_lines, std::size_t max_chars);
// What choose_example() needs from the brief; an empty dtype is derived from the tensors (the least
// precise floating dtype among inputs and outputs).
ExampleFacts example_facts(const ProblemBrief& p);
// "(4096, 4096)", "()" for rank 0.
std::string format_shape(const std::vector<int64_t>& shape);

}  // namespace cutegen
