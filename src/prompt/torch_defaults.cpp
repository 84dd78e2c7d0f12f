#include "prompt/torch_defaults.h"

#include <algorithm>
#include <cctype>

namespace cutegen {
namespace {

struct Param {
  const char* name;
  int position;  // its index among the call's positional arguments (the input counts for functions)
  const char* value;
};

struct Known {
  const char* name;          // after "nn." or "F."
  bool module;               // nn.Name(...) vs F.name(...)
  std::vector<Param> params;
};

// Only defaults that change the numbers a kernel must produce. Positions follow PyTorch 2.x's
// signatures (torch.nn.modules, torch.nn.functional).
const std::vector<Known>& table() {
  static const std::vector<Known> t = {
      {"LayerNorm", true, {{"eps", 1, "1e-05"}}},
      {"GroupNorm", true, {{"eps", 2, "1e-05"}}},
      {"RMSNorm", true, {{"eps", 1, "None (torch.finfo(x.dtype).eps)"}}},
      {"BatchNorm1d", true, {{"eps", 1, "1e-05"}, {"momentum", 2, "0.1"}}},
      {"BatchNorm2d", true, {{"eps", 1, "1e-05"}, {"momentum", 2, "0.1"}}},
      {"BatchNorm3d", true, {{"eps", 1, "1e-05"}, {"momentum", 2, "0.1"}}},
      {"InstanceNorm1d", true, {{"eps", 1, "1e-05"}, {"affine", 3, "False"}}},
      {"InstanceNorm2d", true, {{"eps", 1, "1e-05"}, {"affine", 3, "False"}}},
      {"InstanceNorm3d", true, {{"eps", 1, "1e-05"}, {"affine", 3, "False"}}},
      {"LeakyReLU", true, {{"negative_slope", 0, "0.01"}}},
      {"ELU", true, {{"alpha", 0, "1.0"}}},
      {"CELU", true, {{"alpha", 0, "1.0"}}},
      {"Softplus", true, {{"beta", 0, "1.0"}, {"threshold", 1, "20.0"}}},
      {"GELU", true, {{"approximate", 0, "'none'"}}},
      {"Hardtanh", true, {{"min_val", 0, "-1.0"}, {"max_val", 1, "1.0"}}},
      {"CosineSimilarity", true, {{"dim", 0, "1"}, {"eps", 1, "1e-08"}}},
      {"PairwiseDistance", true, {{"p", 0, "2.0"}, {"eps", 1, "1e-06"}}},
      {"layer_norm", false, {{"eps", 4, "1e-05"}}},
      {"group_norm", false, {{"eps", 4, "1e-05"}}},
      {"rms_norm", false, {{"eps", 3, "None (torch.finfo(x.dtype).eps)"}}},
      {"batch_norm", false, {{"momentum", 6, "0.1"}, {"eps", 7, "1e-05"}}},
      {"instance_norm", false, {{"eps", 7, "1e-05"}}},
      {"normalize", false, {{"p", 1, "2.0"}, {"dim", 2, "1"}, {"eps", 3, "1e-12"}}},
      {"leaky_relu", false, {{"negative_slope", 1, "0.01"}}},
      {"elu", false, {{"alpha", 1, "1.0"}}},
      {"gelu", false, {{"approximate", 1, "'none'"}}},
      {"softplus", false, {{"beta", 1, "1.0"}, {"threshold", 2, "20.0"}}},
      {"hardtanh", false, {{"min_val", 1, "-1.0"}, {"max_val", 2, "1.0"}}},
      {"cosine_similarity", false, {{"dim", 2, "1"}, {"eps", 3, "1e-08"}}},
      {"pairwise_distance", false, {{"p", 2, "2.0"}, {"eps", 3, "1e-06"}}},
  };
  return t;
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The arguments of the call whose '(' is at `open`, split at top-level commas; empty when the call
// is never closed.
std::vector<std::string_view> call_arguments(std::string_view src, std::size_t open, bool& closed) {
  std::vector<std::string_view> args;
  int depth = 0;
  char quote = 0;
  std::size_t start = open + 1;
  closed = false;
  for (std::size_t i = open; i < src.size(); ++i) {
    char c = src[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    else if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) {
        args.push_back(src.substr(start, i - start));
        closed = true;
        break;
      }
    } else if (c == ',' && depth == 1) {
      args.push_back(src.substr(start, i - start));
      start = i + 1;
    }
  }
  return args;
}

std::string_view trim_arg(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "eps=1e-5" -> "eps"; "" for a positional argument ("a == b" is positional).
std::string_view keyword_of(std::string_view arg) {
  arg = trim_arg(arg);
  std::size_t n = 0;
  while (n < arg.size() && ident_char(arg[n])) ++n;
  if (n == 0) return {};
  std::string_view rest = trim_arg(arg.substr(n));
  if (rest.size() >= 1 && rest[0] == '=' && (rest.size() == 1 || rest[1] != '=')) return arg.substr(0, n);
  return {};
}

// `before` ends in `qualifier` ("nn."), itself not the tail of a longer name ("mynn.").
bool qualified_by(std::string_view before, std::string_view qualifier) {
  if (before.size() < qualifier.size() || before.substr(before.size() - qualifier.size()) != qualifier) return false;
  std::size_t at = before.size() - qualifier.size();
  return at == 0 || !ident_char(before[at - 1]);
}

}  // namespace

std::vector<ImpliedDefault> implied_defaults(std::string_view src) {
  struct Found {
    std::size_t at;
    ImpliedDefault d;
  };
  std::vector<Found> found;
  for (const Known& k : table()) {
    const std::string name = k.name;
    for (std::size_t pos = src.find(name + "("); pos != std::string_view::npos; pos = src.find(name + "(", pos + 1)) {
      // Only nn.Name(...), F.name(...) and functional.name(...): not another module's or object's.
      std::string_view before = src.substr(0, pos);
      if (!qualified_by(before, k.module ? "nn." : "F.") && (k.module || !qualified_by(before, "functional.")))
        continue;
      bool closed = false;
      auto args = call_arguments(src, pos + name.size(), closed);
      if (!closed) continue;
      if (std::any_of(args.begin(), args.end(), [](std::string_view a) { return trim_arg(a).rfind('*', 0) == 0; }))
        continue;  // *args or **kwargs: what is passed cannot be read from the source
      int positional = 0;
      std::vector<std::string_view> keywords;
      for (auto a : args) {
        if (trim_arg(a).empty()) continue;
        if (auto kw = keyword_of(a); !kw.empty()) keywords.push_back(kw);
        else ++positional;
      }
      for (const Param& p : k.params) {
        bool passed = positional > p.position ||
                      std::find(keywords.begin(), keywords.end(), std::string_view(p.name)) != keywords.end();
        if (passed) continue;
        std::string call = std::string(k.module ? "nn." : "F.") + name;
        bool seen = std::any_of(found.begin(), found.end(), [&](const Found& f) {
          return f.d.call == call && f.d.param == p.name;
        });
        if (!seen) found.push_back({pos, {call, p.name, p.value}});
      }
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.at < b.at; });
  std::vector<ImpliedDefault> out;
  for (auto& f : found) out.push_back(std::move(f.d));
  return out;
}

}  // namespace cutegen
