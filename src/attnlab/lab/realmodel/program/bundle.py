"""Program text from attnlab's own source: the objects a program runs and everything they use.

:class:`Bundle` collects roots (functions, classes, module-level constants) and, recursively,
every global name their code loads:

- an attnlab function or class: its source, as written (``inspect.getsource``); a module-level
  constant: its assignment, with the comment lines right above it;
- a module, or a name from outside attnlab (``dataclass``, ``GGUFReader``): an import line, written
  as the module that uses it imports it;
- a helper a NumPy program does without (array-API namespaces, thread pools, attnlab's error
  class): its stand-in from :mod:`.compat`, under the same name (:data:`STAND_INS`);
- a class of which a program needs only some members (:data:`PARTS`): those members, as written.

The names a global is found by are the ones its code uses, so an object imported under another
name (``from ...steps import attend as fast_attend``) is written under that name. Names the
program defines itself (``ARCH``, ``WEIGHTS``) are left to it. :meth:`Bundle.text` writes one
section per source module, in :data:`SECTIONS`' order and each module's own order, every class
and constant after what its definition needs.
"""

from __future__ import annotations

import ast
import builtins
import dis
import functools
import inspect
import re
import sys
import textwrap
import types
from dataclasses import dataclass, field

from attnlab.lab.realmodel.program import compat

# engine helpers replaced by their NumPy stand-ins (defining module.name -> compat's name)
STAND_INS = {
    "attnlab.engine._arrays.namespace": "namespace",
    "attnlab.engine._arrays.arange": "arange",
    "attnlab.engine.attention._device": "_device",
    "attnlab.engine.attention.attend": "attend",
    "attnlab.engine.positions.embed": "embed",
    "attnlab.engine.fast.workers.run": "run",
    "attnlab.engine.fast.decode._float_helpers": "_float_helpers",
    "attnlab.engine.threads.CORES": "CORES",
    "attnlab.engine.threads.holds_one_blas_thread": "holds_one_blas_thread",
    "attnlab.engine.errors.FieldError": "FieldError",
    "attnlab.models.errors.Refusal": "Refusal",
    "attnlab.engine.layers.erf": "erf",
    "attnlab.engine.fast.quant.QuantMatrix": "QuantMatrix",
    "attnlab.engine.fast.quant.product": "product",
}

# classes of which a program writes only some members: name -> (members, stand-in members from compat)
PARTS = {
    "attnlab.engine.positions.RoPE": (("inverse_frequencies", "cos_sin", "rotate"), ("angles",)),
}

# source modules in the order a program lists them, each with what it holds
SECTIONS = {
    "attnlab.lab.realmodel.program.compat": "lab/realmodel/program/compat.py: NumPy stand-ins for "
    "attnlab's array-API, thread and error helpers",
    "attnlab.engine._arrays": "engine/_arrays.py: shapes, and finite numbers only",
    "attnlab.engine.layers": "engine/layers.py: norms, linear layers, activations",
    "attnlab.engine.positions": "engine/positions.py: rotary positions (RoPE)",
    "attnlab.engine.attention": "engine/attention.py: scaled dot-product attention",
    "attnlab.engine.multihead": "engine/multihead.py: attention's weights",
    "attnlab.engine.block": "engine/block.py: a block's weights",
    "attnlab.engine.model": "engine/model.py: a model's weights",
    "attnlab.engine.hooks": "engine/hooks.py: hook points, every activation by name",
    "attnlab.engine.forward": "engine/forward.py: the one forward pass, and its readable steps (Reference)",
    "attnlab.engine.fast.ops": "engine/fast/ops.py: the fast steps' layouts",
    "attnlab.engine.fast.decode": "engine/fast/decode: the fast path's products",
    "attnlab.engine.fast.decode.steps": "engine/fast/decode/steps.py: the fast path's steps between products",
    "attnlab.engine.fast.decode.numpy_kernels": "engine/fast/decode/numpy_kernels.py: attnlab's compiled "
    "steps (kernels.py), as NumPy",
    "attnlab.models.program_steps": "models/program_steps.py: the steps this program runs the forward with",
    "attnlab.models.circuits.edits": "models/circuits/edits.py: interventions as hooks",
    "attnlab.models.journey": "models/journey.py: a token's journey through the blocks",
    "attnlab.models.sampling": "models/sampling.py: what sampling draws from",
    "attnlab.models.circuits.metrics": "models/circuits/metrics.py: the numbers circuits compare",
    "attnlab.models.families.bert": "models/families/bert.py: a BERT checkpoint's weights, laid out",
    "attnlab.lab.realmodel.program.model_file": "lab/realmodel/program/model_file.py: the model file, read",
    "attnlab.lab.realmodel.program.runs": "lab/realmodel/program/runs.py: the runs, as attnlab's models "
    "run them",
}


