"""cutegen's reference worker: the only process that imports torch (see docs/worker-protocol.md)."""
