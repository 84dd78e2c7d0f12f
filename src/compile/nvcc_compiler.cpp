#include "compile/nvcc_compiler.h"

#include <chrono>
#include <future>

#include <fmt/format.h>

#include "common/build_identity.h"
#include "common/json_text.h"
#include "common/fs.h"
#include "common/locations.h"
#include "common/sha256.h"
#include "compile/built_cute.h"
#include "compile/cute_usage.h"
#include "compile/device_code_match.h"
#include "compile/host_assembly.h"
#include "compile/host_pch.h"
#include "compile/library_checks.h"
#include "compile/nvcc_plan.h"
#include "compile/source_rules.h"
#include "compile/stub_ahead.h"
#include "sandbox/sandbox_command.h"

namespace cutegen {
namespace fs = std::filesystem;
namespace {

constexpr const char* kCandidateFile = "candidate.cu";  // the name nvcc sees; diagnostics map it back
constexpr const char* kLibraryFile = "kernel.so";
constexpr const char* kAnalysisFile = "candidate.analysis.ptx";  // the CuTe check's -O0 device compile
constexpr const char* kBuildKeepDir = "kept-build";  // nvcc --keep of each compile (device_code_match.h)
constexpr const char* kAnalysisKeepDir = "kept-analysis";
// Bumped when what a cache entry holds changes. (What decides a verdict changes with every build of
// cutegen: Toolchain::checker_identity is in the key for that.)
// v3: contract v2 entry points; v4: the analysis compile's device code proven the build's; v5: CuTe
// checked on the build's machine code too.
constexpr const char* kCacheSchema = "cutegen-compile-v5";

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty() || from == to) return s;
  for (std::size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) s.replace(pos, from.size(), to);
  return s;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// Every -I of a build: the contract's header, CUTLASS's and, where present, CUTLASS's utility headers.
std::vector<fs::path> include_dirs(const Toolchain& t) {
  std::vector<fs::path> dirs{t.contract_include, t.cutlass_include};
  if (!t.cutlass_util_include.empty()) dirs.push_back(t.cutlass_util_include);
  return dirs;
}

// The build's PTX when nvcc kept exactly one (one device architecture): the CuTe rule's evidence from the
// build itself (cute_usage.h, build_evidence). None otherwise, and the analysis compile decides.
std::optional<std::string> single_kept_ptx(const fs::path& dir) {
  std::optional<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".ptx") continue;
    if (found) return std::nullopt;
    found = entry.path();
  }
  if (ec || !found) return std::nullopt;
  auto text = read_file(*found);
  if (!text) return std::nullopt;
  return std::move(*text);
}

// What nvcc's log may quote: the candidate and the headers it may include (source_rules.h).
QuotableFiles quotable_files(const Toolchain& t, const std::string& nvcc) {
  QuotableFiles q{kCandidateFile, {t.cutlass_include, t.contract_include, "/usr/include", "/usr/lib/gcc"}};
  if (!t.cutlass_util_include.empty()) q.roots.push_back(t.cutlass_util_include);
  if (auto exe = find_executable(nvcc)) {
    std::error_code ec;
    fs::path root = exe->parent_path().parent_path();
    q.roots.push_back(root.lexically_normal());
    if (auto canon = fs::canonical(root, ec); !ec) q.roots.push_back(canon);
  }
  return q;
}

// What the toolchain (nvcc, cudafe++, cicc, ptxas, fatbinary, nvlink, gcc, cc1plus, as, ld) opens outside
// the installations named one by one, measured with strace on a CuTe build (nvcc 13.0, GCC 12, Debian 12):
// the system's program and library trees, the dynamic loader's cache and preload list, the time zone,
// glibc malloc's overcommit setting and the random devices. Not /etc, /proc or /sys as a whole: the
// assembler and the preprocessor open whatever path an asm string or __has_include names, which read
// /etc/shadow and other processes' /proc/<pid>/cmdline. Symbolic links (/etc/alternatives/...) need no
// rule, Landlock judges the file a link resolves to; cicc's readlink of /proc/self/exe is not restricted.
constexpr const char* kToolchainSystemFiles[] = {
    "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc/ld.so.cache", "/etc/ld.so.preload",
    "/etc/localtime", "/proc/sys/vm/overcommit_memory", "/dev/urandom", "/dev/random"};

// The installation prefix of a program found on PATH: /usr/local/cuda-13.0/bin/nvcc -> /usr/local/cuda-13.0.
std::optional<fs::path> prefix_of(const std::string& program) {
  auto exe = find_executable(program);
  if (!exe) return std::nullopt;
  std::error_code ec;
  auto real = fs::canonical(*exe, ec);
  if (ec) return std::nullopt;
  auto prefix = real.parent_path().parent_path();
  // A compiler in /bin must not open the whole file system.
  return prefix == prefix.root_path() ? real.parent_path() : prefix;
}

// cutegen-sandbox's own failures (exit 125-127 with its prefix) are cutegen's problem, not the candidate's.
std::optional<std::string> sandbox_failure(const ProcessResult& r) {
  if (r.timed_out || r.term_signal != 0 || r.exit_code < 125 || r.exit_code > 127) return std::nullopt;
  auto line = first_line(r.err);
  if (line.rfind("cutegen-sandbox:", 0) != 0) return std::nullopt;
  return line;
}

}  // namespace

