#!/usr/bin/env python3
"""`megatts serve` under systemd's eyes, with the real binary and fakes of what systemd gives a
service (configs/systemd/):
- a notification socket (NOTIFY_SOCKET) receives STATUS= and EXTEND_TIMEOUT_USEC= while the model
  loads, READY=1 only once /readyz answers 200, WATCHDOG=1 at the watchdog's pace after that,
  and STOPPING=1 on SIGTERM, in that order; the time from start to READY=1 is printed;
- with JOURNAL_STREAM naming its stderr, every log line carries a syslog "<N>" priority;
- socket activation: a listening socket passed as fd 3 (LISTEN_FDS, LISTEN_PID) is adopted and
  server.listen is ignored; a passed socket that does not listen is refused with exit code 2
  (and the message is filed in the journal as an error).
"""
import socket
import sys

from ops_support import (SIGTERM, Daemon, NotifySocket, WebSocket, env_path, http_get, run_cases, wait_until,
                         work_dir, write_config)

WATCHDOG_USEC = 1_000_000  # the heartbeat then ticks every 250 ms


def index_of(messages, key, value=None):
    for i, (_, fields) in enumerate(messages):
        if key in fields and (value is None or fields[key] == value):
            return i
    raise AssertionError(f"no {key} in {messages}")


def notifications_arrive_in_order():
    work = work_dir("notify")
    notify = NotifySocket(work)
    config = write_config(work / "megatts.toml", '[server]\nlisten = "127.0.0.1:0"\nthreads = 2\n')
    with Daemon(work, "serve", ["--config", str(config), "--model", str(env_path("MEGATTS_MODEL"))],
                extra_env={"NOTIFY_SOCKET": str(notify.path), "WATCHDOG_USEC": str(WATCHDOG_USEC)},
                journal=True) as d:
        at_ready, ready = notify.wait_for("READY", 60, "1")
        port = d.wait_url()
        status, body = http_get(port, "/readyz")
        assert status == 200, f"READY=1 was sent while /readyz answers {status} {body!r}"
        assert ready.get("STATUS", "").startswith("ready"), ready
        print(f"time from start to READY=1: {at_ready:.2f} s")

        # The watchdog is fed at a quarter of WatchdogSec: several within a second and a half.
        def watchdogs():
            notify.poll(0.1)
            return sum("WATCHDOG" in f for _, f in notify.messages) >= 3
        wait_until(watchdogs, 10, "three WATCHDOG=1")
        d.signal(SIGTERM)
        notify.wait_for("STOPPING", 10, "1")
        assert d.wait_exit(30) == 0, d.output()
        notify.poll(0.2)

    messages = notify.messages
    loading = index_of(messages, "STATUS", "loading model tiny-cv06")
    extend = index_of(messages, "EXTEND_TIMEOUT_USEC")
    ready_at = index_of(messages, "READY", "1")
    watchdog = index_of(messages, "WATCHDOG", "1")
    stopping = index_of(messages, "STOPPING", "1")
    assert loading < ready_at and extend < ready_at, messages
    assert ready_at < watchdog < stopping, messages
    assert all("WATCHDOG" not in f for _, f in messages[:ready_at]), "WATCHDOG=1 before READY=1"
    assert all("READY" not in f for _, f in messages[ready_at + 1:]), "READY=1 twice"
    assert int(messages[extend][1]["EXTEND_TIMEOUT_USEC"]) > 0
    notify.close()

    # The same run's stderr, as the journal would get it.
    lines = [line for line in d.stderr_path.read_text().splitlines() if line]
    assert lines, "no log lines"
    for line in lines:
        assert line[0] == "<" and line[2] == ">" and line[1] in "234567", f"no syslog priority: {line!r}"
        assert "\x1b[" not in line, f"terminal colours in the journal: {line!r}"
    assert any(line.startswith("<6>ready: ") for line in lines), lines


def adopts_the_socket_systemd_passes():
    work = work_dir("socket-activation")
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.bind(("127.0.0.1", 0))
    listening.listen(64)
    port = listening.getsockname()[1]
    # An address the daemon could not bind: it must not try, the socket is given.
    config = write_config(work / "megatts.toml", '[server]\nlisten = "192.0.2.1:8080"\nthreads = 2\n')
    with Daemon(work, "serve", ["--config", str(config), "--model", str(env_path("MEGATTS_MODEL"))],
                listen_socket=listening) as d:
        listening.close()  # the daemon holds its own copy now
        assert d.wait_url() == port, d.output()
        assert "(socket from systemd)" in d.output()
        d.wait_ready()
        ws = WebSocket(port)
        assert ws.next_event("ready")["protocol"] == "megatts.v1"
        ws.close()
        d.signal(SIGTERM)
        assert d.wait_exit(30) == 0, d.output()


def refuses_a_passed_socket_that_does_not_listen():
    work = work_dir("socket-activation-bad")
    not_listening = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    not_listening.bind(("127.0.0.1", 0))
    with Daemon(work, "serve", ["--listen", "127.0.0.1:0", "--model", str(env_path("MEGATTS_MODEL"))],
                listen_socket=not_listening, journal=True) as d:
        status = d.wait_exit(30)
        stderr = d.stderr_path.read_text()
        assert status == 2, stderr
        # Filed in the journal as an error.
        assert stderr.startswith("<3>megatts: ") and "not a listening TCP socket" in stderr, stderr
    not_listening.close()


if __name__ == "__main__":
    sys.exit(run_cases([notifications_arrive_in_order, adopts_the_socket_systemd_passes,
                        refuses_a_passed_socket_that_does_not_listen]))
