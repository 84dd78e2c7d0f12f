#pragma once
// The numbered items of an optimisation menu (prompts/menu_<class>.md): "1. Fuse everything into one
// pass", ... The menu file stays the one place they are written; this reads it three ways:
//   - by name: a step with several candidates (--candidates) gives each request its own item;
//   - as an index (menu_index): the optimize system message lists every item in one line (its name,
//     when it helps, the profile signals that point to it), so the eight steps of a run do not each
//     carry the whole menu;
//   - in full (MenuItem::shown): the optimize request shows the full text of the item its step comes
//     to in the menu's order (items_for_step), and a candidate's request the text of its own item --
//     less its "When it helps" line, which the index in the same conversation says word for word.
#include <string>
#include <string_view>
#include <vector>

namespace cutegen {

struct MenuItem {
  std::string name;        // "3. Every byte in flight: 16-byte copies, many stages"
  std::string text;        // the item as the menu writes it, its "When it helps" and "In a profile" lines included
  std::string index_line;  // "3. **Name.** When it helps: ... Signals: `a`, `b`."
  std::string shown;       // the text a request shows: `text` less the "When it helps" line its index line carries
};

struct Menu {
  std::string intro;  // the title and the paragraphs before the first item
  std::vector<MenuItem> items;
  std::string outro;  // paragraphs after the last item (e.g. when to stop)
};

// Items start at a line "N. **Name.** ..." (the bold name may run over several lines) and run until
// the next item or the first unindented line after them.
Menu parse_menu(std::string_view menu);

// The intro, one line per item, the outro: what the optimize system message carries.
std::string menu_index(const Menu& menu);

// The profile summary's signal names an item's "In a profile" line quotes (`memory-bound on DRAM`,
// `excess DRAM traffic`, ...), without the numbers and metric names around them.
std::vector<std::string> item_signals(std::string_view item_text);

// Every line "N. **Name.** ..." of the menu, as "N. Name", in file order.
std::vector<std::string> menu_items(std::string_view menu);

// The items a step's candidates take: candidate k (0-based) of step s gets item ((s - 1) * n + k) mod
// the item count, so consecutive steps walk down the menu (its order is the one that paid off)
// instead of asking for the first items again. Empty when the menu has none. With one candidate, the
// item whose full text the step's request shows.
std::vector<std::string> items_for_step(const std::vector<std::string>& items, int step, int candidates);

// The item of `menu` named `name` (as menu_items() spells it), or nullptr.
const MenuItem* find_item(const Menu& menu, std::string_view name);

}  // namespace cutegen
