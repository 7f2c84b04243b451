"""The code a verb runs (the import closure of its handler) and a digest of what that code does.

Snakemake reruns a job when its params change but never looks at the library its command
imports, so every rule passes ``code_version("<verb>")`` (workflow/rules/common.smk): the digest
of the closure of the verb its shell command runs. A change to a module then reruns exactly the
jobs whose verb reaches it, and the deps of each DVC stage are checked against the same closures.

Where a closure starts: the handlers that the real parser sets for the verb (``func``, and
``subcommand`` for ``mlrep align``'s subcommands) and the ``type`` functions of its options, in
their modules only the definitions they reach (an area's cli.py holds every verb of that area,
and `mlrep.cli` imports every area). From there it follows every import, those inside
functions too, relative imports, and ``importlib.import_module`` (of an f-string: every module
it may name). A module counts whole where code holds the module itself (``import m``, ``from
pkg import m``); ``from m import f`` counts the definition of `f` and what it reaches. Either
way the module's import-time statements count (a call at the top level), and a package that
only runs because one of its modules is imported counts with those alone. What code only
reaches through names that its process imports for other verbs (`mlrep.cli` imports them all)
does not count: an import-time side effect elsewhere is no part of a verb's code.

Data files: a path that code builds from its own location (``Path(__file__).parent / "x.yaml"``,
``resources.files("mlrep.report") / "claims.yaml"``, ``.joinpath(...)``, directly or through a
module constant) is read by that module. A folder counts with every file in it, its Python
files as modules: the fairseq plugins that ``--user-dir`` loads are reached this way.

What is hashed is what the code does, not its text: each module's syntax tree without docstrings
(``ast.dump``: comments and layout never reach it; of a module reached by names, only the
statements reached), the verb's options (flags, defaults, choices, types; not their help), and
each data file: YAML parsed (its comments and layout do not count), any other file by its
bytes. A JSON Schema counts by its ``scale`` enum alone: validation only accepts or refuses a
config, and what a job writes comes from the config it accepted, which the job's params carry;
the scales are the one thing a schema tells the code (`mlrep.config.scale_names`). So a new
chapter's keys in the params schema leave every finished job of the other chapters current.
"""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import inspect
import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterable, Iterator, KeysView, Mapping, ValuesView
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from mlrep.io import atomic_write_text

# Module name -> the top-level names reached in it (``@<line>``: the lambda or nested function
# on that line), or None for the whole module.
Roots = dict[str, frozenset[str] | None]
SCHEMA_SUFFIXES = (".schema.yaml", ".schema.yml")
# Decorators that only wrap what they decorate: a definition under them does nothing at import.
PURE_DECORATORS = frozenset(
    {
        "cache",
        "cached_property",
        "classmethod",
        "contextmanager",
        "dataclass",
        "lru_cache",
        "property",
        "staticmethod",
        "total_ordering",
        "wraps",
    }
)
# libyaml's loader where there is one: the same data, parsed in a fraction of the time
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
STORE_FORMAT = 1  # of `ClosureStore`'s files: raise it when what they hold changes


@dataclass(frozen=True)
class Closure:
    """The sources of one verb: repository-relative path -> the digest of what it does."""

    sources: Mapping[str, str]
    options: str = ""

    @property
    def paths(self) -> list[str]:
        return sorted(self.sources)

    @property
    def digest(self) -> str:
        digest = hashlib.sha256(self.options.encode() + b"\0")
        for path in self.paths:
            digest.update(path.encode() + b"\0" + self.sources[path].encode() + b"\0")
        return digest.hexdigest()[:16]


