"""The PII types this package detects. A light module: recipe validation and the replace stage need the
names without importing presidio (whose import pulls in transformers, seconds per process)."""

ALL_TYPES = ("PERSON", "PHONE", "FAX", "RRN", "FRN", "CORP_REG", "BUSINESS_REG", "DRIVER_LICENSE", "PASSPORT",
             "CARD", "ACCOUNT", "MEDICAL_INSURANCE", "VEHICLE", "EMAIL", "URL", "IP", "ADDRESS")
STRUCTURED_TYPES = ("PHONE", "FAX", "RRN", "FRN", "EMAIL", "URL", "IP", "CARD", "ACCOUNT", "PASSPORT",
                    "DRIVER_LICENSE", "BUSINESS_REG", "CORP_REG")
# Off by default (an ablation may want them; `pii_detect: {optional_types: [...]}`): 5-digit postal codes in an
# address context, dates of birth (labelled, or followed by 생), ages (`34세`, `만 18세 이상`, `60대 후반`).
# The names are the shared evaluation file's labels.
OPTIONAL_TYPES = ("POSTAL_CODE", "DT_BIRTH", "AGE")
KNOWN_TYPES = ALL_TYPES + OPTIONAL_TYPES
