"""Examples for the README: ``examples/my_agent.py`` (write your own agent) and ``examples/diffs/``."""
