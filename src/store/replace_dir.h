#pragma once
// Swapping a whole directory in one step, for best/: a reader (a user copying best/, a script
// loading best/kernel.so) sees the previous complete directory or the next one, never a mix.
//
// rename(2) cannot replace a non-empty directory, so the complete new one is exchanged with the old
// by renameat2(RENAME_EXCHANGE) and the old one, now under the temporary name, is removed. A `best ->
// best-N` symlink switched by rename would also be atomic, but it changes what users find (best/ a
// link, best-N/ directories to collect) and cannot replace the real best/ of an existing run.
// Filesystems without RENAME_EXCHANGE (NFS, some FUSE) get two renames, with a moment in which the
// target is absent (never half written); the result says so, so the caller can tell the user.
#include <filesystem>

#include "common/result.h"

namespace cutegen {

struct ReplacedDir {
  bool in_one_step = true;  // false: the two-rename fallback was used
};

// `complete` and `target` must be on one filesystem (siblings, in practice). `complete` is consumed.
Result<ReplacedDir> replace_dir(const std::filesystem::path& complete, const std::filesystem::path& target);

// Leftovers of a replacement interrupted by a crash (`<target>.tmp-*`, `<target>.old-*`), removed
// before the next one. Only safe while holding the run directory's lock.
Status remove_replace_leftovers(const std::filesystem::path& target);

}  // namespace cutegen
