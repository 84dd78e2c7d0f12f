#include "compile/host_assembly.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "common/fs.h"

namespace cutegen {
namespace fs = std::filesystem;
namespace {

// Characters GNU as reads as part of a name. A directive is a name that starts with '.'; one glued to
// a name character before it (".rodata.include", "x.incbin") is part of a longer name, not a directive.
bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

enum class Kind { reads_file, builds_text, drops_dot };

struct Directive {
  const char* name;
  Kind kind;
};

// GNU as directive names are not case-sensitive (".INCBIN" reads the file too).
constexpr Directive kRefused[] = {
    {"include", Kind::reads_file}, {"incbin", Kind::reads_file},   {"macro", Kind::builds_text},
    {"irp", Kind::builds_text},    {"irpc", Kind::builds_text},    {"altmacro", Kind::builds_text},
    {"mri", Kind::drops_dot},
};

// The statement around `pos` (statements end at a newline or ';'), printable and short: it quotes the
// candidate's own asm text, which is what the author needs to find the statement.
std::string statement_at(std::string_view s, std::size_t pos) {
  std::size_t b = s.find_last_of("\n;", pos);
  b = b == std::string_view::npos ? 0 : b + 1;
  std::size_t e = s.find_first_of("\n;", pos);
  if (e == std::string_view::npos) e = s.size();
  std::string out;
  for (char c : s.substr(b, e - b)) out += (c == '\t') ? ' ' : (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  auto first = out.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  out = out.substr(first, out.find_last_not_of(' ') - first + 1);
  return out.size() <= 100 ? out : out.substr(0, 100) + "...";
}

std::string message_for(Kind kind, const std::string& name, const std::string& statement) {
  switch (kind) {
    case Kind::reads_file:
      return fmt::format("the host code's assembly holds '{}': the assembler directive '.{}' reads a file at "
                         "compile time and is refused however the asm string spells it (escapes, joined "
                         "literals, macros); remove it",
                         statement, name);
    case Kind::builds_text:
      return fmt::format("the host code's assembly holds '{}': assembler macros and loops ('.{}') can put "
                         "together a directive that reads a file, so host asm may not use .macro, .irp, .irpc "
                         "or .altmacro; write the statements out",
                         statement, name);
    case Kind::drops_dot:
      return fmt::format("the host code's assembly holds '{}': '.mri' lets directives be written without "
                         "their dot, so a file-reading one could not be seen; remove it",
                         statement);
  }
  return "";
}

}  // namespace

std::vector<CheckViolation> check_host_assembly(std::string_view s) {
  constexpr std::size_t kMaxReported = 8;
  std::vector<CheckViolation> out;
  std::set<std::string> seen;
  for (std::size_t dot = s.find('.'); dot != std::string_view::npos; dot = s.find('.', dot + 1)) {
    if (dot > 0 && name_char(s[dot - 1])) continue;
    std::size_t end = dot + 1;
    while (end < s.size() && (name_char(s[end]) || s[end] == '.')) ++end;
    std::string name;
    for (char c : s.substr(dot + 1, end - dot - 1)) name += lower(c);
    auto it = std::find_if(std::begin(kRefused), std::end(kRefused), [&](const Directive& d) { return name == d.name; });
    if (it == std::end(kRefused)) continue;
    std::string message = message_for(it->kind, name, statement_at(s, dot));
    if (!seen.insert(message).second) continue;
    if (out.size() == kMaxReported) {
      out.push_back({"asm-reads-file", "more statements of the host code's assembly like the ones above (not listed)"});
      break;
    }
    out.push_back({"asm-reads-file", std::move(message)});
  }
  return out;
}

Result<std::vector<CheckViolation>> check_kept_host_assembly(const fs::path& keep_dir, const std::string& candidate_stem,
                                                             bool required) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(keep_dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".s") files.push_back(it->path());
  if (ec) return Error{fmt::format("cannot list {}: {}", keep_dir.string(), ec.message())};
  std::sort(files.begin(), files.end());
  bool candidate_seen = false;
  std::vector<CheckViolation> out;
  for (const auto& f : files) {
    candidate_seen |= f.filename() == candidate_stem + ".s";
    auto text = read_file(f);
    if (!text) return Error{fmt::format("cannot read the host assembly {}: {}", f.string(), text.error().message)};
    for (auto& v : check_host_assembly(*text)) out.push_back(std::move(v));
  }
  if (required && !candidate_seen)
    return Error{fmt::format("nvcc left no host assembly {}.s in {} (-Xcompiler -save-temps=obj), so the check for "
                             "file-reading assembler directives cannot be made; this nvcc or host compiler names "
                             "its temporary files differently",
                             candidate_stem, keep_dir.string())};
  return out;
}

}  // namespace cutegen
