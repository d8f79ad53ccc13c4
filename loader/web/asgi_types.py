"""The shapes ASGI gives a request and its answer, as the site's wrappers pass them on.

Mappings, not TypedDicts: a scope carries keys of its own beyond the specification's (the
response cache's list of what a page left out, Datasette's route data), and a wrapper edits the
messages it forwards. The same shapes as Starlette's `starlette.types`, which the site does not
install.
"""

from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
# a response header, name and value: Datasette sends [name, value] lists, others tuples
Header = Sequence[bytes]
