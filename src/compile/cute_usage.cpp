#include "compile/cute_usage.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <tuple>
#include <set>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "common/fs.h"
#include "compile/demangle.h"

namespace cutegen {
namespace fs = std::filesystem;
namespace {

std::string_view trim_view(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool ptx_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

std::string_view ident_at(std::string_view s, std::size_t pos) {
  if (pos >= s.size()) return {};
  std::size_t e = pos;
  while (e < s.size() && ptx_ident_char(s[e])) ++e;
  return s.substr(pos, e - pos);
}

// ".visible .entry NAME(" / ".func (.param .b32 retval) NAME(" -> NAME; "" for anything else,
// including declarations (.extern), which have no body.
std::string function_header(std::string_view t) {
  if (starts(t, ".extern")) return "";
  for (std::string_view key : {".entry", ".func"}) {
    std::size_t k = t.find(key);
    if (k == std::string_view::npos || (k > 0 && t[k - 1] != ' ' && t[k - 1] != '\t')) continue;
    std::string_view head = t.substr(0, k);
    if (!head.empty() && trim_view(head) != ".visible" && trim_view(head) != ".weak") continue;
    std::size_t p = k + key.size();
    while (p < t.size() && (t[p] == ' ' || t[p] == '\t')) ++p;
    if (p < t.size() && t[p] == '(') {
      std::size_t close = t.find(')', p);
      if (close == std::string_view::npos) return "";
      p = close + 1;
      while (p < t.size() && (t[p] == ' ' || t[p] == '\t')) ++p;
    }
    return std::string(ident_at(t, p));
  }
  return "";
}

// "call.uni (retval0), NAME, (param0);" -> NAME (the statement may span lines; they are joined).
std::string callee(std::string_view stmt) {
  std::size_t p = stmt.find_first_of(" \t");
  if (p == std::string_view::npos) return "";
  std::string_view rest = trim_view(stmt.substr(p));
  if (!rest.empty() && rest.front() == '(') {
    std::size_t close = rest.find(')');
    if (close == std::string_view::npos) return "";
    rest = trim_view(rest.substr(close + 1));
    if (!rest.empty() && rest.front() == ',') rest = trim_view(rest.substr(1));
  }
  return std::string(ident_at(rest, 0));
}

struct Function {
  bool entry = false;
  bool own_name_cute = false;  // the function itself is a CuTe layout evaluation (not inlined)
  std::set<std::pair<int, std::string>> locs;  // (file index, function_name label; "" when none)
  std::set<std::string> callees;
};

// One `.loc F L C[, function_name S, inlined_at F2 L2 C2]` in file order.
struct Loc {
  int file = 0, line = 0, column = 0;
  std::string function;  // $L__info_string label; "" when none
  bool inlined = false;
  int at_file = 0, at_line = 0, at_column = 0;
};

// "F L C" at the start of `s` (after ".loc" or "inlined_at").
void read_triple(std::string_view s, int& f, int& l, int& c) {
  int* out[] = {&f, &l, &c};
  std::size_t p = 0;
  for (int* v : out) {
    while (p < s.size() && (s[p] == ' ' || s[p] == '\t')) ++p;
    *v = std::atoi(std::string(ident_at(s, p)).c_str());
    p += ident_at(s, p).size();
  }
}

// A CuTe tensor element access or layout evaluation: cute::crd2idx, or cute::Tensor's operator() and
// operator[] (an access through a layout of one element, gY(0) with a static shape, folds without
// crd2idx). Not iter_adaptor's operator[] (t.data()[i]).
bool is_tensor_access(const std::string& mangled) {
  if (mangled.rfind("_ZN4cute", 0) != 0 && mangled.rfind("_ZNK4cute", 0) != 0) return false;
  if (mangled.find("crd2idx") != std::string::npos) return true;
  return mangled.rfind("_ZNK4cute6TensorI", 0) == 0 || mangled.rfind("_ZN4cute6TensorI", 0) == 0
             ? mangled.find("EEclI") != std::string::npos || mangled.find("EEixI") != std::string::npos
             : false;
}

bool is_crd2idx(const std::string& mangled) {
  return mangled.rfind("_ZN4cute", 0) == 0 && mangled.find("crd2idx") != std::string::npos;
}

}  // namespace

CuteAnalysis analyse_cute_usage(const std::string& ptx, const fs::path& cute_dir, SiteScope scope) {
  std::string cute_prefix = cute_dir.lexically_normal().string();
  if (cute_prefix.empty() || cute_prefix.back() != '/') cute_prefix += '/';
  std::map<std::string, Function> fns;
  std::map<int, bool> cute_file;
  std::map<int, std::string> file_path;
  std::vector<Loc> locs;
  std::map<std::string, std::string> strings;  // $L__info_stringN -> the function name it spells
  std::set<std::string> forged;
  std::string current, label, call;
  bool in_asm = false;

  std::istringstream in(ptx);
  std::string raw;
  while (std::getline(in, raw)) {
    std::string_view t = trim_view(raw);
    if (t == "// begin inline asm" || t == "// end inline asm") {
      bool begin = t == "// begin inline asm";
      if (begin == in_asm) forged.insert(current.empty() ? "(top level)" : current);
      in_asm = begin;
      continue;
    }
    if (in_asm) {
      if (starts(t, ".loc") || starts(t, ".file") || starts(t, "$L__info_string") || starts(t, ".section"))
        forged.insert(current.empty() ? "(top level)" : current);
      continue;
    }
    if (!call.empty()) {  // the rest of a call statement
      call += " ";
      call += t;
      if (t.find(';') != std::string_view::npos) {
        if (auto c = callee(call); !c.empty() && !current.empty()) fns[current].callees.insert(c);
        call.clear();
      }
      continue;
    }
    if (starts(t, ".file")) {
      std::size_t q = t.find('"');
      std::size_t q2 = q == std::string_view::npos ? q : t.find('"', q + 1);
      if (q2 != std::string_view::npos) {
        int index = std::atoi(std::string(trim_view(t.substr(5, q - 5))).c_str());
        std::string path = fs::path(std::string(t.substr(q + 1, q2 - q - 1))).lexically_normal().string();
        cute_file[index] = path.rfind(cute_prefix, 0) == 0;
        file_path[index] = path;
      }
      continue;
    }
    if (starts(t, "$L__info_string") && t.back() == ':') {  // t is not empty here
      label = std::string(t.substr(0, t.size() - 1));
      strings[label];
      continue;
    }
    if (!label.empty() && starts(t, ".b8")) {
      std::string& s = strings[label];
      std::string_view bytes = t.substr(3);
      std::size_t p = 0;
      while (p < bytes.size()) {
        std::size_t comma = bytes.find(',', p);
        int v = std::atoi(std::string(bytes.substr(p, comma - p)).c_str());
        if (v == 0) {
          label.clear();
          break;
        }
        s += static_cast<char>(v);
        if (comma == std::string_view::npos) break;
        p = comma + 1;
      }
      continue;
    }
    label.clear();
    if (t == "}") {
      current.clear();
      continue;
    }
    if (std::string name = function_header(t); !name.empty()) {
      current = name;
      fns[current].entry = t.find(".entry") != std::string_view::npos;
      fns[current].own_name_cute = is_crd2idx(name);
      continue;
    }
    if (current.empty()) continue;
    if (starts(t, ".loc")) {
      std::string_view rest = trim_view(t.substr(4));
      int file = std::atoi(std::string(ident_at(rest, 0)).c_str());
      std::size_t fn = rest.find("function_name");
      std::string which = fn == std::string_view::npos ? "" : std::string(ident_at(rest, rest.find_first_not_of(" \t", fn + 13)));
      fns[current].locs.insert({file, which});
      Loc loc;
      read_triple(rest, loc.file, loc.line, loc.column);
      loc.function = which;
      if (std::size_t at = rest.find("inlined_at"); at != std::string_view::npos) {
        loc.inlined = true;
        read_triple(rest.substr(at + 10), loc.at_file, loc.at_line, loc.at_column);
      }
      locs.push_back(std::move(loc));
      continue;
    }
    if (starts(t, "call")) {
      call = std::string(t);
      if (t.find(';') != std::string_view::npos) {
        if (auto c = callee(call); !c.empty()) fns[current].callees.insert(c);
        call.clear();
      }
    }
  }

  std::map<std::string, bool> memo;
  std::function<bool(const std::string&, std::set<std::string>&)> uses = [&](const std::string& name,
                                                                          std::set<std::string>& path) -> bool {
    if (auto m = memo.find(name); m != memo.end()) return m->second;
    auto it = fns.find(name);
    if (it == fns.end() || !path.insert(name).second) return false;
    const Function& f = it->second;
    bool result = false;
    for (const auto& [file, which] : f.locs) {
      if (!cute_file[file]) continue;
      if (which.empty() ? f.own_name_cute : is_crd2idx(strings[which])) {
        result = true;
        break;
      }
    }
    for (auto c = f.callees.begin(); !result && c != f.callees.end(); ++c) result = uses(*c, path);
    path.erase(name);
    memo[name] = result;
    return result;
  };
  CuteAnalysis out;
  // The non-CuTe positions of each .loc's inline chain. A chain is spelled one level per .loc: a
  // callee's .loc names its call site (inlined_at), which is the position of an earlier .loc of the
  // caller; so the positions recorded last at that place give the rest of the chain. All of them, not
  // only the nearest: `element(gY, g, t) = v` stores in the caller of a helper that indexes the tensor.
  using Place = std::tuple<int, int, int>;
  std::map<Place, std::vector<std::pair<int, int>>> outer_at;
  for (const Loc& l : locs) {
    std::vector<std::pair<int, int>> outer;
    if (!cute_file[l.file]) outer.push_back({l.file, l.line});
    if (l.inlined) {
      if (!cute_file[l.at_file]) outer.push_back({l.at_file, l.at_line});
      for (const auto& p : outer_at[Place{l.at_file, l.at_line, l.at_column}])
        if (std::find(outer.begin(), outer.end(), p) == outer.end()) outer.push_back(p);
    }
    if (cute_file[l.file] && !l.function.empty() && is_tensor_access(strings[l.function]))
      for (const auto& [file, line] : outer) {
        out.cute_sites.insert({file_path[file], line});
        if (scope == SiteScope::innermost) break;  // `outer` runs from the innermost position out
      }
    outer_at[Place{l.file, l.line, l.column}] = std::move(outer);
  }
  for (const auto& [name, f] : fns) {
    if (!f.entry) continue;
    std::set<std::string> path;
    out.uses_cute[name] = uses(name, path);
  }
  out.forged.assign(forged.begin(), forged.end());
  return out;
}

std::optional<CuteAnalysis> build_evidence(const std::string& ptx, const fs::path& cute_dir,
                                           const std::vector<std::string>& kernels) {
  CuteAnalysis a = analyse_cute_usage(ptx, cute_dir, SiteScope::innermost);
  if (!a.forged.empty() || a.cute_sites.empty()) return std::nullopt;
  for (const auto& k : kernels)
    if (auto it = a.uses_cute.find(k); it == a.uses_cute.end() || !it->second) return std::nullopt;
  return a;
}

std::vector<CheckViolation> cute_violations(const std::vector<std::string>& kernels, const CuteAnalysis& a) {
  std::vector<CheckViolation> out;
  for (const auto& f : a.forged)
    out.push_back({"forged-line-info",
                   fmt::format("inline assembly in {} contains line-information directives (.loc/.file) or "
                               "compiler markers; remove them", demangle(f))});
  for (const auto& k : kernels) {
    auto it = a.uses_cute.find(k);
    if (it == a.uses_cute.end()) {
      out.push_back({"cute-unverifiable",
                     fmt::format("kernel {} is in the library but not in the unoptimised analysis compile, so its "
                                 "CuTe use cannot be checked: do not make kernels depend on optimisation",
                                 demangle(k))});
    } else if (!it->second) {
      out.push_back({"no-cute",
                     fmt::format("kernel {} does not use CuTe: each __global__ function must itself access memory "
                                 "through CuTe tensors (index gX(i) or gX(m, n), slice gX(_, k), local_tile, "
                                 "partition, copy, gemm); a raw pointer taken from a tensor (t.data()[i]) does "
                                 "not count, and neither does CuTe in another kernel or on the host",
                                 demangle(k))});
    }
  }
  return out;
}

Result<CuteAnalysisRun> run_cute_analysis(ProcessRunner& runner, const std::vector<std::string>& command,
                                          const fs::path& dir, const std::string& ptx_name,
                                          std::chrono::milliseconds timeout, const fs::path& cutlass_include,
                                          const QuotableFiles& quotable, std::stop_token stop) {
  CuteAnalysisRun run;
  auto proc = runner.run({.argv = command, .timeout = timeout, .cwd = dir, .private_dir = dir, .stop = stop});
  // The PTX is tens of megabytes for a CuTe GEMM at -O0 and only needed here: keep it out of the cache.
  struct Remove {
    fs::path p;
    ~Remove() {
      std::error_code ec;
      fs::remove(p, ec);
    }
  } remove_ptx{dir / ptx_name};
  if (!proc) return Error{fmt::format("{}; install the CUDA toolkit or set compile.nvcc in the config", proc.error().message)};
  run.seconds = proc->wall_seconds;
  if (proc->cancelled) {
    run.cancelled = true;
    return run;
  }
  if (proc->timed_out) {
    run.timed_out = true;
    return run;
  }
  if (!proc->succeeded()) {
    std::string log = redact_nvcc_log(proc->out + proc->err, quotable);
    auto d = condense_nvcc_log(log, quotable.candidate, "", 1);
    std::string first = d.errors.empty() ? proc->describe_end() : d.errors.front().message;
    run.violations.push_back({"cute-unverifiable",
                              fmt::format("the unoptimised compile that checks CuTe use per kernel failed ({}); "
                                          "the kernel must compile without optimisation too", first)});
    return run;
  }
  auto ptx = read_file(dir / ptx_name);
  if (!ptx) return Error{fmt::format("CuTe analysis: {}", ptx.error().message)};
  run.analysis = analyse_cute_usage(*ptx, cutlass_include / "cute");
  run.compiled = true;
  return run;
}

std::vector<CheckViolation> cute_check_violations(const CuteAnalysisRun& run, const std::vector<std::string>& kernels) {
  return run.compiled ? cute_violations(kernels, run.analysis) : run.violations;
}

}  // namespace cutegen
