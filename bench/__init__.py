"""Benchmarks: a2a-grpc side by side with the official Python SDK and bare ceilings (issues 6, 17).

``python -m bench.run`` runs the matrix (in-memory, SQLite and PostgreSQL stores), the
cluster section and the targets, and writes ``bench/results/latest.md``. Modules:
``run`` (the runner), ``measure`` (one cell), ``report`` (cells, targets, Markdown),
``cluster`` / ``cluster_latency`` (2 replicas on PostgreSQL), ``pg`` (fresh databases),
``procs`` (pinned server processes), ``loadgen`` (the checking clients). The SDK
server (and anything importing ``a2a``) only ever runs in its own subprocess: its
``lf.a2a.v1`` protos share the descriptor pool names with ours.
"""
