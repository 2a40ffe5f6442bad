"""Closed-form results as pure functions and the checks that hold them against traces.

A check takes a workload and a trace (never simulates) and returns
:class:`~staleness_lab.theory.records.CheckRecord` s: the claim, the bound with its terms, what
the trace shows, and whether the claim's preconditions are met (``holds`` is only decided when
they all are). Every paper's suite registers in :mod:`staleness_lab.theory.suites`.
"""
