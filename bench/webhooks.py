"""Benchmark: the webhook listener's ingest and the forwarder's signed deliveries, on loopback.

    python bench/webhooks.py [--events 6000] [--duplicates 600] [--connections 16] [--deliveries 3000]

Ingest: a client in another process (raw asyncio HTTP/1.1 on keep-alive connections, so the client costs
little CPU and no GIL of the server's) posts Evolution `messages.upsert` webhooks, each with the instance's
apikey and URL token, to the engine's listener (uvicorn, the app's own server class). Every 2xx means the
event was committed to SQLite first. `duplicates` of those posts are sent again. Afterwards the database is
counted: lost = unique events acknowledged but not stored; duplicates_stored = rows beyond the unique ones.
Baseline in the same run: the same client against an empty ASGI endpoint on the same server class.
`ingest_cpu_us_per_post` is the listener process's CPU time per post, a figure the machine's load does
not change much (the wall-clock rate does: the machine is shared).

Forward: `deliveries` events queued for one subscription whose URL is a receiver in another process
(raw asyncio, 204 to each POST, checks every 50th signature with `standardwebhooks`); timed from the queue
to the last 2xx recorded (each delivery's outcome is written as soon as it ends: one small transaction per delivery,
grouped when several end together; the subscription's lane sends up to forwarding.PER_SUBSCRIPTION at once).
Last line: {"benchmark": "webhooks", "ingest_events_per_s", "lost", "duplicates_stored",
"forward_deliveries_per_s", "p99_ingest_ms", …}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

APIKEY = "bench-instance-apikey"


# ---------------------------------------------------------------- the client (another process)

async def _post_all(host: str, port: int, requests: list[bytes], connections: int) -> tuple[list[int], list[float]]:
    statuses: list[int] = [0] * len(requests)
    latencies: list[float] = [0.0] * len(requests)
    cursor = iter(range(len(requests)))

    async def worker() -> None:
        reader, writer = await asyncio.open_connection(host, port)
        for index in cursor:
            started = time.perf_counter()
            writer.write(requests[index])
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            if length:
                await reader.readexactly(length)
            statuses[index] = status
            latencies[index] = time.perf_counter() - started
        writer.close()

    await asyncio.gather(*(worker() for _ in range(connections)))
    return statuses, latencies


def client(host: str, port: int, requests: list[bytes], connections: int, out: multiprocessing.Queue) -> None:
    started = time.perf_counter()
    statuses, latencies = asyncio.run(_post_all(host, port, requests, connections))
    out.put((time.perf_counter() - started, statuses, latencies))


def http_post(host: str, path: str, body: bytes) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def run_client(base_url: str, requests: list[bytes], connections: int) -> tuple[float, list[int], list[float]]:
    host, port = base_url.removeprefix("http://").split(":")
    queue: multiprocessing.Queue = multiprocessing.Queue()
    process = multiprocessing.Process(target=client, args=(host, int(port), requests, connections, queue))
    process.start()
    result = queue.get(timeout=600)
    process.join()
    return result


# ---------------------------------------------------------------- the receiver (another process)

def receiver(port_out: multiprocessing.Queue, count_out: multiprocessing.Queue, secret: str, expected: int) -> None:
    from standardwebhooks import Webhook

    verifier = Webhook(secret)
    state = {"count": 0, "verified": 0, "bad": 0}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                headers = {}
                for line in head.split(b"\r\n")[1:]:
                    if b":" in line:
                        key, value = line.split(b":", 1)
                        headers[key.strip().lower().decode()] = value.strip().decode()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                state["count"] += 1
                if state["count"] % 50 == 1:
                    try:
                        verifier.verify(body, headers)
                        state["verified"] += 1
                    except Exception:
                        state["bad"] += 1
                writer.write(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
                if state["count"] >= expected:
                    finished.set()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=512)
        port_out.put(server.sockets[0].getsockname()[1])
        await finished.wait()
        server.close()

    finished = asyncio.Event()
    asyncio.run(main())
    count_out.put(state)


# ---------------------------------------------------------------- the benchmark

def upsert(index: int) -> bytes:
    return json.dumps({
        "event": "messages.upsert", "instance": "bench", "date_time": "2026-11-23T20:00:00.000Z",
        "sender": "51999999999@s.whatsapp.net", "server_url": "http://127.0.0.1", "apikey": APIKEY,
        "data": {"key": {"remoteJid": f"519{index % 100000000:08d}@s.whatsapp.net", "fromMe": False,
                         "id": f"3EB0BENCH{index:010d}"}, "pushName": "Cliente", "message": {"conversation":
                                                                                              f"Mensaje {index}"},
                 "messageType": "conversation", "messageTimestamp": 1763900000 + index}}).encode()


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000


def baseline(requests_count: int, connections: int) -> float:
    from app.core.platform.http.asgi_server import AsgiServerThread

    async def empty(scope, receive, send):  # an ASGI app that reads the body and answers 200
        more = True
        while more:
            message = await receive()
            more = message.get("more_body", False)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"{}"})

    server = AsgiServerThread("bench-baseline", empty)
    base = server.start("127.0.0.1", 0)
    try:
        body = upsert(0)
        requests = [http_post("127.0.0.1", "/x", body)] * requests_count
        elapsed, _statuses, _lat = run_client(base, requests, connections)
        return requests_count / elapsed
    finally:
        server.stop()


def _cpu() -> float:
    """CPU seconds used by this process (the listener and its writer; the client is another process)."""
    times = os.times()
    return times.user + times.system


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=6000)
    parser.add_argument("--duplicates", type=int, default=600)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--deliveries", type=int, default=3000)
    args = parser.parse_args()
    os.environ.setdefault("YUPANA_PASSPHRASE", "bench")
    os.environ["YUPANA_KEYRING"] = "0"

    from app.core.api import Engine
    from app.core.messaging import events as ev
    from app.core.messaging.ids import message_id, subscription_id, webhook_secret
    from app.core.messaging.store import InboundEvent

    with tempfile.TemporaryDirectory() as home:
        engine = Engine(Path(home))
        try:
            engine.admin.config_set("log_level", "WARNING")
            engine.messaging.save_instance("bench", "evolution", "http://127.0.0.1:9", {"apikey": APIKEY})
            base = engine.messaging.start_listener("127.0.0.1", 0)
            token = engine._messaging.config("bench").credentials["webhook_token"]
            path = f"/webhooks/evolution/bench?token={token}"
            unique = [http_post("127.0.0.1", path, upsert(i)) for i in range(args.events)]
            repeats = [unique[i * (args.events // max(1, args.duplicates))] for i in range(args.duplicates)]
            requests = unique + repeats

            base_rate = baseline(len(requests), args.connections)
            cpu_before = _cpu()
            elapsed, statuses, latencies = run_client(base, requests, args.connections)
            ingest_cpu = _cpu() - cpu_before
            ok = sum(1 for s in statuses if 200 <= s < 300)
            stored = engine._messaging.store.event_count("bench")
            acknowledged_unique = sum(1 for s in statuses[:args.events] if 200 <= s < 300)
            lost = max(0, acknowledged_unique - stored) + (args.events - acknowledged_unique)

            # ---- forwarding
            secret = webhook_secret()
            ports: multiprocessing.Queue = multiprocessing.Queue()
            counts: multiprocessing.Queue = multiprocessing.Queue()
            process = multiprocessing.Process(target=receiver, args=(ports, counts, secret, args.deliveries))
            process.start()
            port = ports.get(timeout=30)
            sub = subscription_id()
            engine._secrets.put(f"messaging.subscription.{sub}", secret.encode())
            engine._messaging.store.add_subscription(sub, "bench", f"http://127.0.0.1:{port}/hooks",
                                                    [ev.MESSAGE_RECEIVED])
            queued = [InboundEvent(ev.MESSAGE_RECEIVED, "bench", 1763900000, f"fwd:{i}",
                                   {"id": message_id(), "from": "+51987654321", "type": "text", "body": f"m{i}",
                                    "name": "Cliente"}, gateway_id=f"FWD{i}") for i in range(args.deliveries)]
            engine._messaging.store.ingest(queued)
            started = time.perf_counter()
            engine._forwarder.wake()
            deadline = time.monotonic() + 300
            while engine._forwarder.delivered < args.deliveries and time.monotonic() < deadline:
                engine._forwarder.wait_round(engine._forwarder.rounds, timeout=5)
            forward_elapsed = time.perf_counter() - started
            receiver_state = counts.get(timeout=60)
            process.join()
        finally:
            engine.close()

    print(f"ingest: {ok}/{len(requests)} answered 2xx in {elapsed:.2f} s; {stored} stored of {args.events} unique; "
          f"baseline empty endpoint {base_rate:.0f} req/s", file=sys.stderr)
    print(f"forward: {engine._forwarder.delivered} delivered in {forward_elapsed:.2f} s; receiver counted "
          f"{receiver_state['count']}, {receiver_state['verified']} signatures checked, {receiver_state['bad']} bad",
          file=sys.stderr)
    print(json.dumps({
        "benchmark": "webhooks",
        "ingest_events_per_s": round(len(requests) / elapsed),
        "lost": lost,
        "duplicates_stored": max(0, stored - args.events),
        "forward_deliveries_per_s": round(engine._forwarder.delivered / forward_elapsed),
        "p99_ingest_ms": round(p99(latencies), 2),
        "baseline_empty_post_per_s": round(base_rate),
        # CPU the listener spent per post (load-independent): 1e6 / this = posts/s one free core could take.
        "ingest_cpu_us_per_post": round(ingest_cpu * 1e6 / len(requests)),
        "events": args.events, "duplicates_sent": args.duplicates, "connections": args.connections,
        "deliveries": args.deliveries, "bad_signatures": receiver_state["bad"],
    }))


if __name__ == "__main__":
    main()
