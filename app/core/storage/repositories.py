"""The repositories an engine hands the engine's parts: one of each aggregate, typed by its port."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.storage.ports.catalog import CustomerRepository, ProductRepository, TransportRepository
from app.core.storage.ports.certificates import CertificateRepository
from app.core.storage.ports.drafts import DraftRepository
from app.core.storage.ports.gre_tickets import GreTicketRepository
from app.core.storage.ports.messaging import MessagingRepository
from app.core.storage.ports.platform import (
    ApiTokenRepository,
    CompanyRepository,
    DeskTurnRepository,
    SandboxEndpointRepository,
    SecretRepository,
    SettingsRepository,
)
from app.core.storage.ports.registry import PadronPointerRepository, RegistryCacheRepository
from app.core.storage.ports.submissions import SubmissionRepository
from app.core.storage.ports.summaries import SummaryRepository
from app.core.storage.ports.vouchers import VoucherRepository


@dataclass(frozen=True)
class Repositories:
    """One engine's repository of each aggregate (the ports in app/core/storage/ports)."""

    settings: SettingsRepository
    companies: CompanyRepository
    secrets: SecretRepository
    api_tokens: ApiTokenRepository
    sandbox_endpoints: SandboxEndpointRepository
    certificates: CertificateRepository
    customers: CustomerRepository
    products: ProductRepository
    drafts: DraftRepository
    messaging: MessagingRepository
    padron_pointer: PadronPointerRepository
    registry_cache: RegistryCacheRepository
    submissions: SubmissionRepository
    summaries: SummaryRepository
    vouchers: VoucherRepository
    desk_turns: DeskTurnRepository
    gre_tickets: GreTicketRepository
    transport: TransportRepository
