#include "compile/load_time_code.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "compile/demangle.h"

namespace cutegen {
namespace {
using namespace std::string_view_literals;

struct Symbol {
  std::string name;
  unsigned char type = STT_NOTYPE;
  bool defined = false;
  std::uint64_t value = 0;
};

struct Relocation {
  std::uint32_t type = 0;
  std::optional<Symbol> symbol;  // none for R_X86_64_RELATIVE and R_X86_64_IRELATIVE
  std::int64_t addend = 0;
};

// The library as the dynamic loader sees it: the bytes its loadable segments map, the dynamic table
// (up to DT_NULL, where the loader stops reading), the relocations by the address they write; and
// the symbol tables, which name what an address holds. Relocations and symbols are read through the
// section headers: the library comes from the toolchain's own linker, whose section headers and
// dynamic table agree (a candidate controls what it compiles, not how ld lays the file out).
class LoaderView {
 public:
  explicit LoaderView(Elf* elf) : elf_(elf) {
    std::size_t size = 0;
    image_ = elf_rawfile(elf, &size);
    image_size_ = image_ ? size : 0;
    std::size_t phnum = 0;
    if (elf_getphdrnum(elf, &phnum) == 0)
      for (std::size_t i = 0; i < phnum; ++i) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD) loads_.push_back(ph);
      }
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf, scn)) != nullptr) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh)) continue;
      if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) read_symbols(scn, sh);
      if (sh.sh_type == SHT_RELA) read_relocations(scn, sh);
      if (sh.sh_type == SHT_DYNAMIC) read_dynamic(scn, sh);
      const char* name = section_name(sh);
      if (name && (std::strcmp(name, ".ctors") == 0 || std::strcmp(name, ".dtors") == 0)) old_style_sections.push_back(name);
    }
  }

  // The `n` bytes the loader maps at `address` from the file; nullopt unless all of them are file bytes.
  std::optional<std::string_view> bytes_at(std::uint64_t address, std::size_t n) const {
    for (const auto& ph : loads_) {
      if (address < ph.p_vaddr || address - ph.p_vaddr > ph.p_filesz || ph.p_filesz - (address - ph.p_vaddr) < n)
        continue;
      std::uint64_t offset = ph.p_offset + (address - ph.p_vaddr);
      if (offset > image_size_ || image_size_ - offset < n) return std::nullopt;
      return std::string_view(image_ + offset, n);
    }
    return std::nullopt;
  }
  std::optional<std::uint64_t> u64_at(std::uint64_t address) const {
    auto b = bytes_at(address, 8);
    if (!b) return std::nullopt;
    std::uint64_t v = 0;
    std::memcpy(&v, b->data(), 8);
    return v;
  }
  // Every relocation that writes at `address` (a well-formed library has at most one).
  std::vector<Relocation> relocations_at(std::uint64_t address) const {
    auto it = relocations.find(address);
    return it == relocations.end() ? std::vector<Relocation>{} : it->second;
  }
  // The names of the functions defined at `address`.
  std::vector<std::string> functions_at(std::uint64_t address) const {
    std::vector<std::string> out;
    auto [from, to] = defined_.equal_range(address);
    for (auto it = from; it != to; ++it)
      if (it->second.type == STT_FUNC || it->second.type == STT_GNU_IFUNC) out.push_back(it->second.name);
    return out;
  }

  std::vector<GElf_Dyn> dynamic;
  std::vector<Symbol> symbols;  // both tables, every entry
  std::map<std::uint64_t, std::vector<Relocation>> relocations;
  std::vector<std::string> old_style_sections;

 private:
  const char* section_name(const GElf_Shdr& sh) const {
    std::size_t shstrndx = 0;
    return elf_getshdrstrndx(elf_, &shstrndx) == 0 ? elf_strptr(elf_, shstrndx, sh.sh_name) : nullptr;
  }
  static std::size_t entries(const GElf_Shdr& sh) { return sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0; }
  std::optional<Symbol> symbol(Elf_Scn* table, std::size_t index) const {
    GElf_Shdr sh;
    Elf_Data* d = table && gelf_getshdr(table, &sh) ? elf_getdata(table, nullptr) : nullptr;
    GElf_Sym sym;
    if (!d || index >= entries(sh) || !gelf_getsym(d, static_cast<int>(index), &sym)) return std::nullopt;
    const char* name = elf_strptr(elf_, sh.sh_link, sym.st_name);
    return Symbol{name ? name : "", static_cast<unsigned char>(GELF_ST_TYPE(sym.st_info)), sym.st_shndx != SHN_UNDEF,
                  sym.st_value};
  }
  void read_symbols(Elf_Scn* scn, const GElf_Shdr& sh) {
    for (std::size_t i = 1; i < entries(sh); ++i) {
      auto s = symbol(scn, i);
      if (!s) continue;
      symbols.push_back(*s);
      if (s->defined) defined_.emplace(s->value, *s);
    }
  }
  void read_relocations(Elf_Scn* scn, const GElf_Shdr& sh) {
    Elf_Data* d = elf_getdata(scn, nullptr);
    Elf_Scn* table = elf_getscn(elf_, sh.sh_link);
    for (std::size_t i = 0; d && i < entries(sh); ++i) {
      GElf_Rela r;
      if (!gelf_getrela(d, static_cast<int>(i), &r)) continue;
      Relocation rel{static_cast<std::uint32_t>(GELF_R_TYPE(r.r_info)), std::nullopt, r.r_addend};
      if (auto index = GELF_R_SYM(r.r_info)) rel.symbol = symbol(table, index);
      relocations[r.r_offset].push_back(std::move(rel));
    }
  }
  void read_dynamic(Elf_Scn* scn, const GElf_Shdr& sh) {
    Elf_Data* d = elf_getdata(scn, nullptr);
    for (std::size_t i = 0; d && i < entries(sh); ++i) {
      GElf_Dyn dyn;
      if (!gelf_getdyn(d, static_cast<int>(i), &dyn) || dyn.d_tag == DT_NULL) break;
      dynamic.push_back(dyn);
    }
  }

  Elf* elf_;
  const char* image_ = nullptr;
  std::size_t image_size_ = 0;
  std::vector<GElf_Phdr> loads_;
  std::multimap<std::uint64_t, Symbol> defined_;
};

