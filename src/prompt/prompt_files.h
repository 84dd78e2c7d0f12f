#pragma once
// Where the prompt texts live at run time, and the loaded set of them.
//
// The texts are files (prompts/*.md, reviewed and tuned without a rebuild), so a built or installed
// cutegen must find them: $CUTEGEN_PROMPTS_DIR when set, else the source tree's prompts/ (baked in by
// CMake, like the contract header in common/locations), else beside the installed binary
// (<bin>/../share/cutegen/prompts, as `cmake --install` lays it out). The example kernels the prompts
// quote (library/) are found the same way.
//
// PromptLibrary reads every file once, up front, so a missing or broken prompt file stops the run
// before the first LLM call rather than in the middle of it.
#include <array>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "common/result.h"
#include "prompt/example_choice.h"
#include "prompt/prompt_inputs.h"
#include "prompt/prompt_template.h"

namespace cutegen {

// The directory holding rules.md, cute_guide.md, the menus and the templates. An error says every place
// that was tried and how to point cutegen at the files. A set CUTEGEN_PROMPTS_DIR that lacks rules.md
// is an error too: a user who set it meant those files, not a silent fallback.
Result<std::filesystem::path> prompts_dir();

struct PromptPaths {
  std::filesystem::path prompts;        // prompts/
  std::filesystem::path examples;       // library/
};
Result<PromptPaths> locate_prompt_paths();

// The prompts the loop sends; each is prompts/<name>.md with {{placeholders}}.
enum class PromptKind { synthesis, diagnose, repair, optimize, restart };
inline constexpr std::array<PromptKind, 5> kAllPromptKinds = {PromptKind::synthesis, PromptKind::diagnose,
                                                              PromptKind::repair, PromptKind::optimize,
                                                              PromptKind::restart};
std::string_view to_string(PromptKind k);
Result<PromptKind> parse_prompt_kind(std::string_view name);  // error lists the names

struct ExampleKernel {
  std::string file;    // "gemm_sm90_3xtf32.cu"
  std::string source;
};

// The CuTe guide as one workload class reads it. A line `<!-- for: reduction gemm ... -->` keeps the
// block that follows it only for the classes it names: a `## ` section up to the next section, or a
// `- ` item up to the next item or section (code blocks included). Unmarked text is for every class.
// So a pointwise problem's prompts carry no TMA, wgmma or cluster material. `origin` names the file in
// errors: a marker naming an unknown class, or not followed by a section or an item.
Result<std::string> guide_for_class(std::string_view guide, WorkloadClass workload, std::string_view origin);
// The same markers in the rules, naming prompt kinds (`<!-- for: synthesis restart -->`): each kind of
// request carries the rules its answer can break and its own answer format, no more.
Result<std::string> rules_for_kind(std::string_view rules, PromptKind kind, std::string_view origin);
// The filter both use: `wants` says whether a name in a marker keeps its block (an Error for an unknown name).
Result<std::string> keep_marked_blocks(std::string_view text, const std::function<Result<bool>(std::string_view)>& wants,
                                       std::string_view origin);

class PromptLibrary {
 public:
  static Result<PromptLibrary> load(const PromptPaths& paths);

  // prompts/rules.md: a template (its {{arch}} and {{precision_rule}} come from the run).
  const PromptTemplate& rules() const { return rules_; }
  // prompts/system.md: the part of every request that stays the same through one problem's run.
  const PromptTemplate& system() const { return system_; }
  // prompts/example.md: how the synthesis and restart prompts introduce the library kernel they show.
  const PromptTemplate& example_intro() const { return example_intro_; }
  // prompts/candidate.md: a candidate's part of a step with several (appended to the optimize prompt).
  const PromptTemplate& candidate_share() const { return candidate_share_; }
  const std::string& cute_guide(WorkloadClass c) const { return cute_guides_.at(c); }
  const std::string& debug_guide() const { return debug_guide_; }
  const std::string& menu(WorkloadClass c) const { return menus_.at(c); }
  // A library kernel choose_example() can pick (example_choice.h); every one is loaded up front, and
  // any other name is a programming error (std::out_of_range).
  const ExampleKernel& example(std::string_view file) const;
  const PromptTemplate& prompt(PromptKind k) const { return templates_.at(k); }
  const PromptPaths& paths() const { return paths_; }

 private:
  PromptPaths paths_;
  PromptTemplate rules_, system_, example_intro_, candidate_share_;
  std::string debug_guide_;
  std::map<WorkloadClass, std::string> cute_guides_, menus_;
  std::map<std::string, ExampleKernel, std::less<>> examples_;
  std::map<PromptKind, PromptTemplate> templates_;
};

}  // namespace cutegen
