#pragma once
// The kernel templates' substitution: every {{KEY}} becomes `value`.
#include <cstdint>
#include <string>

namespace cutegen::seed {

inline void replace_placeholder(std::string& text, const std::string& key, const std::string& value) {
  const std::string placeholder = "{{" + key + "}}";
  for (auto pos = text.find(placeholder); pos != std::string::npos; pos = text.find(placeholder, pos + value.size()))
    text.replace(pos, placeholder.size(), value);
}

// The (D, H, W) geometry of the window templates (pooling, depthwise convolution): IN_D, OUT_H, K_W, S_D,
// P_H and D_W style placeholders, one per axis of each array.
inline void replace_window_placeholders(std::string& text, const int64_t in[3], const int64_t out[3],
                                        const int64_t kernel[3], const int64_t stride[3], const int64_t padding[3],
                                        const int64_t dilation[3]) {
  const char* axis[3] = {"D", "H", "W"};
  for (int i = 0; i < 3; ++i) {
    const std::string a = axis[i];
    replace_placeholder(text, "IN_" + a, std::to_string(in[i]));
    replace_placeholder(text, "OUT_" + a, std::to_string(out[i]));
    replace_placeholder(text, "K_" + a, std::to_string(kernel[i]));
    replace_placeholder(text, "S_" + a, std::to_string(stride[i]));
    replace_placeholder(text, "P_" + a, std::to_string(padding[i]));
    replace_placeholder(text, "D_" + a, std::to_string(dilation[i]));
  }
}

}  // namespace cutegen::seed
