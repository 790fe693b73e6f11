"""warren: Python SDK for warren sandboxes.

    from warren import Sandbox
    sb = Sandbox.create()                      # $WARREN_SERVER, $WARREN_API_KEY
    r = sb.commands.run("echo hi")
    print(r.exit_code, r.stdout)

AsyncSandbox has the same surface with awaitable methods.
"""

from ._async import AsyncClient, AsyncCommandHandle, AsyncPtyHandle, AsyncSandbox
from ._core import (ABSENT, OPERATIONS, AlreadyExistsError, AuthenticationError, BudgetError, CommandResult, ConflictError,
                    EntryInfo, FencedError, Generation, InvalidArgumentError, NetworkDecision, NetworkPolicy, NetworkStatus,
                    NotFoundError, OverloadedError, Retention, Secret, SecretInfo, TimeoutError, UnavailableError,
                    UnsupportedError, Volume, VolumeMount, WarrenError, WatchEvent, WriteBudgetError, WriteInfo)
from ._sync import Client, CommandHandle, PtyHandle, Sandbox

__all__ = [
    "Sandbox", "AsyncSandbox", "Client", "AsyncClient", "CommandHandle", "AsyncCommandHandle", "PtyHandle", "AsyncPtyHandle", "CommandResult", "EntryInfo", "WatchEvent",
    "NetworkPolicy", "Secret", "SecretInfo", "NetworkDecision", "NetworkStatus", "Generation", "Retention", "Volume", "VolumeMount", "WriteInfo",
    "WarrenError", "AuthenticationError", "NotFoundError", "InvalidArgumentError", "ConflictError", "AlreadyExistsError",
    "FencedError", "BudgetError", "WriteBudgetError", "TimeoutError", "UnavailableError", "OverloadedError", "UnsupportedError",
    "OPERATIONS", "ABSENT",
]
