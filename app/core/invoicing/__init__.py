"""Electronic vouchers for SUNAT (the contract's operations 1-3): the pure UBL builder and XML signer,
the SOAP client, CDRs, the durable outbox, batches, summaries and the printed voucher."""
