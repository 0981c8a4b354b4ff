"""What the ops tests share: `megatts serve` as a child process (optionally with systemd's
environment: a notification socket, an inherited listening socket, a journal stream), plain
HTTP, a small WebSocket client (RFC 6455, as much as daemon/PROTOCOL.md needs), a fake
systemd notification socket, and free loopback ports. Standard library only; every wait is
bounded, and every child is killed when a test fails.

Environment (set by meson): MEGATTS_BIN, MEGATTS_MODEL (the tiny checkpoint),
MEGATTS_WORK_DIR (a directory the test may fill).
"""
import base64
import http.client
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import struct
import subprocess
import time

URL_LINE = re.compile(rb"listening on http://[^ ]*:([0-9]+)/")


def env_path(name):
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f"environment variable {name} is not set (run through meson test)")
    return pathlib.Path(value)


def work_dir(test_name):
    """A fresh directory for one test's files."""
    path = env_path("MEGATTS_WORK_DIR") / test_name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def free_port():
    """A loopback port nobody listens on right now (for configurations that need it in advance)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout, what, interval=0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def write_config(path, text):
    path.write_text(text)
    return path


class Daemon:
    """`megatts serve ARGS` with its stdout and stderr in NAME.log (stderr alone in
    NAME.stderr when `journal` is set, with JOURNAL_STREAM naming that file)."""

    def __init__(self, work, name, args, extra_env=None, listen_socket=None, journal=False):
        self.name = name
        self.log = work / f"{name}.log"
        self.log_file = open(self.log, "wb")
        child_env = dict(extra_env or {})
        stderr = self.log_file
        if journal:
            self.stderr_path = work / f"{name}.stderr"
            stderr = open(self.stderr_path, "wb")
            st = os.fstat(stderr.fileno())
            child_env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
        listen_fd = listen_socket.fileno() if listen_socket is not None else None

        def preexec():  # in the child, before exec: what only the child can know (its pid)
            if listen_fd is not None:
                os.dup2(listen_fd, 3)
                child_env["LISTEN_FDS"] = "1"
                child_env["LISTEN_PID"] = str(os.getpid())
            os.environ.update(child_env)

        self.started = time.monotonic()
        self.process = subprocess.Popen([str(env_path("MEGATTS_BIN")), "serve", *args], stdout=self.log_file,
                                        stderr=stderr, preexec_fn=preexec,
                                        pass_fds=(3,) if listen_fd is not None else ())
        if stderr is not self.log_file:
            stderr.close()
        self.port = None

    def wait_url(self, timeout=60):
        """The port from the "listening on" line."""
        def port():
            if self.process.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.process.returncode}: {self.output()}")
            m = URL_LINE.search(self.log.read_bytes())
            return int(m.group(1)) if m else None
        self.port = wait_until(port, timeout, f"{self.name}'s URL line")
        return self.port

    def wait_ready(self, timeout=60):
        if self.port is None:
            self.wait_url(timeout)
        wait_until(lambda: http_get(self.port, "/readyz")[0] == 200, timeout, f"{self.name} to be ready")
        return self.port

    def signal(self, sig):
        self.process.send_signal(sig)

    def wait_exit(self, timeout=60):
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.name} did not exit within {timeout} s: {self.output()}")

    def output(self):
        return self.log.read_text(errors="replace")

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.log_file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()


def http_get(port, path, timeout=10):
    """(status, body) of GET PATH, or (0, error text) when the connection fails."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read()
        conn.close()
        return response.status, body
    except OSError as e:
        return 0, str(e).encode()


def metric(port, name):
    """The value of one sample line of /metrics (name with its labels), or None."""
    status, body = http_get(port, "/metrics")
    if status != 200:
        return None
    for line in body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return None


class WebSocketRefused(Exception):
    def __init__(self, status, body):
        super().__init__(f"upgrade refused with HTTP {status}: {body!r}")
        self.status = status
        self.body = body


