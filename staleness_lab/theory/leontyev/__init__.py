"""Leontyev, Johnson and Anderson: the Adaptive Update Scheduler (AUS) and its bounds.

Pure functions, no trace (digest ``specs/leontyev-aus.md``): :mod:`.tasks` (the adaptable sporadic
task set, budgets, and the reference forms of Defs. 3, 6 and 8) and :mod:`.bounds` (Theorem 1's
tardiness bound Y_i, Lemma 1's Theta_k, Def. 13's staleness bound A(V_k), Theorem 4's recovery time
x_k, recovery-period Rules A and B, the eq.-6 capacity condition), :mod:`.workloads` (a workload as a
task set) and :func:`.table.bounds_table` (one tidy row per task of a task set or a workload).
"""

from staleness_lab.theory.leontyev.bounds import (admissible, arbitrate, recovery_time_bound,
                                                  response_time_bounds, rule_a_recovery_periods,
                                                  rule_b_recovery_periods, staleness_bounds, tardiness_bounds)
from staleness_lab.theory.leontyev.table import bounds_table
from staleness_lab.theory.leontyev.tasks import Task, TaskSet, default_budget

__all__ = ["Task", "TaskSet", "admissible", "arbitrate", "bounds_table", "default_budget", "recovery_time_bound",
           "response_time_bounds", "rule_a_recovery_periods", "rule_b_recovery_periods", "staleness_bounds",
           "tardiness_bounds"]
