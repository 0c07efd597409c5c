"""What the proxy knows of the backend's tables: key schemas and ARNs.

They come from DescribeTable on the backend and are cached per table until
a CreateTable, DeleteTable or UpdateTable of the table, or a reset.
"""

import threading
from dataclasses import dataclass


@dataclass
class TableInfo:
    """What the proxy needs to know of a table."""

    partition_key: str
    arn: str
    sort_key: str = None

    def key_names(self):
        """The key attribute names."""
        return {self.partition_key} | ({self.sort_key} if self.sort_key else set())


class TableCatalog:
    """Key schemas and ARNs learnt from DescribeTable, cached per table."""

    def __init__(self):
        self.lock = threading.Lock()
        self.tables = {}

    def lookup(self, table, describe):
        """TableInfo of a table, or None when the backend does not know it."""
        with self.lock:
            if table in self.tables:
                return self.tables[table]
        description = describe(table)
        if description is None:
            return None
        schema = description["Table"]
        hash_key = next(k["AttributeName"] for k in schema["KeySchema"]
                        if k["KeyType"] == "HASH")
        range_key = next((k["AttributeName"] for k in schema["KeySchema"]
                          if k["KeyType"] == "RANGE"), None)
        info = TableInfo(hash_key, schema["TableArn"], range_key)
        with self.lock:
            self.tables[table] = info
        return info

    def forget(self, table=None):
        """Drop one table's entry, or all of them."""
        with self.lock:
            if table is None:
                self.tables.clear()
            else:
                self.tables.pop(table, None)
