"""Where a guía goes and with which credentials: a GreChannel for one submission of an environment.

- producción: SUNAT's GRE platform (settings `sunat_gre_url`, `sunat_gre_auth_url`) with the company's API
  credentials (client_id and client_secret generated in SOL, kept in the secret store) and its SOL user and password;
- sandbox: the running GRE sandbox and its public test credentials;
- beta: SUNAT publishes no beta for guías: the running sandbox, or a third party's test server set by hand
  (`sunat_gre_url_beta`, logged as not SUNAT's).

One OAuth token per credentials, kept across submissions until it expires (sunat_oauth.SunatTokens).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from app.core.errors import not_configured
from app.core.invoicing.gre_channel import GreChannel
from app.core.invoicing.gre_rest import Credentials, GreClient
from app.core.invoicing.sunat_oauth import (
    SANDBOX_CLIENT_ID,
    SANDBOX_CLIENT_SECRET,
    SunatTokens,
    keep_api_credentials,
    stored_api_credentials,
)
from app.core.platform.addresses import Addresses
from app.core.platform.environments import BETA, PRODUCCION
from app.core.platform.secrets import SecretStore
from app.core.storage.ports.gre_tickets import GreTicketRepository

log = logging.getLogger(__name__)

SolCredentials = Callable[[str, str], tuple[str, str]]  # (ruc, ambiente) -> (usuario, clave)


SECRETS = "gre"  # the credentials' names in the secret store (sunat_oauth.api_secret_names)


class GreClients:
    def __init__(self, addresses: Addresses, secrets: SecretStore, sol_credentials: SolCredentials,
                 tickets: GreTicketRepository) -> None:
        self.addresses = addresses
        self.secrets = secrets
        self.sol_credentials = sol_credentials
        self.tickets = tickets
        self.tokens = SunatTokens(lambda: float(addresses.settings.get("sunat_timeout_s")))

    def set_api_credentials(self, ruc: str, client_id: str, client_secret: str) -> None:
        """Keep a company's GRE API credentials in the secret store (encrypted; never a setting)."""
        keep_api_credentials(self.secrets, SECRETS, ruc, client_id, client_secret, "guías")

    def channel(self, environment: str, ruc: str) -> GreChannel:
        api, auth = self._urls(environment)
        credentials = self._credentials(environment, ruc)
        return GreChannel(GreClient(api, self.tokens.oauth(auth, credentials)), self.tickets, environment,
                          float(self.addresses.settings.get("sunat_gre_wait_s")))

    def close(self) -> None:
        self.tokens.close()

    def _urls(self, environment: str) -> tuple[str, str]:
        if environment == PRODUCCION:
            return (self.addresses.endpoint("sunat_gre_url", environment),
                    self.addresses.endpoint("sunat_gre_auth_url", environment))
        by_hand = self.addresses.settings.get("sunat_gre_url_beta") if environment == BETA else ""
        if by_hand:
            log.warning("guías de beta a %s: no es un servidor de SUNAT", by_hand)
            return by_hand, by_hand
        running = self.addresses.sandbox_endpoints.get("sunat_gre_url") or ""
        if running:
            return running, running
        if environment == BETA:
            raise not_configured("SUNAT no tiene un entorno beta para guías de remisión: inicie el sandbox de guías "
                                 "(yupana sandbox) o indique un servidor de pruebas en «sunat_gre_url_beta».")
        raise not_configured("El sandbox de guías de remisión no está en marcha: active «Modo sandbox» o inicie "
                             "«yupana sandbox --configure».")

    def _credentials(self, environment: str, ruc: str) -> Credentials:
        stored = stored_api_credentials(self.secrets, SECRETS, ruc)
        ambiente = PRODUCCION if environment == PRODUCCION else BETA
        usuario, clave = self.sol_credentials(ruc, ambiente)
        if stored is None:
            if environment == PRODUCCION:
                raise not_configured(f"La empresa {ruc} no tiene credenciales de la API de guías (client_id y "
                                     "client_secret, generadas en SOL): regístrelas antes de enviar guías.")
            return Credentials(SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, f"{ruc}{usuario}", clave)
        return Credentials(*stored, f"{ruc}{usuario}", clave)
