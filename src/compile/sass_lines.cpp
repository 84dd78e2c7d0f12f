#include "compile/sass_lines.h"

#include <cctype>
#include <sstream>
#include <string_view>

namespace cutegen {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// `File "F", line N` at the start of `s` -> (F, N); the rest of `s` is left after it.
bool read_position(std::string_view& s, SourcePosition& out) {
  if (!starts(s, "File \"")) return false;
  s.remove_prefix(6);
  std::size_t q = s.find('"');
  if (q == std::string_view::npos) return false;
  out.file = std::string(s.substr(0, q));
  s.remove_prefix(q + 1);
  if (!starts(s, ", line ")) return false;
  s.remove_prefix(7);
  std::size_t digits = 0;
  out.line = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits])))
    out.line = out.line * 10 + (s[digits++] - '0');
  s.remove_prefix(digits);
  return digits > 0;
}

// "        /*0620*/               @!P0 STG.E desc[UR6][R8.64], R11 ;" -> "STG.E"; "" for other lines.
std::string opcode_of(std::string_view t) {
  if (!starts(t, "/*")) return "";
  std::size_t close = t.find("*/");
  if (close == std::string_view::npos) return "";
  t = trim(t.substr(close + 2));
  if (starts(t, "@")) {  // a guard predicate: @P0, @!UP1, @!PT
    std::size_t sp = t.find_first_of(" \t");
    if (sp == std::string_view::npos) return "";
    t = trim(t.substr(sp));
  }
  std::size_t end = 0;
  while (end < t.size() && (std::isalnum(static_cast<unsigned char>(t[end])) || t[end] == '.' || t[end] == '_')) ++end;
  std::string op(t.substr(0, end));
  return !op.empty() && std::isupper(static_cast<unsigned char>(op[0])) ? op : "";
}

}  // namespace

std::map<std::string, SassFunction> parse_sass_line_info(const std::string& text) {
  std::map<std::string, SassFunction> out;
  std::set<std::string> kernels;
  std::vector<std::pair<std::string, std::string>> calls;  // (caller, callee) once all sections are known
  SassFunction* current = nullptr;
  std::string current_name;
  std::vector<SourcePosition> chain;
  bool chain_complete = true;  // the next `//##` line starts a new chain
  std::istringstream in(text);
  std::string raw;
  while (std::getline(in, raw)) {
    std::string_view t = trim(raw);
    // "//--------------------- .text._Z6kernelPf --------------------------"
    if (starts(t, "//---") && t.find(" .text.") != std::string_view::npos) {
      std::string_view rest = t.substr(t.find(" .text.") + 7);
      current_name = std::string(rest.substr(0, rest.find(' ')));
      current = &out[current_name];
      chain.clear();
      chain_complete = true;
      continue;
    }
    // ".other _Z6kernelPf,@"STO_CUDA_ENTRY STV_DEFAULT""
    if (starts(t, ".other") && t.find("STO_CUDA_ENTRY") != std::string_view::npos) {
      std::string_view rest = trim(t.substr(6));
      kernels.insert(std::string(rest.substr(0, rest.find(','))));
      continue;
    }
    // '//## File "F", line N inlined at "G", line M': one frame; a run of them is one chain, innermost
    // first, ending with the outermost function's own position (no "inlined at").
    if (starts(t, "//##")) {
      std::string_view rest = trim(t.substr(4));
      SourcePosition p;
      if (!read_position(rest, p)) continue;
      if (chain_complete) chain.clear();
      chain_complete = false;
      chain.push_back(std::move(p));
      continue;
    }
    if (!current) continue;
    std::string op = opcode_of(t);
    if (op.empty()) continue;
    chain_complete = true;
    current->instructions.push_back({op, chain});
    if (starts(op, "CALL")) {
      std::size_t open = t.find("`(");
      std::size_t close = open == std::string_view::npos ? open : t.find(')', open);
      if (close != std::string_view::npos) calls.emplace_back(current_name, std::string(t.substr(open + 2, close - open - 2)));
    }
  }
  for (const auto& [caller, callee] : calls)
    if (out.count(callee)) out[caller].callees.insert(callee);
  for (auto& [name, f] : out) f.kernel = kernels.count(name) > 0;
  return out;
}

bool is_global_store(const std::string& opcode) {
  std::string_view base(opcode);
  base = base.substr(0, base.find('.'));
  for (std::string_view s : {"STG", "ST", "RED", "REDG", "ATOM", "ATOMG", "UTMASTG", "UTMAREDG", "UBLKCP", "UBLKRED"})
    if (base == s) return true;
  return false;
}

}  // namespace cutegen