std::string to_string(CompileVerdict v) {
  switch (v) {
    case CompileVerdict::ok: return "ok";
    case CompileVerdict::compile_error: return "compile_error";
    case CompileVerdict::timeout: return "timeout";
    case CompileVerdict::rejected: return "rejected";
  }
  return "unknown";
}

std::string CompileOutcome::feedback() const {
  switch (verdict) {
    case CompileVerdict::ok: return "";
    case CompileVerdict::compile_error: return diagnostic.text;
    case CompileVerdict::timeout:
      return fmt::format("nvcc did not finish within the time limit ({:.0f} s): look for runaway template recursion "
                         "or very large unrolled loops", nvcc_seconds);
    case CompileVerdict::rejected: {
      std::string s = "the kernel breaks the contract:\n";
      for (const auto& v : violations) s += fmt::format("- [{}] {}\n", v.code, v.message);
      return s;
    }
  }
  return "";
}

std::vector<std::string> CompileOutcome::performance_warnings() const {
  return ok() ? cutegen::performance_warnings(log) : std::vector<std::string>{};
}

nlohmann::json CompileOutcome::to_json() const {
  nlohmann::json j;
  j["verdict"] = to_string(verdict);
  j["key"] = key;
  j["cache_hit"] = cache_hit;
  j["library"] = library.string();
  j["nvcc_seconds"] = nvcc_seconds;
  j["nvcc_steps"] = nvcc_steps;
  j["host_pch"] = host_pch;
  j["cute_evidence"] = cute_evidence;
  j["check_seconds"] = check_seconds;
  j["total_seconds"] = total_seconds;
  j["command"] = command;
  j["violations"] = nlohmann::json::array();
  for (const auto& v : violations) j["violations"].push_back({{"code", v.code}, {"message", v.message}});
  j["feedback"] = feedback();
  j["performance_warnings"] = performance_warnings();
  j["errors"] = nlohmann::json::array();
  for (const auto& e : diagnostic.errors)
    j["errors"].push_back({{"message", e.message}, {"line", e.candidate_line}, {"origin", e.origin}, {"via", e.via},
                           {"follow_on", e.follow_on}});
  j["total_errors"] = diagnostic.total_errors;
  return j;
}

Result<Toolchain> probe_toolchain(ProcessRunner& runner, const CompileOptions& options) {
  Toolchain t;
  auto nvcc = runner.run({.argv = {options.nvcc, "--version"}, .timeout = std::chrono::seconds(30)});
  if (!nvcc) return Error{fmt::format("{}; install the CUDA toolkit or set compile.nvcc in the config", nvcc.error().message)};
  if (!nvcc->succeeded()) return Error{fmt::format("`{} --version` failed: {}", options.nvcc, nvcc->describe_end())};
  t.nvcc_version = nvcc->out;
  std::string host = options.host_compiler.empty() ? "g++" : options.host_compiler;
  auto hc = runner.run({.argv = {host, "--version"}, .timeout = std::chrono::seconds(30)});
  if (!hc || !hc->succeeded())
    return Error{fmt::format("host compiler `{}` not usable; install g++ or set compile.host_compiler", host)};
  t.host_compiler_version = first_line(hc->out);
  auto inc = cutlass_include_dir();
  if (!inc) return inc.error();
  std::error_code ec;
  t.cutlass_include = fs::canonical(*inc, ec);
  if (ec) return Error{fmt::format("cannot resolve {}: {}", inc->string(), ec.message())};
  if (fs::path util = t.cutlass_include / ".." / "tools" / "util" / "include"; fs::is_directory(util / "cutlass", ec))
    t.cutlass_util_include = fs::canonical(util, ec);
  auto ver = cutlass_version(t.cutlass_include);
  if (!ver) return ver.error();
  t.cutlass_version = *ver;
  t.contract_include = contract_include_dir();
  auto header = read_file(t.contract_include / "cutegen" / "kernel.h");
  if (!header) return Error{fmt::format("contract header missing: {}", header.error().message)};
  t.contract_hash = sha256_hex(*header);
  t.checker_identity = this_build_identity();
  auto nvdisasm = find_nvdisasm(options.nvcc);
  if (!nvdisasm) return nvdisasm.error();
  t.nvdisasm = *nvdisasm;
  return t;
}

NvccCompiler::NvccCompiler(ProcessRunner& runner, CompileOptions options, Toolchain toolchain, CompileCache cache,
                           fs::path sandbox)
    : runner_(runner),
      options_(std::move(options)),
      toolchain_(std::move(toolchain)),
      cache_(std::move(cache)),
      sandbox_(std::move(sandbox)),
      host_pch_store_(host_pch_dir(cache_.dir())) {}

NvccCompiler::~NvccCompiler() {
  for (auto& f : host_pch_builds_) f.wait();
}

