"""pydantic-graph 1.107.1 with FileStatePersistence: crashes inside and between nodes."""
