"""Cross-version resume (MV): pause under one release of a framework, resume under another."""
