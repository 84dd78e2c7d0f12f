"""The worker's end of a runner session: start cutegen-runner, send it commands, time and read its
replies, and see how it ended (docs/judge.md, "The runner session").

Commands are JSON lines on the runner's stdin; replies are JSON lines on a pipe of their own (the
runner's stdout and stderr are capture files, because a candidate may print). Everything the runner
says is a hint from a hostile process; what this module establishes itself is:
* the time from writing a command to reading its reply (`time.perf_counter_ns`, this process);
* that a reply answers the command it follows: each command carries a fresh random nonce the reply
  must echo, and nothing may arrive before a command is sent (`tampering` otherwise);
* how the process ended: `waitpid`, a timeout this module enforced, or the sandbox's one-line report
  of a trapped system call (`forbidden_call`; the runner exits 97 after it);
* what was printed: the capture files' sizes.
"""
import json
import os
import secrets
import select
import signal
import subprocess
import time
from dataclasses import dataclass

from . import cpu_wait

SANDBOX_EXIT = 97  # the runner's sandbox trapped a forbidden system call (src/sandbox)
READY_TIMEOUT_S = 120.0  # context creation, IPC mapping and the library's load
MAX_REPLY_BYTES = 1 << 16  # a reply is one short JSON line; more is a flood meant to exhaust the worker
# Pings and calls are waited for by polling the reply pipe for this long before sleeping in select():
# a call's time is its round trip minus an empty call's, and a worker woken from a long sleep pays
# the CPU's wake-up latency (deeper idle states the longer it slept) inside the round trip where a
# short ping does not — on an H200 host that made a 0.56 ms kernel read 0.8-0.9 ms. The runner spins
# on its side too (src/run/command_reader.h). A busy core for the length of one call, at most.
REPLY_SPIN_S = 0.2


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


class SubprocessRunner:
    """cutegen-runner --serve SESSION --reply-fd N, in a session of its own (killed as a group)."""

    def __init__(self, argv: list, private_dir: str, env: dict, call_timeout_s: float):
        self.private_dir = private_dir
        self.call_timeout_s = call_timeout_s
        self._buffer = b""
        self.violation = None
        self.out_path = os.path.join(private_dir, "stdout")
        self.err_path = os.path.join(private_dir, "stderr")
        out = os.open(self.out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(self.err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self._reply_r, reply_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                list(argv) + ["--reply-fd", str(reply_w)], stdin=subprocess.PIPE, stdout=out, stderr=err,
                pass_fds=(reply_w,), env=env, cwd=private_dir, start_new_session=True, close_fds=True)
        finally:
            os.close(reply_w)
            os.close(out)
            os.close(err)
        self._stdin = self.proc.stdin.fileno()

    # ---- lifecycle ----------------------------------------------------------------------------
    def start(self) -> dict:
        """The runner's first line, once its CUDA context and the shared buffers are set up and before
        anything of the candidate is loaded: {"setup": true} or {"setup": false, "message": ...}."""
        return self._read_reply(time.monotonic() + READY_TIMEOUT_S, expect_nonce=None)

    def close(self) -> RunnerEnd:
        """Asks the runner to quit, waits for it (killing the group if it lingers) and reports its end."""
        if self.proc.poll() is None:
            try:
                os.write(self._stdin, b'{"op": "quit"}\n')
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._kill()
                self.proc.wait()
                return self._end(timed_out=True)
        return self._end()

    def kill(self) -> RunnerEnd:
        self._kill()
        self.proc.wait()
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
            os.close(self._reply_r)
        except Exception:
            pass

    def wait_ns(self):
        """How long both ends of the link -- this thread and the runner's main thread, which answers
        the calls -- have waited for a CPU so far (cpu_wait.py); None once the runner has exited or
        where the kernel does not count it."""
        own, runner = cpu_wait.own_thread_ns(), cpu_wait.process_ns(self.proc.pid)
        return None if own is None or runner is None else own + runner

    # ---- commands -----------------------------------------------------------------------------
    def ping(self, sweep: str = "") -> Exchange:
        """The harness's empty call; with a `sweep` ("own": the runner writes its own 128 MiB buffer,
        "footprint": it reads the call's inputs and writes its outputs) the GPU's caches are left as
        cold as after a call that streams through its tensors."""
        command = {"op": "ping", "sweep": sweep} if sweep else {"op": "ping"}
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
        t0 = time.perf_counter_ns()
        try:
            os.write(self._stdin, line)
        except OSError:
            raise self._died("while a command was being sent")
        reply = self._read_reply(time.monotonic() + (timeout_s or self.call_timeout_s), expect_nonce=nonce, spin_s=spin_s)
        t1 = time.perf_counter_ns()
        return Exchange(reply=reply, wall_ns=t1 - t0)

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
            # Polling (timeout 0) while spinning: see REPLY_SPIN_S.
            ready, _, _ = select.select([self._reply_r], [], [], 0 if now < spin_until else left)
            if not ready:
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
        total, first = 0, ""
        for path in (self.out_path, self.err_path):
            try:
                size = os.path.getsize(path)
            except OSError:
                continue
            if size and not first:
                with open(path, "rb") as f:
                    first = f.read(200).decode("utf-8", "replace").split("\n", 1)[0]
            total += size
        if not total:
            return ""
        return f"the kernel printed {total} bytes (first line: \"{first[:120]}\"): remove printf and other output"


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
