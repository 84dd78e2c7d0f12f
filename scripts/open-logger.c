/* A diagnosis aid for the runner's sandbox, never part of a judge run: preloaded into cutegen-runner
 * (CUTEGEN_RUNNER_DEBUG_PRELOAD), it writes to stderr every file open or exec that fails with EACCES or
 * EPERM, i.e. what Landlock refused. scripts/gpu-check's smoke stage builds and uses it when CUDA fails
 * inside the sandbox.  Build: cc -shared -fPIC -O2 -o open-logger.so open-logger.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void note(const char* call, const char* path, int err) {
  if (err != EACCES && err != EPERM) return;
  char line[512];
  int n = snprintf(line, sizeof line, "open-logger: %s(%s) -> %s\n", call, path ? path : "(null)", strerror(err));
  if (n > 0) (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

#define FORWARD_OPEN(name, ...)                                              \
  static int (*real)(__VA_ARGS__) = 0;                                       \
  if (!real) real = (int (*)(__VA_ARGS__))dlsym(RTLD_NEXT, name);

int open(const char* path, int flags, ...) {
  va_list ap; va_start(ap, flags); mode_t mode = (mode_t)va_arg(ap, int); va_end(ap);
  FORWARD_OPEN("open", const char*, int, mode_t)
  int fd = real(path, flags, mode);
  if (fd < 0) note("open", path, errno);
  return fd;
}
int open64(const char* path, int flags, ...) {
  va_list ap; va_start(ap, flags); mode_t mode = (mode_t)va_arg(ap, int); va_end(ap);
  FORWARD_OPEN("open64", const char*, int, mode_t)
  int fd = real(path, flags, mode);
  if (fd < 0) note("open64", path, errno);
  return fd;
}
int openat(int dir, const char* path, int flags, ...) {
  va_list ap; va_start(ap, flags); mode_t mode = (mode_t)va_arg(ap, int); va_end(ap);
  FORWARD_OPEN("openat", int, const char*, int, mode_t)
  int fd = real(dir, path, flags, mode);
  if (fd < 0) note("openat", path, errno);
  return fd;
}
int openat64(int dir, const char* path, int flags, ...) {
  va_list ap; va_start(ap, flags); mode_t mode = (mode_t)va_arg(ap, int); va_end(ap);
  FORWARD_OPEN("openat64", int, const char*, int, mode_t)
  int fd = real(dir, path, flags, mode);
  if (fd < 0) note("openat64", path, errno);
  return fd;
}
FILE* fopen(const char* path, const char* mode) {
  static FILE* (*real)(const char*, const char*) = 0;
  if (!real) real = (FILE* (*)(const char*, const char*))dlsym(RTLD_NEXT, "fopen");
  FILE* f = real(path, mode);
  if (!f) note("fopen", path, errno);
  return f;
}
FILE* fopen64(const char* path, const char* mode) {
  static FILE* (*real)(const char*, const char*) = 0;
  if (!real) real = (FILE* (*)(const char*, const char*))dlsym(RTLD_NEXT, "fopen64");
  FILE* f = real(path, mode);
  if (!f) note("fopen64", path, errno);
  return f;
}
int execve(const char* path, char* const argv[], char* const envp[]) {
  static int (*real)(const char*, char* const[], char* const[]) = 0;
  if (!real) real = (int (*)(const char*, char* const[], char* const[]))dlsym(RTLD_NEXT, "execve");
  int rc = real(path, argv, envp);
  note("execve", path, errno);
  return rc;
}