Result<std::map<std::string, SassFunction>> NvccCompiler::library_sass(const fs::path& staging,
                                                                      const std::vector<std::string>& images,
                                                                      EarlySass* early) {
  if (toolchain_.nvdisasm.empty()) return Error{"no nvdisasm in the toolchain: the CuTe check on the build needs it"};
  std::map<std::string, SassFunction> sass;
  for (std::size_t i = 0; i < images.size(); ++i) {
    // The library's image is what runs: the early disassembly counts only for the very same bytes.
    if (early && early->functions.valid() && early->image == images[i]) {
      auto functions = early->functions.get();
      if (!functions) return functions.error();
      sass.merge(*functions);
      continue;
    }
    // In the kept-build directory, which is removed before the entry goes into the cache.
    const std::string name = fmt::format("{}/device{}.cubin", kBuildKeepDir, i);
    if (auto w = write_file_atomic(staging / name, images[i]); !w) return w.error();
    std::vector<std::string> argv = {toolchain_.nvdisasm.string(), "--print-line-info-inline", "--print-code", name};
    auto functions = disassemble(runner_, sandbox_command(sandbox_, sandbox_policy(staging), argv), staging,
                                 options_.timeout);
    if (!functions) return functions.error();
    sass.merge(*functions);
  }
  return sass;
}

SandboxPolicy NvccCompiler::sandbox_policy(const fs::path& staging) const {
  SandboxPolicy p;
  p.syscalls = SandboxPolicy::Syscalls::compiler;
  // Not the user's home: a candidate's #include of ~/.env must fail. Roots that live there (a CUTLASS
  // checkout, this source tree's include/) are named one by one. Of /etc, /proc and /dev only the
  // files the toolchain opens (kToolchainSystemFiles); /dev/null is always allowed.
  for (const char* path : kToolchainSystemFiles) {
    std::error_code ec;
    if (fs::exists(path, ec)) p.read_paths.emplace_back(path);
  }
  if (auto cuda = prefix_of(options_.nvcc)) p.read_paths.push_back(*cuda);
  if (auto host = prefix_of(options_.host_compiler.empty() ? "g++" : options_.host_compiler)) p.read_paths.push_back(*host);
  if (!toolchain_.cutlass_include.empty()) p.read_paths.push_back(toolchain_.cutlass_include);
  if (!toolchain_.cutlass_util_include.empty()) p.read_paths.push_back(toolchain_.cutlass_util_include);
  if (!toolchain_.contract_include.empty()) p.read_paths.push_back(toolchain_.contract_include);
  if (!toolchain_.nvdisasm.empty()) p.read_paths.push_back(toolchain_.nvdisasm.parent_path());
  p.write_paths = {staging};
  // A file outside the read list then looks missing, not denied (sandbox/denied_as_missing.c).
  p.preload = denied_as_missing_library(sandbox_);
  p.address_space_bytes = options_.memory_limit_mb << 20;
  // Compiles run beside timed evaluations (bench -j, tune, the loop's next candidate): they must not
  // take the CPU from the judge's two processes (SandboxPolicy::background).
  p.background = true;
  return p;
}

std::string NvccCompiler::key_for(const std::string& source, const std::vector<Define>& defines) const {
  Sha256 h;
  h.add(kCacheSchema).add(source);
  // The defines are in the command; a define the command refuses never reaches the cache (build fails first).
  auto cmd = nvcc_command(options_, kCandidateFile, kLibraryFile, include_dirs(toolchain_),
                          defines);
  if (cmd)
    for (const auto& a : *cmd) h.add(a);
  h.add(toolchain_.nvcc_version).add(toolchain_.host_compiler_version).add(toolchain_.cutlass_version);
  h.add(toolchain_.contract_hash);
  h.add(toolchain_.checker_identity);
  h.add(toolchain_.nvdisasm.string());
  // A compile that ran out of memory is cached as a compile error; a larger limit must try again.
  h.add(fmt::format("memory_limit_mb={}", options_.memory_limit_mb));
  return h.hex();
}

Result<CompileOutcome> NvccCompiler::compile(const CompileRequest& request) {
  auto t0 = std::chrono::steady_clock::now();
  // Refused defines are the caller's mistake (the tuner's), not the candidate's: an Error.
  auto checked = nvcc_command(options_, kCandidateFile, kLibraryFile, {}, request.defines);
  if (!checked) return checked.error();
  std::string key = key_for(request.source, request.defines);
  if (auto hit = cache_.lookup(key)) {
    auto out = from_cache(*hit, request, key);
    out.total_seconds = since(t0);
    return out;
  }
  // Another process may be compiling the same key right now: wait for it rather than duplicate the work.
  auto lock = cache_.lock(key);
  if (!lock) return lock.error();
  if (auto hit = cache_.lookup(key)) {
    auto out = from_cache(*hit, request, key);
    out.total_seconds = since(t0);
    return out;
  }
  auto out = build(request, key);
  if (out) out->total_seconds = since(t0);
  return out;
}

