#include "tune/knobs.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

namespace cutegen {

// --- constraint expressions: integers, knob names, C's arithmetic, comparison and logic ------------

struct KnobExpr {
  enum class Op { number, knob, neg, lnot, mul, div, mod, add, sub, lt, le, gt, ge, eq, ne, land, lor };
  Op op = Op::number;
  int64_t number = 0;
  std::size_t knob = 0;  // index into the spec's knobs
  std::shared_ptr<const KnobExpr> a, b;
};

namespace {

using ExprPtr = std::shared_ptr<const KnobExpr>;
using Op = KnobExpr::Op;

struct Line {
  std::size_t begin = 0;  // offset of the line's first character
  std::string text;       // without the newline (and a trailing \r)
  int number = 0;
};

std::vector<Line> split_lines(const std::string& s) {
  std::vector<Line> lines;
  std::size_t pos = 0;
  int n = 1;
  while (pos <= s.size()) {
    std::size_t nl = s.find('\n', pos);
    std::size_t end = nl == std::string::npos ? s.size() : nl;
    std::string text = s.substr(pos, end - pos);
    if (!text.empty() && text.back() == '\r') text.pop_back();
    lines.push_back({pos, std::move(text), n++});
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return lines;
}

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A cursor over one line's text.
struct Cursor {
  const std::string& s;
  std::size_t i = 0;

  void skip_space() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  }
  bool at_end() {
    skip_space();
    return i >= s.size();
  }
  bool eat(std::string_view word) {
    skip_space();
    if (s.compare(i, word.size(), word) != 0) return false;
    i += word.size();
    return true;
  }
  std::string ident() {
    skip_space();
    if (i >= s.size() || !ident_start(s[i])) return "";
    std::size_t b = i;
    while (i < s.size() && ident_char(s[i])) ++i;
    return s.substr(b, i - b);
  }
  // A decimal integer with an optional sign; its span in `begin`/`end`.
  bool integer(int64_t& out, std::size_t* begin = nullptr, std::size_t* end = nullptr) {
    skip_space();
    std::size_t b = i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    std::size_t digits = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == digits || (i < s.size() && ident_char(s[i]))) {
      i = b;
      return false;
    }
    try {
      out = std::stoll(s.substr(b, i - b));
    } catch (...) {  // out of range: std::stoll's only other failure, excluded by the scan above
      i = b;
      return false;
    }
    if (begin) *begin = b;
    if (end) *end = i;
    return true;
  }
};

// The text of a `// cutegen:WORD ...` directive line after "cutegen:", or "" when the line is not one.
std::string directive_body(const std::string& line) {
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line.compare(i, 2, "//") != 0) return "";
  i = line.find_first_not_of(" \t", i + 2);
  if (i == std::string::npos || line.compare(i, 8, "cutegen:") != 0) return "";
  if (i + 8 >= line.size() || !ident_start(line[i + 8])) return "";  // `// cutegen::numel` is prose
  return line.substr(i + 8);
}

Error at(int line, const std::string& what) { return Error{fmt::format("line {}: {}", line, what)}; }

// Recursive descent with C's precedence: || && (== !=) (< <= > >=) (+ -) (* / %) unary primary.
class ExprParser {
 public:
  ExprParser(const std::string& text, const std::map<std::string, std::size_t>& knobs, int line)
      : c_{text}, knobs_(knobs), line_(line) {}

  Result<ExprPtr> parse() {
    auto e = binary(0);
    if (!e) return e;
    if (!c_.at_end()) return at(line_, fmt::format("cutegen:require: unexpected '{}'", c_.s.substr(c_.i)));
    return e;
  }

 private:
  struct Level {
    std::vector<std::pair<std::string_view, Op>> ops;
  };
  static const std::vector<Level>& levels() {
    static const std::vector<Level> l = {
        {{{"||", Op::lor}}},
        {{{"&&", Op::land}}},
        {{{"==", Op::eq}, {"!=", Op::ne}}},
        {{{"<=", Op::le}, {">=", Op::ge}, {"<", Op::lt}, {">", Op::gt}}},
        {{{"+", Op::add}, {"-", Op::sub}}},
        {{{"*", Op::mul}, {"/", Op::div}, {"%", Op::mod}}},
    };
    return l;
  }