class NotEmbeddable(TypeError):
    """A global a program needs that has no source to copy and no stand-in."""


@dataclass
class Item:
    """One definition of the program: ``name`` bound by ``text``, from ``module`` (line ``line``).

    ``first``: names its definition needs when it runs (a class's bases and decorators, a constant's
    expression); ``later``: names its code needs when called.
    """

    name: str
    module: str
    line: int
    text: str
    first: set[str] = field(default_factory=set)
    later: set[str] = field(default_factory=set)
    globals: dict = field(default_factory=dict)


class Bundle:
    """The definitions and imports a program needs for its roots (see the module docstring).

    ``given``: names the program defines itself (never looked up); ``unreached``: names the code uses
    only on paths the program never takes, with why (each is written ``name = None``: see
    :attr:`stubbed`, the ones the code named).
    """

    def __init__(self, given=(), unreached=None) -> None:
        self.given = set(given)
        self.unreached = dict(unreached or {})
        self.stubbed: dict[str, str] = {}
        self.items: dict[str, Item] = {}
        self.keys: dict[str, object] = {}  # program name -> what it holds (one object per name)
        self.imports: dict[str, None] = {}

    def add(self, obj, name: str | None = None) -> str:
        """Add ``obj`` (a function or class of attnlab) under ``name`` (default its own); return the name."""
        name = name or obj.__name__
        self._object(obj, name)
        return name

    def add_needs(self, fn) -> None:
        """Add what ``fn``'s code uses, but not ``fn`` (a method the program writes itself)."""
        self._resolve(Item(name=fn.__qualname__, module=fn.__module__, line=0, text="",
                           later=_code_names(fn), globals=_module_globals(fn)))  # fmt: skip

    def add_constant(self, module: str, name: str) -> str:
        """Add the module-level constant ``name`` of ``module``."""
        self._constant(module, name)
        return name

    # -- finding definitions -----------------------------------------------------------------------

    def _claim(self, name: str, key: object) -> bool:
        """Bind ``name`` to ``key``; False when it already is; NotEmbeddable when it holds another."""
        if name in self.given:
            raise NotEmbeddable(f"{name} is the program's own, and also attnlab's {key}")
        held = self.keys.get(name)
        if held is None:
            self.keys[name] = key
            return True
        if held != key:
            raise NotEmbeddable(f"two definitions want the name {name}: {held} and {key}")
        return False

    def _object(self, obj, name: str) -> None:
        key = f"{obj.__module__}.{obj.__qualname__}"
        if key in PARTS:
            return self._parts(obj, name, key)
        if not self._claim(name, key):
            return
        lines, line = inspect.getsourcelines(obj)
        text = textwrap.dedent("".join(lines))
        if name != obj.__name__:  # written under the name its user calls it by
            kind = "class" if isinstance(obj, type) else "def"
            text = re.sub(rf"^{kind} {obj.__name__}\b", f"{kind} {name}", text, count=1, flags=re.M)
        tree = ast.parse(text).body[0]
        item = Item(name=name, module=obj.__module__, line=line, text=text, globals=_module_globals(obj))
        if isinstance(obj, type):
            item.first = _names_outside_bodies(tree) - {name}
            for member in vars(obj).values():
                fn = _function_of(member)
                if fn is not None and fn.__qualname__.startswith(obj.__qualname__ + "."):  # its own code
                    item.later |= _code_names(fn)
        else:
            item.first = _names_outside_bodies(tree)
            item.later = _code_names(obj)
        self._resolve(item)

    def _parts(self, cls, name: str, key: str) -> None:
        """A class with only the members :data:`PARTS` names, and stand-ins for some."""
        if not self._claim(name, key):
            return
        members, stand_ins = PARTS[key]
        source = textwrap.dedent(inspect.getsource(cls))
        tree = ast.parse(source).body[0]
        lines = source.splitlines()
        first = min(_start(n) for n in tree.body if isinstance(n, ast.FunctionDef))
        head = lines[: first - 1]
        parts = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in members:
                parts.append("\n".join(lines[_start(node) - 1 : node.end_lineno]))
        item = Item(name=name, module=cls.__module__, line=inspect.getsourcelines(cls)[1], text="",
                    globals=_module_globals(cls))  # fmt: skip
        for member in stand_ins:
            fn = getattr(compat, member)
            parts.append(textwrap.indent(textwrap.dedent(inspect.getsource(fn)), "    ").rstrip())
            self._resolve(Item(name=f"{name}.{member}", module=compat.__name__, line=0, text="",
                               later=_code_names(fn), globals=vars(compat)))  # fmt: skip
        item.text = "\n".join(head).rstrip() + "\n\n" + "\n\n".join(parts) + "\n"
        item.first = _names_outside_bodies(ast.parse(item.text).body[0]) - {name}
        for member in members:
            item.later |= _code_names(_function_of(vars(cls)[member]))
        self._resolve(item)

    def _constant(self, module: str, name: str) -> None:
        """The module-level assignment of ``name`` in ``module`` (or where ``module`` imported it from)."""
        mod = sys.modules[module]
        for node in _tree(module).body:
            if isinstance(node, ast.ImportFrom) and node.module and any(
                (a.asname or a.name) == name for a in node.names
            ):
                real = next(a.name for a in node.names if (a.asname or a.name) == name)
                if real != name:
                    raise NotEmbeddable(f"{module} imports the constant {real} as {name}")
                return self._global(vars(sys.modules[node.module]), name, "", node.module)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) and node.value is not None else []  # fmt: skip
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                if not self._claim(name, f"{module}.{name}"):
                    return
                lines = _source(module).splitlines()
                start = node.lineno
                while start > 1 and lines[start - 2].lstrip().startswith("#"):
                    start -= 1  # the comment that says what it is
                text = "\n".join(lines[start - 1 : node.end_lineno]) + "\n"
                item = Item(name=name, module=module, line=start, text=text, globals=vars(mod))
                item.first = _names_in(node.value)
                return self._resolve(item)
        raise NotEmbeddable(f"no module-level definition of {name} in {module}")

    def _resolve(self, item: Item) -> None:
        if item.text:
            self.items[item.name] = item
        for name in sorted(item.first | item.later):
            self._global(item.globals, name, item.name, item.globals.get("__name__", ""))

    def _global(self, space: dict, name: str, user: str, module: str) -> None:
        """Make ``name`` (as ``space``, a module's globals, binds it) defined in the program."""
        if name in self.given:
            return
        if name in self.unreached:
            self.stubbed[name] = self.unreached[name]
            return
        if name not in space:
            if hasattr(builtins, name):
                return
            raise NotEmbeddable(f"{user} uses {name}, which {module} does not define")
        value = space[name]
        home = _home(value, module, name)
        if home in STAND_INS:
            stand_in = getattr(compat, STAND_INS[home])
            if isinstance(stand_in, types.FunctionType | type):
                return self._object(stand_in, name)
            return self._constant(compat.__name__, STAND_INS[home])
        if isinstance(value, types.ModuleType):
            if value.__name__.startswith("attnlab"):
                raise NotEmbeddable(f"{user} reads the module {value.__name__}; a program has no attnlab")
            return self._import(space, name, value)
        if isinstance(value, types.FunctionType | type):
            if value.__module__.startswith("attnlab"):
                return self._object(value, name)
            return self._import(space, name, value)
        if callable(value):
            if (getattr(value, "__module__", None) or "").startswith("attnlab"):
                if isinstance(inspect.unwrap(value), types.FunctionType):  # a decorated function
                    return self._object(value, name)
                raise NotEmbeddable(f"{user} uses {name}, a {type(value).__name__} with no source")
            return self._import(space, name, value)
        if module.startswith("attnlab"):
            return self._constant(module, name)
        raise NotEmbeddable(f"{user} uses {name} ({type(value).__name__}) from {module}")

    def _import(self, space: dict, name: str, value) -> None:
        """The import line the using module wrote for ``name`` (or one made from the value)."""
        line = _import_line(space, name)
        if line is None:
            if isinstance(value, types.ModuleType):
                line = f"import {value.__name__}" + (f" as {name}" if value.__name__ != name else "")
            else:
                line = f"from {value.__module__} import {value.__qualname__}" + (
                    f" as {name}" if value.__qualname__ != name else ""
                )
        self.imports[line] = None

    # -- writing ---------------------------------------------------------------------------------

    def import_lines(self) -> list[str]:
        """The imports, standard library first, then the rest (each group sorted)."""
        lines = sorted(self.imports, key=lambda s: (_third_party(s), s.split()[1], s))
        return lines

    def text(self, *, exclude=()) -> str:
        """Every definition, by section (see the module docstring); ``exclude``: modules left out."""
        order: list[str] = []

        def place(name: str, seen: tuple[str, ...] = ()) -> None:
            if name in order or name not in self.items or name in seen:
                return
            for need in sorted(self.items[name].first):
                place(need, (*seen, name))
            order.append(name)

        ranked = sorted(
            (i for i in self.items.values() if i.module not in exclude),
            key=lambda i: (list(SECTIONS).index(i.module) if i.module in SECTIONS else len(SECTIONS), i.line),
        )
        for item in ranked:
            place(item.name)
        out, section = [], None
        for name in order:
            item = self.items[name]
            if item.module not in SECTIONS:
                raise NotEmbeddable(f"{name} comes from {item.module}, which has no section")
            if item.module != section:
                section = item.module
                title = f"# -- {SECTIONS[section]} "
                out.append("\n\n" + title + "-" * max(4, 110 - len(title)) + "\n")
            out.append("\n\n" + item.text.rstrip() + "\n")
        return "".join(out)

    def names(self) -> set[str]:
        return set(self.items)