// --- measured x86-64 code: crti/crtn's _init and _fini, g++'s initialiser for <iostream> ---

// What a 32-bit pc-relative field in a measured sequence must reach.
enum class Reach {
  nothing,      // the instruction has no such field
  data,         // an address passed as an argument to the calls checked beside it: any
  import_call,  // a call or tail call: the PLT stub of the named imported function
  import_slot,  // a GOT slot the dynamic loader fills with the named imported function
  weak_slot,    // the same, or a slot left 0 because the weak import was not there at link time
  local_call,   // a call of a function in the library that runs exactly `callee`
};
struct Instruction {
  std::string_view bytes;
  Reach reach = Reach::nothing;
  const char* import = nullptr;
  std::span<const Instruction> callee = {};
};
constexpr std::string_view kEndbr64 = "\xf3\x0f\x1e\xfa"sv;  // first in every function built with -fcf-protection

// glibc's crti.S + crtn.S (x86_64): _init calls __gmon_start__ when a profiler provides it.
const Instruction kInit[] = {{"\x48\x83\xec\x08"sv},                                  // sub $8,%rsp
                             {"\x48\x8b\x05"sv, Reach::weak_slot, "__gmon_start__"},  // mov GOT(%rip),%rax
                             {"\x48\x85\xc0"sv},                                      // test %rax,%rax
                             {"\x74\x02"sv},                                          // je +2
                             {"\xff\xd0"sv},                                          // call *%rax
                             {"\x48\x83\xc4\x08"sv},                                  // add $8,%rsp
                             {"\xc3"sv}};                                             // ret
const Instruction kFini[] = {{"\x48\x83\xec\x08"sv}, {"\x48\x83\xc4\x08"sv}, {"\xc3"sv}};

