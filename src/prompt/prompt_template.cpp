#include "prompt/prompt_template.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "common/fs.h"

namespace cutegen {
namespace {

bool valid_name(std::string_view name) {
  if (name.empty() || !std::islower(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

int line_of(std::string_view text, std::size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

std::string_view trim(std::string_view s) {
  std::size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += fmt::format("{}{{{{{}}}}}", i ? ", " : "", names[i]);
  return out;
}

}  // namespace

Result<PromptTemplate> PromptTemplate::parse(std::string_view text, std::string origin) {
  PromptTemplate t;
  t.origin_ = std::move(origin);
  auto fail = [&](const std::string& what) { return Error{fmt::format("prompt template {}: {}", t.origin_, what)}; };

  std::size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos || text.compare(start, 4, "<!--") != 0) {
    return fail("it must start with a <!-- ... --> header that documents each {{placeholder}} it uses");
  }
  std::size_t header_end = text.find("-->", start);
  if (header_end == std::string_view::npos) return fail("its <!-- header comment is never closed with -->");

  // Header: purpose lines, then "{{name}} description" lines with indented continuations.
  std::string_view header = text.substr(start + 4, header_end - start - 4);
  std::string* last_doc = nullptr;
  for (std::size_t pos = 0; pos <= header.size();) {
    std::size_t nl = std::min(header.find('\n', pos), header.size());
    std::string_view raw = header.substr(pos, nl - pos);
    std::string_view line = trim(raw);
    pos = nl + 1;
    if (line.empty()) continue;
    if (line.rfind("{{", 0) == 0) {
      std::size_t close = line.find("}}");
      std::string name(line.substr(2, close == std::string_view::npos ? 0 : close - 2));
      if (close == std::string_view::npos || !valid_name(name)) {
        return fail(fmt::format("header line \"{}\" does not start with a valid {{{{name}}}}", line));
      }
      std::string description(trim(line.substr(close + 2)));
      if (description.empty()) return fail(fmt::format("{{{{{}}}}} has no description in the header", name));
      if (t.documentation_.count(name)) return fail(fmt::format("{{{{{}}}}} is documented twice", name));
      last_doc = &(t.documentation_[name] = description);
    } else if (last_doc && (raw[0] == ' ' || raw[0] == '\t')) {
      *last_doc += " ";
      *last_doc += line;
    } else {
      if (last_doc) return fail(fmt::format("header line \"{}\" comes after the placeholder list", line));
      if (!t.purpose_.empty()) t.purpose_ += " ";
      t.purpose_ += line;
    }
  }

  std::size_t body_start = header_end + 3;
  if (text.compare(body_start, 1, "\n") == 0) ++body_start;
  else if (text.compare(body_start, 2, "\r\n") == 0) body_start += 2;
  std::string_view body = text.substr(body_start);

  std::set<std::string> seen;
  std::size_t pos = 0;
  while (pos < body.size()) {
    std::size_t open = body.find("{{", pos);
    if (open == std::string_view::npos) {
      t.pieces_.push_back({false, std::string(body.substr(pos))});
      break;
    }
    if (open > pos) t.pieces_.push_back({false, std::string(body.substr(pos, open - pos))});
    std::size_t close = body.find("}}", open + 2);
    std::size_t eol = body.find('\n', open);
    const int line = line_of(text, body_start + open);
    if (close == std::string_view::npos || close > eol) {
      return fail(fmt::format("line {}: \"{{{{\" is not closed by \"}}}}\" on the same line", line));
    }
    std::string name(body.substr(open + 2, close - open - 2));
    if (!valid_name(name)) {
      return fail(fmt::format("line {}: \"{{{{{}}}}}\" is not a placeholder name (lower case letters, digits and '_', "
                              "no spaces); templates cannot contain a literal \"{{{{\"",
                              line, name));
    }
    if (!t.documentation_.count(name)) {
      return fail(fmt::format("line {}: {{{{{}}}}} is used but not documented in the header", line, name));
    }
    if (seen.insert(name).second) t.placeholders_.push_back(name);
    t.pieces_.push_back({true, name});
    pos = close + 2;
  }
  std::vector<std::string> unused;
  for (const auto& [name, _] : t.documentation_)
    if (!seen.count(name)) unused.push_back(name);
  if (!unused.empty()) return fail(fmt::format("the header documents {} but the body never uses it", join(unused)));
  return t;
}

Result<PromptTemplate> PromptTemplate::load(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text.ok()) return text.error();
  return parse(*text, path.string());
}

Result<std::string> PromptTemplate::render(const PromptValues& values) const {
  std::vector<std::string> missing, unknown;
  for (const std::string& name : placeholders_)
    if (!values.count(name)) missing.push_back(name);
  for (const auto& [name, _] : values)
    if (!documentation_.count(name)) unknown.push_back(name);
  if (!missing.empty() || !unknown.empty()) {
    std::string msg = fmt::format("prompt template {}:", origin_);
    if (!missing.empty()) msg += fmt::format(" no value for {}", join(missing));
    if (!missing.empty() && !unknown.empty()) msg += ";";
    if (!unknown.empty()) msg += fmt::format(" {} given but the template has no such placeholder", join(unknown));
    return Error{msg};
  }
  std::string out;
  for (const Piece& p : pieces_) out += p.is_placeholder ? values.find(p.text)->second : p.text;
  return out;
}

}  // namespace cutegen
