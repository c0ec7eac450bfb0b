"""The shop's day: each kind of work in its own thread, all at once, plus the killer and the fault injector.

- ApiSeller: operation 1 then 2 through the local API, then 3 for every factura and half the boletas (the rest wait
  for the daily summary); now and then the same request again (the same voucher must come back) or another content
  under a number already issued (it must be refused);
- LoteSeller: `yupana lote` on a file of a few requests, numbered from the same series as the API's, sometimes the
  same file twice; its facturas (and half its boletas) then sent by operation 3;
- Voider: `yupana anular --no-esperar` of an accepted voucher, sometimes one already voided;
- Summariser: `yupana resumen --no-esperar` (today's signed boletas not sent alone);
- Messenger: the gateway sandbox posts message.received (some twice, as gateways do) to the listener;
- Looker: RUC look-ups through the API (the registry sandbox answers);
- Killer: SIGKILL of the app every 20-40 s, then a restart;
- Faults: SUNAT's failures at random (500, answers lost, time-outs, rejections, tickets pending for a while).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from scripts.soak import checks
from scripts.soak.harness import ISSUER, ROOT, Api, AppDown, AppProcess, Stage, process_env

CUSTOMER = {"ruc": "20601030013", "razon_social": "DISTRIBUIDORA ANDINA S.A.C."}
PERSON = {"tipo_documento": "1", "numero_documento": "45678912", "razon_social": "MARÍA QUISPE MAMANI"}
GOODS = [("Arroz extra 5 kg", 24.5), ("Aceite vegetal 1 L", 9.9), ("Azúcar rubia 1 kg", 4.2), ("Leche evaporada", 3.8),
         ("Polo de algodón", 59), ("Servicio de instalación", 120)]
SERIES = {"01": "F001", "03": "B001"}
CLI_TIMEOUT_S = 180
GATEWAY_PREFIX = "3EB0SOAK"


def sender(number: int) -> str:
    """Message `number` comes from its own customer: its stored copies are found by sender (scripts/soak/__main__)."""
    return f"+5198{number % 10_000_000:07d}"


class Ledger:
    """What the soak did and was answered, shared by every actor (one lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.issued: dict[str, str] = {}
        self.reused: list[str] = []
        self.voidable: list[str] = []  # SERIE-NUMERO accepted by SUNAT on a send of their own
        self.acked: set[str] = set()
        self.errors: list[str] = []  # answers no client should ever get (an INTERNAL 500, a traceback)
        self._next = Counter[str]()

    def count(self, what: str, n: int = 1) -> None:
        with self.lock:
            self.counts[what] += n

    def number(self, serie: str) -> int:
        with self.lock:
            self._next[serie] += 1
            return self._next[serie]

    def error(self, what: str) -> None:
        with self.lock:
            self.errors.append(what)


def request(rng: random.Random, tipo: str, numero: int) -> dict[str, Any]:
    """Operation 1's request: a factura to a company or a boleta to a person, a few lines of the shop's goods."""
    lines = [{"descripcion": name, "cantidad": rng.randint(1, 3), "precio_unitario": price}
             for name, price in rng.sample(GOODS, rng.randint(1, 3))]
    body: dict[str, Any] = {"tipo": tipo, "serie": SERIES[tipo], "numero": numero, "emisor": {"ruc": ISSUER},
                            "items": lines}
    body["receptor"] = CUSTOMER if tipo == "01" else PERSON
    return body


def run_cli(ledger: Ledger, stage: Stage, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, env=process_env(stage.home),
                          capture_output=True, text=True, timeout=CLI_TIMEOUT_S)
    if "Traceback" in done.stderr:
        ledger.error(f"yupana {args[0]}: {done.stderr.strip().splitlines()[-1]}")
    elif done.returncode == 1 and args[0] != "lote":  # the refusal's words, counted (its numbers left out)
        said = (done.stderr.strip() or done.stdout.strip() or "?").splitlines()[-1]
        ledger.count(f"yupana {args[0]} dice: {re.sub(r'[0-9]+', 'N', said)[:90]}")
    return done


class Actor(threading.Thread):
    """A loop of one kind of work every `pause` seconds (random in the range) until `stop` is set."""

    pause = (1.0, 2.0)

    def __init__(self, shop: Shop, seed: int) -> None:
        super().__init__(name=type(self).__name__, daemon=True)
        self.shop = shop
        self.rng = random.Random(seed)
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.shop.stop.is_set():
                try:
                    self.step()
                except AppDown:
                    continue
                self.shop.stop.wait(self.rng.uniform(*self.pause))
        except BaseException as exc:  # noqa: BLE001 - reported in the table: the soak itself broke
            self.failure = exc
            self.shop.ledger.error(f"{self.name}: {exc!r}")

    def step(self) -> None:
        raise NotImplementedError


class Shop:
    """The actors over one stage and one app process, started and stopped together."""

    def __init__(self, stage: Stage, app: AppProcess, seed: int) -> None:
        self.stage = stage
        self.app = app
        self.api = Api(app, stage.token)
        self.ledger = Ledger()
        self.stop = threading.Event()
        self.work = tempfile.TemporaryDirectory(prefix="yupana-soak-lote-")
        self.actors: list[Actor] = [ApiSeller(self, seed + 1), ApiSeller(self, seed + 2), LoteSeller(self, seed + 3),
                                    Voider(self, seed + 4), Summariser(self, seed + 5), Messenger(self, seed + 6),
                                    Looker(self, seed + 7)]

    def start(self) -> None:
        for actor in self.actors:
            actor.start()

    def close(self, timeout: float = 240) -> None:
        self.stop.set()
        deadline = time.monotonic() + timeout
        for actor in self.actors:
            actor.join(max(1.0, deadline - time.monotonic()))
            if actor.is_alive():
                self.ledger.error(f"{actor.name} did not stop in time")
        self.api.close()
        self.work.cleanup()

    # ------------------------------------------------------------ what several actors do

    def issued(self, tipo: str, serie: str, numero: int, digest: str) -> None:
        with self.ledger.lock:
            self.ledger.issued[checks.key(tipo, serie, numero)] = digest

    def send(self, serie_numero: str, xml_firmado: str) -> None:
        """Operation 3; a voucher SUNAT accepted on its own may be voided later."""
        status, answer = self.api.call("POST", "/facturacion/enviar", {"xml_firmado": xml_firmado})
        if status == 200:
            code = answer["data"]["codigo_respuesta"]
            self.ledger.count(f"op3 código {code}")
            if code == "0":
                with self.ledger.lock:
                    self.ledger.voidable.append(serie_numero)
        else:
            self.answered_error("op3", status, answer)

    def answered_error(self, what: str, status: int, answer: dict[str, Any]) -> None:
        code = answer.get("error", {}).get("code", "?")
        self.ledger.count(f"{what} {code}")
        if status == 500:
            self.ledger.error(f"{what}: {answer.get('error', {}).get('message')}")


class ApiSeller(Actor):
    pause = (0.2, 0.8)

    def step(self) -> None:
        shop, rng = self.shop, self.rng
        tipo = rng.choice(("01", "03"))
        serie = SERIES[tipo]
        body = request(rng, tipo, shop.ledger.number(serie))
        status, answer = shop.api.call("POST", "/facturacion/xml", body)
        if status != 200:
            shop.answered_error("op1", status, answer)
            return
        shop.issued(tipo, serie, body["numero"], answer["data"]["hash"])
        shop.ledger.count("comprobantes por la API")
        status, signed = shop.api.call("POST", "/facturacion/firmar", {"xml": answer["data"]["xml"],
                                                                        "certificado_id": shop.stage.certificado_id})
        if status != 200:
            shop.answered_error("op2", status, signed)
            return
        if tipo == "01" or rng.random() < 0.5:
            shop.send(f"{serie}-{body['numero']}", signed["data"]["xml_firmado"])
        if rng.random() < 0.1:
            self.same_number(body, answer["data"]["hash"])

    def same_number(self, body: dict[str, Any], digest: str) -> None:
        """The same request again gives the same voucher; another content under that number is refused (409)."""
        shop = self.shop
        status, again = shop.api.call("POST", "/facturacion/xml", body)
        if status != 200 or again["data"]["hash"] != digest:
            shop.ledger.reused.append(checks.key(body["tipo"], body["serie"], body["numero"]) + " (repetida)")
        other = {**body, "items": [{"descripcion": "Otro producto", "cantidad": 7, "precio_unitario": 1.5}]}
        status, answer = shop.api.call("POST", "/facturacion/xml", other)
        shop.ledger.count(f"mismo número, otro contenido: {status}")
        if status == 200:
            shop.ledger.reused.append(checks.key(body["tipo"], body["serie"], body["numero"]))


class LoteSeller(Actor):
    pause = (6.0, 12.0)

    def step(self) -> None:
        shop, rng = self.shop, self.rng
        folder = Path(shop.work.name) / f"lote-{shop.ledger.number('lote')}"
        folder.mkdir()
        requests = []
        for _ in range(rng.randint(3, 8)):
            tipo = rng.choice(("01", "03"))
            requests.append(request(rng, tipo, shop.ledger.number(SERIES[tipo])))
        path = folder / "lote.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in requests), encoding="utf-8")
        for time_round in range(2 if rng.random() < 0.25 else 1):  # the same file again returns the same vouchers
            done = run_cli(shop.ledger, shop.stage, "lote", str(path), "--salida", str(folder / "xml"), "--quiet")
            self.read(done, requests, folder / "xml", first=time_round == 0)

    def read(self, done: subprocess.CompletedProcess[str], requests: list[dict[str, Any]], out: Path,
             first: bool) -> None:
        shop = self.shop
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{\"item\"")]
        shop.ledger.count(f"yupana lote salida {done.returncode}")
        for line in lines:
            body = requests[line["item"] - 1]
            if not line["success"]:
                shop.ledger.count(f"lote {line['error']['code']}")
                continue
            voucher_key = checks.key(body["tipo"], body["serie"], body["numero"])
            with shop.ledger.lock:
                known = shop.ledger.issued.get(voucher_key)
            if not first:
                if known != line["hash"]:
                    shop.ledger.reused.append(voucher_key + " (lote repetido)")
                continue
            shop.issued(body["tipo"], body["serie"], body["numero"], line["hash"])
            shop.ledger.count("comprobantes por yupana lote")
            if body["tipo"] == "01" or self.rng.random() < 0.5:
                xml = (out / line["nombre_archivo"]).read_text(encoding="utf-8")
                shop.send(f"{body['serie']}-{body['numero']}", xml)


