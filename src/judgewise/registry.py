"""A named table of entries (designs, and later backends, templates, methods) filled by explicit registration.

Nothing registers itself as a side effect of being imported: the package that owns a registry fills it from
one table in one place, and users add their own with :meth:`Registry.register`. Looking up an unknown name is
a :class:`~judgewise.errors.ConfigError` that lists the known names. For code written against the plain dicts the
registries used to be, ``REG[name]``, ``REG[name] = entry`` (register or replace), ``del REG[name]``,
``REG.get(name, default)`` and ``REG.setdefault(name, entry)`` work as on a dict.
"""

from __future__ import annotations

from typing import Generic, Iterator, Mapping, TypeVar

from judgewise.errors import ConfigError

T = TypeVar("T")
_MISSING = object()


class Registry(Generic[T]):
    """Name → entry. ``kind`` names what the entries are in error messages (``"design"``, ``"backend"``)."""

    def __init__(self, kind: str, entries: Mapping[str, T] | None = None):
        self.kind = kind
        self._entries: dict[str, T] = {}
        for name, entry in (entries or {}).items():
            self.register(name, entry)

    def register(self, name: str, entry: T, *, replace: bool = False) -> T:
        """Add ``entry`` under ``name``; a name already taken is a ConfigError unless ``replace``. Returns it."""
        if not isinstance(name, str) or not name:
            raise ConfigError(f"a {self.kind} name must be a non-empty string, got {name!r}")
        if name in self._entries and not replace:
            raise ConfigError(f'{self.kind} "{name}" is already registered; pass replace=True to replace it')
        self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> T:
        """Remove and return the entry registered as ``name``."""
        self.get(name)
        return self._entries.pop(name)

    def get(self, name: str, default=_MISSING) -> T:
        """The entry registered as ``name``; an unknown name is ``default`` when given, else a ConfigError listing
        the known ones."""
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            if default is not _MISSING:
                return default
            raise ConfigError(f"unknown {self.kind} {name!r}; known: {self.names()}") from None

    def setdefault(self, name: str, entry: T) -> T:
        """The entry registered as ``name``, registering ``entry`` there first when there is none."""
        return self._entries[name] if name in self else self.register(name, entry)

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __setitem__(self, name: str, entry: T) -> None:
        self.register(name, entry, replace=True)

    def __delitem__(self, name: str) -> None:
        self.unregister(name)

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._entries)

    def items(self) -> list[tuple[str, T]]:
        return sorted(self._entries.items())

    def __contains__(self, name: object) -> bool:
        try:
            return name in self._entries
        except TypeError:  # an unhashable name (a list from YAML) is not registered
            return False

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.names()})"
