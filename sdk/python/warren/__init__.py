"""warren: Python SDK for warren sandboxes.

    from warren import Sandbox
    sb = Sandbox.create()                      # $WARREN_SERVER, $WARREN_API_KEY
    r = sb.commands.run("echo hi")
    print(r.exit_code, r.stdout)

AsyncSandbox has the same surface with awaitable methods.
"""

from ._async import AsyncCommandHandle, AsyncPtyHandle, AsyncSandbox
from ._core import (ABSENT, OPERATIONS, AuthenticationError, BudgetError, CommandResult, ConflictError, EntryInfo,
                    InvalidArgumentError, NotFoundError, TimeoutError, UnavailableError, WarrenError, WatchEvent)
from ._sync import Client, CommandHandle, PtyHandle, Sandbox

__all__ = [
    "Sandbox", "AsyncSandbox", "Client", "CommandHandle", "AsyncCommandHandle", "PtyHandle", "AsyncPtyHandle", "CommandResult", "EntryInfo", "WatchEvent",
    "WarrenError", "AuthenticationError", "NotFoundError", "InvalidArgumentError", "ConflictError", "BudgetError",
    "TimeoutError", "UnavailableError", "OPERATIONS", "ABSENT",
]