  Result<ExprPtr> binary(std::size_t level) {
    if (level == levels().size()) return unary();
    auto left = binary(level + 1);
    if (!left) return left;
    ExprPtr e = *left;
    for (;;) {
      bool matched = false;
      for (const auto& [text, op] : levels()[level].ops) {
        c_.skip_space();
        // "<" must not swallow "<=", nor "|" stand for "||" (the lists put the longer spelling first).
        if (c_.s.compare(c_.i, text.size(), text) != 0) continue;
        c_.i += text.size();
        auto right = binary(level + 1);
        if (!right) return right;
        e = std::make_shared<KnobExpr>(KnobExpr{op, 0, 0, e, *right});
        matched = true;
        break;
      }
      if (!matched) return e;
    }
  }

  Result<ExprPtr> unary() {
    if (c_.eat("-")) {
      auto e = unary();
      if (!e) return e;
      return ExprPtr(std::make_shared<KnobExpr>(KnobExpr{Op::neg, 0, 0, *e, nullptr}));
    }
    if (c_.eat("!")) {
      auto e = unary();
      if (!e) return e;
      return ExprPtr(std::make_shared<KnobExpr>(KnobExpr{Op::lnot, 0, 0, *e, nullptr}));
    }
    return primary();
  }

  Result<ExprPtr> primary() {
    if (c_.eat("(")) {
      auto e = binary(0);
      if (!e) return e;
      if (!c_.eat(")")) return at(line_, "cutegen:require: missing ')'");
      return e;
    }
    c_.skip_space();
    std::size_t here = c_.i;
    if (here < c_.s.size() && std::isdigit(static_cast<unsigned char>(c_.s[here]))) {
      int64_t v = 0;
      if (!c_.integer(v)) return at(line_, fmt::format("cutegen:require: bad number at '{}'", c_.s.substr(here)));
      return ExprPtr(std::make_shared<KnobExpr>(KnobExpr{Op::number, v, 0, nullptr, nullptr}));
    }
    std::string name = c_.ident();
    if (name.empty())
      return at(line_, fmt::format("cutegen:require: expected a knob, a number or '(' at '{}'", c_.s.substr(here)));
    auto k = knobs_.find(name);
    if (k == knobs_.end())
      return at(line_, fmt::format("cutegen:require names '{}', which is not a knob declared above it", name));
    return ExprPtr(std::make_shared<KnobExpr>(KnobExpr{Op::knob, 0, k->second, nullptr, nullptr}));
  }

  Cursor c_;
  const std::map<std::string, std::size_t>& knobs_;
  int line_;
};

// nullopt: division or remainder by zero (the constraint then fails). Wrapping arithmetic: knob
// values are small, and a constraint that overflows is the author's to fix.
std::optional<int64_t> eval(const KnobExpr& e, const KnobValues& v) {
  auto u = [](int64_t x) { return static_cast<uint64_t>(x); };
  switch (e.op) {
    case Op::number: return e.number;
    case Op::knob: return v.at(e.knob);
    case Op::neg: {
      auto a = eval(*e.a, v);
      if (!a) return a;
      return static_cast<int64_t>(0 - u(*a));
    }
    case Op::lnot: {
      auto a = eval(*e.a, v);
      if (!a) return a;
      return *a == 0 ? 1 : 0;
    }
    default: break;
  }
  auto a = eval(*e.a, v);
  if (!a) return a;
  if (e.op == Op::land && *a == 0) return 0;  // C's short circuit
  if (e.op == Op::lor && *a != 0) return 1;
  auto b = eval(*e.b, v);
  if (!b) return b;
  switch (e.op) {
    case Op::mul: return static_cast<int64_t>(u(*a) * u(*b));
    case Op::div:
    case Op::mod:
      if (*b == 0 || (*a == INT64_MIN && *b == -1)) return std::nullopt;
      return e.op == Op::div ? *a / *b : *a % *b;
    case Op::add: return static_cast<int64_t>(u(*a) + u(*b));
    case Op::sub: return static_cast<int64_t>(u(*a) - u(*b));
    case Op::lt: return *a < *b;
    case Op::le: return *a <= *b;
    case Op::gt: return *a > *b;
    case Op::ge: return *a >= *b;
    case Op::eq: return *a == *b;
    case Op::ne: return *a != *b;
    case Op::land: return *b != 0;
    case Op::lor: return *b != 0;
    default: return std::nullopt;
  }
}

