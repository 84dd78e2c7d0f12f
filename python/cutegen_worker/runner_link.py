"""The worker's end of a runner session: start cutegen-runner, send it commands, time and read its
replies, and see how it ended (docs/judge.md, "The runner session").

Commands are JSON lines on the runner's stdin; replies are JSON lines on a pipe of their own, apart
from its stdout and stderr, where a candidate may print. Everything the runner says is a hint from a
hostile process; what this module establishes itself is:
* the time from writing a command to reading its reply (`time.perf_counter_ns`, this process);
* that a reply answers the command it follows: each command carries a fresh random nonce the reply
  must echo, and nothing may arrive before a command is sent (`tampering` otherwise);
* how the process ended: `waitpid`, a timeout this module enforced, or the sandbox's one-line report
  of a trapped system call (`forbidden_call`; the runner exits 97 after it);
* what was printed: the runner's stdout and stderr are connected Unix stream sockets whose other ends
  only this process holds, drained as bytes arrive (while a reply is awaited, when asked, at the end)
  and counted. A byte sent is queued at this process's end, out of the sender's reach: truncating or
  seeking fd 1 or 2 (which emptied the capture files used before) fails, and so does reopening it
  through /proc/self/fd for reading (which a pipe allows: the runner could read back what it wrote
  before this process did) -- attacks/printed_output/print_then_truncate.cu;
* how much CPU time the runner's threads used inside each call, from the kernel's accounting
  (`runner_cpu_ns`): host computing shows there (docs/judge.md, "Host computing").
"""
import json
import os
import secrets
import select
import signal
import socket
import subprocess
import time
import weakref
from dataclasses import dataclass

from . import cpu_time, cpu_wait

SANDBOX_EXIT = 97  # the runner's sandbox trapped a forbidden system call (src/sandbox)
READY_TIMEOUT_S = 120.0  # context creation, IPC mapping and the library's load
MAX_REPLY_BYTES = 1 << 16  # a reply is one short JSON line; more is a flood meant to exhaust the worker
# Pings and calls are waited for by polling the reply pipe for this long before sleeping in select():
# a call's time is its round trip minus an empty call's, and a worker woken from a long sleep pays
# the CPU's wake-up latency (deeper idle states the longer it slept) inside the round trip where a
# short ping does not — on an H200 host that made a 0.56 ms kernel read 0.8-0.9 ms. The runner spins
# on its side too (src/run/command_reader.h). A busy core for the length of one call, at most.
REPLY_SPIN_S = 0.2
# What of the printed output is kept: its byte count, and this many first bytes for the report. A flood
# costs the worker a counter, never memory.
PRINTED_HEAD_BYTES = 200
# At most this much is read from the output streams in one pass, so a runner that prints as fast as the
# worker reads cannot keep it from the reply pipe or its deadline; a stream left full only blocks the
# runner's next write until the next pass (every pass of a reply's wait, and every printed()).
DRAIN_PASS_BYTES = 1 << 20
DRAIN_CHUNK = 1 << 16


@dataclass
class RunnerEnd:
    exit_code: int = None
    signal: int = None
    timed_out: bool = False

    def describe(self) -> str:
        if self.timed_out:
            return "killed after its time limit"
        if self.signal:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = f"signal {self.signal}"
            return f"killed by {name}"
        return f"exit code {self.exit_code}"


class LinkError(Exception):
    """The session cannot go on: `kind` is timeout, died, tampering or forbidden_call."""

    def __init__(self, kind: str, message: str, end: RunnerEnd = None):
        super().__init__(message)
        self.kind, self.message, self.end = kind, message, end


@dataclass
class Exchange:
    reply: dict
    wall_ns: int  # from writing the command to reading the whole reply line
    # CPU time of all the runner's threads from just before the command to just after the reply (the
    # kernel's accounting, cpu_time.py); None where it cannot be read.
    runner_cpu_ns: int = None


