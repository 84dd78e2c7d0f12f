"""A stand-in for cutegen-runner --serve that speaks its protocol without a GPU, misbehaving as told:
  python3 fake_runner_process.py MODE --reply-fd N
MODE: good | early (writes a reply before any command) | wrong_nonce | print | flood (a megabyte without
a line end) | die (SIGSEGV on the
first call) | hang (never answers a call) | sandbox (reports a trapped call and exits 97) | env
(answers the call with whether an API key is in its environment) | no_setup (dies before setup) |
workspace (its load reports a workspace size: 1000 + the number of scalars the load command carried)."""
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
if mode == "early":
    reply({"nonce": "0000", "rc": 0, "event_ms": 0.0001})
for line in sys.stdin:
    cmd = json.loads(line)
    op, nonce = cmd["op"], cmd.get("nonce")
    if op == "quit":
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
        if mode == "env":
            answer["keys"] = sorted(k for k in os.environ if "KEY" in k)
            answer["home"] = os.environ.get("HOME")
        reply(answer)
