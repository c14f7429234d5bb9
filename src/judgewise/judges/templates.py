"""Versioned judge prompt templates: Jinja2 files with a metadata header, kept in a user-extendable registry.

A template file (``judges/templates/*.j2``, or any file a user names) opens with a metadata comment and
defines its parts as Jinja2 blocks::

    {#- judgewise-template
    name: my_judge            # registry name
    version: 1                # bump when the wording changes: it enters every store key
    kind: pairwise            # pairwise (response_a, response_b) or pointwise (response)
    parser: llmbar_binary     # a name in judgewise.judges.parsing.PARSERS
    max_tokens: 8             # optional; other keys (e.g. scale) are passed to the parser and the blocks
    -#}
    {% block system %}…{% endblock %}   (optional)
    {% block user %}…{% endblock %}     (required; variables: instruction, response_a/response_b or
                                         response, reference, and the metadata options)
    {% block reask %}…{% endblock %}    (required: "finish with your verdict …", sent once on a parse failure)
    {% block grammar %}…{% endblock %}  (optional GBNF restricting a local model to the verdict tokens)

Templates are user files that people copy and share, so they render in a sandbox
(:class:`jinja2.sandbox.ImmutableSandboxedEnvironment`: no access to attributes such as ``__globals__``, no
mutation of values) that also caps ``*`` and ``**`` results; a template that breaks out or fails while rendering
is a :class:`ConfigError` naming its file.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import jinja2
import yaml
from jinja2 import meta, nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from judgewise.errors import ConfigError, InputError
from judgewise.judges.parsing import RegexParser, make_parser
from judgewise.registry import Registry

KINDS = ("pairwise", "pointwise")
_HEADER = re.compile(r"\A\s*\{#-?\s*judgewise-template\s*\n(?P<meta>.*?)-?#\}", re.DOTALL)
_REQUIRED_META = ("name", "version", "kind", "parser")
_RESERVED_META = (*_REQUIRED_META, "max_tokens", "source")
_MAX_PRODUCT = 1_000_000  # longest string/list a template may build with ``*``; largest exponent 2**16
_RENDER_ERRORS = (jinja2.TemplateError, TypeError, ValueError, ArithmeticError, LookupError, AttributeError,
                  RecursionError)


class _PromptSandbox(ImmutableSandboxedEnvironment):
    """The sandbox judge templates render in: no unsafe attributes or calls, no mutation, and no ``*``/``**``,
    filter or method argument that would build a huge string, list or number (``'x' * 10**10``,
    ``'x'|center(10**9)``, ``'x'.ljust(10**9)`` are SecurityErrors, not an OOM)."""

    intercepted_binops = frozenset({"*", "**"})

    def __init__(self, **options):
        super().__init__(**options)
        self.filters = {name: _capped_filter(fn) for name, fn in self.filters.items()}

    def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 — jinja2's signature
        _check_sizes(args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def call_binop(self, context, operator, left, right):
        if operator == "**" and isinstance(right, int) and abs(right) > 2 ** 16:
            raise SecurityError(f"exponent {right} is too large for a template")
        if operator == "*":
            size = _product_size(left, right)
            if size > _MAX_PRODUCT:
                raise SecurityError(f"'*' would build a value of length {size} (more than {_MAX_PRODUCT:,})")
        return super().call_binop(context, operator, left, right)


def _check_sizes(args, kwargs) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_PRODUCT:
            raise SecurityError(f"argument {value} is too large for a template (more than {_MAX_PRODUCT:,})")


def _capped_filter(fn):
    """``fn`` refusing huge numeric arguments after the filtered value (``center(10**9)``)."""
    @functools.wraps(fn)  # keeps jinja2's pass_context/pass_environment marker
    def capped(*args, **kwargs):
        start = 1 + (getattr(fn, "jinja_pass_arg", None) is not None)
        _check_sizes(args[start:], kwargs)
        return fn(*args, **kwargs)
    return capped


def _product_size(left, right) -> int:
    """Length of ``left * right`` when it repeats a sequence (0 for numbers)."""
    for seq, n in ((left, right), (right, left)):
        if isinstance(seq, (str, bytes, list, tuple)) and isinstance(n, int):
            return len(seq) * max(n, 0)
    return 0


_ENV = _PromptSandbox(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)


@dataclass(frozen=True)
class JudgeTemplate:
    """One prompt template: renders chat messages, knows its parser, re-ask message and grammar."""

    name: str
    version: str
    kind: str
    parser: RegexParser
    source: str  # the file's full text (its hash is part of the judge identity)
    path: str
    max_tokens: int | None = None
    options: dict = field(default_factory=dict)  # extra metadata (e.g. scale) visible to the blocks

    @property
    def sha(self) -> str:
        """Short content hash of the template text: an edited file never reuses old store rows."""
        return hashlib.sha256(self.source.encode("utf-8")).hexdigest()[:16]

    @property
    def verdict_tokens(self) -> dict[str, float]:
        """Verdict tokens → outcome value, for soft scores from logprobs (empty if multi-token)."""
        return dict(self.parser.token_values)

    def messages(self, **variables) -> list[dict]:
        """System + user chat messages for these variables (see the module docstring for names)."""
        out = []
        system = self._render("system", variables)
        if system:
            out.append({"role": "system", "content": system})
        out.append({"role": "user", "content": self._render("user", variables)})
        return out

    def pairwise_messages(self, instruction: str, first: str, second: str,
                          reference: str | None = None, **variables) -> list[dict]:
        """Messages showing ``first`` as response A and ``second`` as response B (``variables``: e.g. ``turns``)."""
        return self.messages(**variables, instruction=instruction, response_a=first, response_b=second,
                             reference=reference)

    def pointwise_messages(self, instruction: str, response: str, reference: str | None = None,
                           **variables) -> list[dict]:
        """Messages asking the judge about one response (``variables``: e.g. ``turns`` of a conversation)."""
        return self.messages(**variables, instruction=instruction, response=response, reference=reference)

    def reask(self) -> str:
        """The follow-up user message sent once when no verdict could be parsed."""
        return self._render("reask", {})

    def grammar(self) -> str | None:
        """GBNF grammar restricting output to a well-formed verdict, or ``None`` if the file has none."""
        return self._render("grammar", {}) or None

    def _render(self, block: str, variables: dict) -> str:
        if block in _fixed_blocks(self.source):  # reads no variable (a system prompt): the same text every call
            key = (self.source, block)
            if key not in _FIXED_TEXT:
                _FIXED_TEXT[key] = self._render_now(block, {})
            return _FIXED_TEXT[key]
        return self._render_now(block, variables)

    def _render_now(self, block: str, variables: dict) -> str:
        compiled = _compile(self.source)
        if block not in compiled.blocks:
            if block in ("user", "reask"):
                raise ConfigError(f"template {self.name!r} ({self.path}) has no {{% block {block} %}}")
            return ""
        env, flat = compiled.environment, _flat_globals(self.source, compiled)
        # what compiled.new_context(vars) builds, with the globals flattened once (not a ChainMap copied per call)
        context = env.context_class(env, {**flat, **self.options, **variables}, compiled.name, compiled.blocks,
                                    globals=flat)
        try:
            return "".join(compiled.blocks[block](context)).strip()
        except SecurityError as exc:
            raise ConfigError(f"template {self.name!r} ({self.path}), block {block!r}: refused by the template "
                              f"sandbox: {_one_line(exc)}") from None
        except jinja2.UndefinedError as exc:
            raise ConfigError(f"template {self.name!r} ({self.path}), block {block!r}: {exc.message}") from exc
        except _RENDER_ERRORS as exc:
            raise ConfigError(f"template {self.name!r} ({self.path}), block {block!r}: rendering failed: "
                              f"{type(exc).__name__}: {_one_line(exc)}") from exc


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


_COMPILED: dict[str, jinja2.Template] = {}


def _compile(source: str) -> jinja2.Template:
    if source not in _COMPILED:
        _COMPILED[source] = _ENV.from_string(source)
    return _COMPILED[source]


_FLAT_GLOBALS: dict[str, dict] = {}


def _flat_globals(source: str, compiled: jinja2.Template) -> dict:
    """The compiled template's globals (a ChainMap of its own over the environment's) as one dict, made once."""
    if source not in _FLAT_GLOBALS:
        _FLAT_GLOBALS[source] = dict(compiled.globals)
    return _FLAT_GLOBALS[source]


_FIXED_BLOCKS: dict[str, frozenset[str]] = {}
_FIXED_TEXT: dict[tuple[str, str], str] = {}


def _fixed_blocks(source: str) -> frozenset[str]:
    """Names of the blocks of ``source`` that read no variable (nor any global such as ``range``): rendered once."""
    if source not in _FIXED_BLOCKS:
        fixed = set()
        for block in _ENV.parse(source).find_all(nodes.Block):
            body = nodes.Template(block.body, lineno=block.lineno)
            body.set_environment(_ENV)
            if not meta.find_undeclared_variables(body):
                fixed.add(block.name)
        _FIXED_BLOCKS[source] = frozenset(fixed)
    return _FIXED_BLOCKS[source]


def parse_template(source: str, path: str = "<string>") -> JudgeTemplate:
    """Build a template from file text; bad metadata or Jinja syntax is an InputError naming the file."""
    header = _HEADER.match(source)
    if header is None:
        raise InputError("expected the file to open with a '{#- judgewise-template ... -#}' metadata comment",
                         file=path)
    try:
        meta = yaml.safe_load(header.group("meta")) or {}
    except yaml.YAMLError as exc:
        raise InputError(f"metadata is not valid YAML: {exc}", file=path) from exc
    if not isinstance(meta, dict):
        raise InputError(f"metadata must be a mapping, found {type(meta).__name__}", file=path)
    for key in _REQUIRED_META:
        if meta.get(key) in (None, ""):
            raise InputError(f"required metadata key missing (need {', '.join(_REQUIRED_META)})",
                             file=path, field=key)
    if meta["kind"] not in KINDS:
        raise InputError(f"expected one of {KINDS}, found {meta['kind']!r}", file=path, field="kind")
    try:
        _compile(source)
    except jinja2.TemplateSyntaxError as exc:
        raise InputError(f"Jinja2 syntax error at line {exc.lineno}: {exc.message}", file=path) from exc
    options = {k: v for k, v in meta.items() if k not in _RESERVED_META}
    template = JudgeTemplate(name=str(meta["name"]), version=str(meta["version"]), kind=meta["kind"],
                             parser=make_parser(str(meta["parser"]), **options), source=source, path=path,
                             max_tokens=int(meta["max_tokens"]) if meta.get("max_tokens") else None,
                             options=options)
    template.reask()  # fail now, not mid-run, when a required block is missing
    return template


def load_template_file(path: str | Path) -> JudgeTemplate:
    """Read a template from a file a user names (it does not enter the registry unless registered)."""
    path = Path(path)
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read template file: {exc}", file=str(path)) from exc
    return parse_template(source, str(path))


TEMPLATES: Registry[JudgeTemplate] = Registry("judge template")  # built-ins loaded on first use


def _load_builtins() -> None:
    if TEMPLATES:
        return
    folder = resources.files("judgewise.judges").joinpath("templates")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".j2"):
            template = parse_template(entry.read_text(encoding="utf-8"), f"judgewise/judges/templates/{entry.name}")
            TEMPLATES.setdefault(template.name, template)


def register_template(template: JudgeTemplate, *, replace: bool = False) -> JudgeTemplate:
    """Add a template to the registry under its name (``replace=True`` to override a built-in)."""
    _load_builtins()
    if template.name in TEMPLATES and not replace:
        raise ConfigError(f"template {template.name!r} is already registered; pass replace=True to override it")
    TEMPLATES[template.name] = template
    return template


def available_templates() -> list[str]:
    """Names of registered templates (built-ins first loaded from the package)."""
    _load_builtins()
    return sorted(TEMPLATES)


def get_template(name_or_path: str | Path | JudgeTemplate) -> JudgeTemplate:
    """A registered template by name, or one read from a file path (user override)."""
    if isinstance(name_or_path, JudgeTemplate):
        return name_or_path
    _load_builtins()
    key = str(name_or_path)
    if key in TEMPLATES:
        return TEMPLATES[key]
    if Path(key).is_file():
        return load_template_file(key)
    raise ConfigError(f"unknown judge template {key!r}: not a registered name ({', '.join(sorted(TEMPLATES))}) "
                      "nor an existing file")
