"""Reading a config: YAML, ``key.sub=value`` overrides, scales, renamed keys, typed coercion."""

from __future__ import annotations

import dataclasses
import types
import typing
from pathlib import Path
from typing import Any, Literal

from pacml.config.checks import _check_ranges
from pacml.config.simulation import _paper_distributions
from pacml.config.tree import Config
from pacml.errors import ConfigError

EXTRA_SECTIONS = ("scales",)

MAX_CONFIG_BYTES = 1_000_000
"""A config file larger than this is refused (config.yaml is about 10 kB)."""
MAX_CONFIG_NODES = 100_000
"""Mappings, lists and values a config may hold."""


def check_plain_tree(data: Any, source: str) -> None:
    """Refuse a config tree that shares a node (a YAML alias: ``*name``, the root of an
    "alias bomb" that expands exponentially) or that is too large; linear in its size."""
    seen: set[int] = set()
    stack = [(data, "<root>")]
    count = 0
    while stack:
        node, key = stack.pop()
        count += 1
        if count > MAX_CONFIG_NODES:
            raise ConfigError("<root>", f"over {MAX_CONFIG_NODES} entries", "config too large", source)
        if isinstance(node, (dict, list)):
            if id(node) in seen:
                raise ConfigError(key, "*alias", "YAML anchors and aliases (&name, *name) are not accepted", source)
            seen.add(id(node))
            items = node.items() if isinstance(node, dict) else enumerate(node)
            stack.extend((v, f"{key}.{k}" if key != "<root>" else str(k)) for k, v in items)


def read_yaml(text: str, source: str, key: str = "<file>") -> Any:
    """Parse config YAML safely: plain data only (``yaml.safe_load``), no aliases, bounded size.
    Errors name ``key`` (the file, or an override's key)."""
    import yaml

    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(key, f"{len(text)} characters", f"larger than {MAX_CONFIG_BYTES} characters", source)
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                line = event.start_mark.line + 1
                raise ConfigError(
                    key if key != "<file>" else f"<line {line}>",
                    f"*{event.anchor}",
                    "YAML anchors and aliases are not accepted",
                    source,
                )
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(
            key, text if key != "<file>" else source, f"not valid YAML: {str(exc)[:300]}", source
        ) from None


RENAMED_KEYS = {
    "profiles": "scales",
    "workflow.profile": "workflow.scale",
    "agent.init_degree_bias": "agent.init_degree_biases (a list, e.g. [3.0])",
}
"""Old keys and their new names: an old key is refused with a message naming the new one."""


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def _coerce(tp: Any, value: Any, key: str, source: str) -> Any:
    """Check ``value`` against the annotation ``tp``; return it in the annotated type."""
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        return _build(tp, value, key, source)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(arg, value, key, source)
            except ConfigError:
                continue
        raise ConfigError(key, value, f"expected {' or '.join(_type_name(a) for a in args)}", source)
    if origin is Literal:
        allowed = typing.get_args(tp)
        if value not in allowed:
            raise ConfigError(key, value, f"must be one of {list(allowed)}", source)
        return value
    if origin is tuple:
        (elem, _ellipsis) = typing.get_args(tp)
        if not isinstance(value, (list, tuple)):
            raise ConfigError(key, value, "expected a list", source)
        return tuple(_coerce(elem, v, f"{key}[{i}]", source) for i, v in enumerate(value))
    if origin is dict:
        _k, vt = typing.get_args(tp)
        if not isinstance(value, dict):
            raise ConfigError(key, value, "expected a mapping", source)
        return {str(k): _coerce(vt, v, f"{key}.{k}", source) for k, v in value.items()}
    if tp is Any:
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(key, value, "expected true or false", source)
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(key, value, "expected an integer", source)
        return value
    if tp is float:
        if isinstance(value, str):
            # PyYAML reads 1e6 (no dot) as a string: accept plain numeric text
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(key, value, "expected a number", source)
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(key, value, "expected a string", source)
        return value
    raise TypeError(f"unsupported config annotation {tp!r} at {key}")  # a programming error


