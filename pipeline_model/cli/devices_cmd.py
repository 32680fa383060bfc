"""``python main.py devices [--tracker HOST:PORT] [--json]``: the devices Build & Run and tuning can use — this
machine's (asked from the engine) or, with ``--tracker``, those an RPC tracker has per key (total and free).
Exit codes: 0 listed, 1 the tracker did not answer (one line saying why)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_parser(subparsers: "argparse._SubParsersAction") -> None:
    """Register the ``devices`` sub-command."""
    p = subparsers.add_parser("devices", help="list this machine's devices, or an RPC tracker's",
                              description="This machine's devices (CPU, GPUs) with the target suggested for each; "
                                          "with --tracker, the devices an RPC tracker has per key (free/total).")
    p.add_argument("--tracker", metavar="HOST:PORT", help="an RPC tracker (python -m tvm.exec.rpc_tracker)")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def format_rpc_listing(reply: dict[str, Any]) -> str:
    """The tracker's devices as text: one line per key (``key  free/total  servers``)."""
    if reply.get("error"):
        return f"error: {reply['error']}\n"
    lines = [f"RPC tracker {reply.get('tracker')}: {len(reply.get('devices') or [])} key(s)"]
    for dev in reply.get("devices") or []:
        servers = ", ".join(dev.get("servers") or []) or "-"
        lines.append(f"  {dev.get('key')}  {dev.get('free', 0)}/{dev.get('total', 0)} free  "
                     f"(pending {dev.get('pending', 0)}; servers {servers})")
    if not reply.get("devices"):
        lines.append("  no device is registered (python -m tvm.exec.rpc_server --tracker HOST:PORT --key KEY)")
    return "\n".join(lines) + "\n"


def main(args: argparse.Namespace, client: Any = None) -> int:
    """List the devices; 1 when the tracker did not answer. ``client``: an engine client to ask for the local
    devices (left open); by default a new engine is started."""
    from pipeline_model import targets

    if args.tracker:
        reply = targets.rpc_device_listing(args.tracker)
        if args.json:
            print(json.dumps(reply, indent=2))
        elif reply["error"]:
            sys.stderr.write(format_rpc_listing(reply))
        else:
            sys.stdout.write(format_rpc_listing(reply))
        return 1 if reply["error"] else 0
    from pipeline_model.engine.client import EngineClient

    own = client is None
    client = client or EngineClient()
    try:
        devices = targets.list_devices(client)
    finally:
        if own:
            client.close()
    if args.json:
        print(json.dumps([d.to_json() for d in devices], indent=2))
    else:
        sys.stdout.write("".join(f"{d.label}  (target {json.dumps(d.target)})\n" for d in devices))
    return 0
