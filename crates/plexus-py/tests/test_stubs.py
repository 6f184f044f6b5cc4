"""The type stubs describe the native module as it is: every class and
method they name exists, and every public native name has a stub."""

import ast
import pathlib

import plexus
from plexus import _plexus

STUB = pathlib.Path(plexus.__file__).with_name("_plexus.pyi")


def stub_tree():
    return ast.parse(STUB.read_text())


def test_every_stubbed_name_exists_natively():
    for node in stub_tree().body:
        if isinstance(node, ast.ClassDef):
            cls = getattr(_plexus, node.name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name != "__init__":
                    assert hasattr(cls, item.name), f"{node.name}.{item.name}"


def test_every_native_name_is_stubbed():
    stubbed = {n.name for n in stub_tree().body if isinstance(n, ast.ClassDef)}
    native = {n for n in dir(_plexus) if not n.startswith("_") and isinstance(getattr(_plexus, n), type)}
    assert native <= stubbed, native - stubbed


def test_the_public_api_has_docstrings():
    for name in plexus.__all__:
        obj = getattr(plexus, name)
        if isinstance(obj, type):
            assert obj.__doc__, name
            for attr, value in vars(obj).items():
                if (callable(value) or isinstance(value, property)) and not attr.startswith("_"):
                    assert value.__doc__, f"{name}.{attr}"
