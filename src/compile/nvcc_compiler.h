#pragma once
#include <future>
#include <memory>
#include <optional>
#include <set>

#include "common/process.h"
#include "compile/compile_cache.h"
#include "compile/compile_options.h"
#include "compile/compiler.h"
#include "compile/sass_lines.h"
#include "sandbox/sandbox.h"

namespace cutegen {

// What else, besides the source and the flags, decides the bytes nvcc produces. All of it is in the key.
struct Toolchain {
  std::string nvcc_version;           // `nvcc --version`, verbatim
  std::string host_compiler_version;  // first line of `<host compiler> --version`
  std::string cutlass_version;
  std::filesystem::path cutlass_include;  // canonical
  std::string contract_hash;          // sha256 of cutegen/kernel.h
  std::filesystem::path contract_include;
  // The build of cutegen whose checks judge the library (common/build_identity.h): a verdict cached
  // by another build — older rules, a hole since closed — is never served.
  std::string checker_identity;
  // nvdisasm, which prints the built kernels' machine code for the CuTe check on the build
  // (built_cute.h); probe_toolchain finds it (find_nvdisasm) or fails.
  std::filesystem::path nvdisasm;
  // CUTLASS's utility headers (cutlass/util/...), which its SM90 convolution collective includes: beside
  // include/ at tools/util/include in a checkout and in the nvidia-cutlass wheel (scripts/setup keeps that
  // layout under third_party/cutlass). Empty where there are none: a kernel that needs them then fails to
  // compile naming the missing header. Last, so positional initialisers of the fields above stay valid.
  std::filesystem::path cutlass_util_include;
};

// Probes nvcc, the host compiler, CUTLASS and the contract header once.
Result<Toolchain> probe_toolchain(ProcessRunner& runner, const CompileOptions& options);

// nvcc runs through `sandbox` (cutegen-sandbox) with the compiler profile: no network, writes only in
// its staging directory (also its HOME and TMPDIR), reads only the toolkit, CUTLASS, the contract
// header and the system directories, and at most options.memory_limit_mb of memory per process.
class NvccCompiler final : public Compiler {
 public:
  NvccCompiler(ProcessRunner& runner, CompileOptions options, Toolchain toolchain, CompileCache cache,
               std::filesystem::path sandbox);
  Result<CompileOutcome> compile(const CompileRequest& request) override;

  // The content key of a request: equal keys produce identical libraries.
  std::string key_for(const std::string& source, const std::vector<Define>& defines = {}) const;

  // What nvcc may touch when it compiles in `staging`.
  SandboxPolicy sandbox_policy(const std::filesystem::path& staging) const;

 private:
  Result<CompileOutcome> build(const CompileRequest& request, const std::string& key);
  // nvdisasm of the device code an overlapped build made, started beside its host compile.
  struct EarlySass {
    std::string image;  // the cubin's bytes
    std::future<Result<std::map<std::string, SassFunction>>> functions;
  };
  // Runs the build command `argv` (nvcc) in `staging`: its steps overlapped where nvcc_plan.h can, else
  // nvcc itself. `steps` says which ("overlapped", or "in turn: " and why); `early` gets the device
  // code's disassembly when an overlapped build started one.
  Result<ProcessResult> run_build(const std::filesystem::path& staging, const std::vector<std::string>& argv,
                                  const std::string& key, std::string& steps, std::optional<EarlySass>& early);
  CompileOutcome from_cache(const nlohmann::json& stored, const CompileRequest& request, const std::string& key) const;
  // The build's machine code for the CuTe check on it (built_cute.h): nvdisasm on each of the library's
  // cubins (`images`), confined like nvcc. `early`: an overlapped build's disassembly, used for the image of
  // the same bytes.
  Result<std::map<std::string, SassFunction>> library_sass(const std::filesystem::path& staging,
                                                           const std::vector<std::string>& images, EarlySass* early);

  ProcessRunner& runner_;
  CompileOptions options_;
  Toolchain toolchain_;
  CompileCache cache_;
  std::filesystem::path sandbox_;
};

}  // namespace cutegen
