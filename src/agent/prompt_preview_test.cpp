// `cutegen prompt`'s conversations: the real prompter's, assembled as the loop assembles them, with
// labelled placeholders where a run has GPU measurements.
#include "agent/prompt_preview.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "agent/template_prompter.h"
#include "common/testdata/test_helpers.h"

using namespace cutegen;
using cutegen::testing::contains;

namespace prompt_preview_test {

ProblemInfo problem(const char* workload) {
  ProblemInfo p;
  p.source = "class Model(nn.Module): ...";
  p.facts = *ProblemFacts::from_json(nlohmann::json::parse(fmt::format(R"({{"name": "p", "workload_class": "{}",
    "inputs": [{{"name": "x", "kind": "tensor", "dtype": "float32", "shape": [64, 1024]}}],
    "params": [], "outputs": [{{"kind": "tensor", "dtype": "float32", "shape": [64, 1024]}}],
    "min_bytes": 524288, "flops": 65536}})", workload)));
  return p;
}

std::unique_ptr<TemplatePrompter> previewer() {
  auto p = TemplatePrompter::create({.gpu_placeholders = true});
  EXPECT_TRUE(p.ok()) << p.error().message;
  return std::move(*p);
}

}  // namespace prompt_preview_test

using namespace prompt_preview_test;

TEST(PromptPreview, TheConversationIsTheLoopsWithLabelledPlaceholders) {
  auto prompter = previewer();
  const ProblemInfo p = problem("elementwise");
  auto messages = preview_conversation(*prompter, p, {.kind = PromptKind::optimize, .kernel = "int x;\n"});
  ASSERT_TRUE(messages.ok()) << messages.error().message;
  ASSERT_EQ(messages->size(), 2u);
  auto system = prompter->system_prompt(p, PromptKind::optimize);
  ASSERT_TRUE(system.ok());
  auto prompt = prompter->optimize(p, "int x;\n", Evaluation{}, {},
                                   "[measured on the GPU at run time: the Nsight Compute summary of the best kernel]", 1, 8);
  ASSERT_TRUE(prompt.ok());
  EXPECT_EQ(to_json(*messages), to_json(request_messages(*system, *prompt))) << "what the loop would send";
  EXPECT_TRUE(contains(messages->back().text, "Current best kernel (below): [measured on the GPU at run time: its median time]"));
  EXPECT_TRUE(contains(messages->front().text, "PyTorch eager: [measured on the GPU at run time:"));
  // A reduction's profile is withheld at step 1 (the auto policy), shown from step 3.
  const ProblemInfo r = problem("reduction");
  auto early = preview_conversation(*prompter, r, {.kind = PromptKind::optimize, .kernel = "int x;\n", .step = 1});
  auto later = preview_conversation(*prompter, r, {.kind = PromptKind::optimize, .kernel = "int x;\n", .step = 3});
  ASSERT_TRUE(early.ok() && later.ok());
  EXPECT_TRUE(contains(early->back().text, "profiles are withheld"));
  EXPECT_TRUE(contains(later->back().text, "the Nsight Compute summary of the best kernel"));
}

TEST(PromptPreview, DiagnoseOfABrokenStepShowsItsDiffAndRepairItsDiagnosis) {
  auto prompter = previewer();
  auto diagnose = preview_conversation(
      *prompter, problem("elementwise"),
      {.kind = PromptKind::diagnose, .kernel = "int x;\n", .base = "int y;\n", .verdict = Verdict::mismatch});
  ASSERT_TRUE(diagnose.ok()) << diagnose.error().message;
  const std::string& d = diagnose->back().text;
  EXPECT_TRUE(contains(d, "wrong result (verdict `mismatch`): [measured on the GPU at run time: the judge's one-line "
                          "reason]"))
      << d;
  EXPECT_TRUE(contains(d, "-int y;\n+int x;\n")) << d;
  auto repair = preview_conversation(*prompter, problem("elementwise"),
                                     {.kind = PromptKind::repair, .kernel = "int x;\n", .diagnosis = "FIX: line 1"});
  ASSERT_TRUE(repair.ok()) << repair.error().message;
  EXPECT_TRUE(contains(repair->back().text, "FIX: line 1"));
  EXPECT_TRUE(contains(repair->back().text, "1 | int x;")) << "the diagnosis cites a line: numbered";
}

TEST(PromptPreview, WrongInputsAreOneLineErrors) {
  auto needs = check_preview_inputs({.kind = PromptKind::repair});
  ASSERT_FALSE(needs.ok());
  EXPECT_EQ(needs.error().message, "the repair prompt is about a kernel: give KERNEL (a .cu file)");
  auto none = check_preview_inputs({.kind = PromptKind::synthesis, .kernel = "int x;"});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "the synthesis prompt shows no kernel: leave KERNEL out");
  EXPECT_FALSE(check_preview_inputs({.kind = PromptKind::diagnose, .kernel = "k", .verdict = Verdict::pass}).ok());
  EXPECT_FALSE(check_preview_inputs({.kind = PromptKind::optimize, .kernel = "k", .base = "b"}).ok());
  EXPECT_FALSE(parse_prompt_kind("explain").ok());
  EXPECT_EQ(*parse_prompt_kind("restart"), PromptKind::restart);
}
