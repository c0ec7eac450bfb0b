"""The engine's published surface (issue 27, item 1): every public method of `Engine` and of the five group services'
Protocols returns None, a scalar, an enum, a dataclass, a contract model, or a list or iterator of those — no dict,
Mapping, TypedDict, object, Any, callable or untyped tuple — and the group services implement their Protocols."""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
import enum
import inspect
import types
import typing
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pydantic
import pytest

from app.core import api
from app.core.engine import Engine
from app.core.services import protocols

SCALARS = (str, int, float, bool, bytes, Decimal, dt.date, dt.datetime, Path)
PROTOCOLS = (api.Invoicing, api.Catalog, api.Messaging, api.Lookups, api.Administration)
GROUPS = {"invoicing": api.Invoicing, "catalog": api.Catalog, "messaging": api.Messaging, "lookups": api.Lookups,
          "admin": api.Administration}


def problems(annotation: object, where: str) -> list[str]:
    """Why a return annotation breaks the rule (empty when it keeps it)."""
    if annotation is None or annotation is type(None):
        return []
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return [p for arg in args for p in problems(arg, where)]
    if origin in (list, Iterator):
        return problems(args[0], where) if args else [f"{where}: {annotation} without its item type"]
    if origin is tuple:
        if not args or Ellipsis in args:
            return [f"{where}: untyped tuple {annotation}"]
        return [p for arg in args for p in problems(arg, where)]
    if origin is not None:
        return [f"{where}: {annotation}"]
    if annotation is typing.Any or annotation is object:
        return [f"{where}: {annotation}"]
    if isinstance(annotation, type):
        if typing.is_typeddict(annotation):
            return [f"{where}: TypedDict {annotation.__name__}"]
        if issubclass(annotation, SCALARS) or issubclass(annotation, enum.Enum):
            return []
        if dataclasses.is_dataclass(annotation) or issubclass(annotation, pydantic.BaseModel):
            return []
    return [f"{where}: {annotation}"]


def _hints(function: object, module: types.ModuleType) -> dict[str, object]:
    # Protocols import their types under TYPE_CHECKING: resolve them with the published module's names.
    published = {name: getattr(api, name) for name in api.__all__}  # app.core.api loads each at its first reading
    namespace = {**published, **vars(module), "Iterator": Iterator, "Callable": typing.Callable}
    return typing.get_type_hints(function, globalns=namespace)


def published_methods() -> list[tuple[str, object, types.ModuleType]]:
    methods = []
    for protocol in PROTOCOLS:
        for name, member in vars(protocol).items():
            if callable(member) and not name.startswith("_"):
                methods.append((f"{protocol.__name__}.{name}", member, protocols))
    for name, member in inspect.getmembers(Engine, inspect.isfunction):
        if not name.startswith("_"):
            methods.append((f"Engine.{name}", member, inspect.getmodule(Engine)))
    return methods


def test_every_published_method_returns_what_the_rule_allows():
    methods = published_methods()
    assert len(methods) > 100
    found = [p for where, function, module in methods
             for p in problems(_hints(function, module).get("return", "missing"), where)]
    assert found == []


def test_the_rule_refuses_what_it_should():
    assert problems(dict[str, int], "x") and problems(typing.Any, "x") and problems(tuple, "x")
    assert problems(tuple[int, ...], "x") and problems(list, "x") and problems(typing.Mapping[str, str], "x")
    assert problems(object, "x") and problems(typing.Callable[[], None], "x")
    assert problems(list[dict[str, str]], "x") and problems(api.Voucher | dict, "x")
    assert not problems(list[api.Voucher] | None, "x") and not problems(tuple[str, str], "x")
    assert not problems(Iterator[api.BatchItem], "x") and not problems(api.GenerarXmlResult, "x")


def test_engine_exposes_the_five_groups_and_nothing_else_public(engine):
    public = {name for name in vars(engine) if not name.startswith("_")}
    assert public == set(GROUPS)
    methods = {name for name, _ in inspect.getmembers(Engine, inspect.isfunction) if not name.startswith("_")}
    assert methods == {"call", "close"}


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_each_group_service_implements_its_protocol_exactly(engine, group):
    protocol, service = GROUPS[group], getattr(engine, group)
    wanted = {name for name, member in vars(protocol).items() if callable(member) and not name.startswith("_")}
    offered = {name for name in dir(service) if not name.startswith("_") and callable(getattr(service, name))}
    assert wanted <= offered, sorted(wanted - offered)
    for name in sorted(wanted):
        theirs = inspect.signature(getattr(protocol, name))
        ours = inspect.signature(getattr(type(service), name))
        assert list(ours.parameters) == list(theirs.parameters), (group, name)


def test_the_published_table_is_exactly_what_the_type_checker_reads():
    """app.core.api writes each name three times for three readers: an import under TYPE_CHECKING (mypy), a row of
    _PUBLISHED (the name's module, imported at its first reading) and __all__ (ruff, `import *`, dir). They agree:
    same names, each from the same module and attribute (the two names computed in api.py aside)."""
    tree = ast.parse(Path(api.__file__).read_text(encoding="utf-8"))
    typed: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for child in node.body:
                if isinstance(child, ast.ImportFrom):
                    typed |= {alias.asname or alias.name: (str(child.module), alias.name) for alias in child.names}
    computed = {"SERIE_LETTER", "registry_now"}
    assert len(typed) > 150
    assert api._PUBLISHED == typed
    assert sorted(api.__all__) == sorted({*typed, *computed})
    assert len(api.__all__) == len(set(api.__all__))
