#include "prompt/menu_items.h"

#include <gtest/gtest.h>

#include "prompt/prompt_builders.h"

using namespace cutegen;

TEST(MenuItems, EveryMenuNamesItsNumberedItemsInOrder) {
  auto lib = load_prompt_library();
  ASSERT_TRUE(lib.ok()) << lib.error().message;
  for (WorkloadClass c : all_workload_classes()) {
    auto items = menu_items(lib->menu(c));
    ASSERT_GE(items.size(), 7u) << to_string(c);
    for (std::size_t i = 0; i < items.size(); ++i)
      EXPECT_EQ(items[i].rfind(std::to_string(i + 1) + ". ", 0), 0u) << to_string(c) << ": " << items[i];
  }
  auto elementwise = menu_items(lib->menu(WorkloadClass::elementwise));
  EXPECT_EQ(elementwise[0], "1. Fuse everything into one pass");
  EXPECT_EQ(elementwise[1], "2. 128-bit vectorized access");
}

TEST(MenuItems, ConsecutiveStepsWalkDownTheMenu) {
  const std::vector<std::string> items = {"1", "2", "3", "4", "5"};
  EXPECT_EQ(items_for_step(items, 1, 3), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(items_for_step(items, 2, 3), (std::vector<std::string>{"4", "5", "1"}));
  EXPECT_EQ(items_for_step(items, 1, 7), (std::vector<std::string>{"1", "2", "3", "4", "5", "1", "2"}));
  EXPECT_TRUE(items_for_step({}, 1, 3).empty());
}

TEST(MenuItems, TheCandidateShareNamesItsItemAndItsSiblings) {
  auto lib = load_prompt_library();
  ASSERT_TRUE(lib.ok()) << lib.error().message;
  auto text = build_candidate_share(*lib, {.candidate = 2, .candidates = 3, .item = "2. 128-bit vectorized access",
                                           .siblings = {"1. Fuse everything into one pass", "3. Cache hints"}});
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(text->rfind("# Your part of this step (candidate 2 of 3)\n", 0), 0u) << *text;
  EXPECT_NE(text->find("Apply **2. 128-bit vectorized access**"), std::string::npos) << *text;
  EXPECT_NE(text->find("take **1. Fuse everything into one pass** and **3. Cache hints**: do not apply those"),
            std::string::npos)
      << *text;
}

// The optimize system message carries the index, each request the full text of one item: the two
// together must lose nothing of the menu, and the index must still say when each item helps and which
// profile signals point to it.
TEST(MenuItems, TheIndexHasALinePerItemAndTheItemsHoldTheWholeMenu) {
  auto lib = load_prompt_library();
  ASSERT_TRUE(lib.ok()) << lib.error().message;
  auto without_blank_lines = [](std::string s) {
    std::string out;
    for (std::size_t pos = 0; pos < s.size();) {
      std::size_t nl = s.find('\n', pos);
      std::string line = s.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      if (line.find_first_not_of(' ') != std::string::npos) out += line + "\n";
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
    return out;
  };
  for (WorkloadClass c : all_workload_classes()) {
    const std::string& text = lib->menu(c);
    const Menu menu = parse_menu(text);
    ASSERT_EQ(menu.items.size(), menu_items(text).size()) << to_string(c);
    std::string whole = menu.intro;
    for (const MenuItem& it : menu.items) whole += it.text;
    whole += menu.outro;
    EXPECT_EQ(without_blank_lines(whole), without_blank_lines(text)) << to_string(c);
    const std::string index = menu_index(menu);
    EXPECT_LT(index.size() * 3, text.size() * 2) << to_string(c) << ":\n" << index;
    for (const MenuItem& it : menu.items) {
      EXPECT_NE(index.find(it.index_line), std::string::npos) << it.name;
      EXPECT_NE(it.index_line.find(" When it helps: "), std::string::npos) << to_string(c) << ": " << it.index_line;
      EXPECT_TRUE(it.index_line.find(" Signals: `") != std::string::npos ||
                  it.index_line.find(" In a profile: ") != std::string::npos)
          << to_string(c) << ": " << it.index_line;
      EXPECT_EQ(it.index_line.find('\n'), std::string::npos) << it.index_line;
      // A request shows the item less the "When it helps" line the index says word for word, and only that.
      EXPECT_EQ(it.shown.find("When it helps:"), std::string::npos) << it.name;
      EXPECT_NE(it.shown.find("- In a profile:"), std::string::npos) << it.name;
      EXPECT_TRUE(it.text.starts_with(it.shown.substr(0, it.shown.find("   - ")))) << it.name;
      EXPECT_LT(it.text.size() - it.shown.size(), it.index_line.size()) << it.name;
    }
  }
  const Menu reduction = parse_menu(lib->menu(WorkloadClass::reduction));
  EXPECT_EQ(item_signals(reduction.items[2].text),
            (std::vector<std::string>{"memory-bound on DRAM", "latency-bound", "stalls dominated by long_scoreboard",
                                      "narrow global loads"}));
  EXPECT_EQ(reduction.items[0].index_line,
            "1. **Read the input once.** When it helps: the kernel reads each row two or three times (max, sum, "
            "normalise). Signals: `excess DRAM traffic`.");
}
