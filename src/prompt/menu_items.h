#pragma once
// The numbered items of an optimisation menu (prompts/menu_<class>.md): "1. Fuse everything into one
// pass", ... A step with several candidates (--candidates) gives each request its own item, so the
// loop needs the items by name; the menu file stays the one place they are written.
#include <string>
#include <string_view>
#include <vector>

namespace cutegen {

// Every line "N. **Name.** ..." of the menu, as "N. Name", in file order.
std::vector<std::string> menu_items(std::string_view menu);

// The items a step's candidates take: candidate k (0-based) of step s gets item ((s - 1) * n + k) mod
// the item count, so consecutive steps walk down the menu (its order is the one that paid off)
// instead of asking for the first items again. Empty when the menu has none.
std::vector<std::string> items_for_step(const std::vector<std::string>& items, int step, int candidates);

}  // namespace cutegen
