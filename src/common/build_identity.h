#pragma once
// Which build of cutegen is running. A verdict that cutegen's own checks produced (the compile stage's
// static checks) is only as good as the checks that made it: a cache entry written by another build
// must not be served, or an upgrade that closes a hole would keep passing what it now refuses.
#include <string>

namespace cutegen {

// "build-id:<hex>" from the running executable's GNU build-id note (the linker hashes the whole
// output, and CMake asks for it explicitly); "exe-sha256:<hex>" of /proc/self/exe for a binary
// linked without one. Computed once per process.
const std::string& this_build_identity();

}  // namespace cutegen
