#include "prompt/menu_items.h"

#include <algorithm>
#include <optional>
#include <regex>

namespace cutegen {
namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t nl = text.find('\n', pos);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return lines;
}

bool blank(std::string_view line) { return line.find_first_not_of(" \t\r\n") == std::string_view::npos; }

std::string collapse_space(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

void trim_trailing_blank_lines(std::string& s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (!s.empty()) s += '\n';
}

// Where the sub-item "- LABEL ..." of an item stands: lines [first, last] (its continuation lines are
// indented past the dash and are not another sub-item) and the column of its dash.
struct SubItemLines {
  std::size_t first = 0, last = 0, dash = 0;
};

std::optional<SubItemLines> find_sub_item(const std::vector<std::string_view>& lines, std::string_view label) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t at = lines[i].find("- " + std::string(label));
    if (at == std::string_view::npos || !blank(lines[i].substr(0, at))) continue;
    SubItemLines found{i, i, at};
    while (found.last + 1 < lines.size()) {
      std::string_view n = lines[found.last + 1];
      const std::size_t first = n.find_first_not_of(' ');
      if (first == std::string_view::npos || first <= at || n.substr(first, 2) == "- ") break;
      ++found.last;
    }
    return found;
  }
  return std::nullopt;
}

// The text of the sub-item "- LABEL ..." of an item, its continuation lines joined, or "".
std::string sub_item(std::string_view item_text, std::string_view label) {
  const auto lines = split_lines(item_text);
  const auto found = find_sub_item(lines, label);
  if (!found) return "";
  std::string out(lines[found->first].substr(found->dash + 2 + label.size()));
  for (std::size_t j = found->first + 1; j <= found->last; ++j) out += ' ' + std::string(lines[j]);
  return collapse_space(out);
}

// `item_text` without its sub-item "- LABEL ...", continuation lines included.
std::string without_sub_item(std::string_view item_text, std::string_view label) {
  const auto lines = split_lines(item_text);
  const auto found = find_sub_item(lines, label);
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (!found || i < found->first || i > found->last) out += lines[i];
  return out;
}

}  // namespace

Menu parse_menu(std::string_view text) {
  static const std::regex item_start(R"(^(\d+)\. \*\*)");
  // A name may hold a single `*` ("small M*N"), never two.
  static const std::regex item_name(R"(^(\d+)\. \*\*((?:[^*]|\*(?!\*))+?)\*\*)");
  Menu menu;
  enum { intro, item, outro } where = intro;
  for (std::string_view line : split_lines(text)) {
    const std::string l(line);
    if (where != outro && std::regex_search(l, item_start)) {
      menu.items.push_back({});
      where = item;
    } else if (where == item && !blank(line) && line.front() != ' ') {
      where = outro;
    }
    switch (where) {
      case intro: menu.intro += line; break;
      case item: menu.items.back().text += line; break;
      case outro: menu.outro += line; break;
    }
  }
  trim_trailing_blank_lines(menu.intro);
  trim_trailing_blank_lines(menu.outro);
  for (MenuItem& it : menu.items) {
    trim_trailing_blank_lines(it.text);
    // The bold name may run over several lines of the file.
    const std::string flat = collapse_space(it.text);
    std::smatch m;
    if (!std::regex_search(flat, m, item_name)) continue;
    std::string name = m[2].str();
    while (!name.empty() && (name.back() == '.' || name.back() == ' ')) name.pop_back();
    it.name = m[1].str() + ". " + name;
    it.index_line = m[1].str() + ". **" + name + ".**";
    it.shown = it.text;
    if (std::string when = sub_item(it.text, "When it helps:"); !when.empty()) {
      it.index_line += " When it helps: " + when;
      it.shown = without_sub_item(it.text, "When it helps:");  // the index line says it word for word
    }
    std::string signals;
    for (const std::string& s : item_signals(it.text)) signals += (signals.empty() ? "" : ", ") + ("`" + s + "`");
    if (!signals.empty()) {
      it.index_line += " Signals: " + signals + ".";
    } else if (std::string profile = sub_item(it.text, "In a profile:"); !profile.empty()) {
      it.index_line += " In a profile: " + profile;  // said in words, without a signal's name
    }
  }
  return menu;
}

std::string menu_index(const Menu& menu) {
  std::string out = menu.intro;
  out += "\n";
  for (const MenuItem& it : menu.items) out += it.index_line + "\n";
  if (!menu.outro.empty()) out += "\n" + menu.outro;
  return out;
}

std::vector<std::string> item_signals(std::string_view item_text) {
  const std::string profile = sub_item(item_text, "In a profile:");
  std::vector<std::string> out;
  for (std::size_t open = profile.find('`'); open != std::string::npos; open = profile.find('`', open)) {
    std::size_t close = profile.find('`', open + 1);
    if (close == std::string::npos) break;
    std::string quote = profile.substr(open + 1, close - open - 1);
    open = close + 1;
    // The signal's name, without the example numbers that follow it ("narrow global loads: 4.0 B ...").
    std::size_t cut = std::min(quote.find(':'), quote.find(" ..."));
    if (cut != std::string::npos) quote.erase(cut);
    while (!quote.empty() && quote.back() == ' ') quote.pop_back();
    // A metric (`dram__bytes`) is not a signal, nor a bare stall name (`barrier` in "stalls on
    // `wait`/`barrier`"), which reads as nothing on its own; the item's full text keeps both.
    if (quote.empty() || quote.find("__") != std::string::npos || quote.find_first_of(" -") == std::string::npos)
      continue;
    if (std::find(out.begin(), out.end(), quote) == out.end()) out.push_back(quote);
  }
  return out;
}

std::vector<std::string> menu_items(std::string_view menu) {
  std::vector<std::string> out;
  for (const MenuItem& it : parse_menu(menu).items)
    if (!it.name.empty()) out.push_back(it.name);
  return out;
}

std::vector<std::string> items_for_step(const std::vector<std::string>& items, int step, int candidates) {
  std::vector<std::string> out;
  if (items.empty()) return out;
  const std::size_t first = static_cast<std::size_t>(std::max(step - 1, 0)) * static_cast<std::size_t>(candidates);
  for (int k = 0; k < candidates; ++k) out.push_back(items[(first + static_cast<std::size_t>(k)) % items.size()]);
  return out;
}

const MenuItem* find_item(const Menu& menu, std::string_view name) {
  for (const MenuItem& it : menu.items)
    if (it.name == name) return &it;
  return nullptr;
}

}  // namespace cutegen
