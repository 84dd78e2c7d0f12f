#include "agent/profile_policy.h"

#include <gtest/gtest.h>

using namespace cutegen;

TEST(ProfilePolicy, AutoDelaysStructuralWorkloadsAndNotElementwise) {
  auto p = *ProfilePolicy::parse("auto");
  EXPECT_TRUE(p.should_profile("elementwise", 1, 0));
  EXPECT_FALSE(p.should_profile("reduction", 2, 0));
  EXPECT_TRUE(p.should_profile("reduction", 3, 0));
  EXPECT_FALSE(p.should_profile("gemm", 3, 0));
  EXPECT_TRUE(p.should_profile("gemm", 4, 0));
  EXPECT_TRUE(p.should_profile("gemm", 2, ProfilePolicy::kPlateauSteps));  // a plateau ends the structural phase
  EXPECT_FALSE(p.should_profile("attention", 1, 1));
  EXPECT_NE(p.explain("gemm", 1, 0).find("not yet"), std::string::npos);
  EXPECT_NE(p.explain("gemm", 2, 2).find("plateau"), std::string::npos);
}

TEST(ProfilePolicy, FixedModesAndOverrides) {
  EXPECT_TRUE(ProfilePolicy::parse("always")->should_profile("gemm", 1, 0));
  EXPECT_FALSE(ProfilePolicy::parse("never")->should_profile("elementwise", 9, 9));
  auto from3 = *ProfilePolicy::parse("3");
  EXPECT_FALSE(from3.should_profile("elementwise", 2, 5));
  EXPECT_TRUE(from3.should_profile("gemm", 3, 0));
  EXPECT_EQ(from3.to_string(), "3");
  auto p = *ProfilePolicy::parse("auto");
  p.set_first_step("gemm", 2);
  EXPECT_TRUE(p.should_profile("gemm", 2, 0));
  EXPECT_EQ(p.first_step("unknown_class"), p.first_step("other"));
}

TEST(ProfilePolicy, BadValuesAreRejectedWithTheChoices) {
  for (const char* bad : {"0", "-1", "sometimes", "2x", ""}) {
    auto p = ProfilePolicy::parse(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_NE(p.error().message.find("auto, always, never"), std::string::npos);
  }
}
