"""A registry provider on loopback that speaks both provider shapes, with failures on demand.

- contract shape (the "yupana" provider): `GET /api/v1/{ruc|ce|placa}/{numero}` → {success, data};
- Factiliza shape: `GET /v1/{ruc|cee|placa}/info/{numero}` → {status, success, message, data};
- both want `Authorization: Bearer <token>` (TOKEN unless given); a wrong token answers 401;
- seeded with a few hundred generated records (`records`), the same for a given seed;
- failures on demand: `fail_next(mode, count)` in-process, or `POST /_control/fail {"mode", "count"}`
  out of process; modes "401", "404", "429", "500" and "slow" (answers after `slow_seconds`).
"""

from __future__ import annotations

import json
import random
import threading
from typing import Any, ClassVar
from urllib.parse import unquote

from app.core.sandbox_kit import ruc_check_digit, token_secret_name, ubigeo_table

from .base import QuietHandler, Sandbox

TOKEN = "sandbox-registry-token"
MODES = ("401", "404", "429", "500", "slow")
FACTILIZA_KINDS = {"ruc": "ruc", "cee": "ce", "placa": "placa"}

_NAMES = ["PEÑA", "QUISPE", "MAMANI", "HUAMÁN", "CONDORI", "ROJAS", "CASTAÑEDA", "FLORES", "NÚÑEZ", "YUPANQUI"]
_GIVEN = ["MARÍA", "JOSÉ", "ANA", "LUIS", "CARMEN", "JORGE", "ROSA", "MIGUEL"]
_TRADES = ["COMERCIAL", "INVERSIONES", "SERVICIOS", "TRANSPORTES", "FERRETERÍA"]
# A RUC's first two digits say its kind: 10 a person with a business, 20 a company (SUNAT's rule).
_COMPANY_TYPES = [("SOCIEDAD ANONIMA CERRADA", "S.A.C."), ("EMPRESA INDIVIDUAL DE RESP. LTDA", "E.I.R.L."),
                  ("SOCIEDAD ANONIMA", "S.A.")]
_PERSON_TYPE = "PERSONA NATURAL CON NEGOCIO"
# The RUC of the README's examples answers in the sandbox too, so they work as written.
EXAMPLE_RUC = "20100066603"
_ACTIVITIES = ["VENTA AL POR MENOR EN COMERCIOS NO ESPECIALIZADOS", "TRANSPORTE DE CARGA POR CARRETERA",
               "ACTIVIDADES DE RESTAURANTES", "CONSTRUCCIÓN DE EDIFICIOS"]
_COUNTRIES = ["VENEZOLANA", "COLOMBIANA", "ARGENTINA", "CHILENA", "ESPAÑOLA", "CHINA"]
_BRANDS = [("TOYOTA", "YARIS"), ("HYUNDAI", "ACCENT"), ("KIA", "RIO"), ("NISSAN", "SENTRA"), ("HONDA", "CB190R")]
_COLORS = ["BLANCO", "NEGRO", "ROJO", "PLATA", "AZUL"]