class Voider(Actor):
    pause = (5.0, 10.0)

    def __init__(self, shop: Shop, seed: int) -> None:
        super().__init__(shop, seed)
        self.voided: list[str] = []

    def step(self) -> None:
        shop, rng = self.shop, self.rng
        with shop.ledger.lock:
            fresh = [v for v in shop.ledger.voidable if v not in self.voided]
        again = self.voided and rng.random() < 0.3
        if not fresh and not again:
            return
        target = rng.choice(self.voided) if again else rng.choice(fresh)
        if not again:
            self.voided.append(target)
        done = run_cli(shop.ledger, shop.stage, "anular", target, "--motivo", "VENTA CANCELADA", "--no-esperar")
        shop.ledger.count(f"yupana anular {'otra vez ' if again else ''}salida {done.returncode}")


class Summariser(Actor):
    pause = (12.0, 25.0)

    def step(self) -> None:
        done = run_cli(self.shop.ledger, self.shop.stage, "resumen", "--no-esperar")
        self.shop.ledger.count(f"yupana resumen salida {done.returncode}")


class Messenger(Actor):
    pause = (0.3, 1.0)

    def step(self) -> None:
        shop = self.shop
        number = shop.ledger.number("message")
        gateway_id = f"{GATEWAY_PREFIX}{number:07d}"
        times = 2 if self.rng.random() < 0.2 else 1
        answers = shop.stage.gateway.emit("message.received", "demo", sender=sender(number),
                                          body=f"Pedido {number}", message_id=gateway_id, times=times)
        shop.ledger.count("webhooks publicados", times)
        if any(200 <= status < 300 for status in answers):
            with shop.ledger.lock:
                shop.ledger.acked.add(gateway_id)