class Package:
    """The modules and data files of one Python package on disk, each parsed once."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory.resolve()
        self.name = self.directory.name
        self.root = self.directory.parent  # closure paths are relative to it (the repository)
        self._trees: dict[Path, ast.Module] = {}
        self._module_paths: dict[str, Path | None] = {}
        # a whole module's digest and the modules and data files it uses
        self._modules: dict[str, tuple[str, Roots, set[Path]]] = {}
        self._parts: dict[tuple[Path, frozenset[str]], list[ast.AST]] = {}
        self._contents: dict[Path, str] = {}
        # per statement (the unit `_reach` keeps or drops), so that the ~60 verbs that the
        # rules hash while Snakemake parses them walk and dump each statement once, not once
        # per verb and per growing set of names reached in its module
        self._statement_uses: dict[ast.AST, tuple[Roots, set[Path]]] = {}
        self._dumps: dict[ast.AST, str] = {}
        # a folder outside the package was read whole: a file added to it changes a closure
        # that the package's own files cannot tell, so such closures are not stored
        self.reads_outside_folders = False

    def fingerprint(self) -> str:
        """The digest of every file of the package (path and bytes) and of the Python that
        parses them: what the closures depend on, but for the data files outside the package
        (`ClosureStore` checks those one by one)."""
        digest = hashlib.sha256(f"{STORE_FORMAT}\0{sys.version}\0".encode())
        for path in self._files(self.directory):
            digest.update(self._relative(path).encode() + b"\0" + path.read_bytes() + b"\0")
        return digest.hexdigest()

    def module_path(self, name: str) -> Path | None:
        """The file of module `name`, or None when it is not a module of this package (looked
        up once: the closures ask ~15k times)."""
        if name not in self._module_paths:
            self._module_paths[name] = self._find_module(name)
        return self._module_paths[name]

    def _find_module(self, name: str) -> Path | None:
        parts = name.split(".")
        if parts[0] != self.name or not all(p.isidentifier() for p in parts):
            return None
        base = self.directory.joinpath(*parts[1:])
        for path in (base / "__init__.py", base.with_suffix(".py")):
            if path.is_file():
                return path
        return None

    @functools.cached_property
    def modules(self) -> list[str]:
        """Every module of the package."""
        files = self.directory.rglob("*.py")
        return sorted(self.module_name(p) for p in files if "__pycache__" not in p.parts)

    def module_name(self, path: Path) -> str:
        parts = path.relative_to(self.directory).with_suffix("").parts
        return ".".join([self.name, *parts[: -1 if parts[-1] == "__init__" else None]])

    def tree(self, path: Path) -> ast.Module:
        if path not in self._trees:
            self._trees[path] = _without_docstrings(ast.parse(path.read_bytes(), str(path)))
        return self._trees[path]

    def closure(self, roots: Roots) -> dict[str, str]:
        """Every source the roots reach: repository-relative path -> the digest of what it does.

        A module counts whole where code holds the module itself (``import m``, ``from pkg
        import m``); where code imports names from it (``from m import f``), the definitions
        of those names count and what they reach, with the module's import-time statements;
        a package that only runs because one of its modules is imported (``mlrep.chapters``
        for ``from mlrep.chapters.ch2_ems import runs``) counts with those statements alone.
        """
        whole: set[str] = set()
        parts: dict[str, frozenset[str]] = {}
        data: set[Path] = set()
        queue: list[tuple[str, frozenset[str] | None]] = list(roots.items())
        while queue:
            name, names = queue.pop()
            path = self.module_path(name)
            if path is None or name in whole:
                continue
            if names is None:
                whole.add(name)
                uses, files = self._whole(name, path)[1:]
            elif name not in parts or not names <= parts[name]:
                parts[name] = parts.get(name, frozenset()) | names
                uses, files = self._dependencies(name, path, self._part(path, parts[name]))
            else:
                continue
            queue.extend(uses.items())
            queue.extend((parent, frozenset()) for parent in _parents(name))
            data |= files
        sources = {
            self._relative(path): _sha256("\n".join(map(self._dump, self._part(path, names))))
            for name, names in parts.items()
            if name not in whole and (path := self.module_path(name)) is not None
        }
        for name in whole:
            path = self.module_path(name)
            sources[self._relative(path)] = self._whole(name, path)[0]
        for path in data:
            if path not in self._contents:
                self._contents[path] = _content(path)
            sources[self._relative(path)] = self._contents[path]
        return sources

    def _whole(self, name: str, path: Path) -> tuple[str, Roots, set[Path]]:
        """A whole module's digest and the modules (and their names) and data files it uses."""
        if name not in self._modules:
            tree = self.tree(path)
            uses = self._dependencies(name, path, tree.body)
            self._modules[name] = (_sha256(ast.dump(tree)), *uses)
        return self._modules[name]

    def _part(self, path: Path, names: frozenset[str]) -> list[ast.AST]:
        if (path, names) not in self._parts:
            self._parts[path, names] = _reach(self.tree(path), names)
        return self._parts[path, names]

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def _dump(self, node: ast.AST) -> str:
        if node not in self._dumps:
            self._dumps[node] = ast.dump(node)
        return self._dumps[node]

    def _dependencies(
        self, name: str, path: Path, nodes: Iterable[ast.AST]
    ) -> tuple[Roots, set[Path]]:
        """The modules (and their names) and data files that `nodes` (statements, or the
        definitions `_reach` picks) of module `name` (file `path`) use."""
        nodes = list(nodes)
        if missing := [node for node in nodes if node not in self._statement_uses]:
            constants = _constants(self.tree(path))
            for node in missing:
                self._statement_uses[node] = self._node_dependencies(name, path, node, constants)
        uses: Roots = {}
        files: set[Path] = set()
        for node in nodes:
            for module, names in self._statement_uses[node][0].items():
                _use(uses, module, names)
            files |= self._statement_uses[node][1]
        return uses, files

    def _node_dependencies(
        self, name: str, path: Path, top: ast.AST, constants: Mapping[str, ast.expr]
    ) -> tuple[Roots, set[Path]]:
        """`_dependencies` of one node: a path expression and its operands lie inside the
        same statement, so the statements of a module can be looked at one by one."""
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        uses: Roots = {}
        found: list[tuple[ast.AST, Path]] = []
        inner: set[int] = set()  # operands of a longer path expression
        for node in ast.walk(top):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for module, names in self._imported(node, package).items():
                    _use(uses, module, names)
            elif (pattern := _imported_by_name(node)) is not None:
                for module in filter(pattern.fullmatch, self.modules):
                    _use(uses, module, None)
            located = _located(node, path, constants, self._package_directory)
            if located is not None:
                found.append((node, located[0]))
                inner.add(id(located[1]))
        files: set[Path] = set()
        for node, target in found:
            if id(node) not in inner:
                for file in self._files(target):
                    if file.suffix == ".py":
                        _use(uses, self.module_name(file), None)
                    else:
                        files.add(file)
        return uses, files

    def _imported(self, node: ast.Import | ast.ImportFrom, package: str) -> Roots:
        """The package's modules an import statement uses (their packages follow from them):
        ``import a.b`` holds `a` and `a.b` whole (code reaches both as attributes); ``from a
        import b`` holds the module `a.b` whole, or else the name `b` of `a`."""
        uses: Roots = {}
        if isinstance(node, ast.Import):
            for alias in node.names:
                for module in [*_parents(alias.name), alias.name]:
                    _use(uses, module, None)
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                if self.module_path(f"{base}.{alias.name}"):
                    _use(uses, f"{base}.{alias.name}", None)
                else:
                    _use(uses, base, None if alias.name == "*" else frozenset({alias.name}))
        return {module: names for module, names in uses.items() if self.module_path(module)}

    def _package_directory(self, name: str) -> Path | None:
        path = self.module_path(name)
        return path.parent if path is not None and path.name == "__init__.py" else None

    def _files(self, target: Path) -> list[Path]:
        """The files of a located path inside the repository (all of a folder's files)."""
        target = target.resolve()
        if not target.is_relative_to(self.root):
            return []
        if target.is_file():
            return [target]
        if not target.is_dir():
            return []
        if not target.is_relative_to(self.directory):
            self.reads_outside_folders = True
        return sorted(
            p
            for p in target.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
        )


