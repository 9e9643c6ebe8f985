"""Load and validate a suite: YAML -> JSON Schema -> cross-field checks -> Scenarios.

Every problem is reported once, as ``path: message`` with the YAML line, e.g.::

    [3] zh-takeout-04 > expect.preset_by_turn (line 61): must be a caller turn (0..3), got 5

Exceptions::

    SuiteError                      a suite could not be loaded
     └── (carries .problems: list[Problem], one per bad field)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from .scenario import (
    REGULAR_KEY,
    SERVICE_SCENES,
    SILENCE,
    AdaptiveSpec,
    CallerSpec,
    EmergentSpec,
    Expect,
    OwnerSpec,
    PresetsSpec,
    Scenario,
    emergent_key,
)

BUILTIN_PREFIX = "builtin:"
# dev2: brief D development; test2: the held-out brief C; test3: brief T3 (stop 17), held out
BUILTIN_SUITES = ("dev", "dev2", "test", "test2", "test3")


@dataclass(frozen=True, slots=True)
class Problem:
    path: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line is not None else ""
        return f"{self.path or '<suite>'}{where}: {self.message}"


class SuiteError(Exception):
    """A suite failed to load; ``problems`` lists one entry per bad field."""

    def __init__(self, source: str, problems: list[Problem]) -> None:
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"{source}: {len(problems)} problem(s)\n{lines}")


# ------------------------------------------------------------------ YAML ----


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys instead of keeping the last one."""


