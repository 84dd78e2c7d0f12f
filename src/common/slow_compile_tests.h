#pragma once
// Two tiers of tests (docs/testing.md). CI runs the default tier on two CPU cores inside its 20-minute
// budget: every unit test, the static attacks' nvcc builds (the proof of each static check) and one
// real build per kind of check. The slow tier adds the nvcc builds whose verdict is proven again where
// kernels are judged (scripts/gpu-check compiles every manifest kernel and seed before judging it):
// the runtime attacks, the honest kernels, the seed templates, the cache over a real build.
// CUTEGEN_SLOW_COMPILE_TESTS=1 scripts/test runs both tiers.
#include <cstdlib>
#include <string_view>

#include <gtest/gtest.h>

namespace cutegen::testing {

inline bool slow_compile_tests_enabled() {
  const char* value = std::getenv("CUTEGEN_SLOW_COMPILE_TESTS");
  return value != nullptr && std::string_view(value) == "1";
}

}  // namespace cutegen::testing

// First line of a slow-tier test's body: skips it, saying what it builds and how to run it.
#define CUTEGEN_SLOW_COMPILE_TEST(what)                                                                 \
  do {                                                                                                  \
    if (!::cutegen::testing::slow_compile_tests_enabled())                                             \
      GTEST_SKIP() << "slow tier (" << (what) << "): CUTEGEN_SLOW_COMPILE_TESTS=1 builds it here";   \
  } while (0)
