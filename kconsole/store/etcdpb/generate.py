"""Regenerates ``etcd_pb2.py`` from ``etcd.proto`` (needs grpcio-tools, a build-time tool only):
``python -m kconsole.store.etcdpb.generate``. The generated module is committed, so running
kconsole needs the protobuf runtime (with grpcio) alone."""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> int:
    from grpc_tools import protoc  # type: ignore[import-untyped]

    here = Path(__file__).resolve().parent
    return protoc.main(["grpc_tools.protoc", f"-I{here}", f"--python_out={here}", str(here / "etcd.proto")])


if __name__ == "__main__":
    sys.exit(main())