Result<ProcessResult> NvccCompiler::run_build(const fs::path& staging, const std::vector<std::string>& argv,
                                              std::string& steps, std::string& host_pch,
                                              std::optional<EarlySass>& early) {
  const auto policy = sandbox_policy(staging);
  auto plain = [&]() {
    return runner_.run({.argv = sandbox_command(sandbox_, policy, argv), .timeout = options_.timeout, .cwd = staging,
                        .private_dir = staging});
  };
  // nvcc's own steps, with the host front end beside the device compile (nvcc_plan.h). Where the plan is
  // not the shape that relies on, nvcc runs them in turn, and the outcome says why.
  if (const unsigned cpus = options_.cpus ? options_.cpus : available_cpus(); cpus < 4) {
    steps = fmt::format("in turn: {} CPU{}, overlapping needs 4", cpus, cpus == 1 ? "" : "s");
    return plain();
  }
  auto dry = argv;
  dry.emplace_back("--dryrun");
  auto listed = runner_.run({.argv = sandbox_command(sandbox_, policy, dry), .timeout = std::chrono::seconds(60),
                             .cwd = staging, .private_dir = staging});
  if (!listed) return listed.error();
  if (!listed->succeeded()) {
    steps = fmt::format("in turn: nvcc --dryrun ended with {}", listed->describe_end());
    return plain();
  }
  auto plan = parse_nvcc_dryrun(listed->err + listed->out);
  auto build = plan ? overlapped_build(*plan, kBuildKeepDir) : Result<OverlappedBuild>(plan.error());
  if (!build) {
    steps = "in turn: " + build.error().message;
    return plain();
  }
  // One id for every build with these options: it is in the names of the headers' internal entities, so
  // builds of different candidates share the prefix of their host source (host_pch.h). Each library is
  // its own CUDA module, registered by handle, so the name need not differ between them.
  const std::string id = module_id_for(kCandidateFile, Sha256().add(kCacheSchema).add(toolchain_.nvcc_version).hex());
  const std::string chains = std::string(kBuildKeepDir) + "/nvcc-chains.sh";
  if (auto w = write_file_atomic(staging / build->module_id_file, id); !w) return w.error();
  if (auto w = write_file_atomic(staging / chains, build->chains); !w) return w.error();
  steps = "overlapped";
  Result<ProcessResult> proc = ProcessResult{};
  if (build->ahead.why_not.empty() && options_.stub_ahead) {
    proc = run_stub_ahead(staging, *build, policy, id, steps, host_pch, early);
  } else {
    if (!options_.stub_ahead) steps += " (host compile after cicc: compile.stub_ahead is off)";
    else steps += " (host compile after cicc: " + build->ahead.why_not + ")";
    auto first = runner_.run({.argv = sandbox_command(sandbox_, policy, {"/bin/sh", chains}),
                              .timeout = options_.timeout, .cwd = staging, .private_dir = staging});
    if (!first || !first->succeeded()) return first;
    // The device code is built: its disassembly for the CuTe check on the build runs beside the host compile.
    start_early_sass(staging, *build, policy, early);
    const auto left = std::max(std::chrono::seconds(1),
                               options_.timeout - std::chrono::seconds(static_cast<long>(first->wall_seconds)));
    proc = run_host_steps(staging, *build, policy, left, host_pch);
    if (proc) {
      proc->out = first->out + proc->out;
      proc->err = first->err + proc->err;
      proc->wall_seconds += first->wall_seconds;
    }
  }
  if (!proc || !proc->succeeded()) return proc;
  // Both chains must have named the id they were given: the host stub registers device entities by it.
  std::vector<std::string> foreign;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(staging / kBuildKeepDir, ec)) {
    const auto name = entry.path().filename().string();
    if (!name.ends_with(".ptx") && !name.ends_with(".stub.c") && !name.ends_with(".cudafe1.cpp")) continue;
    auto text = read_file(entry.path());
    if (!text) return text.error();
    for (auto& f : foreign_module_ids(*text, kCandidateFile, id)) foreign.push_back(std::move(f));
  }
  if (ec) return Error{fmt::format("cannot list {}: {}", (staging / kBuildKeepDir).string(), ec.message())};
  if (foreign.empty()) return proc;
  steps = fmt::format("in turn: this nvcc's steps named module id {} besides the one given", foreign.front());
  early.reset();  // waits for its nvdisasm, which reads the directory removed next
  fs::remove_all(staging / kBuildKeepDir, ec);
  fs::create_directories(staging / kBuildKeepDir, ec);
  if (ec) return Error{fmt::format("cannot recreate {}: {}", (staging / kBuildKeepDir).string(), ec.message())};
  return plain();
}

void NvccCompiler::start_early_sass(const fs::path& staging, const OverlappedBuild& build, const SandboxPolicy& policy,
                                    std::optional<EarlySass>& early) {
  if (build.device_image.empty() || toolchain_.nvdisasm.empty()) return;
  auto image = read_file(staging / build.device_image);
  if (!image) return;  // the library's own image is disassembled instead
  early.emplace();
  early->image = std::move(*image);
  early->functions = std::async(std::launch::async, [this, staging, policy, path = build.device_image] {
    std::vector<std::string> argv = {toolchain_.nvdisasm.string(), "--print-line-info-inline", "--print-code", path};
    return disassemble(runner_, sandbox_command(sandbox_, policy, argv), staging, options_.timeout);
  });
}

