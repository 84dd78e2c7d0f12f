#include "sandbox/landlock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace cutegen::landlock {
namespace {

// Syscall numbers are shared by every architecture for these (added in 5.13).
constexpr long kCreateRuleset = 444;
constexpr long kAddRule = 445;
constexpr long kRestrictSelf = 446;
constexpr uint32_t kCreateRulesetVersion = 1u << 0;

constexpr int kRulePathBeneath = 1;
constexpr int kRuleNetPort = 2;

// Filesystem rights, by the ABI that introduced them.
constexpr uint64_t kExecute = 1ull << 0;
constexpr uint64_t kWriteFile = 1ull << 1;
constexpr uint64_t kReadFile = 1ull << 2;
constexpr uint64_t kReadDir = 1ull << 3;
constexpr uint64_t kAbi1All = (1ull << 13) - 1;  // EXECUTE .. MAKE_SYM
constexpr uint64_t kRefer = 1ull << 13;          // ABI 2
constexpr uint64_t kTruncate = 1ull << 14;       // ABI 3
constexpr uint64_t kIoctlDev = 1ull << 15;       // ABI 5
// Rights that make sense on a file (a rule on a file with directory rights is EINVAL).
constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

constexpr uint64_t kNetBindTcp = 1ull << 0;     // ABI 4
constexpr uint64_t kNetConnectTcp = 1ull << 1;  // ABI 4
constexpr uint64_t kScopeAbstractUnix = 1ull << 0;  // ABI 6
constexpr uint64_t kScopeSignal = 1ull << 1;        // ABI 6

struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
struct PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));
struct NetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
};

uint64_t handled_fs(int abi) {
  uint64_t r = kAbi1All;
  if (abi >= 2) r |= kRefer;
  if (abi >= 3) r |= kTruncate;
  if (abi >= 5) r |= kIoctlDev;
  return r;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { if (fd_ >= 0) ::close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

Status add_path(int ruleset, const std::filesystem::path& path, uint64_t access, uint64_t handled) {
  Fd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
  if (fd.get() < 0) return Error{fmt::format("sandbox: cannot open {}: {}", path.string(), std::strerror(errno))};
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error{fmt::format("sandbox: cannot stat {}: {}", path.string(), std::strerror(errno))};
  access &= handled;
  if (!S_ISDIR(st.st_mode)) access &= kFileRights;
  PathBeneathAttr attr{access, fd.get()};
  if (::syscall(kAddRule, ruleset, kRulePathBeneath, &attr, 0) != 0)
    return Error{fmt::format("sandbox: Landlock refused a rule for {}: {}", path.string(), std::strerror(errno))};
  return ok_status();
}

}  // namespace

int abi_version(std::string* why) {
  long abi = ::syscall(kCreateRuleset, nullptr, 0, kCreateRulesetVersion);
  if (abi > 0) return static_cast<int>(abi);
  if (why) {
    if (errno == EOPNOTSUPP) *why = "disabled at boot (add landlock to the kernel's lsm= parameter)";
    else if (errno == ENOSYS) *why = "not in this kernel (Linux 5.13+ built with CONFIG_SECURITY_LANDLOCK)";
    else *why = std::strerror(errno);
  }
  return 0;
}

Result<Applied> restrict_self(const Rules& rules) {
  Applied applied;
  int abi = abi_version();
  if (abi == 0) return applied;
  // No paths named: file access is left alone (the network and signals are still confined).
  applied.files = !rules.read_paths.empty() || !rules.write_paths.empty();
  RulesetAttr attr{applied.files ? handled_fs(abi) : 0, 0, 0};
  if (abi >= 4 && rules.confine_tcp) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    applied.net = true;
  }
  if (abi >= 6) {
    attr.scoped = kScopeSignal | (rules.scope_abstract_unix ? kScopeAbstractUnix : 0);
    applied.scope = true;
  }
  if (!rules.tcp_connect_ports.empty() && !rules.confine_tcp)
    return Error{"sandbox: TCP ports were named but TCP is not confined: name ports or leave TCP alone, not both"};
  if (!rules.tcp_connect_ports.empty() && !applied.net)
    return Error{fmt::format("sandbox: TCP ports can be restricted only with Landlock ABI 4 or newer (this kernel: {})", abi)};
  if (!attr.handled_access_fs && !attr.handled_access_net && !attr.scoped) return applied;
  applied.abi = abi;
  Fd ruleset(static_cast<int>(::syscall(kCreateRuleset, &attr, sizeof attr, 0)));
  if (ruleset.get() < 0) return Error{fmt::format("sandbox: cannot create a Landlock ruleset: {}", std::strerror(errno))};

  const uint64_t handled = attr.handled_access_fs;
  const uint64_t read = kExecute | kReadFile | kReadDir;
  const uint64_t write = handled & ~kExecute;  // what is written there is never executed from there
  for (const auto& p : rules.read_paths)
    if (auto s = add_path(ruleset.get(), p, read, handled); !s) return s.error();
  for (const auto& p : rules.write_paths)
    if (auto s = add_path(ruleset.get(), p, write, handled); !s) return s.error();
  // Every program may discard output; nothing can be learnt or kept through /dev/null.
  if (applied.files)
    if (auto s = add_path(ruleset.get(), "/dev/null", kReadFile | kWriteFile | kTruncate, handled); !s) return s.error();
  for (uint16_t port : rules.tcp_connect_ports) {
    NetPortAttr net{kNetConnectTcp, port};
    if (::syscall(kAddRule, ruleset.get(), kRuleNetPort, &net, 0) != 0)
      return Error{fmt::format("sandbox: Landlock refused TCP port {}: {}", port, std::strerror(errno))};
  }
  if (::syscall(kRestrictSelf, ruleset.get(), 0) != 0)
    return Error{fmt::format("sandbox: Landlock restrict_self failed: {}", std::strerror(errno))};
  return applied;
}

}  // namespace cutegen::landlock
