"""Byte units. Every *_gb value in the estimator is decimal GB (1e9 bytes)."""

GB = 1_000_000_000
MIB = 1024**2
GIB = 1024**3


def bytes_to_gb(size_bytes: float) -> float:
    """Convert bytes to decimal GB."""
    return size_bytes / GB


def mib_to_gb(size_mib: float) -> float:
    """Convert MiB (binary) to decimal GB."""
    return size_mib * MIB / GB
