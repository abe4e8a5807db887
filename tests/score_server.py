"""A real HTTP scoring service on localhost, for the tests of the endpoint detector and of what a run
writes: ``POST`` a JSON body, get ``answer(request)`` back (stdlib ``ThreadingHTTPServer`` in a background
thread, an ephemeral port), with scheduled faults, a barrier for concurrency tests and a ``log`` of every
request (path, lower-cased headers, parsed body)."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["ScoreServer", "machine_p", "scores_of"]


def machine_p(text: str) -> float:
    return round(len(text) / 100, 6)


def scores_of(body: dict) -> dict:
    return {"scores": [machine_p(t) for t in body["texts"]]}


class ScoreServer:
    """``POST`` anything: ``answer(request)`` -> (status, headers, body) unless a scheduled fault comes first.

    A fault is ``(status, headers, body)`` or ``("slow", seconds)`` (answer normally, late);
    ``barrier`` makes each request wait for that many requests in flight, then ``hold`` seconds
    more (time for any request beyond them to arrive and be counted) before answering.
    """

    def __init__(self, answer=None, faults=(), barrier: int | None = None, hold: float = 0.0):
        self.answer = answer or (lambda req: (200, {}, scores_of(req["body"])))
        self.faults = list(faults)
        self.barrier = threading.Barrier(barrier, timeout=5) if barrier else None
        self.hold = hold
        self.log: list[dict] = []
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                req = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                       "body": json.loads(raw)}
                with owner.lock:
                    owner.log.append(req)
                    owner.in_flight += 1
                    owner.max_in_flight = max(owner.max_in_flight, owner.in_flight)
                    fault = owner.faults.pop(0) if owner.faults else None
                try:
                    if owner.barrier is not None:
                        owner.barrier.wait()
                        time.sleep(owner.hold)
                    if fault and fault[0] == "slow":
                        time.sleep(fault[1])
                        fault = None
                    status, headers, body = fault or owner.answer(req)
                except threading.BrokenBarrierError:
                    status, headers, body = 500, {}, b"barrier broken: fewer requests at once than expected"
                finally:
                    with owner.lock:  # answered: not in flight any more, before the client can send the next
                        owner.in_flight -= 1
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.handle_error = lambda *a: None
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1/score"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