class Looker(Actor):
    pause = (0.5, 1.5)

    def step(self) -> None:
        shop = self.shop
        ruc = self.rng.choice(sorted(shop.stage.registry.records["ruc"]))
        status, answer = shop.api.call("GET", f"/ruc/{ruc}", None, shop.stop)
        if status == 200:
            shop.ledger.count("consultas RUC")
        else:
            shop.answered_error("ruc", status, answer)


class Killer(threading.Thread):
    """SIGKILL of the app at a random point every 20-40 s, and its restart, until `stop` is set."""

    def __init__(self, app: AppProcess, ledger: Ledger, seed: int, every: tuple[float, float] = (20.0, 40.0)) -> None:
        super().__init__(name="Killer", daemon=True)
        self.app = app
        self.ledger = ledger
        self.rng = random.Random(seed)
        self.every = every
        self.stop = threading.Event()
        self.kills = 0

    def run(self) -> None:
        while not self.stop.wait(self.rng.uniform(*self.every)):
            self.app.kill()
            self.kills += 1
            try:
                self.app.start()
            except RuntimeError as exc:
                self.ledger.error(f"restart: {exc}")
                return


FAULTS = {
    "sendBill 500": ("500", "sendBill"),
    "sendBill respuesta perdida (luego 1033)": ("drop_after_receive", "sendBill"),
    "sendBill sin respuesta a tiempo": ("timeout", "sendBill"),
    "sendBill rechazo 2800": ("reject:2800", "sendBill"),
    "getStatusCdr 500": ("500", "getStatusCdr"),
    "sendSummary 500": ("500", "sendSummary"),
    "sendSummary respuesta perdida": ("drop_after_receive", "sendSummary"),
    "getStatus 500": ("500", "getStatus"),
    "getStatus respuesta perdida": ("drop_after_receive", "getStatus"),
}
PENDING_TICKETS = "tickets pendientes (98) unas consultas"