class WebSocket:
    """One client connection of WS /v1/tts: text frames out (masked), messages in; pings are
    answered. Raises WebSocketRefused when the upgrade gets anything but 101."""

    def __init__(self, port, path="/v1/tts", timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                   f"Sec-WebSocket-Protocol: megatts.v1\r\n\r\n")
        self.sock.sendall(request.encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise WebSocketRefused(0, self.buffer)
            self.buffer += chunk
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        status = int(head.split(b" ", 2)[1])
        if status != 101:
            raise WebSocketRefused(status, self.buffer)
        self.closed = None

    def send_json(self, message):
        self._send_frame(0x1, json.dumps(message).encode())

    def _send_frame(self, opcode, payload):
        mask = os.urandom(4)
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the connection ended without a close frame")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def _frame(self):
        b0, b1 = self._read(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", self._read(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self._read(8))[0]
        return b0 & 0x80, b0 & 0x0F, self._read(n)

    def receive(self, timeout=20):
        """The next message: ("event", dict), ("audio", bytes) or ("close", code)."""
        self.sock.settimeout(timeout)
        message, kind = b"", None
        while True:
            fin, opcode, payload = self._frame()
            if opcode == 0x9:
                self._send_frame(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            if opcode == 0x8:
                self.closed = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else 1005
                try:  # the close handshake, then the TCP connection, as a browser does
                    self._send_frame(0x8, payload[:2])
                except OSError:
                    pass
                self.close()
                return "close", self.closed
            if opcode != 0x0:
                kind = opcode
            message += payload
            if fin:
                break
        return ("event", json.loads(message)) if kind == 0x1 else ("audio", message)

    def next_event(self, type_, timeout=20):
        """Reads until an event of `type_`, skipping audio and other events; fails on a close."""
        deadline = time.monotonic() + timeout
        while True:
            kind, value = self.receive(max(0.1, deadline - time.monotonic()))
            if kind == "close":
                raise AssertionError(f"closed with {value} while waiting for {type_}")
            if kind == "event" and value["type"] == type_:
                return value

    def until_close(self, timeout=20):
        """Reads until the server's close frame; its code, and the events before it."""
        deadline = time.monotonic() + timeout
        events = []
        while True:
            kind, value = self.receive(max(0.1, deadline - time.monotonic()))
            if kind == "close":
                return value, events
            if kind == "event":
                events.append(value)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def start_message(text=None, end=False):
    """A greedy PCM16 utterance (short to synthesise on the tiny model)."""
    message = {"type": "start", "voice": "ryan", "language": "english", "format": "pcm16",
               "sampling": {"greedy": True}}
    if text is not None:
        message["text"] = text
        message["end"] = end
    return message


class NotifySocket:
    """A fake systemd notification socket: a unix datagram socket in `work` that records what
    `megatts serve` sends (sd_notify's messages, one datagram each)."""

    def __init__(self, work):
        self.path = work / "notify.sock"
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(self.path))
        self.messages = []  # (seconds since creation, {KEY: value})
        self.created = time.monotonic()

    def poll(self, timeout):
        """Reads what arrives within `timeout`; returns the new messages."""
        self.sock.settimeout(timeout)
        new = []
        try:
            while True:
                data = self.sock.recv(65536)
                fields = dict(line.split("=", 1) for line in data.decode().splitlines() if "=" in line)
                new.append((time.monotonic() - self.created, fields))
                self.sock.settimeout(0.01)
        except (socket.timeout, BlockingIOError):
            pass
        self.messages += new
        return new

    def wait_for(self, key, timeout, value=None):
        """Polls until a message with KEY (and VALUE, when given) has arrived; that message."""
        deadline = time.monotonic() + timeout
        while True:
            for at, fields in self.messages:
                if key in fields and (value is None or fields[key] == value):
                    return at, fields
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {key}={value or '*'} within {timeout} s; got {self.messages}")
            self.poll(min(left, 0.2))

    def close(self):
        self.sock.close()


def run_cases(cases):
    """Runs each case in order; prints its outcome and time; exit status 1 if any failed."""
    failed = 0
    for case in cases:
        start = time.monotonic()
        try:
            case()
            print(f"ok   {case.__name__} ({time.monotonic() - start:.1f} s)", flush=True)
        except Exception as e:  # one failing case must not hide the others
            failed += 1
            print(f"FAIL {case.__name__}: {type(e).__name__}: {e}", flush=True)
    print(f"{len(cases) - failed} passed, {failed} failed")
    return 1 if failed else 0


def kill_all(daemons):
    for d in daemons:
        d.kill()


SIGTERM = signal.SIGTERM
SIGKILL = signal.SIGKILL
