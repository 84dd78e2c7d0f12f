#pragma once
// The kernel templates' one substitution: every {{KEY}} becomes `value`.
#include <string>

namespace cutegen::seed {

inline void replace_placeholder(std::string& text, const std::string& key, const std::string& value) {
  const std::string placeholder = "{{" + key + "}}";
  for (auto pos = text.find(placeholder); pos != std::string::npos; pos = text.find(placeholder, pos + value.size()))
    text.replace(pos, placeholder.size(), value);
}

}  // namespace cutegen::seed
