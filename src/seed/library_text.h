#pragma once
// Seeds that are library kernels themselves (library_gemm.cpp, library_softmax.cpp) take the example file
// as it is and set a constant or two from the graph by replacing their exact lines.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/result.h"

namespace cutegen::seed {

// `line` of the library file `library_file` replaced by `with`; an Error naming both files when the line is
// not there exactly once (the library file changed under the seed in `seed_file`: one must follow the other).
inline Status replace_library_line(std::string& text, const std::string& line, const std::string& with,
                                   const char* library_file, const char* seed_file) {
  const auto at = text.find(line);
  if (at == std::string::npos || text.find(line, at + 1) != std::string::npos)
    return Error{fmt::format("{} does not have the line `{}` exactly once; the seed ({}) sets it from the graph: "
                             "update one to match the other",
                             library_file, line, seed_file)};
  text.replace(at, line.size(), with);
  return ok_status();
}

// Several lines of one library file, each replaced as replace_library_line does; the first missing one is
// the Error.
struct LibraryLine {
  std::string line, with;
};
inline Status replace_library_lines(std::string& text, const std::vector<LibraryLine>& lines,
                                    const char* library_file, const char* seed_file) {
  for (const LibraryLine& l : lines)
    if (auto s = replace_library_line(text, l.line, l.with, library_file, seed_file); !s) return s;
  return ok_status();
}

}  // namespace cutegen::seed
