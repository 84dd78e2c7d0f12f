#include "compile/compile_options.h"

#include <regex>

#include <sched.h>

#include <fmt/format.h>

namespace cutegen {

Result<std::string> gencode_for(const std::string& arch) {
  static const std::regex re(R"(sm_(\d{2,3})([af]?))");
  std::smatch m;
  if (!std::regex_match(arch, m, re))
    return Error{fmt::format("unknown target '{}': expected sm_<NN>[a|f], e.g. sm_90a for H100/H200", arch)};
  std::string v = m[1].str() + m[2].str();
  return fmt::format("arch=compute_{},code=sm_{}", v, v);
}

unsigned available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

bool compile_key_needs_trust(const std::string& key) {
  return key == "nvcc" || key == "host_compiler" || key == "flags" || key == "extra_flags" || key == "memory_limit_mb";
}

Result<CompileOptions> apply_compile_config(CompileOptions o, const nlohmann::json& j) {
  if (!j.is_object()) return Error{"config: \"compile\" must be an object"};
  auto strings = [](const nlohmann::json& v, const std::string& key) -> Result<std::vector<std::string>> {
    if (!v.is_array()) return Error{fmt::format("config: compile.{} must be a list of strings", key)};
    std::vector<std::string> out;
    for (const auto& e : v) {
      if (!e.is_string()) return Error{fmt::format("config: compile.{} must be a list of strings", key)};
      out.push_back(e.get<std::string>());
    }
    return out;
  };
  for (const auto& [key, v] : j.items()) {
    if (key == "nvcc" || key == "arch" || key == "std" || key == "host_compiler") {
      if (!v.is_string()) return Error{fmt::format("config: compile.{} must be a string", key)};
      std::string s = v.get<std::string>();
      if (key == "nvcc") o.nvcc = s;
      if (key == "arch") o.arch = s;
      if (key == "std") o.cpp_std = s;
      if (key == "host_compiler") o.host_compiler = s;
    } else if (key == "flags" || key == "extra_flags") {
      auto list = strings(v, key);
      if (!list) return list.error();
      (key == "flags" ? o.flags : o.extra_flags) = *list;
    } else if (key == "timeout_s") {
      if (!v.is_number() || v.get<double>() <= 0) return Error{"config: compile.timeout_s must be a positive number"};
      o.timeout = std::chrono::seconds(static_cast<long>(v.get<double>()));
    } else if (key == "memory_limit_mb") {
      // Below 1 GiB nvcc cannot even start cicc; above 1 TiB the limit means nothing.
      if (!v.is_number_integer() || v.get<int64_t>() < 1024 || v.get<int64_t>() > (int64_t{1} << 20))
        return Error{"config: compile.memory_limit_mb must be a whole number of MiB from 1024 to 1048576"};
      o.memory_limit_mb = v.get<uint64_t>();
    } else if (key == "stub_ahead") {
      if (!v.is_boolean()) return Error{"config: compile.stub_ahead must be true or false"};
      o.stub_ahead = v.get<bool>();
    } else {
      return Error{fmt::format("config: unknown key compile.{} (known: nvcc, arch, std, flags, extra_flags, "
                               "host_compiler, timeout_s, memory_limit_mb, stub_ahead)", key)};
    }
  }
  if (auto g = gencode_for(o.arch); !g) return g.error();
  return o;
}

namespace {

// Everything both compiles share: the target, the user's flags and the preprocessor view of the
// source (the CuTe analysis must see exactly the code the build sees).
Result<std::vector<std::string>> common_command(const CompileOptions& o, const std::vector<Define>& defines) {
  auto gencode = gencode_for(o.arch);
  if (!gencode) return gencode.error();
  static const std::regex name_re(R"([A-Za-z_][A-Za-z0-9_]*)"), value_re(R"([A-Za-z0-9_.+-]+)");
  for (const auto& d : defines) {
    if (!std::regex_match(d.name, name_re))
      return Error{fmt::format("cannot define '{}': a macro name is a C identifier", d.name)};
    if (!std::regex_match(d.value, value_re))
      return Error{fmt::format("cannot define {}='{}': a value may hold letters, digits, '_', '.', '+' and '-' only",
                               d.name, d.value)};
  }
  // -fPIC here, not only in the build: the host compiler preprocesses the device code too, and -fPIC
  // turns off __PIE__. Given to the build alone, `#ifdef __PIE__` showed the analysis a CuTe kernel and
  // the build a raw one (attacks/cute_only/cute_flag_switch.cu); the build now also proves both saw one text.
  std::vector<std::string> cmd = {o.nvcc, "-std=" + o.cpp_std, "-gencode", *gencode, "-Xcompiler", "-fPIC"};
  cmd.insert(cmd.end(), o.flags.begin(), o.flags.end());
  cmd.insert(cmd.end(), o.extra_flags.begin(), o.extra_flags.end());
  if (!o.host_compiler.empty()) {
    cmd.push_back("-ccbin");
    cmd.push_back(o.host_compiler);
  }
  // CUTLASS then calls the driver's TMA descriptor encoders directly instead of looking them up through
  // cudaGetDriverEntryPoint, which hands out any driver function and is refused.
  cmd.emplace_back("-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL");
  cmd.emplace_back("-lineinfo");
  // After cutegen's own macros: a knob is the kernel's business and cannot unset what the checks need.
  for (const auto& d : defines) cmd.push_back(fmt::format("-D{}={}", d.name, d.value));
  return cmd;
}

}  // namespace

Result<std::vector<std::string>> nvcc_command(const CompileOptions& o, const std::string& source_name,
                                              const std::string& output_name,
                                              const std::vector<std::filesystem::path>& include_dirs,
                                              const std::vector<Define>& defines) {
  auto cmd = common_command(o, defines);
  if (!cmd) return cmd.error();
  // Required by the contract and the static checks, hence not configurable:
  //  -cudart shared: the candidate's CUDA calls stay visible as imported symbols (static cudart would
  //                  also drag in dlopen, hiding a candidate's own);
  //  --no-compress:  device code stays readable for the kernel list;
  //  -lcuda:         the driver stub (on nvcc's default library path) provides the TMA encoders;
  //  -lineinfo:      (in common_command) line tables for profiles and the analysis compile;
  //  -fPIC:           (in common_command) a shared library;
  //  -save-temps=obj: the host compiler keeps the assembly it hands the assembler next to its object
  //                  (in nvcc's --keep-dir), where the check for file-reading directives reads it
  //                  (host_assembly.h): that text, not the C++ spelling of an asm string, is what the
  //                  assembler obeys. It costs writing the files, not a second compile
  //                  (relu_vec's host compile: 2.3 s of CPU instead of 1.9 s).
  for (const char* f : {"-shared", "-cudart", "shared", "--no-compress", "-Xcompiler", "-save-temps=obj"})
    cmd->emplace_back(f);
  for (const auto& dir : include_dirs) cmd->push_back("-I" + dir.string());
  cmd->push_back(source_name);
  cmd->push_back("-o");
  cmd->push_back(output_name);
  cmd->push_back("-lcuda");
  return cmd;
}

Result<std::vector<std::string>> cute_analysis_command(const CompileOptions& o, const std::string& source_name,
                                                       const std::string& ptx_name,
                                                       const std::vector<std::filesystem::path>& include_dirs,
                                              const std::vector<Define>& defines) {
  auto cmd = common_command(o, defines);
  if (!cmd) return cmd.error();
  // Device code only, unoptimised: every CuTe function a kernel calls stays visible in the PTX line
  // info (function_name/inlined_at), even where -O3 folds it into plain address arithmetic.
  for (const char* f : {"-ptx", "-Xcicc", "-O0"}) cmd->emplace_back(f);
  for (const auto& dir : include_dirs) cmd->push_back("-I" + dir.string());
  cmd->push_back(source_name);
  cmd->push_back("-o");
  cmd->push_back(ptx_name);
  return cmd;
}

}  // namespace cutegen
