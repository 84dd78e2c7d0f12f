#include "compile/library_checks.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "compile/entry_points.h"
#include "compile/import_rules.h"
#include "compile/load_time_code.h"

namespace cutegen {
namespace fs = std::filesystem;
namespace {

constexpr unsigned char kCudaEntry = 0x10;  // st_other bit marking a kernel in a cubin's symbol table

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};
using ElfPtr = std::unique_ptr<Elf, ElfCloser>;

// A library opened for libelf, closed with it.
struct OpenElf {
  int fd = -1;
  ElfPtr elf;
  OpenElf() = default;
  OpenElf(OpenElf&& o) noexcept : fd(std::exchange(o.fd, -1)), elf(std::move(o.elf)) {}
  OpenElf& operator=(OpenElf&&) = delete;
  ~OpenElf() {
    elf.reset();
    if (fd >= 0) ::close(fd);
  }
};

Result<OpenElf> open_elf(const fs::path& library) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error{"libelf is unusable (elf_version failed)"};
  OpenElf o;
  o.fd = ::open(library.c_str(), O_RDONLY | O_CLOEXEC);
  if (o.fd < 0) return Error{fmt::format("cannot open {}: {}", library.string(), std::strerror(errno))};
  o.elf.reset(elf_begin(o.fd, ELF_C_READ, nullptr));
  if (!o.elf || elf_kind(o.elf.get()) != ELF_K_ELF)
    return Error{fmt::format("{} is not an ELF shared library", library.string())};
  return o;
}

// Notes `name` in `entries` when it is one of the contract's entry points, defined as a global function.
void note_entry_point(const std::string& name, const GElf_Sym& sym, EntryPoints& entries) {
  if (sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) != STT_FUNC || GELF_ST_BIND(sym.st_info) != STB_GLOBAL)
    return;
  if (name == kForwardSymbol) entries.forward = true;
  if (name == kWorkspaceBytesSymbol) entries.workspace_bytes = true;
  if (name == kForwardWsSymbol) entries.forward_ws = true;
}

std::string section_name(Elf* elf, const GElf_Shdr& sh) {
  std::size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return "";
  const char* n = elf_strptr(elf, shstrndx, sh.sh_name);
  return n ? n : "";
}

struct DeviceScan {
  int images = 0;
  std::vector<std::string> image_bytes;
  std::vector<std::string> code_images;  // of image_bytes, those with an executable section or a kernel
  bool arch_trap = false;
  std::set<std::string> kernels;
};

bool contains(const char* data, std::size_t size, const std::string& needle) {
  if (needle.empty() || size < needle.size()) return false;
  return std::search(data, data + size, needle.begin(), needle.end()) != data + size;
}

void collect_kernels(Elf* e, Elf_Scn* symtab, const GElf_Shdr& sh, std::set<std::string>& kernels) {
  Elf_Data* d = elf_getdata(symtab, nullptr);
  std::size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
  for (std::size_t i = 1; d && i < n; ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(d, static_cast<int>(i), &sym)) continue;
    if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !(sym.st_other & kCudaEntry) || sym.st_shndx == SHN_UNDEF) continue;
    const char* name = elf_strptr(e, sh.sh_link, sym.st_name);
    if (name && *name) kernels.insert(name);
  }
}

// Device code sits in .nv_fatbin as embedded cubin ELF images; their symbol tables name the kernels.
void scan_fatbin(const char* data, std::size_t size, DeviceScan& scan) {
  static const std::string magic = "\x7f" "ELF";
  // CUTLASS traps instead of executing an instruction the target lacks; its message marks such code.
  static const std::vector<std::string> traps = {"used without targeting", "without CUTE_ARCH_"};
  for (std::size_t pos = 0; pos + 64 <= size;) {
    const char* hit = std::search(data + pos, data + size, magic.begin(), magic.end());
    if (hit == data + size) break;
    std::size_t off = static_cast<std::size_t>(hit - data);
    std::vector<char> image(hit, data + size);
    ElfPtr e(elf_memory(image.data(), image.size()));
    pos = off + 4;
    if (!e || elf_kind(e.get()) != ELF_K_ELF) continue;
    GElf_Ehdr eh;
    if (!gelf_getehdr(e.get(), &eh) || eh.e_machine != EM_CUDA) continue;
    ++scan.images;
    // The image ends where its last section, program header or section header table does.
    std::size_t end = std::max<std::size_t>(eh.e_shoff + std::size_t{eh.e_shnum} * eh.e_shentsize,
                                            eh.e_phoff + std::size_t{eh.e_phnum} * eh.e_phentsize);
    for (Elf_Scn* s = nullptr; (s = elf_nextscn(e.get(), s)) != nullptr;) {
      GElf_Shdr sh;
      if (gelf_getshdr(s, &sh) && sh.sh_type != SHT_NOBITS) end = std::max<std::size_t>(end, sh.sh_offset + sh.sh_size);
    }
    scan.image_bytes.emplace_back(hit, std::min(end, size - off));
    bool code = false;
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(e.get(), scn)) != nullptr) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh)) continue;
      if (sh.sh_flags & SHF_EXECINSTR) code = true;
      if (sh.sh_type == SHT_NOBITS) continue;
      Elf_Data* d = elf_getdata(scn, nullptr);
      if (!d || !d->d_buf) continue;
      auto* bytes = static_cast<const char*>(d->d_buf);
      if (sh.sh_type == SHT_SYMTAB) {
        std::set<std::string> kernels;
        collect_kernels(e.get(), scn, sh, kernels);
        if (!kernels.empty()) code = true;
        scan.kernels.merge(kernels);
      }
      for (const auto& t : traps)
        if (contains(bytes, d->d_size, t)) scan.arch_trap = true;
    }
    if (code) scan.code_images.push_back(scan.image_bytes.back());
  }
}

