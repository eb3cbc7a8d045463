"""L2: the kernel — one coroutine per A2A operation, the executions and the drive loop."""

__all__: list[str] = []