def generate_records(count: int = 100, seed: int = 11) -> dict[str, dict[str, dict[str, Any]]]:
    """`count` RUC, CE and plate records each, in the contract's shape, keyed by number."""
    rng = random.Random(seed)
    places = list(ubigeo_table().values())
    out: dict[str, dict[str, dict[str, Any]]] = {"ruc": {}, "ce": {}, "placa": {}}
    while len(out["ruc"]) < count:
        first10 = rng.choice(["20", "10"]) + f"{rng.randrange(10 ** 8):08d}"
        place = rng.choice(places)
        ruc = first10 + ruc_check_digit(first10)
        if first10.startswith("10"):
            name, kind = f"{rng.choice(_NAMES)} {rng.choice(_NAMES)} {rng.choice(_GIVEN)}", _PERSON_TYPE
        else:
            kind, suffix = rng.choice(_COMPANY_TYPES)
            name = f"{rng.choice(_TRADES)} {rng.choice(_NAMES)} {suffix}"
        out["ruc"][ruc] = {
            "ruc": ruc, "razon_social": name,
            "tipo_contribuyente": kind, "estado": "ACTIVO", "condicion": "HABIDO",
            "direccion": f"AV. {rng.choice(_NAMES)} NRO. {rng.randrange(1, 999)}",
            "departamento": place.departamento.upper(), "provincia": place.provincia.upper(),
            "distrito": place.distrito.upper(), "actividad_economica": rng.choice(_ACTIVITIES)}
    out["ruc"].setdefault(EXAMPLE_RUC, {
        "ruc": EXAMPLE_RUC, "razon_social": "EMPRESA DE EJEMPLO YUPANA S.A.C.",
        "tipo_contribuyente": _COMPANY_TYPES[0][0], "estado": "ACTIVO", "condicion": "HABIDO",
        "direccion": "AV. LIMA NRO. 123", "departamento": "LIMA", "provincia": "LIMA", "distrito": "LIMA",
        "actividad_economica": _ACTIVITIES[0]})
    while len(out["ce"]) < count:
        ce = f"{rng.randrange(10 ** 8, 10 ** 9):09d}"
        nombres, paterno, materno = rng.choice(_GIVEN), rng.choice(_NAMES), rng.choice(_NAMES)
        out["ce"][ce] = {"ce": ce, "nombre_completo": f"{nombres} {paterno} {materno}", "nombres": nombres,
                         "apellido_paterno": paterno, "apellido_materno": materno,
                         "nacionalidad": rng.choice(_COUNTRIES), "estado": "RESIDENTE"}
    while len(out["placa"]) < count:
        placa = "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(3)) + f"{rng.randrange(1000):03d}"
        marca, modelo = rng.choice(_BRANDS)
        out["placa"][placa] = {"placa": placa, "marca": marca, "modelo": modelo, "color": rng.choice(_COLORS),
                               "año": rng.randrange(1995, 2026), "clase": "AUTOMOVIL",
                               "serie": f"9BR{rng.randrange(10 ** 13):013d}", "motor": f"2NZ{rng.randrange(10 ** 7):07d}"}
    return out


def factiliza_data(kind: str, record: dict[str, Any]) -> dict[str, Any]:
    """One of our records written the way a Factiliza-style API answers it."""
    if kind == "ruc":
        return {"numero": record["ruc"], "nombre_o_razon_social": record["razon_social"],
                "tipo_contribuyente": record["tipo_contribuyente"], "estado": record["estado"],
                "condicion": record["condicion"], "departamento": record["departamento"],
                "provincia": record["provincia"], "distrito": record["distrito"], "direccion": record["direccion"],
                "direccion_completa": f"{record['direccion']}, {record['distrito']} - {record['provincia']} - "
                                      f"{record['departamento']}",
                "actividad_economica": record["actividad_economica"]}
    if kind == "ce":
        return {"numero": record["ce"], "nombres": record["nombres"], "apellido_paterno": record["apellido_paterno"],
                "apellido_materno": record["apellido_materno"], "nacionalidad": record["nacionalidad"],
                "calidad_migratoria": record["estado"]}
    return {"placa": record["placa"], "marca": record["marca"], "modelo": record["modelo"], "color": record["color"],
            "anio": str(record["año"]), "clase": record["clase"], "serie": record["serie"], "motor": record["motor"]}


