"""Benchmark: the webhook listener's ingest and the forwarder's signed deliveries, on loopback.

    python bench/webhooks.py [--events 6000] [--duplicates 600] [--connections 16] [--deliveries 3000] [--rounds 3]

Ingest: a client in another process (raw asyncio HTTP/1.1 on keep-alive connections, so the client costs
little CPU and no GIL of the server's) posts Evolution `messages.upsert` webhooks, each with the instance's
apikey and URL token, to the engine's listener (uvicorn, the app's own server class). Every 2xx means the
event was committed to SQLite first. `duplicates` of those posts are sent again. Afterwards the database is
counted: lost = unique events acknowledged but not stored; duplicates_stored = rows beyond the unique ones.
Baseline in the same run (issue 33): a raw ASGI app on the same server class in this process that reads the body,
makes the event with `json.loads` and stores it through the same storage group commit (app.core.storage.group_commit,
the same sync policy) and the same store: what is left is the listener's own cost (routing, verification, the
gateway's parser). The two alternate, `rounds` rounds of each (which goes first alternates too), each round with
new events; `ingest_ratio` is the median of the rounds' ratios, the listener's rate over the raw app's (goal ≥ 0.8);
the rates printed are the rounds' medians. Also the old baseline, an empty ASGI endpoint.
`ingest_cpu_us_per_post` (and `raw_cpu_us_per_post`) is this process's CPU time per post, a figure the machine's load
does not change much (the wall-clock rate does: the machine is shared); `cpu_ratio` is raw over listener.
Quick mode (YUPANA_BENCH_QUICK=1, bench/_sizes.py) shrinks every count.

Forward: `deliveries` events queued for one subscription whose URL is a receiver in another process
(raw asyncio, 204 to each POST, checks every 50th signature with `standardwebhooks`); timed from the queue
to the last 2xx recorded (each delivery's outcome is written as soon as it ends: one small transaction per delivery,
grouped when several end together; the subscription's lane sends up to forwarding.PER_SUBSCRIPTION at once).
Beside the ingest rate, `bare_fsync_ms`: a 4 KiB write and fsync in the data folder, measured after each round of the
same run (the median): each 2xx waits for its group commit's sync of the WAL, so the disk bounds the rate.
Last line: {"benchmark": "webhooks", "ingest_events_per_s", "raw_group_commit_per_s", "ingest_ratio", "bare_fsync_ms",
"lost",
"duplicates_stored", "forward_deliveries_per_s", "p99_ingest_ms", …}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._emitir import fsync_seconds  # noqa: E402 - after the path is set
from bench._sizes import size  # noqa: E402

APIKEY = "bench-instance-apikey"


def bare_fsync_ms(folder: Path, times: int) -> float:
    """The median time of a 4 KiB write and its fsync in `folder` (the data folder): what one durable commit costs
    the disk at least, printed beside the ingest rate (each group commit of the listener syncs once before its 2xx)."""
    return statistics.median(fsync_seconds(folder, times)) * 1000


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


def raw_app(engine, writer):
    """The raw ASGI baseline: body read, event made with json.loads, stored through `writer` (the listener's kind of
    group commit, the same store and announcement), answered with the count stored."""
    from app.core.messaging import events as ev
    from app.core.messaging.ids import message_id
    from app.core.messaging.store import InboundEvent

    service = engine._messaging

    async def app(scope, receive, send):
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        post = json.loads(b"".join(chunks))
        data, key = post["data"], post["data"]["key"]
        event = InboundEvent(ev.MESSAGE_RECEIVED, "raw", int(data["messageTimestamp"]), f"raw:{key['id']}",
                             {"id": message_id(), "from": "+" + key["remoteJid"].split("@")[0], "type": "text",
                              "body": data["message"]["conversation"], "name": data["pushName"]},
                             gateway_id=key["id"])
        def durably_stored() -> list:
            with service.store.database.transaction(durable=True):  # the listener's sync policy: synced before 2xx
                return service.store.ingest([event])

        fresh = await writer.run(durably_stored, service.announce)
        body = json.dumps({"ok": True, "received": 1, "stored": len(fresh)}).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    return app


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
    parser.add_argument("--events", type=int, default=size(3000, 300), help="unique posts per round")
    parser.add_argument("--duplicates", type=int, default=size(300, 30), help="posts sent again per round")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--deliveries", type=int, default=size(3000, 200))
    parser.add_argument("--rounds", type=int, default=size(6, 1), help="alternating rounds of raw app and listener")
    args = parser.parse_args()
    os.environ.setdefault("YUPANA_PASSPHRASE", "bench")
    os.environ["YUPANA_KEYRING"] = "0"

    from app.core.api import Engine
    from app.core.messaging import events as ev
    from app.core.messaging.ids import message_id, subscription_id, webhook_secret
    from app.core.messaging.store import InboundEvent
    from app.core.platform.http.asgi_server import AsgiServerThread
    from app.core.storage.group_commit import GroupCommit

    with tempfile.TemporaryDirectory() as home:
        engine = Engine(Path(home))
        try:
            engine.admin.config_set("log_level", "WARNING")
            for name in ("bench", "raw"):
                engine.messaging.save_instance(name, "evolution", "http://127.0.0.1:9", {"apikey": APIKEY})
            base = engine.messaging.start_listener("127.0.0.1", 0)
            token = engine._messaging.config("bench").credentials["webhook_token"]
            path = f"/webhooks/evolution/bench?token={token}"
            raw_writer = GroupCommit(engine._messaging.store.database, "bench-raw-writer")
            raw_server = AsgiServerThread("bench-raw", raw_app(engine, raw_writer))
            raw_base = raw_server.start("127.0.0.1", 0)

            def posts(round_: int, target: str) -> list[bytes]:
                first = round_ * args.events
                unique = [http_post("127.0.0.1", target, upsert(first + i)) for i in range(args.events)]
                step = args.events // max(1, args.duplicates)
                return unique + [unique[i * step] for i in range(args.duplicates)]

            base_rate = baseline(args.events + args.duplicates, args.connections)
            raw_rates, rates, latencies, statuses, cpu = [], [], [], [], {"raw": 0.0, "listener": 0.0}

            def raw_round(round_: int) -> None:
                requests = posts(round_, "/raw")
                cpu_before = _cpu()
                elapsed, _raw_statuses, _lat = run_client(raw_base, requests, args.connections)
                cpu["raw"] += _cpu() - cpu_before
                raw_rates.append(len(requests) / elapsed)

            def listener_round(round_: int) -> None:
                requests = posts(round_, path)
                cpu_before = _cpu()
                elapsed, round_statuses, round_latencies = run_client(base, requests, args.connections)
                cpu["listener"] += _cpu() - cpu_before
                rates.append(len(requests) / elapsed)
                statuses.extend(round_statuses[:args.events])
                latencies.extend(round_latencies)

            fsync_ms: list[float] = []
            for round_ in range(args.rounds):
                for side in ((raw_round, listener_round) if round_ % 2 == 0 else (listener_round, raw_round)):
                    side(round_)
                fsync_ms.append(bare_fsync_ms(Path(home), size(100, 10)))  # the disk's own figure, this run
                print(f"round {round_ + 1}: raw group commit {raw_rates[-1]:.0f} posts/s, listener {rates[-1]:.0f} "
                      f"posts/s", file=sys.stderr)
            raw_server.stop()
            raw_writer.close()
            unique_sent = args.rounds * args.events
            ok = sum(1 for s in statuses if 200 <= s < 300)
            stored = engine._messaging.store.event_count("bench")
            lost = max(0, ok - stored) + (unique_sent - ok)

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

    rate, raw_rate = statistics.median(rates), statistics.median(raw_rates)
    ratio = statistics.median(listener / raw for listener, raw in zip(rates, raw_rates, strict=True))
    posts_sent = args.rounds * (args.events + args.duplicates)
    print(f"ingest: {ok}/{unique_sent} unique posts answered 2xx; {stored} stored; listener {rate:.0f} posts/s, raw "
          f"group commit {raw_rate:.0f} posts/s (ratio {ratio:.2f}); empty endpoint {base_rate:.0f} req/s; bare "
          f"4 KiB write+fsync {statistics.median(fsync_ms):.2f} ms", file=sys.stderr)
    print(f"forward: {engine._forwarder.delivered} delivered in {forward_elapsed:.2f} s; receiver counted "
          f"{receiver_state['count']}, {receiver_state['verified']} signatures checked, {receiver_state['bad']} bad",
          file=sys.stderr)
    print(json.dumps({
        "benchmark": "webhooks",
        "ingest_events_per_s": round(rate),
        "raw_group_commit_per_s": round(raw_rate),
        "ingest_ratio": round(ratio, 3),
        # One 4 KiB write+fsync in the data folder (median, this run): every 2xx waits for its group's sync.
        "bare_fsync_ms": round(statistics.median(fsync_ms), 3),
        "ingest_ratio_goal_met": ratio >= 0.8,
        "lost": lost,
        "duplicates_stored": max(0, stored - unique_sent),
        "forward_deliveries_per_s": round(engine._forwarder.delivered / forward_elapsed),
        "p99_ingest_ms": round(p99(latencies), 2),
        "baseline_empty_post_per_s": round(base_rate),
        # CPU the listener spent per post (load-independent): 1e6 / this = posts/s one free core could take.
        "ingest_cpu_us_per_post": round(cpu["listener"] * 1e6 / posts_sent),
        "raw_cpu_us_per_post": round(cpu["raw"] * 1e6 / posts_sent),
        "cpu_ratio": round(cpu["raw"] / cpu["listener"], 3),
        "events": args.events, "duplicates_sent": args.duplicates, "connections": args.connections,
        "rounds": args.rounds, "deliveries": args.deliveries, "bad_signatures": receiver_state["bad"],
    }))


if __name__ == "__main__":
    main()
