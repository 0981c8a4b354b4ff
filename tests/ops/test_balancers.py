#!/usr/bin/env python3
"""The shipped load-balancer configurations (configs/nginx/megatts.conf,
configs/haproxy/megatts.cfg) with the real nginx and HAProxy from Debian, run as this test's
own processes on loopback, in front of two `megatts serve` on the CPU backend. Only the
addresses are changed (the balancer's port and the two daemons' ports; HAProxy's syslog line
goes, there is no /dev/log here). For each balancer:
- spread: sessions opened through it land on both daemons, evenly (each daemon's /metrics);
  an utterance through it arrives whole;
- drain: a daemon that got SIGTERM (and still finishes a live utterance) gets no new session:
  every session opened through the balancer meanwhile lands on the other one, and none is
  refused;
- kill: with live sessions on both, SIGKILL of one daemon ends only its own sessions; the
  other daemon's sessions finish their utterances, and new sessions still get through.
`haproxy -c` checks the shipped file as it is.
Usage: test_balancers.py CONFIGS_DIR (MEGATTS_* from the environment).
"""
import os
import pathlib
import re
import socket
import subprocess
import sys

from ops_support import (SIGKILL, SIGTERM, Daemon, WebSocket, env_path, free_port, http_get, metric, run_cases,
                         start_message, wait_until, work_dir, write_config)

configs = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else None
SESSIONS = 6


def shipped(path, replacements):
    """The shipped file with each (pattern, replacement) applied where it matches exactly once,
    so that a change to the file's shape fails here instead of testing something else."""
    text = path.read_text()
    for pattern, replacement in replacements:
        text, n = re.subn(pattern, replacement, text)
        assert n == 1, f"{path.name}: {pattern!r} matched {n} times, not once"
    return text


def backend_addresses(backends):
    """The shipped files list their daemons at 127.0.0.1:8080 and :8081."""
    return [(rf"127\.0\.0\.1:{8080 + i} ", f"127.0.0.1:{port} ") for i, port in enumerate(backends)]


def listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


class Balancer:
    """A balancer process; `port` is where clients connect."""

    def __init__(self, work, name, argv):
        self.port = None
        self.name = name
        self.log = open(work / f"{name}.out", "wb")
        self.process = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)

    def wait(self, port):
        self.port = port
        wait_until(lambda: self.process.poll() is None and listening(port), 20, f"{self.name} to listen")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.log.close()


