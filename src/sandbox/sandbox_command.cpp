#include "sandbox/sandbox_command.h"

#include <charconv>
#include <limits>

#include <fmt/format.h>

namespace cutegen {
namespace {

Result<uint64_t> parse_number(const std::string& option, const std::string& text, uint64_t max) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || v > max)
    return Error{fmt::format("{} wants a whole number up to {}, got '{}'", option, max, text)};
  return v;
}

}  // namespace

std::string sandbox_usage() {
  return R"(cutegen-sandbox: run PROGRAM confined (no_new_privs, rlimits, die-with-parent, seccomp, Landlock)

Usage: cutegen-sandbox [OPTIONS] -- PROGRAM [ARGS...]

Options:
  --syscalls PROFILE    compiler | runner | profiler | unrestricted (default): the seccomp
                        profile; all but unrestricted keep other processes out of reach
  --read PATH           read and execute beneath PATH (repeatable); with Landlock nothing else is readable
  --write PATH          read, write, create and remove beneath PATH (repeatable), never execute
  --rlimit-as BYTES     address-space limit
  --rlimit-fsize BYTES  largest file the program may write
  --rlimit-cpu SECONDS  CPU time limit
  --rlimit-nofile N     open-file limit
  --allow-threads       runner profile: allow thread creation
  --background          batch priority (nice 19, SCHED_BATCH) for PROGRAM and all it starts
  --tcp-port PORT       allow TCP connections to PORT only (repeatable; needs Landlock ABI 4)
  --any-tcp             leave TCP to the seccomp profile (by default Landlock ABI 4 allows no TCP
                        but to --tcp-port ports)
  --allow-abstract-unix do not confine abstract unix sockets to the sandbox (Landlock ABI 6)
  --preload FILE        read FILE and preload it (LD_PRELOAD) into PROGRAM and all it starts
  -h, --help            this text

Core dumps are always off. /dev/null is always readable and writable.
The program's environment is passed unchanged (but for --preload's LD_PRELOAD): the caller chooses it.
Exit status: PROGRAM's; 125 when the sandbox cannot be set up or the arguments are wrong,
126 when PROGRAM cannot be executed, 127 when it is not found. Under the runner profile a
forbidden call kills PROGRAM with SIGSYS.
)";
}

std::vector<std::string> sandbox_command(const std::filesystem::path& wrapper, const SandboxPolicy& p,
                                         const std::vector<std::string>& program) {
  std::vector<std::string> cmd = {wrapper.string()};
  if (p.syscalls != SandboxPolicy::Syscalls::unrestricted) cmd.insert(cmd.end(), {"--syscalls", to_string(p.syscalls)});
  for (const auto& r : p.read_paths) cmd.insert(cmd.end(), {"--read", r.string()});
  for (const auto& w : p.write_paths) cmd.insert(cmd.end(), {"--write", w.string()});
  if (p.address_space_bytes) cmd.insert(cmd.end(), {"--rlimit-as", std::to_string(*p.address_space_bytes)});
  if (p.file_size_bytes) cmd.insert(cmd.end(), {"--rlimit-fsize", std::to_string(*p.file_size_bytes)});
  if (p.cpu_seconds) cmd.insert(cmd.end(), {"--rlimit-cpu", std::to_string(*p.cpu_seconds)});
  if (p.open_files) cmd.insert(cmd.end(), {"--rlimit-nofile", std::to_string(*p.open_files)});
  if (!p.deny_threads) cmd.push_back("--allow-threads");
  if (p.background) cmd.push_back("--background");
  for (uint16_t port : p.tcp_connect_ports) cmd.insert(cmd.end(), {"--tcp-port", std::to_string(port)});
  if (!p.confine_tcp) cmd.push_back("--any-tcp");
  if (!p.confine_abstract_unix) cmd.push_back("--allow-abstract-unix");
  if (!p.preload.empty()) cmd.insert(cmd.end(), {"--preload", p.preload.string()});
  cmd.push_back("--");
  cmd.insert(cmd.end(), program.begin(), program.end());
  return cmd;
}

Result<SandboxInvocation> parse_sandbox_args(const std::vector<std::string>& args) {
  SandboxInvocation inv;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  std::size_t i = 0;
  auto value = [&](const std::string& option) -> Result<std::string> {
    if (i + 1 >= args.size()) return Error{fmt::format("{} needs a value", option)};
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      inv.program.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (a == "-h" || a == "--help") {
      inv.help = true;
      return inv;
    }
    if (a == "--allow-threads") { inv.policy.deny_threads = false; continue; }
    if (a == "--background") { inv.policy.background = true; continue; }
    if (a == "--allow-abstract-unix") { inv.policy.confine_abstract_unix = false; continue; }
    if (a == "--any-tcp") { inv.policy.confine_tcp = false; continue; }
    if (a != "--syscalls" && a != "--read" && a != "--write" && a != "--rlimit-as" && a != "--rlimit-fsize" &&
        a != "--rlimit-cpu" && a != "--rlimit-nofile" && a != "--tcp-port" && a != "--preload")
      return Error{a.rfind("-", 0) == 0 ? fmt::format("unknown option {} (see --help)", a)
                                        : fmt::format("'{}' before `--`: put the program after `--`", a)};
    auto v = value(a);
    if (!v) return v.error();
    if (a == "--syscalls") {
      auto s = parse_syscalls(*v);
      if (!s) return s.error();
      inv.policy.syscalls = *s;
    } else if (a == "--read" || a == "--write") {
      if (v->empty()) return Error{fmt::format("{} wants a path", a)};
      (a == "--read" ? inv.policy.read_paths : inv.policy.write_paths).push_back(*v);
    } else if (a == "--preload") {
      // LD_PRELOAD splits its list at spaces and colons: such a path would preload something else.
      if (v->empty() || v->front() != '/' || v->find_first_of(" :") != std::string::npos)
        return Error{fmt::format("--preload wants an absolute path without spaces or colons, got '{}'", *v)};
      inv.policy.preload = *v;
    } else {
      auto n = parse_number(a, *v, a == "--tcp-port" ? 65535 : kMax);
      if (!n) return n.error();
      if (a == "--rlimit-as") inv.policy.address_space_bytes = *n;
      if (a == "--rlimit-fsize") inv.policy.file_size_bytes = *n;
      if (a == "--rlimit-cpu") inv.policy.cpu_seconds = *n;
      if (a == "--rlimit-nofile") inv.policy.open_files = *n;
      if (a == "--tcp-port") inv.policy.tcp_connect_ports.push_back(static_cast<uint16_t>(*n));
    }
  }
  if (inv.program.empty()) return Error{"no program given: cutegen-sandbox [OPTIONS] -- PROGRAM [ARGS...]"};
  return inv;
}

std::filesystem::path denied_as_missing_library(const std::filesystem::path& wrapper) {
  return wrapper.parent_path() / "cutegen-denied-as-missing.so";
}

}  // namespace cutegen
