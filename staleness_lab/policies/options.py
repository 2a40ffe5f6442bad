"""Typed policy options: declared once per policy, checked from Python and from ``--option k=v``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from staleness_lab.errors import InputError

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


@dataclass(frozen=True)
class Option:
    """One option of a policy: name, type (int, float, bool or str), default, meaning, and the
    rule its values obey (``choices``, or ``minimum``/``above`` bounds for numbers)."""

    name: str
    type: type
    default: Any
    doc: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    above: float | None = None

    def check(self, value: Any, where: str) -> Any:
        """The value if it has the option's type and obeys its rule, else an InputError."""
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not self.type:
            raise InputError(where, f"must be of type {self.type.__name__}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise InputError(where, f"must be one of {', '.join(map(str, self.choices))}, got {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise InputError(where, f"must be >= {self.minimum:g}, got {value!r}")
        if self.above is not None and not value > self.above:
            raise InputError(where, f"must be > {self.above:g}, got {value!r}")
        return value

    def parse(self, text: str, where: str) -> Any:
        """Convert a command-line string to the option's type, then check it."""
        try:
            if self.type is bool:
                low = text.strip().lower()
                if low not in _TRUE | _FALSE:
                    raise ValueError(text)
                value: Any = low in _TRUE
            else:
                value = self.type(text)
        except ValueError:
            raise InputError(where, f"must be of type {self.type.__name__}, got {text!r}") from None
        return self.check(value, where)

    def describe(self) -> str:
        rule = ""
        if self.choices is not None:
            rule = " in {" + ", ".join(map(str, self.choices)) + "}"
        elif self.minimum is not None:
            rule = f" >= {self.minimum:g}"
        elif self.above is not None:
            rule = f" > {self.above:g}"
        return f"{self.name}: {self.type.__name__}{rule} = {self.default!r}  {self.doc}"


class Configurable:
    """Base of policies with options: ``Policy(**options)`` checks them against ``OPTIONS``
    and keeps them in ``self.options`` (every option present, defaults filled in)."""

    name: ClassVar[str]
    OPTIONS: ClassVar[tuple[Option, ...]] = ()

    def __init__(self, **options: Any) -> None:
        declared = {o.name: o for o in self.OPTIONS}
        for key in options:
            if key not in declared:
                known = ", ".join(declared) or "none"
                raise InputError(f"option {key}", f"policy {self.name!r} has no option {key!r} (options: {known})")
        self.options = {
            name: opt.check(options[name], f"option {name}") if name in options else opt.default
            for name, opt in declared.items()
        }
