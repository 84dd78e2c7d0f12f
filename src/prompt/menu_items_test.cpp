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
