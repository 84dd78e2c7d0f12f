#include "compile/entry_points.h"

#include <gtest/gtest.h>

#include "common/testdata/test_helpers.h"

namespace cutegen {
namespace {

using cutegen::testing::contains;

TEST(EntryPoints, EitherFormIsAccepted) {
  EXPECT_EQ(entry_form({.forward = true}).value(), EntryForm::plain);
  EXPECT_EQ(entry_form({.workspace_bytes = true, .forward_ws = true}).value(), EntryForm::workspace);
}

TEST(EntryPoints, HalfAWorkspaceFormNamesWhatIsMissing) {
  auto size_only = entry_form({.workspace_bytes = true});
  ASSERT_FALSE(size_only);
  EXPECT_TRUE(contains(size_only.error().message, "defines cutegen_workspace_bytes but not cutegen_forward_ws"))
      << size_only.error().message;
  auto call_only = entry_form({.forward_ws = true});
  ASSERT_FALSE(call_only);
  EXPECT_TRUE(contains(call_only.error().message, "defines cutegen_forward_ws but not cutegen_workspace_bytes"))
      << call_only.error().message;
}

TEST(EntryPoints, BothFormsAtOnceAreAmbiguous) {
  auto both = entry_form({.forward = true, .workspace_bytes = true, .forward_ws = true});
  ASSERT_FALSE(both);
  EXPECT_TRUE(contains(both.error().message, "defines both cutegen_forward and cutegen_forward_ws"))
      << both.error().message;
  EXPECT_FALSE(entry_form({.forward = true, .workspace_bytes = true}));
}

TEST(EntryPoints, NoneGivesBothSignatures) {
  auto none = entry_form({});
  ASSERT_FALSE(none);
  EXPECT_TRUE(contains(none.error().message, "does not define cutegen_forward")) << none.error().message;
  EXPECT_TRUE(contains(none.error().message, "size_t cutegen_workspace_bytes(")) << none.error().message;
  EXPECT_EQ(none.error().message.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace cutegen
