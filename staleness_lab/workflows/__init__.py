"""Olston's asynchronous incremental workflows: channels of blocks with temporal provenance,
operators and their batch/incremental/asynchronous variants, and the cost-based scheduler
(Algorithm 1) with its baselines. Its own small model and loop, not ``sim/engine.py``: a
decision here is a shortest path over blocks with set-valued provenance on an elastic pool
(``../ARCHITECTURE``: problems of another shape keep their own model). No pyspark here; the
Spark executor lives in ``staleness_lab.spark.workflows.executor``."""
