#include "report/torch_export.h"

#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/process.h"

using namespace cutegen;
namespace fs = std::filesystem;

namespace {

nlohmann::json linear_gelu_json() {
  return nlohmann::json::parse(R"({
    "name": "linear_gelu",
    "inputs": [{"name": "x", "kind": "tensor", "dtype": "float32", "shape": [8, 16]},
               {"name": "alpha", "kind": "scalar", "dtype": "float64"}],
    "params": [{"name": "fc.weight", "kind": "tensor", "dtype": "float32", "shape": [4, 16], "buffer": false},
               {"name": "fc.bias", "kind": "tensor", "dtype": "float32", "shape": [4], "buffer": false}],
    "outputs": [{"kind": "tensor", "dtype": "float32", "shape": [8, 4]}]})");
}

// The worker's load answer as the judge reads it.
ProblemFacts facts(const nlohmann::json& j) {
  auto f = ProblemFacts::from_json(j);
  EXPECT_TRUE(f.ok()) << f.error().message;
  return f.ok() ? *f : ProblemFacts{};
}

ProblemFacts linear_gelu_metadata() { return facts(linear_gelu_json()); }

}  // namespace

TEST(TorchExport, SchemaListsInputsThenParametersWithTheirTypes) {
  auto e = make_torch_export(linear_gelu_metadata());
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->op_name, "linear_gelu");
  EXPECT_NE(e->op_module.find("linear_gelu(Tensor x_0, float alpha_1, Tensor fc_weight_2, Tensor fc_bias_3) -> Tensor"),
            std::string::npos)
      << e->op_module;
  EXPECT_NE(e->op_module.find("((8, 4, ), torch.float32)"), std::string::npos);
  // Whoever imports it is told that the kernel's host code runs unconfined in their process.
  EXPECT_NE(e->op_module.find("outside cutegen's sandbox"), std::string::npos) << e->op_module;
}

TEST(TorchExport, UnsupportedMetadataIsAClearError) {
  auto m = linear_gelu_json();
  m["outputs"][0]["dtype"] = "complex64";
  auto e = make_torch_export(facts(m));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("complex64"), std::string::npos);
  auto missing = make_torch_export(ProblemFacts{.name = "x"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no outputs"), std::string::npos);
}

TEST(TorchExport, IdentifiersAreValidPython) {
  EXPECT_EQ(op_identifier("19_ReLU"), "p19_relu");
  EXPECT_EQ(op_identifier("fc.weight"), "fc_weight");
  EXPECT_EQ(op_identifier(""), "p");
}

// The generated module really imports under torch (CPU here): the op is registered with its schema
// and its fake implementation gives outputs of the verified shapes, which is what torch.compile uses.
TEST(TorchExport, GeneratedModuleRegistersTheOpWithItsFakeImplementation) {
  auto e = make_torch_export(linear_gelu_metadata());
  ASSERT_TRUE(e.ok()) << e.error().message;
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-export-test-");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(write_file_atomic(*dir / "linear_gelu_op.py", e->op_module).ok());
  // A stand-in kernel.so: only its symbol matters for importing.
  ASSERT_TRUE(write_file_atomic(*dir / "k.c", "int cutegen_forward(void){return 0;}\n").ok());
  PosixProcessRunner runner;
  auto cc = runner.run({.argv = {"cc", "-shared", "-fPIC", "-o", (*dir / "kernel.so").string(), (*dir / "k.c").string()}});
  ASSERT_TRUE(cc.ok() && cc->succeeded());
  const char* script = R"(
import sys, torch
sys.path.insert(0, sys.argv[1])
import linear_gelu_op
from torch._subclasses.fake_tensor import FakeTensorMode
print(torch.ops.cutegen.linear_gelu.default._schema)
with FakeTensorMode():
    x = torch.empty(8, 16); w = torch.empty(4, 16); b = torch.empty(4)
    y = torch.ops.cutegen.linear_gelu(x, 0.5, w, b)
    print("fake", tuple(y.shape), y.dtype)
)";
  auto py = runner.run({.argv = {"python3", "-c", script, dir->string()}, .timeout = std::chrono::seconds(120)});
  ASSERT_TRUE(py.ok());
  EXPECT_TRUE(py->succeeded()) << py->out << py->err;
  EXPECT_NE(py->out.find("cutegen::linear_gelu(Tensor x_0, float alpha_1, Tensor fc_weight_2, Tensor fc_bias_3) -> Tensor"),
            std::string::npos)
      << py->out << py->err;
  EXPECT_NE(py->out.find("fake (8, 4) torch.float32"), std::string::npos) << py->out << py->err;
  fs::remove_all(*dir);
}

// A kernel with a workspace (contract v2): the module finds the workspace form, and asks the size with
// the call's descriptors but NULL data, as the judge did (the stand-in returns 1 when it sees data).
TEST(TorchExport, GeneratedModuleAsksAWorkspaceKernelItsSizeWithoutData) {
  auto e = make_torch_export(linear_gelu_metadata());
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_NE(e->op_module.find("workspace = torch.empty(size, dtype=torch.uint8, device=device)"), std::string::npos);
  EXPECT_NE(e->op_module.find("_lib.cutegen_forward_ws(inputs, len(args), outputs, len(outs), workspace.data_ptr(), size, "
                              "stream)"),
            std::string::npos);
  auto dir = make_unique_dir(fs::temp_directory_path(), "cutegen-export-ws-test-");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(write_file_atomic(*dir / "linear_gelu_op.py", e->op_module).ok());
  ASSERT_TRUE(write_file_atomic(*dir / "k.c", R"(
#include <stddef.h>
#include <stdint.h>
typedef struct { void* data; int32_t dtype, rank; int64_t shape[8], stride[8]; int32_t s, r; double f; int64_t i; } D;
size_t cutegen_workspace_bytes(const D* in, int32_t n, const D* out, int32_t m) {
  for (int k = 0; k < n; ++k) if (in[k].data) return 1;
  for (int k = 0; k < m; ++k) if (out[k].data) return 1;
  return 1000 * in[0].shape[0] + out[0].shape[1];
}
int cutegen_forward_ws(void) { return 0; }
)").ok());
  PosixProcessRunner runner;
  auto cc = runner.run({.argv = {"cc", "-shared", "-fPIC", "-o", (*dir / "kernel.so").string(), (*dir / "k.c").string()}});
  ASSERT_TRUE(cc.ok() && cc->succeeded());
  const char* script = R"(
import sys, torch
sys.path.insert(0, sys.argv[1])
import linear_gelu_op as m
x, y = torch.zeros(8, 16), torch.zeros(8, 4)
def described(t):
    d = m._Descriptor()
    d.data, d.dtype, d.rank = t.data_ptr(), 0, t.dim()
    for i in range(t.dim()):
        d.shape[i], d.stride[i] = t.shape[i], t.stride(i)
    return d
ins, outs = (m._Descriptor * 1)(described(x)), (m._Descriptor * 1)(described(y))
print("workspace", m._WITH_WORKSPACE, m._workspace_bytes(ins, 1, outs, 1), bool(ins[0].data))
)";
  auto py = runner.run({.argv = {"python3", "-c", script, dir->string()}, .timeout = std::chrono::seconds(120)});
  ASSERT_TRUE(py.ok());
  EXPECT_TRUE(py->succeeded()) << py->out << py->err;
  EXPECT_NE(py->out.find("workspace True 8004 True"), std::string::npos) << py->out << py->err;
  fs::remove_all(*dir);
}
