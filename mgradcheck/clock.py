"""The one clock that stamps reports, stored results and environments."""

from __future__ import annotations

import datetime as _dt


def now() -> str:
    """The current UTC time, to the second, in ISO 8601."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
