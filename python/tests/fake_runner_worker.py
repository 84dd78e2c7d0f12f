"""The reference worker with the fake runner installed, for the C++ tests that drive a real worker process
without a GPU (src/run/judge_worker_test.cpp, src/tune/judge_tune_backend_test.cpp: PythonWorkerOptions's
`script`) and the protocol tests (test_protocol.py):

    PYTHONPATH=python python3 python/tests/fake_runner_worker.py

It is the production worker (cutegen_worker.protocol.main) with one thing added through the worker's hook
point: sessions accept `fake_runner` (fake_runner.py). Nothing of it is in the worker package, so a worker
cutegen starts (`python -m cutegen_worker`) cannot be talked into playing its own runner."""
from cutegen_worker import protocol


def install(session) -> None:
    import fake_runner  # torch comes with it: only once main() has made stdout safe
    fake_runner.install(session)


if __name__ == "__main__":
    raise SystemExit(protocol.main(install=install, announce="the fake runner is installed (a test worker)"))
