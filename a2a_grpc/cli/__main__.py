"""``python -m a2a_grpc.cli`` runs the ``a2a-grpc`` command."""

from a2a_grpc.cli import main

main()
