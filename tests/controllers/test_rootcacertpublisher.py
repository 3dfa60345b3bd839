"""root-ca-certificate-publisher-controller: kube-root-ca.crt in every namespace, put back when
deleted or edited, never into a terminating namespace."""

from __future__ import annotations

from pathlib import Path

from ctrl_env import Ctrl, ctrl  # noqa: F401 - ctrl is the fixture

from kconsole.controllers.rootcacertpublisher import CONFIGMAP, DESCRIPTION, DESCRIPTION_ANNOTATION

NAME = "root-ca-certificate-publisher-controller"
PEM = "-----BEGIN CERTIFICATE-----\nMIIBcDCCARagAwIBAgIU\n-----END CERTIFICATE-----\n"


async def _published(ctrl: Ctrl, tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text(PEM)
    await ctrl.manager(NAME, "namespace-controller", settings={NAME: {"root_ca_file": str(ca)}})


async def test_every_namespace_gets_the_ca_and_a_new_one_too(ctrl: Ctrl, tmp_path: Path) -> None:
    await _published(ctrl, tmp_path)
    await ctrl.wait(lambda: ctrl.exists("configmaps", CONFIGMAP, "kube-system"), timeout=10)
    for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
        cm = await ctrl.admin.get("configmaps", CONFIGMAP, ns)
        assert cm["data"] == {"ca.crt": PEM}
        assert cm["metadata"]["annotations"] == {DESCRIPTION_ANNOTATION: DESCRIPTION}
    await ctrl.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
    assert await ctrl.wait(lambda: ctrl.exists("configmaps", CONFIGMAP, "shop"), timeout=5) <= 5


async def test_a_deleted_or_edited_ca_comes_back_keeping_what_the_user_added(ctrl: Ctrl, tmp_path: Path) -> None:
    await _published(ctrl, tmp_path)
    await ctrl.wait(lambda: ctrl.exists("configmaps", CONFIGMAP, "default"), timeout=10)
    first = await ctrl.admin.get("configmaps", CONFIGMAP, "default")
    await ctrl.admin.delete("configmaps", CONFIGMAP, "default")
    assert await ctrl.wait(lambda: ctrl.exists("configmaps", CONFIGMAP, "default"), timeout=5) <= 5
    again = await ctrl.admin.get("configmaps", CONFIGMAP, "default")
    assert again["metadata"]["uid"] != first["metadata"]["uid"] and again["data"] == {"ca.crt": PEM}

    again["data"] = {"ca.crt": "not a certificate", "extra": "x"}
    again["metadata"]["annotations"] = {"team": "blue"}
    again["metadata"]["labels"] = {"keep": "me"}
    await ctrl.admin.update(again)

    async def restored() -> bool:
        cm = await ctrl.admin.get("configmaps", CONFIGMAP, "default")
        return cm["data"] == {"ca.crt": PEM}

    assert await ctrl.wait(restored, timeout=5) <= 5
    cm = await ctrl.admin.get("configmaps", CONFIGMAP, "default")
    assert cm["metadata"]["annotations"] == {"team": "blue", DESCRIPTION_ANNOTATION: DESCRIPTION}
    assert cm["metadata"]["labels"] == {"keep": "me"}


async def test_a_terminating_namespace_is_emptied_not_refilled(ctrl: Ctrl, tmp_path: Path) -> None:
    await _published(ctrl, tmp_path)
    await ctrl.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gone"}})
    await ctrl.wait(lambda: ctrl.exists("configmaps", CONFIGMAP, "gone"), timeout=10)
    await ctrl.admin.delete("namespaces", "gone")

    async def namespace_gone() -> bool:
        return not await ctrl.exists("namespaces", "gone", None)

    await ctrl.wait(namespace_gone, timeout=30)
    assert not await ctrl.exists("configmaps", CONFIGMAP, "gone")


async def test_without_a_ca_nothing_is_published(ctrl: Ctrl) -> None:
    await ctrl.manager(NAME)
    await ctrl.clock.advance(30)
    assert await ctrl.names("configmaps", None) == []
