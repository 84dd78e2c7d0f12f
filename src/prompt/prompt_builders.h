#pragma once
// Builds each prompt the agent loop sends, from the prompt files (PromptLibrary) and plain data
// (prompt_inputs.h). The texts are in prompts/*.md; this code only computes the pieces that depend
// on the data (tables, numbers, clipped evidence, the bounded history) and fills the placeholders.
//
// Every request is a system message, then one user message. The system message (build_system_prompt)
// is fixed per kind of request: byte for byte the same in every call of that kind through one
// problem's run — the rules that kind's answer can break (arch and precision rule filled in), the
// reference that kind needs (the CuTe guide trimmed to the class to write a kernel, the debugging guide
// to diagnose, the index of the class's menu to optimise), the problem with its costs — so the
// providers' prompt caches serve it from the kind's second call on. The user message holds what changes:
//
//   synthesis  first kernel: the library kernel chosen for the problem (example_choice.h) with why it
//              was chosen, as a reference for idioms (none with --examples none). Answer: a whole file.
//   diagnose   a failing kernel with line numbers and the condensed evidence; for a
//              step that broke the kernel, what it tried and its diff. Answer: DIAGNOSIS / LOCATION /
//              FIX notes, no code (parse_diagnosis_answer).
//   repair     the diagnosis and the kernel (numbered when the diagnosis cites lines). Answer:
//              SEARCH/REPLACE edits only.
//   optimize   the best time against the floor and the baselines, the bounded history, a profile
//              summary once the profiling policy releases it, the menu item the step comes to in
//              full, the kernel. Answer: edits only, or
//              NO_FURTHER_CHANGE with a reason.
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
  HistoryLimits history;                  // optimise history and repair attempts
  std::size_t max_evidence_lines = 80;    // the judge condenses already; this bounds a pathological report
  std::size_t max_evidence_chars = 8000;
  // Show the library kernel chosen for the problem at synthesis and restart (--examples library).
  // Off for the paper's from-scratch setting: the library holds solved kernels for some benchmark
  // problems, and a run that shows them is not writing its kernel from scratch.
  bool show_example = true;
  // `cutegen prompt`: the measurements that need a GPU (baselines, the roofline floor, the kernel's
  // time, the GPU's name) are absent, and the prompt shows a labelled placeholder for each instead of
  // "not measured", which is what a run on an uncalibrated GPU says.
  bool gpu_placeholders = false;
};

// The system message of one kind of request: prompts/system.md with the rules that kind's answer can
// break (rules_for_kind), its reference material (system_references) and the problem. The same bytes in
// every request of that kind through the run, so a provider's prompt cache serves it.
Result<std::string> build_system_prompt(const PromptLibrary& lib, const ProblemBrief& problem, PromptKind kind,
                                        const PromptOptions& options = {});
// What each kind needs besides the rules: synthesis and restart the CuTe guide of the class (they write
// the kernel); diagnose the debugging guide's lead (how to read evidence); optimize the index of the
// class's menu (optimize_menu_index); repair nothing. What depends on the failure is in the request
// (failure_reference), so a compile error's diagnosis does not carry the guide to races and barriers.
Result<std::string> system_references(const PromptLibrary& lib, WorkloadClass workload, PromptKind kind);
// What the optimize system message carries of the class's menu: its introduction and one line per item
// (menu_index), so eight steps do not each carry the whole menu.
std::string optimize_menu_index(std::string_view menu);
// The full text of the item step `step` comes to in the menu's order (items_for_step with one
// candidate), which the optimize request shows.
std::string menu_item_in_full(std::string_view menu, int step);
// The guide's "## Common compile errors" section, as a top-level section of its own.
Result<std::string> compile_errors_section(std::string_view guide);
// prompts/debug_guide.md explains every failing verdict in its section "## What each verdict usually
// means", one `- **verdict**: ...` item each (a test holds it to the verdict list). A diagnosis needs
// only its own verdict's: the diagnose request carries that item (verdict_meaning, "" when none names
// the verdict). The guide's lead (before that section) is the diagnose system message's reference
// (debug_guide_lead); its sections after it, by symptom, go to requests diagnosing a runtime failure or
// a wrong result (debug_guide_sections).
std::string verdict_meaning(std::string_view debug_guide, std::string_view verdict);
std::string debug_guide_lead(std::string_view debug_guide);
std::string debug_guide_sections(std::string_view debug_guide);
// The reference a failure's request carries, by the failure's kind: the CuTe guide's compile errors
// (compile_errors_section) to diagnose or repair a compile error; the debugging guide's sections by
// symptom (debug_guide_sections) to diagnose a runtime failure or a wrong result; nothing for a
// rejection (the rules and the verdict's item name the check) or to repair a runtime failure (the
// diagnosis has read the guide). Empty when there is none.
Result<std::string> failure_reference(const PromptLibrary& lib, WorkloadClass workload, FailureKind kind,
                                      PromptKind for_kind);

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
// prompts/candidate.md filled in: what the loop appends to one candidate's optimize prompt (a block
// without leading blank lines).
Result<std::string> build_candidate_share(const PromptLibrary& lib, const CandidateShareInput& in);

