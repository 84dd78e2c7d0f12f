// The self-contained exports as text. tests/export_files_test.py runs what they generate in Python
// (py_compile, imports with the build faked, KernelBench's static checker when a checkout is given).
#include <gtest/gtest.h>

#include <regex>

#include "report/kernelbench_export.h"
#include "report/op_package.h"

namespace cutegen {
namespace {

constexpr const char* kReluProblem = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)

def get_inputs():
    return [torch.rand(4096, 65536)]

def get_init_inputs():
    return []
)";

constexpr const char* kKernel = R"(#include <cutegen/kernel.h>
#include <cute/tensor.hpp>
using namespace cute;
namespace relu {
__global__ void relu_kernel(float* x) {}
}
extern "C" int cutegen_forward(const cutegen_tensor* in, int32_t n_in, const cutegen_tensor* out, int32_t n_out,
                               cudaStream_t stream) { return 0; }
)";

ExportSource relu_source() {
  ExportSource s;
  s.kernel_source = kKernel;
  s.problem_source = kReluProblem;
  s.problem.name = "19_ReLU";
  s.problem.inputs = {{.name = "x", .dtype = "float32", .shape = {4096, 65536}}};
  s.problem.outputs = {{.dtype = "float32", .shape = {4096, 65536}}};
  s.verified_by = "cutegen judged it: pass";
  s.build.flags = {"-O3", "--expt-relaxed-constexpr"};
  s.build.contract_header = "#pragma once\ninline auto t = cute::make_layout(1);\n";
  s.build.cutlass_version = "4.2.0";
  return s;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(KernelBenchExport, OneFileWithTheKernelTheProblemAndModelNew) {
  auto file = make_kernelbench_file(relu_source());
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->op_name, "p19_relu");
  EXPECT_TRUE(file->note.empty());
  const std::string& t = file->text;
  EXPECT_TRUE(has(t, std::string("_KERNEL_SOURCE = r'''") + kKernel + "'''")) << t;
  EXPECT_TRUE(has(t, "inline auto t = cute::make_layout(1);"));  // the contract header, inline
  EXPECT_TRUE(has(t, "#pragma weak cutegen_forward_ws"));       // the binding, inline
  EXPECT_TRUE(has(t, "def get_inputs():\n    return [torch.rand(4096, 65536)]"));
  EXPECT_TRUE(has(t, "class ModelNew(Model):"));
  EXPECT_TRUE(has(t, "super(Model, self).__init__()"));  // the problem's constructor, as written
  // The reference forward() is left out: the file computes nothing with torch operators.
  EXPECT_FALSE(has(t, "torch.relu")) << t;
  EXPECT_TRUE(has(t, "raise NotImplementedError(\"cutegen: this file leaves the PyTorch forward() out"));
  EXPECT_TRUE(has(t, "(\"tensor\", (4096, 65536), \"float32\"),"));
  EXPECT_TRUE(has(t, "\"outputs\": [((4096, 65536), \"float32\"), ]"));
  EXPECT_TRUE(has(t, "_CAPABILITY = (9, 0)"));
  EXPECT_TRUE(has(t, "\"-gencode=arch=compute_90a,code=sm_90a\""));
  EXPECT_TRUE(has(t, "\"-std=c++17\", "));
  EXPECT_TRUE(has(t, "\"-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL\""));
  EXPECT_TRUE(has(t, "_cpp_extension.load("));
  EXPECT_TRUE(has(t, "# cutegen judged it: pass"));
  EXPECT_FALSE(has(t, "{{")) << "an unfilled placeholder";
  // What KernelBench's static checker refuses anywhere in a submission but in comments, which it cuts at
  // '#' and '//' (its code is not copied here: src/report/export_files_test.py runs the checker itself
  // when KERNELBENCH_DIR is set).
  std::string code;
  for (size_t pos = 0; pos < t.size();) {
    size_t end = std::min(t.find('\n', pos), t.size());
    std::string line = t.substr(pos, end - pos);
    line = line.substr(0, std::min(line.find('#'), line.find("//")));
    code += line + "\n";
    pos = end + 1;
  }
  std::smatch refused;
  EXPECT_FALSE(std::regex_search(code, refused, std::regex(R"(\btry\s*:|\bexcept\b|\bpass\b|import threading)")))
      << refused.str() << " at " << refused.position();
}

