"""An RPC tracker client for the engine, the command line and exported tuning scripts (TVM-free at import).

* :func:`tracker_call` / :func:`tracker_devices`: TVM's tracker protocol (``tvm.rpc.base``: a magic word, then
  length-prefixed JSON) spoken with a socket timeout, so an unreachable or silent tracker answers within
  seconds (``tvm.rpc.connect_tracker`` retries for a minute); the devices per key (total, free, servers);
* :func:`tracker_request_fn`: a session on a device of a key, and which device (``host:port``) serves it.

Tuning scripts hold these functions' source (``FARM_HELPERS`` of
:mod:`pipeline_model.passkinds.metaschedule.script_farm`), so keep them free of module globals.
"""


def tracker_call(host, port, message, timeout_s=5.0):
    """One request to the RPC tracker at ``host``:``port`` and the payload of its answer; ``message`` is the
    request list (``[6]``: the summary). ``timeout_s`` bounds the connection and every read (``None``: wait).
    Raises ``OSError``/``ConnectionError`` when nothing or no tracker answers."""
    import json
    import socket
    import struct

    magic = 0x2F271  # tvm.rpc.base.RPC_TRACKER_MAGIC

    with socket.create_connection((str(host), int(port)), timeout=timeout_s) as sock:
        sock.settimeout(timeout_s)

        def recv(count):
            data = b""
            while len(data) < count:
                chunk = sock.recv(count - len(data))
                if not chunk:
                    raise ConnectionError(f"{host}:{port} closed the connection")
                data += chunk
            return data

        sock.sendall(struct.pack("<i", magic))
        if struct.unpack("<i", recv(4))[0] != magic:
            raise ConnectionError(f"{host}:{port} is not an RPC tracker")
        body = json.dumps(message).encode("utf-8")
        sock.sendall(struct.pack("<i", len(body)) + body)
        answer = json.loads(recv(struct.unpack("<i", recv(4))[0]).decode("utf-8"))
    if not answer or answer[0] != 0:  # tvm.rpc.base.TrackerCode.SUCCESS
        raise ConnectionError(f"the RPC tracker at {host}:{port} answered {answer!r}")
    return answer[1] if len(answer) > 1 else None


def tracker_devices(host, port, timeout_s=5.0):
    """The devices the tracker at ``host``:``port`` has now, per key: ``{key: {"total", "free", "pending",
    "servers": ["host:port", ...]}}`` (from its summary; a server's key is ``server:<key>``)."""
    summary = tracker_call(host, port, [6], timeout_s) or {}  # tvm.rpc.base.TrackerCode.SUMMARY
    keys = {}

    def entry(key):
        return keys.setdefault(key, {"total": 0, "free": 0, "pending": 0, "servers": []})

    for server in summary.get("server_info", []):
        item = entry(str(server.get("key", "")).split(":", 1)[-1])
        item["total"] += 1
        item["servers"].append(":".join(str(part) for part in server.get("addr", [])))
    for key, queue in summary.get("queue_info", {}).items():
        item = entry(str(key))
        item["free"], item["pending"] = int(queue.get("free", 0)), int(queue.get("pending", 0))
    for item in keys.values():
        item["servers"].sort()
    return keys


def tracker_request_fn():
    """A function ``(host, port, key, session_timeout) -> (session, "host:port")``: ask the tracker for a device
    of ``key`` (it waits while all are busy), connect to the server it hands out and say which one it is
    (``TrackerSession.request`` keeps that to itself). A closure, so measuring workers get it by value."""

    def rps_tracker_request(host, port, key, session_timeout):
        from tvm import rpc
        from tvm.rpc import base

        tracker = rpc.connect_tracker(host, int(port))
        try:
            base.sendjson(tracker._sock, [base.TrackerCode.REQUEST, key, "", 1])
            answer = base.recvjson(tracker._sock)
        finally:
            tracker.close()
        if answer[0] != base.TrackerCode.SUCCESS:
            raise ConnectionError(f"the RPC tracker at {host}:{port} refused the request for {key!r}: {answer!r}")
        url, server_port, matchkey = answer[1]
        try:
            return rpc.connect(url, server_port, matchkey, session_timeout), f"{url}:{server_port}"
        except Exception as exc:  # noqa: BLE001 - TVM raises RuntimeError/TVMError for a server gone
            error = ConnectionError(f"RPC server {url}:{server_port} ({key}): {exc}")
            error.device = f"{url}:{server_port}"  # which device failed (the farm counts it)
            raise error from None

    return rps_tracker_request
