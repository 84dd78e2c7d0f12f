#include "common/build_identity.h"

#include <elf.h>
#include <link.h>

#include <unistd.h>

#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/sha256.h"

namespace cutegen {
namespace {

// dl_iterate_phdr visits the executable first (empty name); its PT_NOTE segments hold the build-id.
int find_build_id(struct dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::string*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const auto* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof note);
      const auto* name = p + sizeof note;
      const auto* desc = name + ((note.n_namesz + 3) & ~3u);
      if (desc + note.n_descsz > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        std::string hex;
        for (unsigned k = 0; k < note.n_descsz; ++k) hex += fmt::format("{:02x}", desc[k]);
        *out = "build-id:" + hex;
        return 1;
      }
      p = desc + ((note.n_descsz + 3) & ~3u);
    }
  }
  return 1;  // only the executable, never the libraries after it
}

std::string compute() {
  std::string id;
  dl_iterate_phdr(find_build_id, &id);
  if (!id.empty()) return id;
  auto exe = read_file("/proc/self/exe");
  // Unreadable (never on Linux for one's own executable): an identity no other process shares, so
  // nothing cached by another build is served — caching is lost, never the checks.
  if (!exe) return fmt::format("unidentified:{}:{}", ::getpid(), reinterpret_cast<std::uintptr_t>(&id));
  return "exe-sha256:" + sha256_hex(*exe);
}

}  // namespace

const std::string& this_build_identity() {
  static const std::string id = compute();
  return id;
}

}  // namespace cutegen