class Verbs:
    """The verbs of one command-line parser and their closures, each computed once."""

    def __init__(
        self,
        parser: argparse.ArgumentParser,
        package: Package | None = None,
        store: Path | None = None,
    ) -> None:
        """`store`: a folder where the closures of every verb are kept between processes
        (`ClosureStore`); None computes them in each process."""
        self.parser = parser
        self.package = package or Package(Path(__file__).resolve().parent)
        self._closures: dict[str, Closure] = {}
        self._store = None if store is None else ClosureStore(store, self.package)
        self._stored: dict[str, dict[str, str]] | None = None

    def names(self) -> list[str]:
        """Every verb that has a handler ("nmt train", "align", "align symmetrize", ...)."""

        def walk(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> Iterator[str]:
            if words and any(callable(v) for v in parser._defaults.values()):
                yield " ".join(words)
            for word, child in _subcommands(parser).items():
                yield from walk(child, (*words, word))

        return sorted(walk(self.parser, ()))

    def verb_of(self, command: str, program: str = "mlrep") -> str | None:
        """The verb a shell command runs (``exec mlrep nmt train --data x`` -> "nmt train")."""
        words = shlex.split(command)
        if program not in words:
            return None
        parser, verb = self.parser, []
        for word in words[words.index(program) + 1 :]:
            children = _subcommands(parser)
            if word not in children:
                break
            parser = children[word]
            verb.append(word)
        return " ".join(verb) or None

    def closure(self, verb: str) -> Closure:
        if verb not in self._closures:
            if self._store is None:
                sources = self._sources(verb)
            else:
                if self._stored is None:
                    self._stored = self._store.load() or self._store.save(
                        {name: self._sources(name) for name in self.names()}
                    )
                sources = self._stored.get(verb) or self._sources(verb)
            self._closures[verb] = Closure(sources, _options(self._path(verb)[1:]))
        return self._closures[verb]

    def _sources(self, verb: str) -> dict[str, str]:
        """The sources of `verb`'s closure, computed."""
        parsers = self._path(verb)
        roots: Roots = {}
        callables = [v for p in parsers for v in p._defaults.values() if callable(v)]
        if not callables:
            raise ValueError(f"{verb!r} is not a verb of {self.parser.prog}: no handler")
        callables += [a.type for p in parsers[1:] for a in p._actions if callable(a.type)]
        for function in callables:
            _add_root(roots, function, self.package)
        return self.package.closure(roots)

    def _path(self, verb: str) -> list[argparse.ArgumentParser]:
        parsers = [self.parser]
        for word in verb.split():
            children = _subcommands(parsers[-1])
            if word not in children:
                raise ValueError(f"{self.parser.prog} has no verb {verb!r}")
            parsers.append(children[word])
        return parsers


class ClosureStore:
    """The closures of every verb, kept in a folder between processes.

    Snakemake hashes ~70 closures each time it parses the workflow (every dry run, every
    SLURM job, every DVC stage), about 2.5 s of a 6 s parse; the closures only change when
    the package's files do. A stored set is named by the package's `fingerprint` and holds
    the digest of each data file outside the package that a closure reads, checked on load;
    a set that read a whole folder outside the package is never stored. Anything unreadable
    counts as absent and anything unwritable is skipped: the store saves time, never decides
    a digest.
    """

    KEEP = 8  # stored sets kept (one per version of the package; older ones are removed)

    def __init__(self, folder: Path, package: Package) -> None:
        self.folder = folder
        self.package = package
        self.path = folder / f"closures-{package.fingerprint()[:32]}.json"

    def load(self) -> dict[str, dict[str, str]] | None:
        """The stored closures, or None when none are stored or an outside file changed."""
        try:
            stored = json.loads(self.path.read_text(encoding="utf-8"))
            outside = stored["outside"]
            unchanged = all(
                (path := self.package.root / name).is_file() and _content(path) == digest
                for name, digest in outside.items()
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return stored["verbs"] if unchanged else None

    def save(self, verbs: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        """Store `verbs` (verb -> sources) unless a closure read an outside folder; returns them."""
        if self.package.reads_outside_folders:
            return verbs
        inside = f"{self.package.name}/"
        outside = {
            name: digest
            for sources in verbs.values()
            for name, digest in sources.items()
            if not name.startswith(inside)
        }
        try:
            atomic_write_text(self.path, json.dumps({"outside": outside, "verbs": verbs}))
            others = sorted(self.folder.glob("closures-*.json"), key=os.path.getmtime)
            for old in others[: -self.KEEP]:
                old.unlink(missing_ok=True)
        except OSError:
            pass
        return verbs


def user_store() -> Path:
    """The user's folder for stored closures: ``$XDG_CACHE_HOME/mlrep`` (~/.cache/mlrep), so
    every copy of the same code (a test's, a DVC experiment's checkout) shares them."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "mlrep"


def _use(uses: Roots, module: str, names: frozenset[str] | None) -> None:
    """Add `names` of `module` (None: all of it) to `uses`."""
    previous = uses.get(module, frozenset())
    uses[module] = None if names is None or previous is None else previous | names


def _imported_by_name(node: ast.AST) -> re.Pattern | None:
    """The names of the modules ``import_module(name)`` or ``__import__(name)`` may import.

    A constant is one module; an f-string any module its constant parts fit
    (``f"{chapter.home}.metrics"``: every ``….metrics``); any other expression any module.
    """
    if not isinstance(node, ast.Call) or not node.args:
        return None
    function = node.func
    called = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    if called not in {"import_module", "__import__"}:
        return None
    argument = node.args[0]
    if isinstance(argument, ast.Constant):
        return re.compile(re.escape(str(argument.value)))
    if isinstance(argument, ast.JoinedStr):
        return re.compile(
            "".join(
                re.escape(str(part.value)) if isinstance(part, ast.Constant) else ".+"
                for part in argument.values
            )
        )
    return re.compile(".*")


def _parents(name: str) -> list[str]:
    """The packages that run before module `name` (``a.b.c`` -> ``a``, ``a.b``)."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return {
        word: child
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for word, child in action.choices.items()
    }


def _add_root(roots: Roots, function: Callable, package: Package) -> None:
    """Reach `function` from its module: the top-level name it is defined under."""
    function = inspect.unwrap(function)
    while isinstance(function, functools.partial):
        function = function.func
    module = getattr(function, "__module__", None)
    qualname = getattr(function, "__qualname__", "<unknown>")
    if not module or package.module_path(module) is None:
        return
    code = getattr(function, "__code__", None)
    if "<" not in qualname:
        name = qualname.split(".")[0]
    elif code is not None:
        name = f"@{code.co_firstlineno}"  # a lambda or nested function: the one on that line
    else:
        name = None
    _use(roots, module, None if name is None else frozenset({name}))


def _options(parsers: list[argparse.ArgumentParser]) -> str:
    """What a verb's options do: flags, destinations, defaults, choices, types (not help)."""
    lines = []
    for parser in parsers:
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._VersionAction):
                continue
            if isinstance(action, argparse._SubParsersAction):
                lines.append(f"subcommands {action.dest}")
                continue
            fields = (type(action).__name__, action.option_strings, action.dest, action.nargs)
            values = (action.const, action.default, action.choices, action.type)
            lines.append(repr((*fields, action.required, *map(_value, values))))
        lines.append(repr(sorted((k, _value(v)) for k, v in parser._defaults.items())))
    return "\n".join(lines)


def _value(value: Any) -> str:
    if callable(value):
        name = getattr(value, "__qualname__", type(value).__qualname__)
        return f"{getattr(value, '__module__', '')}.{name}"
    if isinstance(value, Mapping):
        return repr(sorted((repr(k), _value(v)) for k, v in value.items()))
    if isinstance(value, set | frozenset):
        return repr(sorted(map(_value, value)))
    if isinstance(value, list | tuple | range | KeysView | ValuesView):
        return repr([_value(v) for v in value])
    return repr(value)


def _without_docstrings(tree: ast.Module) -> ast.Module:
    """`tree` without any statement that is a bare string (docstrings, string 'comments')."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            kept = [s for s in body if not _is_string_statement(s)]
            node.body = kept or [ast.Pass()]
    return tree


def _is_string_statement(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _reach(tree: ast.Module, names: frozenset[str]) -> list[ast.AST]:
    """The top-level statements of `tree` that the definitions `names` reach, in order.

    A name ``@<line>`` is the lambda or nested function defined on that line (an option's
    ``type`` made inside ``register``). An import statement counts one name at a time, so
    reaching ``data`` in ``from mlrep.nmt import data, prepare`` reaches `mlrep.nmt.data` and
    not `prepare`. A statement that does something at import time always counts (a call, a
    loop, a definition under a decorator that may register it: ``@register_model``), except
    the ``if __name__ == "__main__"`` block; an assignment counts where its name is used.
    """
    lines = {int(name[1:]) for name in names if name.startswith("@")}
    units: list[tuple[set[str], ast.AST]] = [
        (set(), node)
        for node in (ast.walk(tree) if lines else ())
        if isinstance(node, ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef)
        and min(n.lineno for n in [node, *getattr(node, "decorator_list", [])]) in lines
    ]
    for statement in tree.body:
        if isinstance(statement, ast.Import | ast.ImportFrom):
            for alias in statement.names:
                single = type(statement)(**{**vars(statement), "names": [alias]})
                units.append(({_bound_by_alias(alias)}, single))
        elif _runs_at_import(statement):
            units.append((set(), statement))
        elif not _is_main_guard(statement):
            units.append((_bound(statement), statement))
    wanted, reached = set(names), set()
    while new := {
        i
        for i, (bound, _) in enumerate(units)
        if i not in reached and (not bound or bound & wanted)
    }:
        reached |= new
        wanted |= {n.id for i in new for n in ast.walk(units[i][1]) if isinstance(n, ast.Name)}
    return [unit for i, (_, unit) in enumerate(units) if i in reached]


def _runs_at_import(statement: ast.stmt) -> bool:
    """Whether a top-level statement may do more at import time than bind its names."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return any(_decorator_name(d) not in PURE_DECORATORS for d in statement.decorator_list)
    if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
        return False
    if isinstance(statement, ast.Import | ast.ImportFrom | ast.Pass | ast.Global):
        return False
    if isinstance(statement, ast.If | ast.Try):
        if _is_main_guard(statement):
            return False
        bodies = [statement.body, statement.orelse, getattr(statement, "finalbody", [])]
        bodies += [handler.body for handler in getattr(statement, "handlers", [])]
        return any(_runs_at_import(child) for body in bodies for child in body)
    return True  # a call, a loop, a with block, an assert


def _decorator_name(decorator: ast.expr) -> str:
    while isinstance(decorator, ast.Call):
        decorator = decorator.func
    return decorator.attr if isinstance(decorator, ast.Attribute) else getattr(decorator, "id", "")


def _bound_by_alias(alias: ast.alias) -> str:
    return alias.asname or alias.name.split(".")[0]


def _bound(statement: ast.stmt) -> set[str]:
    """The names a top-level statement binds (those of a compound statement's body too)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return {_bound_by_alias(alias) for alias in statement.names}
    if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return {
            n.id
            for target in targets
            for n in ast.walk(target)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
    bound = set()
    for field in ("body", "orelse", "finalbody", "handlers"):
        for child in getattr(statement, field, []):
            if isinstance(child, ast.ExceptHandler):
                bound |= {n for s in child.body for n in _bound(s)}
            else:
                bound |= _bound(child)
    return bound


def _is_main_guard(statement: ast.stmt) -> bool:
    test = statement.test if isinstance(statement, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )


def _constants(tree: ast.Module) -> dict[str, ast.expr]:
    """Top-level ``NAME = expression`` bindings: the constants a path expression may use."""
    return {
        s.targets[0].id: s.value
        for s in tree.body
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
    }


def _located(
    node: ast.AST,
    module: Path,
    constants: Mapping[str, ast.expr],
    package_directory: Callable[[str], Path | None],
) -> tuple[Path, ast.AST] | None:
    """A path built from the module's location plus literal parts, and its shorter operand.

    ``Path(__file__).parent / "a" / "b.yaml"`` and ``resources.files("mlrep.x").joinpath("a")``
    qualify; the location alone (``Path(__file__).parent``) does not: it names no file.
    """
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        base, parts = node.left, [node.right]
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "joinpath"
    ):
        base, parts = node.func.value, node.args
    else:
        return None
    literal = [p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str)]
    if not parts or len(literal) != len(parts):
        return None
    anchor = _anchor(base, module, constants, package_directory, depth=0)
    return (anchor.joinpath(*literal), base) if anchor is not None else None


def _anchor(
    node: ast.AST,
    module: Path,
    constants: Mapping[str, ast.expr],
    package_directory: Callable[[str], Path | None],
    depth: int,
) -> Path | None:
    """The location an expression names when it is built from ``__file__`` or a package."""
    if depth > 20:
        return None

    def again(child: ast.AST) -> Path | None:
        return _anchor(child, module, constants, package_directory, depth + 1)

    if isinstance(node, ast.Name):
        if node.id == "__file__":
            return module
        return again(constants[node.id]) if node.id in constants else None
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = again(node.value)
        return inner.parent if inner is not None else None
    located = _located(node, module, constants, package_directory)
    if located is not None:
        return located[0]
    if not isinstance(node, ast.Call):
        return None
    function = node.func
    called = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    if called in {"resolve", "absolute"} and isinstance(function, ast.Attribute) and not node.args:
        return again(function.value)
    if called in {"Path", "str"} and len(node.args) == 1:
        return again(node.args[0])
    if called == "files" and len(node.args) == 1:
        name = node.args[0]
        if isinstance(name, ast.Name):
            name = constants.get(name.id, name)
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            return package_directory(name.value)
    return None


def _content(path: Path) -> str:
    """The digest of what a data file says: YAML parsed (a schema: its scales, see the
    module's doc), any other file by its bytes."""
    if path.suffix in {".yaml", ".yml"}:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
        if path.name.endswith(SCHEMA_SUFFIXES):
            data = data.get("properties", {}).get("scale", {}).get("enum")
        return _sha256(json.dumps(data, ensure_ascii=False, default=str))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
