"""The state the request handlers share, and the settings that change it.

Proxy holds the backend's address, the credentials the proxy accepts, the
settings of POST /__proxy/config (latency_ms, verify_signatures,
clock_offset_s, deny_actions, key_budget, table_budget), the fault queue,
the budgets, the table catalog and the counters; reset puts all of them
back to the start-up state.
"""

import datetime
import urllib.parse

from botocore.credentials import Credentials

from ddbprotocol import BadControlRequest
from faultspecs import FaultQueue
from iamdenials import check_denials
from proxystats import Stats
from sigv4check import SignatureVerifier
from tablecatalog import TableCatalog
from writebudgets import Budgets, check_limit


class Proxy:
    """Everything the request handlers share."""

    def __init__(self, backend, credentials, verify_signatures, latency_ms):
        parsed = urllib.parse.urlsplit(backend)
        self.backend_host = parsed.hostname
        self.backend_port = parsed.port or 80
        self.credentials = credentials
        self.verifier = SignatureVerifier(credentials, clock=self.now)
        self.initial = {"latency_ms": latency_ms,
                        "verify_signatures": verify_signatures}
        self.faults = FaultQueue()
        self.budgets = Budgets()
        self.catalog = TableCatalog()
        self.stats = Stats()
        self.reset()

    def reset(self):
        """Back to the start-up state."""
        self.latency_ms = self.initial["latency_ms"]
        self.verify_signatures = self.initial["verify_signatures"]
        self.clock_offset_s = 0
        self.denials = []
        self.faults.clear()
        self.budgets.configure(None, None)
        self.catalog.forget()
        self.stats.reset()

    def config(self):
        """The current settings."""
        return {"latency_ms": self.latency_ms,
                "verify_signatures": self.verify_signatures,
                "clock_offset_s": self.clock_offset_s,
                "key_budget": self.budgets.key_limit,
                "table_budget": self.budgets.table_limit,
                "deny_actions": list(self.denials)}

    def configure(self, changes):
        """Apply a POST /__proxy/config body."""
        unknown = set(changes) - set(self.config())
        if unknown:
            raise BadControlRequest(f"unknown config keys: {sorted(unknown)}")
        if "latency_ms" in changes:
            self.latency_ms = max(0, int(changes["latency_ms"]))
        if "verify_signatures" in changes:
            self.verify_signatures = bool(changes["verify_signatures"])
        if "clock_offset_s" in changes:
            self.clock_offset_s = int(changes["clock_offset_s"])
        if "deny_actions" in changes:
            self.denials = check_denials(changes["deny_actions"])
        if "key_budget" in changes or "table_budget" in changes:
            self.budgets.configure(
                check_limit(changes.get("key_budget", self.budgets.key_limit)),
                check_limit(changes.get("table_budget",
                                        self.budgets.table_limit)))

    def now(self):
        """The proxy's time: the host's, set off by clock_offset_s (a host
        whose clock is wrong, seen from DynamoDB's side); the signatures'
        times are checked against it, and the answers' Date says it."""
        return datetime.datetime.utcnow() + datetime.timedelta(seconds=self.clock_offset_s)

    def signing_credentials(self):
        """Credentials for the proxy's own requests to the backend."""
        access_key, (secret, token) = next(iter(self.credentials.items()),
                                           ("proxy", ("proxy", None)))
        return Credentials(access_key, secret, token)