class PrintedOutput:
    """What arrived on the runner's stdout and stderr: a byte count and the first bytes."""

    def __init__(self):
        self.total = 0
        self.head = b""

    def add(self, data: bytes):
        self.total += len(data)
        if len(self.head) < PRINTED_HEAD_BYTES:
            self.head += data[:PRINTED_HEAD_BYTES - len(self.head)]

    def describe(self) -> str:
        if not self.total:
            return ""
        first = self.head.decode("utf-8", "replace").lstrip("\n").split("\n", 1)[0]
        return (f"the kernel printed {self.total} bytes (first line: \"{first[:120]}\"): remove printf and other "
                "output")


_RUNNERS = weakref.WeakSet()  # every SubprocessRunner made (live_runners)


def live_runners() -> int:
    """Runner processes of this worker still running: their CUDA contexts and buffers are the judge's own
    device memory (memory.others_hold_bytes)."""
    return sum(1 for runner in list(_RUNNERS) if runner.proc.poll() is None)


class SubprocessRunner:
    """cutegen-runner --serve SESSION --reply-fd N, in a session of its own (killed as a group)."""

    def __init__(self, argv: list, private_dir: str, env: dict, call_timeout_s: float):
        self.private_dir = private_dir
        self.call_timeout_s = call_timeout_s
        self._buffer = b""
        self.violation = None
        self.output = PrintedOutput()
        # stdout and stderr are sockets, neither files nor pipes: what the runner sends is queued at the end
        # only this process holds (sockets are close-on-exec, and Popen closes every other descriptor in
        # the child), where nothing the runner does reaches it -- a file can be truncated, and a pipe's
        # read end reopened through /proc/self/fd/1, which Landlock cannot refuse.
        out_r, out_w = _output_channel()
        err_r, err_w = _output_channel()
        self._reply_r, reply_w = os.pipe()
        self._outputs = [out_r, err_r]  # our ends still open (one is closed at its end of file)
        try:
            self.proc = subprocess.Popen(
                list(argv) + ["--reply-fd", str(reply_w)], stdin=subprocess.PIPE, stdout=out_w, stderr=err_w,
                pass_fds=(reply_w,), env=env, cwd=private_dir, start_new_session=True, close_fds=True)
        except BaseException:
            for fd in (out_r, err_r, self._reply_r):
                os.close(fd)
            raise
        finally:
            for fd in (reply_w, out_w, err_w):
                os.close(fd)
        self._stdin = self.proc.stdin.fileno()
        self._quit_sent = False
        _RUNNERS.add(self)

    @property
    def pid(self) -> int:
        """The runner's process: one of the judge's own on the GPU (gpu_share.py)."""
        return self.proc.pid

    # ---- lifecycle ----------------------------------------------------------------------------
    def start(self) -> dict:
        """The runner's first line, once its CUDA context and the shared buffers are set up and before
        anything of the candidate is loaded: {"setup": true} or {"setup": false, "message": ...}."""
        return self._read_reply(time.monotonic() + READY_TIMEOUT_S, expect_nonce=None)

    def ask_to_quit(self):
        """Sends the quit command and returns at once; close() then waits. A screening group asks all its runners
        first, so that they exit (their CUDA contexts torn down) side by side."""
        if self._quit_sent or self.proc.poll() is not None:
            return
        self._quit_sent = True
        try:
            os.write(self._stdin, b'{"op": "quit"}\n')
        except OSError:
            pass

    def close(self) -> RunnerEnd:
        """Asks the runner to quit, waits for it (killing the group if it lingers) and reports its end."""
        if self.proc.poll() is None:
            self.ask_to_quit()
            # Draining while it exits: a runner blocked on a full output stream would otherwise never read
            # the quit, and its last words (stdio buffers flushed at exit) are evidence too.
            if not self._wait_draining(time.monotonic() + 10):
                self._kill()
                self.proc.wait()
                self._drain_to_end()
                return self._end(timed_out=True)
        self._drain_to_end()
        return self._end()

    def kill(self) -> RunnerEnd:
        self._kill()
        self.proc.wait()
        self._drain_to_end()
        return self._end()

    def _kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _end(self, timed_out=False) -> RunnerEnd:
        code = self.proc.returncode
        if timed_out:
            return RunnerEnd(timed_out=True)
        if code is not None and code < 0:
            return RunnerEnd(signal=-code)
        return RunnerEnd(exit_code=code)

    def __del__(self):
        try:
            if self.proc.poll() is None:
                self._kill()
                self.proc.wait(timeout=5)
            for fd in [self._reply_r] + self._outputs:
                os.close(fd)
        except Exception:
            pass

    def wait_ns(self):
        """How long both ends of the link -- this thread and the runner's main thread, which answers
        the calls -- have waited for a CPU so far (cpu_wait.py); None once the runner has exited or
        where the kernel does not count it."""
        own, runner = cpu_wait.own_thread_ns(), cpu_wait.process_ns(self.proc.pid)
        return None if own is None or runner is None else own + runner

    # ---- commands -----------------------------------------------------------------------------
    def ping(self, sweep: str = "", repeat: int = 1) -> Exchange:
        """The harness's empty call; with a `sweep` ("own": the runner writes its own 128 MiB buffer,
        "footprint": it reads the call's inputs and writes its outputs) the GPU's caches are left as
        cold as after a call that streams through its tensors; `repeat` runs the sweep that many times
        (a long ping: what the runner's wait for the GPU costs in CPU, cpu_time.py)."""
        command = {"op": "ping", "sweep": sweep} if sweep else {"op": "ping"}
        if repeat != 1:
            command["repeat"] = repeat
        return self._request(command, spin_s=REPLY_SPIN_S)

    def call(self, output_set: int, scalars: list) -> Exchange:
        return self._request({"op": "call", "set": output_set, "scalars": scalars}, spin_s=REPLY_SPIN_S)

    def load(self, scalars: list) -> Exchange:
        """The runner sandboxes itself and loads the candidate: {"ready": true, "workspace_bytes": null or
        the size a kernel with a workspace asked for, given these host scalars} or a failure."""
        return self._request({"op": "load", "scalars": scalars}, READY_TIMEOUT_S)

    def _request(self, command: dict, timeout_s: float = None, spin_s: float = 0.0) -> Exchange:
        self._refuse_unsolicited()
        nonce = secrets.token_hex(8)
        line = (json.dumps(dict(command, nonce=nonce)) + "\n").encode()
        # The runner's CPU time is read just outside the wall clock's window, so what the two see is the
        # same call: the runner's own code (parsing, replying, waiting) and the candidate's host code.
        cpu0 = cpu_time.process_cpu_ns(self.proc.pid)
        t0 = time.perf_counter_ns()
        try:
            os.write(self._stdin, line)
        except OSError:
            raise self._died("while a command was being sent")
        reply = self._read_reply(time.monotonic() + (timeout_s or self.call_timeout_s), expect_nonce=nonce, spin_s=spin_s)
        t1 = time.perf_counter_ns()
        cpu1 = cpu_time.process_cpu_ns(self.proc.pid)
        return Exchange(reply=reply, wall_ns=t1 - t0,
                        runner_cpu_ns=None if cpu0 is None or cpu1 is None else max(0, cpu1 - cpu0))

    def _refuse_unsolicited(self):
        ready, _, _ = select.select([self._reply_r], [], [], 0)
        if not ready and not self._buffer:
            return
        data = self._buffer or os.read(self._reply_r, 4096)
        if not data:
            raise self._died("between calls")
        raise LinkError("tampering", "the runner process wrote to its reply pipe before it was asked anything "
                        f"({data[:80]!r}): the kernel's host code interferes with the harness", self.kill())

    def _read_reply(self, deadline: float, expect_nonce, spin_s: float = 0.0) -> dict:
        spin_until = time.monotonic() + spin_s
        while b"\n" not in self._buffer:
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                self.kill()
                raise LinkError("timeout", "no answer in time", RunnerEnd(timed_out=True))
            # Polling (timeout 0) while spinning: see REPLY_SPIN_S. The output streams are drained as bytes
            # arrive, so a runner that prints while it works is never blocked on a full stream for long.
            ready, _, _ = select.select([self._reply_r] + self._outputs, [], [], 0 if now < spin_until else left)
            if any(fd in self._outputs for fd in ready):
                self._drain()
            if self._reply_r not in ready:
                continue
            data = os.read(self._reply_r, 65536)
            if not data:
                raise self._died("during the call")
            self._buffer += data
            if len(self._buffer) > MAX_REPLY_BYTES and b"\n" not in self._buffer:
                raise LinkError("tampering", f"the runner process wrote {len(self._buffer)} bytes without a line end to "
                                "its reply pipe: the kernel's host code interferes with the harness", self.kill())
        line, self._buffer = self._buffer.split(b"\n", 1)
        text = line.decode("utf-8", "replace")
        if text.startswith("sandbox:"):
            self.violation = text[len("sandbox:"):].strip()
            raise self._died("in the sandbox")
        try:
            reply = json.loads(text)
        except ValueError:
            reply = None
        if not isinstance(reply, dict) or (expect_nonce is not None and reply.get("nonce") != expect_nonce):
            raise LinkError("tampering", f"the runner process answered a call with {text[:80]!r}, which does not answer "
                            "it: the kernel's host code interferes with the harness", self.kill())
        return reply

    def _died(self, when: str) -> LinkError:
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            return LinkError("died", f"the runner closed its reply pipe {when} but did not exit", self.kill())
        end = self._end()
        # SIGSYS without the report: the filter killed the process where no handler could run (a
        # trapped call with every signal blocked, as glibc does around creating threads).
        if self.violation or end.exit_code == SANDBOX_EXIT or end.signal == signal.SIGSYS:
            what = self.violation or "a forbidden system call"
            return LinkError("forbidden_call", f"the sandbox stopped the runner {when}: {what}", end)
        return LinkError("died", f"the runner process {end.describe()} {when}", end)

    # ---- output -------------------------------------------------------------------------------
    def printed(self) -> str:
        """One line about what the runner printed so far, or "" when nothing."""
        self._drain()
        return self.output.describe()

    def _drain(self, budget: int = DRAIN_PASS_BYTES):
        """One pass over the output streams without blocking: at most `budget` bytes read, counted; a
        stream at its end of file (the runner closed it, or exited) is closed and no longer watched."""
        for fd in list(self._outputs):
            while budget > 0:
                try:
                    data = os.read(fd, min(DRAIN_CHUNK, budget))
                except BlockingIOError:
                    break
                except OSError:
                    data = b""
                if not data:
                    self._outputs.remove(fd)
                    os.close(fd)
                    break
                self.output.add(data)
                budget -= len(data)

    def _wait_draining(self, deadline: float) -> bool:
        """Waits for the runner to exit, draining its output meanwhile; False if it is still running at
        `deadline`."""
        while self.proc.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if self._outputs:
                ready, _, _ = select.select(self._outputs, [], [], min(0.05, left))
                if ready:
                    self._drain()
            else:
                time.sleep(min(0.05, left))
        return True

    def _drain_to_end(self):
        """After the runner has exited: what is still queued (a socket's send buffer holds at most a few
        hundred kilobytes, and no process of the runner's group is left to refill it; the passes are
        bounded all the same)."""
        for _ in range(64):
            if not self._outputs:
                return
            self._drain()


