"""The worker's end of the runner protocol over real pipes, against a stand-in runner process that
misbehaves on purpose (fake_runner_process.py): what the worker establishes itself -- replies answer
the command they follow, the clock, how the process ended, what it printed -- must hold."""
import os
import sys
import time

import pytest

from cutegen_worker import runner_link
from cutegen_worker.runner_link import LinkError, SubprocessRunner

STANDIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_runner_process.py")


def link(mode, tmp_path, timeout=5.0, env=None):
    return SubprocessRunner([sys.executable, STANDIN, mode], str(tmp_path),
                            env if env is not None else runner_link.runner_environment(str(tmp_path)), timeout)


def started(mode, tmp_path, **kw):
    runner = link(mode, tmp_path, **kw)
    assert runner.start() == {"setup": True}
    assert runner.ping().reply["pong"] is True
    assert runner.load([]).reply["ready"] is True
    return runner


def test_a_good_session_is_timed_and_ends_cleanly(tmp_path):
    runner = started("good", tmp_path)
    exchange = runner.call(0, [])
    assert exchange.reply["rc"] == 0 and exchange.reply["event_ms"] == 0.5
    assert 0 < exchange.wall_ns < 5e9
    assert runner.printed() == ""
    end = runner.close()
    assert (end.exit_code, end.signal, end.timed_out, end.describe()) == (0, None, False, "exit code 0")


def test_load_sends_the_scalars_and_returns_the_workspace_size(tmp_path):
    plain = started("good", tmp_path)
    assert plain.load([]).reply["workspace_bytes"] is None  # a kernel with cutegen_forward
    plain.close()
    runner = link("workspace", tmp_path)
    assert runner.start() == {"setup": True}
    reply = runner.load([None, {"kind": "scalar", "dtype": "int64", "value": 3}]).reply
    assert (reply["ready"], reply["workspace_bytes"]) == (True, 1002)
    assert runner.close().exit_code == 0


def test_a_reply_before_any_command_is_tampering(tmp_path):
    runner = link("early", tmp_path)
    runner.start()
    with pytest.raises(LinkError) as error:
        runner.ping()
    # Seen before the command (already waiting on the pipe) or as the "answer" with the wrong nonce.
    assert error.value.kind == "tampering" and "interferes with the harness" in error.value.message


def test_a_reply_without_the_calls_nonce_is_tampering(tmp_path):
    runner = started("wrong_nonce", tmp_path)
    with pytest.raises(LinkError) as error:
        runner.call(0, [])
    assert error.value.kind == "tampering" and "does not answer it" in error.value.message
    assert runner.proc.poll() is not None  # killed


def test_a_flood_on_the_reply_pipe_is_tampering_not_a_memory_problem(tmp_path):
    runner = started("flood", tmp_path)
    with pytest.raises(LinkError) as error:
        runner.call(0, [])
    assert error.value.kind == "tampering" and "without a line end" in error.value.message


def test_a_crash_is_reported_with_its_signal(tmp_path):
    runner = started("die", tmp_path)
    with pytest.raises(LinkError) as error:
        runner.call(0, [])
    assert error.value.kind == "died" and error.value.end.describe() == "killed by SIGSEGV"


def test_a_hang_is_killed_after_the_time_limit(tmp_path):
    runner = started("hang", tmp_path, timeout=0.5)
    start = time.monotonic()
    with pytest.raises(LinkError) as error:
        runner.call(0, [])
    assert error.value.kind == "timeout" and error.value.end.timed_out
    assert time.monotonic() - start < 5 and runner.proc.poll() is not None


def test_the_sandboxs_report_is_a_forbidden_call(tmp_path):
    runner = started("sandbox", tmp_path)
    with pytest.raises(LinkError) as error:
        runner.call(0, [])
    assert error.value.kind == "forbidden_call" and "socket (AF_INET)" in error.value.message
    assert error.value.end.exit_code == runner_link.SANDBOX_EXIT