NvccCompiler::HostPchUse NvccCompiler::host_pch_for(std::string_view host_source, const OverlappedBuild& build) {
  if (build.rest_with_pch.empty()) return {.status = "none: " + build.no_host_pch};
  auto split = split_host_source(host_source, kCandidateFile);
  if (!split) return {.status = "none: the host source has no 1 MiB of headers before the candidate's own code"};
  const std::string key = HostPchStore::key_for(split->prefix, build.pch_script, toolchain_.host_compiler_version);
  {
    std::lock_guard lock(host_pch_mutex_);
    if (auto failed = host_pch_failed_.find(key); failed != host_pch_failed_.end())
      return {.status = "none: precompiling this prefix failed: " + failed->second};
  }
  auto entry = host_pch_store_.find(key);
  if (!entry) {
    if (auto failed = start_host_pch(key, split->prefix, build.pch_script)) return {.status = "none: " + *failed};
    return {.status = "precompiling for the next build"};
  }
  const fs::path header = fs::absolute(*entry) / kHostPrefixHeader;
  if (header.string().find_first_of("\"\\\n") != std::string::npos)
    return {.status = "none: the cache's path cannot be written in an #include: " + header.string()};
  return {.entry = fs::absolute(*entry), .source = host_source_with_prefix_header(split->rest, header), .status = "used"};
}

