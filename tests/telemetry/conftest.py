"""The webhook receiver of the push tests, for telemetry tests of push delivery."""

from tests.push.conftest import receiver

__all__ = ["receiver"]
