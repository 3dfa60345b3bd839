"""Admission webhooks: the user's HTTPS servers, called with AdmissionReview v1.

As upstream's MutatingAdmissionWebhook and ValidatingAdmissionWebhook: configurations in name
order, webhooks in their order; a webhook applies when a rule, its selectors and its
``matchConditions`` match. It is POSTed to ``clientConfig.url`` (with ``?timeout=Ns``), trusting
``clientConfig.caBundle``, within ``timeoutSeconds`` (10 by default). A mutating webhook's
``JSONPatch`` is applied before the next one sees the object; with ``reinvocationPolicy:
IfNeeded`` it is called once more when a later webhook changed the object. A refusal is
upstream's ``admission webhook "x" denied the request: ...`` with the webhook's code (at least
400); a call that fails is a 500 under ``failurePolicy: Fail`` and is ignored under ``Ignore``. A
dry run reaches only webhooks whose ``sideEffects`` are ``None`` or ``NoneOnDryRun``.

A webhook named by ``clientConfig.service`` is posted to ``https://<name>.<namespace>.svc:<port>``
and verified under that name; where it is dialled is :mod:`kconsole.api.admission.resolver`'s rule.
On DELETE mutating webhooks are called too (``object`` null, ``oldObject`` the object); a patch
there is upstream's ``admission webhook "x" attempted to modify the object, which is not supported
for this operation``. Like upstream's GuaranteedUpdate, an update or delete that must be retried on
a conflict runs its webhooks again on the next attempt.
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from kconsole.api.admission import resolver
from kconsole.api.admission.dynamic import (
    MUTATING_WEBHOOKS, VALIDATING_WEBHOOKS, Attributes, cel_variables, conditions_match, rule_matches,
    selectors_match)
from kconsole.api.patch import apply_patch
from kconsole.api.types import StatusError, status_body
from kconsole.objects.meta import deep_copy

Obj = dict[str, Any]
DEFAULT_TIMEOUT = 10
NO_SIDE_EFFECTS = ("None", "NoneOnDryRun")


class _CallFailed(Exception):
    """The webhook could not be called or answered nonsense; the text is upstream's."""


def _webhooks(attrs: Attributes, resource: str) -> list[Obj]:
    """The webhooks of every configuration of ``resource`` that apply to ``attrs``, in order."""
    out: list[Obj] = []
    configs = sorted(attrs.list_objects(resource, None), key=lambda c: (c.get("metadata") or {}).get("name", ""))
    for config in configs:
        for hook in config.get("webhooks") or ():
            if not isinstance(hook, dict):
                continue
            if not any(rule_matches(r, attrs) for r in hook.get("rules") or ()):
                continue
            if not selectors_match(hook.get("namespaceSelector"), hook.get("objectSelector"), attrs):
                continue
            out.append(hook)
    return out


def _url(hook: Obj) -> str:
    """The URL upstream posts to and names in its messages (a Service by its ``.svc`` name)."""
    config = hook.get("clientConfig") or {}
    timeout = hook.get("timeoutSeconds") or DEFAULT_TIMEOUT
    url = config.get("url")
    if url:
        return f"{url}{'&' if '?' in url else '?'}timeout={timeout}s"
    service = config.get("service") or {}
    path = service.get("path") or "/"
    port = service.get("port") or 443
    return (f"https://{service.get('name', '')}.{service.get('namespace', '')}.svc:{port}{path}"
            f"?timeout={timeout}s")


def _ssl(hook: Obj) -> ssl.SSLContext:
    context = ssl.create_default_context()
    bundle = (hook.get("clientConfig") or {}).get("caBundle")
    if bundle:
        try:
            context.load_verify_locations(cadata=base64.b64decode(bundle).decode("ascii"))
        except (ValueError, ssl.SSLError) as err:
            raise _CallFailed(f"failed to call webhook: invalid caBundle: {err}") from None
    return context


