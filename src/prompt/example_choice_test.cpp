// The table of which library kernel a problem is shown: every rule of choose_example, one row each.
#include "prompt/example_choice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

using namespace cutegen;

namespace {

ExampleFacts facts(WorkloadClass c, std::vector<std::string> ops, std::string dtype = "float32",
                   Precision p = Precision::strict) {
  return {c, std::move(ops), std::move(dtype), p};
}

struct Row {
  const char* what;
  ExampleFacts facts;
  const char* file;
};

}  // namespace

TEST(ExampleChoice, TableOfProblemsAndTheKernelEachIsShown) {
  using W = WorkloadClass;
  const std::vector<Row> table = {
      {"fp32 GEMM, strict", facts(W::gemm, {"aten::mm"}), "gemm_sm90_3xtf32.cu"},
      {"fp32 GEMM, tf32", facts(W::gemm, {"aten::mm"}, "float32", Precision::tf32), "gemm_sm90_tf32.cu"},
      {"fp32 GEMM, bf16", facts(W::gemm, {"aten::mm"}, "float32", Precision::bf16), "gemm_sm90_bf16.cu"},
      {"bf16 GEMM, strict", facts(W::gemm, {"aten::mm"}, "bfloat16"), "gemm_sm90_bf16.cu"},
      {"fp16 GEMM, strict", facts(W::gemm, {"aten::bmm"}, "float16"), "gemm_sm90_bf16.cu"},
      {"bf16 GEMM, tf32 policy", facts(W::gemm, {"aten::mm"}, "bfloat16", Precision::tf32), "gemm_sm90_bf16.cu"},
      {"conv, strict", facts(W::conv, {"aten::convolution"}), "conv_implicit_gemm.cu"},
      {"conv, tf32", facts(W::conv, {"aten::convolution"}, "float32", Precision::tf32), "conv_implicit_gemm.cu"},
      {"conv, bf16 data", facts(W::conv, {"aten::convolution"}, "bfloat16"), "gemm_sm90_bf16.cu"},
      {"attention, bf16 data", facts(W::attention, {"aten::_scaled_dot_product_efficient_attention"}, "bfloat16"),
       "gemm_sm90_bf16.cu"},
      {"softmax", facts(W::reduction, {"aten::_softmax"}), "softmax_ticket.cu"},
      {"log_softmax", facts(W::reduction, {"aten::_log_softmax"}), "log_softmax_ticket.cu"},
      {"layer_norm", facts(W::reduction, {"aten::native_layer_norm"}), "layernorm_rows_grid.cu"},
      {"group_norm", facts(W::reduction, {"aten::native_group_norm"}), "layernorm_rows_grid.cu"},
      {"fused rms_norm", facts(W::reduction, {"aten::_fused_rms_norm"}), "rmsnorm_channels.cu"},
      {"rms written out (KernelBench 36)",
       facts(W::reduction, {"aten::pow", "aten::mean", "aten::add", "aten::sqrt", "aten::div"}), "rmsnorm_channels.cu"},
      {"layer norm written out",
       facts(W::reduction, {"aten::mean", "aten::sub", "aten::pow", "aten::mean", "aten::add", "aten::rsqrt"}),
       "layernorm_rows_grid.cu"},
      {"sum over a dim", facts(W::reduction, {"aten::sum.dim_IntList"}), "reduce_dim.cu"},
      {"argmax", facts(W::reduction, {"aten::argmax"}), "reduce_dim.cu"},
      {"reduction, ops unknown", facts(W::reduction, {}), "reduce_dim.cu"},
      {"relu", facts(W::elementwise, {"aten::relu"}), "elementwise.cu"},
      {"other", facts(W::other, {"aten::cumsum"}), "elementwise.cu"},
  };
  for (const Row& row : table) {
    ExampleChoice c = choose_example(row.facts);
    EXPECT_EQ(c.file, row.file) << row.what;
    EXPECT_EQ(c.why.rfind("the library's ", 0), 0u) << row.what << ": the prompt reads \"This is <why>.\"";
    EXPECT_EQ(c.why.find('\n'), std::string::npos) << row.what << ": the why is one line";
  }
}

TEST(ExampleChoice, LogSoftmaxIsNotTakenForSoftmax) {
  // "log_softmax" contains "softmax": the op names are compared whole.
  EXPECT_EQ(choose_example(facts(WorkloadClass::reduction, {"aten::_log_softmax"})).file, "log_softmax_ticket.cu");
  EXPECT_EQ(choose_example(facts(WorkloadClass::reduction, {"aten::_softmax"})).file, "softmax_ticket.cu");
}

TEST(ExampleChoice, TheWhyLineNamesWhatTheKernelIsAndWhatItMeasured) {
  auto strict = choose_example(facts(WorkloadClass::gemm, {"aten::mm"}));
  EXPECT_NE(strict.why.find("strict-fp32 GEMM: 3xTF32 on wgmma"), std::string::npos) << strict.why;
  EXPECT_NE(strict.why.find("2.00x cuBLAS SGEMM on an H200"), std::string::npos) << strict.why;
  auto conv = choose_example(facts(WorkloadClass::conv, {"aten::convolution"}));
  EXPECT_EQ(conv.why.rfind("the library's convolution", 0), 0u) << conv.why;
  EXPECT_NE(conv.why.find("per output phase"), std::string::npos) << conv.why;
  auto conv16 = choose_example(facts(WorkloadClass::conv, {"aten::convolution"}, "float16"));
  EXPECT_NE(conv16.why.find("; shown because a convolution is an implicit GEMM"), std::string::npos) << conv16.why;
  auto attention = choose_example(facts(WorkloadClass::attention, {}));
  EXPECT_NE(attention.why.find("; shown because attention is two GEMMs"), std::string::npos) << attention.why;
  auto softmax = choose_example(facts(WorkloadClass::reduction, {"aten::_softmax"}));
  EXPECT_NE(softmax.why.find("chunks handed to every SM"), std::string::npos) << softmax.why;
  EXPECT_NE(softmax.why.find("97.3% of the memory floor on KernelBench 23"), std::string::npos) << softmax.why;
}

TEST(ExampleChoice, EveryFileItCanChooseIsListedAndExists) {
  const std::filesystem::path examples = std::filesystem::path(CUTEGEN_SOURCE_ROOT) / "library";
  auto files = example_files();
  for (WorkloadClass c : all_workload_classes()) {
    for (Precision p : {Precision::strict, Precision::tf32, Precision::bf16}) {
      for (const char* op : {"aten::_softmax", "aten::_log_softmax", "aten::native_layer_norm", "aten::_fused_rms_norm",
                             "aten::sum"}) {
        std::string_view file = choose_example(facts(c, {op}, "float32", p)).file;
        EXPECT_NE(std::find(files.begin(), files.end(), file), files.end()) << file << " is not in example_files()";
      }
    }
  }
  for (std::string_view f : files) EXPECT_TRUE(std::filesystem::exists(examples / std::string(f))) << f;
}
