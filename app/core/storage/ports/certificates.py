"""Port of the certificate store: each certificate's metadata and public certificate (its private key lives in the
secret store), and the default certificate of each RUC. Rows come back as plain dicts of the columns (`id`,
`subject`, `ruc`, `issuer`, `serial`, `not_before`, `not_after` — ISO texts —, `fingerprint_sha256`,
`certificate_pem`, `is_test`, `created_at`); app/core/invoicing/certificates.py makes them typed."""

from __future__ import annotations

from typing import Any, Protocol


class DuplicateCertificate(Exception):
    """A certificate with this id (or fingerprint) is stored already."""


class CertificateRepository(Protocol):
    def add(self, certificate: dict[str, Any]) -> None:
        """Store a certificate (every column but `created_at`). Raises DuplicateCertificate when its id or
        fingerprint is stored already."""
        ...

    def find(self, certificate_id: str) -> dict[str, Any] | None: ...

    def all(self, ruc: str | None = None) -> list[dict[str, Any]]:
        """Every certificate (of this RUC when given), by RUC then the latest expiry first."""
        ...

    def certificate_pem(self, certificate_id: str) -> str | None: ...

    def latest_of(self, ruc: str) -> str | None:
        """The id of the RUC's certificate that expires last, None when it has none."""
        ...

    def delete(self, certificate_id: str) -> None:
        """Forget a certificate, and its mark as its RUC's default."""
        ...

    def default_ids(self) -> set[str]:
        """The ids of every RUC's default certificate."""
        ...

    def default_of(self, ruc: str) -> str | None: ...

    def propose_default(self, ruc: str, certificate_id: str) -> None:
        """Make this certificate the RUC's default unless the RUC has one."""
        ...

    def set_default(self, ruc: str, certificate_id: str) -> None: ...
