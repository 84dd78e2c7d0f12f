#pragma once
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "common/process.h"
#include "compile/compile_cache.h"
#include "compile/compile_options.h"
#include "compile/compiler.h"
#include "compile/host_pch.h"
#include "compile/sass_lines.h"
#include "sandbox/sandbox.h"

namespace cutegen {

struct OverlappedBuild;  // nvcc_plan.h

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
  // Waits for the precompiled host headers still being built (they write into the store).
  ~NvccCompiler() override;
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
  // nvcc itself. `steps` says which ("overlapped", or "in turn: " and why), `host_pch` how the host compile
  // went (run_host_steps); `early` gets the device code's disassembly when an overlapped build started one.
  Result<ProcessResult> run_build(const std::filesystem::path& staging, const std::vector<std::string>& argv,
                                  std::string& steps, std::string& host_pch, std::optional<EarlySass>& early);
  // The steps after both chains of an overlapped build: the host compile through the precompiled prefix
  // of its source where the store has it (host_pch.h), else as nvcc would, precompiling the prefix beside
  // it for the next build. `host_pch` says which, or why neither.
  Result<ProcessResult> run_host_steps(const std::filesystem::path& staging, const OverlappedBuild& build,
                                       const SandboxPolicy& policy, std::chrono::seconds left, std::string& host_pch);
  // The chains of an overlapped build with the host compile started from the early stub (stub_ahead.h):
  // the device chain beside the front end and the early stub, the host compile (through the precompiled
  // prefix where the store has it, host_pch_for) beside the rest of the device chain, then the assembler
  // and the link. Where the early stub or the fatbinary's C form is not what the host compile assumed, or
  // the early host compile failed, the host steps run after the device chain as run_host_steps has them.
  // `steps` says which.
  Result<ProcessResult> run_stub_ahead(const std::filesystem::path& staging, const OverlappedBuild& build,
                                       const SandboxPolicy& policy, const std::string& module_id, std::string& steps,
                                       std::string& host_pch, std::optional<EarlySass>& early);
  // The store's precompiled prefix for this host source: its entry and the source rewritten to read it, with
  // `status` "used"; else no entry and why (`CompileOutcome::host_pch`), its precompile started for the
  // next build where it can be.
  struct HostPchUse {
    std::optional<std::filesystem::path> entry;
    std::string source;
    std::string status;
  };
  HostPchUse host_pch_for(std::string_view host_source, const OverlappedBuild& build);
  // Starts nvdisasm on the device code an overlapped build's chains made (`early`), beside its host steps.
  void start_early_sass(const std::filesystem::path& staging, const OverlappedBuild& build,
                        const SandboxPolicy& policy, std::optional<EarlySass>& early);
  // Precompiles `prefix` into the store as `key` on a thread of its own, once per key. Why it could not start.
  std::optional<std::string> start_host_pch(const std::string& key, std::string_view prefix,
                                            const std::string& pch_script);
  CompileOutcome from_cache(const nlohmann::json& stored, const CompileRequest& request, const std::string& key) const;
  // The build's machine code for the CuTe check on it (built_cute.h): nvdisasm on each of the library's
  // cubins that hold machine code (`images`, LibraryInspection::code_images), confined like nvcc. `early`: an overlapped build's disassembly, used for the image of
  // the same bytes.
  Result<std::map<std::string, SassFunction>> library_sass(const std::filesystem::path& staging,
                                                           const std::vector<std::string>& images, EarlySass* early);

  ProcessRunner& runner_;
  CompileOptions options_;
  Toolchain toolchain_;
  CompileCache cache_;
  std::filesystem::path sandbox_;
  HostPchStore host_pch_store_;
  std::mutex host_pch_mutex_;
  std::set<std::string> host_pch_building_;              // keys with a build running
  std::map<std::string, std::string> host_pch_failed_;   // key -> why its build failed (not tried again)
  std::vector<std::future<void>> host_pch_builds_;
};

}  // namespace cutegen
