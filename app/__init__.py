"""Yupana: electronic vouchers for SUNAT, messaging and registry lookups on the desktop."""

__version__ = "0.1.0"
APP_NAME = "Yupana"
