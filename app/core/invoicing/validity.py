"""The consulta integrada de validez: whether any voucher (ours or a supplier's) is valid for SUNAT, through SUNAT's
REST API («Manual de consulta integrada de comprobante de pago por servicio web»).

- Token: SUNAT's OAuth with the client credentials grant, scope VALIDITY_SCOPE (app.core.invoicing.sunat_oauth,
  the home the guías share), with the querying company's API credentials generated in SOL («Credenciales de API
  SUNAT»).
- Query: POST {api}/contribuyente/contribuyentes/{RUC of who asks}/validarcomprobante with
  {numRuc: the issuer's RUC, codComp, numeroSerie, numero, fechaEmision: DD/MM/AAAA, monto: "118.00" (when given)}
  → {success: true, message, data: {estadoCp, estadoRuc, condDomiRuc, observaciones: [...]}}; a query SUNAT cannot
  answer → {success: false, message, errorCode}; a token unknown or expired → 401 (renewed once).

Where: SUNAT's addresses (settings `sunat_validez_url`, `sunat_validez_auth_url`) in beta and production — SUNAT has
one consulta, of its real records —, the running SUNAT sandbox in the sandbox environment. Nothing is stored.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal

from app.core.errors import ErrorCode, ErrorDetail, YupanaError, not_configured
from app.core.invoicing import sunat_catalogues as catalogues
from app.core.invoicing.sunat_oauth import (
    SANDBOX_CLIENT_ID,
    SANDBOX_CLIENT_SECRET,
    VALIDITY_SCOPE,
    Credentials,
    SunatOAuth,
    SunatRefused,
    SunatTokens,
    SunatUnavailable,
    json_body,
    keep_api_credentials,
    stored_api_credentials,
)
from app.core.platform import environments
from app.core.platform.addresses import Addresses
from app.core.platform.secrets import SecretStore

PRODUCTION_API = "https://api.sunat.gob.pe/v1"
SECRETS = "validez"  # the credentials' names in the secret store (sunat_oauth.api_secret_names)


@dataclass(frozen=True)
class ValidityQuery:
    ruc: str  # the issuer's
    tipo: str  # codComp
    serie: str
    numero: int
    fecha: dt.date
    total: Decimal | None = None

    def body(self) -> dict[str, str]:
        body = {"numRuc": self.ruc, "codComp": self.tipo, "numeroSerie": self.serie, "numero": str(self.numero),
                "fechaEmision": self.fecha.strftime("%d/%m/%Y")}
        if self.total is not None:
            body["monto"] = f"{self.total:.2f}"
        return body


@dataclass(frozen=True)
class ValidityAnswer:
    estado_cp: str
    estado_ruc: str
    cond_domicilio: str
    observaciones: list[str] = field(default_factory=list)


class ValidityClient:
    """SUNAT's consulta integrada with one company's token."""

    def __init__(self, api_url: str, oauth: SunatOAuth) -> None:
        self.api = api_url.rstrip("/")
        self.oauth = oauth

    def check(self, consultante: str, query: ValidityQuery) -> ValidityAnswer:
        url = f"{self.api}/contribuyente/contribuyentes/{consultante}/validarcomprobante"
        response = self.oauth.call("POST", url, query.body())
        answer = json_body(response)
        if answer.get("success") is not True:
            raise SunatRefused(response.status_code, str(answer.get("errorCode") or ""),
                               str(answer.get("message") or "consulta no atendida"))
        data = answer.get("data")
        if not isinstance(data, dict) or str(data.get("estadoCp", "")) not in catalogues.VOUCHER_VALIDITY:
            raise SunatUnavailable("SUNAT respondió sin el estado del comprobante")
        notes = data.get("observaciones")
        return ValidityAnswer(str(data["estadoCp"]), str(data.get("estadoRuc") or ""),
                              str(data.get("condDomiRuc") or ""),
                              [str(note).strip().lstrip("- ").strip() for note in notes if str(note).strip()]
                              if isinstance(notes, list) else [])


class ValidityQueries:
    """The consulta de validez of the environment in use, with the querying company's credentials; one OAuth token
    per credentials, kept across queries until it expires."""

    def __init__(self, addresses: Addresses, secrets: SecretStore) -> None:
        self.addresses = addresses
        self.secrets = secrets
        self.tokens = SunatTokens(lambda: float(addresses.settings.get("sunat_timeout_s")))

    def set_api_credentials(self, ruc: str, client_id: str, client_secret: str) -> None:
        keep_api_credentials(self.secrets, SECRETS, ruc, client_id, client_secret, "consulta")

    def check(self, consultante: str, query: ValidityQuery) -> ValidityAnswer:
        environment = self.addresses.current()
        api = self.addresses.endpoint("sunat_validez_url", environment)
        auth = self.addresses.endpoint("sunat_validez_auth_url", environment)
        if not api or not auth:
            raise environments.sandbox_not_running("el SUNAT de prueba")
        oauth = self.tokens.oauth(auth, self._credentials(environment, consultante), VALIDITY_SCOPE)
        name = f"{query.serie}-{query.numero}"
        try:
            return ValidityClient(api, oauth).check(consultante, query)
        except SunatRefused as refused:
            raise YupanaError(ErrorCode.UPSTREAM_REJECTED,
                              f"SUNAT no atendió la consulta de validez de {name}: {refused.message}"
                              f"{f' (código {refused.code})' if refused.code else ''}.",
                              [ErrorDetail("numero", refused.message, sunat_code=refused.code or None)]) from refused
        except SunatUnavailable as failure:
            raise YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE,
                              f"No se pudo consultar a SUNAT la validez de {name} ({failure}): inténtelo más tarde."
                              ) from failure

    def close(self) -> None:
        self.tokens.close()

    def _credentials(self, environment: str, ruc: str) -> Credentials:
        if environment == environments.SANDBOX:
            return Credentials(SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET)
        stored = stored_api_credentials(self.secrets, SECRETS, ruc)
        if stored is None:
            raise not_configured(f"La empresa {ruc} no tiene credenciales de la API de consulta de SUNAT (client_id "
                                 "y client_secret, generadas en SOL: «Credenciales de API SUNAT»): regístrelas con "
                                 "`yupana sol api RUC --servicio validez`.")
        return Credentials(*stored)
