#include "compile/library_checks.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace cutegen {
namespace fs = std::filesystem;
namespace {

constexpr const char* kEntryPoint = "cutegen_forward";

// Libraries a candidate may link against. Everything else (cuBLAS, cuDNN, libtorch, Python) is refused.
bool allowed_library(const std::string& soname) {
  static const std::regex re(
      R"(^(libcudart\.so|libcuda\.so|libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so|libpthread\.so|librt\.so|ld-linux-x86-64\.so|ld-linux-aarch64\.so)(\.[0-9]+)*$)");
  return std::regex_match(soname, re);
}

struct Rule {
  std::regex pattern;
  std::string why;
};

// Symbols refused whatever library provides them, each with the reason the user sees.
const std::vector<Rule>& denied_symbols() {
  static const std::vector<Rule> rules = {
      {std::regex(R"(^(dlopen|dlmopen|dlsym|dlvsym)$)"), "loads code at run time, which the contract forbids"},
      {std::regex(R"(^cublas)"), "calls cuBLAS; the kernel must be written in CuTe"},
      {std::regex(R"(^cudnn)"), "calls cuDNN; the kernel must be written in CuTe"},
      {std::regex(R"(^(cufft|curand|cusparse|cusolver|nvjpeg|npp))"),
       "calls a CUDA library; the kernel must be written in CuTe"},
      {std::regex(R"(^_?Py)"), "calls into Python; the kernel must be self-contained CUDA"},
      {std::regex(R"(^_ZN?K?(2at|3c10|5torch)\d)"), "calls libtorch; the kernel must be written in CuTe"},
      {std::regex(R"(^(cudaMalloc|cudaMallocAsync|cudaMallocManaged|cudaMallocHost|cudaHostAlloc|cudaMallocPitch|cudaMalloc3D|cudaMallocArray|cudaMallocFromPoolAsync|cuMemAlloc|cuMemCreate|cuMemHostAlloc))"),
       "allocates memory; the harness owns every buffer (inputs and outputs are passed in)"},
      {std::regex(R"(^(cudaStreamCreate|cuStreamCreate|cudaEventCreate|cuEventCreate))"),
       "creates streams or events; all work must be launched on the stream passed to cutegen_forward"},
      {std::regex(R"(^(cudaDeviceReset|cudaSetDevice|cuCtxCreate|cuCtxSetCurrent))"),
       "changes the device or context the harness set up"},
      {std::regex(R"(^(system|popen|fork|vfork|execve?|execvp|execvpe|execl|execlp|posix_spawnp?)$)"),
       "starts processes"},
  };
  return rules;
}

bool harmless_weak(const std::string& name) {
  return name == "__gmon_start__" || name == "__cxa_finalize" || name.rfind("_ITM_", 0) == 0;
}

// CUDA runtime and driver API entry points are not always versioned (libcuda's are not).
bool cuda_api_name(const std::string& name) {
  static const std::regex re(R"(^(cuda[A-Z_]|__cuda|cu[A-Z]))");
  return std::regex_search(name, re);
}

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};
using ElfPtr = std::unique_ptr<Elf, ElfCloser>;

std::string section_name(Elf* elf, const GElf_Shdr& sh) {
  std::size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return "";
  const char* n = elf_strptr(elf, shstrndx, sh.sh_name);
  return n ? n : "";
}

struct DeviceScan {
  int images = 0;
  bool cute_lines = false;
  bool arch_trap = false;
};

bool contains(const char* data, std::size_t size, const std::string& needle) {
  if (needle.empty() || size < needle.size()) return false;
  return std::search(data, data + size, needle.begin(), needle.end()) != data + size;
}

// Device code sits in .nv_fatbin as embedded cubin ELF images. Their line tables name the directories
// that contributed device instructions, so CuTe used only on the host (or only #included) leaves no trace.
void scan_fatbin(const char* data, std::size_t size, const std::string& cute_dir, DeviceScan& scan) {
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
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(e.get(), scn)) != nullptr) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS) continue;
      Elf_Data* d = elf_getdata(scn, nullptr);
      if (!d || !d->d_buf) continue;
      auto* bytes = static_cast<const char*>(d->d_buf);
      std::string name = section_name(e.get(), sh);
      if ((name == ".debug_line" || name == ".nv_debug_line_sass") && contains(bytes, d->d_size, cute_dir))
        scan.cute_lines = true;
      for (const auto& t : traps)
        if (contains(bytes, d->d_size, t)) scan.arch_trap = true;
    }
  }
}

}  // namespace

