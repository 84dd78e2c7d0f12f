#pragma once
#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace cutegen {

// A C++ symbol as a person reads it ("relu_example::relu_rest(const float*, float*, long, long)"),
// clipped to `max_chars`; other names unchanged.
inline std::string demangle(const std::string& name, std::size_t max_chars = 120) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !d) return name;
  std::string s = d.get();
  return s.size() > max_chars ? s.substr(0, max_chars) + "..." : s;
}

}  // namespace cutegen