// g++ 12 -fPIC for `static std::ios_base::Init __ioinit;` alone (<iostream>): construct it and
// register its destructor. A candidate's namespace-scope object with a dynamic initialiser joins
// this same function, so anything more than this is the candidate's code. One sequence per host
// optimisation level: -O2/-O3/-Os (cutegen's default compile.flags give nvcc -O3), -O1, -O0.
const Instruction kIostreamInitO2[] = {
    {"\x53"sv},                                                        // push %rbx
    {"\x48\x8d\x1d"sv, Reach::data},                                   // lea __ioinit(%rip),%rbx
    {"\x48\x89\xdf"sv},                                                // mov %rbx,%rdi
    {"\xe8"sv, Reach::import_call, "_ZNSt8ios_base4InitC1Ev"},         // call std::ios_base::Init::Init()
    {"\x48\x8b\x3d"sv, Reach::import_slot, "_ZNSt8ios_base4InitD1Ev"},  // mov ~Init@GOT(%rip),%rdi
    {"\x48\x89\xde"sv},                                                // mov %rbx,%rsi
    {"\x5b"sv},                                                        // pop %rbx
    {"\x48\x8d\x15"sv, Reach::data},                                   // lea __dso_handle(%rip),%rdx
    {"\xe9"sv, Reach::import_call, "__cxa_atexit"}};                   // jmp __cxa_atexit
const Instruction kIostreamInitO1[] = {
    {"\x53"sv},                                                        // push %rbx
    {"\x48\x8d\x1d"sv, Reach::data},                                   // lea __ioinit(%rip),%rbx
    {"\x48\x89\xdf"sv},                                                // mov %rbx,%rdi
    {"\xe8"sv, Reach::import_call, "_ZNSt8ios_base4InitC1Ev"},         // call std::ios_base::Init::Init()
    {"\x48\x8d\x15"sv, Reach::data},                                   // lea __dso_handle(%rip),%rdx
    {"\x48\x89\xde"sv},                                                // mov %rbx,%rsi
    {"\x48\x8b\x3d"sv, Reach::import_slot, "_ZNSt8ios_base4InitD1Ev"},  // mov ~Init@GOT(%rip),%rdi
    {"\xe8"sv, Reach::import_call, "__cxa_atexit"},                    // call __cxa_atexit
    {"\x5b\xc3"sv}};                                                   // pop %rbx; ret
// -O0: __static_initialization_and_destruction_0(1, 0xffff) does the work; its two branches skip
// to its own end.
const Instruction kStaticInitO0[] = {
    {"\x55\x48\x89\xe5\x48\x83\xec\x10"sv},                           // push %rbp; mov %rsp,%rbp; sub $16,%rsp
    {"\x89\x7d\xfc\x89\x75\xf8"sv},                                   // store both arguments
    {"\x83\x7d\xfc\x01\x75\x3b"sv},                                   // cmpl $1; jne end
    {"\x81\x7d\xf8\xff\xff\x00\x00\x75\x32"sv},                       // cmpl $0xffff; jne end
    {"\x48\x8d\x05"sv, Reach::data},                                   // lea __ioinit(%rip),%rax
    {"\x48\x89\xc7"sv},                                                // mov %rax,%rdi
    {"\xe8"sv, Reach::import_call, "_ZNSt8ios_base4InitC1Ev"},         // call std::ios_base::Init::Init()
    {"\x48\x8d\x05"sv, Reach::data},                                   // lea __dso_handle(%rip),%rax
    {"\x48\x89\xc2"sv},                                                // mov %rax,%rdx
    {"\x48\x8d\x05"sv, Reach::data},                                   // lea __ioinit(%rip),%rax
    {"\x48\x89\xc6"sv},                                                // mov %rax,%rsi
    {"\x48\x8b\x05"sv, Reach::import_slot, "_ZNSt8ios_base4InitD1Ev"},  // mov ~Init@GOT(%rip),%rax
    {"\x48\x89\xc7"sv},                                                // mov %rax,%rdi
    {"\xe8"sv, Reach::import_call, "__cxa_atexit"},                    // call __cxa_atexit
    {"\x90\xc9\xc3"sv}};                                               // end: nop; leave; ret
const Instruction kIostreamInitO0[] = {
    {"\x55\x48\x89\xe5"sv},                                  // push %rbp; mov %rsp,%rbp
    {"\xbe\xff\xff\x00\x00\xbf\x01\x00\x00\x00"sv},            // mov $0xffff,%esi; mov $1,%edi
    {"\xe8"sv, Reach::local_call, nullptr, kStaticInitO0},  // call __static_initialization_and_destruction_0
    {"\x5d\xc3"sv}};                                         // pop %rbp; ret
const std::span<const Instruction> kIostreamInits[] = {kIostreamInitO2, kIostreamInitO1, kIostreamInitO0};

