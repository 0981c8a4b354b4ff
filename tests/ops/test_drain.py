#!/usr/bin/env python3
"""The drain on SIGTERM (DESIGN.md §6, configs/systemd/megatts.service), with the real binary:
three sessions are open when SIGTERM arrives, one idle, one speaking an utterance that its
client then ends, one speaking an utterance that is never ended. Then:
- the idle session is closed with 1001 at once;
- /readyz answers 503 ("draining") and a new WebSocket upgrade is refused with 503, so a
  balancer retries elsewhere;
- the utterance that ends is spoken to its `done`, then its session is closed with 1001;
- the one that never ends is closed with 1001 when the drain budget (server.drain_timeout_s)
  is spent;
- the process exits 0.
The timeline is printed.
"""
import json
import sys
import time

from ops_support import (SIGTERM, Daemon, WebSocket, WebSocketRefused, env_path, http_get, run_cases,
                         start_message, work_dir, write_config)

DRAIN_BUDGET_S = 3


def sigterm_drains_live_sessions_within_the_budget():
    work = work_dir("drain")
    config = write_config(work / "megatts.toml", f"""[server]
listen = "127.0.0.1:0"
threads = 2
drain_timeout_s = {DRAIN_BUDGET_S}
""")
    with Daemon(work, "serve", ["--config", str(config), "--model", str(env_path("MEGATTS_MODEL"))]) as d:
        port = d.wait_ready()
        idle, ending, endless = WebSocket(port), WebSocket(port), WebSocket(port)
        for ws in (idle, ending, endless):
            ws.next_event("ready")
        # Text without `end`: the streaming layout waits for more text, so both stay in progress.
        for ws in (ending, endless):
            ws.send_json(start_message("Hello there,"))
            ws.next_event("started")

        d.signal(SIGTERM)
        t0 = time.monotonic()
        code, _ = idle.until_close(10)
        idle_closed = time.monotonic() - t0
        assert code == 1001, f"the idle session was closed with {code}"

        status, body = http_get(port, "/readyz")
        assert status == 503 and json.loads(body)["reason"] == "draining", (status, body)
        try:
            WebSocket(port).close()
            raise AssertionError("a new session was admitted while draining")
        except WebSocketRefused as refused:
            assert refused.status == 503, refused

        ending.send_json({"type": "text", "text": " how are you?", "end": True})
        done = ending.next_event("done", 20)
        ending_done = time.monotonic() - t0
        assert done["reason"] in ("end", "max_frames"), done
        code, _ = ending.until_close(10)
        assert code == 1001, f"the finished session was closed with {code}"

        code, events = endless.until_close(DRAIN_BUDGET_S + 10)
        endless_closed = time.monotonic() - t0
        assert code == 1001, f"the session over budget was closed with {code}"
        assert endless_closed >= DRAIN_BUDGET_S - 0.5, f"closed after {endless_closed:.2f} s, before the budget"
        assert not any(e["type"] == "done" for e in events), "the unfinished utterance claimed to be done"

        assert d.wait_exit(DRAIN_BUDGET_S + 15) == 0, d.output()
        exited = time.monotonic() - t0
    print(f"drain timeline after SIGTERM (budget {DRAIN_BUDGET_S} s): idle session closed 1001 at "
          f"{idle_closed:.2f} s; live utterance done at {ending_done:.2f} s, then 1001; "
          f"unfinished utterance closed 1001 at {endless_closed:.2f} s; exit 0 at {exited:.2f} s")


if __name__ == "__main__":
    sys.exit(run_cases([sigterm_drains_live_sessions_within_the_budget]))
