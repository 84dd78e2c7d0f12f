#include "prompt/menu_items.h"

#include <regex>

namespace cutegen {

std::vector<std::string> menu_items(std::string_view menu) {
  // An item's bold name may run over several lines of the file.
  static const std::regex item(R"((?:^|\n)(\d+)\. \*\*([^*]+?)\*\*)");
  static const std::regex space(R"(\s+)");
  std::vector<std::string> out;
  const std::string text(menu);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), item); it != std::sregex_iterator(); ++it) {
    std::string name = std::regex_replace((*it)[2].str(), space, " ");
    while (!name.empty() && (name.back() == '.' || name.back() == ' ')) name.pop_back();
    out.push_back((*it)[1].str() + ". " + name);
  }
  return out;
}

std::vector<std::string> items_for_step(const std::vector<std::string>& items, int step, int candidates) {
  std::vector<std::string> out;
  if (items.empty()) return out;
  const std::size_t first = static_cast<std::size_t>(std::max(step - 1, 0)) * static_cast<std::size_t>(candidates);
  for (int k = 0; k < candidates; ++k) out.push_back(items[(first + static_cast<std::size_t>(k)) % items.size()]);
  return out;
}

}  // namespace cutegen