std::vector<CheckViolation> check_source(const std::string& source) {
  std::vector<CheckViolation> out;
  static const std::regex line_directive(R"(^\s*#\s*line\b)");
  std::istringstream in(source);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (std::regex_search(line, line_directive))
      out.push_back({"line-directive", fmt::format("line {}: #line directives are not allowed (they would falsify "
                                                   "compiler diagnostics and device line tables)", n)});
  }
  return out;
}

Result<std::vector<CheckViolation>> check_library(const fs::path& library, const fs::path& cutlass_include_dir) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error{"libelf is unusable (elf_version failed)"};
  int fd = ::open(library.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{fmt::format("cannot open {}: {}", library.string(), std::strerror(errno))};
  ElfPtr elf(elf_begin(fd, ELF_C_READ, nullptr));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
    return Error{fmt::format("{} is not an ELF shared library", library.string())};

  std::vector<CheckViolation> out;
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
      if (lib && !allowed_library(lib))
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
  bool has_entry = false;
  std::set<std::string> reported;
  std::size_t count = symsh.sh_entsize ? symsh.sh_size / symsh.sh_entsize : 0;
  for (std::size_t i = 1; syms && i < count; ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(syms, static_cast<int>(i), &sym)) continue;
    const char* raw = elf_strptr(elf.get(), symsh.sh_link, sym.st_name);
    std::string name = raw ? raw : "";
    if (name.empty()) continue;
    if (sym.st_shndx != SHN_UNDEF) {
      if (name == kEntryPoint && GELF_ST_TYPE(sym.st_info) == STT_FUNC && GELF_ST_BIND(sym.st_info) == STB_GLOBAL)
        has_entry = true;
      continue;
    }
    if (reported.count(name)) continue;
    bool denied = false;
    for (const auto& rule : denied_symbols()) {
      if (std::regex_search(name, rule.pattern)) {
        out.push_back({"forbidden-import", fmt::format("imports {}: {}", name, rule.why)});
        reported.insert(name);
        denied = true;
        break;
      }
    }
    if (denied) continue;
    std::string file;
    if (vers) {
      GElf_Versym v;
      if (gelf_getversym(vers, static_cast<int>(i), &v)) {
        auto it = version_file.find(v & 0x7fff);
        if (it != version_file.end()) file = it->second;
      }
    }
    bool ok = !file.empty() ? allowed_library(file)
                            : (cuda_api_name(name) || (GELF_ST_BIND(sym.st_info) == STB_WEAK && harmless_weak(name)));
    if (!ok) {
      out.push_back({"forbidden-import",
                     file.empty() ? fmt::format("imports {}, which no allowed library provides (allowed: CUDA "
                                                "runtime/driver, libc, libm, libstdc++, libgcc)", name)
                                  : fmt::format("imports {} from {}; only the CUDA runtime/driver and the C/C++ "
                                                "runtime are allowed", name, file)});
      reported.insert(name);
    }
  }
  if (!has_entry)
    out.push_back({"missing-entry-point",
                   fmt::format("does not define {}: include <cutegen/kernel.h> and define "
                               "extern \"C\" int {}(const cutegen_tensor*, int32_t, const cutegen_tensor*, int32_t, "
                               "cudaStream_t)", kEntryPoint, kEntryPoint)});

  // Device code must exist, be readable, and contain CuTe.
  if (!fatbin) {
    out.push_back({"no-device-code", "contains no device code: the kernel must launch a __global__ function"});
    return out;
  }
  Elf_Data* fd_data = elf_getdata(fatbin, nullptr);
  DeviceScan scan;
  std::error_code ec;
  fs::path canon = fs::weakly_canonical(cutlass_include_dir, ec);
  std::string cute_dir = (ec ? cutlass_include_dir : canon).string() + "/cute";
  if (fd_data && fd_data->d_buf) scan_fatbin(static_cast<const char*>(fd_data->d_buf), fd_data->d_size, cute_dir, scan);
  if (scan.images == 0) {
    out.push_back({"unreadable-device-code",
                   "device code could not be inspected (compressed fatbin?); compile with --no-compress"});
  } else if (!scan.cute_lines) {
    out.push_back({"no-cute", "no device code comes from CuTe: kernels must be written with CuTe tensors, "
                              "layouts and algorithms (make_tensor, local_tile, copy, gemm ...), not raw pointers"});
  }
  if (scan.arch_trap)
    out.push_back({"arch-conditional", "device code contains CUTLASS's 'used without targeting' trap: an "
                                       "architecture-specific instruction was compiled out for this target"});
  return out;
}

}  // namespace cutegen
