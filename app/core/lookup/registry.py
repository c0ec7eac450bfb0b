"""Operations 6-8: RUC, carnet de extranjería and plate lookups.

Order of every lookup (docs/registry.md): input check (400) → the current environment's cache while
fresh (`registry_cache_ttl_s`) → the offline register (RUC only) → the providers of `registry_providers`,
in order. A RUC found in the register is answered from it at once when no provider is configured;
with providers, their answer adds `tipo_contribuyente` and `actividad_economica` (the register
lacks them), and when every provider fails the register's answer still stands. When neither the
register nor a provider answers, an expired cache entry is served marked `desactualizado`, else
the providers' error (503 unreachable or rate-limited, 504 time-out, 502 bad answer or token).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from app.core.contract import CeRecord, PlacaRecord, RucRecord
from app.core.errors import ErrorCode, YupanaError, not_configured, not_found
from app.core.lookup.padron import PadronRegister
from app.core.lookup.providers import RECORD_FIELDS, WHAT, Kind, Provider, ProviderHub
from app.core.platform.addresses import Addresses
from app.core.platform.identifiers import check_ruc, normalize_ce, normalize_plate
from app.core.platform.ubigeo import lookup as ubigeo_lookup
from app.core.storage.ports.registry import RegistryCacheRepository

log = logging.getLogger(__name__)


MODELS = {"ruc": RucRecord, "ce": CeRecord, "placa": PlacaRecord}


def now() -> float:
    """Seconds since the epoch; tests replace it to age the cache."""
    return time.time()


# ------------------------------------------------------------------ the three operations

class Registry:
    """The three lookups over the current environment's cache, the offline register and the providers."""

    def __init__(self, cache: RegistryCacheRepository, addresses: Addresses, providers: ProviderHub,
                 padron: PadronRegister) -> None:
        self._cache = cache
        self.settings = addresses.settings
        self.addresses = addresses
        self.providers = providers
        self.padron = padron

    def ruc(self, numero: str) -> RucRecord:
        ruc = check_ruc(numero, "numero")
        return self._lookup("ruc", ruc, self.register_record(ruc))

    def ce(self, numero: str) -> CeRecord:
        return self._lookup("ce", normalize_ce(numero, "numero"), None)

    def placa(self, numero: str) -> PlacaRecord:
        return self._lookup("placa", normalize_plate(numero, "numero"), None)

    def _lookup(self, kind: Kind, numero: str, from_register: dict[str, Any] | None) -> Any:
        model = MODELS[kind]
        cached = self._cache_get(kind, numero)
        if cached is not None and cached[1]:
            return model(**cached[0], fuente="cache")
        providers = self.providers.configured()
        if from_register is not None and not providers:
            return model(**from_register)
        try:
            name, record = self._ask_providers(providers, kind, numero)
        except YupanaError as exc:
            if from_register is not None:
                log.info("providers failed for %s %s (%s); answering from the register", kind, numero, exc.code)
                return model(**from_register)
            if cached is not None and exc.code != ErrorCode.NOT_FOUND:
                return model(**cached[0], fuente="cache", desactualizado=True)
            if exc.code == ErrorCode.NOT_CONFIGURED and kind == "ruc" and self.padron.is_loaded():
                raise not_found("numero", f"El RUC «{numero}» no está en el padrón.") from None
            raise
        if from_register is not None:
            record = {**from_register, **{k: v for k, v in record.items() if v is not None}}
            record.pop("fuente", None)
        record[RECORD_FIELDS[kind][0]] = numero
        self._cache_put(kind, numero, record)
        return model(**record, fuente=name)

    def _ask_providers(self, providers: list[Provider], kind: Kind, numero: str) -> tuple[str, dict[str, Any]]:
        """The first provider's answer, in order; a 404 from any of them wins over the others' failures."""
        if not providers:
            raise not_configured(f"No se puede consultar {WHAT[kind]} «{numero}»: no hay un proveedor de consultas "
                                 "configurado (registry_providers)" + (" ni un padrón importado" if kind == "ruc" else "")
                                 + ". Para probar sin internet, inicie «yupana sandbox --configure» en otra ventana"
                                 + (" o importe el padrón con «yupana padron import»." if kind == "ruc" else "."))
        failure: YupanaError | None = None
        missing: YupanaError | None = None
        for provider in providers:
            try:
                return provider.name, self.providers.fetch(provider, kind, numero)
            except YupanaError as exc:
                log.info("provider %s: %s %s -> %s", provider.name, kind, numero, exc.code)
                if exc.code == ErrorCode.NOT_FOUND:
                    missing = exc
                else:
                    failure = exc
        raise missing or failure or not_found("numero", f"No se encontró {WHAT[kind]} «{numero}».")

    # ------------------------------------------------------------------ the register's record

    def register_record(self, ruc: str) -> dict[str, Any] | None:
        """The contract's fields of `ruc` from the offline register, or None when it is not there."""
        fields = self.padron.find(ruc)
        if fields is None:
            return None
        (_ruc, nombre, estado, condicion, ubigeo, tipo_via, nombre_via, codigo_zona, tipo_zona, numero, interior, lote,
         departamento_interior, manzana, kilometro) = fields
        place = ubigeo_lookup(ubigeo)
        return {
            "ruc": ruc, "razon_social": nombre, "tipo_contribuyente": None, "estado": estado, "condicion": condicion,
            "direccion": compose_address(tipo_via, nombre_via, numero, interior, departamento_interior, manzana, lote,
                                         kilometro, tipo_zona, codigo_zona),
            "departamento": place.departamento.upper() if place else None,
            "provincia": place.provincia.upper() if place else None,
            "distrito": place.distrito.upper() if place else None,
            "actividad_economica": None, "fuente": "padron",
        }

    # ------------------------------------------------------------------ cache

    def _cache_get(self, kind: Kind, numero: str) -> tuple[dict[str, Any], bool] | None:
        """(record, fresh) from the cache, or None."""
        cached = self._cache.get(self.addresses.current(), kind, numero)
        if cached is None:
            return None
        fresh = now() - cached.fetched_at < self.settings.get_int("registry_cache_ttl_s")
        return cached.record, fresh

    def cache_fresh_until(self, kind: Kind, numero: str) -> float | None:
        """When the current environment's cached answer for `numero` stops being fresh (`now()` seconds), or None
        when there is none. For the local API, which keeps a copy of the answer in memory for no longer than that."""
        fetched_at = self._cache.fetched_at(self.addresses.current(), kind, numero)
        return None if fetched_at is None else fetched_at + self.settings.get_int("registry_cache_ttl_s")

    def _cache_put(self, kind: Kind, numero: str, record: dict[str, Any]) -> None:
        fields = {k: v for k, v in record.items() if k in RECORD_FIELDS[kind]}
        self._cache.put(self.addresses.current(), kind, numero, fields, now())


def compose_address(tipo_via: str | None, nombre_via: str | None, numero: str | None, interior: str | None,
                     departamento: str | None, manzana: str | None, lote: str | None, kilometro: str | None,
                     tipo_zona: str | None, codigo_zona: str | None) -> str | None:
    """SUNAT's way of writing a fiscal address: «AV. GRAU NRO. 123 INT. 4 URB. SANTA ROSA»."""
    parts = [tipo_via, nombre_via]
    for label, value in (("NRO.", numero), ("INT.", interior), ("DPTO.", departamento), ("MZA.", manzana),
                         ("LOTE", lote), ("KM.", kilometro)):
        if value:
            parts.append(f"{label} {value}")
    parts += [tipo_zona, codigo_zona]
    text = " ".join(p for p in parts if p)
    return text or None
