"""Benchmarks: a2a-grpc side by side with the official Python SDK and bare ceilings (issue 6).

``python -m bench.run`` runs the matrix and writes ``bench/results/latest.md``. The SDK
server (and anything importing ``a2a``) only ever runs in its own subprocess: its
``lf.a2a.v1`` protos share the descriptor pool names with ours.
"""
