"""Registry lookups (the contract's operations 6-8): SUNAT's padrón, the providers and the registry
operations with their cache."""