// Device code anywhere but the fatbin nvcc built from the translation unit: a cubin image, PTX text or
// LLVM bitcode (NVVM, LTO-IR) in the host data, or in a section the runner could read back from the file.
// Handed to the driver at run time (cuModuleLoadData and friends, reachable by walking libcuda's ELF
// tables with nothing imported), such code runs past the per-kernel CuTe check
// (attacks/cute_only/embedded_ptx.cu, attacks/cute_only/embedded_cubin.cu). An obfuscated payload would not
// show here; the
// runner keeps the driver's compilers unreadable for that (attacks/cute_only/jit_obfuscated_ptx.cu).
void check_embedded_device_code(Elf* elf, std::vector<CheckViolation>& out) {
  static const std::string elf_magic = "\x7f" "ELF";
  static const std::string bitcode_magic = "BC\xc0\xde";
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS) continue;
    const std::string name = section_name(elf, sh);
    if (name == ".nv_fatbin") continue;
    Elf_Data* d = elf_getdata(scn, nullptr);
    if (!d || !d->d_buf || d->d_size == 0) continue;
    const auto* bytes = static_cast<const char*>(d->d_buf);
    const std::size_t size = d->d_size;
    std::string what;
    for (const char* hit = bytes; what.empty();) {
      hit = std::search(hit, bytes + size, elf_magic.begin(), elf_magic.end());
      if (hit == bytes + size) break;
      const std::size_t at = static_cast<std::size_t>(hit - bytes);
      if (at + 20 <= size && static_cast<unsigned char>(bytes[at + 18]) == (EM_CUDA & 0xff) &&
          static_cast<unsigned char>(bytes[at + 19]) == (EM_CUDA >> 8))
        what = "a cubin image";
      hit += 4;
    }
    if (what.empty() && contains(bytes, size, ".version ") &&
        (contains(bytes, size, ".target sm_") || contains(bytes, size, ".target compute_")))
      what = "PTX text";
    if (what.empty() && contains(bytes, size, bitcode_magic)) what = "LLVM bitcode (NVVM or LTO-IR)";
    if (!what.empty())
      out.push_back({"embedded-device-code",
                     fmt::format("section {} holds {}: device code the driver could load at run time, past the "
                                 "per-kernel CuTe check; every kernel must be a __global__ function of this file",
                                 name, what)});
  }
}

}  // namespace

Result<EntryPoints> library_entry_points(const fs::path& library) {
  auto opened = open_elf(library);
  if (!opened) return opened.error();
  Elf* elf = opened->elf.get();
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM) continue;
    Elf_Data* syms = elf_getdata(scn, nullptr);
    EntryPoints entries;
    std::size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    for (std::size_t i = 1; syms && i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(syms, static_cast<int>(i), &sym)) continue;
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (name) note_entry_point(name, sym, entries);
    }
    return entries;
  }
  return Error{fmt::format("{} has no dynamic symbol table", library.string())};
}

