"""Shared pieces of workload validation: selectors against templates, int-or-percent fields."""

from __future__ import annotations

import re
from typing import Any

from kconsole.api.validators.field import Cause, GoLiteral, invalid, non_negative, required
from kconsole.api.validators.meta import regex_error
from kconsole.api.validators.pods import validate_label_selector
from kconsole.objects.selectors import SelectorError, from_label_selector_dict

PERCENT_FMT = "[0-9]+%"
_PERCENT_RE = re.compile("^" + PERCENT_FMT + "$")


def go_label_selector(selector: Any) -> GoLiteral:
    """A LabelSelector as upstream's %#v prints it in 'field is immutable' and friends."""
    sel = selector if isinstance(selector, dict) else {}
    labels = sel.get("matchLabels")
    labels_txt = ("map[string]string{" + ", ".join(f'"{k}":"{v}"' for k, v in sorted(labels.items())) + "}"
                  if labels else "map[string]string(nil)")
    exprs = sel.get("matchExpressions")
    if exprs:
        items = []
        for e in exprs:
            values = e.get("values")
            values_txt = ("[]string{" + ", ".join(f'"{v}"' for v in values) + "}") if values else "[]string(nil)"
            items.append(f'v1.LabelSelectorRequirement{{Key:"{e.get("key", "")}", '
                         f'Operator:"{e.get("operator", "")}", Values:{values_txt}}}')
        exprs_txt = "[]v1.LabelSelectorRequirement{" + ", ".join(items) + "}"
    else:
        exprs_txt = "[]v1.LabelSelectorRequirement(nil)"
    return GoLiteral(f"v1.LabelSelector{{MatchLabels:{labels_txt}, MatchExpressions:{exprs_txt}}}")


def validate_selector_and_template(spec: dict[str, Any], kind_word: str) -> list[Cause]:
    """Selector required and non-empty; the template's labels must match it."""
    selector = spec.get("selector")
    if selector is None:
        return [required("spec.selector")]
    causes = validate_label_selector(selector, "spec.selector")
    if isinstance(selector, dict) and not selector.get("matchLabels") and not selector.get("matchExpressions"):
        causes.append(invalid("spec.selector", go_label_selector(selector), f"empty selector is invalid for {kind_word}"))
        return causes
    causes += template_matches(selector, spec.get("template"))
    return causes


def template_matches(selector: Any, template: Any) -> list[Cause]:
    try:
        compiled = from_label_selector_dict(selector)
    except (SelectorError, ValueError, TypeError, AttributeError):
        return [invalid("spec.selector", go_label_selector(selector), "invalid label selector")]
    labels = ((template or {}).get("metadata") or {}).get("labels") if isinstance(template, dict) else None
    if not compiled.empty and not compiled.matches(labels or {}):
        return [invalid("spec.template.metadata.labels", labels or {}, "`selector` does not match template `labels`")]
    return []


def int_or_percent(value: Any) -> tuple[int, bool] | None:
    """(amount, is_percent), or None when the value is neither form."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value, False
    if isinstance(value, str) and _PERCENT_RE.match(value):
        return int(value[:-1]), True
    return None


def validate_positive_int_or_percent(value: Any, path: str) -> list[Cause]:
    if value is None:
        return []
    if isinstance(value, str):
        if not _PERCENT_RE.match(value):
            return [invalid(path, value, regex_error("a valid percent string must be a numeric string followed by "
                                                     "an ending '%'", PERCENT_FMT, "1%", "93%"))]
        return []
    return non_negative(path, value)


def not_more_than_100_percent(value: Any, path: str) -> list[Cause]:
    parsed = int_or_percent(value)
    if parsed is not None and parsed[1] and parsed[0] > 100:
        return [invalid(path, value, "must not be greater than 100%")]
    return []


def validate_rolling(rolling: Any, path: str, zero_message: str = "may not be 0 when `maxSurge` is 0") -> list[Cause]:
    if not isinstance(rolling, dict):
        return []
    causes: list[Cause] = []
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    causes += validate_positive_int_or_percent(unavailable, f"{path}.maxUnavailable")
    causes += validate_positive_int_or_percent(surge, f"{path}.maxSurge")
    u, s = int_or_percent(unavailable), int_or_percent(surge)
    if (u is None or u[0] == 0) and (s is None or s[0] == 0) and (unavailable is not None or surge is not None):
        causes.append(invalid(f"{path}.maxUnavailable", unavailable if unavailable is not None else 0, zero_message))
    causes += not_more_than_100_percent(unavailable, f"{path}.maxUnavailable")
    return causes