def start_nginx(work, backends):
    port = free_port()
    site = shipped(configs / "nginx" / "megatts.conf",
                   backend_addresses(backends) + [(r"listen 80;", f"listen 127.0.0.1:{port};")])
    (work / "megatts.conf").write_text(site)
    temp = "".join(f"    {kind}_temp_path {work}/{kind};\n"
                   for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    (work / "nginx.conf").write_text(f"""# The test's own nginx: the shipped site inside a minimal main configuration.
{"user root;" if os.geteuid() == 0 else ""}
daemon off;
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log info;
events {{ worker_connections 256; }}
http {{
    access_log {work}/nginx-access.log;
{temp}    include {work}/megatts.conf;
}}
""")
    nginx = Balancer(work, "nginx", ["nginx", "-e", str(work / "nginx-error.log"), "-p", str(work),
                                     "-c", str(work / "nginx.conf")])
    nginx.wait(port)
    return nginx


def start_haproxy(work, backends):
    port = free_port()
    cfg = shipped(configs / "haproxy" / "megatts.cfg",
                  backend_addresses(backends) + [(r"bind :80\n", f"bind 127.0.0.1:{port}\n"),
                                                 (r"    log /dev/log local0\n", "")])  # no syslog here
    (work / "haproxy.cfg").write_text(cfg)
    haproxy = Balancer(work, "haproxy", ["haproxy", "-db", "-f", str(work / "haproxy.cfg")])
    haproxy.wait(port)
    return haproxy


def start_daemon(work, name, port):
    config = write_config(work / f"{name}.toml", f"""[server]
listen = "127.0.0.1:{port}"
threads = 2
drain_timeout_s = 20
""")
    d = Daemon(work, name, ["--config", str(config), "--model", str(env_path("MEGATTS_MODEL"))])
    d.wait_ready()
    return d


def connections(d):
    return int(metric(d.port, "megatts_websocket_connections") or 0)


def open_tagged(lb_port, daemons, count):
    """Opens `count` sessions through the balancer, one after another; each with the index of
    the daemon whose connection count rose (read from /metrics)."""
    tagged = []
    for _ in range(count):
        before = [connections(d) if d.process.poll() is None else 0 for d in daemons]
        ws = WebSocket(lb_port)
        ws.next_event("ready")
        after = [connections(d) if d.process.poll() is None else 0 for d in daemons]
        rose = [i for i in range(len(daemons)) if after[i] > before[i]]
        assert len(rose) == 1, f"connections {before} -> {after}"
        tagged.append((ws, rose[0]))
    return tagged


def close_all(tagged, daemons):
    for ws, _ in tagged:
        ws.close()
    wait_until(lambda: all(connections(d) == 0 for d in daemons if d.process.poll() is None), 20, "sessions to close")


def speak_whole(ws):
    ws.send_json(start_message("Hello there.", end=True))
    audio, done = 0, None
    while done is None:
        kind, value = ws.receive(30)
        assert kind != "close", f"closed with {value}"
        if kind == "audio":
            audio += 1
        elif value["type"] == "done":
            done = value
    # The tiny model's random weights may run into the frame limit rather than end by themselves.
    assert done["reason"] in ("end", "max_frames") and done["messages"] == audio, (done, audio)


def spread(lb, daemons):
    tagged = open_tagged(lb.port, daemons, SESSIONS)
    counts = [sum(1 for _, i in tagged if i == k) for k in range(2)]
    print(f"  {lb.name} spread {SESSIONS} sessions as {counts[0]} + {counts[1]}")
    assert min(counts) >= SESSIONS // 2 - 1, f"uneven spread {counts}"
    speak_whole(tagged[0][0])
    close_all(tagged, daemons)


def drain(lb, daemons, work):
    a, b = daemons
    live = WebSocket(a.port)  # keeps daemon A draining for as long as its utterance lasts
    live.next_event("ready")
    live.send_json(start_message("Hello there,"))
    live.next_event("started")
    a.signal(SIGTERM)
    wait_until(lambda: http_get(a.port, "/readyz")[0] == 503, 10, "A's /readyz to answer 503")
    upgrades = 'megatts_http_requests_total{route="websocket"}'
    tried_before = metric(a.port, upgrades)
    tagged = open_tagged(lb.port, daemons, 4)
    on_a = sum(1 for _, i in tagged if i == 0)
    refused = metric(a.port, upgrades) - tried_before
    print(f"  {lb.name} while A drains: {len(tagged)} new sessions, {on_a} on A; "
          f"A answered {refused:.0f} upgrade(s) with 503, retried elsewhere")
    assert on_a == 0, "a draining daemon got new sessions"
    if lb.name == "nginx":  # least_conn sends some to A (fewest connections): the 503 retry must work
        assert refused >= 1, "nginx never tried the draining daemon: the 503 retry went untested"
    live.send_json({"type": "text", "text": " goodbye.", "end": True})
    live.next_event("done")
    code, _ = live.until_close(10)
    assert code == 1001, code
    assert a.wait_exit(30) == 0, a.output()
    close_all(tagged, [b])
    daemons[0] = start_daemon(work, "a-again", a.port)


def kill(lb, daemons):
    # The balancer may keep the restarted daemon out for a moment (HAProxy: until `rise` good
    # checks): wait until a session lands on it.
    def one_on_restarted():
        ws, i = open_tagged(lb.port, daemons, 1)[0]
        if i == 0:
            return ws
        ws.close()
        wait_until(lambda: connections(daemons[1]) == 0, 10, "the probe session to close")
        return None

    first = wait_until(one_on_restarted, 30, "a session on the restarted daemon", interval=0.5)
    tagged = [(first, 0)] + open_tagged(lb.port, daemons, 3)
    assert {i for _, i in tagged} == {0, 1}, tagged
    for ws, _ in tagged:
        ws.send_json(start_message("Hello there,"))
        ws.next_event("started")
    victim, survivor = daemons[1], daemons[0]
    victim.signal(SIGKILL)
    victim.wait_exit(10)
    for ws, i in tagged:
        if i == 1:
            try:
                kind, value = ws.receive(10)
                while kind != "close":
                    kind, value = ws.receive(10)
            except (ConnectionError, OSError):
                pass  # the balancer drops the client's connection: no close frame to relay
        else:
            ws.send_json({"type": "text", "text": " goodbye.", "end": True})
            assert ws.next_event("done")["reason"] in ("end", "max_frames")
    lost = sum(1 for _, i in tagged if i == 1)
    print(f"  {lb.name} kill: {lost} of {len(tagged)} sessions were on the killed daemon; the rest finished")
    after = open_tagged(lb.port, [survivor], 3)
    close_all(tagged + after, [survivor])


def scenario(start_balancer, name):
    work = work_dir(name)
    daemons = [start_daemon(work, "a", free_port()), start_daemon(work, "b", free_port())]
    lb = None
    try:
        lb = start_balancer(work, [d.port for d in daemons])
        spread(lb, daemons)
        drain(lb, daemons, work)
        kill(lb, daemons)
    finally:
        if lb:
            lb.stop()
        for d in daemons:
            d.kill()


def nginx_spreads_drains_and_survives_a_kill():
    scenario(start_nginx, "nginx")


def haproxy_config_is_valid():
    result = subprocess.run(["haproxy", "-c", "-f", str(configs / "haproxy" / "megatts.cfg")], capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr


def haproxy_spreads_drains_and_survives_a_kill():
    scenario(start_haproxy, "haproxy")


if __name__ == "__main__":
    sys.exit(run_cases([nginx_spreads_drains_and_survives_a_kill, haproxy_config_is_valid,
                        haproxy_spreads_drains_and_survives_a_kill]))
