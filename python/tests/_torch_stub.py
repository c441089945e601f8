"""A stand-in for ``torch`` so that vLLM's parser modules import without the torch wheel.

vLLM 0.33 imports ``torch`` from ``vllm/__init__.py`` (``vllm.env_override``) and from many
modules that its tool and reasoning parsers import only for type hints or for GPU code that
parsing never runs. The only torch wheel for x86_64 Linux on PyPI is the CUDA build (554 MB,
and it does not import without the ``nvidia-*`` wheels, several GB more); the CPU-only builds
live on another index that this project's machines cannot reach. The parser tests therefore
run in an environment without torch, vLLM's parsers against this stub (``test_torch.py`` runs
with a real torch, 5.6 GB with its ``nvidia-*`` wheels, in .ci/run's torch step): every ``torch`` / ``torch.*`` module is a permissive
object whose attributes are classes, so that ``class X(torch.nn.Module)``, decorators such as
``@torch.inference_mode()`` and dtype constants at import time work, and whose calls return
falsy objects, so that ``torch.cuda.is_available()`` and similar checks say no.

Nothing here computes anything: a test that reached real tensor code would fail loudly (a
stub object is not a number), which is what we want. :func:`install` is a no-op when a real
torch is importable.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

__all__ = ["install", "installed", "uninstall"]

_VERSION = "2.14.0"
_ROOTS = ("torch", "torchvision", "torchaudio", "torchcodec")


def _passthrough(args: tuple, kwargs: dict):
    """The decorated function when a stub is used as a bare decorator."""
    if len(args) == 1 and not kwargs and (callable(args[0]) or isinstance(args[0], type)):
        if not isinstance(args[0], (_StubMeta, _Stub)):
            return args[0]
    return None


class _StubMeta(type):
    """Metaclass of stub classes: attribute access yields more stub classes."""

    def __getattr__(cls, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub_class(f"{cls.__name__}.{name}")

    def __call__(cls, *args, **kwargs):
        decorated = _passthrough(args, kwargs)
        if decorated is not None:
            return decorated
        return super().__call__(*args, **kwargs)

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return cls

    __ror__ = __or__

    def __bool__(cls) -> bool:
        return True

    def __iter__(cls):
        return iter(())

    def __len__(cls) -> int:
        return 0


class _Stub(metaclass=_StubMeta):
    """An instance of a stub class: falsy, empty, callable, with stub attributes."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub_class(f"{type(self).__name__}.{name}")

    def __call__(self, *args, **kwargs):
        decorated = _passthrough(args, kwargs)
        if decorated is not None:
            return decorated
        return _Stub()

    def __bool__(self) -> bool:
        return False

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def __getitem__(self, item):
        return _Stub()

    def __add__(self, other):
        return other if isinstance(other, str) else self

    __radd__ = __add__

    def __mul__(self, other):
        return self

    __rmul__ = __sub__ = __rsub__ = __truediv__ = __rtruediv__ = __floordiv__ = __mul__

    def __lt__(self, other) -> bool:
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __hash__(self) -> int:
        return id(self)

    def __index__(self) -> int:
        return 0

    def __int__(self) -> int:
        return 0

    def __float__(self) -> float:
        return 0.0

    def __str__(self) -> str:
        return ""


def _stub_class(name: str) -> type:
    return _StubMeta(name, (_Stub,), {"__module__": "torch"})


class _StubModule(types.ModuleType):
    """A ``torch`` module (or submodule) whose unknown attributes are stub classes."""

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        full = f"{self.__name__}.{name}"
        if full in sys.modules:
            return sys.modules[full]
        return _stub_class(full)


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds every ``torch`` (and companion package) module as a stub module."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in _ROOTS:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []
        module.__version__ = _VERSION
        module.__file__ = f"<torch stub: {spec.name}>"
        return module

    def exec_module(self, module) -> None:
        if module.__name__ == "torch":
            version = types.ModuleType("torch.version")
            version.__version__ = _VERSION
            version.cuda = None
            version.hip = None
            version.git_version = "stub"
            module.version = version
            sys.modules["torch.version"] = version
            module.__version__ = _VERSION


_FINDER = _StubFinder()


def installed() -> bool:
    """Whether the stub, rather than a real torch, answers ``import torch``."""
    return _FINDER in sys.meta_path


def install() -> bool:
    """Put the stub in place unless a real torch is importable; True if the stub is used."""
    if installed():
        return True
    if importlib.util.find_spec("torch") is not None:
        return False
    sys.meta_path.insert(0, _FINDER)
    return True


def uninstall() -> None:
    """Take the stub out: later ``import torch`` fails again as it would without it.

    Modules that imported the stub keep their references; only new imports are affected.
    """
    while _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if n.split(".")[0] in _ROOTS]:
        if isinstance(sys.modules[name], _StubModule) or name == "torch.version":
            del sys.modules[name]
