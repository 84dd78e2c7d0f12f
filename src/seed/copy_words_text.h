#pragma once
// The device helper the vector-moving templates share (routes/common/copy_words.cu.in): a static CuTe slice moved
// as 16-byte words, so those templates need only <cute/tensor_impl.hpp>. Each fills {{COPY_WORDS}} with it.
namespace cutegen::seed {

inline constexpr const char* kCopyWordsText =
#include "seed/copy_words.inc"
    ;

}  // namespace cutegen::seed