// The placeholders each builder fills; every template must use exactly these.
const std::vector<std::string>& prompt_placeholders(PromptKind kind);
// The same for the templates every request shares: "rules", "system", "example".
const std::vector<std::string>& shared_placeholders(std::string_view template_name);
// Error naming the template and the placeholders it lacks or has in excess.
Status check_prompt_library(const PromptLibrary& lib);
// locate_prompt_paths() + PromptLibrary::load + check_prompt_library: what the loop calls at start-up.
Result<PromptLibrary> load_prompt_library();

// ---- pieces, exposed for the loop's reports and for tests -------------------------------------------

// " 12 | code" per line, the numbers as wide as the last one, for prompts that refer to lines (the
// edit parser strips such numbers when an answer copies them into a SEARCH).
std::string number_lines(std::string_view source);
// Whether a diagnosis refers to the kernel by line number ("line 24", "lines 30-41", "L24"): the
// repair prompt then shows the kernel with the same numbers.
bool cites_line_numbers(std::string_view diagnosis);
// A Markdown table of inputs (in cutegen_forward's order) and outputs, plus format_construction().
std::string format_tensor_table(const ProblemBrief& p);
// How the model is built: get_init_inputs() bound to Model's parameters, the constructor defaults it
// leaves out, and PyTorch defaults the reference relies on without writing them (torch_defaults.h).
std::string format_construction(const ProblemBrief& p);
// Bytes, FLOPs and intensity, one fact per line; unknowns say so.
std::string format_work_summary(const ProblemBrief& p);
// format_work_summary plus the roofline floor and both baselines.
std::string format_cost_summary(const ProblemBrief& p, const PromptOptions& options = {});
// The tolerances of python/cutegen_worker/compare.py (POLICIES, _HALF_PROBLEMS, TORCH_ERROR_FACTOR): an
// element is bad when |out - ref| > atol * max|ref| + rtol * |ref| + factor * torch's largest error, an
// output when its rel-L2 exceeds max(rel_l2_floor, factor * torch's). Half-precision problems have
// their own whatever the policy.
struct PrecisionTolerance {
  double atol = 0, rtol = 0, rel_l2_floor = 0;
};
inline constexpr double kTorchErrorFactor = 5.0;
PrecisionTolerance precision_tolerance(Precision precision, std::string_view problem_dtype);
// The rules' precision section: the policy in force and the comparison the judge makes, with the
// tolerances of python/cutegen_worker/compare.py for this policy and the problem's dtype. What the
// policy allows on tensor cores (3xTF32, TF32, bf16 MMAs) is said only for a problem with matrix
// products (has_matrix_products: not elementwise or reduction work).
std::string format_precision_rule(Precision precision, std::string_view problem_dtype, bool matrix_products = true);
// The rules' item on shapes: how many other shapes the judge runs a passing kernel at (`other_shapes`, the run's
// --generalize), or that this run judges the problem's own only.
std::string format_shapes_rule(int other_shapes);
// The rules' item on fresh inputs: every call's inputs are new, signed and scaled; what it says of
// parameters and of integer inputs (the permutation of their values) only for a problem that has them.
std::string format_fresh_inputs_rule(const ProblemBrief& problem);
bool has_matrix_products(WorkloadClass c);
// At most `max_lines` lines and `max_chars` characters, with a note saying how much was left out.
std::string clip_evidence(std::string_view text, std::size_t max_lines, std::size_t max_chars);
// What choose_example() needs from the brief; an empty dtype is derived from the tensors (the least
// precise floating dtype among inputs and outputs).
ExampleFacts example_facts(const ProblemBrief& p);
// "(4096, 4096)", "()" for rank 0.
std::string format_shape(const std::vector<int64_t>& shape);

}  // namespace cutegen
