"""What a worker serves (`Site`), in a module of its own: the supervisor makes one and hands it
to its workers in the environment without importing Datasette (loader/serve/app.py does), which
would cost every `paper-catalog serve` start a second of CPU for nothing."""

import json
import os
from dataclasses import asdict, dataclass
from typing import Self

DEFAULT_CACHE_BYTES = 32 * 1024 * 1024
ENVIRONMENT_VARIABLE = "PAPER_CATALOG_SITE"


@dataclass
class Site:
    """What a worker serves. `build_id` names the catalog build; `secret` signs cookies and must
    be the same in every worker, or a token made by one is refused by another."""

    db: str
    inspect_file: str | None
    metadata: str
    build_id: str
    secret: str
    cache_bytes: int = DEFAULT_CACHE_BYTES

    ENVIRONMENT_VARIABLE = ENVIRONMENT_VARIABLE

    def to_environment(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_environment(cls) -> Self:
        return cls(**json.loads(os.environ[ENVIRONMENT_VARIABLE]))
