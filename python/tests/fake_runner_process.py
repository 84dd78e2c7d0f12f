"""A stand-in for cutegen-runner --serve that speaks its protocol without a GPU, misbehaving as told:
  python3 fake_runner_process.py MODE --reply-fd N
MODE: good | early (writes a reply before any command) | wrong_nonce | print | flood (a megabyte without
a line end) | die (SIGSEGV on the
first call) | hang (never answers a call) | sandbox (reports a trapped call and exits 97) | env
(answers the call with whether an API key is in its environment) | no_setup (dies before setup) |
workspace (its load reports a workspace size: 1000 + the number of scalars the load command carried) |
print_then_truncate (prints on stdout and stderr, then ftruncate(fd, 0) and lseek(fd, 0) on both, as a
candidate erasing a capture file would, and reopens each through /proc/self/fd to read it back, as it
would drain a pipe; the reply says what each returned) | flood_out (32 MiB on stdout
during the call, then the reply) | flood_forever (writes stdout without end, never replies) | print_at_exit
(a line left in stdio's buffer, flushed when the process exits) | flood_at_exit (1 MiB on stdout when told
to quit: more than a pipe holds) | fds (answers with its open descriptors: target and access mode) |
burn_cpu (the call uses 60 ms of CPU) | sleep (the call sleeps 60 ms)."""
import errno
import json
import os
import signal
import sys
import time

mode = sys.argv[1]
reply_fd = int(sys.argv[sys.argv.index("--reply-fd") + 1])


def reply(obj):
    os.write(reply_fd, (json.dumps(obj) + "\n").encode())


if mode == "no_setup":
    sys.exit(3)
reply({"setup": True})
if mode == "print_at_exit":
    sys.stdout.write("goodbye from the kernel\n")  # stdout is a pipe: buffered until exit
if mode == "early":
    reply({"nonce": "0000", "rc": 0, "event_ms": 0.0001})
for line in sys.stdin:
    cmd = json.loads(line)
    op, nonce = cmd["op"], cmd.get("nonce")
    if op == "quit":
        if mode == "flood_at_exit":
            os.write(1, b"z" * (1 << 20))  # blocks until the worker has read most of it
        sys.exit(0)
    if op == "ping":
        reply({"nonce": nonce, "pong": True})
    elif op == "load":
        # A kernel with a workspace in mode `workspace`: its size depends on the host scalars it was given.
        size = 1000 + len(cmd.get("scalars", [])) if mode == "workspace" else None
        reply({"nonce": nonce, "ready": True, "workspace_bytes": size})
    elif op == "call":
        if mode == "die":
            os.kill(os.getpid(), signal.SIGSEGV)
        if mode == "hang":
            time.sleep(3600)
        if mode == "sigsys":
            os.kill(os.getpid(), signal.SIGSYS)
        if mode == "sandbox":
            os.write(reply_fd, b"sandbox: socket (AF_INET)\n")
            os._exit(97)
        if mode == "flood":
            os.write(reply_fd, b"x" * (1 << 20))
        if mode == "print":
            print("hello from the kernel", flush=True)
        answer = {"nonce": "feed" if mode == "wrong_nonce" else nonce, "rc": 0, "event_ms": 0.5}
        if mode == "print_then_truncate":
            os.write(1, b"hello from the kernel\n")
            os.write(2, b"and on stderr\n")
            answer["erased"] = {}
            def read_back(fd):  # a pipe's read end, reopened: what the runner wrote, taken before the worker reads
                again = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK)
                try:
                    os.read(again, 1 << 16)
                finally:
                    os.close(again)
            for fd in (1, 2):
                for name, erase in (("ftruncate", lambda: os.ftruncate(fd, 0)),
                                    ("lseek", lambda: os.lseek(fd, 0, os.SEEK_SET)),
                                    ("read_back", lambda: read_back(fd))):
                    try:
                        erase()
                        answer["erased"][f"{name}({fd})"] = "ok"
                    except OSError as exc:
                        answer["erased"][f"{name}({fd})"] = errno.errorcode.get(exc.errno, str(exc.errno))
        if mode == "flood_out":
            chunk = b"y" * (1 << 16)
            for _ in range(512):
                os.write(1, chunk)
        if mode == "flood_forever":
            chunk = b"w" * (1 << 16)
            while True:
                os.write(1, chunk)
        if mode == "fds":
            answer["fds"] = {}
            for name in os.listdir("/proc/self/fd"):
                try:
                    target = os.readlink(f"/proc/self/fd/{name}")
                    with open(f"/proc/self/fdinfo/{name}") as info:
                        flags = int(next(line for line in info if line.startswith("flags:")).split()[1], 8)
                except (OSError, StopIteration):
                    continue
                answer["fds"][name] = [target, flags & os.O_ACCMODE]
        if mode == "burn_cpu":
            start = time.process_time()
            while time.process_time() - start < 0.06:
                pass
        if mode == "sleep":
            time.sleep(0.06)
        if mode == "env":
            answer["keys"] = sorted(k for k in os.environ if "KEY" in k)
            answer["home"] = os.environ.get("HOME")
        reply(answer)
