"""The shared platform under the three groups: storage, settings, secrets, companies, environments,
events, logs, paths and the local HTTP layer. Nothing here knows invoicing, messaging or lookups."""