def test_death_by_sigsys_is_a_forbidden_call_even_without_the_report(tmp_path):
    runner = started("sigsys", tmp_path)
    with pytest.raises(LinkError) as error:
        runner.call(0, [])
    assert error.value.kind == "forbidden_call" and error.value.end.describe() == "killed by SIGSYS"


def test_printing_is_seen_on_the_output_pipes(tmp_path):
    runner = started("print", tmp_path)
    runner.call(0, [])
    assert 'first line: "hello from the kernel"' in runner.printed()
    runner.close()


def test_printing_then_truncating_seeking_or_reading_back_erases_nothing(tmp_path):
    """A capture file could be emptied by the process that printed into it, and a pipe's read end can be
    reopened through /proc/self/fd and drained by the writer before the worker reads it; a socket whose
    other end only the worker holds allows neither (attacks/printed_output/print_then_truncate.cu does the same with
    raw system calls)."""
    runner = started("print_then_truncate", tmp_path)
    reply = runner.call(0, []).reply
    assert reply["erased"] == {f"{call}({fd})": errno for fd in (1, 2) for call, errno in
                               (("ftruncate", "EINVAL"), ("lseek", "ESPIPE"), ("read_back", "ENXIO"))}
    said = runner.printed()
    assert said.startswith("the kernel printed 36 bytes") and 'first line: "hello from the kernel"' in said, said
    assert not any(name in os.listdir(tmp_path) for name in ("stdout", "stderr"))  # no capture files at all
    runner.close()


def test_only_the_worker_holds_its_ends_of_the_output_streams(tmp_path):
    runner = started("fds", tmp_path)
    fds = runner.call(0, []).reply["fds"]
    ours = {f"socket:[{os.fstat(fd).st_ino}]" for fd in runner._outputs}
    assert len(ours) == 2
    assert not [fd for fd, (target, _) in fds.items() if target in ours], fds
    # The runner's stdout and stderr are sockets (of their own, one each), not pipes or files.
    assert fds["1"][0].startswith("socket:[") and fds["2"][0].startswith("socket:[") and fds["1"][0] != fds["2"][0]
    runner.close()


def test_a_flood_on_stdout_neither_blocks_the_runner_nor_fills_the_worker(tmp_path):
    """32 MiB printed inside a call, 500 times what a pipe holds: the call still completes (the worker
    drains while it waits for the reply), every byte is counted, and the worker keeps only a head."""
    runner = started("flood_out", tmp_path)
    assert runner.call(0, []).reply["rc"] == 0
    assert runner.printed().startswith(f"the kernel printed {32 << 20} bytes")
    assert len(runner.output.head) == runner_link.PRINTED_HEAD_BYTES
    assert runner.close().exit_code == 0


def test_a_flood_without_end_is_a_timeout_not_a_hung_worker(tmp_path):
    runner = started("flood_forever", tmp_path, timeout=1.0)
    start = time.monotonic()
    with pytest.raises(LinkError) as error:
        runner.call(0, [])
    assert error.value.kind == "timeout" and time.monotonic() - start < 10
    assert runner.output.total > 1 << 20 and len(runner.output.head) == runner_link.PRINTED_HEAD_BYTES
    assert runner.printed().startswith("the kernel printed")


def test_what_is_flushed_at_exit_is_read_after_the_exit(tmp_path):
    runner = started("print_at_exit", tmp_path)
    runner.call(0, [])
    assert runner.printed() == ""  # still in the runner's stdio buffer
    assert runner.close().exit_code == 0
    assert 'first line: "goodbye from the kernel"' in runner.printed()


def test_a_runner_writing_more_than_a_pipe_holds_as_it_quits_still_exits(tmp_path):
    runner = started("flood_at_exit", tmp_path)
    runner.call(0, [])
    end = runner.close()
    assert (end.exit_code, end.timed_out) == (0, False)  # drained while waiting: not stuck on a full pipe
    assert runner.printed().startswith(f"the kernel printed {1 << 20} bytes")


