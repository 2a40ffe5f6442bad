"""Schedulers behind one protocol (see :mod:`staleness_lab.policies.base`) and their registry."""

from staleness_lab.policies import baselines  # noqa: F401  (registers the baselines)
from staleness_lab.policies import lookahead, partitioned, proportional  # noqa: F401  (register Golab et al.'s schedulers)
from staleness_lab.policies import bateni  # noqa: F401  (registers Bateni et al.'s schedulers)
from staleness_lab.policies import aus, gedf, prp  # noqa: F401  (register Leontyev et al.'s schedulers)
from staleness_lab.policies import target_lag  # noqa: F401  (registers the industry's target-lag scheduler)
from staleness_lab.policies.base import BoundPolicy, Policy
from staleness_lab.policies.options import Configurable, Option
from staleness_lab.policies.registry import available_policies, get_policy, parse_options, policy_options, register

__all__ = [
    "BoundPolicy", "Configurable", "Option", "Policy",
    "available_policies", "get_policy", "parse_options", "policy_options", "register",
]