def _construct_mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _line_of(node: yaml.Node | None, path: tuple[str | int, ...]) -> int | None:
    """1-based line of the YAML node at ``path`` (or of its deepest existing ancestor)."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in path:
        if isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                break
            node = node.value[part]
        elif isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if k.value == part), None)
            if match is None:
                break
            node = match
        else:
            break
        line = node.start_mark.line + 1
    return line


# --------------------------------------------------------------- schema ----


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    text = resources.files("bench").joinpath("scenario.schema.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _path_label(data: Any, path: tuple[str | int, ...]) -> str:
    if not path:
        return ""
    head = path[0]
    label = f"[{head}]"
    if isinstance(head, int) and isinstance(data, list) and head < len(data):
        item = data[head]
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            label += f" {item['id']}"
    rest = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in path[1:])
    return f"{label} > {rest}".replace(".[", "[") if rest else label


_JSON_TYPES = {
    str: "string", bool: "boolean", int: "integer", float: "number",
    list: "list", dict: "mapping", type(None): "null",
}  # fmt: skip


def _message(err: ValidationError) -> str:
    v = err.validator
    instance: Any = err.instance
    if v == "required":
        missing = str(err.message).split("'")[1]
        return f"required field '{missing}' is missing"
    if v == "additionalProperties":
        return "unknown field (check the spelling; see docs/scenarios.md)"
    if v == "type":
        want = err.validator_value
        want_s = " or ".join(want) if isinstance(want, list) else str(want)
        got = _JSON_TYPES.get(type(instance), type(instance).__name__)
        hint = ""
        if want_s.startswith("string") and got in ("integer", "number", "boolean"):
            hint = " (quote it in YAML: numbers and yes/no/on/off are not strings)"
        return f"expected {want_s}, got {got} {instance!r}{hint}"
    if v == "enum":
        options: list[Any] = list(err.validator_value)  # type: ignore[arg-type]
        return f"must be one of {', '.join(map(str, options))}; got {instance!r}"
    if v == "pattern" and err.validator_value == "\\S":
        return "must not be blank"
    if v == "pattern":
        return f"{instance!r} does not match {err.validator_value}"
    n = err.validator_value
    if v == "minItems":
        return f"must have at least {n} item(s), got {len(instance)}"
    if v == "maxItems":
        return f"must have at most {n} items, got {len(instance)}"
    if v == "minLength":
        return "must not be empty"
    if v == "maxLength":
        return f"must be at most {n} characters, got {len(instance)}"
    if v == "minimum":
        return f"must be >= {n}, got {instance!r}"
    if v == "maximum":
        return f"must be <= {n}, got {instance!r}"
    if v == "uniqueItems":
        return "must not repeat items"
    return str(err.message)


def _schema_problems(data: Any, root: yaml.Node | None) -> list[Problem]:
    by_path: dict[tuple[str | int, ...], ValidationError] = {}
    for err in Draft202012Validator(schema()).iter_errors(data):
        path = tuple(err.absolute_path)
        keys: list[tuple[str | int, ...]] = [path]
        if err.validator == "required":  # report on the missing field itself
            keys = [(*path, str(err.message).split("'")[1])]
        elif err.validator == "additionalProperties":  # ... and on each unknown field
            known = set(err.schema.get("properties", {}))
            keys = [(*path, str(x)) for x in err.instance if x not in known]
        # One problem per field: the first error jsonschema reports at each path.
        for key in keys:
            by_path.setdefault(key, err)
    return [Problem(_path_label(data, k), _message(e), _line_of(root, k)) for k, e in by_path.items()]


# ---------------------------------------------------------- cross-field ----


def _cross_problems(data: list[dict[str, Any]], root: yaml.Node | None, skip: set[int]) -> list[Problem]:
    """Checks across fields, for the scenarios that passed the schema (not in ``skip``)."""
    problems: list[Problem] = []
    seen: dict[str, int] = {}

    for i, sc in enumerate(data):
        if i in skip:
            continue

        def add(path: tuple[str | int, ...], msg: str, i: int = i) -> None:
            full = (i, *path)
            problems.append(Problem(_path_label(data, full), msg, _line_of(root, full)))

        sid = sc["id"]
        if sid in seen:
            add(("id",), f"duplicate id (also scenario [{seen[sid]}])")
        seen.setdefault(sid, i)
        _check_presets(sc, add)
        _check_expect(sc, add)
    return problems


def _check_presets(sc: dict[str, Any], add: Any) -> None:
    presets = sc.get("presets") or {}
    regular = presets.get("regular")
    emergent = presets.get("emergent") or []
    case, relation = sc["preset_case"], sc["relation"]
    if regular is not None and sc["scene"] not in SERVICE_SCENES:
        add(("presets", "regular"), f"regular presets exist only for {', '.join(SERVICE_SCENES)}")
    if case == "regular" and regular is None:
        add(("presets", "regular"), "preset_case regular needs a regular preset response")
    if case == "emergent" and not emergent:
        add(("presets", "emergent"), "preset_case emergent needs at least one emergent preset")
    if (case == "none") != (relation == "none"):
        add(("relation",), "relation is none exactly when preset_case is none")


def _check_expect(sc: dict[str, Any], add: Any) -> None:
    ex = sc["expect"]
    last = len(sc["caller"]["turns"]) - 1
    presets = sc.get("presets") or {}
    keys = ([REGULAR_KEY] if presets.get("regular") is not None else []) + [
        emergent_key(j) for j in range(len(presets.get("emergent") or []))
    ]
    target = ex.get("preset_target")
    if target is not None and target not in keys:
        add(("expect", "preset_target"), f"no such preset {target!r}; the pool has {keys}")
    for name in ("preset_not_before_turn", "preset_by_turn", "end_not_before_turn"):
        value = ex.get(name)
        if isinstance(value, int) and value > last:
            add(("expect", name), f"must be a caller turn (0..{last}), got {value}")
    by, not_before = ex.get("preset_by_turn"), ex.get("preset_not_before_turn", 0)
    if ex["preset_conveyed"]:
        if not keys:
            add(("expect", "preset_conveyed"), "true, but the preset pool is empty")
        if isinstance(by, int) and by < not_before:
            add(("expect", "preset_by_turn"), f"{by} is before preset_not_before_turn {not_before}")
    elif by is not None:
        add(("expect", "preset_by_turn"), "must be null when preset_conveyed is false")
    if ex["preset_conveyed"] and ex.get("preset_max_times") == 0:
        add(("expect", "preset_max_times"), "0 (must not be conveyed) contradicts preset_conveyed: true")
    if not ex["owner_message"] and ex.get("owner_message_keywords"):
        add(("expect", "owner_message_keywords"), "given, but owner_message is false")


# ---------------------------------------------------------------- build ----


def _build(sc: dict[str, Any]) -> Scenario:
    owner = sc["owner"]
    presets = sc.get("presets") or {}
    caller = sc["caller"]
    ex = sc["expect"]
    adaptive = caller.get("adaptive")
    return Scenario(
        id=sc["id"],
        lang=sc["lang"],
        scene=sc["scene"],
        preset_case=sc["preset_case"],
        relation=sc["relation"],
        owner=OwnerSpec(owner["display_name"], dict(owner.get("private") or {})),
        presets=PresetsSpec(
            regular=presets.get("regular"),
            emergent=tuple(
                EmergentSpec(p["trigger"], p["response"], tuple(p["scenes"]) if "scenes" in p else None)
                for p in presets.get("emergent") or []
            ),
        ),
        caller=CallerSpec(
            goal=caller["goal"],
            turns=tuple(None if t.strip() == SILENCE else t for t in caller["turns"]),
            adaptive=None if adaptive is None else AdaptiveSpec(**adaptive),
        ),
        expect=Expect(
            preset_conveyed=ex["preset_conveyed"],
            owner_message=ex["owner_message"],
            must_end_call=ex["must_end_call"],
            preset_not_before_turn=ex.get("preset_not_before_turn", 0),
            preset_by_turn=ex.get("preset_by_turn"),
            preset_max_times=ex.get("preset_max_times", 1),
            owner_message_keywords=tuple(ex.get("owner_message_keywords") or ()),
            forbidden_commitments=tuple(ex.get("forbidden_commitments") or ()),
            notes=ex.get("notes", ""),
            preset_target=ex.get("preset_target"),
            end_not_before_turn=ex.get("end_not_before_turn"),
        ),
        split=sc.get("split"),
        tags=tuple(sc.get("tags") or ()),
    )


# ----------------------------------------------------------------- API ----


def parse_suite(text: str, *, source: str = "<string>") -> list[Scenario]:
    """Validate a suite's YAML text; raises :class:`SuiteError` listing every problem."""
    try:
        root = yaml.compose(text, Loader=_Loader)
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        msg = getattr(exc, "problem", None) or str(exc)
        raise SuiteError(source, [Problem("", f"not valid YAML: {msg}", line)]) from exc
    if data is None:
        raise SuiteError(source, [Problem("", "empty suite: expected a list of scenarios")])
    problems = _schema_problems(data, root)
    if isinstance(data, list):
        bad = {i for p in problems if (i := _index_of(p)) >= 0}
        problems += _cross_problems(data, root, bad)
    if problems:
        problems.sort(key=lambda p: (_index_of(p), p.line or 0))
        raise SuiteError(source, problems)
    return [_build(sc) for sc in data]


def _index_of(problem: Problem) -> int:
    """The scenario index a problem's path starts with, or -1 for suite-level problems."""
    if problem.path.startswith("["):
        return int(problem.path[1:].split("]", 1)[0])
    return -1


def builtin_path(name: str) -> Path:
    if name not in BUILTIN_SUITES:
        raise SuiteError(
            f"{BUILTIN_PREFIX}{name}",
            [Problem("", f"no built-in suite {name!r}; choose from {', '.join(BUILTIN_SUITES)}")],
        )
    return Path(str(resources.files("bench.suites").joinpath(f"{name}.yaml")))


def resolve(spec: str) -> Path:
    """A path, or ``builtin:NAME`` for a suite shipped with bench."""
    if spec.startswith(BUILTIN_PREFIX):
        return builtin_path(spec.removeprefix(BUILTIN_PREFIX))
    return Path(spec)


def load_suite(spec: str | Path) -> list[Scenario]:
    """Load a suite file or ``builtin:dev`` / ``builtin:test``."""
    path = resolve(spec) if isinstance(spec, str) else spec
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise SuiteError(str(spec), [Problem("", f"cannot read: {exc.strerror}")]) from exc
    return parse_suite(text, source=str(spec))