Result<LibraryInspection> check_library(const fs::path& library) {
  auto opened = open_elf(library);
  if (!opened) return opened.error();
  const ElfPtr& elf = opened->elf;

  LibraryInspection result;
  auto& out = result.violations;
  Elf_Scn* dynsym = nullptr;
  Elf_Scn* versym = nullptr;
  Elf_Scn* verneed = nullptr;
  Elf_Scn* dynamic = nullptr;
  Elf_Scn* fatbin = nullptr;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf.get(), scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type == SHT_DYNSYM) dynsym = scn;
    if (sh.sh_type == SHT_GNU_versym) versym = scn;
    if (sh.sh_type == SHT_GNU_verneed) verneed = scn;
    if (sh.sh_type == SHT_DYNAMIC) dynamic = scn;
    if (section_name(elf.get(), sh) == ".nv_fatbin") fatbin = scn;
  }
  if (!dynsym) return Error{fmt::format("{} has no dynamic symbol table", library.string())};

  // Needed libraries.
  if (dynamic) {
    GElf_Shdr sh;
    gelf_getshdr(dynamic, &sh);
    Elf_Data* d = elf_getdata(dynamic, nullptr);
    for (std::size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Dyn dyn;
      if (!gelf_getdyn(d, static_cast<int>(i), &dyn) || dyn.d_tag != DT_NEEDED) continue;
      const char* lib = elf_strptr(elf.get(), sh.sh_link, dyn.d_un.d_val);
      if (lib && !allowed_needed_library(lib))
        out.push_back({"forbidden-library",
                       fmt::format("links {}; only the CUDA runtime/driver and the C/C++ runtime are allowed", lib)});
    }
  }

  // Version index -> the library file that provides it (from .gnu.version_r).
  std::map<int, std::string> version_file;
  if (verneed) {
    GElf_Shdr sh;
    gelf_getshdr(verneed, &sh);
    Elf_Data* d = elf_getdata(verneed, nullptr);
    int off = 0;
    for (std::size_t i = 0; d && i < sh.sh_info; ++i) {
      GElf_Verneed vn;
      if (!gelf_getverneed(d, off, &vn)) break;
      const char* file = elf_strptr(elf.get(), sh.sh_link, vn.vn_file);
      int aoff = off + static_cast<int>(vn.vn_aux);
      for (int k = 0; k < vn.vn_cnt; ++k) {
        GElf_Vernaux aux;
        if (!gelf_getvernaux(d, aoff, &aux)) break;
        version_file[aux.vna_other] = file ? file : "";
        aoff += static_cast<int>(aux.vna_next);
      }
      if (vn.vn_next == 0) break;
      off += static_cast<int>(vn.vn_next);
    }
  }

  GElf_Shdr symsh;
  gelf_getshdr(dynsym, &symsh);
  Elf_Data* syms = elf_getdata(dynsym, nullptr);
  Elf_Data* vers = versym ? elf_getdata(versym, nullptr) : nullptr;
  EntryPoints entries;
  std::set<std::string> reported;
  std::size_t count = symsh.sh_entsize ? symsh.sh_size / symsh.sh_entsize : 0;
  for (std::size_t i = 1; syms && i < count; ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(syms, static_cast<int>(i), &sym)) continue;
    const char* raw = elf_strptr(elf.get(), symsh.sh_link, sym.st_name);
    std::string name = raw ? raw : "";
    if (name.empty()) continue;
    if (sym.st_shndx != SHN_UNDEF) {
      note_entry_point(name, sym, entries);
      continue;
    }
    if (!reported.insert(name).second) continue;
    std::string file;
    if (vers) {
      GElf_Versym v;
      if (gelf_getversym(vers, static_cast<int>(i), &v)) {
        auto it = version_file.find(v & 0x7fff);
        if (it != version_file.end()) file = it->second;
      }
    }
    if (auto problem = import_problem(name, file)) out.push_back({"forbidden-import", *problem});
  }
  // Either form of the contract (compile/entry_points.h); a half or doubled one is refused here already.
  if (auto form = entry_form(entries); !form) {
    bool none = !entries.forward && !entries.workspace_bytes && !entries.forward_ws;
    out.push_back({none ? "missing-entry-point" : "entry-point-mismatch", form.error().message});
  }
  auto load_time = load_time_code_violations(elf.get());
  if (!load_time) return Error{fmt::format("{}: {}", library.string(), load_time.error().message)};
  out.insert(out.end(), load_time->begin(), load_time->end());
  check_embedded_device_code(elf.get(), out);

  // Device code must exist and be readable; its kernels go to the per-kernel CuTe check.
  if (!fatbin) {
    out.push_back({"no-device-code", "contains no device code: the kernel must launch a __global__ function"});
    return result;
  }
  Elf_Data* fd_data = elf_getdata(fatbin, nullptr);
  DeviceScan scan;
  if (fd_data && fd_data->d_buf) scan_fatbin(static_cast<const char*>(fd_data->d_buf), fd_data->d_size, scan);
  if (scan.images == 0)
    out.push_back({"unreadable-device-code",
                   "device code could not be inspected (compressed fatbin?); compile with --no-compress"});
  else if (scan.kernels.empty())
    out.push_back({"no-device-code", "contains no kernel: the work must be done by __global__ functions"});
  result.kernels.assign(scan.kernels.begin(), scan.kernels.end());
  result.device_images = std::move(scan.image_bytes);
  result.code_images = std::move(scan.code_images);
  if (scan.arch_trap)
    out.push_back({"arch-conditional", "device code contains CUTLASS's 'used without targeting' trap: an "
                                       "architecture-specific instruction was compiled out for this target"});
  return result;
}

}  // namespace cutegen