def _dial(hook: Obj, attrs: Attributes, url: str) -> tuple[str, dict[str, Any], str]:
    """(the URL connected to, aiohttp's TLS arguments, ``host:port`` for a dial error)."""
    config = hook.get("clientConfig") or {}
    service = config.get("service")
    if config.get("url") or not isinstance(service, dict):
        parsed = urlsplit(url)
        return url, {}, f"{parsed.hostname}:{parsed.port or 443}"
    try:
        target = resolver.resolve(service, attrs)
    except resolver.ResolveError as err:
        raise _CallFailed(f'failed to call webhook: Post "{url}": {err}') from None
    host = f"[{target.host}]" if ":" in target.host else target.host
    rest = url.split(".svc:", 1)[1].split("/", 1)[1]
    public = url.split("//", 1)[1].split("/", 1)[0]
    tls = {"server_hostname": target.server_name, "headers": {"Host": public}}
    return f"https://{host}:{target.port}/{rest}", tls, f"{host}:{target.port}"


async def _call(hook: Obj, attrs: Attributes, obj: Obj | None) -> Obj:
    """POST the AdmissionReview; the response's ``response``."""
    url = _url(hook)
    request = attrs.request()
    request["object"] = obj
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
    timeout = hook.get("timeoutSeconds") or DEFAULT_TIMEOUT
    context = _ssl(hook)
    dial_url, extra, address = _dial(hook, attrs, url)
    headers = {"Accept": "application/json", **extra.pop("headers", {})}
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
            async with session.post(dial_url, json=review, ssl=context, headers=headers,
                                    **extra) as resp:
                body = await resp.read()
                if resp.status != 200:
                    raise _CallFailed(f"failed to call webhook: the server responded with the status code "
                                      f"{resp.status} but did not return more information")
    except asyncio.TimeoutError:
        raise _CallFailed(f'failed to call webhook: Post "{url}": context deadline exceeded') from None
    except aiohttp.ClientConnectorCertificateError as err:
        raise _CallFailed(f'failed to call webhook: Post "{url}": tls: failed to verify certificate: x509: '
                          f'{err.certificate_error}') from None
    except aiohttp.ClientConnectorError:
        raise _CallFailed(f'failed to call webhook: Post "{url}": dial tcp {address}: connect: '
                          f'connection refused') from None
    except aiohttp.ClientError as err:
        raise _CallFailed(f'failed to call webhook: Post "{url}": {err}') from None
    try:
        answer = json.loads(body)
    except ValueError as err:
        raise _CallFailed(f"failed to call webhook: {err}") from None
    response = answer.get("response") if isinstance(answer, dict) else None
    if not isinstance(response, dict):
        raise _CallFailed("received invalid webhook response: webhook response was absent")
    if response.get("uid") != attrs.uid:
        raise _CallFailed(f"received invalid webhook response: expected response.uid={json.dumps(attrs.uid)}, "
                          f"got {json.dumps(response.get('uid'))}")
    return response


def _denied(name: str, response: Obj) -> StatusError:
    """upstream's ToStatusErr."""
    status = response.get("status") if isinstance(response.get("status"), dict) else {}
    code = status.get("code") if isinstance(status.get("code"), int) else 0
    code = max(code, 400)
    denied = f"admission webhook {json.dumps(name)} denied the request"
    if status.get("message"):
        message = f"{denied}: {status['message']}"
    elif status.get("reason"):
        message = f"{denied}: {status['reason']}"
    else:
        message = f"{denied} without explanation"
    body = status_body(code, str(status.get("reason") or ""), message)
    return StatusError(body)


def _failed(name: str, err: _CallFailed) -> StatusError:
    return StatusError(status_body(500, "InternalError", f'Internal error occurred: failed calling webhook '
                                                         f'{json.dumps(name)}: {err}'))


def _applies(hook: Obj, attrs: Attributes) -> bool:
    """matchConditions on the object as it is now (``attrs.obj``); an error follows failurePolicy."""
    conditions = hook.get("matchConditions")
    if not conditions:
        return True
    ok, error = conditions_match(conditions, cel_variables(attrs))
    if error and (hook.get("failurePolicy") or "Fail") == "Fail":
        raise StatusError(status_body(500, "InternalError", f"Internal error occurred: failed calling webhook "
                                                            f"{json.dumps(hook.get('name', ''))}: {error}"))
    return ok


def _dry_run_check(hook: Obj, attrs: Attributes) -> bool:
    """Whether to call ``hook`` at all; a dry run and side effects refuse the request."""
    if attrs.dry_run and hook.get("sideEffects") not in NO_SIDE_EFFECTS:
        raise StatusError.bad_request(f"admission webhook {json.dumps(hook.get('name', ''))} does not support dry run")
    return True


