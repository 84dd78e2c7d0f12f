"""No network for the worker once it imports problem files.

A problem file is Python the worker executes (`bench DIR` imports every file of a directory that may
have been downloaded). cutegen already starts the worker with an allow-listed environment (no API
keys) and a private HOME (src/common/child_env.cpp); this adds a seccomp filter that refuses sockets
other than AF_UNIX and AF_NETLINK (and io_uring, which can open sockets past the filter), so a file
cannot send anything anywhere or fetch code. `socket.socket(AF_INET)` then raises PermissionError.

Why here and not when cutegen starts the worker: installing a seccomp filter needs no_new_privs, and
with no_new_privs set before CUDA's first initialisation the driver could not run its setuid helper
(nvidia-modprobe) where the device files do not exist yet. The worker installs the filter itself just
before its first problem import, after `load` has set up the device, like the runner confines itself
after its CUDA context exists. Threads already running (torch's) get it too (TSYNC), and so does every
process the worker starts afterwards (the runner, torch.compile's compilers), which is what they need:
none of them uses the network. CUDA IPC, the runner link and torch.compile's workers use pipes and
AF_UNIX sockets.

CUTEGEN_WORKER_NETWORK=allow leaves the network open (a problem that really needs it, or a machine
where the filter cannot be installed); anything else but `deny` (the default) is an error.
"""
import ctypes
import errno
import os
import platform
import struct

from .errors import WorkerError

NETWORK_ENV = "CUTEGEN_WORKER_NETWORK"

_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1
_AF_UNIX, _AF_NETLINK = 1, 16

# BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6] (little-endian here)
_NR, _ARCH, _ARG0 = 0, 4, 16

# Per architecture: AUDIT_ARCH_*, seccomp(2), socket(2), io_uring_setup(2), and whether syscall numbers at
# or above 0x40000000 are another ABI (x32 on x86_64).
_ARCHES = {
    "x86_64": (0xC000003E, 317, 41, 425, True),
    "aarch64": (0xC00000B7, 277, 198, 425, False),
}


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def network_policy() -> str:
    value = os.environ.get(NETWORK_ENV, "deny")
    if value not in ("deny", "allow"):
        raise WorkerError(f"{NETWORK_ENV}={value!r}: use deny (the default) or allow")
    return value


def filter_program(machine: str) -> list:
    """The filter as (code, jt, jf, k) tuples: socket() of a domain other than AF_UNIX/AF_NETLINK and
    io_uring_setup() fail with EPERM; a system call of another ABI (32-bit, x32) kills the process (it
    would otherwise pass unchecked under other numbers); everything else is allowed."""
    if machine not in _ARCHES:
        raise WorkerError(f"the worker's network filter knows x86_64 and aarch64, not {machine}; "
                          f"set {NETWORK_ENV}=allow to import problem files with the network open")
    audit_arch, _, nr_socket, nr_io_uring_setup, has_x32 = _ARCHES[machine]
    deny = _RET_ERRNO | errno.EPERM
    # Each jump is written as the index it goes to; converted to BPF's relative offsets below.
    prog = [("ld", _ARCH), ("jeq", audit_arch, None, "kill"), ("ld", _NR)]
    if has_x32:
        prog.append(("jge", 0x40000000, "kill", None))
    prog += [("jeq", nr_io_uring_setup, "deny", None),
             ("jeq", nr_socket, None, "allow"),
             ("ld", _ARG0),
             ("jeq", _AF_UNIX, "allow", None),
             ("jeq", _AF_NETLINK, "allow", None),
             ("label", "deny"), ("ret", deny),
             ("label", "allow"), ("ret", _RET_ALLOW),
             ("label", "kill"), ("ret", _RET_KILL_PROCESS)]
    labels, code = {}, []
    for op in prog:
        if op[0] == "label":
            labels[op[1]] = len(code)
        else:
            code.append(op)
    out = []
    for i, op in enumerate(code):
        if op[0] == "ld":
            out.append((_LD_W_ABS, 0, 0, op[1]))
        elif op[0] == "ret":
            out.append((_RET_K, 0, 0, op[1]))
        else:
            rel = [0 if target is None else labels[target] - i - 1 for target in op[2:4]]
            out.append((_JEQ_K if op[0] == "jeq" else _JGE_K, rel[0], rel[1], op[1]))
    return out


def deny_network() -> None:
    """Installs the filter on every thread of this process and its future children. Irreversible."""
    machine = platform.machine()
    program = filter_program(machine)
    if struct.calcsize("P") != 8:
        raise WorkerError(f"the worker's network filter needs a 64-bit Python; set {NETWORK_ENV}=allow")
    nr_seccomp = _ARCHES[machine][1]
    filters = (_SockFilter * len(program))(*[_SockFilter(*ins) for ins in program])
    fprog = _SockFprog(len(program), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise WorkerError(f"cannot set no_new_privs for the network filter: {os.strerror(err)}; "
                          f"set {NETWORK_ENV}=allow to import problem files with the network open")
    rc = libc.syscall(ctypes.c_long(nr_seccomp), ctypes.c_long(_SECCOMP_SET_MODE_FILTER),
                      ctypes.c_long(_SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(fprog))
    if rc != 0:
        err = ctypes.get_errno()
        why = os.strerror(err) if rc < 0 else f"thread {rc} could not be synchronised"
        raise WorkerError(f"cannot install the worker's network filter (seccomp: {why}); "
                          f"set {NETWORK_ENV}=allow to import problem files with the network open")