class Faults(threading.Thread):
    """One SUNAT fault every 1.5-4 s, chosen at random; tickets stay pending (98) for a few polls for 10 s now and
    then. `settle()` takes back whatever is still queued."""

    def __init__(self, stage: Stage, ledger: Ledger, seed: int) -> None:
        super().__init__(name="Faults", daemon=True)
        self.sunat = stage.sunat
        self.ledger = ledger
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.pending_until = 0.0

    def run(self) -> None:
        while not self.stop.wait(self.rng.uniform(1.5, 4.0)):
            if self.pending_until and time.monotonic() > self.pending_until:
                self.sunat.summaries.configure(pending_polls=0)
                self.pending_until = 0.0
            name = self.rng.choice([*FAULTS, PENDING_TICKETS])
            if name == PENDING_TICKETS:
                self.sunat.summaries.configure(pending_polls=self.rng.randint(1, 4))
                self.pending_until = time.monotonic() + 10
            else:
                mode, operation = FAULTS[name]
                self.sunat.fail_next(mode, 1, operation)
            self.ledger.count(f"fallo: {name}")

    def settle(self) -> None:
        self.stop.set()
        self.join(10)
        self.sunat.reset_failures()
        self.sunat.summaries.configure(pending_polls=0, hold=False)
        self.sunat.release()