// The shapes the judge's generalization trials verified are more entries of VERIFIED_CALLS, in both exports.
TEST(KernelBenchExport, ShapesTheGeneralizationTrialsVerifiedAreMoreVerifiedCalls) {
  ExportSource s = relu_source();
  VerifiedShape smaller;
  smaller.config = {{"batch_size", 513}};
  smaller.inputs = {std::vector<int64_t>{513, 65536}};
  smaller.outputs = {{513, 65536}};
  s.other_shapes = {smaller};
  auto file = make_kernelbench_file(s);
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_TRUE(has(file->text, "(\"tensor\", (4096, 65536), \"float32\"),")) << file->text;  // the own call first
  EXPECT_TRUE(has(file->text, "(\"tensor\", (513, 65536), \"float32\"),")) << file->text;
  EXPECT_TRUE(has(file->text, "\"outputs\": [((513, 65536), \"float32\"), ]")) << file->text;
  auto package = make_op_package(s);
  ASSERT_TRUE(package.ok()) << package.error().message;
  bool listed = false;
  for (const PackageFile& f : package->files) listed = listed || has(f.text, "(\"tensor\", (513, 65536), \"float32\"),");
  EXPECT_TRUE(listed);
  // A shape that does not line up with the problem's call is an error, not a wrong entry.
  s.other_shapes[0].outputs.push_back({1});
  auto bad = make_kernelbench_file(s);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(has(bad.error().message, "a verified shape lists 1 inputs and 2 outputs")) << bad.error().message;
  // An evaluation's own shape (its first) is not repeated.
  Evaluation e;
  Generalization g;
  g.verified = {VerifiedShape{}, smaller};
  e.generalization = g;
  ASSERT_EQ(other_verified_shapes(e).size(), 1u);
  EXPECT_EQ(other_verified_shapes(e)[0].config.at("batch_size"), 513);
  EXPECT_TRUE(other_verified_shapes(Evaluation{}).empty());
}

TEST(KernelBenchExport, ScalarsParametersAndTupleOutputs) {
  ExportSource s = relu_source();
  s.problem.name = "scale_add";
  s.problem.inputs.push_back({.name = "alpha", .kind = ValueFacts::Kind::scalar, .dtype = "float64", .value = "0.5"});
  s.problem.inputs.push_back({.name = "flag", .kind = ValueFacts::Kind::scalar, .dtype = "bool", .value = "true"});
  s.problem.params = {{.name = "ln.weight", .dtype = "float32", .shape = {16}}};
  s.problem.outputs.push_back({.dtype = "float16", .shape = {}});
  auto file = make_kernelbench_file(s);
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_TRUE(has(file->text, "(\"scalar\", \"float\", 0.5),"));
  EXPECT_TRUE(has(file->text, "(\"scalar\", \"bool\", True),"));
  EXPECT_TRUE(has(file->text, "(\"tensor\", (16,), \"float32\"),"));
  EXPECT_TRUE(has(file->text, "\"outputs\": [((4096, 65536), \"float32\"), ((), \"float16\"), ]"));
}

TEST(KernelBenchExport, AModelWithoutItsOwnForwardKeepsTheProblemAndSaysSo) {
  ExportSource s = relu_source();
  s.problem_source = "import torch\nfrom other import Reference as Model\n";
  auto file = make_kernelbench_file(s);
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_TRUE(has(file->note, "Model.forward() is not in the problem's text"));
  EXPECT_TRUE(has(file->text, "from other import Reference as Model\n"));
}

