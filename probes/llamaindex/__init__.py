"""LlamaIndex Workflows 2.22.2: split-step human input, in-step waits, snapshots on disk."""