def _build(cls: type, data: Any, prefix: str, source: str) -> Any:
    if isinstance(data, cls):
        return data
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(prefix or "<root>", data, "expected a mapping", source)
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    kwargs = {}
    for k, v in data.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if k not in names:
            import difflib

            close = difflib.get_close_matches(str(k), sorted(names), n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise ConfigError(key, v, f"unknown key; {hint}known keys here: {sorted(names)}", source)
        kwargs[k] = _coerce(hints[k], v, key, source)
    return cls(**kwargs)


def _parse_override(text: str) -> tuple[list[str], Any]:
    if "=" not in text:
        raise ConfigError(text, None, "an override must look like key.sub=value", "--set")
    key, raw = text.split("=", 1)
    keys = key.strip().split(".")
    if not all(k.strip() for k in keys):
        raise ConfigError(key, raw, "an override must look like key.sub=value (an empty key part)", "--set")
    return keys, read_yaml(raw, "--set", key.strip())


def normalise_cli_values(data: Any) -> Any:
    """Snakemake's ``--config key='{a: 1}'`` leaves nested values as text ('1'): turn text
    that YAML reads as a number, boolean or null back into that value, recursively, except
    where the config's type is text (a trace filter's ``"6214e9"`` stays a string). Values of
    an experiment's dotted ``overrides`` and ``sweep`` take the type of the key they set."""
    check_plain_tree(data, "config.yaml")  # before any recursion: an alias bomb expands here
    return _normalise(data, Config)


def type_at(dotted: str, tp: Any = None) -> Any:
    """The annotation of the config key ``dotted`` (e.g. ``trace.filter``: dict[str, str]);
    Any where the tree does not say."""
    tp = Config if tp is None else tp
    for part in dotted.split("."):
        tp = _strip_optional(tp)
        if dataclasses.is_dataclass(tp):
            tp = typing.get_type_hints(tp).get(part, Any)
        elif typing.get_origin(tp) is dict:
            tp = typing.get_args(tp)[1]
        else:
            return Any
    return tp


def _strip_optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return tp


def _allows_none(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType) and type(None) in typing.get_args(tp)


def _is_text(tp: Any) -> bool:
    """Whether the annotation takes text (a str, a choice of strings, or a union with str)."""
    if tp is str:
        return True
    origin = typing.get_origin(tp)
    if origin is Literal:
        return all(isinstance(a, str) for a in typing.get_args(tp))
    if origin in (typing.Union, types.UnionType):
        return any(_is_text(a) for a in typing.get_args(tp))
    return False


def _normalise(data: Any, tp: Any = Any) -> Any:
    import yaml

    from pacml.config.experiments import ExperimentConfig

    bare = _strip_optional(tp)
    if isinstance(data, dict):
        if bare is ExperimentConfig:
            out = {}
            for k, v in data.items():
                if k in ("overrides", "train_overrides") and isinstance(v, dict):
                    out[k] = {d: _normalise(x, type_at(str(d))) for d, x in v.items()}
                elif k == "setting_overrides" and isinstance(v, dict):
                    out[k] = {
                        str(label): (
                            {d: _normalise(x, type_at(str(d))) for d, x in keys.items()}
                            if isinstance(keys, dict)
                            else keys
                        )
                        for label, keys in v.items()
                    }
                elif k == "sweep" and isinstance(v, dict):
                    out[k] = {d: _normalise(x, tuple[type_at(str(d)), ...]) for d, x in v.items()}
                else:
                    out[k] = _normalise(v, type_at(str(k), bare))
            return out
        if dataclasses.is_dataclass(bare):
            return {k: _normalise(v, type_at(str(k), bare)) for k, v in data.items()}
        value_tp = typing.get_args(bare)[1] if typing.get_origin(bare) is dict else Any
        return {k: _normalise(v, value_tp) for k, v in data.items()}
    if isinstance(data, list):
        elem = typing.get_args(bare)[0] if typing.get_origin(bare) in (tuple, list) else Any
        return [_normalise(v, elem) for v in data]
    if isinstance(data, str):
        try:
            value = yaml.safe_load(data)
        except yaml.YAMLError:
            return data
        if _is_text(bare):  # text stays text; null stays null where the key may be null
            return None if value is None and _allows_none(tp) else data
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, str):
            try:
                return float(value) if value.strip().lower() not in ("nan", "inf", "-inf") else value
            except ValueError:
                return value
    return data


def _refuse_renamed(data: dict[str, Any], source: str) -> None:
    for old, new in RENAMED_KEYS.items():
        node: Any = data
        *path, last = old.split(".")
        for k in path:
            node = node.get(k) if isinstance(node, dict) else None
        if isinstance(node, dict) and last in node:
            raise ConfigError(old, node[last], f"renamed: use {new}", source)


def leaf_keys(tree: Any, prefix: str = "") -> tuple[str, ...]:
    """The dotted keys of a nested mapping's leaves (``{"ppo": {"a": 1}}``: ``("ppo.a",)``)."""
    if not isinstance(tree, dict) or not tree:
        return (prefix,) if prefix else ()
    return tuple(k for key, v in tree.items() for k in leaf_keys(v, f"{prefix}.{key}" if prefix else str(key)))


