"""Helpers of the built-in code-review agent (:mod:`a2a_grpc.agents._code_review`): rebuilding
lintable sources from diff hunks, running ruff, the rule tables, and fetching diffs by URL."""
