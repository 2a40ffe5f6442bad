"""Freshness targets: the target-lag scheduler compared with the papers' schedulers
(:mod:`~staleness_lab.experiments.targets.compare`)."""

from staleness_lab.experiments.targets.compare import COMPARED, compare_targets, comparison_summary

__all__ = ["COMPARED", "compare_targets", "comparison_summary"]
