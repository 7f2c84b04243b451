"""Evaluation shared by the chapters: retrieval, mining, classification, off-target, probes."""
