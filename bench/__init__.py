"""Benchmarks and evaluation harness. May import everything; nothing imports bench."""