// The undefined symbol whose address the loader writes into the GOT slot at `slot`, if that is all it writes.
std::optional<std::string> imported_into(const LoaderView& view, std::uint64_t slot) {
  auto rels = view.relocations_at(slot);
  if (rels.size() != 1 || !rels[0].symbol || rels[0].symbol->defined) return std::nullopt;
  if (rels[0].type != R_X86_64_GLOB_DAT && rels[0].type != R_X86_64_JUMP_SLOT) return std::nullopt;
  return rels[0].symbol->name;
}

// The imported function a call to `stub` reaches: a PLT stub is `jmp *slot(%rip)` (after an endbr64
// and a bnd prefix where the toolchain uses them).
std::optional<std::string> import_called_at(const LoaderView& view, std::uint64_t stub) {
  auto b = view.bytes_at(stub, 16);
  if (!b) return std::nullopt;
  std::size_t at = b->substr(0, 4) == kEndbr64 ? 4 : 0;
  if ((*b)[at] == '\xf2') ++at;
  if ((*b)[at] != '\xff' || (*b)[at + 1] != '\x25') return std::nullopt;
  std::int32_t disp = 0;
  std::memcpy(&disp, b->data() + at + 2, 4);
  return imported_into(view, stub + at + 6 + static_cast<std::int64_t>(disp));
}

// Whether the code at `address` is exactly `expected` (an endbr64 first is allowed), each pc-relative
// field reaching what it must. Every sequence ends in ret or an unconditional jmp and its branches
// stay inside it, so matching its bytes is matching everything that runs.
bool runs_exactly(const LoaderView& view, std::uint64_t address, std::span<const Instruction> expected) {
  if (auto b = view.bytes_at(address, kEndbr64.size()); b && *b == kEndbr64) address += kEndbr64.size();
  for (const auto& ins : expected) {
    std::size_t field = ins.reach == Reach::nothing ? 0 : 4;
    auto b = view.bytes_at(address, ins.bytes.size() + field);
    if (!b || b->substr(0, ins.bytes.size()) != ins.bytes) return false;
    address += ins.bytes.size() + field;
    if (!field) continue;
    std::int32_t disp = 0;
    std::memcpy(&disp, b->data() + ins.bytes.size(), 4);
    std::uint64_t target = address + static_cast<std::int64_t>(disp);
    switch (ins.reach) {
      case Reach::nothing:
      case Reach::data: break;
      case Reach::import_call:
        if (import_called_at(view, target) != ins.import) return false;
        break;
      case Reach::import_slot:
        if (imported_into(view, target) != ins.import) return false;
        break;
      case Reach::local_call:
        if (!runs_exactly(view, target, ins.callee)) return false;
        break;
      case Reach::weak_slot:
        if (imported_into(view, target) != ins.import &&
            !(view.relocations_at(target).empty() && view.u64_at(target) == std::uint64_t{0}))
          return false;
        break;
    }
  }
  return true;
}

// --- the init/fini arrays ---

// A function the toolchain itself lists in DT_INIT_ARRAY or DT_FINI_ARRAY, once per library.
struct ToolchainEntry {
  std::string_view name;
  bool prefix;            // g++ names its initialiser after the translation unit
  std::int64_t array;     // DT_INIT_ARRAY or DT_FINI_ARRAY
};
constexpr ToolchainEntry kToolchainEntries[] = {
    {"frame_dummy", false, DT_INIT_ARRAY},                   // crtbeginS.o
    {"__do_global_dtors_aux", false, DT_FINI_ARRAY},         // crtbeginS.o
    {"_ZL24__sti____cudaRegisterAllv", false, DT_INIT_ARRAY},  // nvcc: registers the fatbinary with the runtime
    {"_GLOBAL__sub_I_", true, DT_INIT_ARRAY},                // g++: <iostream>'s initialiser (kIostreamInits)
};
constexpr std::string_view kStaticInitialiser = "_GLOBAL__sub_I_";

