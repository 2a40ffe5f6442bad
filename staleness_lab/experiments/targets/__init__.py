"""Freshness targets: the target-lag scheduler compared with the papers' schedulers
(:mod:`~staleness_lab.experiments.targets.compare`), its documented rules checked on traces
(:mod:`~staleness_lab.experiments.targets.conformance`), report 07's sweeps and the bound /
observed worst ratios (:mod:`~staleness_lab.experiments.targets.sweeps`) and its verdicts
(:mod:`~staleness_lab.experiments.targets.verdicts`)."""

from staleness_lab.experiments.targets import sweeps  # noqa: F401  (register)
from staleness_lab.experiments.targets.compare import COMPARED, compare_targets, comparison_summary

__all__ = ["COMPARED", "compare_targets", "comparison_summary", "sweeps"]
