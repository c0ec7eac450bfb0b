"""Messaging: WhatsApp gateways, the embedded webhook listener, the inbox and signed event delivery.

- `phone`: numbers checked and normalised;          - `store`: the tables (stores only store);
- `gateways`: Evolution API v2, Meta Cloud API, another Yupana (this contract);
- `service`: operations 4 and 5, instances, ingest;  - `listener`: the webhook receiver (FastAPI);
- `forwarding`: the durable, signed outbox to subscribers;  - `events`: event names, defined once.
"""