async def _invoke(hook: Obj, attrs: Attributes, obj: Obj | None) -> Obj | None:
    """The webhook's response, or None when it failed open (failurePolicy Ignore)."""
    name = str(hook.get("name") or "")
    try:
        return await _call(hook, attrs, obj)
    except _CallFailed as err:
        if (hook.get("failurePolicy") or "Fail") == "Ignore":
            attrs.annotations[f"failed-open.admission.k8s.io/{name}"] = str(err)
            return None
        raise _failed(name, err) from None


def _warnings(response: Obj, attrs: Attributes) -> None:
    for text in response.get("warnings") or ():
        if isinstance(text, str):
            attrs.warnings.append(text)


async def mutate(attrs: Attributes, obj: Obj, kind: str) -> Obj:
    """``obj`` after every applying mutating webhook's patch (a new dict when one changed it)."""
    out = await _mutate_all(attrs, obj, kind)
    return obj if out is None else out


async def mutate_delete(attrs: Attributes) -> None:
    """A DELETE through the mutating webhooks: they may refuse it or fail, never patch it."""
    await _mutate_all(attrs, None, "")


async def _mutate_all(attrs: Attributes, obj: Obj | None, kind: str) -> Obj | None:
    hooks = _webhooks(attrs, MUTATING_WEBHOOKS)
    if not hooks:
        return obj
    called: list[tuple[Obj, Obj | None]] = []  # (hook, the object as it left it)
    for hook in hooks:
        attrs.obj = obj
        if not _applies(hook, attrs) or not _dry_run_check(hook, attrs):
            continue
        obj = await _mutate_once(hook, attrs, obj, kind)
        called.append((hook, obj))
    for hook, left in called:
        if hook.get("reinvocationPolicy") == "IfNeeded" and obj != left:  # a later webhook changed it
            attrs.obj = obj
            obj = await _mutate_once(hook, attrs, obj, kind)
    attrs.obj = obj
    return obj


async def _mutate_once(hook: Obj, attrs: Attributes, obj: Obj | None, kind: str) -> Obj | None:
    name = str(hook.get("name") or "")
    response = await _invoke(hook, attrs, obj)
    if response is None:
        return obj
    _warnings(response, attrs)
    if response.get("allowed") is not True:
        raise _denied(name, response)
    attrs.admitted_by.append(f"mutating webhook {name}")
    patch = response.get("patch")
    if not patch:
        return obj
    try:
        ops = json.loads(base64.b64decode(patch))
    except ValueError as err:
        raise _failed(name, _CallFailed(f"received undecodable patch in webhook response: {err}")) from None
    if not ops:
        return obj
    if obj is None:  # a DELETE: there is no object to patch
        raise StatusError(status_body(500, "InternalError", f"Internal error occurred: admission webhook "
                                                            f"{json.dumps(name)} attempted to modify the object, "
                                                            f"which is not supported for this operation"))
    if response.get("patchType") != "JSONPatch":
        raise _failed(name, _CallFailed(f"failed to call webhook: unsupported patch type "
                                        f"{json.dumps(response.get('patchType'))}"))
    try:
        return apply_patch("json", deep_copy(obj), ops, kind)
    except (ValueError, StatusError) as err:
        message = err.message if isinstance(err, StatusError) else str(err)
        raise _failed(name, _CallFailed(f"failed to apply patch: {message}")) from None


async def validate(attrs: Attributes) -> None:
    """Call every applying validating webhook (upstream calls them in parallel); the first refusal
    in configuration order wins."""
    hooks = [h for h in _webhooks(attrs, VALIDATING_WEBHOOKS)
             if _applies(h, attrs) and _dry_run_check(h, attrs)]
    if not hooks:
        return
    results = await asyncio.gather(*(_invoke(h, attrs, attrs.obj) for h in hooks), return_exceptions=True)
    for hook, result in zip(hooks, results):
        if isinstance(result, BaseException):
            raise result
        if result is None:
            continue
        _warnings(result, attrs)
        if result.get("allowed") is not True:
            raise _denied(str(hook.get("name") or ""), result)
        attrs.admitted_by.append(f"validating webhook {hook.get('name', '')}")