Result<ProcessResult> NvccCompiler::run_stub_ahead(const fs::path& staging, const OverlappedBuild& build,
                                                   const SandboxPolicy& policy, const std::string& module_id,
                                                   std::string& steps, std::string& host_pch,
                                                   std::optional<EarlySass>& early) {
  const OverlappedBuild::StubAhead& a = build.ahead;
  const fs::path ahead = staging / kStubAheadDir;
  std::error_code ec;
  fs::create_directories(ahead / fs::path(build.module_id_file).parent_path(), ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", ahead.string(), ec.message())};
  // The early chain reads the source and the module id at the paths nvcc's steps name, in its own directory.
  fs::copy_file(staging / a.source, ahead / a.source, fs::copy_options::overwrite_existing, ec);
  if (ec) return Error{fmt::format("cannot copy {} into {}: {}", a.source, ahead.string(), ec.message())};
  if (auto w = write_file_atomic(ahead / build.module_id_file, module_id); !w) return w.error();
  auto script = [&](const std::string& name, const std::string& text) -> Result<std::string> {
    const std::string path = std::string(kBuildKeepDir) + "/" + name;
    if (auto w = write_file_atomic(staging / path, text); !w) return w.error();
    return path;
  };
  auto run = [&](const std::string& path, const SandboxPolicy& confined) {
    return runner_.run({.argv = sandbox_command(sandbox_, confined, {"/bin/sh", path}), .timeout = options_.timeout,
                        .cwd = staging, .private_dir = staging});
  };
  auto front_path = script("nvcc-ahead-front.sh", a.front);
  auto device_path = script("nvcc-ahead-device.sh", a.device);
  if (!front_path) return front_path.error();
  if (!device_path) return device_path.error();
  auto device = std::async(std::launch::async, [&] { return run(*device_path, policy); });
  auto front = run(*front_path, policy);
  // An error reads as nvcc's, once: a failed front end's output alone (cicc would repeat its error), else the
  // front end's output, then the device compile's.
  auto both = [&](Result<ProcessResult> d) -> Result<ProcessResult> {
    if (!front) return front;
    if (!d) return d;
    ProcessResult r = front->succeeded() ? *d : *front;
    if (front->succeeded()) {
      r.out = front->out + d->out;
      r.err = front->err + d->err;
    }
    r.wall_seconds = std::max(front->wall_seconds, d->wall_seconds);
    return r;
  };
  if (!front || !front->succeeded()) return both(device.get());

  // The host compile from the early stub, through the precompiled prefix, beside the device chain.
  std::optional<Result<ProcessResult>> host;
  std::string why_not, ahead_pch;
  if (!fs::exists(ahead / a.stub)) {
    why_not = "the early cicc wrote no stub";
  } else if (auto source = read_file(staging / build.host_source); !source) {
    return source.error();
  } else {
    // Through the precompiled prefix where the store has it; else the source as cudafe++ wrote it (the same
    // flags: the host compile of a first build, its prefix precompiled beside it for the next).
    HostPchUse use = host_pch_for(*source, build);
    auto written = write_file_atomic(ahead / build.host_source, use.entry ? use.source : *source);
    if (!written) return written.error();
    written = write_file_atomic(ahead / a.fatbin_include, fatbin_placeholder());
    if (!written) return written.error();
    auto host_path = script("nvcc-ahead-host.sh", a.host);
    if (!host_path) return host_path.error();
    SandboxPolicy confined = policy;
    if (use.entry) confined.read_paths.push_back(*use.entry);
    host = run(*host_path, confined);
    ahead_pch = std::move(use.status);
  }
  auto d = device.get();
  if (!d || !d->succeeded()) return both(std::move(d));
  start_early_sass(staging, build, policy, early);

  // The early host compile counts only where what it read is what nvcc's steps have now written.
  if (host && (!*host || !(*host)->succeeded())) {
    why_not = "its host compile failed";
  } else if (host) {
    auto early_stub = read_file(ahead / a.stub), stub = read_file(staging / a.stub);
    auto fatbin_c = read_file(staging / a.embedded_fatbin);
    if (!early_stub || !stub || !fatbin_c) return Error{"cannot read the stubs or the fatbinary's C form"};
    auto placeholder = placeholder_of(*fatbin_c);
    auto assembly = read_file(ahead / a.assembly);
    if (*early_stub != *stub) {
      why_not = "the early stub differs from cicc's";
    } else if (!placeholder || *placeholder != fatbin_placeholder()) {
      why_not = "fatbinary's C form is not the placeholder's format";
    } else if (!assembly) {
      why_not = "its host compile wrote no assembly";
    } else if (auto spliced = splice_fatbin(*assembly, *fatbin_c); !spliced) {
      why_not = spliced.error().message;
    } else {
      if (auto w = write_file_atomic(staging / a.assembly, *spliced); !w) return w.error();
      auto after_path = script("nvcc-ahead-after.sh", a.after);
      if (!after_path) return after_path.error();
      auto after = run(*after_path, policy);
      if (!after) return after;
      host_pch = ahead_pch;
      steps += ", host compile from the early stub";
      after->out = front->out + d->out + (*host)->out + after->out;
      after->err = front->err + d->err + (*host)->err + after->err;
      after->wall_seconds += std::max(front->wall_seconds, d->wall_seconds);
      return after;
    }
  }
  steps += " (host compile after cicc: " + why_not + ")";
  const auto left = std::max(std::chrono::seconds(1),
                             options_.timeout - std::chrono::seconds(static_cast<long>(d->wall_seconds)));
  auto proc = run_host_steps(staging, build, policy, left, host_pch);
  if (proc) {
    proc->out = front->out + d->out + proc->out;
    proc->err = front->err + d->err + proc->err;
    proc->wall_seconds += std::max(front->wall_seconds, d->wall_seconds);
  }
  return proc;
}

Result<ProcessResult> NvccCompiler::run_host_steps(const fs::path& staging, const OverlappedBuild& build,
                                                   const SandboxPolicy& policy, std::chrono::seconds left,
                                                   std::string& host_pch) {
  auto run_script = [&](const std::string& name, const std::string& text,
                        const SandboxPolicy& confined) -> Result<ProcessResult> {
    const std::string path = std::string(kBuildKeepDir) + "/" + name;
    if (auto w = write_file_atomic(staging / path, text); !w) return w.error();
    return runner_.run({.argv = sandbox_command(sandbox_, confined, {"/bin/sh", path}), .timeout = left, .cwd = staging,
                        .private_dir = staging});
  };
  auto as_nvcc = [&](std::string why) {
    host_pch = std::move(why);
    return run_script("nvcc-rest.sh", build.rest, policy);
  };
  const fs::path source_path = staging / build.host_source;
  auto source = read_file(source_path);
  if (!source) return source.error();
  const HostPchUse use = host_pch_for(*source, build);
  if (!use.entry) return as_nvcc(use.status);
  if (auto w = write_file_atomic(source_path, use.source); !w) return w.error();
  // The entry read-only: what this build runs cannot change what later builds read.
  SandboxPolicy with_entry = policy;
  with_entry.read_paths.push_back(*use.entry);
  auto proc = run_script("nvcc-rest-pch.sh", build.rest_with_pch, with_entry);
  if (!proc) return proc;
  if (proc->succeeded()) {
    host_pch = "used";
    return proc;
  }
  // The same steps as nvcc's, so the log and verdict are nvcc's own: a .gch GCC would not use is an error
  // here, and a host compile error is met again.
  if (auto w = write_file_atomic(source_path, *source); !w) return w.error();
  return as_nvcc(fmt::format("not used: the host compile through it failed ({}), so it ran again without",
                             first_line(proc->err + proc->out)));
}

std::optional<std::string> NvccCompiler::start_host_pch(const std::string& key, std::string_view prefix,
                                                        const std::string& pch_script) {
  std::lock_guard lock(host_pch_mutex_);
  if (!host_pch_building_.insert(key).second) return std::nullopt;
  auto fail = [this, key](std::string why) {  // called holding the mutex
    host_pch_failed_[key] = std::move(why);
    host_pch_building_.erase(key);
  };
  auto dir = host_pch_store_.start(prefix);
  if (!dir) {
    fail(dir.error().message);
    return dir.error().message;
  }
  host_pch_builds_.push_back(std::async(std::launch::async, [this, key, fail, dir = *dir, pch_script] {
    std::string why;
    if (auto w = write_file_atomic(dir / "pch.sh", pch_script); !w) {
      why = w.error().message;
    } else {
      auto r = runner_.run({.argv = sandbox_command(sandbox_, sandbox_policy(dir), {"/bin/sh", "pch.sh"}),
                            .timeout = options_.timeout, .cwd = dir, .private_dir = dir});
      if (!r) why = r.error().message;
      else if (!r->succeeded()) why = fmt::format("{}: {}", r->describe_end(), first_line(r->err + r->out));
    }
    std::error_code ec;
    if (why.empty()) {
      // Only the header and its .gch stay; the store's entry is what GCC reads, nothing else.
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (auto n = it->path().filename().string(); n != kHostPrefixHeader && n != std::string(kHostPrefixHeader) + ".gch")
          fs::remove_all(it->path(), ec);
      if (auto c = host_pch_store_.commit(dir, key); !c) why = c.error().message;
    } else {
      fs::remove_all(dir, ec);
    }
    std::lock_guard lock(host_pch_mutex_);
    if (!why.empty()) fail(why);
    else host_pch_building_.erase(key);
  }));
  return std::nullopt;
}

Result<CompileOutcome> NvccCompiler::build(const CompileRequest& request, const std::string& key) {
  CompileOutcome out;
  out.key = key;
  auto cmd = nvcc_command(options_, kCandidateFile, kLibraryFile, include_dirs(toolchain_),
                          request.defines);
  if (!cmd) return cmd.error();
  out.command = *cmd;
  auto staging = cache_.make_staging_dir();
  if (!staging) return staging.error();
  auto cleanup = [&] {
    std::error_code ec;
    fs::remove_all(*staging, ec);
  };
  if (auto w = write_file_atomic(*staging / kCandidateFile, request.source); !w) {
    cleanup();
    return w.error();
  }

  nlohmann::json stored;
  out.violations = check_source_rules(request.source);
  if (!out.violations.empty()) {
    out.verdict = CompileVerdict::rejected;
  } else {
    auto analysis_cmd = cute_analysis_command(options_, kCandidateFile, kAnalysisFile,
                                              include_dirs(toolchain_), request.defines);
    if (!analysis_cmd) {
      cleanup();
      return analysis_cmd.error();
    }
    // Each compile keeps its intermediate files, for the device translation unit it read
    // (device_code_match.h); they are removed before the entry goes into the cache.
    std::error_code ec;
    fs::create_directories(*staging / kBuildKeepDir, ec);
    if (!ec) fs::create_directories(*staging / kAnalysisKeepDir, ec);
    if (ec) {
      cleanup();
      return Error{fmt::format("cannot create {}: {}", (*staging / kBuildKeepDir).string(), ec.message())};
    }
    auto kept = [](std::vector<std::string> argv, const char* dir) {
      for (const char* a : {"--keep", "--keep-dir"}) argv.emplace_back(a);
      argv.emplace_back(dir);
      return argv;
    };
    // The analysis compile (CuTe per kernel) runs beside the build: it needs only the source, and a
    // compile's wall time is the loop's and the tuner's critical path. It reads the candidate like the
    // build does, confined the same way. It is stopped once it is not needed: a build that failed, or one
    // whose own PTX proves the rule (build_evidence) -- for a CUTLASS kernel the -O0 compile is the longer
    // of the two (the 3xTF32 GEMM: cicc 33.5 s at -O0 against 20.7 s at -O3, on 2 cores).
    std::stop_source stop_analysis;
    auto analysis_future = std::async(std::launch::async, [&, argv = kept(*analysis_cmd, kAnalysisKeepDir),
                                                           stop = stop_analysis.get_token()] {
      return run_cute_analysis(runner_, sandbox_command(sandbox_, sandbox_policy(*staging), argv), *staging,
                               kAnalysisFile, options_.timeout, toolchain_.cutlass_include,
                               quotable_files(toolchain_, options_.nvcc), stop);
    });
    // Every way out waits for it: it writes into the staging directory that cleanup() removes. Unneeded, its
    // result (an Error too: it could not start) decides nothing.
    auto analysis = [&](bool needed) {
      if (!needed) stop_analysis.request_stop();
      return analysis_future.get();
    };
    auto give_up = [&](Error e) {
      analysis(false);
      cleanup();
      return e;
    };
    std::optional<EarlySass> early;
    auto proc = run_build(*staging, kept(*cmd, kBuildKeepDir), out.nvcc_steps, out.host_pch, early);
    auto t1 = std::chrono::steady_clock::now();
    if (!proc)
      return give_up(Error{fmt::format("{}; reinstall cutegen (cutegen-sandbox is built next to it)", proc.error().message)});
    if (auto failure = sandbox_failure(*proc))
      return give_up(Error{fmt::format("{}; install the CUDA toolkit or set compile.nvcc in the config", *failure)});
    out.nvcc_seconds = proc->wall_seconds;
    out.log = redact_nvcc_log(proc->out + proc->err, quotable_files(toolchain_, options_.nvcc));
    if (proc->timed_out) {
      // Not cached: a slow machine or a loaded one may finish next time.
      analysis(false);
      cleanup();
      out.verdict = CompileVerdict::timeout;
      return out;
    }
    // What the assembler was handed (-save-temps=obj), checked for directives that read files whether or
    // not the build went through: a directive whose file Landlock denied failed the build, and a
    // rejection naming it says more than the assembler's errors.
    auto assembly = check_kept_host_assembly(*staging / kBuildKeepDir, fs::path(kCandidateFile).stem().string(),
                                             proc->succeeded());
    if (!assembly) return give_up(assembly.error());
    if (!proc->succeeded()) {
      analysis(false);
      out.violations = *assembly;
      out.verdict = out.violations.empty() ? CompileVerdict::compile_error : CompileVerdict::rejected;
    } else {
      auto checks = check_library(*staging / kLibraryFile);
      if (!checks) return give_up(checks.error());
      out.violations = *assembly;
      for (const auto& v : checks->violations) out.violations.push_back(v);
      const fs::path cute_dir = toolchain_.cutlass_include / "cute";
      std::optional<std::map<std::string, SassFunction>> sass;
      auto machine_code = [&]() -> Result<bool> {
        if (sass) return true;
        auto got = library_sass(*staging, checks->code_images, early ? &*early : nullptr);
        if (!got) return got.error();
        sass = std::move(*got);
        return true;
      };
      // The build's own evidence first: when it proves the rule, and the machine code passes against its sites,
      // the analysis compile is stopped.
      std::optional<CuteAnalysis> seen;
      if (!checks->kernels.empty())
        if (auto ptx = single_kept_ptx(*staging / kBuildKeepDir)) seen = build_evidence(*ptx, cute_dir, checks->kernels);
      if (seen) {
        if (auto m = machine_code(); !m) return give_up(m.error());
        if (!built_cute_violations(*sass, checks->kernels, seen->cute_sites, cute_dir).empty()) seen.reset();
      }
      if (seen) {
        analysis(false);
        out.cute_evidence = "build";
        out.check_seconds = since(t1);
      } else {
        auto cute = analysis(true);
        if (!cute) {
          cleanup();
          return cute.error();
        }
        out.check_seconds = since(t1);
        if (cute->timed_out) {
          cleanup();
          out.verdict = CompileVerdict::timeout;  // like nvcc's own timeout: not cached
          return out;
        }
        out.cute_evidence = "analysis";
        std::optional<CheckViolation> mismatch;
        if (cute->compiled) {
          auto same = compare_device_code(*staging / kBuildKeepDir, *staging / kAnalysisKeepDir);
          if (!same) {
            cleanup();
            return same.error();
          }
          mismatch = *same;
        }
        // Evidence from code the build did not compile is no evidence: the mismatch alone is reported.
        if (mismatch) out.violations.push_back(*mismatch);
        else for (auto& v : cute_check_violations(*cute, checks->kernels)) out.violations.push_back(std::move(v));
        if (!mismatch && cute->compiled) {
          // The kernels the unoptimised compile found using CuTe, checked again on the build's machine code.
          std::vector<std::string> cute_kernels;
          for (const auto& k : checks->kernels)
            if (auto it = cute->analysis.uses_cute.find(k); it != cute->analysis.uses_cute.end() && it->second)
              cute_kernels.push_back(k);
          if (!cute_kernels.empty()) {
            if (auto m = machine_code(); !m) {
              cleanup();
              return m.error();
            }
            for (auto& v : built_cute_violations(*sass, cute_kernels, cute->analysis.cute_sites, cute_dir))
              out.violations.push_back(std::move(v));
          }
          out.check_seconds = since(t1);  // nvdisasm included
        }
      }
      out.verdict = out.violations.empty() ? CompileVerdict::ok : CompileVerdict::rejected;
    }
    fs::remove_all(*staging / kBuildKeepDir, ec);
    if (!ec) fs::remove_all(*staging / kAnalysisKeepDir, ec);
    if (!ec) fs::remove_all(*staging / kStubAheadDir, ec);  // the early cicc's files and its leftover bitcode
    if (ec) {
      cleanup();
      return Error{fmt::format("cannot remove nvcc's intermediate files in {}: {}", staging->string(), ec.message())};
    }
  }
  stored = {{"verdict", to_string(out.verdict)}, {"log", out.log}, {"command", out.command},
            {"nvcc_seconds", out.nvcc_seconds}, {"check_seconds", out.check_seconds}, {"nvcc_steps", out.nvcc_steps},
            {"host_pch", out.host_pch}, {"cute_evidence", out.cute_evidence},
            {"violations", nlohmann::json::array()}};
  for (const auto& v : out.violations) stored["violations"].push_back({{"code", v.code}, {"message", v.message}});
  if (auto w = write_file_atomic(*staging / "outcome.json", dump_json(stored, 2)); !w) {
    cleanup();
    return w.error();
  }
  if (auto c = cache_.commit(*staging, key); !c) {
    cleanup();
    return c.error();
  }
  auto built = from_cache(stored, request, key);
  built.cache_hit = false;
  return built;
}

CompileOutcome NvccCompiler::from_cache(const nlohmann::json& stored, const CompileRequest& request,
                                        const std::string& key) const {
  CompileOutcome out;
  out.key = key;
  std::string verdict = stored.value("verdict", "compile_error");
  out.verdict = verdict == "ok" ? CompileVerdict::ok
                : verdict == "rejected" ? CompileVerdict::rejected
                                         : CompileVerdict::compile_error;
  out.cache_hit = true;
  out.log = replace_all(stored.value("log", ""), kCandidateFile, request.display_name);
  out.command = stored.value("command", std::vector<std::string>{});
  out.nvcc_seconds = stored.value("nvcc_seconds", 0.0);
  out.check_seconds = stored.value("check_seconds", 0.0);
  out.nvcc_steps = stored.value("nvcc_steps", std::string());
  out.host_pch = stored.value("host_pch", std::string());
  out.cute_evidence = stored.value("cute_evidence", std::string());
  for (const auto& v : stored.value("violations", nlohmann::json::array()))
    out.violations.push_back({v.value("code", ""), v.value("message", "")});
  if (out.verdict == CompileVerdict::compile_error)
    out.diagnostic = condense_nvcc_log(out.log, request.display_name, request.source);
  if (out.verdict == CompileVerdict::ok) out.library = cache_.entry_dir(key) / kLibraryFile;
  return out;
}

}  // namespace cutegen