class RegistryHandler(QuietHandler):
    sandbox: RegistrySandbox

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        parts = [unquote(p) for p in self.path.split("?")[0].strip("/").split("/")]
        if len(parts) == 4 and parts[:2] == ["api", "v1"] and parts[2] in ("ruc", "ce", "placa"):
            self._lookup("contract", parts[2], parts[3])
        elif len(parts) == 4 and parts[0] == "v1" and parts[1] in FACTILIZA_KINDS and parts[2] == "info":
            self._lookup("factiliza", FACTILIZA_KINDS[parts[1]], parts[3])
        else:
            self._send("contract", 404, "Ruta desconocida.")

    def do_POST(self) -> None:  # noqa: N802
        if self.path.rstrip("/") != "/_control/fail":
            self._send("contract", 404, "Ruta desconocida.")
            return
        try:
            body = json.loads(self.read_body() or b"{}")
            self.sandbox.fail_next(str(body["mode"]), int(body.get("count", 1)))
        except (ValueError, KeyError, TypeError) as exc:
            self._send("contract", 400, f"Solicitud de control no válida: {exc}")
            return
        self._send("contract", 200, "ok", {"mode": body["mode"], "count": int(body.get("count", 1))})

    def _lookup(self, shape: str, kind: str, numero: str) -> None:
        self.sandbox.count_request()
        failure = self.sandbox.take_failure()
        if failure == "slow":
            self.sandbox.wait_slow()
            failure = None
        if failure in ("401", "429", "500"):
            self._send(shape, int(failure), {"401": "Token inválido.", "429": "Demasiadas solicitudes.",
                                             "500": "Error interno."}[failure])
            return
        if self.headers.get("Authorization") != f"Bearer {self.sandbox.token}":
            self._send(shape, 401, "Token inválido.")
            return
        record = self.sandbox.records[kind].get(numero.upper())
        if failure == "404" or record is None:
            self._send(shape, 404, "No se encontraron resultados.")
            return
        self._send(shape, 200, "Exito", record if shape == "contract" else factiliza_data(kind, record))

    def _send(self, shape: str, status: int, message: str, data: dict[str, Any] | None = None) -> None:
        ok = status == 200
        if shape == "factiliza":
            body = {"status": status, "success": ok, "message": message, "data": data if ok else None}
        elif ok:
            body = {"success": True, "data": data}
        else:
            body = {"success": False, "error": {"code": str(status), "message": message, "details": []}}
        self.reply(status, json.dumps(body, ensure_ascii=False).encode())


class RegistrySandbox(Sandbox):
    """Both provider shapes on one loopback server; see the module's docstring."""

    name: ClassVar[str] = "registry"
    handler = RegistryHandler

    def __init__(self, host: str = "127.0.0.1", port: int = 0, records_per_kind: int = 100, token: str = TOKEN,
                 slow_seconds: float = 3.0) -> None:
        super().__init__(host, port)
        self.records_per_kind = records_per_kind
        self.token = token
        self.slow_seconds = slow_seconds
        self._lock = threading.Lock()
        self._released = threading.Event()  # lets held "slow" answers go (release() or stop())
        self.slow_received = threading.Event()  # set when a "slow" lookup arrives (tests wait on it)
        self.reset()

    def reset(self) -> None:
        """Back to the seeded records, no pending failures and a zero request count."""
        with self._lock:
            self.records = generate_records(self.records_per_kind)
            self.requests = 0
            self._failures: list[str] = []

    @property
    def contract_url(self) -> str:
        return self.base_url

    @property
    def factiliza_url(self) -> str:
        return self.base_url + "/v1"

    def fail_next(self, mode: str, count: int = 1) -> None:
        """The next `count` lookups fail with `mode` ("401", "404", "429", "500" or "slow")."""
        if mode not in MODES:
            raise ValueError(f"modo desconocido {mode!r}; válidos: {', '.join(MODES)}")
        with self._lock:
            self._failures += [mode] * count
        if mode == "slow":
            self._released.clear()  # held again until released, after an earlier release()

    def take_failure(self) -> str | None:
        with self._lock:
            return self._failures.pop(0) if self._failures else None

    def count_request(self) -> None:
        with self._lock:
            self.requests += 1

    def wait_slow(self) -> None:
        """Hold a "slow" answer for `slow_seconds`, or until `release()` or the sandbox stops."""
        self.slow_received.set()
        self._released.wait(self.slow_seconds)

    def release(self) -> None:
        """Let held "slow" answers go now."""
        self._released.set()

    def start(self) -> str:
        self._released.clear()
        return super().start()

    def stop(self) -> None:
        self._released.set()
        super().stop()

    def endpoints(self) -> dict[str, str]:
        """Both provider shapes, with this sandbox's public test token (not a secret: it is in this file)."""
        return {"registry_yupana_url": self.contract_url, "registry_factiliza_url": self.factiliza_url,
                "registry_providers": "factiliza,yupana",
                token_secret_name("factiliza"): self.token, token_secret_name("yupana"): self.token}