const char* tag_name(std::int64_t tag) {
  switch (tag) {
    case DT_INIT: return "DT_INIT";
    case DT_FINI: return "DT_FINI";
    case DT_INIT_ARRAY: return "DT_INIT_ARRAY";
    case DT_INIT_ARRAYSZ: return "DT_INIT_ARRAYSZ";
    case DT_FINI_ARRAY: return "DT_FINI_ARRAY";
    case DT_FINI_ARRAYSZ: return "DT_FINI_ARRAYSZ";
    case DT_PREINIT_ARRAY: return "DT_PREINIT_ARRAY";
    case DT_PREINIT_ARRAYSZ: return "DT_PREINIT_ARRAYSZ";
    default: return "?";
  }
}

constexpr const char* kDoInsideTheCall = "do all work inside cutegen_forward (a function-local static is "
                                         "constructed at its first use, inside a call)";

class LoadTimeCheck {
 public:
  explicit LoadTimeCheck(const LoaderView& view) : view_(view) {}

  std::vector<CheckViolation> run() {
    indirect_functions();
    for (const auto& name : view_.old_style_sections)
      add(fmt::format("the library has a {} section: host code that runs when it is loaded or unloaded is forbidden; {}",
                      name, kDoInsideTheCall));
    std::map<std::int64_t, std::vector<std::uint64_t>> tags;
    for (const auto& d : view_.dynamic)
      if (std::string_view(tag_name(d.d_tag)) != "?") tags[d.d_tag].push_back(d.d_un.d_val);
    for (const auto& [tag, values] : tags)
      if (values.size() > 1)
        add(fmt::format("the dynamic table lists {} {} times; the toolchain writes it once", tag_name(tag),
                        values.size()));
    if (tags.count(DT_PREINIT_ARRAY))
      add("the library has a DT_PREINIT_ARRAY (a .preinit_array section): host code that runs before the program "
          "starts is forbidden");
    if (auto it = tags.find(DT_INIT); it != tags.end() && !runs_exactly(view_, it->second.front(), kInit))
      add(fmt::format("DT_INIT runs code at {:#x} that is not crti's _init (code placed in the .init section?): host "
                      "code that runs when the library is loaded is forbidden; {}",
                      it->second.front(), kDoInsideTheCall));
    if (auto it = tags.find(DT_FINI); it != tags.end() && !runs_exactly(view_, it->second.front(), kFini))
      add(fmt::format("DT_FINI runs code at {:#x} that is not crti's _fini (code placed in the .fini section?): host "
                      "code that runs when the library is unloaded is forbidden; {}",
                      it->second.front(), kDoInsideTheCall));
    array(tags, DT_INIT_ARRAY, DT_INIT_ARRAYSZ);
    array(tags, DT_FINI_ARRAY, DT_FINI_ARRAYSZ);
    return std::move(out_);
  }

 private:
  void add(std::string message) {
    if (seen_.insert(message).second) out_.push_back({kLibraryLoadTimeCode, std::move(message)});
  }

  void indirect_functions() {
    for (const auto& s : view_.symbols)
      if (s.type == STT_GNU_IFUNC)
        add(fmt::format("{} is a GNU indirect function (ifunc): its resolver runs inside dlopen, before any call; "
                        "call the implementation directly",
                        demangle(s.name)));
    for (const auto& [address, rels] : view_.relocations)
      for (const auto& r : rels)
        if (r.type == R_X86_64_IRELATIVE) {
          auto names = view_.functions_at(static_cast<std::uint64_t>(r.addend));
          add(fmt::format("an R_X86_64_IRELATIVE relocation runs the ifunc resolver {} inside dlopen, before any "
                          "call; call the implementation directly",
                          names.empty() ? fmt::format("at {:#x}", r.addend) : demangle(names.front())));
        }
  }

  // Each slot of DT_INIT_ARRAY or DT_FINI_ARRAY: the function the loader finds there after relocating.
  void array(const std::map<std::int64_t, std::vector<std::uint64_t>>& tags, std::int64_t tag, std::int64_t size_tag) {
    auto at = tags.find(tag);
    if (at == tags.end()) return;
    auto size = tags.find(size_tag);
    std::uint64_t bytes = size == tags.end() ? 0 : size->second.front();
    if (size == tags.end() || bytes % 8 != 0) {
      add(fmt::format("{} has no valid {}: the functions it lists cannot be read", tag_name(tag), tag_name(size_tag)));
      return;
    }
    for (std::uint64_t slot = at->second.front(); slot < at->second.front() + bytes; slot += 8) entry(tag, slot);
  }

