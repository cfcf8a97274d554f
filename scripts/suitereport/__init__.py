"""Shared code of the report tools: scripts/report, scripts/plot, scripts/compare and
scripts/make-results-readme (see scripts/README.md)."""
