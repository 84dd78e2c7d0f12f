#include "run/tensor_ref.h"

#include <gtest/gtest.h>


using namespace cutegen;

namespace {
// 64 bytes 0..63, base64-encoded (as the worker sends a cudaIpcMemHandle_t).
const char* kHandle64 =
    "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw==";
}  // namespace

TEST(TensorRef, ParsesAnIpcTensor) {
  auto j = nlohmann::json::parse(std::string(R"({"kind":"tensor","dtype":"bfloat16","shape":[2,3],"stride":[3,1],)") +
                                 R"("nbytes":12,"offset":256,"ipc_handle":")" + kHandle64 + "\"}");
  auto t = parse_tensor_ref(j);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->dtype, DType::bfloat16);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t->offset, 256u);
  ASSERT_TRUE(t->ipc_handle.has_value());
  EXPECT_EQ((*t->ipc_handle)[0], 0);
  EXPECT_EQ((*t->ipc_handle)[63], 63);
}

TEST(TensorRef, ParsesHostScalars) {
  auto f = parse_tensor_ref(nlohmann::json::parse(R"({"kind":"scalar","dtype":"float64","value":0.5})"));
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->is_scalar);
  EXPECT_DOUBLE_EQ(f->scalar_f, 0.5);
  auto b = parse_tensor_ref(nlohmann::json::parse(R"({"kind":"scalar","dtype":"bool","value":true})"));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->scalar_i, 1);
  EXPECT_FALSE(parse_tensor_ref(nlohmann::json::parse(R"({"kind":"scalar","dtype":"float32","value":1})")).ok());
}

TEST(TensorRef, RejectsWhatTheRunnerCannotUse) {
  auto bad_dtype = parse_tensor_ref(nlohmann::json::parse(R"({"dtype":"complex64","shape":[1],"stride":[1],"data_ptr":1})"));
  ASSERT_FALSE(bad_dtype.ok());
  EXPECT_NE(bad_dtype.error().message.find("complex64"), std::string::npos);
  auto rank9 = parse_tensor_ref(nlohmann::json::parse(
      R"({"dtype":"float32","shape":[1,1,1,1,1,1,1,1,1],"stride":[1,1,1,1,1,1,1,1,1],"data_ptr":1})"));
  EXPECT_FALSE(rank9.ok());
  auto no_buffer = parse_tensor_ref(nlohmann::json::parse(R"({"dtype":"float32","shape":[1],"stride":[1]})"));
  EXPECT_FALSE(no_buffer.ok());
  auto short_handle = parse_tensor_ref(nlohmann::json::parse(R"({"dtype":"float32","shape":[1],"stride":[1],"ipc_handle":"AAEC"})"));
  ASSERT_FALSE(short_handle.ok());
  EXPECT_NE(short_handle.error().message.find("64"), std::string::npos);
}
