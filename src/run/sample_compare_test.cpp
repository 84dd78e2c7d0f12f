#include "run/sample_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace cutegen;

namespace {
template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v) {
  std::vector<unsigned char> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
}  // namespace

TEST(SampleCompare, DecodesEveryContractDtype) {
  EXPECT_DOUBLE_EQ(element_as_double(bytes_of<float>({1.5f}), DType::float32, 0), 1.5);
  EXPECT_DOUBLE_EQ(element_as_double(bytes_of<double>({-2.25}), DType::float64, 0), -2.25);
  EXPECT_DOUBLE_EQ(element_as_double(bytes_of<uint16_t>({0x3e00}), DType::float16, 0), 1.5);    // fp16 1.5
  EXPECT_DOUBLE_EQ(element_as_double(bytes_of<uint16_t>({0xc000}), DType::float16, 0), -2.0);   // fp16 -2
  EXPECT_DOUBLE_EQ(element_as_double(bytes_of<uint16_t>({0x0001}), DType::float16, 0), std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isinf(element_as_double(bytes_of<uint16_t>({0x7c00}), DType::float16, 0)));
  EXPECT_DOUBLE_EQ(element_as_double(bytes_of<uint16_t>({0x3fc0}), DType::bfloat16, 0), 1.5);   // bf16 1.5
  EXPECT_DOUBLE_EQ(element_as_double(bytes_of<int64_t>({-7}), DType::int64, 0), -7);
  EXPECT_DOUBLE_EQ(element_as_double(bytes_of<int8_t>({-3}), DType::int8, 0), -3);
  EXPECT_DOUBLE_EQ(element_as_double(bytes_of<uint8_t>({1}), DType::boolean, 0), 1);
}

TEST(SampleCompare, RelativeL2SeparatesRecomputedFromStaleResults) {
  auto b = bytes_of<float>({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(compare_samples(b, b, DType::float32).rel_l2, 0);
  auto close = bytes_of<float>({1, 2, 3, 4.0001f});
  EXPECT_LT(compare_samples(close, b, DType::float32).rel_l2, 1e-4);
  auto stale = bytes_of<float>({4, 1, 0, 2});
  EXPECT_GT(compare_samples(stale, b, DType::float32).rel_l2, 0.5);
  auto unwritten = bytes_of<float>({NAN, 2, 3, 4});
  EXPECT_EQ(compare_samples(unwritten, b, DType::float32).nan_in_a, 1u);
  auto zeros = bytes_of<float>({0, 0});
  EXPECT_DOUBLE_EQ(compare_samples(zeros, zeros, DType::float32).rel_l2, 0);
  EXPECT_TRUE(std::isinf(compare_samples(bytes_of<float>({1, 0}), zeros, DType::float32).rel_l2));
}