def _output_channel():
    """(our end, the runner's end) of a connected Unix stream socket for one of the runner's output
    streams. Ours is non-blocking, shut for writing (the runner reads nothing from it but end of file)
    and reads out-of-band bytes inline, so no byte sent can bypass the count."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_OOBINLINE, 1)
        ours.shutdown(socket.SHUT_WR)
        ours.setblocking(False)
    except OSError:
        ours.close()
        theirs.close()
        raise
    return ours.detach(), theirs.detach()


def runner_environment(private_dir: str) -> dict:
    """What the runner may see of the environment: where the CUDA libraries are, which GPU, and a
    private HOME and TMPDIR. Nothing else -- in particular no API keys (docs/judge.md)."""
    keep = ("PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES", "LANG",
            "CUTEGEN_RUNNER_EXTRA_READ")  # a diagnosis knob of the runner's sandbox (docs/sandbox.md)
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(HOME=private_dir, TMPDIR=private_dir, CUDA_CACHE_DISABLE="1")
    # Diagnosis only (scripts/gpu-check's smoke stage): a library preloaded into the runner, e.g. one that
    # logs the files the sandbox refuses.
    if os.environ.get("CUTEGEN_RUNNER_DEBUG_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["CUTEGEN_RUNNER_DEBUG_PRELOAD"]
    return env
