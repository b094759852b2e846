"""Measure the pipeline against labels.

The judge with ``orf eval judge`` and the loop detector with ``orf eval detect``.
"""
