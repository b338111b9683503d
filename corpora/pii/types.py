"""The PII types this package detects. A light module: recipe validation and the replace stage need the
names without importing presidio (whose import pulls in transformers, seconds per process)."""

ALL_TYPES = ("PERSON", "PHONE", "FAX", "RRN", "FRN", "CORP_REG", "BUSINESS_REG", "DRIVER_LICENSE", "PASSPORT",
             "CARD", "ACCOUNT", "MEDICAL_INSURANCE", "VEHICLE", "EMAIL", "URL", "IP", "ADDRESS")
STRUCTURED_TYPES = ("PHONE", "FAX", "RRN", "FRN", "EMAIL", "URL", "IP", "CARD", "ACCOUNT", "PASSPORT",
                    "DRIVER_LICENSE", "BUSINESS_REG", "CORP_REG")