def _set_by(dotted: str, keep: tuple[str, ...]) -> bool:
    """Whether a key in ``keep`` sets ``dotted``, a part of it, or a section holding it."""
    return any(k == dotted or k.startswith(dotted + ".") or dotted.startswith(k + ".") for k in keep)


def apply_scale(data: dict[str, Any], source: str = "<dict>", keep: tuple[str, ...] = ()) -> dict[str, Any]:
    """Apply the scale named by ``workflow.scale``: its dotted keys under ``scales.<name>``
    override the tree (``default`` needs no entry), except where a key in ``keep`` (dotted:
    what the command line set) sets the same key: the command line wins."""
    import copy

    data = copy.deepcopy(data or {})
    _refuse_renamed(data, source)
    name = (data.get("workflow") or {}).get("scale", "default")
    scales = data.get("scales") or {}
    if name not in scales:
        if name != "default":
            raise ConfigError("workflow.scale", name, f"no such scale; defined: {sorted(scales) + ['default']}", source)
        return data
    for dotted, value in (scales[name] or {}).items():
        if _set_by(str(dotted), keep):
            continue
        keys = str(dotted).split(".")
        node = data
        for k in keys[:-1]:
            node = node.setdefault(k, {})
            if not isinstance(node, dict):
                raise ConfigError(f"scales.{name}.{dotted}", value, f"'{k}' is not a section", source)
        node[keys[-1]] = value
    return data


def resolve_scale(data: dict[str, Any], keep: tuple[str, ...], source: str = "<dict>") -> dict[str, Any]:
    """``data`` with its scale applied, the keys in ``keep`` winning (`apply_scale`), and that
    scale's entries then emptied, so that applying it again changes nothing: the workflow
    resolves its config once (command line over scale over file) and hands every job the result."""
    check_plain_tree(data, source)
    out = apply_scale(data, source, keep)
    name = (out.get("workflow") or {}).get("scale", "default")
    if name in (out.get("scales") or {}):
        out["scales"] = {**out["scales"], name: {}}
    return out


def config_from_dict(data: dict[str, Any], source: str = "<dict>", keep: tuple[str, ...] = ()) -> Config:
    """Validate a plain mapping (e.g. Snakemake's ``config``) into a `Config`, after applying
    its scale (but not to the keys in ``keep``)."""
    check_plain_tree(data, source)
    data = apply_scale(data, source, keep)
    extra = {k: data.pop(k) for k in list(data) if k in EXTRA_SECTIONS}
    if "distributions" in data and isinstance(data["distributions"], dict):
        # user distributions extend (and may replace) the paper's four
        merged: dict[str, Any] = {k: dataclasses.asdict(v) for k, v in _paper_distributions().items()}
        for k, v in data["distributions"].items():
            merged[k] = {**merged.get(k, {}), **(v or {})} if isinstance(v, dict) else v
        data["distributions"] = merged
    cfg = _build(Config, data, "", source)
    cfg = dataclasses.replace(cfg, extra=extra)
    _check_ranges(cfg, source)
    return cfg


def load_config(
    path: str | Path | None = None,
    overrides: list[str] | tuple[str, ...] = (),
    base: dict[str, Any] | None = None,
    base_source: str = "<defaults>",
) -> Config:
    """Read a YAML config (or start from the mapping ``base``, or the defaults), apply
    ``key.sub=value`` overrides, validate once."""
    import copy

    source = str(path) if path is not None else base_source
    data: dict[str, Any] = copy.deepcopy(base) if base is not None else {}
    if path is not None:
        try:
            if Path(path).stat().st_size > MAX_CONFIG_BYTES:
                raise ConfigError("<file>", str(path), f"larger than {MAX_CONFIG_BYTES} bytes", source)
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError("<file>", str(path), f"cannot read: {exc.strerror}", source) from None
        except UnicodeDecodeError as exc:
            raise ConfigError("<file>", str(path), f"not UTF-8 text (byte {exc.start})", source) from None
        data = read_yaml(text, source) or {}
        if not isinstance(data, dict):
            raise ConfigError("<root>", data, "expected a mapping at the top level", source)
    keep: list[str] = []  # what the overrides set: the scale does not touch it
    for text in overrides:
        keys, value = _parse_override(text)
        keep.extend(leaf_keys(value, ".".join(keys)))
        node = data
        for k in keys[:-1]:
            node = node.setdefault(k, {})
            if not isinstance(node, dict):
                raise ConfigError(".".join(keys), value, f"'{k}' is not a section", source)
        node[keys[-1]] = value
    if overrides:
        source = f"{source} (with --set {' '.join(overrides)})"
    return config_from_dict(data, source, tuple(keep))