// `// cutegen:knob NAME in {v, v, ...}`
Result<Knob> parse_knob_line(const std::string& body, int line) {
  Cursor c{body};
  c.eat("knob");
  Knob k;
  k.line = line;
  k.name = c.ident();
  auto usage = [&](const std::string& why) {
    return at(line, fmt::format("{}: write `// cutegen:knob NAME in {{128, 256, 512}}`", why));
  };
  if (k.name.empty()) return usage("cutegen:knob without a name");
  if (!c.eat("in") || !c.eat("{")) return usage(fmt::format("cutegen:knob {}: expected 'in {{'", k.name));
  std::set<int64_t> seen;
  for (;;) {
    int64_t v = 0;
    if (!c.integer(v)) return usage(fmt::format("cutegen:knob {}: values must be whole numbers", k.name));
    if (!seen.insert(v).second) return at(line, fmt::format("cutegen:knob {}: the value {} is listed twice", k.name, v));
    k.values.push_back(v);
    if (c.eat("}")) break;
    if (!c.eat(",")) return usage(fmt::format("cutegen:knob {}: expected ',' or '}}' after {}", k.name, v));
  }
  if (!c.at_end()) return usage(fmt::format("cutegen:knob {}: unexpected text after '}}'", k.name));
  return k;
}

// The #ifndef NAME / #define NAME DEFAULT / #endif block after a knob line (blank lines may sit between).
Status parse_knob_block(const std::vector<Line>& lines, std::size_t& i, Knob& k) {
  auto next = [&]() -> const Line* {
    while (++i < lines.size())
      if (lines[i].text.find_first_not_of(" \t") != std::string::npos) return &lines[i];
    return nullptr;
  };
  const std::string want = fmt::format("#ifndef {0} / #define {0} <default> / #endif", k.name);
  auto missing = [&](const char* what) {
    return at(k.line, fmt::format("cutegen:knob {} must be followed by {} (no {})", k.name, want, what));
  };
  auto directive = [](const Line* l, const char* word, std::string& name) {
    if (!l) return false;
    Cursor c{l->text};
    if (!c.eat("#") || !c.eat(word)) return false;
    name = c.ident();
    return true;
  };
  std::string name;
  const Line* l = next();
  if (!directive(l, "ifndef", name) || name != k.name) return missing("#ifndef line");
  l = next();
  if (!directive(l, "define", name) || name != k.name) return missing("#define line");
  Cursor c{l->text};
  c.eat("#");
  c.eat("define");
  c.ident();
  int64_t v = 0;
  std::size_t b = 0, e = 0;
  if (!c.integer(v, &b, &e))
    return at(l->number, fmt::format("knob {}: the default must be a whole number: `#define {} 256`", k.name, k.name));
  if (!c.at_end() && !c.eat("//"))
    return at(l->number, fmt::format("knob {}: only a // comment may follow the default", k.name));
  if (std::find(k.values.begin(), k.values.end(), v) == k.values.end())
    return at(l->number, fmt::format("knob {}: the default {} is not among its values", k.name, v));
  k.default_value = v;
  k.default_begin = l->begin + b;
  k.default_end = l->begin + e;
  l = next();
  if (!directive(l, "endif", name)) return missing("#endif line");
  return ok_status();
}

}  // namespace

KnobValues KnobSpec::defaults() const {
  KnobValues v;
  for (const auto& k : knobs) v.push_back(k.default_value);
  return v;
}

bool KnobSpec::satisfies(const KnobValues& values, int* failed) const {
  for (std::size_t i = 0; i < constraints.size(); ++i) {
    auto r = eval(*constraints[i].expr, values);
    if (!r || *r == 0) {
      if (failed) *failed = static_cast<int>(i);
      return false;
    }
  }
  return true;
}

std::string KnobSpec::describe(const KnobValues& values) const {
  std::string s;
  for (std::size_t i = 0; i < knobs.size() && i < values.size(); ++i)
    s += fmt::format("{}{}={}", i ? " " : "", knobs[i].name, values[i]);
  return s;
}

Result<KnobSpec> parse_knobs(const std::string& source) {
  KnobSpec spec;
  std::map<std::string, std::size_t> index;
  auto lines = split_lines(source);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string body = directive_body(lines[i].text);
    if (body.empty()) continue;
    const int n = lines[i].number;
    Cursor c{body};
    std::string word = c.ident();
    if (word == "knob") {
      auto k = parse_knob_line(body, n);
      if (!k) return k.error();
      if (auto seen = index.find(k->name); seen != index.end())
        return at(n, fmt::format("knob {} is declared twice (first on line {})", k->name, spec.knobs[seen->second].line));
      if (auto b = parse_knob_block(lines, i, *k); !b) return b.error();
      index[k->name] = spec.knobs.size();
      spec.knobs.push_back(std::move(*k));
    } else if (word == "require") {
      std::string text = body.substr(c.i);
      text.erase(0, text.find_first_not_of(" \t"));
      while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.pop_back();
      if (text.empty()) return at(n, "cutegen:require without a condition: `// cutegen:require BLOCK * VEC <= 4096`");
      auto expr = ExprParser(text, index, n).parse();
      if (!expr) return expr.error();
      spec.constraints.push_back({text, n, *expr});
    } else {
      return at(n, fmt::format("unknown directive cutegen:{} (known: cutegen:knob, cutegen:require)", word));
    }
  }
  int failed = -1;
  if (!spec.satisfies(spec.defaults(), &failed)) {
    const auto& c = spec.constraints[failed];
    return at(c.line, fmt::format("the defaults ({}) break cutegen:require {}", spec.describe(spec.defaults()), c.text));
  }
  return spec;
}

