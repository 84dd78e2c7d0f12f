/* Preloaded into nvcc and every program it starts (cutegen-sandbox --preload; NvccCompiler's policy).
 *
 * Landlock answers an open of an existing file outside the compile's read list with EACCES and one of a
 * file that does not exist with ENOENT, and GCC's preprocessor tells the two apart: __has_include is
 * false for a missing file but a fatal "Permission denied" for a denied one. Through an alias the source
 * rules cannot see (`#define H __has_include`, CUDA's own _CCCL_HAS_INCLUDE), `#if H("/home/u/.ssh/id_ed25519")`
 * told a candidate whether any host file exists. Here every open that fails with EACCES fails with
 * ENOENT instead: to the compile, a file it may not read does not exist, whatever names it.
 *
 * The open family is interposed (GCC's cpplib calls open(), ld's BFD fopen()); the calls are made
 * directly (openat) or through the next definition (fopen), and only the error number changes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static int hide_denied(int result) {
  if (result < 0 && errno == EACCES) errno = ENOENT;
  return result;
}

static int open_at(int dirfd, const char* path, int flags, mode_t mode) {
  return hide_denied((int)syscall(SYS_openat, dirfd, path, flags, mode));
}

static int wants_mode(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

#define MODE_ARG(flags, mode)                 \
  mode_t mode = 0;                            \
  if (wants_mode(flags)) {                    \
    va_list ap;                               \
    va_start(ap, flags);                      \
    mode = (mode_t)va_arg(ap, int);           \
    va_end(ap);                               \
  }

int open(const char* path, int flags, ...) {
  MODE_ARG(flags, mode)
  return open_at(AT_FDCWD, path, flags, mode);
}
int open64(const char* path, int flags, ...) {
  MODE_ARG(flags, mode)
  return open_at(AT_FDCWD, path, flags, mode);
}
int openat(int dirfd, const char* path, int flags, ...) {
  MODE_ARG(flags, mode)
  return open_at(dirfd, path, flags, mode);
}
int openat64(int dirfd, const char* path, int flags, ...) {
  MODE_ARG(flags, mode)
  return open_at(dirfd, path, flags, mode);
}
/* _FORTIFY_SOURCE's checked variants (no mode: they are called only without O_CREAT). */
int __open_2(const char* path, int flags) { return open_at(AT_FDCWD, path, flags, 0); }
int __open64_2(const char* path, int flags) { return open_at(AT_FDCWD, path, flags, 0); }
int __openat_2(int dirfd, const char* path, int flags) { return open_at(dirfd, path, flags, 0); }
int __openat64_2(int dirfd, const char* path, int flags) { return open_at(dirfd, path, flags, 0); }

typedef FILE* (*fopen_fn)(const char*, const char*);

/* The next definition of `name` (glibc's), looked up once; threads may race to store the same value. */
static FILE* call_next(fopen_fn* slot, const char* name, const char* path, const char* mode) {
  fopen_fn next = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (!next) {
    next = (fopen_fn)dlsym(RTLD_NEXT, name);
    if (!next) {
      errno = ENOSYS;
      return NULL;
    }
    __atomic_store_n(slot, next, __ATOMIC_RELEASE);
  }
  FILE* f = next(path, mode);
  if (!f && errno == EACCES) errno = ENOENT;
  return f;
}

FILE* fopen(const char* path, const char* mode) {
  static fopen_fn next;
  return call_next(&next, "fopen", path, mode);
}
FILE* fopen64(const char* path, const char* mode) {
  static fopen_fn next;
  return call_next(&next, "fopen64", path, mode);
}
