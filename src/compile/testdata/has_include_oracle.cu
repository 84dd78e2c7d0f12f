// Probes (issue 32): __has_include through aliases the source rules cannot see (a macro of the
// candidate's, CUDA's own _CCCL_HAS_INCLUDE) must not tell whether a host file exists. Landlock denies
// these files and the compile's preload makes a denied file look missing, so every probe is false; each
// says which it was if not. A control proves __has_include still sees an allowed header.
#include <cuda/std/cstdint>

#define PROBE_H __has_include
#if PROBE_H("/etc/passwd")
#error "probe: __has_include saw /etc/passwd"
#endif
#if PROBE_H("/proc/1/cmdline")
#error "probe: __has_include saw another process's /proc/1/cmdline"
#endif
#if PROBE_H("../../../../../../../../../../etc/hostname")
#error "probe: __has_include saw /etc/hostname from the staging directory"
#endif
#if _CCCL_HAS_INCLUDE("/etc/passwd")
#error "probe: _CCCL_HAS_INCLUDE saw /etc/passwd"
#endif
#if !PROBE_H(<cuda_runtime.h>)
#error "control: __has_include did not see an allowed header"
#endif

__global__ void nothing() {}