def _start(node) -> int:
    """The line a definition's source starts on (its decorators included)."""
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])


@functools.lru_cache(maxsize=64)
def _source(module: str) -> str:
    return inspect.getsource(sys.modules[module])


@functools.lru_cache(maxsize=64)
def _tree(module: str) -> ast.Module:
    return ast.parse(_source(module))


@functools.lru_cache(maxsize=64)
def _imports(module: str) -> dict[str, str]:
    """Each name ``module``'s import statements bind, with the statement as one line (the first wins)."""
    out: dict[str, str] = {}
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.Import):
            for a in node.names:
                alias = f" as {a.asname}" if a.asname else ""
                out.setdefault(a.asname or a.name.split(".")[0], f"import {a.name}{alias}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                alias = f" as {a.asname}" if a.asname else ""
                out.setdefault(a.asname or a.name, f"from {node.module} import {a.name}{alias}")
    return out


def _home(value, module: str, name: str) -> str:
    """Where ``value`` is defined: ``module.name`` for a function or class, else where ``module`` got it."""
    if isinstance(value, types.FunctionType | type):
        return f"{value.__module__}.{value.__qualname__}"
    if module not in sys.modules:
        return f"{module}.{name}"
    for node in _tree(module).body:
        if isinstance(node, ast.ImportFrom) and node.module and any(
            (a.asname or a.name) == name for a in node.names
        ):
            real = next(a.name for a in node.names if (a.asname or a.name) == name)
            return f"{node.module}.{real}"
    return f"{module}.{name}"


def _module_globals(obj) -> dict:
    return vars(sys.modules[obj.__module__])


def _function_of(member):
    """The function behind a class member (method, property, static or class method, cached property)."""
    if isinstance(member, staticmethod | classmethod):
        return member.__func__
    if isinstance(member, property):
        return member.fget
    if isinstance(member, functools.cached_property):
        return member.func
    return member if isinstance(member, types.FunctionType) else None


def _code_names(fn) -> set[str]:
    """The global names ``fn``'s code (and the code nested in it) loads when it runs."""
    if fn is None:
        return set()
    fn = inspect.unwrap(fn)
    out: set[str] = set()
    todo = [fn.__code__]
    while todo:
        code = todo.pop()
        for ins in dis.get_instructions(code):
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                out.add(ins.argval)
        todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return out


def _names_in(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _names_outside_bodies(tree) -> set[str]:
    """The names a definition loads when it is made: decorators, bases, defaults, class-level values
    (not function bodies, and not annotations: a program's annotations stay strings)."""
    out: set[str] = set()

    def visit(node) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for d in node.decorator_list:
                out.update(_names_in(d))
            for default in [*node.args.defaults, *node.args.kw_defaults]:
                if default is not None:
                    out.update(_names_in(default))
        elif isinstance(node, ast.ClassDef):
            for part in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
                out.update(_names_in(part))
            for child in node.body:
                visit(child)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                out.update(_names_in(node.value))
        else:
            out.update(_names_in(node))

    visit(tree)
    return out


def _import_line(space: dict, name: str) -> str | None:
    """The import statement a module wrote for ``name``, as one line (None: not found)."""
    module = space.get("__name__", "")
    return _imports(module).get(name) if module in sys.modules else None


_STDLIB = set(sys.stdlib_module_names)


def _third_party(line: str) -> bool:
    return line.split()[1].split(".")[0] not in _STDLIB
