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


def test_printing_is_seen_in_the_capture_files(tmp_path):
    runner = started("print", tmp_path)
    runner.call(0, [])
    assert 'first line: "hello from the kernel"' in runner.printed()
    runner.close()


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