  void entry(std::int64_t tag, std::uint64_t slot) {
    auto rels = view_.relocations_at(slot);
    std::optional<std::uint64_t> target;
    if (rels.empty()) {
      target = view_.u64_at(slot);
    } else if (rels.size() == 1 && rels[0].type == R_X86_64_RELATIVE) {
      target = static_cast<std::uint64_t>(rels[0].addend);
    } else if (rels.size() == 1 && rels[0].type == R_X86_64_64 && rels[0].symbol && rels[0].symbol->defined) {
      target = rels[0].symbol->value + static_cast<std::uint64_t>(rels[0].addend);
    } else if (rels.size() == 1 && rels[0].type == R_X86_64_64 && rels[0].symbol) {
      return add(fmt::format("{} calls the imported {} when the library is loaded or unloaded; {}", tag_name(tag),
                             demangle(rels[0].symbol->name), kDoInsideTheCall));
    }
    if (!target)
      return add(fmt::format("{} has a slot at {:#x} the check cannot resolve (relocation type {}); host code that "
                             "runs when the library is loaded or unloaded is forbidden",
                             tag_name(tag), slot, rels.empty() ? 0 : rels[0].type));
    auto names = view_.functions_at(*target);
    for (const auto& e : kToolchainEntries) {
      if (e.array != tag) continue;
      for (const auto& name : names) {
        if (e.prefix ? !name.starts_with(e.name) : name != e.name) continue;
        if (!used_.insert(e.name).second)
          return add(fmt::format("{} lists {} twice; the toolchain emits it once, so one of them is the candidate's "
                                 "own function under that name: host code that runs when the library is loaded or "
                                 "unloaded is forbidden; {}",
                                 tag_name(tag), name, kDoInsideTheCall));
        if (e.name == kStaticInitialiser &&
            std::none_of(std::begin(kIostreamInits), std::end(kIostreamInits),
                         [&](auto code) { return runs_exactly(view_, *target, code); }))
          return add(fmt::format("the static initialiser {} does more than construct <iostream>'s std::ios_base::Init: "
                                 "a namespace-scope object with a constructor, destructor or non-constant initial value "
                                 "runs host code when the library is loaded; make it constexpr, or a function-local "
                                 "static (constructed at its first use, inside a call)",
                                 name));
        return;
      }
    }
    add(fmt::format("{} lists {}: host code that runs when the library is {} (a constructor or destructor "
                    "attribute, or a pointer placed in an init/fini section) is forbidden; {}",
                    tag_name(tag), names.empty() ? fmt::format("the code at {:#x}", *target) : demangle(names.front()),
                    tag == DT_FINI_ARRAY ? "unloaded" : "loaded", kDoInsideTheCall));
  }

  const LoaderView& view_;
  std::vector<CheckViolation> out_;
  std::set<std::string> seen_;
  std::set<std::string_view> used_;
};

}  // namespace

Result<std::vector<CheckViolation>> load_time_code_violations(Elf* elf) {
  GElf_Ehdr eh;
  if (!gelf_getehdr(elf, &eh)) return Error{fmt::format("cannot read the ELF header: {}", elf_errmsg(-1))};
  if (eh.e_machine != EM_X86_64 || gelf_getclass(elf) != ELFCLASS64)
    return Error{fmt::format("cutegen can rule out load-time code only in x86-64 libraries, and this one is for ELF "
                             "machine {}: there is no measured toolchain code to compare it with",
                             eh.e_machine)};
  LoaderView view(elf);
  return LoadTimeCheck(view).run();
}

Result<std::vector<CheckViolation>> check_load_time_code(const std::filesystem::path& library) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error{"libelf is unusable (elf_version failed)"};
  int fd = ::open(library.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{fmt::format("cannot open {}: {}", library.string(), std::strerror(errno))};
  struct Closer {
    int fd;
    Elf* elf = nullptr;
    ~Closer() {
      if (elf) elf_end(elf);
      ::close(fd);
    }
  } closer{fd};
  closer.elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (!closer.elf || elf_kind(closer.elf) != ELF_K_ELF)
    return Error{fmt::format("{} is not an ELF shared library", library.string())};
  auto violations = load_time_code_violations(closer.elf);
  if (!violations) return Error{fmt::format("{}: {}", library.string(), violations.error().message)};
  return violations;
}

}  // namespace cutegen