TEST(KernelBenchExport, RefusesWhatItCannotCarry) {
  ExportSource quotes = relu_source();
  quotes.kernel_source = "// ''' and \"\"\"\n";
  auto q = make_kernelbench_file(quotes);
  ASSERT_FALSE(q.ok());
  EXPECT_TRUE(has(q.error().message, "the kernel source")) << q.error().message;

  ExportSource other = relu_source();
  other.problem.inputs.push_back({.name = "shape", .kind = ValueFacts::Kind::other, .value = "(1, 2)"});
  auto o = make_kernelbench_file(other);
  ASSERT_FALSE(o.ok());
  EXPECT_TRUE(has(o.error().message, "argument 1 ('shape') is neither a tensor nor a number")) << o.error().message;

  ExportSource arch = relu_source();
  arch.build.arch = "compute_90";
  EXPECT_FALSE(make_kernelbench_file(arch).ok());

  ExportSource dtype = relu_source();
  dtype.problem.outputs = {{.dtype = "complex64", .shape = {2}}};
  auto d = make_kernelbench_file(dtype);
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(has(d.error().message, "complex64")) << d.error().message;
}

TEST(OpPackage, AnInstallableDirectory) {
  ExportSource s = relu_source();
  s.problem.params = {{.name = "ln.weight", .dtype = "float32", .shape = {16}}};
  auto pkg = make_op_package(s);
  ASSERT_TRUE(pkg.ok()) << pkg.error().message;
  EXPECT_EQ(pkg->module_name, "cutegen_p19_relu");
  EXPECT_EQ(pkg->dist_name, "cutegen-p19-relu");
  std::map<std::string, std::string> files;
  for (const auto& f : pkg->files) files[f.path] = f.text;
  for (const char* path : {"pyproject.toml", "setup.py", "README.md", "cutegen_p19_relu/__init__.py",
                           "cutegen_p19_relu/reference.py", "cutegen_p19_relu/csrc/kernel.cu",
                           "cutegen_p19_relu/csrc/binding.cpp", "cutegen_p19_relu/csrc/include/cutegen/kernel.h"})
    EXPECT_TRUE(files.count(path)) << path;
  EXPECT_EQ(files["cutegen_p19_relu/csrc/kernel.cu"], kKernel);
  EXPECT_EQ(files["cutegen_p19_relu/reference.py"], kReluProblem);  // as judged, forward() and all
  const std::string& init = files["cutegen_p19_relu/__init__.py"];
  EXPECT_TRUE(has(init, "_library.define(\"p19_relu(Tensor x_0, Tensor ln_weight_1) -> Tensor\")")) << init;
  EXPECT_TRUE(has(init, "_torch.library.register_fake(\"cutegen::p19_relu\", _fake, lib=_library)"));
  EXPECT_TRUE(has(init, "_STATE_NAMES = [\"ln.weight\", ]"));
  EXPECT_TRUE(has(init, "return _torch.ops.cutegen.p19_relu(*inputs, *state)"));
  EXPECT_FALSE(has(init, "{{"));
  const std::string& setup = files["setup.py"];
  EXPECT_TRUE(has(setup, "name=\"cutegen_p19_relu._C\"")) << setup;
  EXPECT_TRUE(has(setup, "\"-gencode=arch=compute_90a,code=sm_90a\""));
  EXPECT_TRUE(std::regex_search(setup, std::regex(R"(version="0\.1\.0\+k[0-9a-f]{12}")"))) << setup;
  EXPECT_TRUE(has(files["pyproject.toml"], "build-backend = \"setuptools.build_meta\""));
}

TEST(OpPackage, TwoOutputsMakeATupleSchema) {
  ExportSource s = relu_source();
  s.problem.outputs.push_back({.dtype = "float32", .shape = {1}});
  auto pkg = make_op_package(s);
  ASSERT_TRUE(pkg.ok()) << pkg.error().message;
  for (const auto& f : pkg->files) {
    if (f.path.ends_with("__init__.py")) {
      EXPECT_TRUE(has(f.text, "-> (Tensor, Tensor)\")")) << f.text;
    }
  }
}

}  // namespace
}  // namespace cutegen
