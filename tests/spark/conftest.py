"""Fixtures of the Spark tests besides the shared session (``tests/conftest.py``)."""

from spark_cluster import standalone_cluster  # noqa: F401  (the loopback cluster, shared per session)
