#pragma once
// Landlock (Linux >= 5.13) through its raw syscalls. The constants are the kernel's stable ABI,
// spelled out here so that building against older kernel headers still yields the newest rules.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

namespace cutegen::landlock {

// The ABI version the running kernel offers; 0 with `why` filled when it offers none.
int abi_version(std::string* why = nullptr);

struct Rules {
  std::vector<std::filesystem::path> read_paths;
  std::vector<std::filesystem::path> write_paths;
  std::vector<uint16_t> tcp_connect_ports;
  bool confine_tcp = true;          // false: TCP is not handled (tcp_connect_ports must be empty)
  bool scope_abstract_unix = true;  // signals are always scoped (ABI >= 6)
};

struct Applied {
  int abi = 0;         // 0: nothing applied
  bool files = false;  // file access restricted (some path was named)
  bool net = false;
  bool scope = false;
};

// Restricts the calling thread (needs no_new_privs). With abi_version() == 0: nothing is applied and
// Applied::abi is 0. Without read or write paths, file access is not restricted. Paths that cannot be
// opened are errors.
Result<Applied> restrict_self(const Rules& rules);

}  // namespace cutegen::landlock
