"""Impersonation: a caller acting as another user (kubectl ``--as``, ``--as-group``, ``--as-uid``).

As upstream's impersonation filter: every impersonated attribute needs the ``impersonate`` verb on
its resource (``users``, ``groups``, ``serviceaccounts`` in the account's namespace, ``uids`` in
``authentication.k8s.io``, or for each extra value ``userextras/<key>`` in ``authentication.k8s.io``
named by the value), checked for the caller; then the request runs as the impersonated user,
who gets ``system:authenticated`` and, as a service account impersonated without groups, its
service-account groups. Without this, ``--as`` drills ran everything as the admin.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from kconsole.api.authn import AUTHENTICATED, SERVICE_ACCOUNT_PREFIX, with_implicit_groups
from kconsole.api.stages import Attributes
from kconsole.api.types import Credentials, StatusError, UserInfo

ANONYMOUS = "system:anonymous"
UNAUTHENTICATED = "system:unauthenticated"

#: ``authorize(attrs)`` raises the 403 for a refused question.
Authorize = Callable[[Attributes], None]


def impersonated_user(requester: UserInfo, creds: Credentials, authorize: Authorize) -> UserInfo:
    """The user the request runs as; 403 naming the first attribute the requester may not impersonate."""
    name = creds.impersonate_user
    if not name:
        raise StatusError.bad_request("requested impersonation of groups, extras or a uid without impersonating a "
                                      "user (Impersonate-Group, Impersonate-Extra-* and Impersonate-Uid need "
                                      "Impersonate-User)")
    groups = creds.impersonate_groups
    if name.startswith(SERVICE_ACCOUNT_PREFIX):
        namespace, sep, account = name[len(SERVICE_ACCOUNT_PREFIX):].partition(":")
        if not (sep and namespace and account):
            raise StatusError.bad_request(f"invalid service account name {name!r} to impersonate: "
                                          f"expected {SERVICE_ACCOUNT_PREFIX}<namespace>:<name>")
        authorize(Attributes(user=requester, verb="impersonate", resource="serviceaccounts", namespace=namespace,
                             name=account))
    else:
        authorize(Attributes(user=requester, verb="impersonate", resource="users", name=name))
    for group in groups:
        authorize(Attributes(user=requester, verb="impersonate", resource="groups", name=group))
    for key, values in creds.impersonate_extra:
        for value in values:
            authorize(Attributes(user=requester, verb="impersonate", group="authentication.k8s.io",
                                 resource="userextras", subresource=key, name=value))
    if creds.impersonate_uid:
        authorize(Attributes(user=requester, verb="impersonate", group="authentication.k8s.io", resource="uids",
                             name=creds.impersonate_uid))
    uid = creds.impersonate_uid or ""
    extra = tuple(sorted(creds.impersonate_extra))
    if name == ANONYMOUS:
        return UserInfo(name, groups if UNAUTHENTICATED in groups else groups + (UNAUTHENTICATED,), uid, extra)
    if groups or not name.startswith(SERVICE_ACCOUNT_PREFIX):
        return UserInfo(name, groups if AUTHENTICATED in groups else groups + (AUTHENTICATED,), uid, extra)
    return replace(with_implicit_groups(UserInfo(name, (), uid)), extra=extra)