def test_runners_asked_to_quit_first_exit_side_by_side_and_close_still_says_how(tmp_path):
    # A screening group asks every runner to quit, then closes each: the quit is sent once, and a runner that
    # floods its output as it exits is still drained by its close.
    runners = [started("good", tmp_path), started("flood_at_exit", tmp_path)]
    for r in runners:
        r.ask_to_quit()
        r.ask_to_quit()  # once only: a second quit line would be read by nobody, or as garbage
    ends = [r.close() for r in runners]
    assert [(e.exit_code, e.timed_out) for e in ends] == [(0, False), (0, False)]
    assert runners[1].printed().startswith(f"the kernel printed {1 << 20} bytes")


def test_the_runners_cpu_time_inside_a_call_is_measured_from_outside(tmp_path):
    """The evidence of host computing (cpu_time.py): CPU the runner burns inside a call shows in the
    exchange, time it only waits does not."""
    burn = started("burn_cpu", tmp_path)
    busy = burn.call(0, [])
    burn.close()
    waits = started("sleep", tmp_path)
    idle = waits.call(0, [])
    waits.close()
    assert busy.runner_cpu_ns is not None and busy.runner_cpu_ns >= 55e6, busy.runner_cpu_ns
    assert idle.wall_ns >= 60e6 and idle.runner_cpu_ns is not None and idle.runner_cpu_ns < 30e6, idle.runner_cpu_ns


def test_a_runner_that_dies_before_setup(tmp_path):
    runner = link("no_setup", tmp_path)
    with pytest.raises(LinkError) as error:
        runner.start()
    assert error.value.kind == "died" and "exit code 3" in error.value.message


def test_the_runner_sees_no_api_key_and_a_private_home(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("MY_SERVICE_KEY", "another-secret")
    runner = started("env", tmp_path)
    answer = runner.call(0, []).reply
    assert answer["keys"] == [] and answer["home"] == str(tmp_path)
    runner.close()


def test_the_sandbox_setting_is_read_from_the_environment_and_checked(monkeypatch):
    from cutegen_worker import candidate_session
    from cutegen_worker.errors import RequestError
    monkeypatch.delenv("CUTEGEN_RUNNER_SANDBOX", raising=False)
    assert candidate_session.sandbox_settings() == {"files": True, "syscalls": True, "deny_threads": True,
                                                    "narrow": True}
    monkeypatch.setenv("CUTEGEN_RUNNER_SANDBOX", "threads")
    assert candidate_session.sandbox_settings()["deny_threads"] is False
    monkeypatch.setenv("CUTEGEN_RUNNER_SANDBOX", "none")
    monkeypatch.setenv("CUTEGEN_RUNNER_SANDBOX", "wide")
    assert candidate_session.sandbox_settings()["narrow"] is False
    monkeypatch.setenv("CUTEGEN_RUNNER_SANDBOX", "none")
    with pytest.raises(RequestError, match="not one of full, wide, threads, syscalls-only, files-only, off"):
        candidate_session.sandbox_settings()


def test_calls_and_pings_poll_for_the_reply_before_sleeping(tmp_path, monkeypatch):
    """A worker woken from a long sleep pays the CPU's wake-up latency inside the call's round trip
    (runner_link.REPLY_SPIN_S): within the spin window the reply pipe is polled (timeout 0), after it
    the worker sleeps in select() until the deadline; loading never spins."""
    timeouts = []
    real_select = runner_link.select.select

    def spy(r, w, x, timeout=None):
        timeouts.append(timeout)
        return real_select(r, w, x, timeout)

    runner = started("good", tmp_path)
    monkeypatch.setattr(runner_link.select, "select", spy)
    runner.call(0, [])
    assert timeouts and all(t == 0 for t in timeouts)  # the stand-in answers within 0.2 s
    monkeypatch.setattr(runner_link, "REPLY_SPIN_S", 0.0)
    timeouts.clear()
    runner.ping()
    assert [t for t in timeouts if t != 0] and all(t > 1 for t in timeouts if t != 0)  # slept until the deadline
    runner.close()
