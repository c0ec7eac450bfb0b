"""Messaging: WhatsApp gateways, the embedded webhook listener, the inbox and signed event delivery.

- `phone`: numbers checked and normalised;          - `store`: the tables (stores only store);
- `gateways`: one registered class per gateway (Evolution API v2, Meta Cloud API, another Yupana) and the
  registry the service, the listener's routes and the Mensajes form are generated from;
- `service`: operations 4 and 5, instances, ingest;  - `listener`: the webhook receiver (FastAPI);
- `forwarding`: the durable, signed outbox to subscribers;  - `events`: event names, defined once.
"""
