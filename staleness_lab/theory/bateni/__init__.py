"""Bateni, Golab, Hajiaghayi and Karloff: staleness and stretch of batched warehouse updates.

Pure functions of a trace (never a simulation): :mod:`.updates` (updates and batches),
:mod:`.metrics` (LOW, penalty, X, S*, S^H, stretch), :mod:`.bounds` (Theorem 3.1's R*, Corollary
3.2, Theorems 4.3 and 5.1), :mod:`.eager` (the eager checker), :mod:`.blocking` (the blocking DAG,
Claim 3.5, Lemma 3.4), :mod:`.waits` (Lemma 4.2), :mod:`.grouping` (GROUPANDRUN's groups and
allocation) and :mod:`.suite` (the claims of ``staleness-lab check``).
"""

from staleness_lab.theory.bateni.eager import EagerVerdict, is_eager
from staleness_lab.theory.bateni.metrics import Measures, measures

__all__ = ["EagerVerdict", "Measures", "is_eager", "measures"]
