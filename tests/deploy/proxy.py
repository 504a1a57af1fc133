"""What the deployment tests share: cudojo behind Debian's nginx configured with the files
docs/DEPLOY.md installs (docs/deploy/cudojo-http.conf and cudojo-locations.conf), on loopback, in a
folder of the test's own; and one request at a time from a chosen client address. Standard library
only."""
import http.client
import json
import os
import pathlib
import socket
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
NGINX = "/usr/sbin/nginx"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, seconds=10):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


def start_server(binary, data_dir, *arguments):
    """`cudojo serve` on a free port with `arguments`; the process and its port."""
    server = subprocess.Popen([binary, "serve", "--port", "0", "--data-dir", str(data_dir), *arguments],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline()
    if "http://127.0.0.1:" not in line:
        server.kill()
        raise RuntimeError(f"cudojo serve did not start: {line!r}")
    return server, int(line.split("http://127.0.0.1:")[1].split("/")[0])


def start_nginx(folder, server_port):
    """nginx in `folder` with the documented configuration pointed at `server_port`; the process and
    the port it listens on."""
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    proxy_port = free_port()
    locations = (ROOT / "docs" / "deploy" / "cudojo-locations.conf").read_text()
    (folder / "cudojo-locations.conf").write_text(locations.replace("127.0.0.1:8080", f"127.0.0.1:{server_port}"))
    temp = {name: folder / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    (folder / "nginx.conf").write_text(
        ("user root;\n" if os.geteuid() == 0 else "") +
        f"worker_processes 1;\ndaemon off;\npid {folder}/nginx.pid;\nerror_log {folder}/error.log;\n"
        "events { worker_connections 1024; }\nhttp {\n  access_log off;\n"
        f"  include {ROOT / 'docs' / 'deploy' / 'cudojo-http.conf'};\n"
        f"  client_body_temp_path {temp['body']};\n  proxy_temp_path {temp['proxy']};\n"
        f"  fastcgi_temp_path {temp['fastcgi']};\n  uwsgi_temp_path {temp['uwsgi']};\n"
        f"  scgi_temp_path {temp['scgi']};\n"
        f"  server {{\n    listen 127.0.0.1:{proxy_port};\n    include {folder}/cudojo-locations.conf;\n  }}\n}}\n")
    nginx = subprocess.Popen([NGINX, "-p", str(folder), "-c", str(folder / "nginx.conf")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_port(proxy_port)
    return nginx, proxy_port


def stop(*processes):
    for process in processes:
        if process and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def call(port, method, path, body=None, token=None, raw=None, headers=None, source=None):
    """One request on a fresh connection; `source`: the client's own address (127.0.0.x)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                            source_address=(source, 0) if source else None)
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    if token:
        all_headers["Authorization"] = f"Bearer {token}"
    data = raw if raw is not None else (None if body is None else json.dumps(body))
    connection.request(method, path, body=data, headers=all_headers)
    response = connection.getresponse()
    try:
        return response, response.read()
    finally:
        connection.close()


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print(f"ok: {what}")