Result<VariantPlan> plan_variants(const KnobSpec& spec, std::size_t max_variants) {
  if (max_variants < 1) return Error{"--max-variants must be at least 1"};
  constexpr std::size_t kMaxCombinations = 1'000'000;
  VariantPlan plan;
  plan.combinations = 1;
  for (const auto& k : spec.knobs) {
    plan.combinations *= k.values.size();
    if (plan.combinations > kMaxCombinations)
      return Error{fmt::format("the knobs allow over {} combinations: list fewer values per knob", kMaxCombinations)};
  }
  const KnobValues defaults = spec.defaults();
  std::vector<KnobValues> others;
  KnobValues v(spec.knobs.size());
  for (std::size_t n = 0; n < plan.combinations; ++n) {
    std::size_t rest = n;  // mixed radix, the last knob fastest
    for (std::size_t k = spec.knobs.size(); k-- > 0;) {
      v[k] = spec.knobs[k].values[rest % spec.knobs[k].values.size()];
      rest /= spec.knobs[k].values.size();
    }
    if (!spec.satisfies(v)) continue;
    ++plan.feasible;
    if (v != defaults) others.push_back(v);
  }
  plan.variants.push_back(defaults);
  if (others.size() + 1 > max_variants) {
    plan.sampled = true;
    // FNV-1a over the values: an order that looks random, is the same everywhere and on every run,
    // and does not depend on the standard library's distributions (which differ between vendors).
    auto hash = [](const KnobValues& x) {
      uint64_t h = 1469598103934665603ull;
      for (int64_t e : x)
        for (int b = 0; b < 8; ++b) {
          h ^= (static_cast<uint64_t>(e) >> (8 * b)) & 0xff;
          h *= 1099511628211ull;
        }
      return h;
    };
    std::stable_sort(others.begin(), others.end(),
                     [&](const KnobValues& a, const KnobValues& b) { return hash(a) < hash(b); });
    // The default's neighbours first — every variant that changes one knob — taken one knob after
    // another, so each knob is tried away from its default before any combination is: a sample of 12
    // of elementwise.cu's 72 variants on the H200 held no one-pass launch (EW_GRID_STRIDE=0) at all,
    // the one change PyTorch's own kernel suggests. Then the rest, in hash order.
    auto changed_knob = [&](const KnobValues& x) -> std::ptrdiff_t {
      std::ptrdiff_t at = -1;
      for (std::size_t k = 0; k < x.size(); ++k)
        if (x[k] != defaults[k]) {
          if (at >= 0) return -1;
          at = static_cast<std::ptrdiff_t>(k);
        }
      return at;
    };
    std::vector<std::vector<KnobValues>> by_knob(spec.knobs.size());
    std::vector<KnobValues> rest;
    for (auto& x : others) {
      auto k = changed_knob(x);
      (k >= 0 ? by_knob[static_cast<std::size_t>(k)] : rest).push_back(std::move(x));
    }
    others.clear();
    for (std::size_t round = 0;; ++round) {  // round r: each knob's r-th other value
      bool any = false;
      for (auto& values : by_knob)
        if (round < values.size()) {
          others.push_back(values[round]);
          any = true;
        }
      if (!any) break;
    }
    others.insert(others.end(), rest.begin(), rest.end());
    others.resize(max_variants - 1);
  }
  plan.variants.insert(plan.variants.end(), others.begin(), others.end());
  return plan;
}

std::string bake_knobs(const std::string& source, const KnobSpec& spec, const KnobValues& values) {
  // From the last knob to the first, so earlier offsets stay valid.
  std::vector<std::size_t> order(spec.knobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return spec.knobs[a].default_begin > spec.knobs[b].default_begin; });
  std::string out = source;
  for (std::size_t i : order) {
    const Knob& k = spec.knobs[i];
    out.replace(k.default_begin, k.default_end - k.default_begin, std::to_string(values.at(i)));
  }
  return out;
}

}  // namespace cutegen
