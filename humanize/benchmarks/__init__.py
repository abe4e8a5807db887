"""Benchmarks: datasets (loaders to RAID-schema rows), protocols, runner, report and plots."""
